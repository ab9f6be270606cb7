"""The verdict banner every report opens with: one word per verdict class, the conclusion sentence under it,
then the three numbers that decide it — the claimed ε, the certified lower bound ε_lb, the confidence.

The word is :attr:`dpaudit.execution.verdict.Verdict.word` (VIOLATION, Consistent, INCONCLUSIVE, NOT TESTED,
no claim): the same word the ``Conclusion:`` line starts with, the ``verdict`` column of ``results.csv``
holds and the HTML colours (one class per verdict, ``verdict-<name>``).  Older results without a
``conclusion`` fall back on their top-level ``verdict`` (a sweep's on NOT TESTED).
"""

from __future__ import annotations

import math
import re
from typing import Any, TypedDict

from dpaudit.result_shapes import ClaimRecord
from dpaudit.run_shapes import RunResults

from .numbers import MISSING, sig

__all__ = ["Banner", "DecidingFigures", "after_word", "banner", "deciding_numbers", "figures", "rounded_prose", "verdict_of"]


def verdict_of(results: RunResults) -> Any:
    """The run's :class:`~dpaudit.execution.verdict.Verdict` (its conclusion's, else its top-level one), or None."""
    from dpaudit.execution.verdict import Verdict

    conclusion = results.get("conclusion")
    value = conclusion.get("verdict") if isinstance(conclusion, dict) else None
    for candidate in (value, results.get("verdict")):
        try:
            return Verdict(candidate)
        except ValueError:
            continue
    # a sweep written before sweeps had a conclusion: it certified nothing about the claim all the same
    return Verdict.NOT_TESTED if results.get("kind") == "sweep" else None


def _float(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _confidence(results: RunResults) -> float | None:
    conf = results.get("confidence")
    if isinstance(conf, dict):  # an audit: the overall confidence its tests share
        conf = conf.get("overall")
    if conf is None:
        est = results.get("epsilon_estimate")
        conf = est.get("confidence") if isinstance(est, dict) else None
    if conf is None:
        tests = results.get("verdict_tests")
        conf = next((t.get("confidence") for t in tests or [] if isinstance(t, dict) and t.get("confidence")), None)
    return _float(conf)


def _bound(results: RunResults) -> float | None:
    conclusion = results.get("conclusion")
    for source in (conclusion if isinstance(conclusion, dict) else {}, results, results.get("epsilon_estimate")):
        if isinstance(source, dict) and _float(source.get("epsilon_lower_bound")) is not None:
            return _float(source.get("epsilon_lower_bound"))
    return None


def _claim(results: RunResults) -> ClaimRecord:
    mech = results.get("mechanism") if isinstance(results.get("mechanism"), dict) else {}
    claim = results.get("claim") if isinstance(results.get("claim"), dict) else (mech or {}).get("claim")
    return claim if isinstance(claim, dict) else {}


class DecidingFigures(TypedDict):
    """The numbers a verdict rests on: the claimed ε (a sweep's list), the certified ε_lb, the confidence."""

    claim: float | list[float] | str | None
    bound: float | None
    confidence: float | None


class Banner(TypedDict):
    """The top of a report: the verdict, its word and CSS class, the sentence and its detail, the numbers."""

    verdict: str
    word: str
    css: str
    text: str
    detail: str
    numbers: list[tuple[str, str]]


def figures(results: RunResults) -> DecidingFigures:
    """The run's deciding figures as numbers: ``claim`` (ε, or a sweep's list), ``bound`` (the certified ε_lb) and
    ``confidence``; each None where the run has none."""
    return {"claim": _claim(results).get("epsilon"), "bound": _bound(results), "confidence": _confidence(results)}


def deciding_numbers(results: RunResults) -> list[tuple[str, str]]:
    """(label, value) of the claimed ε, the certified ε_lb and the confidence; ``–`` where the run has none."""
    exact = figures(results)
    eps, bound, conf = exact["claim"], exact["bound"], exact["confidence"]
    unit = " per unit distance" if _claim(results).get("neighbours") == "metric" else ""
    claimed = ("{" + ", ".join(sig(e) for e in eps) + "}" if isinstance(eps, list) else sig(eps)) if eps is not None \
        else MISSING
    claim = _claim(results)
    label = f"claimed ε at δ = {sig(claim.get('delta'))}" if isinstance(claim.get("notion"), dict) else "claimed ε"
    return [(label, claimed + (unit if eps is not None else "")),
            ("certified ε_lb", MISSING if bound is None else sig(bound) + unit),
            ("confidence", MISSING if conf is None else f"{conf * 100:.3g} %")]


def banner(results: RunResults) -> Banner | None:
    """``{"verdict", "word", "css", "text", "numbers"}`` for the top of a report; None when the run states no verdict."""
    verdict = verdict_of(results)
    if verdict is None:
        return None
    conclusion = results.get("conclusion")
    text = conclusion.get("text") if isinstance(conclusion, dict) else None
    if not text and results.get("kind") == "sweep":
        text = ("a sweep measures privacy and utility per ε and certifies no verdict on the claim (dpaudit audit or "
                "estimate-eps at one ε does).")
    text = after_word(rounded_prose(text or ""), verdict.word)
    detail = conclusion.get("detail") if isinstance(conclusion, dict) else None
    return {"verdict": verdict.value, "word": verdict.word, "css": "verdict-" + verdict.name.lower().replace("_", "-"),
            "text": text, "detail": rounded_prose(str(detail)) if detail else "", "numbers": deciding_numbers(results)}


_NOTION_VIOLATION = re.compile(r"^of (.+?\)): (.*)$", re.S)


def after_word(text: str, word: str) -> str:
    """The conclusion sentence as it goes on after the banner's word, which is its own line: ``VIOLATION: the
    claim …`` → ``the claim …``; ``VIOLATION of ρ = 0.1 (zCDP): certified …`` → ``the claim ρ = 0.1 (zCDP) cannot
    hold: certified …``; ``Consistent with ε = 1: …`` → ``with ε = 1: …`` — never the word twice."""
    if not text.startswith(word) or text[len(word):len(word) + 1] not in (":", " "):
        return text
    rest = text[len(word) + 1:].strip()
    notion = _NOTION_VIOLATION.match(rest)
    if notion:
        return f"the claim {notion.group(1)} cannot hold: {notion.group(2)}"
    return rest


_LONG_DECIMAL = re.compile(r"(?<![\w.])(\d+\.\d{5,})(?![\d.])")


def rounded_prose(text: str) -> str:
    """``text`` with every number of more than four decimals written to four significant digits (a confidence
    of 0.9833333333333333 is 0.9833): a figure in prose at no more precision than it carries."""
    return _LONG_DECIMAL.sub(lambda m: f"{float(m.group(1)):.4g}", text)
