"""Console output of ``dpaudit sweep``: the per-ε summary table (the report has every metric)."""

from __future__ import annotations

from typing import Any

from dpaudit.console import render, table
from dpaudit.report.labels import metric_words
from dpaudit.report.numbers import MISSING, pm, sig

__all__ = ["format_summary", "summary_table"]

HEADLINE_METRICS = 5  # columns besides ε: the table stays within 100 columns


def _headline_metrics(summary: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for row in summary:
        names += [n for n in row["metrics"] if n not in names]
    keep = [n for n in names if n == "displacement" or n.endswith((".ari", ".ari_truth", ".advantage", ".auc"))
            or n == "epsilon_lower_bound"]
    return keep[:HEADLINE_METRICS]


def summary_table(results: dict[str, Any]) -> Any:
    """Mean ± std per ε of the headline metrics: displacement, ARI, attack advantage/AUC, ε bound.

    Where some repeats of an ε failed or were not run, a last column says how many of them the
    row rests on (a value from one repeat has no spread: no "± 0").
    """
    summary = results["sweep"]["summary"]
    keep = _headline_metrics(summary)
    short = any(row.get("failed") or row.get("missing") for row in summary)
    rows = []
    for row in summary:
        cells = [sig(row["epsilon"])]
        for n in keep:
            m = row["metrics"].get(n)
            cells.append(MISSING if m is None else pm(m["mean"], m.get("std")) if m.get("n", 2) > 1
                         else f"{sig(m['mean'])} (n=1)")
        if short:
            total = row["n"] + row.get("failed", 0) + row.get("missing", 0)
            cells.append(f"{row['n']} of {total}"
                         + (f", {row['failed']} failed" if row.get("failed") else "")
                         + (f", {row['missing']} not run" if row.get("missing") else ""))
        rows.append(cells)
    title = f"mean ± standard deviation over {results['sweep'].get('repeats', '?')} repeats per ε"
    header = ["ε", *(metric_words(n) for n in keep), *(["repeats"] if short else [])]
    return table(header, rows, title=title, right=tuple(range(len(keep) + 1)))


def format_summary(results: dict[str, Any]) -> str:
    """:func:`summary_table` as plain text."""
    return render(summary_table(results))
