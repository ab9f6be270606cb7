"""The audit's verdict: one row per certified test, and the top-level verdict over the rows.

``violation`` when any certified bound exceeds the claim; ``no violation
found`` when at least one certified test ran and none did; else
``inconclusive``.  The tests are several — ε estimation and each membership
attack — so each runs at the audit's α split over them (Bonferroni,
:attr:`~dpaudit.audit.config.AuditConfig.per_test_alpha`): a correct
mechanism is called a violation with probability at most α overall.

Then the findings (:func:`attacks.execution.settle_verdict`): a blocking
finding — a failed or timed-out call, a crash, nondeterminism — or a part that
could not run turns "no violation found" into "inconclusive"; a certified
violation stays a violation.
"""

from __future__ import annotations

import math
from typing import Any

from attacks.execution import INCONCLUSIVE, NO_VIOLATION, VIOLATION, settle_verdict

__all__ = ["INCONCLUSIVE", "NO_VIOLATION", "VIOLATION", "claim_at", "overall_verdict"]


def claim_at(claim: dict[str, Any]) -> str:
    """The claim column of a verdict row, e.g. ``ε = 1 per unit distance``."""
    eps = float(claim["epsilon"])
    unit = " per unit distance" if claim["neighbours"] == "metric" else ""
    return ("ε = ∞" if math.isinf(eps) else f"ε = {eps:g}") + unit


def overall_verdict(results: dict[str, Any]) -> str:
    """The top-level verdict over ``results["verdict_table"]``, settled with ``results["findings"]``
    and ``results["parts"]``: a violation in any row is a violation; otherwise a row that is
    inconclusive (a test that could not be made) or a part whose status is not ``ok`` blocks a
    clean verdict, as the rule of ``dpaudit attack`` does (:func:`dpaudit.attack.verdict.verdict_of`)."""
    verdicts = [row["verdict"] for row in results["verdict_table"]]
    raw = (VIOLATION if VIOLATION in verdicts else INCONCLUSIVE if INCONCLUSIVE in verdicts
           else NO_VIOLATION if NO_VIOLATION in verdicts else INCONCLUSIVE)
    blocking = [f for f in results.get("findings", []) if f.get("blocking", True)]
    if any(status != "ok" for status in results.get("parts", {}).values()):
        blocking.append({"kind": "incomplete"})
    return settle_verdict(raw, blocking)
