"""Console output of ``dpaudit sweep``: the per-ε summary table, what each column means and which
values are within noise (the report has every metric)."""

from __future__ import annotations

import math
from typing import Any

from dpaudit.console import key_value, render, table
from dpaudit.report.labels import metric_words
from dpaudit.report.numbers import MISSING, pm, sig
from dpaudit.run_shapes import MetricSummary, RunResults, SweepSummaryRow

__all__ = ["format_summary", "summary_table", "within_noise"]

HEADLINE_METRICS = 5  # columns besides ε: the table stays within 100 columns
CHANCE_LEVEL = {"advantage": 0.0, "auc": 0.5}  # what an attack that learns nothing scores (last name part)


def _headline_metrics(summary: list[SweepSummaryRow]) -> list[str]:
    names: list[str] = []
    for row in summary:
        names += [n for n in row["metrics"] if n not in names]
    keep = [n for n in names if n == "displacement" or n.endswith((".ari", ".ari_truth", ".advantage", ".auc"))
            or n == "epsilon_lower_bound"]
    return keep[:HEADLINE_METRICS]


def within_noise(name: str, m: MetricSummary) -> bool:
    """An attack's mean advantage (AUC) within two standard errors (std/√n) of 0 (0.5): chance."""
    level = CHANCE_LEVEL.get(name.rsplit(".", 1)[-1]) if name.startswith("mia.") else None
    if level is None or m.get("mean") is None or not m.get("n"):
        return False
    se = float(m.get("std") or 0.0) / math.sqrt(int(m["n"]))
    return abs(float(m["mean"]) - level) <= 2.0 * se


def _definitions(results: RunResults, keep: list[str], marked: bool) -> list[tuple[str, str]]:
    """What each column of the table means, and what is within noise."""
    repeats = results["sweep"].get("repeats", "?")
    rows = [("ε", "the ε the mechanism ran at (and claims) in that row's cells"),
            ("±", f"standard deviation over the repeats ({repeats} per ε); the standard error of a mean is "
                  "std/√n, and means of two ε that differ by less than about twice theirs are within noise "
                  "of each other")]
    for name in keep:
        part = name.rsplit(".", 1)[-1]
        what = {"displacement": "mean distance between a record and its release (thesis §5.3.2)",
                "ari": "adjusted Rand index of the clustering of the release against the same clusterer on the "
                       "plain data (1 = the same partition, 0 = chance)",
                "ari_truth": "adjusted Rand index against the ground-truth classes",
                "advantage": "membership attack: TPR − FPR at the threshold chosen on its own runs (0 = guessing; "
                             "a negative mean is noise around 0)",
                "auc": "membership attack: area under the ROC curve (0.5 = guessing; below 0.5 is noise)",
                "epsilon_lower_bound": "certified ε lower bound of the cell (95 % confidence per cell: a "
                                       "measurement, not a verdict over the sweep)"}.get(part)
        if what:
            rows.append((metric_words(name), what))
    if marked:
        rows.append(("~", "within noise of chance: the attack's mean is within two standard errors of what "
                          "guessing scores (advantage 0, AUC 0.5)"))
    return rows


def summary_table(results: RunResults) -> list[Any]:
    """Mean ± std per ε of the headline metrics (displacement, ARI, attack advantage/AUC, ε bound),
    then what each column means and what is within noise.

    Where some repeats of an ε failed or were not run, a last column says how many of them the
    row rests on (a value from one repeat has no spread: no "± 0").  An attack's mean within two
    standard errors of chance is marked ``~``.
    """
    summary = results["sweep"]["summary"]
    keep = _headline_metrics(summary)
    short = any(row.get("failed") or row.get("missing") for row in summary)
    rows, marked = [], False
    for row in summary:
        cells = [sig(row["epsilon"])]
        for n in keep:
            m = row["metrics"].get(n)
            noise = m is not None and within_noise(n, m)
            marked = marked or noise
            cells.append(MISSING if m is None else (pm(m["mean"], m.get("std")) if m.get("n", 2) > 1
                                                    else f"{sig(m['mean'])} (n=1)") + (" ~" if noise else ""))
        if short:
            total = row["n"] + row.get("failed", 0) + row.get("missing", 0)
            cells.append(f"{row['n']} of {total}"
                         + (f", {row['failed']} failed" if row.get("failed") else "")
                         + (f", {row['missing']} not run" if row.get("missing") else ""))
        rows.append(cells)
    title = f"mean ± standard deviation over {results['sweep'].get('repeats', '?')} repeats per ε"
    header = ["ε", *(metric_words(n) for n in keep), *(["repeats"] if short else [])]
    return [table(header, rows, title=title, right=tuple(range(len(keep) + 1))), "",
            key_value(_definitions(results, keep, marked))]


def format_summary(results: RunResults) -> str:
    """:func:`summary_table` as plain text."""
    return render(*summary_table(results))
