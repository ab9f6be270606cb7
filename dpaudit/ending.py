"""How every run ends: one ``Conclusion:`` line and one exit-status table, for every command.

``attack``, ``audit``, ``estimate-eps`` and ``sweep`` each put a ``conclusion`` into their
results dict — ``{"verdict", "word", "text", "incomplete", "reasons"}``, ``word`` the verdict as the
reader meets it (``Verdict.word``) — and print ``Conclusion: <text>`` as the last line of stdout.  The text starts with the verdict in words:

* ``VIOLATION: …`` — a certified lower bound exceeds the claim (a claim in a notion — ρ-zCDP, μ-GDP, Rényi DP,
  a privacy profile — says ``VIOLATION of ρ = 0.5 (zCDP): …``, the curve verdict's sentence where the curve
  decided it: :func:`curve_sentence`);
* ``Consistent with …`` — every certified test ran and none exceeded the claim;
* ``INCONCLUSIVE: …`` — nothing certified, or a part could not run (the text says which);
* ``NOT TESTED: …`` — the run certifies no verdict on the claim (a sweep; ``--epsilon-estimate off``);
* ``No privacy claim …`` — ε = ∞, a non-private baseline.

The text is one line without control characters (:func:`dpaudit.execution.untrusted.printable`, imported
where it is used: this module is loaded for ``--help``): an error
message of the audited code quoted in it cannot start a line of its own.

The exit status (:data:`EXIT_STATUS`, :func:`exit_status`) is the same for every command; the
README's table and each command's ``--help`` are written from it.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

__all__ = ["EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_STATUS", "EXIT_TERMINATED", "EXIT_USAGE",
           "EXIT_VIOLATION", "claimed", "consistent_text", "curve_sentence", "notion_text",
           "ending", "exit_status", "first_sentence", "exit_status_help", "inconclusive_text", "line", "violation_text"]


EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 3, 130, 143

# (status, when) — the one table: README "Exit status" and every command's --help show it.
EXIT_STATUS: tuple[tuple[str, str], ...] = (
    ("0", "the run finished and every part of it was measured; the Conclusion line gives the verdict"),
    ("1", "--fail-on-violation, and the verdict is VIOLATION"),
    ("2", "a user mistake or a setting that cannot run: one Error: line on stderr, nothing run"),
    ("3", "incomplete: the audited code failed (raised, hung, crashed, returned garbage) or a part could not "
          "run, so the verdict cannot be clean — the findings say which; with --fail-on-violation also any "
          "verdict other than VIOLATION or Consistent"),
    ("130, 143", "interrupted (Ctrl-C) or terminated (SIGTERM): the results so far are written, with status "
                 "interrupted"),
)


def exit_status(verdict: str, *, incomplete: bool, fail_on_violation: bool) -> int:
    """The exit status of a run that finished (:data:`EXIT_STATUS`): ``verdict`` is the conclusion's."""
    from dpaudit.execution.verdict import Verdict  # here: this module is loaded for --help, the engine is not

    if fail_on_violation and verdict == Verdict.VIOLATION:
        return EXIT_VIOLATION
    if incomplete:
        return EXIT_INCOMPLETE
    if fail_on_violation and verdict not in (Verdict.VIOLATION, Verdict.NO_VIOLATION, Verdict.NO_CLAIM):
        return EXIT_INCOMPLETE
    return 0


def exit_status_help(fail_on_violation: bool = True) -> str:
    """The table as help text: one paragraph per status (typer keeps paragraphs apart).  A command without
    ``--fail-on-violation`` (a sweep: it certifies no verdict) gets the table without what that option adds."""
    rows = EXIT_STATUS if fail_on_violation else tuple(
        (code, when.partition("; with --fail-on-violation")[0]) for code, when in EXIT_STATUS if code != "1")
    return "Exit status:\n\n" + "\n\n".join(f"{code}  {when}" for code, when in rows)


def _num(value: Any) -> float:
    if isinstance(value, str):  # results.json writes ±inf as "inf" / "-inf"
        return float(value)
    return float(value) if value is not None else math.nan


def _g3(x: Any) -> str:
    return f"{_num(x):.3g}"


def notion_text(claim: dict[str, Any]) -> str | None:
    """``ρ = 0.5 (zCDP)`` for a claim stated in a notion (its ``notion``); None for an (ε, δ) claim."""
    notion = claim.get("notion")
    if not isinstance(notion, dict):
        return None
    from dpaudit.mechanisms.notions import notion_from_dict  # here: this module is loaded for --help

    try:
        return notion_from_dict(notion).text()
    except Exception:  # noqa: BLE001 - a results file written by another version: its notion's name
        return str(notion.get("notion", "a notion"))


def _point(claim: dict[str, Any]) -> str:
    """``its ε at δ = 1e-05``: what a notion claim's ε is (its (ε, δ) point)."""
    return f"its ε at δ = {_num(claim.get('delta')):g}"


def claimed(claim: dict[str, Any]) -> tuple[str, str]:
    """(``ε = 1 per unit distance``, the unit ``" per unit distance"`` or ``""``) for a claim dict; a claim in a
    notion: ``ρ = 0.5 (zCDP)``."""
    unit = " per unit distance" if claim.get("neighbours") == "metric" else ""
    return notion_text(claim) or f"ε = {_num(claim.get('epsilon')):g}{unit}", unit


def violation_text(claim: dict[str, Any], bound: Any, source: str, confidence: float, note: str = "") -> str:
    """``VIOLATION: the claim ε = 1 cannot hold — certified ε_lb = 1.4 > 1 (source, 95% confidence…).``; a claim in
    a notion: ``VIOLATION of ρ = 0.5 (zCDP): certified ε_lb = 2.6 > 2.3, its ε at δ = 1e-05 (…).``"""
    words, unit = claimed(claim)
    where = f"({source}, {confidence * 100:.3g}% confidence{note})"
    if notion_text(claim):
        return (f"VIOLATION of {words}: certified ε_lb = {_g3(bound)} > {_num(claim.get('epsilon')):.4g}, "
                f"{_point(claim)} {where}.")
    return (f"VIOLATION: the claim {words} cannot hold — certified ε_lb = {_g3(bound)}{unit} > "
            f"{_num(claim.get('epsilon')):g} {where}.")


def consistent_text(claim: dict[str, Any], bound: Any, source: str, confidence: float, tail: str = "") -> str:
    """``Consistent with ε = 1: certified ε_lb = 0.7 ≤ 1 (source, 95% confidence); tail.`` (no tail: ends at the
    parenthesis)."""
    words, unit = claimed(claim)
    eps = _num(claim.get("epsilon"))
    point = f"{eps:.4g}, {_point(claim)}" if notion_text(claim) else f"{eps:g}"
    return (f"Consistent with {words}: certified ε_lb = {_g3(bound)}{unit} ≤ {point} ({source}, "
            f"{confidence * 100:.3g}% confidence)" + (f"; {tail}." if tail else "."))


def inconclusive_text(claim: dict[str, Any], reasons: Iterable[str], largest: Any = None,
                      head: str = "INCONCLUSIVE") -> str:
    """``INCONCLUSIVE: why; why. Nothing certified exceeds ε = 1 (largest ε_lb = 0.3).``"""
    words, unit = claimed(claim)
    why = "; ".join(r for r in reasons if r) or "no certified test could be made"
    point = (f"; {_point(claim)} is {_num(claim.get('epsilon')):.4g}" if notion_text(claim)
             and not isinstance(claim.get("epsilon"), list) else "")
    found = (f" Nothing certified exceeds {words} (largest ε_lb = {_g3(largest)}{unit}{point})."
             if largest is not None and math.isfinite(_num(largest)) else "")
    return f"{head}: {why}.{found}"


def curve_sentence(claim: dict[str, Any], estimate: Any, verdict: str) -> str | None:
    """The curve verdict's one sentence naming the notion ("VIOLATION of ρ = 0.5 (zCDP): certified D_1.2 ≥ …",
    "Consistent with μ = 1 (GDP): …"; :mod:`dpaudit.attacks.epsilon.certification.curve_verdict`) when the claim is stated in a
    notion and the ε estimate's verdict on its curve is ``verdict``; else None (the ε-point sentence stands)."""
    if not notion_text(claim) or not isinstance(estimate, dict):
        return None
    curve = estimate.get("curve")
    if not isinstance(curve, dict) or not curve.get("decides_verdict") or not curve.get("conclusion"):
        return None
    return str(curve["conclusion"]) if str(curve.get("verdict")) == str(verdict) else None


def first_sentence(text: str) -> str:
    """The first sentence of ``text``: up to a full stop followed by a space or the end — never a
    decimal point ("at least 0.95" stays whole)."""
    import re

    return re.split(r"\.(?:\s|$)", text, maxsplit=1)[0].strip()


def ending(verdict: str, text: str, *, incomplete: bool, reasons: Iterable[str] = (), detail: str = ""
           ) -> dict[str, Any]:
    """A results dict's ``conclusion``: the verdict, the sentence (one printable line), whether the
    run was incomplete (exit status 3), the reasons it was, and ``detail``: what the reader should know of the
    verdict's basis, printed above the ``Conclusion:`` line so that the line itself stays short."""
    from dpaudit.execution.untrusted import printable
    from dpaudit.execution.verdict import Verdict

    word = Verdict(verdict).word if verdict in {v.value for v in Verdict} else str(verdict)
    out = {"verdict": verdict, "word": word, "text": printable(" ".join(text.split(" "))),
           "incomplete": bool(incomplete), "reasons": [printable(r) for r in reasons]}
    if detail:
        out["detail"] = printable(detail)
    return out


def line(conclusion: dict[str, Any]) -> str:
    """The last line of stdout: ``Conclusion: <text>``."""
    from dpaudit.execution.untrusted import printable

    return f"Conclusion: {printable(conclusion.get('text', ''))}"
