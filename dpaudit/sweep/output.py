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
    short = any(row.get("failed") or row.get("missing") for row in summary)
    table = [["ε", *keep, *(["repeats"] if short else [])]]
    for row in summary:
        cells = [fmt(row["epsilon"])]
        for n in keep:
            m = row["metrics"].get(n)
            # one value has no spread: no "±0" over repeats that are missing
            cells.append("–" if m is None else f"{fmt(m['mean'])}±{fmt(m['std'])}" if m["n"] > 1
                         else f"{fmt(m['mean'])} (n=1)")
        if short:
            total = row["n"] + row.get("failed", 0) + row.get("missing", 0)
            cells.append(f"{row['n']} of {total}"
                         + (f", {row['failed']} failed" if row.get("failed") else "")
                         + (f", {row['missing']} not run" if row.get("missing") else ""))
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in table)
