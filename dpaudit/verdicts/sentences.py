"""The sentences every ``Conclusion:`` line is written in, and the claim in words.

Each sentence starts with its verdict's word (:attr:`dpaudit.execution.verdict.Verdict.word`):

* ``VIOLATION: the claim ε = 1 cannot hold — certified ε_lb = …`` (:func:`violation_text`; a claim in a notion —
  ρ-zCDP, μ-GDP, Rényi DP, a privacy profile — says ``VIOLATION of ρ = 0.5 (zCDP): …``, and where the curve
  decided it the curve verdict's own sentence stands: :func:`curve_sentence`);
* ``Consistent with ε = 1: certified ε_lb = … ≤ 1 (…)`` (:func:`consistent_text`);
* ``INCONCLUSIVE: why; why. Nothing certified exceeds …`` (:func:`inconclusive_text`, also ``NOT TESTED: …``).

The claim itself is said by :func:`claimed` in these sentences, by :func:`claim_words` in a run's header and by
:func:`claim_at` in the claim column of an audit's verdict table.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable

from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.notions import notion_from_dict
from dpaudit.result_shapes import ClaimRecord

__all__ = ["claim_at", "claim_words", "claimed", "consistent_text", "curve_sentence", "first_sentence",
           "inconclusive_text", "notion_text", "number_or_nan", "three_figures", "violation_text"]


def number_or_nan(value: Any) -> float:
    """A figure as results hold it, as a float: ``"inf"``/``"-inf"`` text read as ±∞, None as NaN."""
    if isinstance(value, str):  # results.json writes ±inf as "inf" / "-inf"
        return float(value)
    return float(value) if value is not None else math.nan


def three_figures(x: Any) -> str:
    """A figure to three significant digits, as every conclusion sentence prints it."""
    return f"{number_or_nan(x):.3g}"


def notion_text(claim: ClaimRecord) -> str | None:
    """``ρ = 0.5 (zCDP)`` for a claim stated in a notion (its ``notion``); None for an (ε, δ) claim."""
    notion = claim.get("notion")
    if not isinstance(notion, dict):
        return None
    try:
        return notion_from_dict(notion).text()
    except Exception:  # noqa: BLE001 - a results file written by another version: its notion's name
        return str(notion.get("notion", "a notion"))


def _point(claim: ClaimRecord) -> str:
    """``its ε at δ = 1e-05``: what a notion claim's ε is (its (ε, δ) point)."""
    return f"its ε at δ = {number_or_nan(claim.get('delta')):g}"


def claimed(claim: ClaimRecord) -> tuple[str, str]:
    """(``ε = 1 per unit distance``, the unit ``" per unit distance"`` or ``""``) for a claim dict; a claim in a
    notion: ``ρ = 0.5 (zCDP)``."""
    unit = " per unit distance" if claim.get("neighbours") == "metric" else ""
    return notion_text(claim) or f"ε = {number_or_nan(claim.get('epsilon')):g}{unit}", unit


def violation_text(claim: ClaimRecord, bound: Any, source: str, confidence: float, note: str = "") -> str:
    """``VIOLATION: the claim ε = 1 cannot hold — certified ε_lb = 1.4 > 1 (source, 95% confidence…).``; a claim in
    a notion: ``VIOLATION of ρ = 0.5 (zCDP): certified ε_lb = 2.6 > 2.3, its ε at δ = 1e-05 (…).``"""
    words, unit = claimed(claim)
    where = f"({source}, {confidence * 100:.3g}% confidence{note})"
    head = Verdict.VIOLATION.word
    if notion_text(claim):
        return (f"{head} of {words}: certified ε_lb = {three_figures(bound)} > {number_or_nan(claim.get('epsilon')):.4g}, "
                f"{_point(claim)} {where}.")
    return (f"{head}: the claim {words} cannot hold — certified ε_lb = {three_figures(bound)}{unit} > "
            f"{number_or_nan(claim.get('epsilon')):g} {where}.")


def consistent_text(claim: ClaimRecord, bound: Any, source: str, confidence: float, tail: str = "") -> str:
    """``Consistent with ε = 1: certified ε_lb = 0.7 ≤ 1 (source, 95% confidence); tail.`` (no tail: ends at the
    parenthesis)."""
    words, unit = claimed(claim)
    eps = number_or_nan(claim.get("epsilon"))
    point = f"{eps:.4g}, {_point(claim)}" if notion_text(claim) else f"{eps:g}"
    return (f"{Verdict.NO_VIOLATION.word} with {words}: certified ε_lb = {three_figures(bound)}{unit} ≤ {point} ({source}, "
            f"{confidence * 100:.3g}% confidence)" + (f"; {tail}." if tail else "."))


def inconclusive_text(claim: ClaimRecord, reasons: Iterable[str], largest: Any = None,
                      head: str = Verdict.INCONCLUSIVE.word) -> str:
    """``INCONCLUSIVE: why; why. Nothing certified exceeds ε = 1 (largest ε_lb = 0.3).``"""
    words, unit = claimed(claim)
    why = "; ".join(r for r in reasons if r) or "no certified test could be made"
    point = (f"; {_point(claim)} is {number_or_nan(claim.get('epsilon')):.4g}" if notion_text(claim)
             and not isinstance(claim.get("epsilon"), list) else "")
    found = (f" Nothing certified exceeds {words} (largest ε_lb = {three_figures(largest)}{unit}{point})."
             if largest is not None and math.isfinite(number_or_nan(largest)) else "")
    return f"{head}: {why}.{found}"


def curve_sentence(claim: ClaimRecord, estimate: Any, verdict: str) -> str | None:
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
    return re.split(r"\.(?:\s|$)", text, maxsplit=1)[0].strip()



def claim_words(claim: ClaimRecord) -> str:
    """``ε = 1 per unit distance (metric)``, ``ε = 1, δ = 1e-05 (add-remove)``, ``ε = ∞ (no claim)``."""
    eps = number_or_nan(claim.get("epsilon"))
    if math.isinf(eps):
        return "ε = ∞ (no privacy claim)"
    unit = " per unit distance" if claim.get("neighbours") == "metric" else ""
    delta = number_or_nan(claim.get("delta") or 0.0)
    notion = notion_text(claim)
    if notion:  # a claim in a notion: its (ε, δ) point beside it
        return f"{notion}, whose ε at δ = {delta:g} is {eps:.4g} ({claim.get('neighbours', '?')})"
    return f"ε = {eps:g}{unit}" + (f", δ = {delta:g}" if delta else "") + f" ({claim.get('neighbours', '?')})"


def claim_at(claim: ClaimRecord) -> str:
    """The claim column of a verdict row, e.g. ``ε = 1 per unit distance``."""
    eps = number_or_nan(claim["epsilon"])
    notion = notion_text(claim)
    if notion:  # a claim in a notion; the rows compare with its (ε, δ) point
        return f"{notion}: ε = {eps:.4g} at δ = {number_or_nan(claim.get('delta') or 0.0):g}"
    unit = " per unit distance" if claim["neighbours"] == "metric" else ""
    return ("ε = ∞" if math.isinf(eps) else f"ε = {eps:g}") + unit
