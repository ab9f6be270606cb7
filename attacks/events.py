"""Distinguishing events: S = {s(F) ≥ t} or {s(F) ≤ t} for a statistic s of the
release features F, and the search for good thresholds on one statistic.

The statistic is a feature column (a "direct statistic": for a 1-D output
whose likelihood ratio is monotone a threshold on the output is optimal) or a
statistic fitted on part of the selection sample (:mod:`attacks.statistics`:
a classifier's score, DP-Sniper style — Bichsel et al., S&P 2021: the optimal
event is a threshold on the likelihood ratio, which a probabilistic
classifier approximates —, or a histogram / point-mass estimate of the
likelihood ratio).  The event also says which dataset it favours: p is
P[M(favoured) ∈ S], q the other one.  Orientation covers the complement: the
complement of {s ≥ t} favouring D is {s < t} favouring D′, one of the four
orientations scored for every threshold.

Candidates are scored by the bound they are *expected* to certify with
``n_cert`` fresh samples (:func:`predicted_bound`): the observed frequencies
are replaced by their one-sided Clopper–Pearson limits at level
:data:`SELECTION_ALPHA` (lower for p, upper for q — a guard against a rare
event whose ratio is high by chance), scaled to ``n_cert`` and passed through
the same Clopper–Pearson bound certification uses.  Choosing among candidates
never touches the certification sample, so it costs no confidence (see
:mod:`attacks.epsilon`); which part of the *selection* sample chooses and
which validates is :mod:`attacks.selection`'s business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bounds import RATE_RATIO, TWO_LIMITS, clopper_pearson, epsilon_rate_ratio

__all__ = ["SELECTION_ALPHA", "ThresholdCandidate", "ThresholdEvent", "best_threshold", "classifier_score",
           "default_classifier", "predicted_bound", "threshold_candidates"]

# One-sided level of the selection-sample limits that stand in for p and q when
# scoring candidates: conservative enough that a candidate's score is not
# driven by selection noise in rare events (the winner's curse of picking the
# best of many noisy ratios), loose enough to keep frequent events' scores close.
SELECTION_ALPHA = 0.1

# Frequency tiers (share of the favoured side's sample in the event): the best
# threshold of *each* tier goes on to validation, so a frequent, solid event is
# never crowded out by a rare one that looked better on the choosing sample.
_TIERS = (0.1, 0.01, 0.001, 0.0)
_RECORD_SPACE = re.compile(r"^(z|mean|nearest|centre_mean|centre_min|centre_max|v|dv|tail)\[|^(sum|min|max)$")


@dataclass(frozen=True, eq=False)
class ThresholdEvent:
    """S = {statistic ≥ threshold} (``above``) or {statistic ≤ threshold}; favours D or D′.

    The statistic is feature column ``column`` or, when ``model`` is set, a
    fitted statistic (anything with ``scores(F)``; a bare scikit-learn
    classifier is scored by :func:`classifier_score`).
    """

    statistic: str
    threshold: float
    above: bool
    favours: str  # "D" or "D'"
    column: int | None = None
    model: Any = None

    def scores(self, F: np.ndarray) -> np.ndarray:
        if self.model is None:
            return F[:, self.column]
        if hasattr(self.model, "scores"):
            return self.model.scores(F)
        return classifier_score(self.model, F)

    def __call__(self, F: np.ndarray) -> np.ndarray:
        s = self.scores(F)
        return s >= self.threshold if self.above else s <= self.threshold

    @property
    def kind(self) -> str:
        if self.model is None:
            return "feature"
        return getattr(self.model, "kind", "classifier score")

    @property
    def in_record_space(self) -> bool:
        """Is the threshold in the release's own value space (z[j], mean[j], nearest[j], v[j], a vector's
        sum/min/max, ...)?

        Thresholds on such statistics can equal a record's value when the
        mechanism adds no noise, so reports withhold them.  Fitted statistics
        are thresholded on a score (a log-odds or log-ratio), never on a value
        of the release; the cells and atoms they are built from are never shown.
        """
        return self.model is None and _RECORD_SPACE.match(self.statistic) is not None

    def describe(self, reveal: bool = False) -> dict[str, object]:
        """Evidence for reports; record-space thresholds are withheld unless ``reveal``."""
        op = "≥" if self.above else "≤"
        hidden = self.in_record_space and not reveal
        shown = "<withheld: a value in the release's own space>" if hidden else f"{self.threshold:.6g}"
        what = self.statistic if self.model is None else getattr(self.model, "label", self.statistic)
        return {"statistic": self.statistic, "kind": self.kind, "threshold": None if hidden else float(self.threshold),
                "direction": op, "favours": self.favours,
                "text": f"{what} {op} {shown} (more likely on {self.favours})"}


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


# --------------------------------------------------------------------------- #
# Scoring
# --------------------------------------------------------------------------- #
def _signed_log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((num > 0) & (den > 0), np.log(np.maximum(num, 1e-300) / np.maximum(den, 1e-300)), -np.inf)


def predicted_bound(k_fav: np.ndarray | float, k_other: np.ndarray | float, m: int, n_cert: int, *, alpha: float,
                    delta: float, q_share: float | np.ndarray = 0.5, conservative: bool = True,
                    level: float = SELECTION_ALPHA, statement: str = TWO_LIMITS,
                    optimistic: bool = False) -> np.ndarray:
    """The bound an event seen ``k_fav`` / ``k_other`` times in ``m`` releases per side is
    expected to certify with ``n_cert`` fresh releases per side.

    p and q are replaced by their one-sided Clopper–Pearson limits at
    ``level`` (default :data:`SELECTION_ALPHA`; callers comparing K candidates
    pass SELECTION_ALPHA/K, so the limits hold for all of them at once and the
    best of many rare events is not flattered) on this sample (lower for p,
    upper for q), scaled to
    ``n_cert`` releases, and put through certification's own bound
    (:func:`~attacks.bounds.epsilon_one_statement`, split ``q_share``), but
    *signed*: ln((p_lo − δ)/q_hi) may be negative (or −∞), so weak candidates
    still rank among themselves.  Only a ranking: nothing here is certified.
    ``conservative=False`` uses the frequencies themselves (for choosing the
    split of α, a trade-off of certification alone).  ``statement=RATE_RATIO``
    predicts :func:`~attacks.bounds.epsilon_rate_ratio` instead (δ = 0 only;
    ``q_share`` unused).  ``optimistic=True`` takes the other ends of the
    selection limits (p's upper, q's lower): what the event might certify at
    most.
    """
    k_fav = np.asarray(k_fav, dtype=float)
    k_other = np.asarray(k_other, dtype=float)
    if optimistic:
        _, p_sel = clopper_pearson(k_fav, m, level, side="upper")
        q_sel, _ = clopper_pearson(k_other, m, level, side="lower")
    elif conservative:
        p_sel, _ = clopper_pearson(k_fav, m, level, side="lower")
        _, q_sel = clopper_pearson(k_other, m, level, side="upper")
    else:
        p_sel, q_sel = k_fav / m, k_other / m
    if statement == RATE_RATIO:
        return epsilon_rate_ratio(p_sel * n_cert, q_sel * n_cert, alpha=alpha, signed=True)
    q_share = np.asarray(q_share, dtype=float)
    p_lo, _ = clopper_pearson(p_sel * n_cert, n_cert, alpha * (1.0 - q_share), side="lower")
    _, q_hi = clopper_pearson(q_sel * n_cert, n_cert, alpha * q_share, side="upper")
    return _signed_log_ratio(p_lo - delta, q_hi)


def _wilson(k: np.ndarray, n: float, z: float, upper: bool) -> np.ndarray:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre + half if upper else np.maximum(centre - half, 0.0)


def _approx_score(kp: np.ndarray, kq: np.ndarray, n: int, n_cert: int, alpha: float, delta: float) -> np.ndarray:
    """Cheap stand-in for :func:`predicted_bound` (Wilson limits at both stages), to rank many thresholds."""
    from scipy.special import ndtri

    z_sel, z_cert = float(ndtri(1 - SELECTION_ALPHA)), float(ndtri(1 - alpha / 2))
    p = _wilson(kp, n, z_sel, upper=False)
    q = _wilson(kq, n, z_sel, upper=True)
    p = _wilson(p * n_cert, n_cert, z_cert, upper=False) - delta
    q = _wilson(q * n_cert, n_cert, z_cert, upper=True)
    return _signed_log_ratio(p, q)


def _levels(n: int) -> np.ndarray:
    """Quantile levels: a uniform grid plus geometric tails down to ~5/n."""
    grid = np.linspace(0.0, 1.0, 129)
    tail = 5.0 * 2.0 ** np.arange(0, 40) / max(n, 1)
    tail = tail[tail < 0.02]
    return np.unique(np.concatenate([grid, tail, 1.0 - tail]))


@dataclass(frozen=True)
class ThresholdCandidate:
    """One threshold event on one statistic, with its counts on the sample that chose it."""

    predicted: float
    threshold: float
    above: bool
    favours: str
    k_fav: int
    k_other: int


def threshold_candidates(s_D: np.ndarray, s_Dp: np.ndarray, *, n_cert: int, alpha: float, delta: float,
                         min_count: int = 5, shape: dict[str, bool] | None = None) -> list[ThresholdCandidate]:
    """The best threshold event per frequency tier on one statistic, best first.

    ``s_D`` and ``s_Dp`` hold the statistic on the same number n of releases
    of D and of D′.  Thresholds are taken from quantiles of the pooled sample
    (a uniform grid plus geometric tails) and from its distinct values when
    there are few; four orientations are scored for each (≥ or ≤, favouring D
    or D′).  Events seen fewer than ``min_count`` times on the favoured side
    are skipped (when any other is left).  For each tier of the favoured
    side's frequency (:data:`_TIERS`) the best event is returned, so the caller
    can validate a frequent event as well as a rare one.  Within a statistic
    candidates are ranked by a Wilson-interval approximation of
    :func:`predicted_bound` (``predicted`` holds it): the caller re-scores the
    survivors exactly, on other data.
    ``shape``, when given, is filled with what the pooled sample looks like:
    ``ties`` (some value repeats: a point mass or a discrete statistic) and
    ``modes`` (values packed :data:`attacks.statistics.MODE_DENSITY` × tighter than usual somewhere).
    """
    n = len(s_D)
    sD, sDp = np.sort(s_D), np.sort(s_Dp)
    pooled = np.sort(np.concatenate([sD, sDp]), kind="stable")  # merging two sorted runs: linear time
    new = np.empty(pooled.size, dtype=bool)
    new[:1] = True
    np.not_equal(pooled[1:], pooled[:-1], out=new[1:])
    if shape is not None:
        from .statistics import MODE_DENSITY, MODE_WINDOW

        span = pooled[MODE_WINDOW:] - pooled[:-MODE_WINDOW]
        typical = float(np.median(span)) if span.size else 0.0
        shape["ties"] = bool(np.count_nonzero(new) < pooled.size)
        shape["modes"] = bool(typical > 0 and np.any(span * MODE_DENSITY < typical))
    if np.count_nonzero(new) <= 256:
        ts = pooled[new]
    else:  # inverted-CDF quantiles of the pooled sample at the levels
        idx = np.clip(np.ceil(_levels(2 * n) * pooled.size).astype(np.int64) - 1, 0, pooled.size - 1)
        ts = np.unique(pooled[idx])
    ge_D = n - np.searchsorted(sD, ts, side="left")
    ge_Dp = n - np.searchsorted(sDp, ts, side="left")
    le_D = np.searchsorted(sD, ts, side="right")
    le_Dp = np.searchsorted(sDp, ts, side="right")
    combos = [(ge_D, ge_Dp, True, "D"), (ge_Dp, ge_D, True, "D'"),
              (le_D, le_Dp, False, "D"), (le_Dp, le_D, False, "D'")]
    kp = np.concatenate([c[0] for c in combos]).astype(float)
    kq = np.concatenate([c[1] for c in combos]).astype(float)
    ok = kp >= min_count
    if not np.any(ok):
        ok = np.ones_like(ok)
    approx = np.where(ok, _approx_score(kp, kq, n, n_cert, alpha, delta), -np.inf)
    share = kp / max(n, 1)
    tops, upper = [], np.inf
    for lower in _TIERS:
        in_tier = np.flatnonzero(ok & (share >= lower) & (share < upper))
        upper = lower
        if in_tier.size:
            tops.append(in_tier[np.argsort(-approx[in_tier], kind="stable")[:1]])
    out: list[ThresholdCandidate] = []
    for top in tops:
        j = int(top[0])
        c, i = divmod(j, len(ts))
        _, _, above, favours = combos[c]
        out.append(ThresholdCandidate(float(approx[j]), float(ts[i]), above, favours, int(kp[j]), int(kq[j])))
    out.sort(key=lambda c: -c.predicted)
    return out


def best_threshold(s_D: np.ndarray, s_Dp: np.ndarray, *, n_cert: int, alpha: float, delta: float,
                   min_count: int = 5) -> tuple[float, float, bool, str, int, int]:
    """The single best threshold event on one statistic (predicted ε, t, above, favours, k_fav, k_other)."""
    best = threshold_candidates(s_D, s_Dp, n_cert=n_cert, alpha=alpha, delta=delta, min_count=min_count)[0]
    return best.predicted, best.threshold, best.above, best.favours, best.k_fav, best.k_other
