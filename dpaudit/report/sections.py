"""Turn a results dict into report sections (title, text, tables) shared by Markdown and HTML.

A section is ``{"title": str, "text": [str], "tables": [{"header": [...], "rows": [[...]]}]}``;
both templates iterate over the same list, so the two formats never disagree.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["build_sections", "fmt", "headline", "provenance_section"]

Section = dict[str, Any]


def fmt(value: Any) -> str:
    """A number for a table cell: 4 significant digits, '–' for missing."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return "0" if abs(value) < 1e-12 else f"{value:.4g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(", ", ": "), ensure_ascii=False, default=str)
    return str(value)


def _mean_std(m: dict[str, Any] | None) -> str:
    if not m or m.get("mean") is None:
        return "–"
    std = m.get("std")
    return fmt(m["mean"]) if std is None else f"{fmt(m['mean'])} ± {fmt(std)}"


def _claim_text(claim: dict[str, Any] | None) -> str:
    if not claim:
        return "–"
    eps = claim.get("epsilon")
    text = f"ε = {fmt(eps if not isinstance(eps, str) else float(eps))}"
    if claim.get("delta"):
        text += f", δ = {fmt(claim['delta'])}"
    return f"{text} ({claim.get('neighbours', '?')})"


def headline(results: dict[str, Any]) -> list[str]:
    """The lines under the title: what was run, on what, with which outcome."""
    mech = results.get("mechanism") or {}
    data = results.get("dataset") or {}
    lines = [f"Mechanism: {mech.get('spec') or mech.get('name', '?')} — claim {_claim_text(mech.get('claim'))}"]
    if data:
        classes = f", {data['n_classes']} classes" if data.get("n_classes") else ""
        lines.append(f"Data: {data.get('name', '?')} ({data.get('n_records', '?')} records × "
                     f"{data.get('n_features', '?')} features{classes}); the records themselves are not in this report.")
    if results.get("verdict"):
        lines.append(f"Verdict: {str(results['verdict']).upper()}")
    if results.get("status") and results["status"] != "complete":
        lines.append(f"Status: {results['status']} — this report shows the parts that finished.")
    return lines


def _verdict_section(results: dict[str, Any]) -> Section | None:
    rows = results.get("verdict_table")
    if not rows:
        return None
    header = ["part", "statistic", "value", "claim", "verdict"]
    return {"title": "Verdict", "text": [], "tables": [
        {"header": header, "rows": [[fmt(r.get(h)) for h in header] for r in rows]}]}


def _parts_section(results: dict[str, Any]) -> Section | None:
    parts = results.get("parts")
    if not isinstance(parts, dict) or not parts:
        return None
    rows = [[name, str(status)] for name, status in parts.items()]
    smoke = results.get("smoke")
    text = []
    if isinstance(smoke, dict) and smoke.get("release_kind"):
        text.append(f"The audited code ran and released {smoke['release_kind']} "
                    f"({fmt(smoke.get('seconds_per_release'))} s for one release in the worker process).")
    return {"title": "Audit parts", "text": text, "tables": [{"header": ["part", "status"], "rows": rows}]}


def _findings_section(results: dict[str, Any]) -> Section | None:
    findings = results.get("findings")
    if not findings:
        return None
    header = ["kind", "part", "call", "error"]
    return {"title": "Findings", "text": [
        "The audited code misbehaved in these calls; each became a finding and the audit went on."],
        "tables": [{"header": header, "rows": [[fmt(f.get(h)) for h in header] for f in findings]}]}


def _warnings_section(results: dict[str, Any]) -> Section | None:
    warns = results.get("warnings")
    if not warns:
        return None
    return {"title": "Privacy-leak warnings", "text": [
        "Parameters were derived from the private data; the privacy claim does not cover them."] +
        [f"{w.get('category', 'Warning')}: {w.get('message', '')}" if isinstance(w, dict)
         else f"PrivacyLeakWarning: {w}" for w in warns], "tables": []}


def _scalar_items(d: dict[str, Any]) -> list[list[str]]:
    return [[k, fmt(v)] for k, v in d.items() if not isinstance(v, (list, dict))]


def _epsilon_section(results: dict[str, Any]) -> Section | None:
    est = results.get("epsilon_estimate")
    if not isinstance(est, dict) or not est:
        return None
    rows = [r for r in _scalar_items(est) if r[0] not in ("guarantee", "status")]
    if isinstance(est.get("claim"), dict):
        rows.insert(0, ["claim", _claim_text(est["claim"])])
    if isinstance(est.get("pair"), dict):
        rows.append(["pair", ", ".join(f"{k}: {fmt(v)}" for k, v in est["pair"].items()
                                       if not isinstance(v, (list, dict)))])
    text = []
    if est.get("guarantee"):
        text.append(str(est["guarantee"]))
    return {"title": "Empirical ε (lower bound)", "text": text,
            "tables": [{"header": ["quantity", "value"], "rows": rows}]}


_MIA_COLS = ["advantage", "auc", "tpr_at_1pct_fpr", "tpr_at_0_1pct_fpr", "epsilon_lower_bound", "advantage_ceiling"]
_REC_COLS = ["success_rate", "median_error", "baseline_success_rate"]


def _attacks_section(results: dict[str, Any]) -> Section | None:
    attacks = [a for a in results.get("attacks") or [] if isinstance(a, dict)]
    if not attacks:
        return None
    tables = []
    mia = [a for a in attacks if a.get("name") != "reconstruction"]
    rec = [a for a in attacks if a.get("name") == "reconstruction"]
    if mia:
        tables.append({"header": ["attack", *_MIA_COLS, "correct / guesses", "bound vs claim",
                                  "ε bound, abstaining (correct / guesses)"],
                       "rows": [[a.get("name", "?"), *(fmt(a.get(c)) for c in _MIA_COLS), _guesses(a),
                                 _bound_vs_claim(a), _abstaining(a)] for a in mia]})
    if rec:
        tables.append({"header": ["attack", *_REC_COLS],
                       "rows": [[a.get("name", "?"), *(fmt(a.get(c)) for c in _REC_COLS)] for a in rec]})
    method = next((a["epsilon_lower_bound_method"] for a in mia if a.get("epsilon_lower_bound_method")), None)
    confidence = next((a["confidence"] for a in mia if a.get("confidence") is not None), None)
    text = ["Advantage = TPR − FPR with the threshold chosen on shadow data; advantage, AUC and TPR at low FPR "
            "describe the attack on one release per repeat. The ceiling is (e^ε−1)/(e^ε+1) for the claim."]
    if method:
        conf = f" at confidence {fmt(confidence)}" if confidence is not None else ""
        text.append(f"ε lower bound: {method}{conf}. Each candidate record was a member by an independent fair "
                    "coin and every guess was fixed on shadow data, so the bound is certified by one release "
                    "(pooled over independent repeats). It bounds add/remove ε only.")
        text.append("The abstaining bound guesses only the top/bottom shares of the ranked scores, shares chosen "
                    "on shadow data; it holds at the same confidence on its own, the larger of the two bounds at "
                    "twice the error rate.")
        scopes = sorted({str(a["epsilon_lower_bound_scope"]) for a in mia if a.get("epsilon_lower_bound_scope")})
        text += [f"Bound vs claim: {s}." for s in scopes]
    return {"title": "Attacks", "text": text, "tables": tables}


def _guesses(a: dict[str, Any]) -> str:
    counts = a.get("counts") or {}
    return f"{counts['correct']} / {counts['guesses']}" if "correct" in counts else "-"


def _abstaining(a: dict[str, Any]) -> str:
    ab = a.get("abstaining")
    if not isinstance(ab, dict):
        return "-"
    return f"{fmt(a.get('epsilon_lower_bound_abstaining'))} ({ab.get('correct')} / {ab.get('guesses')})"


def _bound_vs_claim(a: dict[str, Any]) -> str:
    if "epsilon_lower_bound_comparable" not in a:
        return "-"
    if not a["epsilon_lower_bound_comparable"]:
        return "not comparable"
    if "epsilon_lower_bound_exceeds_claim" not in a:
        return "no claim"
    return "exceeds the claim" if a["epsilon_lower_bound_exceeds_claim"] else "within the claim"


def _utility_section(results: dict[str, Any]) -> Section | None:
    util = results.get("utility")
    if not isinstance(util, dict) or not util:
        return None
    nested = {k: v for k, v in util.items() if isinstance(v, dict)}
    flat = {k: v for k, v in util.items() if not isinstance(v, dict)}
    tables = []
    if nested:
        metrics: list[str] = []
        for v in nested.values():
            metrics += [m for m in v if m not in metrics]
        tables.append({"header": ["clusterer", *metrics],
                       "rows": [[k, *(fmt(v.get(m)) for m in metrics)] for k, v in nested.items()]})
    if flat:
        tables.append({"header": ["metric", "value"], "rows": [[k, fmt(v)] for k, v in flat.items()]})
    return {"title": "Utility", "text": [], "tables": tables}


def _sweep_section(results: dict[str, Any]) -> Section | None:
    sweep = results.get("sweep")
    if not isinstance(sweep, dict) or not sweep.get("summary"):
        return None
    summary = sweep["summary"]
    metrics: list[str] = []
    for row in summary:
        metrics += [m for m in row.get("metrics", {}) if m not in metrics]
    header = ["metric", *(f"ε = {fmt(r['epsilon'])}" for r in summary)]
    rows = [[m, *(_mean_std(r.get("metrics", {}).get(m)) for r in summary)] for m in metrics]
    rows.append(["repeats", *(fmt(r.get("n")) for r in summary)])
    done, total = sweep.get("cells_done"), sweep.get("cells_total")
    text = ["Mean ± std over repeats (the raw repeats are in results.csv)."]
    if done is not None and total is not None and done < total:
        text.append(f"Partial: {done} of {total} cells finished; rerun with --resume to complete.")
    return {"title": "Sweep", "text": text, "tables": [{"header": header, "rows": rows}]}


def provenance_section(results: dict[str, Any]) -> Section | None:
    prov = results.get("provenance")
    if not isinstance(prov, dict):
        return None
    rows = [[k, fmt(prov.get(k))] for k in ("dpaudit_version", "command", "seed", "started", "finished")
            if k in prov]
    machine = prov.get("machine") or {}
    if machine:
        rows.append(["machine", f"{machine.get('platform', '?')}, {machine.get('cores', '?')} cores"])
    if prov.get("packages"):
        rows.append(["packages", ", ".join(f"{k} {v}" for k, v in prov["packages"].items() if v)])
    if prov.get("durations_seconds"):
        rows.append(["durations (s)", ", ".join(f"{k} {fmt(v)}" for k, v in prov["durations_seconds"].items())])
    if prov.get("parameters"):
        rows.append(["parameters", fmt(prov["parameters"])])
    return {"title": "Provenance", "text": [], "tables": [{"header": ["item", "value"], "rows": rows}]}


def build_sections(results: dict[str, Any]) -> list[Section]:
    """Body sections in report order, each only when its data is present (provenance comes last,
    after the figures: :func:`provenance_section`)."""
    makers = (_verdict_section, _parts_section, _findings_section, _warnings_section, _epsilon_section, _attacks_section,
              _utility_section, _sweep_section)
    return [s for s in (m(results) for m in makers) if s is not None]
