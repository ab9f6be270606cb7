"""The attack sections of a report: membership and reconstruction tables, and the most exposed records.

Sections as :mod:`dpaudit.report.sections` builds them (``{"title", "text", "tables"}``), from the
``attacks`` of a results dict: one row per attack, the pooled TPR bands at low FPR, the per-record
scores, reconstruction, and the members each attack ranks highest (by index only).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from dpaudit.attack.registry import attack_words
from dpaudit.result_shapes import AttackSummary
from dpaudit.run_shapes import RunResults

from .numbers import MISSING, fmt, pm, sig
from .section import Section, Table

__all__ = ["attacks_section", "exposure_section", "short_reason"]



def short_reason(reason: str | None) -> str:
    """``n/a (needs ≥ 100 non-members)`` from the attacks layer's longer reason."""
    if not reason:
        return MISSING
    found = re.search(r"needs ≥ ([\d,]+) non-members", reason)
    return f"n/a (needs ≥ {found.group(1)} non-members)" if found else reason


def _tpr(a: Mapping[str, Any], key: str) -> str:
    return short_reason(a.get(f"{key}_reason")) if a.get(key) is None else pm(a[key], a.get(f"{key}_std"))


def attacks_section(results: RunResults) -> Section | None:
    attacks = [a for a in results.get("attacks") or [] if isinstance(a, dict)]
    if not attacks:
        return None
    tables: list[Table] = []
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
        conf = f", confidence {float(confidence) * 100:.4g}%" if confidence is not None else ""
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


def _failure(a: AttackSummary) -> str:
    if a.get("status") == "not-applicable":
        return f"not applicable: {a.get('reason', '')}"
    return "failed: " + "; ".join(a.get("errors") or ["?"])


def _mia_row(a: AttackSummary) -> list[str]:
    name = attack_words(a.get("name", "?"))
    if a.get("status", "ok") != "ok":
        return [name, _failure(a), *[""] * 8]
    return [name, pm(a.get("advantage"), a.get("advantage_std")),
            pm(a.get("auc"), a.get("auc_std")) + (" (chance)" if a.get("chance") else ""),
            _tpr(a, "tpr_at_1pct_fpr"), _tpr(a, "tpr_at_0_1pct_fpr"), _tpr(a, "tpr_at_0_01pct_fpr"),
            sig(a.get("epsilon_lower_bound")), _guesses(a), _bound_vs_claim(a), _abstaining(a)]


_BAND_FPRS = (("tpr_at_1pct_fpr", "1 %"), ("tpr_at_0_1pct_fpr", "0.1 %"), ("tpr_at_0_01pct_fpr", "0.01 %"))


def _band_rows(mia: list[AttackSummary]) -> list[list[str]]:
    """Pooled TPR at each low FPR with its Clopper–Pearson band, where the repeats resolve it."""
    rows = []
    for a in mia:
        summary: Mapping[str, Any] = a  # the band's key is built from the FPR
        for key, words in _BAND_FPRS:
            band = summary.get(f"{key}_band")
            if isinstance(band, dict):
                rows.append([attack_words(a["name"]), words, sig(band.get("tpr")),
                             f"[{sig(band.get('low'))}, {sig(band.get('high'))}] "
                             f"({float(band.get('confidence', 0.95)) * 100:.4g}%)"])
    return rows


def _guesses(a: AttackSummary) -> str:
    counts = a.get("counts") or {}
    return f"{fmt(counts['correct'])} / {fmt(counts['guesses'])}" if "correct" in counts else MISSING


def _abstaining(a: AttackSummary) -> str:
    ab = a.get("abstaining")
    if not isinstance(ab, dict):
        return MISSING
    return f"{sig(a.get('epsilon_lower_bound_abstaining'))} ({ab.get('correct')} / {ab.get('guesses')})"


def _bound_vs_claim(a: AttackSummary) -> str:
    if "epsilon_lower_bound_comparable" not in a:
        return MISSING
    if not a["epsilon_lower_bound_comparable"]:
        return "not comparable"
    if "epsilon_lower_bound_exceeds_claim" not in a:
        return "no claim"
    return "exceeds the claim" if a["epsilon_lower_bound_exceeds_claim"] else "within the claim"


def exposure_section(results: RunResults) -> Section | None:
    """The per-record risk table: the members each attack ranks highest, by dataset row only.
    Attacks at chance are left out (their ranking is noise), and the section says so."""
    tables: list[Table] = []
    rule, at_chance = None, []
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
