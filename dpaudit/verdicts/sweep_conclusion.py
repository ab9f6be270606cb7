"""The ``Conclusion:`` of ``dpaudit sweep``: NOT TESTED, always, and whether the sweep is complete.

A sweep measures privacy and utility per ε; its per-cell ε bounds are each certified at 95 % on their own,
not as one test over the sweep, so it states no verdict on the claim (``dpaudit audit`` or ``estimate-eps``
at one ε does).  ``incomplete`` (exit status 3): a cell failed or was not run, or the audited code misbehaved.
"""

from __future__ import annotations

from dpaudit.execution.verdict import Verdict
from dpaudit.result_shapes import Conclusion
from dpaudit.run_shapes import RunResults, SweepCell

from .ending import ending
from .sentences import notion_text

__all__ = ["conclude"]


def conclude(results: RunResults) -> Conclusion:
    """``results["conclusion"]`` of a sweep (:mod:`dpaudit.verdicts.ending`).  A sweep measures; it certifies no
    verdict on the claim — its per-cell ε bounds are each at 95 % confidence, not a test over the
    sweep — so it is ``NOT TESTED``, and ``incomplete`` (exit status 3) when a cell failed or was
    not run or the audited code misbehaved."""
    sw = results["sweep"]
    counts = (("failed", sw["cells_failed"]), ("partly measured", sw["cells_partial"]), ("not run", sw["cells_missing"]))
    why = [f"{count} of {sw['cells_total']} cells {what}" for what, count in counts if count]
    kinds = sorted({f["kind"] for f in results["findings"] if f["blocking"] and f["kind"] != "incomplete"})
    if kinds:
        why.append(f"the audited code misbehaved ({', '.join(kinds)}; see the findings)")
    if results["status"] not in ("complete", "partial"):
        why.append(f"status: {results['status']}")
    done = (f"{sw['cells_done'] - sw['cells_failed']} of {sw['cells_total']} cells measured"
            + (f" — incomplete: {'; '.join(why)}" if why else ""))
    notion = notion_text((results.get("mechanism") or {}).get("claim") or {})
    text = (f"{Verdict.NOT_TESTED.word}: a sweep measures privacy and utility per ε and certifies no verdict on the "
            "claim"
            f"{f' {notion}' if notion else ''} (dpaudit audit or estimate-eps at one ε does); "
            f"{_curve_cells(sw['cells']) if notion else ''}{done}.")
    return ending(Verdict.NOT_TESTED, text, incomplete=not results["complete_and_clean"], reasons=why)


def _curve_cells(cells: list[SweepCell]) -> str:
    """What the cells' estimates measured of a notion's trade-off curve, each on its own (95 % per cell, not a
    test over the sweep): ``in 3 of 9 cells the certified test lay below it (largest certified μ ≥ 1.2); ``."""
    judged = [c["metrics"] for c in cells if isinstance(c.get("metrics"), dict) and "curve_below_claim" in c["metrics"]]
    if not judged:
        return ""
    below = sum(1 for m in judged if m["curve_below_claim"])
    mu = max(float(m.get("mu_lower_bound") or 0.0) for m in judged)
    return (f"its trade-off curve: in {below} of {len(judged)} cells the certified test lay below it, each cell at "
            f"95% confidence on its own (largest certified μ ≥ {mu:.3g}); ")
