"""Console output of ``dpaudit attack``: the results table.

Reads only the plain results dict of :func:`dpaudit.attack.run.run_attack`;
``results.json``, ``report.md`` and ``report.html`` are written by
:mod:`dpaudit.report`.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["format_table"]


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        return f"{value:.{digits}f}"
    return str(value)


def _pm(entry: dict[str, Any], key: str) -> str:
    if key not in entry:
        return "-"
    std = entry.get(f"{key}_std")
    return _fmt(entry[key]) if not std else f"{_fmt(entry[key])} ± {_fmt(std)}"


def table_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    header = ["attack", "advantage", "AUC", "TPR@1%FPR", "ε lower bound", "vs claim", "ceiling"]
    rows = []
    for a in results.get("attacks", []):
        if a.get("status") == "not-applicable":
            rows.append([a["name"], "n/a: " + a.get("reason", ""), "", "", "", "", ""])
        elif a.get("status") != "ok":
            rows.append([a["name"], "error: " + "; ".join(a.get("errors", ["?"]))[:70], "", "", "", "", ""])
        elif a["name"] == "reconstruction":
            rows.append([a["name"], f"success {_pm(a, 'success_rate')} (prior {_fmt(a.get('baseline_success_rate'))})",
                         "-", "-", "-", "-", f"median error {_fmt(a.get('median_error'))}"])
        else:
            rows.append([a["name"], _pm(a, "advantage"), _pm(a, "auc"), _pm(a, "tpr_at_1pct_fpr"),
                         _fmt(a.get("epsilon_lower_bound")), _vs_claim(a), _fmt(a.get("advantage_ceiling"))])
    return header, rows


def _vs_claim(a: dict[str, Any]) -> str:
    if not a.get("epsilon_lower_bound_comparable", False):
        return "n/c" if "epsilon_lower_bound_comparable" in a else "-"
    if "epsilon_lower_bound_exceeds_claim" not in a:
        return "no claim"
    return "EXCEEDS" if a["epsilon_lower_bound_exceeds_claim"] else "within"


def format_table(results: dict[str, Any]) -> str:
    """Plain-text table for the terminal, with how the ε bound was certified beneath it."""
    header, rows = table_rows(results)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    out = [line(header), line(["-" * w for w in widths]), *map(line, rows)]
    mia = [a for a in results.get("attacks", []) if a.get("epsilon_lower_bound_method")]
    if mia:
        conf = mia[0].get("confidence")
        out.append(f"ε lower bound: {mia[0]['epsilon_lower_bound_method']}"
                   + (f", confidence {conf:.0%}" if isinstance(conf, float) else ""))
        for scope in sorted({a["epsilon_lower_bound_scope"] for a in mia if a.get("epsilon_lower_bound_scope")}):
            out.append(f"vs claim: {scope}" if scope.startswith("compared") or scope.startswith("no privacy")
                       else f"vs claim n/c: {scope}")
    return "\n".join(out)
