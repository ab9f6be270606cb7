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
    """Mean ± std per ε of the headline metrics: displacement, ARI, attack advantage/AUC, ε bound."""
    summary = results["sweep"]["summary"]
    keep = _headline_metrics(summary)
    rows = []
    for row in summary:
        cells = [sig(row["epsilon"])]
        for n in keep:
            m = row["metrics"].get(n)
            cells.append(MISSING if m is None else pm(m["mean"], m.get("std")))
        rows.append(cells)
    title = f"mean ± standard deviation over {results['sweep'].get('repeats', '?')} repeats per ε"
    return table(["ε", *(metric_words(n) for n in keep)], rows, title=title, right=tuple(range(len(keep) + 1)))


def format_summary(results: dict[str, Any]) -> str:
    """:func:`summary_table` as plain text."""
    return render(summary_table(results))
