"""Console output of ``dpaudit estimate-eps``: one ``key  value`` line each (the report and its
``results.json`` are written by :mod:`dpaudit.report`)."""

from __future__ import annotations

from typing import Any

from dpaudit.report.numbers import sig
from dpaudit.result_shapes import ClaimRecord, EstimateCounts, as_number
from dpaudit.run_shapes import RunResults

__all__ = ["budget_line", "format_claim", "format_summary", "summary_rows"]


def _unit(claim: ClaimRecord) -> str:
    return " per unit distance" if claim["neighbours"] == "metric" else ""


def format_claim(claim: ClaimRecord) -> str:
    """``ε = 1 per unit distance (metric, δ = 0)``."""
    return f"ε = {claim['epsilon']:g}{_unit(claim)} ({claim['neighbours']}, δ = {claim['delta']:g})"


def summary_rows(results: RunResults) -> list[tuple[str, str]]:
    """The mechanism, claim, data, what was released (a transcript), certified bound, verdict, ceiling,
    chosen pair and event, the
    sample sizes, the elapsed time and any privacy leak, from :func:`~dpaudit.estimate.run.run_estimate`'s dict."""
    claim, data = results["claim"], results["dataset"]
    spec = (results.get("mechanism") or {}).get("spec", "?")
    if results.get("status") in ("no usable release", "failed"):  # nothing certified: nothing more to show
        rows = [("mechanism", spec), ("claim", format_claim(claim)),
                ("data", f"{data['name']}: {data['n_records']} records × {data['n_features']} features"),
                ("ε lower bound", "none certified"), ("reason", results["guarantee"])]
        return rows
    candidates = results["candidates"]
    evaluated = sum(1 for c in candidates if "expected_bound" in c)
    rows = [
        ("mechanism", spec),
        ("claim", format_claim(claim)),
        ("data", f"{data['name']}: {data['n_records']} records × {data['n_features']} features"),
        *([("release", "transcript (every noisy statistic the mechanism drew, not only its final output)")]
          if results.get("access") == "transcript" else []),
        ("certified ε_lb", f"{sig(results['epsilon_lower_bound'])}{_unit(claim)} "
                           f"(confidence {as_number(results['confidence']) * 100:.4g}%)"),
        ("sample-size ceiling", f"{sig(results['ceiling'])} (the largest ε_lb {results['samples']} releases per "
                                "dataset can certify)"),
        ("pair", f"{results['pair']['name']}: {results['pair']['description']}"),
        ("event", results["event"]["text"]),
        *([("statement", _statement(results["counts"]))] if "statement" in (results.get("counts") or {}) else []),
        *([("screening", _screening(results))] if _screening(results) else []),
        ("samples", f"{results['samples']} per dataset to certify (fresh); the search used "
                    f"{results['selection_samples_total']} releases, {evaluated} candidate pair(s) in its rounds, "
                    f"{results['selection_samples']} per dataset in the first"),
        *[("also certified", _also(other, claim)) for other in (results.get("search") or {}).get("also_certified", [])],
        *[("where it leaks", site["sentence"]) for site in _sites(results)],
        *([("budget", budget_line(results))] if (results.get("search") or {}).get("plan") else []),
        *([("domain", _domain(results))] if _domain(results) else []),
        ("elapsed", f"{results['elapsed_seconds']:.1f} s"),
    ]
    for leak in results["leak_warnings"]:
        rows.append(("privacy leak", leak))
    if results.get("findings"):  # each is printed on stderr as "finding [kind] …" (report_findings)
        rows.append(("findings", f"{len(results['findings'])} about the audited code (listed below)"))
    return rows


def _screening(results: RunResults) -> str:
    """What screening did, in a line: pairs screened, calls each, the coupling, growth."""
    screen = (results.get("search") or {}).get("screening")
    if not screen:
        return ""
    text = (f"{screen['screened']} of {screen['pairs']} pairs screened on {screen['calls_per_side']} coupled calls "
            f"a side ({screen['answered_both_sides']} answered on both sides)")
    if screen.get("unscreened"):
        text += f", {screen['unscreened']} left unscreened by the time budget"
    if screen.get("grown_to_records"):
        text += f"; datasets grown to {', '.join(str(n) for n in screen['grown_to_records'])} records"
    coupling = (screen.get("coupling") or {}).get("status")
    return text + {"holds": "; coupled", "fails": "; not coupled (the code's randomness is not only its "
                   "generator's)"}.get(str(coupling), "")


def _also(other: dict[str, Any], claim: ClaimRecord) -> str:
    """A second certified pair (the winner's evidence was a refusal, or this one's is), in a line."""
    what = "on releases both sides answer" if other.get("evidence") == "releases" else "the code's refusal"
    return (f"{what}: ε_lb = {sig(other['epsilon_lower_bound'])}{_unit(claim)} on the pair {other['pair']} "
            f"(each certified at {1 - float(other['alpha']):.1%}, both at once at the run's confidence)")


def _sites(results: RunResults) -> list[dict[str, Any]]:
    """Where the code leaks (beside a violation only): the first three sites."""
    from dpaudit.execution.verdict import Verdict

    if results.get("verdict") != Verdict.VIOLATION:
        return []
    sites = (results.get("search") or {}).get("leak_sites") or []
    return [s for s in sites if isinstance(s, dict) and s.get("sentence")][:3]


def budget_line(results: RunResults) -> str:
    """How much was planned and why the run stopped, with what reproduces or extends it."""
    search = results["search"]
    plan = search["plan"]
    looks = (results.get("counts") or {}).get("looks") or {}
    total = f"{plan['releases']:,} releases planned"
    if plan["source"] == "time":
        reproduce = (f"--releases {plan['releases']} reproduces these numbers on any machine"
                     if not plan.get("lane_start_seconds") and not plan.get("replanned") else
                     "timed per worker start and per pair: --releases reproduces the plan's total, not its rounds")
        head = (f"{total} for a {plan['time_budget_seconds']:g} s time budget "
                f"({plan['releases_per_second']:.3g} releases/s measured; {reproduce})")
    elif plan["source"] == "releases":
        head = f"{total} (--releases)"
    elif plan["source"] == "samples":
        return f"{results['samples']:,} certification releases per dataset fixed by --samples, one look at the full α"
    else:
        head = total
    done, planned = looks.get("completed", 1), looks.get("planned", 1)
    from dpaudit.execution.verdict import Verdict

    if looks.get("stopped") == Verdict.VIOLATION:  # the looks stop where a violation is certified
        tail = (f"; stopped at look {done} of {planned}: a violation was certified (a larger --samples certifies a "
                "tighter bound)")
    elif looks.get("stopped") == "deadline":
        tail = f"; cut at look {done} of {planned} by the time budget (the code ran slower than when it was timed)"
    else:
        tail = f"; {done} look(s) drawn, α spent over them"
    note = plan.get("note")
    changes = list(plan.get("replanned") or [])
    replanned = "; ".join(changes if len(changes) <= 3 else changes[:2] + [f"… {len(changes) - 2} more in results.json"])
    return head + tail + (f". Note: {note}" if note else "") + (
        f". Re-planned once pairs were timed: {replanned}" if replanned else "")


def _domain(results: RunResults) -> str:
    """The datasets the code accepts, where it refuses some by size: pairs below are out of scope."""
    domain = (results.get("search") or {}).get("domain") or {}
    if not domain.get("min_records"):
        return ""
    return f"{domain['text']}: pairs with a smaller dataset were not used (no verdict rests on them)"


def _statement(counts: EstimateCounts) -> str:
    """What was certified, in one line (the guarantee has it in full)."""
    got = f"{counts['favoured_in_event']:,} of {counts['n_favoured']:,} vs {counts['other_in_event']:,} of " \
          f"{counts['n_other']:,} releases in the event"
    if counts["statement"] == "rate ratio":
        return f"rate ratio: one Clopper–Pearson limit at α on p/(p + q), Poisson sample sizes; {got}"
    return f"two limits: p_lo at α_p = {counts['alpha_p']:.3g}, q_hi at α_q = {counts['alpha_q']:.3g}; {got}"


def format_summary(results: RunResults) -> str:
    """:func:`summary_rows` as plain text (what a pipe receives)."""
    from dpaudit.console import key_value, render

    return render(key_value(summary_rows(results)))
