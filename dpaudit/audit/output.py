"""Console output of ``dpaudit audit``: the verdict table (one row per part that ran)."""

from __future__ import annotations

from typing import Any

from dpaudit.console import render, table
from dpaudit.report.numbers import fmt

__all__ = ["format_verdict_table", "verdict_table"]


def verdict_table(results: dict[str, Any]) -> Any:
    """``part  statistic  value  claim  verdict`` rows; violations in bold red on a terminal."""
    rows = [[r["part"], r.get("statistic", ""), fmt(r["value"]), r["claim"], r["verdict"]]
            for r in results["verdict_table"]]
    styles = ["bold red" if r[-1] == "violation" else None for r in rows]
    return table(["part", "statistic", "value", "claim", "verdict"], rows, right=(2,), row_styles=styles)


def format_verdict_table(results: dict[str, Any]) -> str:
    """:func:`verdict_table` as plain text."""
    return render(verdict_table(results))
