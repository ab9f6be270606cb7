"""Statistics fitted on a *training* part of the selection sample, whose
thresholds make the events of :mod:`attacks.events`.

Each is a fixed function of the release features once fitted, so a
threshold on it is a fixed event; fitting, choosing the threshold and
validating it use disjoint parts of the selection sample
(:mod:`attacks.selection`), and none of it touches the certification sample.

:class:`ClassifierStatistic`
    A scikit-learn classifier's score for "released on D" (DP-Sniper,
    Bichsel et al. S&P 2021: thresholding an estimate of the likelihood ratio
    approximates the optimal event).
:class:`CellRatioStatistic`
    A histogram estimate of the likelihood ratio of one feature: the line is
    cut into cells — every value seen at least twice (a point mass: a raw,
    unperturbed release, a "no answer" code, a discrete output), small
    intervals around modes (values packed :data:`MODE_DENSITY` times more
    tightly than usual: a point mass blurred by rounding or tiny noise), and
    equal-mass intervals of the rest — and each cell scores
    log((c_D + ½)/(c_D′ + ½)) from its training counts.  A threshold on the
    score is a union of cells: it can isolate a point mass or a mode, which
    no threshold or linear score on the feature itself can (the δ part of a
    claim: a mechanism that releases its raw input once in a thousand runs).
:class:`RowAtomStatistic`
    The same on whole feature rows: each feature vector seen at least twice
    is a cell (joint patterns of discrete outputs, a raw release of a whole
    vector), everything else one more cell.
:class:`SignCountStatistic`
    A sign test across a vector's positions: how many of them lie above
    their training median (optionally each counted in the direction its
    training sample moved).  When one record moves several answers a little
    under Laplace-type noise, each coordinate's log-likelihood ratio is
    ±Δ/b on either side of the midpoint, so this count is (up to the
    median's estimate) the likelihood-ratio statistic itself — which neither
    a threshold on one coordinate nor the sum is (DP-Sniper's
    ``LaplaceParallel``; the increments of a noisy prefix sum).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .events import classifier_score

__all__ = ["CellRatioStatistic", "ClassifierStatistic", "MODE_DENSITY", "RowAtomStatistic", "SignCountStatistic"]

N_INTERVALS = 32     # equal-mass intervals for the values that are not in a point mass or a mode
MAX_ATOMS = 64       # point masses kept per feature (the most frequent)
MAX_ROW_ATOMS = 256  # repeated feature rows kept
# A column's sign in the signed count: the direction its training sample moved, where the move exceeds this
# many standard errors.  Two variants are fitted.  Clear (3): only unmistakable moves count, so columns that did
# not move add no noise.  Lenient (1): a column moved by t standard errors gets the wrong sign with
# probability Φ(−t) and is left out with probability ≈ Φ(1 − t), so many weak, consistent moves (a sparse
# vector's ⊤ bits, each moved by ~3 s.e. on the training part, half of them missed by the clear rule) all
# count; a column that did not move enters with probability 0.32, as ±1 at random — noise, but no bias.
SIGN_SE_CLEAR = 3.0
SIGN_SE_LENIENT = 1.0
MODE_WINDOW = 8      # a mode must hold at least this many + 1 training values
MODE_DENSITY = 100.0  # ... packed this many times more tightly than the median spacing
MAX_MODES = 32


def _log_ratio(c_D: np.ndarray, c_Dp: np.ndarray) -> np.ndarray:
    """Smoothed log likelihood ratio per cell (equal sample sizes on both sides)."""
    return np.log((c_D + 0.5) / (c_Dp + 0.5))


def cell_counts(cells_D: np.ndarray, cells_Dp: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """How many training releases of D and of D′ fell in each of ``n_cells`` cells."""
    return (np.bincount(cells_D, minlength=n_cells).astype(float),
            np.bincount(cells_Dp, minlength=n_cells).astype(float))


def cell_log_ratios(cells_D: np.ndarray, cells_Dp: np.ndarray, n_cells: int) -> np.ndarray:
    """The smoothed log likelihood ratio of each cell, from the cells of training releases of D and D′."""
    return _log_ratio(*cell_counts(cells_D, cells_Dp, n_cells))


def _linear(model: Any) -> tuple[np.ndarray, float] | None:
    """(weights, intercept) on the raw features when ``model`` is the fitted default standardised
    logistic regression (:func:`attacks.events.default_classifier`), else None."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    steps = getattr(model, "steps", None)
    if steps is None or len(steps) != 2:
        return None
    (_, scaler), (_, clf) = steps
    if not (type(scaler) is StandardScaler and type(clf) is LogisticRegression
            and getattr(clf, "coef_", None) is not None and clf.coef_.shape[0] == 1):
        return None
    mean = scaler.mean_ if scaler.with_mean else 0.0
    scale = scaler.scale_ if scaler.with_std else 1.0
    w = np.asarray(clf.coef_[0] / scale, float)
    return w, float(clf.intercept_[0] - np.sum(mean * w))


class ClassifierStatistic:
    """A fitted classifier's score (decision function, or log-odds of ``predict_proba``)."""

    kind = "classifier score"

    @property
    def label(self) -> str:
        """What the event thresholds, naming the classifier: ``logistic-regression score (…)``."""
        last = self.model.steps[-1][1] if hasattr(self.model, "steps") else self.model
        name = {"LogisticRegression": "logistic-regression", "MLPClassifier": "MLP"}.get(
            type(last).__name__, type(last).__name__)
        return (f"{name} score (the selection classifier's log-odds that a release came from D, fitted on "
                "selection releases of the pair)")

    def __init__(self, model: Any, columns: np.ndarray | None = None) -> None:
        self.model = model
        self.columns = columns  # the feature columns it reads (None: all)
        self.linear: tuple[np.ndarray, float] | None = None  # set by fit for the default model, see _linear

    @classmethod
    def fit(cls, model: Any, F_D: np.ndarray, F_Dp: np.ndarray, columns: np.ndarray | None = None
            ) -> "ClassifierStatistic | None":
        from threadpoolctl import threadpool_limits

        stat = cls(model, columns)
        X = np.vstack([stat._inputs(F_D), stat._inputs(F_Dp)])
        y = np.concatenate([np.ones(len(F_D)), np.zeros(len(F_Dp))])
        try:
            # One BLAS thread: these fits are small, and threads only contend with each other.
            with threadpool_limits(limits=1, user_api="blas"):
                model.fit(X, y)
        except ValueError:  # e.g. a classifier that cannot fit these features
            return None
        stat.linear = _linear(model)
        return stat

    def _inputs(self, F: np.ndarray) -> np.ndarray:
        return F if self.columns is None else F[:, self.columns]

    def scores(self, F: np.ndarray) -> np.ndarray:
        """The score of each row.  The default model is evaluated as the linear function it is,
        column by column (fast on column-major samples; the same function at selection and at
        certification); any other model through scikit-learn."""
        if self.linear is None:
            return classifier_score(self.model, self._inputs(F))
        w, b = self.linear
        columns = range(F.shape[1]) if self.columns is None else self.columns
        out = np.full(len(F), b)
        for wj, j in zip(w, columns):
            if wj != 0.0:
                out += wj * F[:, j]
        return out


def _merge(intervals: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, disjoint closed intervals [lo, hi] covering the given ones."""
    if not intervals:
        return np.empty(0), np.empty(0)
    intervals.sort()
    lo, hi = [intervals[0][0]], [intervals[0][1]]
    for a, b in intervals[1:]:
        if a <= hi[-1]:
            hi[-1] = max(hi[-1], b)
        else:
            lo.append(a)
            hi.append(b)
    return np.asarray(lo, float), np.asarray(hi, float)


def _modes(v: np.ndarray) -> list[tuple[float, float]]:
    """Intervals where the sorted values ``v`` are packed :data:`MODE_DENSITY` × tighter than the median spacing."""
    if v.size <= 4 * MODE_WINDOW:
        return []
    span = v[MODE_WINDOW:] - v[:-MODE_WINDOW]
    typical = float(np.median(span))
    if not typical > 0:
        return []
    dense = np.flatnonzero(span * MODE_DENSITY < typical)
    if dense.size == 0:
        return []
    # Windows i < j overlap when j − i ≤ MODE_WINDOW; a gap starts a new mode.
    start = np.concatenate([[True], np.diff(dense) > MODE_WINDOW])
    first = dense[start]
    last = dense[np.concatenate([start[1:], [True]])]
    lo, hi = v[first], v[last + MODE_WINDOW]
    keep = np.sort(np.argsort(hi - lo, kind="stable")[:MAX_MODES])  # the sharpest modes
    return [(float(a), float(b)) for a, b in zip(lo[keep], hi[keep])]


class CellRatioStatistic:
    """Histogram likelihood-ratio score of feature ``column`` (see the module doc)."""

    kind = "cell ratio"

    def __init__(self, column: int, name: str, special_lo: np.ndarray, special_hi: np.ndarray, edges: np.ndarray,
                 log_ratio: np.ndarray, n_atoms: int, n_modes: int) -> None:
        self.column = column
        self.name = name
        self.special_lo, self.special_hi, self.edges = special_lo, special_hi, edges
        self.log_ratio = log_ratio
        self.n_atoms, self.n_modes = n_atoms, n_modes
        self.label = (f"likelihood-ratio cells of {name} ({n_atoms} point mass(es), {n_modes} mode(s), "
                      f"{len(edges) + 1} interval(s); cells withheld)")

    @classmethod
    def fit(cls, column: int, name: str, a: np.ndarray, b: np.ndarray) -> "CellRatioStatistic | None":
        """Cells from the pooled training values ``a`` (on D) and ``b`` (on D′); None if one cell only."""
        pooled = np.sort(np.concatenate([a, b]))
        first = np.empty(pooled.size, dtype=bool)
        first[:1] = True
        np.not_equal(pooled[1:], pooled[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        vals = pooled[starts]
        counts = np.diff(np.append(starts, pooled.size))
        is_atom = counts >= 2
        if np.count_nonzero(is_atom) > MAX_ATOMS:  # keep the most frequent
            keep = np.argsort(-np.where(is_atom, counts, 0), kind="stable")[:MAX_ATOMS]
            is_atom = np.zeros_like(is_atom)
            is_atom[keep] = True
        atoms = vals[is_atom]
        rest = np.repeat(vals[~is_atom], counts[~is_atom])  # sorted
        modes = _modes(rest)
        lo, hi = _merge([(float(x), float(x)) for x in atoms] + modes)
        outside = rest
        if lo.size and rest.size:
            pos = np.searchsorted(lo, rest, side="right") - 1
            inside = (pos >= 0) & (rest <= hi[np.maximum(pos, 0)])
            outside = rest[~inside]
        if outside.size:  # equal-mass edges: inverted-CDF quantiles of the (sorted) rest
            idx = np.ceil(np.linspace(0, 1, N_INTERVALS + 1)[1:-1] * outside.size).astype(np.int64) - 1
            edges = np.unique(outside[np.clip(idx, 0, outside.size - 1)])
        else:
            edges = np.empty(0)
        stat = cls(column, name, lo, hi, edges, np.zeros(lo.size + edges.size + 1), len(atoms), len(modes))
        if stat.log_ratio.size < 2:
            return None
        n_cells = stat.log_ratio.size
        stat.log_ratio = cell_log_ratios(stat._cells(a), stat._cells(b), n_cells)
        return stat

    def _cells(self, x: np.ndarray) -> np.ndarray:
        k = self.special_lo.size
        cell = k + np.searchsorted(self.edges, x, side="right")
        if k:
            pos = np.searchsorted(self.special_lo, x, side="right") - 1
            inside = (pos >= 0) & (x <= self.special_hi[np.maximum(pos, 0)])
            cell = np.where(inside, pos, cell)
        return cell

    def scores(self, F: np.ndarray) -> np.ndarray:
        return self.log_ratio[self._cells(F[:, self.column])]


_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)


def _row_hash(F: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's exact bit pattern (equal rows hash equal; −0.0 is normalised away)."""
    F = np.asarray(F, dtype=np.float64)
    h = np.full(len(F), np.uint64(0x632BE59BD9B4E019), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(F.shape[1]):  # column by column: contiguous in the column-major selection samples
            h ^= np.ascontiguousarray(F[:, j] + 0.0).view(np.uint64)
            h *= _HASH_MULT
            h ^= h >> np.uint64(29)
    return h


def _row_index(F: np.ndarray, atoms: np.ndarray, atom_hashes: np.ndarray) -> np.ndarray:
    """For each row of F, the index of the equal row of ``atoms``, or −1.

    Rows are matched on their hash (``atom_hashes`` sorted, ``atoms`` in the
    same order) and then compared exactly, so a hash collision can never put a
    row in the wrong cell.
    """
    out = np.full(len(F), -1, dtype=np.int64)
    if len(F) == 0 or len(atoms) == 0:
        return out
    h = _row_hash(F)
    pos = np.minimum(np.searchsorted(atom_hashes, h), len(atom_hashes) - 1)
    match = atom_hashes[pos] == h
    for j in range(F.shape[1]):  # column by column (contiguous in column-major samples)
        match &= F[:, j] == atoms[pos, j]
    out[match] = pos[match]
    return out


class RowAtomStatistic:
    """Likelihood-ratio score of whole feature rows seen at least twice in training (see the module doc)."""

    kind = "row ratio"

    def __init__(self, atoms: np.ndarray, log_ratio: np.ndarray) -> None:
        self.atoms = atoms
        self.hashes = _row_hash(atoms)
        self.log_ratio = log_ratio  # one per atom, then the rest
        self.label = f"likelihood-ratio cells of whole releases ({len(atoms)} repeated release(s); withheld)"

    @classmethod
    def fit(cls, F_D: np.ndarray, F_Dp: np.ndarray) -> "RowAtomStatistic | None":
        both = np.vstack([F_D, F_Dp])
        hashes, first, counts = np.unique(_row_hash(both), return_index=True, return_counts=True)
        repeated = np.flatnonzero(counts >= 2)
        if repeated.size == 0:
            return None  # no point mass
        if repeated.size > MAX_ROW_ATOMS:
            repeated = np.sort(repeated[np.argsort(-counts[repeated], kind="stable")[:MAX_ROW_ATOMS]])
        stat = cls(both[first[repeated]] + 0.0, np.zeros(repeated.size + 1))
        stat.hashes = hashes[repeated]  # sorted, in the atoms' order
        n_cells = repeated.size + 1
        stat.log_ratio = cell_log_ratios(stat._cells(F_D), stat._cells(F_Dp), n_cells)
        return stat

    def _cells(self, F: np.ndarray) -> np.ndarray:
        idx = _row_index(F, self.atoms, self.hashes)
        return np.where(idx >= 0, idx, len(self.atoms))

    def scores(self, F: np.ndarray) -> np.ndarray:
        return self.log_ratio[self._cells(F)]


class SignCountStatistic:
    """Number of the ``columns`` above their training medians (see the module doc).

    ``signed``: each column counts +1 or −1 by the direction its training
    sample moved (the sign of P̂_D[x > median] − P̂_D′[x > median]; columns that
    did not move — by at most ``sign_se`` standard errors, :data:`SIGN_SE_CLEAR` or
    :data:`SIGN_SE_LENIENT` — count 0), for answers that move in different directions.
    """

    kind = "sign count"

    def __init__(self, group: str, columns: np.ndarray, medians: np.ndarray, signs: np.ndarray) -> None:
        self.columns, self.medians, self.signs = columns, medians, signs
        self.label = f"count of {group} above their training medians ({len(columns)} positions; medians withheld)"

    @classmethod
    def fit(cls, group: str, columns: list[int], T_D: np.ndarray, T_Dp: np.ndarray,
            signed: bool, sign_se: float = SIGN_SE_CLEAR) -> "SignCountStatistic | None":
        if len(columns) < 2 or len(T_D) == 0:
            return None
        cols = np.asarray(columns, dtype=np.int64)
        medians = np.median(np.concatenate([T_D[:, cols], T_Dp[:, cols]]), axis=0)
        stat = cls(group, cols, medians, np.ones(len(cols)))
        if signed:  # the direction each column moved, where it moved by more than sign_se standard errors
            a = np.column_stack([stat._side(T_D[:, j], m) for j, m in zip(cols, medians)])
            b = np.column_stack([stat._side(T_Dp[:, j], m) for j, m in zip(cols, medians)])
            moved = a.mean(axis=0) - b.mean(axis=0)
            se = np.sqrt((a.var(axis=0) + b.var(axis=0)) / len(T_D))
            stat.signs = np.where(np.abs(moved) > sign_se * se, np.sign(moved), 0.0)
            if np.count_nonzero(stat.signs) < 2:
                return None
            stat.label = stat.label.replace("count", "signed count" if sign_se >= SIGN_SE_CLEAR else
                                            f"signed (moves ≥ {sign_se:g} s.e.) count", 1)
        return stat

    @staticmethod
    def _side(x: np.ndarray, median: float) -> np.ndarray:
        """1 above the median, ½ at it, 0 below (ties matter for discrete outputs such as bits)."""
        return 0.5 * ((x > median).astype(float) + (x >= median))

    def scores(self, F: np.ndarray) -> np.ndarray:
        out = np.zeros(len(F))
        for j, m, sign in zip(self.columns, self.medians, self.signs):
            if sign:
                out += sign * self._side(F[:, j], m)
        return out
