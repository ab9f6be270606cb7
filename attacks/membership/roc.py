"""ROC curves and TPR at low FPR, only where the sample resolves them, with Clopper–Pearson bands.

Carlini et al. (S&P 2022, "Membership inference attacks from first
principles", §III-B) ask for the TPR at a low FPR; what a sample can say
about it is limited by its non-members.  With n non-members the attainable
FPRs are 0, 1/n, 2/n, …, so every "TPR at FPR ≤ f" with f < 1/n is the TPR
at *zero* false positives: the same number for 1 % and 0.1 %, and nothing
about the rate at f (zero false positives among n is compatible with a true
FPR up to 1 − (α/2)^(1/n), e.g. 7 % for n = 40 at 95 %).

**Rule.**  TPR at FPR f is reported only when n_non-members ≥ ⌈1/f⌉, i.e.
when the operating point may contain at least one false positive
(:func:`non_members_needed`); otherwise it is ``None`` with the reason
"n/a (needs ≥ N non-members, has n)".  ROC curves are kept on the log grid
:data:`ROC_FPR_GRID` and *cut* at FPR 1/n: no grid point below what the
sample resolves.

**Operating points.**  At grid FPR f the point is the largest-TPR threshold
with at most ⌊f·n⌋ false positives (sklearn's ROC read off at f, no
interpolation); its counts (tp of the members, fp of the non-members) are
kept, so every point carries exact two-sided Clopper–Pearson bands on TPR and
FPR at the stated confidence.  The bands are pointwise, not simultaneous.
Given the threshold, which the non-members' scores fix, tp is binomial in
the members; the FPR band is the distribution-free band of that order
statistic of the non-member scores.

**Over repeats** (:func:`pool_curves`) a grid point is kept only where every
repeat resolves it (no averaging over repeats that cannot see that FPR), and
the curve is the vertical average weighted by member count (Fawcett 2006
§8.1): pooled counts Σ tp / Σ members, whose Clopper–Pearson band is
conservative for a sum of binomials with different rates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..bounds import clopper_pearson

__all__ = ["ROC_FPR_GRID", "RocCounts", "low_fpr_bands", "non_members_needed", "pool_curves", "resolves",
           "roc_counts", "unresolved_reason"]

# Log grid from 10⁻⁶ to 1, ten points per decade (exact decades, so 1 % and 0.1 % are on it).
ROC_FPR_GRID: tuple[float, ...] = tuple(float(f"{10.0 ** (e / 10.0):.6g}") for e in range(-60, 1))
_TOL = 1e-9


def non_members_needed(fpr: float) -> int:
    """Fewest non-members whose sample can put one false positive under FPR ``fpr``: ⌈1/fpr⌉."""
    if not 0.0 < fpr <= 1.0:
        raise ValueError(f"FPR must be in (0, 1], got {fpr!r}")
    return math.ceil(1.0 / fpr - _TOL)


def resolves(n_non_members: int, fpr: float) -> bool:
    """Whether n non-members resolve FPR ``fpr`` (the rule of this module)."""
    return n_non_members >= non_members_needed(fpr)


def unresolved_reason(fpr: float, n_non_members: int, *, over_repeats: bool = False) -> str:
    """What a table shows instead of an unresolvable TPR at FPR ``fpr`` (``n_non_members``: the fewest)."""
    if over_repeats:
        return (f"n/a (needs ≥ {non_members_needed(fpr):,} non-members in every repeat, "
                f"the fewest had {n_non_members:,})")
    return f"n/a (needs ≥ {non_members_needed(fpr):,} non-members, has {n_non_members:,})"


@dataclass(frozen=True)
class RocCounts:
    """Operating points on the resolved part of :data:`ROC_FPR_GRID` (exact counts)."""

    fpr_grid: tuple[float, ...]   # grid FPRs f ≥ 1/n_non_members
    tp: tuple[int, ...]           # members flagged at the point for each f
    fp: tuple[int, ...]           # non-members flagged (≤ ⌊f·n_non_members⌋)
    n_members: int
    n_non_members: int

    def tpr_at(self, fpr: float) -> float | None:
        """TPR at the grid FPR ``fpr``, or ``None`` when the sample does not resolve it."""
        for f, tp in zip(self.fpr_grid, self.tp):
            if math.isclose(f, fpr, rel_tol=1e-9):
                return tp / self.n_members
        if not resolves(self.n_non_members, fpr):
            return None
        raise ValueError(f"FPR {fpr!r} is not on the ROC grid")

    def to_dict(self, alpha: float) -> dict[str, object]:
        """The curve with pointwise two-sided Clopper–Pearson bands at confidence 1 − α."""
        return band(np.asarray(self.tp), np.full(len(self.tp), self.n_members),
                    np.asarray(self.fp), np.full(len(self.fp), self.n_non_members), self.fpr_grid, alpha)


def roc_counts(scores: np.ndarray, membership: np.ndarray,
               grid: Sequence[float] = ROC_FPR_GRID) -> RocCounts:
    """Counts at the operating points of ``score ≥ t`` on the grid FPRs the sample resolves."""
    scores = np.asarray(scores, dtype=np.float64)
    truth = np.asarray(membership).astype(np.int64)
    n_pos = int(truth.sum())
    n_neg = int(truth.size - n_pos)
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], truth[order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(s) != 0), s.size - 1]  # thresholds between distinct scores
    tps = np.r_[0, np.cumsum(y)[last_of_tie]]
    fps = np.r_[0, last_of_tie + 1 - tps[1:]]
    kept = [f for f in grid if resolves(n_neg, f)]
    allowed = np.floor(np.asarray(kept) * n_neg + _TOL).astype(np.int64)
    point = np.searchsorted(fps, allowed, side="right") - 1  # fps and tps never decrease
    return RocCounts(tuple(kept), tuple(int(v) for v in tps[point]), tuple(int(v) for v in fps[point]),
                     n_pos, n_neg)


def band(tp: np.ndarray, n_pos: np.ndarray, fp: np.ndarray, n_neg: np.ndarray, fpr_grid: Sequence[float],
         alpha: float) -> dict[str, object]:
    """Plot-ready curve: grid FPR, TPR and observed FPR with two-sided Clopper–Pearson limits."""
    if len(fpr_grid) == 0:
        return {"fpr": [], "tpr": [], "tpr_low": [], "tpr_high": [], "fpr_observed": [], "fpr_low": [],
                "fpr_high": [], "confidence": 1.0 - alpha}
    t_lo, t_hi = clopper_pearson(tp, n_pos, alpha)
    f_lo, f_hi = clopper_pearson(fp, n_neg, alpha)
    return {"fpr": [float(f) for f in fpr_grid], "tpr": (tp / n_pos).tolist(),
            "tpr_low": t_lo.tolist(), "tpr_high": t_hi.tolist(),
            "fpr_observed": (fp / n_neg).tolist(), "fpr_low": f_lo.tolist(), "fpr_high": f_hi.tolist(),
            "confidence": 1.0 - alpha}


def pool_curves(curves: Sequence[RocCounts], alpha: float) -> dict[str, Any]:
    """Curve over repeats: grid points every repeat resolves, pooled counts, bands (module docstring)."""
    if not curves:
        raise ValueError("no ROC curves to pool")
    common = [f for f in curves[0].fpr_grid if all(f in c.fpr_grid for c in curves)]
    tp = np.array([sum(c.tp[c.fpr_grid.index(f)] for c in curves) for f in common], dtype=np.int64)
    fp = np.array([sum(c.fp[c.fpr_grid.index(f)] for c in curves) for f in common], dtype=np.int64)
    n_pos = sum(c.n_members for c in curves)
    n_neg = sum(c.n_non_members for c in curves)
    out = band(tp, np.full(len(common), n_pos), fp, np.full(len(common), n_neg), common, alpha)
    fewest = min(c.n_non_members for c in curves)
    out["cut_at_fpr"] = common[0] if common else None
    out["rule"] = (f"grid FPRs every repeat resolves (≥ ⌈1/FPR⌉ non-members; fewest in a repeat: {fewest:,}); "
                   "TPR = pooled members flagged / members over repeats; pointwise Clopper–Pearson bands")
    return out


def low_fpr_bands(pooled: dict[str, Any], fprs: Sequence[tuple[str, float]]) -> dict[str, object]:
    """``{<name>_band: {tpr, low, high, confidence}}`` at each named FPR a pooled curve resolves.

    The pooled TPR (members flagged over all repeats / members) at the grid point with its
    two-sided Clopper–Pearson band, from :func:`pool_curves`; FPRs the curve does not reach
    (too few non-members in some repeat) are left out.
    """
    out: dict[str, object] = {}
    grid = [float(f) for f in pooled.get("fpr") or []]
    for name, f in fprs:
        hit = [i for i, g in enumerate(grid) if math.isclose(g, f, rel_tol=1e-9)]
        if hit:
            i = hit[0]
            out[f"{name}_band"] = {"tpr": pooled["tpr"][i], "low": pooled["tpr_low"][i],
                                   "high": pooled["tpr_high"][i], "confidence": pooled["confidence"]}
    return out
