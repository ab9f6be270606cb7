"""The verdict of ``dpaudit attack``: do the membership attacks' certified bounds exceed the claim?

Each membership attack certifies a one-run ε lower bound (Steinke, Nasr &
Jagielski 2023, Thm. 3.1) from its guesses pooled over repeats.  Where that
bound may be compared with the claim (:func:`attacks.metrics.one_run_comparison`:
add/remove claims, releases the attacker sees as a whole), the verdict is
``violation`` when one of them exceeds the claimed ε.  Several attacks are
several tests: for the verdict each is recomputed at α/m (Bonferroni over the
m comparable attacks), so a correct mechanism is called a violation with
probability at most α overall; the per-attack bounds in the table stay at α.

No comparable attack (a metric or replace claim, a labels release, every
attack failed): ``inconclusive`` — nothing was certified.  Then
:func:`~attacks.execution.settle_verdict` applies the findings: a blocking
finding (a failed call, a failed repeat, nondeterminism) turns "no violation
found" into "inconclusive".
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from attacks.execution import INCONCLUSIVE, NO_VIOLATION, VIOLATION, RunFindings, settle_verdict
from attacks.metrics import MembershipMetrics, aggregate, one_run_comparison

from .config import MEMBERSHIP_ATTACKS
from .repeat import RepeatOutcome

__all__ = ["attack_verdict"]


def attack_verdict(outcomes: list[RepeatOutcome], attacks: Iterable[str], claim: dict[str, Any], alpha: float,
                   findings: RunFindings) -> dict[str, Any]:
    """``{"verdict", "basis", "tests"}``: the verdict, why, and each certified test behind it."""
    kind = next((o.release_kind for o in outcomes if o.release_kind), None)
    comparable, why = one_run_comparison(claim, kind)
    runs = {name: [o.results[name] for o in outcomes if isinstance(o.results.get(name), MembershipMetrics)]
            for name in attacks if name in MEMBERSHIP_ATTACKS}
    runs = {name: mets for name, mets in runs.items() if mets}
    if not comparable or not runs:
        basis = why if not comparable else "no membership attack finished a repeat: nothing was certified"
        raw = INCONCLUSIVE
        tests: list[dict[str, Any]] = []
    else:
        each = alpha / len(runs)
        eps = float(claim.get("epsilon", math.inf))
        tests = []
        for name, mets in runs.items():
            bound = float(aggregate(mets, alpha=each)["epsilon_lower_bound"])  # type: ignore[arg-type]
            tests.append({"attack": name, "epsilon_lower_bound": bound, "confidence": 1.0 - each,
                          "exceeds_claim": bool(bound > eps)})
        raw = VIOLATION if any(t["exceeds_claim"] for t in tests) else NO_VIOLATION
        basis = (f"{len(tests)} one-run bound(s), each at confidence {1 - each:.4g} (α = {alpha:g} split over "
                 f"{len(tests)} attack(s)), {why}")
    verdict = settle_verdict(raw, [f for _, f in findings.blocking])
    if verdict != raw:
        basis += "; the audited code misbehaved (see findings), so no clean verdict is possible"
    return {"verdict": verdict, "basis": basis, "tests": tests}
