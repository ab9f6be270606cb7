"""Which pairs are certified, and which certified bound the result leads with.

The search's winner is certified (:class:`~.certification.Certifier`).  Where
the winner's evidence is a *refusal* — the code raised on every call on one
side of the pair — that is a leak channel, but rarely the whole story: code
that crashes on a one-record cluster is likely to leak in what it releases
too, and a maintainer told only of the crash guards it and believes the code
private.  So the search keeps beside it the best pair on which the code
answered on both sides (:attr:`~..search.search.SearchOutcome.on_releases`) and both
are certified, each at half of α and half of the certification releases
(decided on selection samples, before any certification release is drawn:
by the union bound both statements hold at once with probability ≥ 1 − α).
The result leads with the bound on releases when it exceeds the claim, the
refusal staying a finding beside it (:func:`leading`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from dpaudit.execution.seeds import REFUSAL_CERTIFICATION_KEY
from dpaudit.mechanisms.base import PrivacyClaim

from ..selection.candidate import Candidate
from .certification import Certification, Certifier, CountSampler

__all__ = ["Certified", "certify_pairs", "leading"]


@dataclass
class Certified:
    """One certified pair: the candidate (its pair and selected event) and its looks."""

    candidate: Candidate
    certification: Certification
    alpha: float

    @property
    def refusal(self) -> bool:
        """Its evidence is the code's refusal of one side as a whole."""
        return bool(self.candidate.refused)

    def bound(self) -> float:
        """The certified bound in the claim's unit (0 when no look was completed)."""
        best = self.certification.best
        return 0.0 if best is None else float(best.bound) / self.candidate.pair.scale

    def exceeds(self, claim: PrivacyClaim) -> bool:
        return claim.is_private and self.bound() > claim.epsilon

    def summary(self, claim: PrivacyClaim) -> dict[str, Any]:
        """What the result says of a certified pair it does not lead with."""
        sel = self.candidate.selected
        return {"pair": self.candidate.pair.name, "evidence": "refusal" if self.refusal else "releases",
                "refusal_channel": self.candidate.channel, "epsilon_lower_bound": self.bound(),
                "alpha": self.alpha, "exceeds_claim": self.exceeds(claim),
                "event": sel.event.describe().get("text", "") if sel is not None else "",
                "looks": self.certification.summary()}


def certify_pairs(certify: Certifier, sampler: CountSampler, winner: Candidate, on_releases: Candidate | None,
                  size: Callable[[Candidate, float], int]) -> list[Certified]:
    """The winner certified at the certifier's α on ``size(winner, 1.0)`` releases per dataset; with
    ``on_releases`` (the winner's evidence is a refusal), both, each at α/2: the winner first on half of what is
    left (``size(winner, 0.5)``: the strongest evidence is certified whatever comes after), then the pair both
    sides answer on the rest, each sized by its own pair's speed, on seeds of its own."""
    if on_releases is None or on_releases.selected is None:
        return [Certified(winner, certify(sampler, winner, size(winner, 1.0)), certify.alpha)]
    half = dataclasses.replace(certify, alpha=certify.alpha / 2.0)
    out = []
    for key, candidate, share in ((REFUSAL_CERTIFICATION_KEY, winner, 0.5), ((), on_releases, 1.0)):
        sampler.cert_key = key  # the two certifications draw streams of their own
        out.append(Certified(candidate, half(sampler, candidate, size(candidate, share)), half.alpha))
    sampler.cert_key = ()
    return out


def leading(certified: list[Certified], claim: PrivacyClaim) -> tuple[Certified, list[Certified]]:
    """(the certification the result leads with, the others): one that exceeds the claim before one that does
    not, and among equals the one on what the code releases before the refusal."""
    order = sorted(certified, key=lambda c: (not c.exceeds(claim), c.refusal))
    return order[0], order[1:]
