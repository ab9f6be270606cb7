"""The verdict on a claim's whole curve, and its one conclusion naming the notion.

From the certified event (its counts on fresh releases, the q share the selection chose) and, for binned or
discrete releases, the cell counts of a partition fixed beforehand:

* the **curve statement** (:mod:`dpaudit.attacks.epsilon.certification.tradeoff`): the certified point (FPR_hi, FNR_hi) below
  the claim's trade-off curve f is a violation (Dong, Roth & Su 2022, Def. 2.1); the empirical profile and μ_lo
  are functions of the same two limits and are reported beside it;
* the **Rényi statement** (:mod:`dpaudit.attacks.epsilon.certification.renyi`): a certified D_α at any order above the
  claim's bound there (zCDP: ρ·α; Rényi DP: the stated ε(α); GDP: α·μ²/2) is a violation.

Each statement is certified at its own level and the levels add up to the run's α (:func:`split_alpha`: the
Rényi statement takes :data:`RENYI_SHARE` of α when it is made, the curve the rest), so the verdict — a
violation when either statement is — is wrong with probability at most α (union bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.notions import Notion

from .renyi import RENYI_ORDERS, RenyiBound, renyi_lower_bound
from .tradeoff import (
    CURVE_TOL,
    PROFILE_DELTAS,
    CertifiedRates,
    certify_rates,
    curve_gap,
    empirical_profile,
    mu_lower_bound,
)

__all__ = ["RENYI_SHARE", "CurveVerdict", "judge_curve", "split_alpha"]

RENYI_SHARE = 0.2  # share of α the Rényi statement takes when one is made (the curve statement takes the rest)


def split_alpha(alpha: float, renyi: bool) -> tuple[float, float]:
    """(curve level, Rényi level): the whole α to the curve when no Rényi statement is made."""
    return (alpha * (1.0 - RENYI_SHARE), alpha * RENYI_SHARE) if renyi else (alpha, 0.0)


def _pct(confidence: float) -> str:
    return f"{100.0 * confidence:.4g}%"


@dataclass(frozen=True)
class CurveVerdict:
    """What the curve (and Rényi) statements certified about a claim in ``notion``."""

    notion: Notion
    rates: CertifiedRates
    gap: float                       # f(FPR_hi) − FNR_hi: > CURVE_TOL is a violation
    mu_lower: float
    profile: list[float]             # ε_lb at each δ of PROFILE_DELTAS
    confidence: float
    where: str = "the selected event"
    renyi: RenyiBound | None = None
    renyi_exceeded: list[tuple[float, float, float]] = field(default_factory=list)  # (order, certified, claimed)

    @property
    def curve_violated(self) -> bool:
        return self.gap > CURVE_TOL

    @property
    def verdict(self) -> Verdict:
        return Verdict.VIOLATION if self.curve_violated or self.renyi_exceeded else Verdict.NO_VIOLATION

    def claimed_at_fpr(self) -> float:
        return float(self.notion.tradeoff(self.rates.fpr_hi))

    def conclusion(self) -> str:
        """One sentence naming the notion: "VIOLATION of ρ = 0.5 (zCDP): …" or "Consistent with μ = 1 (GDP): …"."""
        claim, r, at = self.notion.text(), self.rates, _pct(self.confidence)
        if self.renyi_exceeded:
            order, certified, _ = max(self.renyi_exceeded, key=lambda e: e[1] - e[2])
            return (f"VIOLATION of {claim}: certified D_{order:g} ≥ {certified:.3g} > {self.notion.renyi_text(order)} "
                    f"on {self.where}, at {at} confidence.")
        if self.curve_violated:
            return (f"VIOLATION of {claim}: certified false-positive rate ≤ {r.fpr_hi:.3g} with false-negative rate "
                    f"≤ {r.fnr_hi:.3g} lies below the claimed trade-off curve (it requires ≥ "
                    f"{self.claimed_at_fpr():.3g}) on {self.where}, at {at} confidence.")
        mu = f"; certified μ ≥ {self.mu_lower:.3g}" if self.mu_lower > 0 else ""
        return (f"Consistent with {claim}: certified false-positive rate ≤ {r.fpr_hi:.3g} with false-negative rate "
                f"≤ {r.fnr_hi:.3g} lies on or above the claimed trade-off curve ({self.claimed_at_fpr():.3g} "
                f"there){mu} on {self.where}, at {at} confidence; a lower bound is no proof of privacy.")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "notion": self.notion.to_dict(), "claim": self.notion.text(), "verdict": self.verdict,
            "conclusion": self.conclusion(), "certified_rates": self.rates.to_dict(),
            "claimed_false_negative_rate": self.claimed_at_fpr(), "gap_below_curve": self.gap,
            "mu_lower_bound": self.mu_lower, "confidence": self.confidence,
            "empirical_profile": {"delta": list(PROFILE_DELTAS),
                                  "epsilon_lower_bound": [e if math.isfinite(e) else None for e in self.profile],
                                  "claimed_epsilon": [_finite(self.notion.point_epsilon(d)) for d in PROFILE_DELTAS]},
        }
        if self.renyi is not None:
            out["renyi"] = {**self.renyi.to_dict(),
                            "claimed": [_finite(self.notion.renyi(a)) for a in self.renyi.orders],
                            "exceeded_at": [a for a, _, _ in self.renyi_exceeded]}
        return out


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def judge_curve(notion: Notion, k_fav: float, n_fav: float, k_oth: float, n_oth: float, *, alpha: float,
                q_share: float = 0.5, cells: tuple[Any, Any] | None = None, where: str = "the selected event",
                ) -> CurveVerdict:
    """Certify the claim's curve on the event's counts and, with ``cells`` (counts of D and D′ per cell of a
    partition fixed beforehand), its Rényi bounds; α split by :func:`split_alpha`.  The event, its direction,
    ``q_share`` and the partition must have been fixed independently of these counts."""
    renyi_wanted = cells is not None and any(math.isfinite(notion.renyi(a)) for a in RENYI_ORDERS)
    alpha_curve, alpha_renyi = split_alpha(alpha, renyi_wanted)
    rates = certify_rates(k_fav, n_fav, k_oth, n_oth, alpha=alpha_curve, q_share=q_share)
    bound = renyi_lower_bound(cells[0], cells[1], alpha=alpha_renyi) if renyi_wanted and cells is not None else None
    exceeded = bound.exceeding(notion.renyi) if bound is not None else []
    return CurveVerdict(notion, rates, curve_gap(rates, notion), mu_lower_bound(rates), empirical_profile(rates),
                        1.0 - alpha, where, bound, exceeded)
