"""Console output of ``dpaudit estimate-eps`` (one ``key  value`` line each) and its ``--json`` file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dpaudit.report.numbers import sig

__all__ = ["format_claim", "format_summary", "is_violation", "summary_rows", "write_json"]


def _unit(claim: dict[str, Any]) -> str:
    return " per unit distance" if claim["neighbours"] == "metric" else ""


def format_claim(claim: dict[str, Any]) -> str:
    """``ε = 1 per unit distance (metric, δ = 0)``."""
    return f"ε = {claim['epsilon']:g}{_unit(claim)} ({claim['neighbours']}, δ = {claim['delta']:g})"


def is_violation(results: dict[str, Any]) -> bool:
    """Whether the certified bound exceeds the claim (the verdict :mod:`attacks.epsilon` gave)."""
    from attacks.epsilon import VIOLATION  # loaded already: the results came from estimate_epsilon

    return results["verdict"] == VIOLATION


def summary_rows(results: dict[str, Any]) -> list[tuple[str, str]]:
    """The mechanism, claim, data, what was released (a transcript), certified bound, verdict, ceiling,
    chosen pair and event, the
    sample sizes, the elapsed time and any privacy leak, from :func:`~dpaudit.estimate.run.run_estimate`'s dict."""
    claim, data = results["claim"], results["dataset"]
    if results.get("status") == "no usable release":  # the code never produced a release: nothing to show
        rows = [("mechanism", results["mechanism"]), ("claim", format_claim(claim)),
                ("data", f"{data['name']}: {data['n_records']} records × {data['n_features']} features"),
                ("ε lower bound", "none certified"), ("verdict", results["verdict"]),
                ("reason", results["guarantee"])]
        return rows
    candidates = results["candidates"]
    evaluated = sum(1 for c in candidates if "expected_bound" in c)
    rows = [
        ("mechanism", results["mechanism"]),
        ("claim", format_claim(claim)),
        ("data", f"{data['name']}: {data['n_records']} records × {data['n_features']} features"),
        *([("release", "transcript (every noisy statistic the mechanism drew, not only its final output)")]
          if results.get("release") == "transcript" else []),
        ("certified ε_lb", f"{sig(results['epsilon_lower_bound'])}{_unit(claim)} "
                           f"(confidence {results['confidence']:.0%})"),
        ("verdict", results["verdict"].upper() if is_violation(results) else results["verdict"]),
        ("sample-size ceiling", f"{sig(results['ceiling'])} (the largest ε_lb {results['samples']} releases per "
                                "dataset can certify)"),
        ("pair", f"{results['pair']['name']}: {results['pair']['description']}"),
        ("event", results["event"]["text"]),
        *([("statement", _statement(results["counts"]))] if "statement" in (results.get("counts") or {}) else []),
        ("samples", f"{results['samples']} per dataset to certify (fresh); the search used "
                    f"{results['selection_samples_total']} releases over {evaluated} candidate pair(s), "
                    f"{results['selection_samples']} per dataset in its first round"
                    + (f" ({len(candidates) - evaluated} pair(s) skipped or failed)"
                       if evaluated < len(candidates) else "")),
        *([("budget", _budget(results))] if (results.get("search") or {}).get("plan") else []),
        ("elapsed", f"{results['elapsed_seconds']:.1f} s"),
    ]
    for leak in results["leak_warnings"]:
        rows.append(("privacy leak", leak))
    if results.get("findings"):  # each is printed on stderr as "finding [kind] …" (report_findings)
        rows.append(("findings", f"{len(results['findings'])} about the audited code (listed below)"))
    return rows


def _budget(results: dict[str, Any]) -> str:
    """How much was planned and why the run stopped, with what reproduces or extends it."""
    search = results["search"]
    plan = search["plan"]
    looks = (results.get("counts") or {}).get("looks") or {}
    total = f"{plan['total_releases']:,} releases planned"
    if plan["source"] == "time":
        head = (f"{total} for a {plan['time_budget_seconds']:g} s time budget "
                f"({plan['releases_per_second']:.3g} releases/s measured; --releases {plan['total_releases']} "
                "reproduces these numbers on any machine)")
    elif plan["source"] == "releases":
        head = f"{total} (--releases)"
    elif plan["source"] == "samples":
        return f"{results['samples']:,} certification releases per dataset fixed by --samples, one look at the full α"
    else:
        head = total
    done, planned = looks.get("completed", 1), looks.get("planned", 1)
    if looks.get("stopped") == "violation":
        tail = (f"; stopped at look {done} of {planned}: a violation was certified (a larger --samples certifies a "
                "tighter bound)")
    elif looks.get("stopped") == "deadline":
        tail = f"; cut at look {done} of {planned} by the time budget (the code ran slower than when it was timed)"
    else:
        tail = f"; {done} look(s) drawn, α spent over them"
    note = plan.get("note")
    return head + tail + (f". Note: {note}" if note else "")


def _statement(counts: dict[str, Any]) -> str:
    """What was certified, in one line (the guarantee has it in full)."""
    got = f"{counts['favoured_in_event']:,} of {counts['n_favoured']:,} vs {counts['other_in_event']:,} of " \
          f"{counts['n_other']:,} releases in the event"
    if counts["statement"] == "rate ratio":
        return f"rate ratio: one Clopper–Pearson limit at α on p/(p + q), Poisson sample sizes; {got}"
    return f"two limits: p_lo at α_p = {counts['alpha_p']:.3g}, q_hi at α_q = {counts['alpha_q']:.3g}; {got}"


def format_summary(results: dict[str, Any]) -> str:
    """:func:`summary_rows` as plain text (what a pipe receives)."""
    from dpaudit.console import key_value, render

    return render(key_value(summary_rows(results)))


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def write_json(results: dict[str, Any], path: Path) -> None:
    """The results dict as indented JSON (numpy values as plain numbers and lists)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, default=_json_default), encoding="utf-8")
