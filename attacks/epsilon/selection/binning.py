"""Statistics of release features as *bins*: what event selection counts.

A statistic is fitted once on the training part T of a pair's selection
sample (:mod:`dpaudit.attacks.epsilon.selection.evidence`) and is then a fixed function from a feature
row to one of ``n_bins`` bins.  Every event the estimator can choose is a set
of bins of one statistic, so once fitted a statistic needs nothing but
counts: how many releases of D and of D′ fell in each bin, on each part of the
selection sample.  Those counts are cheap to take anywhere — in the worker
that drew the releases, millions at a time — and from them any threshold or
any cell set can be chosen and validated without keeping the releases.

Two orders over the bins make the events (:mod:`dpaudit.attacks.epsilon.selection.selection`):

*value order*
    The bins of a scalar score in increasing order of the score
    (:class:`ScoreBins`): the *points* p₀ < p₁ < … < p_{m−1} cut the line into
    (−∞, p₀), {p₀}, (p₀, p₁), {p₁}, …, {p_{m−1}}, (p_{m−1}, ∞) — 2m + 1 bins,
    each point a bin of its own, so a point mass (a raw release, a "no
    answer" code, a discrete output) never shares a bin.  An event is a
    threshold: the bins above or below a cut, {s ≥ t}, {s > t}, {s ≤ t} or
    {s < t}.  For a 1-D output whose likelihood ratio is monotone a
    threshold is the optimal event.
*ratio order*
    The bins sorted by their likelihood ratio, estimated on the fit part:
    an event is the cells whose ratio is highest (by the Neyman–Pearson
    lemma the best event of a given probability is such a top set).  It can
    isolate a point mass or a mode inside the bulk, or the extreme ⊤/⊥
    patterns of a sparse vector, which no threshold can.

The statistics:

:class:`ColumnBins`
    One feature column: points at quantiles of the training values (a
    uniform grid plus geometric tails), every value seen at least twice (a
    point mass) and the ends of its modes (values packed
    :data:`MODE_DENSITY` × more tightly than usual: a point mass blurred by
    rounding); all distinct values when there are few.  Both orders.
:class:`SignCountBins`
    A sign test across a vector's positions: how many of them lie above
    their training medians, each optionally counted in the direction its
    training sample moved.  When one record moves several answers a little
    under Laplace-type noise, each coordinate's log-likelihood ratio is ±Δ/b
    on either side of the midpoint, so this count is (up to the medians'
    estimate) the likelihood-ratio statistic itself (DP-Sniper's
    ``LaplaceParallel``; the increments of a noisy prefix sum).  Both orders.
:class:`ClassifierBins`
    A scikit-learn classifier's score for "released on D" (DP-Sniper,
    Bichsel et al. S&P 2021: thresholding an estimate of the likelihood ratio
    approximates the optimal event), binned like a column; its cells (ratio
    order) catch ratios that are not monotone in the score.
:mod:`.cells`
    The statistics that are cells only (ratio order): whole releases and the
    pattern of a release's discrete values seen at least twice
    (:class:`~.cells.RowAtomBins`), and the position of a vector's first or
    last answer jointly with its value (:class:`~.cells.AnswerBins`).

Every statistic is a fixed function of the features once fitted and is
applied alike to releases of D and D′, so a set of its bins is a fixed
measurable event: the certification's statement is about a fixed event.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Binning", "ClassifierBins", "ColumnBins", "ScoreBins", "SignCountBins", "all_needs", "classifier_score",
           "default_classifier", "score_points"]

MAX_DISTINCT = 256      # a score with at most this many distinct training values gets each as a point
MAX_ATOMS = 64          # point masses kept per score (the most frequent)
MODE_WINDOW = 8         # a mode must hold at least this many + 1 training values ...
MODE_DENSITY = 100.0    # ... packed this many times more tightly than the median spacing
MAX_MODES = 32


def classifier_score(model: Any, F: np.ndarray) -> np.ndarray:
    """The classifier's score for "released on D": ``decision_function``, else the log-odds of
    ``predict_proba`` (e.g. an MLP, DP-Sniper's other model)."""
    if hasattr(model, "decision_function"):
        return np.asarray(model.decision_function(F), dtype=np.float64)
    proba = np.clip(np.asarray(model.predict_proba(F), dtype=np.float64)[:, 1], 1e-12, 1 - 1e-12)
    return np.log(proba) - np.log1p(-proba)


def default_classifier() -> Any:
    """Standardised logistic regression (DP-Sniper's default model family)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=500))


class Binning:
    """A fitted statistic as bins (see the module doc).

    ``name`` keys it in reports of what was scored; ``orders`` says which
    orders make events on it; ``value_kind`` / ``ratio_kind`` name an event's
    kind in each order; ``column`` is the feature column of a direct statistic.
    """

    name: str = ""
    label: str = ""
    n_bins: int = 1
    orders: tuple[str, ...] = ("ratio",)
    value_kind: str = "feature"
    ratio_kind: str = "cell ratio"
    column: int | None = None

    def bins(self, F: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def needs(self) -> frozenset[int] | None:
        """The feature columns :meth:`bins` reads (None: all of them)."""
        return None

    @property
    def ratio_name(self) -> str:
        """What an event on its cells is called among the statistics scored."""
        return f"cells({self.name})"

    def ratio_label(self) -> str:
        return f"likelihood-ratio cells of {self.label} ({self.n_bins} cells; cells withheld)"


def all_needs(binnings: list[Binning]) -> frozenset[int] | None:
    """The feature columns any of ``binnings`` reads (None: all)."""
    out: set[int] = set()
    for b in binnings:
        if b.needs is None:
            return None
        out |= b.needs
    return frozenset(out)


# --------------------------------------------------------------------------- #
# Scores in value order
# --------------------------------------------------------------------------- #
def _levels(n: int, uniform: int) -> np.ndarray:
    """Quantile levels: a uniform grid of ``uniform`` steps plus geometric tails down to ~5/n."""
    grid = np.linspace(0.0, 1.0, uniform + 1)
    tail = 5.0 * 2.0 ** np.arange(0, 40) / max(n, 1)
    tail = tail[tail < 1.0 / uniform]
    return np.unique(np.concatenate([grid, tail, 1.0 - tail]))


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


def score_points(pooled: np.ndarray) -> tuple[np.ndarray, int]:
    """The points of a score's bins from its pooled training values (see :class:`ScoreBins`).

    At most :data:`MAX_DISTINCT` distinct values: every one.  Otherwise
    inverted-CDF quantiles at a uniform grid (finer with more data: one step
    per ~100 values, 16 to 256 steps) and geometric tails, the
    :data:`MAX_ATOMS` most frequent repeated values (point masses), and the
    ends of the modes.  Also: how many point masses (values seen twice) and modes it has — a *lumpy* score,
    whose cells can beat any threshold on it.
    """
    v = np.sort(np.asarray(pooled, dtype=np.float64))
    if v.size == 0:
        return np.zeros(1), 0
    first = np.empty(v.size, dtype=bool)
    first[0] = True
    np.not_equal(v[1:], v[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    distinct = v[starts]
    counts = np.diff(np.append(starts, v.size))
    repeated = np.flatnonzero(counts >= 2)
    if distinct.size <= MAX_DISTINCT:
        return distinct, int(repeated.size)
    uniform = int(np.clip(v.size // 100, 16, 256))
    idx = np.clip(np.ceil(_levels(v.size, uniform) * v.size).astype(np.int64) - 1, 0, v.size - 1)
    atoms = distinct[repeated[np.argsort(-counts[repeated], kind="stable")[:MAX_ATOMS]]]
    modes = _modes(v)
    ends = np.asarray(modes, dtype=np.float64).ravel()
    return np.unique(np.concatenate([v[idx], atoms, ends])), int(atoms.size + len(modes))


class ScoreBins(Binning):
    """Bins of a scalar score at fixed points (see the module doc): bin 2i + 1 is {pᵢ}, bin 2i the open
    interval below it."""

    orders = ("value", "ratio")

    def __init__(self, name: str, label: str, points: np.ndarray) -> None:
        self.name, self.label = name, label
        self.points = np.asarray(points, dtype=np.float64)
        self.n_bins = 2 * self.points.size + 1

    def score(self, F: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def bins_of(self, s: np.ndarray) -> np.ndarray:
        """The bin of each score value."""
        i = np.searchsorted(self.points, s, side="left")
        at = self.points[np.minimum(i, self.points.size - 1)] == s
        return 2 * i + at

    def bins(self, F: np.ndarray) -> np.ndarray:
        return self.bins_of(self.score(F))

    def cut(self, start: int, above: bool) -> tuple[float, str]:
        """(threshold, operator) of the event "bins ≥ start" (``above``) or "bins < start"."""
        if above:
            return (float(self.points[(start - 1) // 2]), "≥") if start % 2 else (float(self.points[start // 2 - 1]),
                                                                                  ">")
        last = start - 1
        return (float(self.points[last // 2]), "≤") if last % 2 else (float(self.points[last // 2]), "<")


class ColumnBins(ScoreBins):
    """One feature column in value order (a "direct" statistic) and its cells."""

    value_kind, ratio_kind = "feature", "cell ratio"
    column: int  # always a column here

    def __init__(self, column: int, name: str, points: np.ndarray, lumps: int = 0) -> None:
        super().__init__(name, name, points)
        self.column = int(column)
        self.lumps = int(lumps)  # point masses and modes seen in training: its cells can beat a threshold

    @property
    def lumpy(self) -> bool:
        return self.lumps > 0

    def ratio_label(self) -> str:
        return (f"likelihood-ratio cells of {self.label} ({self.n_bins} cells, {self.lumps} point mass(es) or "
                "mode(s); cells withheld)")

    @classmethod
    def fit(cls, column: int, name: str, a: np.ndarray, b: np.ndarray) -> "ColumnBins":
        return cls(column, name, *score_points(np.concatenate([a, b])))

    @property
    def needs(self) -> frozenset[int]:
        return frozenset({self.column})

    def score(self, F: np.ndarray) -> np.ndarray:
        return F[:, self.column]


class SignCountBins(ScoreBins):
    """Number of the ``columns`` above their training medians (see the module doc).

    ``signs``: each column counts +1, −1 or 0 (unsigned: all +1).  Signed, a
    column counts in the direction its training sample moved (the sign of
    P̂_D[x > median] − P̂_D′[x > median]) where the move exceeds ``sign_se``
    standard errors, and not at all otherwise.
    """

    value_kind, ratio_kind = "sign count", "cell ratio"

    def __init__(self, name: str, label: str, columns: np.ndarray, medians: np.ndarray, signs: np.ndarray) -> None:
        self.columns, self.medians, self.signs = columns, medians, signs
        k = float(np.count_nonzero(signs))
        super().__init__(name, label, np.arange(-2.0 * k, 2.0 * k + 1.0) / 2.0)

    @classmethod
    def fit(cls, name: str, group: str, columns: list[int], T_D: np.ndarray, T_Dp: np.ndarray, *, signed: bool,
            sign_se: float, clear_se: float) -> "SignCountBins | None":
        if len(columns) < 2 or len(T_D) == 0:
            return None
        cols = np.asarray(columns, dtype=np.int64)
        medians = np.median(np.concatenate([T_D[:, cols], T_Dp[:, cols]]), axis=0)
        signs = np.ones(len(cols))
        label = f"count of {group} above their training medians ({len(cols)} positions; medians withheld)"
        if signed:  # the direction each column moved, where it moved by more than sign_se standard errors
            a = np.column_stack([_side(T_D[:, j], m) for j, m in zip(cols, medians)])
            b = np.column_stack([_side(T_Dp[:, j], m) for j, m in zip(cols, medians)])
            moved = a.mean(axis=0) - b.mean(axis=0)
            se = np.sqrt((a.var(axis=0) + b.var(axis=0)) / len(T_D))
            signs = np.where(np.abs(moved) > sign_se * se, np.sign(moved), 0.0)
            if np.count_nonzero(signs) < 2:
                return None
            label = label.replace("count", "signed count" if sign_se >= clear_se else
                                  f"signed (moves ≥ {sign_se:g} s.e.) count", 1)
        return cls(name, label, cols, medians, signs)

    @property
    def needs(self) -> frozenset[int]:
        return frozenset(int(j) for j, sign in zip(self.columns, self.signs) if sign)

    def score(self, F: np.ndarray) -> np.ndarray:
        out = np.zeros(len(F))
        for j, m, sign in zip(self.columns, self.medians, self.signs):
            if sign:
                out += sign * _side(F[:, j], m)
        return out


def _side(x: np.ndarray, median: float) -> np.ndarray:
    """1 above the median, ½ at it, 0 below (ties matter for discrete outputs such as bits)."""
    return 0.5 * ((x > median).astype(float) + (x >= median))


def _linear(model: Any) -> tuple[np.ndarray, float] | None:
    """(weights, intercept) on the raw features when ``model`` is the fitted default standardised
    logistic regression (:func:`default_classifier`), else None."""
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


class ClassifierBins(ScoreBins):
    """A fitted classifier's score (decision function, or log-odds of ``predict_proba``), binned."""

    value_kind, ratio_kind = "classifier score", "score cells"

    def __init__(self, model: Any, columns: np.ndarray | None) -> None:
        self.model = model
        self.columns = columns                              # the feature columns it reads (None: all)
        self.linear: tuple[np.ndarray, float] | None = None  # the default model as its linear function
        last = model.steps[-1][1] if hasattr(model, "steps") else model
        kind = {"LogisticRegression": "logistic-regression", "MLPClassifier": "MLP"}.get(
            type(last).__name__, type(last).__name__)
        super().__init__("classifier", f"{kind} score (the selection classifier's log-odds that a release came "
                                       "from D, fitted on selection releases of the pair)", np.zeros(1))

    @classmethod
    def fit(cls, model: Any, F_D: np.ndarray, F_Dp: np.ndarray, columns: np.ndarray | None = None
            ) -> "ClassifierBins | None":
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
        stat.points, _ = score_points(np.concatenate([stat.score(F_D), stat.score(F_Dp)]))
        stat.n_bins = 2 * stat.points.size + 1
        return stat

    @property
    def ratio_name(self) -> str:
        return "cells(classifier)"

    def ratio_label(self) -> str:
        return f"likelihood-ratio cells of the classifier score ({self.n_bins} cells; cells withheld)"

    @property
    def needs(self) -> frozenset[int] | None:
        if self.columns is None:
            return None
        if self.linear is not None:
            return frozenset(int(j) for j, w in zip(self.columns, self.linear[0]) if w != 0.0)
        return frozenset(int(j) for j in self.columns)

    def _inputs(self, F: np.ndarray) -> np.ndarray:
        return F if self.columns is None else F[:, self.columns]

    def score(self, F: np.ndarray) -> np.ndarray:
        """The default model is evaluated as the linear function it is, column by column (fast on
        column-major samples; the same function at selection and at certification); any other model
        through scikit-learn."""
        if self.linear is None:
            return classifier_score(self.model, self._inputs(F))
        w, b = self.linear
        columns = range(F.shape[1]) if self.columns is None else self.columns
        out = np.full(len(F), b)
        for wj, j in zip(w, columns):
            if wj != 0.0:
                out += wj * F[:, j]
        return out
