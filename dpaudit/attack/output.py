"""Console output of ``dpaudit attack``: what was attacked, the results table, what each column
means, the certified ε estimate, and a one-line conclusion a reader can quote.

Reads only the plain results dict of :func:`dpaudit.attack.run.run_attack`; ``results.json``,
``report.md`` and ``report.html`` are written by :mod:`dpaudit.report`.  Tables are drawn by
:mod:`dpaudit.console` (``rich``, at most 100 columns); numbers have three significant digits.
"""

from __future__ import annotations

import textwrap
from typing import Any, Mapping

from dpaudit.console import MAX_WIDTH, key_value, render, table
from dpaudit.execution.verdict import Verdict
from dpaudit.report.numbers import MISSING, fmt, pm, sig
from dpaudit.report.sections import short_reason, verdict_word
from dpaudit.result_shapes import AttackSummary
from dpaudit.run_shapes import RunResults
from dpaudit.verdicts.sentences import claim_words

__all__ = ["console_parts", "describe_run", "format_table", "risk_rows", "short_reason", "table_rows"]

MEMBERSHIP_HEADER = ["attack", "advantage", "AUC", "TPR @ 1 % FPR", "ε_lb", "vs claim"]
LOW_FPR_HEADER = "TPR @ 0.1 % FPR"  # shown only when some attack resolves it (--candidates)
RISK_HEADER = ["attack", "repeat", "record", "score", "FPR to flag it"]
RISK_ATTACKS = ("lira", "rmia")
RISK_ROWS = 3
RECONSTRUCTION_HEADER = ["attack", "recovered within r", "prior-only baseline", "median error"]


def _tpr(a: Mapping[str, Any], key: str) -> str:
    if a.get(key) is None:
        return short_reason(a.get(f"{key}_reason"))
    return pm(a[key], a.get(f"{key}_std"))


def _vs_claim(a: AttackSummary) -> str:
    if not a.get("epsilon_lower_bound_comparable", False):
        return "n/c" if "epsilon_lower_bound_comparable" in a else MISSING
    if "epsilon_lower_bound_exceeds_claim" not in a:
        return "no claim"
    return "EXCEEDS" if a["epsilon_lower_bound_exceeds_claim"] else "within"


def _failed(a: AttackSummary) -> str:
    if a.get("status") == "not-applicable":
        return "n/a"  # why: under the table (_definitions)
    return "failed (below)"  # the audited code's error text: a quoted line of its own (_failure_lines)


def _failure_lines(results: RunResults) -> list[str]:
    """One indented line per failed attack, its first error as quoted data, cut to fit 100 columns
    (it is the audited code's text: never at the start of a line, never wrapped into one); a
    failure inside dpaudit (:mod:`dpaudit.attack.internal`) gets a line of its own saying so."""
    from dpaudit.execution.untrusted import quoted
    from dpaudit.verdicts.attack_conclusion import INTERNAL_CAUSE

    from .internal import is_internal_message

    lines = []
    for a in results.get("attacks", []):
        if a.get("status") not in ("ok", "not-applicable") or a.get("repeats_failed"):
            errors = [str(e) for e in a.get("errors") or []]
            internal = int(a.get("internal_errors") or 0)
            if internal:  # dpaudit's own bug: said in dpaudit's words, not quoted as the audited code's
                lines.append(f"  {a.get('name', '?')} could not run in {internal} repeat(s): {INTERNAL_CAUSE}")
            others = [e for e in errors if not is_internal_message(e)]
            rest = a.get("repeats_failed", "?")
            rest = rest - internal if isinstance(rest, int) else rest
            if others or not internal:
                head = f"  {a.get('name', '?')} failed in {rest} repeat(s), first error: "
                lines.append(head + quoted((others or ["?"])[0], MAX_WIDTH - len(head) - 2))
    return lines


def _shows_low_fpr(results: RunResults) -> bool:
    return any(a.get("status") == "ok" and a.get("tpr_at_0_1pct_fpr") is not None
               for a in results.get("attacks", []) if a.get("name") != "reconstruction")


def table_rows(results: RunResults) -> tuple[list[str], list[list[str]]]:
    """The membership attacks' table: header and one row per attack (failed ones say why).

    The TPR at 0.1 % FPR column appears when some attack's non-members resolve it.
    """
    low = _shows_low_fpr(results)
    header = MEMBERSHIP_HEADER[:4] + ([LOW_FPR_HEADER] if low else []) + MEMBERSHIP_HEADER[4:]
    rows = []
    for a in results.get("attacks", []):
        if a.get("name") == "reconstruction":
            continue
        if a.get("status") != "ok":
            rows.append([a.get("name", "?"), _failed(a), *[""] * (len(header) - 2)])
            continue
        mark = " ~" if a.get("chance") else ""
        auc = pm(a.get("auc"), a.get("auc_std")) + mark
        rows.append([a["name"], pm(a.get("advantage"), a.get("advantage_std")) + mark, auc,
                     _tpr(a, "tpr_at_1pct_fpr"),
                     *([_tpr(a, "tpr_at_0_1pct_fpr")] if low else []), sig(a.get("epsilon_lower_bound")),
                     _vs_claim(a)])
    return header, rows


def risk_rows(results: RunResults, top: int = RISK_ROWS) -> list[list[str]]:
    """The records LiRA and RMIA rank most exposed: repeat, candidate row, score, FPR — indices only.

    Attacks at chance are left out: their top-ranked members are noise.
    """
    rows = []
    for a in results.get("attacks", []):
        if a.get("name") in RISK_ATTACKS and a.get("status") == "ok" and not a.get("chance"):
            for r in (a.get("most_exposed") or [])[:top]:
                rows.append([str(a["name"]), str(int(r.get("repeat", 0)) + 1), f"#{r.get('index')}",
                             sig(r.get("score")), sig(r.get("fpr"))])
    return rows


def _reconstruction_rows(results: RunResults) -> list[list[str]]:
    rows = []
    for a in results.get("attacks", []):
        if a.get("name") != "reconstruction":
            continue
        if a.get("status") != "ok":
            rows.append([a["name"], _failed(a), "", ""])
            continue
        rows.append([a["name"], pm(a.get("success_rate"), a.get("success_rate_std")),
                     sig(a.get("baseline_success_rate")), pm(a.get("median_error"), a.get("median_error_std"))])
    return rows


def _members_per_repeat(results: RunResults) -> str | None:
    for a in results.get("attacks", []):
        per = a.get("per_repeat") or []
        if a.get("name") in ("shokri", "yeom") and per and all("n_members" in r for r in per):
            return ", ".join(f"{r['n_members']}/{r['n_non_members']}" for r in per)
    return None


def describe_run(results: RunResults) -> list[tuple[str, str]]:
    """What was attacked: mechanism and claim, data and size, repeats, members/non-members per repeat."""
    mech = results.get("mechanism") or {}
    data = results.get("dataset") or {}
    params = results.get("parameters") or {}
    split = (results.get("setup") or {}).get("split") or {}
    classes = f", {data['n_classes']} classes" if data.get("n_classes") else ""
    rows = [("Attacked", f"{mech.get('spec') or mech.get('name', '?')} — claim {claim_words(mech.get('claim') or {})}"),
            ("Data", f"{data.get('name', '?')}: {fmt(data.get('n_records'))} records × {data.get('n_features', '?')} "
                     f"features{classes} (the records themselves are never shown or stored)")]
    repeats = params.get("repeats", "?")
    setup = (f"{repeats} repeat{'s' if repeats != 1 else ''}; each: {fmt(split.get('shadow_records'))} shadow records (the attacker's public "
             f"data) and {fmt(split.get('candidates'))} candidates, each a member by a fair coin")
    per = _members_per_repeat(results)
    if per:
        setup += f"; members/non-members per repeat: {per}"
    queries = params.get("label_only_queries")
    if queries and "label-only" in (params.get("attacks") or []):
        scored = min(2 * int(queries), int(split.get("candidates") or 2 * int(queries)))
        setup += f"; label-only scores the first {scored} candidates"
    rows.append(("Set-up", setup))
    return rows


def _definitions(results: RunResults) -> list[tuple[str, str]]:
    attacks = [a for a in results.get("attacks", []) if a.get("status") == "ok"]
    claim = (results.get("mechanism") or {}).get("claim") or {}
    repeats = (results.get("parameters") or {}).get("repeats", "?")
    rows: list[tuple[str, str]] = [("±", f"standard deviation over the {repeats} repeats")]
    mia = [a for a in attacks if a.get("name") != "reconstruction"]
    if mia:
        ceiling = mia[0].get("advantage_ceiling")
        eps = claim.get("epsilon")
        unit = " (metric claim: for two records at unit distance)" if claim.get("neighbours") == "metric" else ""
        rows.append(("advantage", "TPR − FPR at the threshold chosen on the attacker's own runs (shadow targets; "
                     "LiRA/RMIA: their reference runs); the advantage ceiling "
                     f"(e^ε−1)/(e^ε+1) = {sig(ceiling)} for ε = {sig(eps)} is the most any ε-DP mechanism "
                     f"allows{unit}"))
        chance = [a["name"] for a in mia if a.get("chance")]
        rows.append(("AUC", "area under the ROC curve (0.5 = guessing)"))
        if chance:
            rows.append(("~", f"at chance ({', '.join(chance)}): AUC within two standard errors of 0.5 or "
                         "advantage ≤ 0 — the attack found nothing beyond guessing; a negative advantage or an AUC "
                         "below 0.5 is sampling noise around 0 and 0.5, not a signal"))
        reasons = sorted({str(a.get("tpr_at_1pct_fpr_reason")) for a in mia if a.get("tpr_at_1pct_fpr_reason")})
        rows.append(("TPR @ 1 % FPR", "share of members flagged when 1 % of non-members are; reported only when "
                     "every repeat has ≥ 100 non-members" + (f" — {'; '.join(reasons)}" if reasons else "")))
        if _shows_low_fpr(results):
            rows.append((LOW_FPR_HEADER, "the same at 0.1 %; needs ≥ 1,000 non-members in every repeat "
                         "(--candidates)"))
        conf = mia[0].get("confidence")
        delta = (mia[0].get("counts") or {}).get("delta", 0.0) or 0.0
        rows.append(("ε_lb", "one-run lower bound on add/remove ε, certified by the member/non-member guesses "
                     "of all repeats (Steinke, Nasr & Jagielski 2023" + (f", δ = {delta:g}" if delta else "")
                     + (f", {float(conf) * 100:.4g}% confidence" if conf else "") + ")"))
        scopes = sorted({str(a["epsilon_lower_bound_scope"]) for a in mia
                         if a.get("epsilon_lower_bound_scope") and not a.get("epsilon_lower_bound_comparable")})
        rows.append(("vs claim", "EXCEEDS or within the claimed ε" + "".join(f"; n/c = {s}" for s in scopes)))
        if all(not a.get("epsilon_lower_bound_comparable") for a in mia):
            estimated = isinstance(results.get("epsilon_estimate"), dict) and bool(results["epsilon_estimate"])
            rows.append(("", "no membership bound applies to this claim (every row n/c): "
                         + ("the verdict rests on the certified ε estimate below" if estimated else
                            "with the ε estimate off (--epsilon-estimate off) nothing here tests the claim")))
    skipped: dict[str, list[str]] = {}
    for a in results.get("attacks", []):
        if a.get("status") == "not-applicable":
            skipped.setdefault(str(a.get("reason", "")), []).append(str(a.get("name")))
    if skipped:
        rows.append(("n/a", "not applicable to this release — " + "; ".join(
            f"{', '.join(names)}: {reason}" for reason, names in skipped.items())))
    if risk_rows(results):
        rows += [("repeat, record", "per-record risk: the members LiRA and RMIA rank highest, by repeat and row "
                  "of the dataset only (never their values)"),
                 ("score", "LiRA: the record's log-likelihood ratio (in vs out of the input); RMIA: the share of "
                  "population records it dominates"),
                 ("FPR to flag it", "the share of non-members scoring at least as high")]
    rec = [a for a in attacks if a.get("name") == "reconstruction"]
    if rec:
        rows.append(("recovered within r", f"share of members reconstructed within the success radius r = "
                     f"{sig(rec[0].get('radius'))} of their true record (r = a tenth of the median distance "
                     "between public shadow records)"))
        rows.append(("prior-only baseline", "the same share for a guess from public data alone"))
        rows.append(("median error", "median distance between a reconstruction and its true record"))
    return rows


def _estimate_rows(results: RunResults) -> list[tuple[str, str]]:
    est = results.get("epsilon_estimate")
    if not isinstance(est, dict) or not est:
        return []
    if est.get("status") == "error":
        from dpaudit.execution.untrusted import quoted

        return [("ε estimate", f"failed: {quoted(est.get('error'), 80)}")]
    claim = est.get("claim") or {}
    unit = " per unit distance" if claim.get("neighbours") == "metric" else ""
    conf = est.get("confidence")
    verdict = str(est.get("verdict", ""))
    text = (f"certified ε_lb = {sig(est.get('epsilon_lower_bound'))}{unit}"
            + (f" ({float(conf) * 100:.4g}% confidence)" if conf else "")
            + f" — {verdict_word(verdict)}; sample-size ceiling "
              f"{sig(est.get('ceiling'))} (the largest ε_lb {fmt(est.get('samples'))} releases per dataset can "
              f"certify); {est.get('records_rule', '')}")
    rows = [("ε estimate", text)]
    pair = est.get("pair") or {}
    if pair.get("description"):
        rows.append(("  pair", str(pair["description"])))
    if (est.get("event") or {}).get("text"):
        rows.append(("  event", str(est["event"]["text"])))
    return rows


def console_parts(results: RunResults) -> list[Any]:
    """Everything ``dpaudit attack`` prints on stdout before its ``Conclusion:`` line, in order
    (strings and rich tables)."""
    parts: list[Any] = [key_value(describe_run(results)), ""]
    header, rows = table_rows(results)
    if rows:
        styles = ["bold red" if r[-1] == "EXCEEDS" else None for r in rows]
        parts.append(table(header, rows, title="Membership inference", right=tuple(range(1, len(header) - 1)),
                           row_styles=styles))
    risk = risk_rows(results)
    if risk:
        parts.append(table(RISK_HEADER, risk, title="Per-record risk (most exposed members)", right=(1, 3, 4)))
    rec = _reconstruction_rows(results)
    if rec:
        parts.append(table(RECONSTRUCTION_HEADER, rec, title="Reconstruction", right=(1, 2, 3)))
    failures = _failure_lines(results)
    if failures:
        parts += failures
    parts += ["", key_value(_definitions(results))]
    estimate = _estimate_rows(results)
    if estimate:
        parts += ["", key_value(estimate)]
    conclusion = results.get("conclusion") or {}
    if conclusion.get("detail"):  # the verdict's basis, above its short Conclusion line
        parts += ["", textwrap.fill(str(conclusion["detail"]), width=MAX_WIDTH)]
    if conclusion.get("verdict") == Verdict.NO_VIOLATION:
        parts += ["", textwrap.fill("ε_lb is a lower bound: “consistent” means no test found more leakage than "
                                    "the claim allows, not a proof of privacy.", width=MAX_WIDTH)]
    return parts  # the Conclusion line is printed last by dpaudit.commands.support.finish


def format_table(results: RunResults) -> str:
    """The whole console output as plain text (what a pipe receives), its Conclusion line last."""
    from dpaudit.verdicts.ending import line

    return render(*console_parts(results), "", line(results["conclusion"]))
