"""Console output of ``dpaudit audit``: the verdict table (one row per part that ran)."""

from __future__ import annotations

from typing import Any

from dpaudit.report.sections import fmt

__all__ = ["format_verdict_table"]


def format_verdict_table(results: dict[str, Any]) -> str:
    """``part  value  claim  verdict`` rows, values right-aligned."""
    table = [("part", "value", "claim", "verdict")]
    table += [(r["part"], fmt(r["value"]), r["claim"], r["verdict"]) for r in results["verdict_table"]]
    w = [max(len(row[i]) for row in table) for i in range(3)]
    return "\n".join(f"{part:<{w[0]}}  {value:>{w[1]}}  {claim:<{w[2]}}  {verdict}"
                     for part, value, claim, verdict in table)
