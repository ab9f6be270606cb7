"""The audit's verdict rule and its conclusion: the top-level verdict over the rows of the verdict table.

``violation`` when any certified bound exceeds the claim; ``no violation
found`` when at least one certified test ran and none did; else
``inconclusive``.  The tests are those that can decide for the release kind
and the claim (:func:`dpaudit.verdicts.attack_rule.deciding_tests`: ε estimation, and
each membership attack that applies to the release and whose bound the claim
speaks of), decided before any test's sample is drawn; each runs at the audit's
α split over them (Bonferroni, ``results["confidence"]``): a correct mechanism
is called a violation with probability at most α overall.

Then the findings (:func:`dpaudit.execution.verdict.settle_verdict`): a blocking
finding — a failed or timed-out call, a crash, nondeterminism — or a part that
could not run (an attack that failed in a repeat included) turns "no violation
found" into "inconclusive"; a certified violation stays a violation.  Either
way the conclusion is *incomplete* (exit status 3) when a part could not run.
"""

from __future__ import annotations

import math

from dpaudit.attack.internal import is_internal_message
from dpaudit.execution.untrusted import quoted
from dpaudit.execution.verdict import Verdict, settle_verdict
from dpaudit.result_shapes import AuditConfidence, Conclusion, as_number
from dpaudit.run_shapes import RunResults

from .attack_conclusion import INTERNAL_WORDS, attack_failures
from .ending import ending
from .sentences import consistent_text, curve_sentence, inconclusive_text, violation_text

__all__ = ["FAILED_EVERY_REPEAT", "FAILED_INTERNAL", "FAILURE_STATISTICS", "NOTHING_RELEASED", "conclude",
           "overall_verdict"]

FAILED_EVERY_REPEAT = "failed in every repeat"
FAILED_INTERNAL = "internal dpaudit error in every repeat"
FAILURE_STATISTICS = (FAILED_EVERY_REPEAT, FAILED_INTERNAL)  # verdict rows that say a test could not run
NOTHING_RELEASED = "the audited code released nothing in its first calls"  # an audit whose every part was skipped


def overall_verdict(results: RunResults) -> Verdict:
    """The top-level verdict over ``results["verdict_table"]``, settled with ``results["findings"]``
    and ``results["parts"]``: a violation in any row is a violation; otherwise a row that is
    inconclusive (a test that could not be made) or a part whose status is not ``ok`` blocks a
    clean verdict, as the rule of ``dpaudit attack`` does (:func:`dpaudit.verdicts.attack_rule.verdict_of`)."""
    verdicts = [row["verdict"] for row in results["verdict_table"]]
    raw = (Verdict.VIOLATION if Verdict.VIOLATION in verdicts else Verdict.INCONCLUSIVE if Verdict.INCONCLUSIVE in verdicts
           else Verdict.NO_VIOLATION if Verdict.NO_VIOLATION in verdicts else Verdict.INCONCLUSIVE)
    blocking = [f for f in results.get("findings", []) if f.get("blocking", True)]
    if any(status != "ok" for status in results.get("parts", {}).values()):
        blocking.append({"kind": "incomplete"})
    return settle_verdict(raw, blocking)


def _certified(results: RunResults) -> list[tuple[float, str]]:
    """(bound, part) of every verdict row that certified a number against the claim."""
    out = []
    for row in results.get("verdict_table") or []:
        if row.get("verdict") in (Verdict.VIOLATION, Verdict.NO_VIOLATION):
            try:
                out.append((as_number(row["value"]), str(row["part"])))
            except (TypeError, ValueError):
                continue
    return out


def _confidence_map(results: RunResults) -> AuditConfidence:
    """An audit's ``confidence``: its per-test and overall confidence and how many tests share α."""
    confidence = results.get("confidence")
    return confidence if isinstance(confidence, dict) else AuditConfidence()


def _part_failure(part: str, status: str) -> str:
    """Why a part did not finish, in the conclusion's words: dpaudit's own error said as such (not
    quoted: it is not the audited code's text), anything else quoted as the audited code's."""
    if is_internal_message(status.split(": ", 1)[-1]):
        return f"the {part} part {INTERNAL_WORDS}"
    return f"the {part} part {quoted(status, 200)}"


def conclude(results: RunResults) -> Conclusion:
    """``results["conclusion"]`` of an audit (:mod:`dpaudit.verdicts.ending`): the overall verdict in the
    words every command uses.  ``incomplete`` (exit status 3): a part did not finish, an attack
    failed in a repeat (whoever's failure it was: the audited code's, the set-up's or dpaudit's
    own, each said in its own words), or a blocking finding — a part that could not run never
    leaves a clean verdict or exit status 0."""
    claim = (results.get("mechanism") or {}).get("claim") or {}
    eps = as_number(claim.get("epsilon", math.inf))
    confidence = as_number(_confidence_map(results).get("per_test", 0.95))
    statuses = {part: str(status) for part, status in (results.get("parts") or {}).items() if status != "ok"}
    skipped = [part for part, status in statuses.items() if status.startswith("skipped: " + NOTHING_RELEASED)]
    failed_attacks = [e for e in results.get("attacks") or [] if e.get("status") == "error" or e.get("repeats_failed")]
    failures = [_part_failure(part, status) for part, status in statuses.items()
                if part not in skipped and not (part == "attacks" and failed_attacks)]  # those: named one by one
    if skipped:  # the code released nothing: the smoke part says how, once; the rest were not run
        failures.append(f"the {', '.join(skipped)} part{'s' if len(skipped) > 1 else ''} could not run")
    for entry in failed_attacks:  # an attack that could not finish a repeat, in whose words it failed
        failures += attack_failures(str(entry.get("name", "?")), entry)
    blocking = sorted({str(f.get("kind")) for f in results.get("findings") or []
                       if f.get("blocking", True) and f.get("kind") != "incomplete"})
    if blocking:
        failures.append(f"the audited code misbehaved ({', '.join(blocking)}; see the findings)")
    doubts = [f"{row['part']}: {row.get('statistic', '')}" for row in results.get("verdict_table") or []
              if row.get("verdict") == Verdict.INCONCLUSIVE and row.get("statistic") not in FAILURE_STATISTICS]
    certified = _certified(results)
    incomplete = bool(failures)
    verdict = results.get("verdict")
    if math.isinf(eps):
        return ending(Verdict.NO_CLAIM, "No privacy claim (ε = ∞): nothing to violate.", incomplete=incomplete,
                      reasons=failures)
    estimate = results.get("epsilon_estimate")
    if verdict == Verdict.VIOLATION:
        bound, part = max((c for c in certified if c[0] > eps), default=(math.nan, "?"))
        split = int(_confidence_map(results).get("certified_tests") or len(certified))
        curve = curve_sentence(claim, estimate, Verdict.VIOLATION)  # a claim in a notion: its curve's verdict
        note = f" per test; α split over {split} tests" if split > 1 else "; the only test that can decide"
        return ending(Verdict.VIOLATION, curve or violation_text(claim, bound, part, confidence, note),
                      incomplete=incomplete, reasons=failures)
    if verdict == Verdict.NO_VIOLATION and certified:
        bound, part = max(certified)
        return ending(Verdict.NO_VIOLATION, curve_sentence(claim, estimate, Verdict.NO_VIOLATION) or consistent_text(
            claim, bound, part, confidence, f"none of the audit's {len(certified)} certified test(s) exceeded the "
            "claim"), incomplete=incomplete)
    why = failures + doubts or ["no certified test could be made"]
    return ending(Verdict.INCONCLUSIVE, inconclusive_text(claim, why, max(certified)[0] if certified else None),
                  incomplete=incomplete, reasons=why)
