"""The verdict rule of ``dpaudit attack``: do the membership attacks' certified bounds exceed the claim?

Each membership attack certifies a one-run ε lower bound (Steinke, Nasr &
Jagielski 2023, Thm. 3.1) from its guesses pooled over repeats.  Where that
bound may be compared with the claim (:func:`dpaudit.attacks.membership.metrics.one_run_comparison`:
add/remove claims, releases the attacker sees as a whole), the verdict is
``violation`` when one of them exceeds the claimed ε.  Several attacks are
several tests: for the verdict each is recomputed at α/m (Bonferroni over the
m statements), so a correct mechanism is called a violation with
probability at most α overall; the per-attack bounds in the table stay at α.

The certified ε estimate (:mod:`dpaudit.attack.certify`), when it runs, is one
more statement: α is split evenly over every statement that can make the
verdict (the estimate is certified at its share).  Nothing certified (a metric
claim without the estimate, every attack failed): ``inconclusive``.  Then
:func:`~dpaudit.execution.verdict.settle_verdict` applies the findings: a blocking
finding (a failed call, a failed repeat, nondeterminism) turns "no violation
found" into "inconclusive".
"""

from __future__ import annotations

import math
from typing import Iterable, TypedDict

from dpaudit.attack.registry import MEMBERSHIP_ATTACKS, applies_to
from dpaudit.attack.repeat import RepeatOutcome
from dpaudit.attacks.membership.metrics import MembershipMetrics, aggregate, one_run_comparison
from dpaudit.execution import RunFindings
from dpaudit.execution.verdict import Verdict, settle_verdict
from dpaudit.result_shapes import ClaimRecord, EmbeddedEstimate, EstimateSummary, VerdictTest, as_number

__all__ = ["ESTIMATE_TEST", "NOT_TESTED_TEXT", "AttackVerdict", "attack_verdict", "deciding_tests", "estimate_statement",
           "statement_count", "verdict_of"]

ESTIMATE_TEST = "ε estimate"


def deciding_tests(attacks: Iterable[str], claim: ClaimRecord, release_kind: str | None, with_estimate: bool
                   ) -> tuple[list[str], dict[str, str]]:
    """The certified tests that can decide the verdict, and why each other membership attack cannot — from the
    release kind and the claim alone, before any test draws a sample, so that α goes only to those tests: a
    membership attack whose one-run bound is comparable with the claim
    (:func:`~dpaudit.attacks.membership.metrics.one_run_comparison`) and that applies to the release kind
    (:func:`~dpaudit.attack.registry.applies_to`), and the certified ε estimate (``with_estimate``).
    ``release_kind`` None (not known): every attack is taken to apply."""
    comparable, why = one_run_comparison(claim, release_kind)
    tests: list[str] = []
    not_deciding: dict[str, str] = {}
    for name in attacks:
        if name not in MEMBERSHIP_ATTACKS:
            continue
        inapplicable = applies_to(name, release_kind) if release_kind is not None else None
        if inapplicable is not None:
            not_deciding[name] = inapplicable
        elif not comparable:
            not_deciding[name] = why
        else:
            tests.append(name)
    return tests + ([ESTIMATE_TEST] if with_estimate else []), not_deciding


def _membership_runs(outcomes: list[RepeatOutcome], attacks: Iterable[str], claim: ClaimRecord
                     ) -> tuple[bool, str, dict[str, list[MembershipMetrics]]]:
    kind = next((o.release_kind for o in outcomes if o.release_kind), None)
    comparable, why = one_run_comparison(claim, kind)
    runs = {name: [res for o in outcomes if isinstance(res := o.results.get(name), MembershipMetrics)]
            for name in attacks if name in MEMBERSHIP_ATTACKS}
    return comparable, why, {name: mets for name, mets in runs.items() if mets}


def estimate_statement(estimate: EstimateSummary, eps: float, confidence: float
                       ) -> tuple[VerdictTest | None, str | None]:
    """The certified ε estimate as one statement of the verdict, or why it cannot be one.

    An estimate that failed or was inconclusive is no statement: it is *missing*, and what is
    missing keeps the verdict from being clean (see :func:`verdict_of`).
    """
    if estimate.get("status") == "error":
        return None, "the ε estimate failed: " + str(estimate.get("error"))
    certified = estimate.get("epsilon_lower_bound")
    if estimate.get("verdict") == Verdict.INCONCLUSIVE or certified is None:
        return None, "the ε estimate was inconclusive"
    bound = as_number(certified)  # float() also reads results.json's "inf" text
    return ({"attack": ESTIMATE_TEST, "epsilon_lower_bound": bound,
             "confidence": as_number(estimate.get("confidence", confidence)),
             "exceeds_claim": bool(estimate.get("verdict") == Verdict.VIOLATION or (math.isfinite(eps) and bound > eps))},
            None)


def verdict_of(tests: list[VerdictTest], missing: list[str]) -> str:
    """The rule, before findings: ``violation`` when a certified statement exceeds the claim; else
    ``inconclusive`` when there is none or a part could not run; else ``no violation found``."""
    if any(t["exceeds_claim"] for t in tests):
        return Verdict.VIOLATION
    if not tests or missing:
        return Verdict.INCONCLUSIVE
    return Verdict.NO_VIOLATION


def _release_kind(outcomes: list[RepeatOutcome]) -> str | None:
    return next((o.release_kind for o in outcomes if o.release_kind), None)


def statement_count(outcomes: list[RepeatOutcome], attacks: Iterable[str], claim: ClaimRecord,
                    with_estimate: bool) -> int:
    """How many certified statements can make the verdict (:func:`deciding_tests`, from the release kind and the
    claim: not from which attacks happened to finish).  α is split evenly over them."""
    return len(deciding_tests(attacks, claim, _release_kind(outcomes), with_estimate)[0])


NOT_TESTED_TEXT = ("the claim was not tested: the certified ε estimate was turned off (--epsilon-estimate off), and "
              "the membership attacks alone cannot show that a claim holds")


class AttackVerdict(TypedDict):
    """An attack run's verdict before its conclusion: the verdict, its basis in words, the certified tests."""

    verdict: Verdict
    basis: str
    tests: list[VerdictTest]


def attack_verdict(outcomes: list[RepeatOutcome], attacks: Iterable[str], claim: ClaimRecord, alpha: float,
                   findings: RunFindings, estimate: EmbeddedEstimate | None = None,
                   estimate_off: bool = False) -> AttackVerdict:
    """``{"verdict", "basis", "tests"}``: the verdict, why, and each certified test behind it.

    ``estimate``: the certified ε estimate run beside the attacks (``results["epsilon_estimate"]``),
    certified at confidence 1 − α/m for the m statements of :func:`statement_count`; an estimate
    that failed or was inconclusive leaves the verdict inconclusive unless another test found a
    violation.  ``estimate_off``: the user turned the estimate off; the claim is then not tested
    (inconclusive unless an attack certified a violation), never "no violation found".
    """
    attacks = list(attacks)
    comparable, why, runs = _membership_runs(outcomes, attacks, claim)
    deciding, _ = deciding_tests(attacks, claim, _release_kind(outcomes), estimate is not None)
    runs = {name: mets for name, mets in runs.items() if comparable and name in deciding}
    m = len(deciding)
    eps = as_number(claim.get("epsilon", math.inf))
    tests: list[VerdictTest] = []
    parts: list[str] = []
    missing: list[str] = []
    if m:
        each = alpha / m
        for name, mets in runs.items():
            bound = float(aggregate(mets, alpha=each)["epsilon_lower_bound"])
            tests.append({"attack": name, "epsilon_lower_bound": bound, "confidence": 1.0 - each,
                          "exceeds_claim": bool(bound > eps)})
        if runs:
            parts.append(f"{len(runs)} one-run membership bound(s) ({why})")
        if estimate is not None:
            statement, why_not = estimate_statement(estimate, eps, 1.0 - each)
            if statement is not None:
                tests.append(statement)
                parts.append("the certified ε estimate")
            else:
                missing.append(str(why_not))
    if estimate_off and math.isfinite(eps):
        missing.append(NOT_TESTED_TEXT)
    raw = verdict_of(tests, missing)
    if tests:
        basis = (f"{' and '.join(parts)}: {len(tests)} statement(s), each at confidence {1 - alpha / m:.4g} "
                 f"(α = {alpha:g} split evenly over the {m} statement(s) that can make the verdict)")
    elif not comparable and estimate is None:
        basis = why
    else:
        basis = "no certified statement could be made"
    if missing:
        basis += "; " + "; ".join(missing)
    verdict = settle_verdict(raw, [f for _, f in findings.blocking])
    if verdict != raw:
        basis += "; the audited code misbehaved (see findings), so no clean verdict is possible"
    return {"verdict": verdict, "basis": basis, "tests": tests}
