"""What an ε estimate returns: :class:`EpsilonEstimate`, certified or inconclusive.

A certified estimate (:func:`certified_result`) reports the best look's bound in
the claim's unit — the raw bound on the pair divided by the pair's scale (its
distance for metric claims, 2 for a replace pair under an add-remove claim) —
with the verdict (:func:`dpaudit.execution.settle_verdict`: findings about the audited
code can make it inconclusive), the evidence (pair, event, counts, looks) and
the guarantee's text.  An inconclusive one (:func:`inconclusive_result`) says
why nothing was certified; its verdict is never "no violation found".
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.execution import Findings, MechanismBroken, settle_verdict
from dpaudit.execution.findings import FindingRecord
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import Mechanism, PrivacyClaim

from ...bounds import TWO_LIMITS
from ..certification.certification import Certification, LookResult
from ..sampling.budget import Plan
from ..search.search import SearchOutcome
from ..selection.candidate import Candidate
from ..selection.events import BinEvent, ThresholdEvent
from .curve_result import curve_report
from .guarantee import guarantee_text

__all__ = ["EpsilonEstimate", "RunFacts", "certified_result", "inconclusive_result"]


@dataclass
class RunFacts:
    """What every result of one run states, whatever became of it: the code, the claim, the level, the
    seed, when it started, and what the audited code did (findings, leak warnings it raised)."""

    mechanism: Mechanism
    claim: PrivacyClaim
    confidence: float
    seed: int | str  # seed_record: the int seed, or the expression of the SeedSequence given
    t_start: float
    findings: Findings
    leaks: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(getattr(self.mechanism, "name", type(self.mechanism).__name__))

@dataclass(frozen=True)
class EpsilonEstimate:
    """Result of :func:`estimate_epsilon` (JSON via :meth:`to_dict`)."""

    mechanism: str
    claim: PrivacyClaim
    epsilon_lower_bound: float
    verdict: str
    confidence: float
    samples: int                 # certification releases per dataset
    selection_samples: int       # first-round selection releases per dataset per candidate pair
    selection_samples_total: int  # all selection releases (both datasets, every pair, every round)
    ceiling: float               # largest ε these samples could certify (claim's unit)
    pair: dict[str, Any]
    event: dict[str, Any]
    counts: dict[str, Any]
    raw_bound: float             # certified ε on the pair itself, before scaling
    point_estimate: float        # ln(p̂/q̂) on the certification sample (not certified)
    candidates: list[dict[str, Any]]
    elapsed_seconds: float
    seed: int | str              # the int seed, or the expression that rebuilds the SeedSequence given
    guarantee: str
    timings: dict[str, float] = field(default_factory=dict)
    leak_warnings: list[str] = field(default_factory=list)  # PrivacyLeakWarnings the mechanism raised
    search: dict[str, Any] = field(default_factory=dict)    # budget, rounds, what was searched
    findings: list[FindingRecord] = field(default_factory=list)  # misbehaviour of the audited code (execution layer)
    selected_event: BinEvent | ThresholdEvent | None = field(default=None, repr=False, compare=False)  # not serialised
    curve: dict[str, Any] = field(default_factory=dict)           # the claim's curve tested (curve_result.py)
    tradeoff_curve: dict[str, Any] = field(default_factory=dict)  # the event's statistic: FPR, FNR and their band
    claimed_curve: dict[str, Any] = field(default_factory=dict)   # the claim's curve f
    notes: list[str] = field(default_factory=list)  # what the caller should know of the run's set-up (no public box)

    @property
    def is_violation(self) -> bool:
        return self.verdict == Verdict.VIOLATION

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(dataclasses.replace(self, selected_event=None))
        out.pop("selected_event", None)
        out["claim"] = self.claim.to_dict()
        return out


def certified_result(facts: RunFacts, plan: Plan, fast: bool, found: SearchOutcome, cert: Certification,
                     best: LookResult, winner: Candidate) -> EpsilonEstimate:
    """The :class:`EpsilonEstimate` of a certified run: the best look's bound on ``winner`` (the certified pair
    the result leads with), in the claim's unit."""
    claim, confidence, findings = facts.claim, facts.confidence, facts.findings
    if winner.selected is None:
        raise RuntimeError(f"the pair {winner.pair.name} is certified without a selected event")
    pair, sel = winner.pair, winner.selected
    event = sel.event
    (k_fav, n_fav), (k_oth, n_oth) = best.favoured, best.other
    bound = best.bound / pair.scale
    ceiling = best.ceiling(claim.delta) / pair.scale
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat, q_hat = k_fav / max(n_fav, 1), k_oth / max(n_oth, 1)
        point = math.log(p_hat / q_hat) if q_hat > 0 and p_hat > 0 else (math.inf if p_hat > 0 else 0.0)
    where = f"the pair {pair.summary().get('name', '?')}, event {event.describe().get('text', '?')}"
    curves = curve_report(claim, cert, best, sel.q_share, pair.scale, event, confidence, where)
    violated = claim.is_private and bound > claim.epsilon
    if curves.decides and curves.verdict is not None:  # a notion's claim: its whole curve (its point lies on it)
        violated = violated or curves.verdict.verdict == Verdict.VIOLATION
    verdict = settle_verdict(Verdict.VIOLATION if violated else Verdict.NO_VIOLATION, findings)
    alpha_q = best.alpha * sel.q_share if best.statement == TWO_LIMITS else 0.0
    n = int(max(best.requested))
    return EpsilonEstimate(
        mechanism=facts.name, claim=claim, epsilon_lower_bound=bound, verdict=verdict, confidence=confidence,
        samples=n,
        selection_samples=found.sizes[0], selection_samples_total=found.releases,
        ceiling=ceiling, pair=pair.summary(), event=_event_text(event.describe(), winner.channel),
        counts={"favoured_in_event": k_fav, "other_in_event": k_oth, "n_per_dataset": n,
                "n_favoured": n_fav, "n_other": n_oth,
                "requested": [int(r) for r in best.requested],  # releases asked of D, D' (Poisson for the ratio)
                "favoured_dataset": event.favours, "statement": best.statement,
                "alpha_p": best.alpha - alpha_q, "alpha_q": alpha_q, "alpha_look": best.alpha,
                "looks": cert.summary()},
        raw_bound=best.bound, point_estimate=point / pair.scale if math.isfinite(point) else point,
        candidates=found.summaries(), elapsed_seconds=time.perf_counter() - facts.t_start, seed=facts.seed,
        guarantee=guarantee_text(confidence, bound, len(found.candidates), claim.neighbours == "metric", sel.q_share,
                                 best.statement, looks=(len(cert.looks), cert.planned, best.alpha)),
        leak_warnings=list(facts.leaks), findings=findings.to_list(), selected_event=event, curve=curves.curve,
        tradeoff_curve=curves.estimated, claimed_curve=curves.claimed,
        search={"selection_releases": int(plan.selection),
                "fast": fast, "candidates_built": found.built,
                "candidates_tried": len(found.candidates), "model_search_trials": found.trials,
                "round_sizes": list(found.sizes), "rounds": len(found.sizes), "plan": plan.to_dict(),
                "stopped": cert.stopped, "search_cut_at_deadline": found.cut,
                "domain": found.domain.to_dict()},
        timings={"selection_seconds": found.seconds, "certification_seconds": cert.seconds,
                 "expected_bound_at_selection": float(winner.rank[0])})


def _event_text(described: dict[str, Any], channel: str) -> dict[str, Any]:
    """The event as reported: where the pair's evidence is a refusal (the code raised on every call on one side),
    the event *is* that refusal whatever statistic selection read it through, and it is named so."""
    if not channel:
        return described
    return {**described, "text": f"the code's refusal: {channel}", "statistic": described.get("text", ""),
            "refusal": channel}


def inconclusive_result(facts: RunFacts, broken: MechanismBroken, *,
                        candidates: list[dict[str, Any]] | None = None) -> EpsilonEstimate:
    """The result when the audited code stopped the run (every release failing, timing out or crashing)."""
    findings = facts.findings
    findings.merge(broken.findings)
    for result in sorted(getattr(broken, "partial_results", {}).items()):  # chunks that finished elsewhere
        part = result[1]
        if isinstance(part, tuple) and part and isinstance(part[-1], Findings):
            findings.merge(part[-1])
    reason = str(broken)
    return EpsilonEstimate(
        mechanism=facts.name, claim=facts.claim, epsilon_lower_bound=0.0,
        verdict=Verdict.INCONCLUSIVE, confidence=facts.confidence, samples=0, selection_samples=0,
        selection_samples_total=0, ceiling=0.0, pair={"name": "none", "description": "no pair was certified"},
        event={"text": "none (nothing was certified)"}, counts={"stopped": reason}, raw_bound=0.0,
        point_estimate=0.0, candidates=list(candidates or []),
        elapsed_seconds=time.perf_counter() - facts.t_start, seed=facts.seed,
        guarantee=f"No bound was certified: {reason}. The findings say why; the verdict is "
                  "inconclusive, not 'no violation found'.",
        leak_warnings=list(facts.leaks), findings=findings.to_list())
