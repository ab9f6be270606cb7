"""The audit's verdict: one row per certified test, and the top-level verdict over the rows.

``violation`` when any certified bound exceeds the claim, ``no violation
found`` when at least one certified test ran and none did, else
``inconclusive``.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["INCONCLUSIVE", "NO_VIOLATION", "VIOLATION", "claim_at", "overall_verdict"]

VIOLATION, NO_VIOLATION, INCONCLUSIVE = "violation", "no violation found", "inconclusive"


def claim_at(claim: dict[str, Any]) -> str:
    """The claim column of a verdict row, e.g. ``ε = 1 per unit distance``."""
    eps = float(claim["epsilon"])
    unit = " per unit distance" if claim["neighbours"] == "metric" else ""
    return ("ε = ∞" if math.isinf(eps) else f"ε = {eps:g}") + unit


def overall_verdict(results: dict[str, Any]) -> str:
    """The top-level verdict over the rows of ``results["verdict_table"]``."""
    verdicts = [row["verdict"] for row in results["verdict_table"]]
    if VIOLATION in verdicts:
        return VIOLATION
    return NO_VIOLATION if NO_VIOLATION in verdicts else INCONCLUSIVE
