"""Certifying an event's error rates against a claimed trade-off curve; μ, the empirical profile and the curve.

An event S, with the dataset it favours (A) and the other (B) fixed on a selection sample, is a test of "B"
against "A" that says "A" on S: its false-positive rate is FPR = P[M(B) ∈ S] and its false-negative rate
FNR = P[M(A) ∉ S].  From k_fav of n_fav fresh releases of A in S and k_oth of n_oth of B, one-sided
Clopper–Pearson upper limits FPR_hi (level α·s) and FNR_hi (level α·(1 − s), s the q share the selection
chose) hold together with probability ≥ 1 − α (union bound).  They are the same two limits the ε estimator
certifies (:func:`dpaudit.attacks.bounds.epsilon_one_statement`: q_hi = FPR_hi, p_lo = 1 − FNR_hi), so
everything below is a function of that one statement and needs no further share of α:

* **curve** (Dong, Roth & Su 2022, Def. 2.1): a claim whose curve is f promises FNR ≥ f(FPR) for every test.
  f is non-increasing, so FNR_hi < f(FPR_hi) certifies FNR ≤ FNR_hi < f(FPR_hi) ≤ f(FPR): a violation
  (:func:`curve_gap`);
* **μ** (Nasr et al., USENIX Security 2023, §5; Dong et al. 2022 Def. 2.6): μ-GDP promises
  FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ), so μ ≥ μ_lo = Φ⁻¹(1 − FPR_hi) − Φ⁻¹(FNR_hi) (:func:`mu_lower_bound`);
* **profile**: (ε, δ)-DP promises P[M(A) ∈ S] ≤ e^ε·P[M(B) ∈ S] + δ and the same for the complement with the
  roles swapped, so at every δ, ε ≥ max(ln((1 − FNR_hi − δ)/FPR_hi), ln((1 − FPR_hi − δ)/FNR_hi))
  (:func:`empirical_profile`: every δ of the grid at once).

The estimated trade-off curve (:func:`tradeoff_curve`) is a statistic's every threshold: FPR and FNR with
two-sided Clopper–Pearson limits at level α/(2·T) each, T the number of thresholds, so that the band holds at
every threshold at once with probability ≥ 1 − α (Bonferroni).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtri

from dpaudit.mechanisms.notions import Notion

from ...bounds import clopper_pearson

__all__ = ["CURVE_TOL", "PROFILE_DELTAS", "CertifiedRates", "TradeoffCurve", "best_cut", "certify_rates",
           "claimed_curve", "curve_gap", "empirical_profile", "mu_lower_bound", "tradeoff_curve"]

# A certified point must lie this far below the claimed curve to count as a violation: the libraries' curves are
# computed numerically (riskcal's RDP conversion bisects to 1e-9), and a violation must not rest on their rounding.
CURVE_TOL = 1e-7
# Level of the selection sample's limits that damp the winner's curse in best_cut (spread over its cuts).
SELECTION_LEVEL = 0.5
# The δ at which the empirical profile ε_lb(δ) is reported.
PROFILE_DELTAS: tuple[float, ...] = (0.5, 0.2, 0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-5, 1e-6)
# The false-positive rates at which a claimed curve is drawn (dense near 0, where curves bend).
CLAIMED_GRID: tuple[float, ...] = tuple(float(x) for x in np.unique(np.concatenate([
    [0.0], np.geomspace(1e-6, 0.05, 40), np.linspace(0.05, 1.0, 60)])))


@dataclass(frozen=True)
class CertifiedRates:
    """An event's error rates: point estimates and one-sided upper limits, jointly valid at 1 − ``alpha``."""

    fpr: float
    fnr: float
    fpr_hi: float
    fnr_hi: float
    alpha: float
    q_share: float

    def to_dict(self) -> dict[str, float]:
        return {"false_positive_rate": self.fpr, "false_negative_rate": self.fnr,
                "false_positive_rate_upper": self.fpr_hi, "false_negative_rate_upper": self.fnr_hi,
                "confidence": 1.0 - self.alpha, "q_share": self.q_share}


def certify_rates(k_fav: float, n_fav: float, k_oth: float, n_oth: float, *, alpha: float,
                  q_share: float = 0.5) -> CertifiedRates:
    """FPR_hi (level α·``q_share``) and FNR_hi (level α·(1 − ``q_share``)) of an event (module doc).

    ``k_fav`` of ``n_fav`` releases of the favoured dataset fell in the event, ``k_oth`` of ``n_oth`` of the
    other.  The event, its direction and ``q_share`` must be fixed independently of these counts.
    """
    if not 0.0 < q_share < 1.0:
        raise ValueError(f"q_share must be in (0, 1), got {q_share}")
    _, fpr_hi = clopper_pearson(k_oth, n_oth, alpha * q_share, side="upper")
    _, fnr_hi = clopper_pearson(n_fav - k_fav, n_fav, alpha * (1.0 - q_share), side="upper")
    return CertifiedRates(k_oth / n_oth, 1.0 - k_fav / n_fav, float(fpr_hi), float(fnr_hi), alpha, q_share)


def curve_gap(rates: CertifiedRates, notion: Notion) -> float:
    """f(FPR_hi) − FNR_hi: how far the certified point lies below the claimed curve (> :data:`CURVE_TOL`:
    a violation, Dong, Roth & Su 2022 Def. 2.1)."""
    return float(notion.tradeoff(rates.fpr_hi)) - rates.fnr_hi


def mu_lower_bound(rates: CertifiedRates) -> float:
    """μ_lo = Φ⁻¹(1 − FPR_hi) − Φ⁻¹(FNR_hi), at least 0 (Nasr et al. 2023; GDP's curve, Dong et al. 2022 Eq. 6)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = float(ndtri(1.0 - rates.fpr_hi) - ndtri(rates.fnr_hi))
    return 0.0 if math.isnan(mu) else max(mu, 0.0)


def empirical_profile(rates: CertifiedRates, deltas: tuple[float, ...] = PROFILE_DELTAS) -> list[float]:
    """ε_lb(δ) at each δ of ``deltas`` from the event and its complement (module doc), each at least 0."""
    out = []
    for delta in deltas:
        best = 0.0
        for num, den in ((1.0 - rates.fnr_hi - delta, rates.fpr_hi), (1.0 - rates.fpr_hi - delta, rates.fnr_hi)):
            if num > 0 and den > 0:
                best = max(best, math.log(num / den))
            elif num > 0:
                best = math.inf
        out.append(best)
    return out


def claimed_curve(notion: Notion, grid: tuple[float, ...] = CLAIMED_GRID) -> dict[str, Any]:
    """The claim's curve f on ``grid`` (JSON: ``claimed_curve``)."""
    x = np.asarray(grid, dtype=float)
    return {"notion": notion.to_dict(), "claim": notion.text(), "false_positive_rate": x.tolist(),
            "false_negative_rate": np.asarray(notion.tradeoff(x), dtype=float).tolist()}


@dataclass(frozen=True)
class TradeoffCurve:
    """A statistic's trade-off curve: FPR and FNR at each threshold with a band simultaneous over thresholds."""

    fpr: np.ndarray
    fnr: np.ndarray
    fpr_lo: np.ndarray
    fpr_hi: np.ndarray
    fnr_lo: np.ndarray
    fnr_hi: np.ndarray
    alpha: float
    releases: tuple[int, int]   # (favoured, other) releases counted

    def to_dict(self) -> dict[str, Any]:
        """JSON: ``tradeoff_curve``."""
        return {"false_positive_rate": self.fpr.tolist(), "false_negative_rate": self.fnr.tolist(),
                "false_positive_rate_lower": self.fpr_lo.tolist(), "false_positive_rate_upper": self.fpr_hi.tolist(),
                "false_negative_rate_lower": self.fnr_lo.tolist(), "false_negative_rate_upper": self.fnr_hi.tolist(),
                "confidence": 1.0 - self.alpha, "releases": list(self.releases),
                "band": "simultaneous over the thresholds (Clopper–Pearson, Bonferroni)"}


def _event_counts(bins_fav: np.ndarray, bins_oth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Releases at or above each interior threshold (the event favours the high bins): k_fav, k_oth."""
    k_fav = np.cumsum(bins_fav[::-1])[::-1][1:]
    k_oth = np.cumsum(bins_oth[::-1])[::-1][1:]
    return k_fav, k_oth


def tradeoff_curve(bins_fav: Any, bins_oth: Any, *, alpha: float, max_points: int = 200) -> TradeoffCurve:
    """The trade-off curve of the events "bin ≥ t" over every interior threshold t of a binned statistic.

    ``bins_fav[j]``/``bins_oth[j]``: releases of the favoured/other dataset in bin j, bins in the order the
    statistic was fixed in beforehand (the favoured dataset towards the high bins).  The band's limits are
    two-sided Clopper–Pearson at α/(2T) per rate, T = bins − 1, so all of them hold at once with probability
    ≥ 1 − α; at most ``max_points`` thresholds are kept (a subset of simultaneous statements stays valid),
    spread evenly over the pooled counts, with the end points (0, 1) and (1, 0) added.
    """
    bins_fav = np.asarray(bins_fav, dtype=float)
    bins_oth = np.asarray(bins_oth, dtype=float)
    n_fav, n_oth = float(bins_fav.sum()), float(bins_oth.sum())
    if len(bins_fav) != len(bins_oth) or len(bins_fav) < 2 or n_fav <= 0 or n_oth <= 0:
        raise ValueError("need two count vectors of the same length ≥ 2, each with releases")
    k_fav, k_oth = _event_counts(bins_fav, bins_oth)
    level = alpha / (2.0 * len(k_fav))
    keep = np.arange(len(k_fav))
    if len(keep) > max_points:
        pooled = (k_fav / n_fav + k_oth / n_oth) / 2.0
        targets = np.linspace(pooled.min(), pooled.max(), max_points)
        keep = np.unique(np.searchsorted(-pooled, -targets).clip(0, len(k_fav) - 1))
    fpr_lo, fpr_hi = clopper_pearson(k_oth[keep], n_oth, level)
    fnr_lo, fnr_hi = clopper_pearson(n_fav - k_fav[keep], n_fav, level)
    ends = (np.array([1.0]), np.array([0.0]))

    def framed(values: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        return np.concatenate([first, values, last])

    return TradeoffCurve(
        fpr=framed(k_oth[keep] / n_oth, *ends), fnr=framed(1.0 - k_fav[keep] / n_fav, *ends[::-1]),
        fpr_lo=framed(fpr_lo, *ends), fpr_hi=framed(fpr_hi, *ends),
        fnr_lo=framed(fnr_lo, *ends[::-1]), fnr_hi=framed(fnr_hi, *ends[::-1]),
        alpha=alpha, releases=(int(n_fav), int(n_oth)))


def best_cut(bins_fav: Any, bins_oth: Any, notion: Notion | None, *, alpha: float, n_cert: int,
             q_share: float = 0.5) -> tuple[int, float]:
    """On a *selection* sample's bins: the threshold index (event = bins ≥ index) whose rates, carried to
    ``n_cert`` releases per side, predict the largest gap below ``notion``'s curve — or, with ``notion`` None,
    the largest μ_lo — and that prediction.  Certify the chosen cut on fresh releases."""
    bins_fav = np.asarray(bins_fav, dtype=float)
    bins_oth = np.asarray(bins_oth, dtype=float)
    k_fav, k_oth = _event_counts(bins_fav, bins_oth)
    m_fav, m_oth = bins_fav.sum(), bins_oth.sum()
    # Rates carried to n_cert at the pessimistic ends of the selection sample's own limits (level
    # SELECTION_LEVEL over the cuts): a tail cut seen a few times must not win on its noise.
    level = SELECTION_LEVEL / max(len(k_fav), 1)
    _, fpr_sel = clopper_pearson(k_oth, m_oth, level, side="upper")
    _, fnr_sel = clopper_pearson(m_fav - k_fav, m_fav, level, side="upper")
    predicted = [certify_rates(n_cert * (1.0 - b), n_cert, n_cert * a, n_cert, alpha=alpha, q_share=q_share)
                 for a, b in zip(fpr_sel, fnr_sel)]
    if notion is None:
        scores = np.array([mu_lower_bound(r) for r in predicted])
    else:
        f = np.asarray(notion.tradeoff(np.array([r.fpr_hi for r in predicted])), dtype=float)
        scores = f - np.array([r.fnr_hi for r in predicted])
    j = int(np.argmax(scores))
    return j + 1, float(scores[j])
