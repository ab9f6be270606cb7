"""Console output of ``dpaudit sweep``: the per-ε summary table (the report has every metric)."""

from __future__ import annotations

from typing import Any

from dpaudit.report.sections import fmt

__all__ = ["format_summary"]


def format_summary(results: dict[str, Any]) -> str:
    """Mean ± std per ε of up to six headline metrics: displacement, ARI, attack advantage, ε bound."""
    summary = results["sweep"]["summary"]
    names: list[str] = []
    for row in summary:
        names += [n for n in row["metrics"] if n not in names]
    keep = [n for n in names if n == "displacement" or n.endswith((".ari", ".advantage")) or
            n.endswith("epsilon_lower_bound")][:6]
    table = [["ε", *keep]]
    for row in summary:
        cells = [fmt(row["epsilon"])]
        for n in keep:
            m = row["metrics"].get(n)
            cells.append("–" if m is None else f"{fmt(m['mean'])}±{fmt(m['std'])}")
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in table)
