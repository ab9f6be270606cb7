"""One pair's selection sample, kept as *evidence*: raw feature rows to fit
statistics on, and per-bin counts of every release drawn.

The sample has three disjoint parts, each with a job (:mod:`dpaudit.attacks.epsilon.selection.selection`):

``FIT``     fits the statistics (:mod:`dpaudit.attacks.epsilon.selection.binning`) and, for cells, orders
            the bins by their likelihood ratio;
``CHOOSE``  chooses each statistic's best cut in each frequency tier;
``VALID``   counts each such candidate again, unbiased, to rank them.

**Raw rows** are kept while the statistics can still change: the first
rows of each side are split by position — T (the first third, at most
:data:`FIT_CAP`), A (the next third, at most :data:`CHOOSE_CAP`) and B (the
rest) — and every statistic is fitted on T.  Below :data:`MIN_THREE_WAY`
rows per side there is no T: the sample is halved (choose, validate) and
only feature columns are used.  Once T and A are full (:data:`RAW_LIMIT`
rows per side in the pair search) the statistics are *frozen*: fitted for
good, the raw rows are dropped, and every later release of the pair is
drawn, featurised and binned where it was drawn — in a worker
(:func:`dpaudit.attacks.epsilon.sampling.sampling.tally_chunk`) — and comes back only as counts, row i
of each chunk going to part ``COUNTED_PARTS[i mod 4]``: a quarter to
FIT, a quarter to CHOOSE and half to VALID, whose precision ranks the
candidates of every pair.  A million releases then cost what
drawing them costs, not a million rows scored by every statistic here.

The parts are independent of each other and of every certification sample;
which part a release goes to depends on its position only, never on its
value.  Nothing here is certified, so how the sample is split takes no share
of α.

Statistics that can no longer win (:meth:`Evidence.keep`) stop being
counted; their counts stay as they were and they stay candidates.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .binning import Binning, ClassifierBins, ColumnBins, SignCountBins, default_classifier
from .cells import AnswerBins, RowAtomBins, answer_groups, discrete_columns
from .events import cut_candidates
from .features import fill_rows, position_groups, sample_dtype

__all__ = ["CHOOSE", "CHOOSE_CAP", "COUNTED_PARTS", "Evidence", "FIT", "FIT_CAP", "MIN_THREE_WAY", "PARTS", "RAW_LIMIT", "VALID",
           "append_rows", "count_parts"]

FIT, CHOOSE, VALID = 0, 1, 2
PARTS = 3
COUNTED_PARTS = np.array([FIT, CHOOSE, VALID, VALID])  # the part of counted release i: COUNTED_PARTS[i % 4]
MIN_THREE_WAY = 150   # releases per side below which the sample is only halved
FIT_CAP = 25_000      # releases per side, at most, to fit statistics on (T)
CHOOSE_CAP = 25_000   # ... and in the raw choosing part (A)
RAW_LIMIT = 3 * FIT_CAP  # raw rows per side the pair search keeps: T, A and as many in B; then counts only
CELL_TOP = 8          # columns whose cells are scored: the most promising by their best threshold ...
CELL_MAX = 24         # ... and every column with point masses or modes, up to this many in all
CLASSIFIER_INPUTS = 64  # the classifier sees at most this many features (the most promising ones)
# Sign counts fitted per group: unsigned, signed by clear moves (3 s.e.), signed by every move beyond one s.e.
# A column moved by t standard errors gets the wrong sign with probability Φ(−t) and is left out with
# probability ≈ Φ(1 − t) under the lenient rule, so many weak, consistent moves (a sparse vector's ⊤ bits, each
# moved by ~3 s.e. on the training part, half of them missed by the clear rule) all count; a column that did
# not move enters with probability 0.32, as ±1 at random — noise, but no bias.
SIGN_SE_CLEAR = 3.0
SIGN_SE_LENIENT = 1.0
SIGN_VARIANTS = ((False, SIGN_SE_CLEAR, ""), (True, SIGN_SE_CLEAR, ", signed"),
                 (True, SIGN_SE_LENIENT, ", signed ≥ 1 s.e."))


def count_parts(binning: Binning, F: np.ndarray, parts: Sequence[slice | np.ndarray]) -> np.ndarray:
    """(PARTS, n_bins) counts of the rows of ``F`` in each part (a slice or row indices) by ``binning``'s bins."""
    out = np.zeros((PARTS, binning.n_bins), dtype=np.int64)
    for p, rows in enumerate(parts):
        block = F[rows]
        if len(block):
            out[p] = np.bincount(binning.bins(block), minlength=binning.n_bins)
    return out


def append_rows(old: np.ndarray, new: Sequence[np.ndarray]) -> np.ndarray:
    """``old`` then the row blocks ``new`` as one column-major array: a view of a buffer that grows by
    doubling, so rows already held are not copied again on every round.  Statistics read the sample
    column by column (thresholds, cells, row hashes), several times faster on contiguous columns."""
    n_old, n = len(old), len(old) + sum(len(block) for block in new)
    dtype = sample_dtype([old], new)  # float32 while every block is (exact there), else float64
    buf = old.base if isinstance(old.base, np.ndarray) and old.base.flags.f_contiguous else None
    ours = (buf is not None and buf.shape[1] == old.shape[1] and buf.dtype == dtype
            and buf.__array_interface__["data"][0] == old.__array_interface__["data"][0])  # old is buf[:n_old]
    if buf is None or not ours or buf.shape[0] < n:
        grown = np.empty((max(n, 2 * n_old, 1), old.shape[1]), order="F", dtype=dtype)
        grown[:n_old] = old
        buf = grown
    start = n_old
    for block in new:
        fill_rows(buf, start, block)
        start += len(block)
    return buf[:n]


def raw_parts(n: int) -> tuple[slice, slice, slice]:
    """(T, A, B) of ``n`` raw rows per side (see the module doc); T is empty below :data:`MIN_THREE_WAY`."""
    if n < MIN_THREE_WAY:
        h = n // 2
        return slice(0, 0), slice(0, h), slice(h, n)
    t, a = min(n // 3, FIT_CAP), min(n // 3, CHOOSE_CAP)
    return slice(0, t), slice(t, t + a), slice(t + a, n)


class Evidence:
    """The selection sample of one pair (see the module doc).

    ``binnings[i]`` is a fitted statistic, ``orders[i]`` the orders its events
    are taken in, ``counts[i]`` its (PARTS, 2 sides, n_bins) counts.
    ``classifier``: ``"logistic"`` (default), ``None``/``"none"``, or a
    scikit-learn classifier (cloned); ``cells``: the likelihood-ratio cell
    statistics (ratio order) and the fitted statistics.
    """

    def __init__(self, names: Sequence[str], *, classifier: Any = "logistic", cells: bool = True,
                 max_train: int = FIT_CAP, raw_limit: int = RAW_LIMIT, n_cert: int = 10 ** 6, alpha: float = 0.05,
                 delta: float = 0.0) -> None:
        self.names = list(names)
        # to rank columns (the keywords of cut_candidates)
        self.scoring: dict[str, Any] = {"n_cert": int(n_cert), "alpha": float(alpha), "delta": float(delta)}
        self.classifier, self.cells, self.max_train = classifier, bool(cells), int(max_train)
        self.raw_limit = int(raw_limit)
        width = len(self.names)
        self.raw: list[np.ndarray] | None = [np.empty((0, width), order="F"), np.empty((0, width), order="F")]
        self.n_raw = 0
        self.binnings: list[Binning] = []
        self.orders: list[tuple[str, ...]] = []
        self.counts: list[np.ndarray] = []
        self.alive: list[int] = []
        self.frozen = False
        self.drawn = [0, 0]

    # ---- raw rows ----
    @property
    def raw_room(self) -> int:
        """Raw rows per side still to be kept before the statistics freeze (0 once frozen)."""
        return 0 if self.frozen else max(0, self.raw_limit - self.n_raw)

    def add_raw(self, blocks_D: Sequence[np.ndarray], blocks_Dp: Sequence[np.ndarray]) -> None:
        """Append raw feature rows of D and D′ and refit every statistic on the grown sample."""
        if self.raw is None:
            raise RuntimeError("the statistics are frozen: add counts, not rows")
        self.raw = [append_rows(self.raw[0], list(blocks_D)), append_rows(self.raw[1], list(blocks_Dp))]
        self.drawn = [self.drawn[0] + sum(len(b) for b in blocks_D), self.drawn[1] + sum(len(b) for b in blocks_Dp)]
        self.n_raw = min(len(self.raw[0]), len(self.raw[1]))
        self._refit()
        if self.n_raw >= self.raw_limit:
            self.frozen, self.raw = True, None  # fitted for good: later releases come as counts

    # ---- counts ----
    def counted(self) -> list[Binning]:
        """The statistics new releases are binned by (the ones still in the running)."""
        return [self.binnings[i] for i in self.alive]

    def add_counts(self, side: int, counts: Sequence[np.ndarray], drawn: int) -> None:
        """Add (PARTS, n_bins) counts of :meth:`counted`'s statistics, in that order, for ``side``."""
        for i, c in zip(self.alive, counts):
            self.counts[i][:, side, :] += c
        self.drawn[side] += int(drawn)

    def keep(self, indices: Sequence[int]) -> None:
        """Count only these statistics on new releases (the others keep their counts and stay candidates)."""
        self.alive = sorted(set(int(i) for i in indices))

    @property
    def varying(self) -> bool:
        return bool(self.binnings)

    # ---- fitting ----
    def _refit(self) -> None:
        n = self.n_raw
        if self.raw is None:
            raise RuntimeError("evidence refitted before any raw features were added")
        F_D, F_Dp = self.raw[0][:n], self.raw[1][:n]
        parts = raw_parts(n)
        fit = parts[0] if parts[0].stop > parts[0].start else parts[1]  # halves: columns fitted on the choosing half
        varying = [j for j in range(F_D.shape[1])
                   if n and not (np.ptp(F_D[:, j]) == 0 and np.ptp(F_Dp[:, j]) == 0 and F_D[0, j] == F_Dp[0, j])]
        self.binnings, self.orders, self.counts = [], [], []
        if not varying:
            self.alive = []
            return
        T_D, T_Dp = F_D[fit], F_Dp[fit]
        three_way = parts[0].stop > 0
        columns = [ColumnBins.fit(j, self.names[j], T_D[:, j], T_Dp[:, j]) for j in varying]
        for b in columns:
            self._add(b, ("value",), F_D, F_Dp, parts)
        if three_way:
            promise = {b.column: self._promise(c) for b, c in zip(columns, self.counts)}
            if self.cells:
                lumpy = [b for b in columns if b.lumpy]
                ranked = sorted(columns, key=lambda b: -promise[b.column])[:CELL_TOP]
                for b in list(dict.fromkeys(lumpy + ranked))[:CELL_MAX]:
                    i = columns.index(b)
                    self.orders[i] = ("value", "ratio")
                for fitted, orders in self._fitted(T_D, T_Dp, varying, promise):
                    self._add(fitted, orders, F_D, F_Dp, parts)
        self.alive = list(range(len(self.binnings)))

    def _add(self, b: Binning, orders: tuple[str, ...], F_D: np.ndarray, F_Dp: np.ndarray,
             parts: tuple[slice, slice, slice]) -> None:
        self.binnings.append(b)
        self.orders.append(orders)
        self.counts.append(np.stack([count_parts(b, F_D, parts), count_parts(b, F_Dp, parts)], axis=1))

    def _fitted(self, T_D: np.ndarray, T_Dp: np.ndarray, varying: list[int], promise: dict[int, float]
                ) -> list[tuple[Binning, tuple[str, ...]]]:
        """Statistics fitted on T beyond the columns: sign counts, repeated releases and patterns, a structured
        release's answers, the classifier and its cells (:mod:`dpaudit.attacks.epsilon.selection.binning`)."""
        out: list[tuple[Binning, tuple[str, ...]]] = []
        moving = set(varying)
        if self.cells:
            groups = position_groups(self.names)
            for group, label in (("v", "v[j]"), ("dv", "increments (v[0], dv[j])")):
                cols = [j for j in groups[group] if j in moving]
                for signed, sign_se, tag in SIGN_VARIANTS:
                    b = SignCountBins.fit(f"sign count({group}{tag})", label, cols, T_D, T_Dp, signed=signed,
                                          sign_se=sign_se, clear_se=SIGN_SE_CLEAR)
                    if b is not None:
                        out.append((b, ("value",)))
            if len(varying) > 1:
                rows = RowAtomBins.fit(T_D, T_Dp, self._defining_columns(varying), name="repeated releases",
                                       what="whole releases")
                if rows is not None:
                    out.append((rows, ("ratio",)))
            # The pattern of the discrete values when other values are continuous (two mechanisms side by side).
            values = [j for j in groups["v"] if j in moving]
            discrete = discrete_columns(T_D, T_Dp, values)
            if 2 <= len(discrete) < len(values):
                pattern = RowAtomBins.fit(T_D, T_Dp, np.asarray(discrete), name="discrete pattern",
                                          what=f"the pattern of the discrete values ({len(discrete)} positions)")
                if pattern is not None:
                    out.append((pattern, ("ratio",)))
            answer_values, answer_status = answer_groups(self.names)
            if any(j in moving for j in answer_status):
                for which in ("first", "last"):
                    answers = AnswerBins.fit(answer_values, answer_status, which, T_D, T_Dp)
                    if answers is not None:
                        out.append((answers, ("ratio",)))
        t = len(T_D)
        if self.classifier is not None and self.classifier != "none" and len(varying) > 1 and t >= 20:
            from sklearn.base import clone

            model = default_classifier() if self.classifier == "logistic" else clone(self.classifier)
            m = min(t, self.max_train)
            inputs = np.asarray(sorted(varying, key=lambda j: -promise[j])[:CLASSIFIER_INPUTS])
            fitted = ClassifierBins.fit(model, T_D[:m], T_Dp[:m], inputs)
            if fitted is not None:
                out.append((fitted, ("value", "ratio") if self.cells else ("value",)))
        return out


    def _defining_columns(self, varying: list[int]) -> np.ndarray | None:
        """Columns that determine a whole release: a vector featurised at every position (no tail) is its
        values and statuses — the other columns (increments, sums, counts) are functions of them, so rows equal
        there are equal everywhere.  None (every column) for other layouts."""
        if any(name.startswith("tail[") for name in self.names):
            return None
        groups = position_groups(self.names)
        if not groups["v"]:
            return None
        status = [i for i, name in enumerate(self.names) if name.startswith("na[")]
        failed = [i for i, name in enumerate(self.names) if name == "failed"]
        keep = [j for j in groups["v"] + status + failed if j in set(varying)]
        return np.asarray(keep) if keep else None

    def _promise(self, counts: np.ndarray) -> float:
        """The approximate bound of a column's best threshold on its fit and choose parts: only a ranking of
        columns (which get cells, which feed the classifier); events are chosen and validated elsewhere."""
        c = counts[FIT] + counts[CHOOSE]
        best = cut_candidates(c[0], c[1], **self.scoring)
        return best[0].approx if best else -np.inf
