"""Turn a results dict into report sections (title, text, tables) shared by Markdown and HTML.

A section is ``{"title": str, "text": [str], "tables": [{"header": [...], "rows": [[...]]}]}``;
both formats iterate over the same list, so they never disagree.  Headers are words
(:mod:`dpaudit.report.labels`), numbers have three significant digits
(:mod:`dpaudit.report.numbers`); strings are plain text here — each format escapes them.
The attack sections are in :mod:`dpaudit.report.attack_sections`; "Where it leaks", beside a violation of the
ε estimate, in :mod:`dpaudit.report.leak_sections`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, TypedDict

from dpaudit.result_shapes import ClaimRecord, EmbeddedEstimate, EstimateSearch, FindingRecord
from dpaudit.run_shapes import MetricSummary, RunResults

from .attack_sections import attacks_section, exposure_section, short_reason
from .curve_sections import curve_section
from .labels import key_words, metric_words
from .leak_sections import leak_section
from .numbers import MISSING, fmt, pm, sig
from .section import Section, Table

__all__ = ["HeadlineLine", "build_sections", "claim_text", "estimate_of", "fmt", "headline", "is_number", "provenance_section",
           "short_reason", "verdict_word"]



def claim_text(claim: ClaimRecord | None) -> str:
    """``ε = 1 per unit distance (metric)``; a sweep's list of ε as ``ε ∈ {…}``."""
    if not claim:
        return MISSING
    eps = claim.get("epsilon")
    unit = " per unit distance" if claim.get("neighbours") == "metric" else ""
    if isinstance(eps, list):
        text = "ε ∈ {" + ", ".join(sig(e) for e in eps) + "}" + unit
    else:
        text = f"ε = {sig(eps)}{unit}"
    if claim.get("delta"):
        text += f", δ = {sig(claim['delta'])}"
    from dpaudit.verdicts.sentences import notion_text

    notion = notion_text(claim)
    if notion:  # a claim in a notion: tested on its whole trade-off curve; its (ε, δ) point beside it
        return f"{notion}, its (ε, δ) point {text} ({claim.get('neighbours', '?')})"
    return f"{text} ({claim.get('neighbours', '?')})"


def estimate_of(results: RunResults) -> RunResults | EmbeddedEstimate | None:
    """The certified ε estimate of a run: ``epsilon_estimate`` (attack, audit), or the results
    themselves for ``estimate-eps``."""
    est = results if results.get("kind") == "estimate-eps" else results.get("epsilon_estimate")
    return est if isinstance(est, dict) and est else None


_NUMBER = re.compile(r"^[−+-]?(\d[\d,]*\.?\d*(e[−+-]?\d+)?|∞)( ± [\d.,e−+-]+)?( \(chance\))?$")


def is_number(cell: Any) -> bool:
    """Whether a table cell is a number as the tables write them (``0.032``, ``1,057``, ``0.5 ± 0.02``,
    ``−∞``, ``2e-05``): such cells are right-aligned in the HTML report and the Markdown table."""
    return bool(_NUMBER.match(str(cell).strip()))


def numeric_columns(table: Table) -> list[bool]:
    """For each column: every cell is a number or a gap (``–``, empty), and at least one is a number."""
    rows = table.get("rows") or []
    out = []
    for j in range(len(table.get("header") or [])):
        cells = [str(r[j]).strip() for r in rows if j < len(r)]
        filled = [c for c in cells if c not in ("", MISSING)]
        out.append(bool(filled) and all(is_number(c) for c in filled))
    return out


class HeadlineLine(TypedDict):
    """A line under the report's title, and the verdict it states (None: it states none)."""

    text: str
    verdict: str | None


def headline(results: RunResults) -> list[HeadlineLine]:
    """The lines under the title — what was run, on what, with which outcome — each
    ``{"text", "verdict"}``: ``verdict`` is the line's verdict (``violation``, …) when it states one,
    so the HTML can colour it by the verdict itself, never by the words it contains."""
    mech = results.get("mechanism") or {}
    data = results.get("dataset") or {}
    lines = [f"Mechanism: {mech.get('spec') or mech.get('name', '?')} — claim {claim_text(mech.get('claim'))}"]
    if data:
        classes = f", {data['n_classes']} classes" if data.get("n_classes") else ""
        lines.append(f"Data: {data.get('name', '?')} ({fmt(data.get('n_records', '?'))} records × "
                     f"{data.get('n_features', '?')} features{classes}); the records themselves are not in "
                     "this report.")
    split = (results.get("setup") or {}).get("split")
    if isinstance(split, dict) and split.get("candidates"):
        repeats = (results.get("parameters") or {}).get("repeats", "?")
        plural = "" if repeats == 1 else "s"
        lines.append(f"Set-up: {repeats} repeat{plural}, each with {fmt(split.get('shadow_records'))} shadow records "
                     f"and {fmt(split.get('candidates'))} candidates, each a member by a fair coin.")
    out: list[HeadlineLine] = [{"text": line, "verdict": None} for line in lines]
    conclusion = results.get("conclusion")
    if not (isinstance(conclusion, dict) and conclusion.get("text")) and results.get("verdict"):
        # the banner (dpaudit.report.banner) says the verdict once; older results without a conclusion too
        out.append({"text": f"Verdict: {verdict_word(results['verdict'])}", "verdict": str(results["verdict"])})
    if results.get("status") and results["status"] != "complete":
        out.append({"text": f"Status: {results['status']} — this report shows the parts that finished.",
                    "verdict": None})
    return out


def verdict_word(value: Any) -> str:
    """A verdict as the reader meets it (:attr:`~dpaudit.execution.verdict.Verdict.word`); any other text as it is
    (a part's "not applicable", "informational")."""
    from dpaudit.execution.verdict import Verdict

    try:
        return Verdict(value).word
    except ValueError:
        return str(value)


def _verdict_section(results: RunResults) -> Section | None:
    rows = results.get("verdict_table")
    if not rows:
        return None
    keys = ["part", "statistic", "value", "claim"]
    return {"title": "Verdict", "text": [], "tables": [
        {"header": ["part", "statistic", "value", "claim", "verdict"],
         "rows": [[fmt(r.get(k)) for k in keys] + [verdict_word(r.get("verdict"))] for r in rows]}]}


def _parts_section(results: RunResults) -> Section | None:
    parts = results.get("parts")
    if not isinstance(parts, dict) or not parts:
        return None
    rows = [[name, str(status)] for name, status in parts.items()]
    smoke = results.get("smoke")
    text = []
    if isinstance(smoke, dict) and smoke.get("release_kind"):
        text.append(f"The audited code ran and released {smoke['release_kind']} "
                    f"({sig(smoke.get('seconds_per_release'))} s for one release in the worker process).")
    return {"title": "Audit parts", "text": text, "tables": [{"header": ["part", "status"], "rows": rows}]}


def _findings_section(results: RunResults) -> Section | None:
    from dpaudit.execution.untrusted import quoted
    from dpaudit.hints import hints

    findings = results.get("findings")
    if not findings:
        return None
    keys = [k for k in ("kind", "part", "call", "count", "calls", "share", "error") if any(k in f for f in findings)]
    words = {"share": "share of calls", "calls": "calls", "count": "count", "call": "call",
             "error": "first error (the audited code's text, quoted)"}
    text = ["The audited code misbehaved in these calls; each became a finding and the run went on."]
    text += [f"Hint: {h}." for h in hints(results)]
    return {"title": "Findings", "text": text,
            "tables": [{"header": [words.get(k, k) for k in keys],
                        "rows": [[quoted(f[k]) if k == "error" and f.get(k) else fmt(f.get(k)) for k in keys]
                                 for f in map(_cells, findings)]}]}


def _cells(finding: FindingRecord) -> Mapping[str, object]:
    """A finding as the table reads it: by the name of each column."""
    return finding


def _warnings_section(results: RunResults) -> Section | None:
    warns = results.get("warnings")
    if not warns:
        return None
    from dpaudit.execution.untrusted import quoted

    return {"title": "Privacy-leak warnings", "text": [
        "Parameters were derived from the private data; the privacy claim does not cover them (the messages "
        "are the mechanism's own, quoted)."] +
        [f"{w.get('category', 'Warning')}: {quoted(w.get('message', ''))}" if isinstance(w, dict)
         else f"PrivacyLeakWarning: {quoted(w)}" for w in warns], "tables": []}


_ESTIMATE_ROWS = ("epsilon_lower_bound", "verdict", "confidence", "ceiling", "samples", "selection_samples",
                  "selection_samples_total", "point_estimate", "records_rule", "elapsed_seconds", "seed")


def _epsilon_section(results: RunResults) -> Section | None:
    est = estimate_of(results)
    if est is None:
        return None
    if est.get("status") == "error":
        return {"title": "Empirical ε (certified lower bound)", "text": [
            f"The ε estimate could not run: {est.get('error')}. The conclusion is inconclusive."], "tables": []}
    unit = " per unit distance" if (est.get("claim") or {}).get("neighbours") == "metric" else ""
    rows = []
    if isinstance(est.get("claim"), dict):
        rows.append(["claim", claim_text(est["claim"])])
    run_seed = (results.get("provenance") or {}).get("seed")
    rows_of: Mapping[str, object] = est  # the rows are read by name from _ESTIMATE_ROWS
    for key in _ESTIMATE_ROWS:
        if key in rows_of and not isinstance(rows_of[key], (list, dict)):
            value = (str(rows_of[key]) if key == "seed" else fmt(rows_of[key])) + (
                unit if key in ("epsilon_lower_bound", "ceiling", "point_estimate") else "")
            if key == "seed" and run_seed is not None and str(run_seed) != str(rows_of[key]):
                value += (f" (derived from the run's seed {run_seed} by numpy's SeedSequence, so the estimate's "
                          "draws are independent of the attacks'; the run's seed reproduces both)")
                rows.append(["seed of the estimate", value])
                continue
            rows.append([key_words(key), value])
    pair = est["pair"] if isinstance(est.get("pair"), dict) else {}
    if pair.get("description"):
        rows.append(["neighbouring pair", f"{pair.get('name', '')}: {pair['description']}"])
    if isinstance(est.get("event"), dict) and est["event"].get("text"):
        rows.append(["selected event", str(est["event"]["text"])])
    found = est.get("search")
    search = found if isinstance(found, dict) else EstimateSearch()
    screen = search.get("screening") if isinstance(search.get("screening"), dict) else None
    if screen:
        grown = screen.get("grown_to_records") or []
        rows.append(["screening", f"{screen.get('screened')} of {screen.get('pairs')} pairs on "
                     f"{screen.get('calls_per_side')} coupled calls a side, {screen.get('answered_both_sides')} "
                     "answered on both sides" + (f"; grown to {', '.join(map(str, grown))} records" if grown else "")])
        coupled = screen.get("coupling")
        coupling: Mapping[str, object] = coupled if isinstance(coupled, dict) else {}
        if coupling.get("text"):
            rows.append(["coupling", str(coupling["text"])])
    for other in search.get("also_certified") or []:
        if isinstance(other, dict):
            what = "on releases both sides answer" if other.get("evidence") == "releases" else "the code's refusal"
            rows.append(["also certified", f"{what}: ε_lb = {fmt(other.get('epsilon_lower_bound'))}{unit} on the "
                         f"pair {other.get('pair')} (at {fmt(1 - float(other.get('alpha') or 0))} confidence each)"])
    text = []
    if est.get("guarantee"):
        text.append(str(est["guarantee"]))
    text.append("The sample-size ceiling is the largest bound the certification sample could certify "
                "(perfect separation); a bound at the ceiling means “at least this much”.")
    return {"title": "Empirical ε (certified lower bound)", "text": text,
            "tables": [{"header": ["quantity", "value"], "rows": rows}]}


def _utility_section(results: RunResults) -> Section | None:
    util = results.get("utility")
    if not isinstance(util, dict) or not util:
        return None
    nested = {k: v for k, v in util.items() if isinstance(v, dict)}
    flat = {k: v for k, v in util.items() if not isinstance(v, dict)}
    tables: list[Table] = []
    if nested:
        metrics: list[str] = []
        for v in nested.values():
            metrics += [m for m in v if m not in metrics]
        tables.append({"header": ["clusterer", *(key_words(m) for m in metrics)],
                       "rows": [[k, *(fmt(v.get(m)) for m in metrics)] for k, v in nested.items()]})
    if flat:
        tables.append({"header": ["metric", "value"], "rows": [[key_words(k), fmt(v)] for k, v in flat.items()]})
    return {"title": "Utility", "text": [], "tables": tables}


def _mean_std(m: MetricSummary | None) -> str:
    if not m or m.get("mean") is None:
        return MISSING
    return pm(m["mean"], m.get("std"))


def _sweep_section(results: RunResults) -> Section | None:
    sweep = results.get("sweep")
    if not isinstance(sweep, dict) or not sweep.get("summary"):
        return None
    summary = sweep["summary"]
    metrics: list[str] = []
    for row in summary:
        metrics += [m for m in row.get("metrics", {}) if m not in metrics]
    header = ["metric", *(f"ε = {sig(r['epsilon'])}" for r in summary)]
    rows = [[metric_words(m), *(_mean_std(r.get("metrics", {}).get(m)) for r in summary)] for m in metrics]
    rows.append(["repeats", *(fmt(r.get("n")) for r in summary)])
    done, total = sweep.get("cells_done"), sweep.get("cells_total")
    text = ["Mean ± standard deviation over repeats (every repeat is a row of results.csv)."]
    baseline = sweep.get("baseline")
    if isinstance(baseline, dict) and baseline:
        text.append("Non-private baseline (each clusterer on the plain data): " + ", ".join(
            f"{metric_words(k)} {sig(v)}" for k, v in baseline.items() if isinstance(v, (int, float))) + ".")
    if done is not None and total is not None and done < total:
        text.append(f"Partial: {done} of {total} cells finished; rerun with --resume to complete.")
    return {"title": "Sweep", "text": text, "tables": [{"header": header, "rows": rows}]}


def _release_section(results: RunResults) -> Section | None:
    rel = results.get("release_2d")
    if not isinstance(rel, dict) or not rel.get("withheld"):
        return None
    return {"title": "The release in 2-D", "text": [f"The stand-in release is {rel['withheld']}."], "tables": []}


def provenance_section(results: RunResults) -> Section | None:
    prov = results.get("provenance")
    if not isinstance(prov, dict) or not prov:
        return None
    words = {"dpaudit_version": "dpaudit version", "command": "command", "seed": "seed", "started": "started (UTC)",
             "finished": "finished (UTC)"}
    rows = [[words[k], fmt(prov.get(k))] for k in words if k in prov]
    machine = prov.get("machine") or {}
    if machine:
        rows.append(["machine", f"{machine.get('platform', '?')}, {machine.get('cores', '?')} cores"])
    if prov.get("packages"):
        rows.append(["packages", ", ".join(f"{k} {v}" for k, v in prov["packages"].items() if v)])
    if prov.get("durations_seconds"):
        rows.append(["durations (s)", ", ".join(f"{k} {sig(v)}" for k, v in prov["durations_seconds"].items())])
    if prov.get("parameters"):
        rows.append(["parameters", fmt(prov["parameters"])])
    execution = results.get("execution")
    if isinstance(execution, dict) and execution.get("where"):
        rows.append(["audited code ran", str(execution["where"])])
        if execution.get("state"):
            rows.append(["state between calls", str(execution["state"])])
    return {"title": "Provenance", "text": [], "tables": [{"header": ["item", "value"], "rows": rows}]}


def build_sections(results: RunResults) -> list[Section]:
    """Body sections in report order, each only when its data is present (provenance comes last,
    after the figures: :func:`provenance_section`)."""
    makers = (_verdict_section, _parts_section, _findings_section, _warnings_section, _epsilon_section,
              leak_section, curve_section, attacks_section, exposure_section, _utility_section, _sweep_section, _release_section)
    return [s for s in (m(results) for m in makers) if s is not None]
