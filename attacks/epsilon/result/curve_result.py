"""What an ε estimate reports of the claim's curve: the verdict on it, the certified point, μ_lo, the empirical
profile, the estimated trade-off curve and the claimed one (JSON: ``curve``, ``tradeoff_curve``,
``claimed_curve``).

Which statement stands behind each number:

* every completed look whose statement is the two-limit one (:data:`~dpaudit.attacks.bounds.TWO_LIMITS`)
  certifies, at its level α_j, the point (FPR_hi, FNR_hi) of the selected event
  (:func:`~dpaudit.attacks.epsilon.certification.tradeoff.certify_rates`: the same two limits as its ε bound); the looks'
  levels add up to the looks' α, so all of them hold at once (as for the ε bound,
  :mod:`dpaudit.attacks.epsilon.certification.certification`), and a claim stated in a notion (ρ, μ, Rényi, a profile) is
  violated when any of them lies below its curve — which includes its (ε, δ) point, whose curve is below the
  notion's;
* a look's Rényi statement (claims with a Rényi bound, binned events) at its own level, α split beforehand
  (:func:`~dpaudit.attacks.epsilon.certification.curve_verdict.split_alpha`);
* for an (ε, δ) claim the verdict stays the ε bound's; the curve numbers are reported beside it, certified by
  the same statement where it is the two-limit one, and otherwise (the rate ratio, δ = 0) at the look's level
  as a second statement outside the verdict (``part_of_verdict`` false);
* the estimated curve's band (:func:`~dpaudit.attacks.epsilon.certification.tradeoff.tradeoff_curve`) is simultaneous over
  its thresholds at the run's confidence: a picture with its own guarantee, not part of the verdict.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import PrivacyClaim

from ...bounds import TWO_LIMITS
from ..certification.certification import Certification, LookResult, judge_look
from ..certification.curve_verdict import CurveVerdict
from ..certification.tradeoff import claimed_curve, tradeoff_curve
from ..selection.events import BinEvent, ThresholdEvent

__all__ = ["CurveReport", "curve_report"]


class CurveReport:
    """The curve's verdict (None: the claim's own verdict stands) and the JSON parts."""

    def __init__(self, verdict: CurveVerdict | None, decides: bool, curve: dict[str, Any],
                 estimated: dict[str, Any], claimed: dict[str, Any]) -> None:
        self.verdict, self.decides = verdict, decides
        self.curve, self.estimated, self.claimed = curve, estimated, claimed


def _estimated(event: BinEvent | ThresholdEvent, look: LookResult, confidence: float) -> dict[str, Any]:
    if not isinstance(event, BinEvent) or look.cells is None:
        return {}
    order = event.curve_order()
    i_fav = 0 if look.favours == "D" else 1
    fav, oth = look.cells[i_fav][order], look.cells[1 - i_fav][order]
    if fav.sum() <= 0 or oth.sum() <= 0 or len(order) < 2:
        return {}
    out = tradeoff_curve(fav, oth, alpha=1.0 - confidence).to_dict()
    out["statistic"] = event.statistic
    return out


def curve_report(claim: PrivacyClaim, cert: Certification, best: LookResult, q_share: float, scale: float,
                 event: BinEvent | ThresholdEvent, confidence: float, where: str) -> CurveReport:
    """The curve's part of a certified estimate (module doc); nothing where the claim has no curve (no claim, a
    metric claim) or the pair is scaled (a replace pair under add-remove: the curve is a one-step statement)."""
    notion = claim.curve
    if notion is None or scale != 1.0:
        return CurveReport(None, False, {}, {}, {})
    decides = claim.notion is not None
    looks = [look for look in cert.looks if look.statement == TWO_LIMITS] if decides else [best]
    # a look with no release of one side (a Poisson size of 0 on a tiny budget) says nothing of the curve
    judged = [judge_look(claim, look, q_share, where) for look in looks if min(look.favoured[1], look.other[1]) > 0]
    if not judged:
        return CurveReport(None, False, {}, _estimated(event, best, confidence), claimed_curve(notion))
    violating = [v for v in judged if v.verdict == Verdict.VIOLATION]
    shown = max(violating or judged, key=lambda v: v.gap)
    shown = dataclasses.replace(shown, confidence=confidence)  # the looks' statements hold together at the run's level
    curve = {**shown.to_dict(), "decides_verdict": decides,
             "part_of_verdict": decides or best.statement == TWO_LIMITS}
    return CurveReport(shown, decides, curve, _estimated(event, best, confidence), claimed_curve(notion))
