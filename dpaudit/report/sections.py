"""Turn a results dict into report sections (title, text, tables) shared by Markdown and HTML.

A section is ``{"title": str, "text": [str], "tables": [{"header": [...], "rows": [[...]]}]}``;
both formats iterate over the same list, so they never disagree.  Headers are words
(:mod:`dpaudit.report.labels`), numbers have three significant digits
(:mod:`dpaudit.report.numbers`); strings are plain text here — each format escapes them.
"""

from __future__ import annotations

import re
from typing import Any

from .labels import attack_words, key_words, metric_words
from .numbers import MISSING, fmt, pm, sig

__all__ = ["build_sections", "claim_text", "estimate_of", "fmt", "headline", "is_number", "provenance_section",
           "short_reason"]

Section = dict[str, Any]


def claim_text(claim: dict[str, Any] | None) -> str:
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
    return f"{text} ({claim.get('neighbours', '?')})"


def short_reason(reason: str | None) -> str:
    """``n/a (needs ≥ 100 non-members)`` from the attacks layer's longer reason."""
    import re

    if not reason:
        return MISSING
    found = re.search(r"needs ≥ ([\d,]+) non-members", reason)
    return f"n/a (needs ≥ {found.group(1)} non-members)" if found else reason


def estimate_of(results: dict[str, Any]) -> dict[str, Any] | None:
    """The certified ε estimate of a run: ``epsilon_estimate`` (attack, audit), or the results
    themselves for ``estimate-eps``."""
    est = results if results.get("kind") == "estimate-eps" else results.get("epsilon_estimate")
    return est if isinstance(est, dict) and est else None


_NUMBER = re.compile(r"^[−+-]?(\d[\d,]*\.?\d*(e[−+-]?\d+)?|∞)( ± [\d.,e−+-]+)?( \(chance\))?$")


def is_number(cell: Any) -> bool:
    """Whether a table cell is a number as the tables write them (``0.032``, ``1,057``, ``0.5 ± 0.02``,
    ``−∞``, ``2e-05``): such cells are right-aligned in the HTML report and the Markdown table."""
    return bool(_NUMBER.match(str(cell).strip()))


def numeric_columns(table: dict[str, Any]) -> list[bool]:
    """For each column: every cell is a number or a gap (``–``, empty), and at least one is a number."""
    rows = table.get("rows") or []
    out = []
    for j in range(len(table.get("header") or [])):
        cells = [str(r[j]).strip() for r in rows if j < len(r)]
        filled = [c for c in cells if c not in ("", MISSING)]
        out.append(bool(filled) and all(is_number(c) for c in filled))
    return out


def headline(results: dict[str, Any]) -> list[dict[str, Any]]:
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
    out = [{"text": line, "verdict": None} for line in lines]
    conclusion = results.get("conclusion")
    if isinstance(conclusion, dict) and conclusion.get("text"):
        out.append({"text": f"Conclusion: {conclusion['text']}", "verdict": conclusion.get("verdict")})
    if results.get("verdict"):
        out.append({"text": f"Verdict: {str(results['verdict']).upper()}", "verdict": str(results["verdict"])})
    if results.get("status") and results["status"] != "complete":
        out.append({"text": f"Status: {results['status']} — this report shows the parts that finished.",
                    "verdict": None})
    return out


def _verdict_section(results: dict[str, Any]) -> Section | None:
    rows = results.get("verdict_table")
    if not rows:
        return None
    keys = ["part", "statistic", "value", "claim", "verdict"]
    return {"title": "Verdict", "text": [], "tables": [
        {"header": ["part", "statistic", "value", "claim", "verdict"],
         "rows": [[fmt(r.get(k)) for k in keys] for r in rows]}]}


def _parts_section(results: dict[str, Any]) -> Section | None:
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


def _findings_section(results: dict[str, Any]) -> Section | None:
    from execution.untrusted import quoted
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
                                 for f in findings]}]}


def _warnings_section(results: dict[str, Any]) -> Section | None:
    warns = results.get("warnings")
    if not warns:
        return None
    from execution.untrusted import quoted

    return {"title": "Privacy-leak warnings", "text": [
        "Parameters were derived from the private data; the privacy claim does not cover them (the messages "
        "are the mechanism's own, quoted)."] +
        [f"{w.get('category', 'Warning')}: {quoted(w.get('message', ''))}" if isinstance(w, dict)
         else f"PrivacyLeakWarning: {quoted(w)}" for w in warns], "tables": []}


_ESTIMATE_ROWS = ("epsilon_lower_bound", "verdict", "confidence", "ceiling", "samples", "selection_samples",
                  "selection_samples_total", "point_estimate", "records_rule", "elapsed_seconds", "seed")


def _epsilon_section(results: dict[str, Any]) -> Section | None:
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
    for key in _ESTIMATE_ROWS:
        if key in est and not isinstance(est[key], (list, dict)):
            value = (str(est[key]) if key == "seed" else fmt(est[key])) + (
                unit if key in ("epsilon_lower_bound", "ceiling", "point_estimate") else "")
            if key == "seed" and run_seed is not None and str(run_seed) != str(est[key]):
                value += (f" (derived from the run's seed {run_seed} by numpy's SeedSequence, so the estimate's "
                          "draws are independent of the attacks'; the run's seed reproduces both)")
                rows.append(["seed of the estimate", value])
                continue
            rows.append([key_words(key), value])
    pair = est.get("pair") if isinstance(est.get("pair"), dict) else {}
    if pair.get("description"):
        rows.append(["neighbouring pair", f"{pair.get('name', '')}: {pair['description']}"])
    if isinstance(est.get("event"), dict) and est["event"].get("text"):
        rows.append(["selected event", str(est["event"]["text"])])
    text = []
    if est.get("guarantee"):
        text.append(str(est["guarantee"]))
    text.append("The sample-size ceiling is the largest bound the certification sample could certify "
                "(perfect separation); a bound at the ceiling means “at least this much”.")
    return {"title": "Empirical ε (certified lower bound)", "text": text,
            "tables": [{"header": ["quantity", "value"], "rows": rows}]}


def _tpr(a: dict[str, Any], key: str) -> str:
    return short_reason(a.get(f"{key}_reason")) if a.get(key) is None else pm(a[key], a.get(f"{key}_std"))


def _attacks_section(results: dict[str, Any]) -> Section | None:
    attacks = [a for a in results.get("attacks") or [] if isinstance(a, dict)]
    if not attacks:
        return None
    tables = []
    mia = [a for a in attacks if a.get("name") != "reconstruction"]
    rec = [a for a in attacks if a.get("name") == "reconstruction"]
    if mia:
        tables.append({"header": ["attack", "advantage (TPR − FPR)", "AUC", "TPR at 1 % FPR", "TPR at 0.1 % FPR",
                                  "TPR at 0.01 % FPR", "one-run ε lower bound", "correct / guesses",
                                  "bound vs claim", "abstaining bound (correct / guesses)"],
                       "rows": [_mia_row(a) for a in mia]})
        bands = _band_rows(mia)
        if bands:
            tables.append({"header": ["attack", "FPR", "pooled TPR", "Clopper–Pearson band"], "rows": bands})
        scores = [[attack_words(a["name"]), str(a.get("variant", MISSING)), str(a.get("score", MISSING)),
                   ", ".join(str(c) for c in a.get("mechanism_calls_per_repeat") or []) or MISSING]
                  for a in mia if a.get("status", "ok") == "ok"]
        if scores:
            tables.append({"header": ["attack", "variant", "per-record score", "mechanism calls per repeat"],
                           "rows": scores})
    if rec:
        tables.append({"header": ["attack", "recovered within r", "prior-only baseline", "median error",
                                  "success radius r"],
                       "rows": [[attack_words(a.get("name", "?")), *(
                           [pm(a.get("success_rate"), a.get("success_rate_std")), sig(a.get("baseline_success_rate")),
                            pm(a.get("median_error"), a.get("median_error_std")), sig(a.get("radius"))]
                           if a.get("status", "ok") == "ok" else [_failure(a), "", "", ""])] for a in rec]})
    text = ["± is the standard deviation over repeats. Advantage = TPR − FPR at the threshold chosen on the "
            "attacker's own runs (shadow targets; LiRA and RMIA: their reference runs, each in turn the "
            "pseudo-target); advantage, AUC and TPR at low FPR describe the attack on one release per repeat."]
    chance = [attack_words(a["name"]) for a in mia if a.get("chance")]
    if chance:
        text.append(f"At chance: {', '.join(chance)} — {mia[0].get('chance_rule') or 'AUC near 0.5'}. An AUC "
                    "near 0.5 or a negative advantage means the attack found nothing beyond guessing.")
    ceiling = next((a.get("advantage_ceiling") for a in mia if a.get("advantage_ceiling") is not None), None)
    if ceiling is not None:
        text.append(f"Advantage ceiling (e^ε−1)/(e^ε+1) = {sig(ceiling)}: the largest advantage any mechanism "
                    "meeting the claim allows (metric claims: two records at unit distance).")
    text.append("A TPR at a low FPR is reported only where every repeat has enough non-members to resolve it "
                "(≥ 100 for 1 %, ≥ 1,000 for 0.1 %, ≥ 10,000 for 0.01 %; --candidates grows them); otherwise n/a, "
                "with how many it needs. Bands: the TPR pooled over repeats with its two-sided Clopper–Pearson "
                "interval.")
    method = next((a["epsilon_lower_bound_method"] for a in mia if a.get("epsilon_lower_bound_method")), None)
    confidence = next((a["confidence"] for a in mia if a.get("confidence") is not None), None)
    if method:
        conf = f", confidence {float(confidence):.0%}" if confidence is not None else ""
        text.append(f"One-run ε lower bound — {method}{conf}. Each candidate record was a member by an independent "
                    "fair coin and every guess was fixed on the attacker's own runs (shadow or reference data), so the bound is certified by one release "
                    "(pooled over independent repeats). It bounds add/remove ε only.")
        text.append("The abstaining bound guesses only the top/bottom shares of the ranked scores, shares chosen "
                    "on shadow data; it holds at the same confidence on its own, the larger of the two bounds at "
                    "twice the error rate.")
        scopes = sorted({str(a["epsilon_lower_bound_scope"]) for a in mia if a.get("epsilon_lower_bound_scope")})
        text += [f"Bound vs claim: {s}." for s in scopes]
    if rec:
        text.append("Reconstruction: share of members whose reconstruction lies within the success radius r of "
                    "the true record (r = a tenth of the median distance between public shadow records); the "
                    "prior-only baseline guesses from public data alone.")
    return {"title": "Attacks", "text": text, "tables": tables}


def _failure(a: dict[str, Any]) -> str:
    if a.get("status") == "not-applicable":
        return f"not applicable: {a.get('reason', '')}"
    return "failed: " + "; ".join(a.get("errors") or ["?"])


def _mia_row(a: dict[str, Any]) -> list[str]:
    name = attack_words(a.get("name", "?"))
    if a.get("status", "ok") != "ok":
        return [name, _failure(a), *[""] * 8]
    return [name, pm(a.get("advantage"), a.get("advantage_std")),
            pm(a.get("auc"), a.get("auc_std")) + (" (chance)" if a.get("chance") else ""),
            _tpr(a, "tpr_at_1pct_fpr"), _tpr(a, "tpr_at_0_1pct_fpr"), _tpr(a, "tpr_at_0_01pct_fpr"),
            sig(a.get("epsilon_lower_bound")), _guesses(a), _bound_vs_claim(a), _abstaining(a)]


_BAND_FPRS = (("tpr_at_1pct_fpr", "1 %"), ("tpr_at_0_1pct_fpr", "0.1 %"), ("tpr_at_0_01pct_fpr", "0.01 %"))


def _band_rows(mia: list[dict[str, Any]]) -> list[list[str]]:
    """Pooled TPR at each low FPR with its Clopper–Pearson band, where the repeats resolve it."""
    rows = []
    for a in mia:
        for key, words in _BAND_FPRS:
            band = a.get(f"{key}_band")
            if isinstance(band, dict):
                rows.append([attack_words(a["name"]), words, sig(band.get("tpr")),
                             f"[{sig(band.get('low'))}, {sig(band.get('high'))}] "
                             f"({float(band.get('confidence', 0.95)):.0%})"])
    return rows


def _guesses(a: dict[str, Any]) -> str:
    counts = a.get("counts") or {}
    return f"{fmt(counts['correct'])} / {fmt(counts['guesses'])}" if "correct" in counts else MISSING


def _abstaining(a: dict[str, Any]) -> str:
    ab = a.get("abstaining")
    if not isinstance(ab, dict):
        return MISSING
    return f"{sig(a.get('epsilon_lower_bound_abstaining'))} ({ab.get('correct')} / {ab.get('guesses')})"


def _bound_vs_claim(a: dict[str, Any]) -> str:
    if "epsilon_lower_bound_comparable" not in a:
        return MISSING
    if not a["epsilon_lower_bound_comparable"]:
        return "not comparable"
    if "epsilon_lower_bound_exceeds_claim" not in a:
        return "no claim"
    return "exceeds the claim" if a["epsilon_lower_bound_exceeds_claim"] else "within the claim"


def _exposure_section(results: dict[str, Any]) -> Section | None:
    """The per-record risk table: the members each attack ranks highest, by dataset row only.
    Attacks at chance are left out (their ranking is noise), and the section says so."""
    tables, rule, at_chance = [], None, []
    for a in results.get("attacks") or []:
        rows = a.get("most_exposed") if isinstance(a, dict) else None
        if not rows:
            continue
        if a.get("chance"):
            at_chance.append(f"{attack_words(a['name'])} (AUC {sig(a.get('auc'))})")
            continue
        rule = rule or a.get("most_exposed_rule")
        unit = str(a.get("score_unit") or "attack score")
        by_row = "row in the dataset" in str(a.get("most_exposed_rule", ""))
        tables.append({"header": [f"{attack_words(a['name'])}: repeat",
                                  "record (dataset row)" if by_row else "record (position among candidates)", unit,
                                  "score rank",
                                  "non-members scoring as high", "FPR to flag it"],
                       "rows": [[str(int(r.get("repeat", 0)) + 1), str(r.get("index")), sig(r.get("score")),
                                 str(r.get("rank")), str(r.get("non_members_at_or_above")), sig(r.get("fpr"))]
                                for r in rows]})
    if not tables and not at_chance:
        return None
    text = ["The members each attack ranks highest — by index only (the rule below says what the index counts), "
            "never by their values, with the attack's score (LiRA: "
            "the log-likelihood ratio of the record being in vs out of the input; RMIA: the share of population "
            "records it dominates). A record flagged at FPR 0 is singled out with no non-member of its repeat "
            "scoring as high; the top of any ranking gets there by luck about once per repeat, so a flag means "
            "something only for an attack that is not at chance."]
    if at_chance:
        text.append(f"Left out, at chance ({', '.join(at_chance)}): their AUC is within two standard errors of 0.5 "
                    "or their advantage ≤ 0, so whom they rank highest is noise, not exposure.")
    if rule:
        text.append(f"Rule: {rule}.")
    return {"title": "Most exposed records", "text": text, "tables": tables}


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
        tables.append({"header": ["clusterer", *(key_words(m) for m in metrics)],
                       "rows": [[k, *(fmt(v.get(m)) for m in metrics)] for k, v in nested.items()]})
    if flat:
        tables.append({"header": ["metric", "value"], "rows": [[key_words(k), fmt(v)] for k, v in flat.items()]})
    return {"title": "Utility", "text": [], "tables": tables}


def _mean_std(m: dict[str, Any] | None) -> str:
    if not m or m.get("mean") is None:
        return MISSING
    return pm(m["mean"], m.get("std"))


def _sweep_section(results: dict[str, Any]) -> Section | None:
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


def _release_section(results: dict[str, Any]) -> Section | None:
    rel = results.get("release_2d")
    if not isinstance(rel, dict) or not rel.get("withheld"):
        return None
    return {"title": "The release in 2-D", "text": [f"The stand-in release is {rel['withheld']}."], "tables": []}


def provenance_section(results: dict[str, Any]) -> Section | None:
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


def build_sections(results: dict[str, Any]) -> list[Section]:
    """Body sections in report order, each only when its data is present (provenance comes last,
    after the figures: :func:`provenance_section`)."""
    makers = (_verdict_section, _parts_section, _findings_section, _warnings_section, _epsilon_section,
              _attacks_section, _exposure_section, _utility_section, _sweep_section, _release_section)
    return [s for s in (m(results) for m in makers) if s is not None]
