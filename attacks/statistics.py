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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .events import classifier_score

__all__ = ["CellRatioStatistic", "ClassifierStatistic", "RowAtomStatistic", "MODE_DENSITY"]

N_INTERVALS = 32     # equal-mass intervals for the values that are not in a point mass or a mode
MAX_ATOMS = 64       # point masses kept per feature (the most frequent)
MAX_ROW_ATOMS = 256  # repeated feature rows kept
MODE_WINDOW = 8      # a mode must hold at least this many + 1 training values
MODE_DENSITY = 100.0  # ... packed this many times more tightly than the median spacing
MAX_MODES = 32


def _log_ratio(c_D: np.ndarray, c_Dp: np.ndarray) -> np.ndarray:
    """Smoothed log likelihood ratio per cell (equal sample sizes on both sides)."""
    return np.log((c_D + 0.5) / (c_Dp + 0.5))


class ClassifierStatistic:
    """A fitted classifier's score (decision function, or log-odds of ``predict_proba``)."""

    kind = "classifier score"
    label = "classifier score"

    def __init__(self, model: Any, columns: np.ndarray | None = None) -> None:
        self.model = model
        self.columns = columns  # the feature columns it reads (None: all)

    @classmethod
    def fit(cls, model: Any, F_D: np.ndarray, F_Dp: np.ndarray, columns: np.ndarray | None = None
            ) -> "ClassifierStatistic | None":
        stat = cls(model, columns)
        X = np.vstack([stat._inputs(F_D), stat._inputs(F_Dp)])
        y = np.concatenate([np.ones(len(F_D)), np.zeros(len(F_Dp))])
        try:
            model.fit(X, y)
        except ValueError:  # e.g. a classifier that cannot fit these features
            return None
        return stat

    def _inputs(self, F: np.ndarray) -> np.ndarray:
        return F if self.columns is None else F[:, self.columns]

    def scores(self, F: np.ndarray) -> np.ndarray:
        return classifier_score(self.model, self._inputs(F))


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


def _modes(values: np.ndarray) -> list[tuple[float, float]]:
    """Intervals where sorted ``values`` are packed :data:`MODE_DENSITY` × tighter than the median spacing."""
    v = np.sort(values)
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
        pooled = np.concatenate([a, b])
        vals, counts = np.unique(pooled, return_counts=True)
        repeated = np.flatnonzero(counts >= 2)
        if repeated.size > MAX_ATOMS:
            repeated = np.sort(repeated[np.argsort(-counts[repeated], kind="stable")[:MAX_ATOMS]])
        atoms = vals[repeated]
        rest = pooled[~np.isin(pooled, atoms)]
        modes = _modes(rest)
        lo, hi = _merge([(float(x), float(x)) for x in atoms] + modes)
        outside = rest
        if lo.size:
            pos = np.searchsorted(lo, rest, side="right") - 1
            inside = (pos >= 0) & (rest <= hi[np.maximum(pos, 0)])
            outside = rest[~inside]
        edges = np.unique(np.quantile(outside, np.linspace(0, 1, N_INTERVALS + 1)[1:-1])) if outside.size \
            else np.empty(0)
        stat = cls(column, name, lo, hi, edges, np.zeros(lo.size + edges.size + 1), len(atoms), len(modes))
        if stat.log_ratio.size < 2:
            return None
        n_cells = stat.log_ratio.size
        c_D = np.bincount(stat._cells(a), minlength=n_cells).astype(float)
        c_Dp = np.bincount(stat._cells(b), minlength=n_cells).astype(float)
        stat.log_ratio = _log_ratio(c_D, c_Dp)
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


def _row_index(F: np.ndarray, atoms: np.ndarray) -> np.ndarray:
    """For each row of F, the index of the equal row of ``atoms``, or −1.

    Rows are first filtered on the column where the atoms have the most
    distinct values (a row can only equal an atom if that entry does), so
    only the few candidate rows go through the exact row comparison.
    """
    out = np.full(len(F), -1, dtype=np.int64)
    if len(F) == 0:
        return out
    col = int(np.argmax([np.unique(atoms[:, j]).size for j in range(atoms.shape[1])]))
    keys = np.unique(atoms[:, col])
    pos = np.minimum(np.searchsorted(keys, F[:, col]), keys.size - 1)
    rows = np.flatnonzero(keys[pos] == F[:, col])
    if rows.size == 0:
        return out
    both = np.vstack([atoms, F[rows]])
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    owner = np.full(int(inverse.max()) + 1, -1, dtype=np.int64)
    owner[inverse[:len(atoms)]] = np.arange(len(atoms))
    out[rows] = owner[inverse[len(atoms):]]
    return out


class RowAtomStatistic:
    """Likelihood-ratio score of whole feature rows seen at least twice in training (see the module doc)."""

    kind = "row ratio"

    def __init__(self, atoms: np.ndarray, log_ratio: np.ndarray) -> None:
        self.atoms = atoms
        self.log_ratio = log_ratio  # one per atom, then the rest
        self.label = f"likelihood-ratio cells of whole releases ({len(atoms)} repeated release(s); withheld)"

    @classmethod
    def fit(cls, F_D: np.ndarray, F_Dp: np.ndarray) -> "RowAtomStatistic | None":
        rows, counts = np.unique(np.vstack([F_D, F_Dp]), axis=0, return_counts=True)
        repeated = np.flatnonzero(counts >= 2)
        if repeated.size == 0:
            return None  # no point mass
        if repeated.size > MAX_ROW_ATOMS:
            repeated = repeated[np.argsort(-counts[repeated], kind="stable")[:MAX_ROW_ATOMS]]
        atoms = rows[repeated]
        stat = cls(atoms, np.zeros(len(atoms) + 1))
        n_cells = len(atoms) + 1
        c_D = np.bincount(stat._cells(F_D), minlength=n_cells).astype(float)
        c_Dp = np.bincount(stat._cells(F_Dp), minlength=n_cells).astype(float)
        stat.log_ratio = _log_ratio(c_D, c_Dp)
        return stat

    def _cells(self, F: np.ndarray) -> np.ndarray:
        idx = _row_index(F, self.atoms)
        return np.where(idx >= 0, idx, len(self.atoms))

    def scores(self, F: np.ndarray) -> np.ndarray:
        return self.log_ratio[self._cells(F)]
