"""The one-line conclusion of ``dpaudit attack``: VIOLATION, consistent with the claim, or INCONCLUSIVE.

The certified statements an attack run has are the one-run membership bounds
that may be compared with the claim (add/remove claims, releases other than
labels; :func:`dpaudit.attacks.membership.metrics.one_run_comparison`) and the certified ε
estimate (:mod:`dpaudit.attack.certify`, for the claim's own neighbour
relation); :mod:`dpaudit.verdicts.attack_rule` certifies each at α/m, m the number of
statements, so the verdict as a whole errs with probability at most α.  The rule:

* **violation** when any of them exceeds the claimed ε (per unit distance for
  metric claims) — each was certified at the stated confidence on samples
  the attack did not choose its threshold or event on; a claim in a notion
  (``--rho``, ``--mu``, ``--rdp``, ``--profile``) is also violated when the
  estimate's certified test lies below its trade-off curve, and the sentence is
  then the curve verdict's (:func:`dpaudit.verdicts.sentences.curve_sentence`);
* else **inconclusive** when none of them ran, or a part could not run (an
  attack that failed in a repeat, an estimate that failed or stopped, a
  blocking finding about the audited code): what did not run cannot vouch
  for the claim;
* else **consistent** with the claim, quoting the largest certified bound.
  This is not a proof of privacy: ε_lb is a lower bound.

A claim of ε = ∞ (a non-private baseline) has nothing to violate.
"""

from __future__ import annotations

import math

from dpaudit.execution.findings import NOTE_KINDS
from dpaudit.execution.untrusted import quoted
from dpaudit.execution.verdict import Verdict
from dpaudit.report.error_log import LOG_NAME
from dpaudit.result_shapes import AttackSummary, Conclusion, VerdictTest, as_number
from dpaudit.run_shapes import RunResults

from .attack_rule import ESTIMATE_TEST, NOT_TESTED_TEXT, estimate_statement, verdict_of
from .ending import ending
from .sentences import (
    consistent_text,
    curve_sentence,
    first_sentence,
    inconclusive_text,
    number_or_nan,
    three_figures,
    violation_text,
)

__all__ = ["INTERNAL_CAUSE", "INTERNAL_WORDS", "attack_failures", "conclude"]

NON_BLOCKING_FINDINGS = NOTE_KINDS  # notes, not a reason to doubt the numbers


def conclude(results: RunResults) -> Conclusion:
    """``{"verdict", "text", "incomplete", "reasons", "epsilon_lower_bound", "source"}`` for an attack
    results dict (:func:`dpaudit.verdicts.ending.ending`).

    The verdict is :mod:`dpaudit.verdicts.attack_rule`'s (``results["verdict"]`` and its
    ``verdict_tests``, α split over every statement); this adds the sentence a reader can quote.
    ``incomplete``: an attack failed in a repeat, the estimate failed, the audited code misbehaved,
    or nothing was measured (exit status 3).  A failure inside dpaudit is worded as dpaudit's
    (:data:`INTERNAL_WORDS`), never as the audited code's.
    """
    claim = (results.get("mechanism") or {}).get("claim") or {}
    eps = number_or_nan(claim.get("epsilon", math.inf))
    if "verdict_tests" in results:
        tests, verdict = results["verdict_tests"] or [], results.get("verdict")
    else:  # a results dict from elsewhere (an older run, a test): its certified rows as they stand
        tests, verdict = _tests_from_rows(results, eps)
    certified = [(number_or_nan(t.get("epsilon_lower_bound")), _source(t), bool(t.get("exceeds_claim")),
                  as_number(t.get("confidence", 0.95))) for t in tests]
    failures: list[str] = []
    for a in results.get("attacks") or []:
        name, status = a.get("name", "?"), a.get("status")
        if status == "error" or a.get("repeats_failed"):
            failures += attack_failures(name, a)
    est = results.get("epsilon_estimate")
    doubts: list[str] = []
    if isinstance(est, dict) and est:
        if est.get("status") == "error" and est.get("internal"):
            failures.append(f"the ε estimate {INTERNAL_WORDS}")
        elif est.get("status") == "error":
            failures.append(f"the ε estimate failed ({quoted(est.get('error', 'no reason given'), 120)})")
        elif est.get("verdict") == Verdict.INCONCLUSIVE:
            why = str((est.get("counts") or {}).get("stopped") or "") or first_sentence(str(est.get("guarantee", "")))
            doubts.append(f"the ε estimate was inconclusive ({why})")
    blocking = [f for f in results.get("findings") or []  # failed repeats ("incomplete"): named above
                if f.get("blocking", f.get("kind") not in NON_BLOCKING_FINDINGS) and f.get("kind") != "incomplete"]
    if blocking:
        kinds = sorted({str(f.get("kind")) for f in blocking})
        failures.append(f"the audited code misbehaved ({', '.join(kinds)}; see the findings)")
    if results.get("measured") is False:
        failures.append("no attack finished a single repeat")
    if results.get("status") == "interrupted":
        failures.append("the run was interrupted before every part ran")
    reasons = failures + doubts
    incomplete = bool(failures)
    lb = source = None
    if certified:
        lb, source, _, _ = max(certified, key=lambda c: (c[2], c[0]))

    def done(verdict_word: str, text: str, detail: str = "") -> Conclusion:
        return {**ending(verdict_word, text, incomplete=incomplete, reasons=reasons, detail=detail),
                "epsilon_lower_bound": lb, "source": source}

    if math.isinf(eps):
        best = _strongest_attack(results)
        return done(Verdict.NO_CLAIM, "No privacy claim (ε = ∞): nothing to violate."
                    + (f" Strongest attack: {best}." if best else ""))
    violations = [c for c in certified if c[2]]
    if verdict == Verdict.VIOLATION and violations:
        vlb, vsource, _, conf = max(violations)
        estimate_violates = any(c[1] == ESTIMATE_TEST for c in violations)
        curve = curve_sentence(claim, est, Verdict.VIOLATION) if estimate_violates else None
        return done(Verdict.VIOLATION, curve or violation_text(claim, vlb, vsource, conf,
                                                               f"; α split over {len(certified)} statement(s)"))
    not_tested = NOT_TESTED_TEXT in str(results.get("verdict_basis") or "")
    if not_tested and not reasons:
        return done(Verdict.NOT_TESTED, inconclusive_text(claim, [NOT_TESTED_TEXT], lb, head=Verdict.NOT_TESTED.word))
    if verdict != Verdict.NO_VIOLATION or not certified or reasons:
        basis = str(results.get("verdict_basis") or "")
        causes = reasons or [basis or "no certified test applies to this claim (turn on --epsilon-estimate)"]
        return done(Verdict.INCONCLUSIVE, inconclusive_text(claim, causes, lb))
    conf = min(c[3] for c in certified)
    # the line stays short (≤ 160 characters for an ε claim); what the membership attacks add goes above it
    return done(Verdict.NO_VIOLATION, curve_sentence(claim, est, Verdict.NO_VIOLATION)
                or consistent_text(claim, lb, str(source), conf), _membership_tail(results, certified))


INTERNAL_CAUSE = f"an internal dpaudit error (a bug in dpaudit, not in the audited code; traceback in {LOG_NAME})"
INTERNAL_WORDS = f"could not run: {INTERNAL_CAUSE}"


def attack_failures(name: str, entry: AttackSummary) -> list[str]:
    """Why an attack did not finish every repeat, split by whose failure it was: dpaudit's own
    (``internal_errors``, :mod:`dpaudit.attack.internal`) or the audited code's / the set-up's."""
    failed = entry.get("repeats_failed")
    internal = int(entry.get("internal_errors") or 0)
    out = [f"{name} could not run in {internal} repeat(s): {INTERNAL_CAUSE}"] if internal else []
    rest = failed - internal if isinstance(failed, int) else None
    if rest is None or rest > 0:
        out.append(f"{name} failed in {'?' if rest is None else rest} repeat(s)")
    return out


def _membership_tail(results: RunResults, certified: list[tuple[float, str, bool, float]]) -> str:
    """What the membership attacks add to a "no violation found" conclusion: their bounds were within the
    claim too, or they do not apply to it (a metric or replace claim, a labels release)."""
    ran = [a for a in results.get("attacks") or []
           if a.get("status") == "ok" and a.get("name") != "reconstruction"]
    membership = [c for c in certified if c[1] != ESTIMATE_TEST]
    if membership:
        return f"The {len(membership)} membership attack bound(s) that apply to this claim are within it too."
    if ran:
        return ("The membership attacks' bounds do not apply to this claim (n/c in the table: they bound adding or "
                "removing a record, in releases other than labels), so the verdict rests on the certified ε estimate.")
    return "No membership attack ran: the verdict rests on the certified ε estimate."


def _tests_from_rows(results: RunResults, eps: float) -> tuple[list[VerdictTest], str]:
    """Certified statements read off the attack rows and the estimate, and the verdict they give."""
    tests: list[VerdictTest] = []
    for a in results.get("attacks") or []:
        if a.get("status") == "ok" and a.get("epsilon_lower_bound_comparable") and math.isfinite(eps):
            lb = number_or_nan(a.get("epsilon_lower_bound"))
            tests.append({"attack": a.get("name", "?"), "epsilon_lower_bound": lb, "exceeds_claim": lb > eps,
                          "confidence": as_number(a.get("confidence") or 0.95)})
    missing: list[str] = []
    est = results.get("epsilon_estimate")
    if isinstance(est, dict) and est:
        statement, why_not = estimate_statement(est, eps, 0.95)
        if statement is not None:
            tests.append(statement)
        else:
            missing.append(str(why_not))
    return tests, verdict_of(tests, missing)  # the same rule as dpaudit.verdicts.attack_rule


def _source(test: VerdictTest) -> str:
    name = str(test.get("attack", "?"))
    return name if name == ESTIMATE_TEST else f"{name} one-run membership bound"


def _strongest_attack(results: RunResults) -> str | None:
    ok = [a for a in results.get("attacks") or [] if a.get("status") == "ok" and a.get("advantage") is not None]
    if not ok:
        return None
    a = max(ok, key=lambda a: number_or_nan(a.get("advantage")))
    return (f"{a['name']}, advantage {three_figures(number_or_nan(a['advantage']))}, one-run ε_lb "
            f"{three_figures(number_or_nan(a.get('epsilon_lower_bound')))}")
