"""The ``Conclusion:`` of ``dpaudit estimate-eps`` (:mod:`dpaudit.verdicts.ending`): the certified bound
against the claim, in the words every command uses.

* **violation** — the certified ε_lb exceeds the claim, or (a claim in a notion) a certified test lies below its
  trade-off curve or a certified Rényi divergence exceeds its bound: the curve verdict's sentence
  (:func:`dpaudit.verdicts.sentences.curve_sentence`);
* **consistent** — the estimate certified a bound within the claim and the audited code behaved
  (no blocking finding);
* **inconclusive** — nothing was certified (no usable release, a search that found no pair, a
  budget too small), or a blocking finding keeps the bound from vouching for the claim.

``incomplete`` (exit status 3): a blocking finding, or no usable release at all.
"""

from __future__ import annotations

import math

from dpaudit.execution.verdict import Verdict
from dpaudit.result_shapes import Conclusion, as_number
from dpaudit.run_shapes import RunResults

from .ending import ending
from .sentences import consistent_text, curve_sentence, first_sentence, inconclusive_text, notion_text, violation_text

__all__ = ["conclude"]


def conclude(results: RunResults) -> Conclusion:
    """``results["conclusion"]`` for an estimate-eps results dict."""
    claim = results.get("claim") or {}
    eps = as_number(claim.get("epsilon", math.inf))
    blocking = sorted({str(f.get("kind")) for f in results.get("findings") or [] if f.get("blocking", True)})
    failures = [f"the audited code misbehaved ({', '.join(blocking)}; see the findings)"] if blocking else []
    no_release = results.get("status") == "no usable release"
    if no_release:
        failures.insert(0, "the audited code produced no usable release")
    incomplete = bool(failures)
    confidence = as_number(results.get("confidence") or 0.95)
    bound = results.get("epsilon_lower_bound")
    source = f"ε estimate on the pair {(results.get('pair') or {}).get('name', '?')}"
    verdict = results.get("verdict")
    if math.isinf(eps):
        return ending(Verdict.NO_CLAIM, "No privacy claim (ε = ∞): nothing to violate.", incomplete=incomplete,
                      reasons=failures)
    refusal = (results.get("event") or {}).get("refusal")
    also = (results.get("search") or {}).get("also_certified") or []
    if verdict == Verdict.VIOLATION:
        text = violation_text(claim, bound, source, confidence)
        if refusal:  # the evidence is that the code raised on one dataset and released on the other: say so
            head = f"{Verdict.VIOLATION.word} through refusals: {refusal}; "
            text = (head + text if notion_text(claim)
                    else f"{head}t{text[len(Verdict.VIOLATION.word + ': t'):]}")
            on_releases = next((a for a in also if a.get("evidence") == "releases"), None)
            if on_releases is not None:  # what the code releases, certified beside the refusal
                text += (f"; on releases both sides answer, ε_lb = {float(on_releases['epsilon_lower_bound']):.3g} "
                         f"(the pair {on_releases['pair']})")
        else:  # a claim in a notion: the verdict on its curve, in its own words
            text = curve_sentence(claim, results, Verdict.VIOLATION) or text
            if any(a.get("evidence") == "refusal" and a.get("exceeds_claim") for a in also):
                text += "; the code's refusal of a dataset is a second channel (see the findings)"
        return ending(Verdict.VIOLATION, text, incomplete=incomplete, reasons=failures)
    if verdict == Verdict.NO_VIOLATION and not failures:
        text = curve_sentence(claim, results, Verdict.NO_VIOLATION) or consistent_text(
            claim, bound, source, confidence, "rare events can be missed: a lower bound is no proof of privacy")
        return ending(Verdict.NO_VIOLATION, text, incomplete=False)
    why = failures or [first_sentence(str(results.get("guarantee") or "")) or "no bound was certified"]
    return ending(Verdict.INCONCLUSIVE, inconclusive_text(claim, why, None if no_release else bound),
                  incomplete=incomplete, reasons=why)
