"""The report's part on a claim stated in a notion (ρ-zCDP, μ-GDP, Rényi DP, a privacy profile): its trade-off
curve against the estimated one, the empirical privacy profile, the certified μ lower bound and the Rényi bounds.

They are drawn and stated only when the claim is in a notion (the curve then decides the verdict:
``curve.decides_verdict`` in the estimate, :mod:`dpaudit.attacks.epsilon.result.curve_result`); a claim in (ε, δ) keeps
its report as it was.  Everything here is the estimate's rates and counts, never an audited record.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.execution.verdict import Verdict
from dpaudit.result_shapes import CurveVerdict, EmbeddedEstimate, TradeoffCurve
from dpaudit.run_shapes import RunResults

from .drawing import WIDTH_IN, Figure, figure_style, to_png
from .numbers import MISSING, sig
from .section import Section, Table

__all__ = ["curve_columns", "curve_figure", "curve_section", "notion_curve"]


def notion_curve(results: RunResults) -> tuple[RunResults | EmbeddedEstimate, CurveVerdict] | None:
    """(the estimate, its ``curve``) when the run's claim is in a notion and the estimate judged its curve; else
    None (an (ε, δ) claim, no estimate, an estimate that certified nothing)."""
    est = results if results.get("kind") == "estimate-eps" else results.get("epsilon_estimate")
    if not isinstance(est, dict) or not isinstance((est.get("claim") or {}).get("notion"), dict):
        return None
    curve = est.get("curve")
    if not isinstance(curve, dict) or not curve.get("decides_verdict") or not curve.get("certified_rates"):
        return None
    return est, curve


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def curve_figure(results: RunResults) -> Figure | None:
    """The claimed trade-off curve, the estimated one with its confidence band and the certified point."""
    found = notion_curve(results)
    if found is None:
        return None
    est, curve = found
    claimed, estimated = est.get("claimed_curve") or {}, est.get("tradeoff_curve") or {}
    rates = curve["certified_rates"]
    point = (_number(rates.get("false_positive_rate_upper")), _number(rates.get("false_negative_rate_upper")))
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 6.0), layout="constrained")
        if claimed.get("false_positive_rate"):
            ax.plot(claimed["false_positive_rate"], claimed["false_negative_rate"], "k-", lw=1.8,
                    label=f"claimed curve: {curve.get('claim', '?')} (no test may lie below it)")
        if estimated.get("false_positive_rate"):
            _estimated(ax, estimated)
        ax.plot([point[0]], [point[1]], "s", ms=9, color="tab:red" if curve.get("verdict") == Verdict.VIOLATION
                else "tab:blue", label=f"certified point (FPR ≤ {point[0]:.3g}, FNR ≤ {point[1]:.3g}), "
                f"{100 * _number(curve.get('confidence')):.3g}% confidence")
        ax.plot([0, 1], [1, 0], ":", color="0.6", lw=1, label="random guessing")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("false-positive rate")
        ax.set_ylabel("false-negative rate")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right")
        png = to_png(fig)
    return Figure("tradeoff-curve", f"Trade-off curve: {curve.get('claim', 'the claim')}",
                  "Each point is a test of the two neighbouring datasets: its false-positive and false-negative "
                  "rate. The claim allows no test below its curve (black). The certified point (square) is the "
                  "selected event's upper limits on both rates; below the curve it is a violation. The blue line is "
                  "the selected statistic's estimated curve over its thresholds, the shaded band its confidence "
                  "region, simultaneous over the thresholds.", png)


def _estimated(ax: Any, estimated: TradeoffCurve) -> None:
    """The estimated curve and its band: the region between the curve through the lower limits and the one
    through the upper limits of both rates."""
    fpr, fnr = np.asarray(estimated["false_positive_rate"], float), np.asarray(estimated["false_negative_rate"], float)
    lo = np.column_stack([estimated["false_positive_rate_lower"], estimated["false_negative_rate_lower"]])
    hi = np.column_stack([estimated["false_positive_rate_upper"], estimated["false_negative_rate_upper"]])
    band = np.vstack([lo, hi[::-1]]).astype(float)
    conf = _number(estimated.get("confidence"))
    ax.fill(band[:, 0], band[:, 1], color="tab:blue", alpha=0.18, lw=0,
            label=f"confidence band ({100 * conf:.3g}%, all thresholds at once)")
    ax.plot(fpr, fnr, "-", color="tab:blue", lw=1.3, label="estimated curve (selected statistic)")


def curve_section(results: RunResults) -> Section | None:
    """The claim's curve in words and tables: the verdict on it, μ_lo, the empirical profile, the Rényi bounds."""
    found = notion_curve(results)
    if found is None:
        return None
    _, curve = found
    text = [str(curve.get("conclusion") or "")]
    mu = _number(curve.get("mu_lower_bound"))
    if mu > 0:
        text.append(f"Certified μ lower bound: μ ≥ {sig(mu)} (Gaussian DP; from the same two certified rates).")
    text.append("Empirical privacy profile (the first table): at each δ, the smallest ε an (ε, δ)-DP mechanism "
                "must have to allow the certified test — a lower bound on its ε at that δ — beside the claim's own ε "
                "there.")
    profile = curve.get("empirical_profile") or {}
    rows = [[sig(d), _eps(lb), _eps(c)] for d, lb, c in zip(profile.get("delta") or [],
                                                           profile.get("epsilon_lower_bound") or [],
                                                           profile.get("claimed_epsilon") or [])]
    tables: list[Table] = [{"header": ["δ", "certified ε lower bound", "claimed ε at δ"], "rows": rows}]
    renyi = curve.get("renyi")
    if isinstance(renyi, dict) and renyi.get("orders"):
        text.append(f"Rényi divergence (the second table): a lower bound at every order at once, {100 * _number(renyi.get('confidence')):.4g}"
                    f"% confidence, from the counts in {renyi.get('cells', '?')} cells.")
        tables.append({"header": ["order α", "certified D_α ≥", "claimed bound"],
                       "rows": [[sig(a), sig(lb), _eps(c)] for a, lb, c in zip(renyi["orders"],
                                                                         renyi.get("lower_bound") or [],
                                                                         renyi.get("claimed") or [])]})
    return {"title": f"The claimed trade-off curve ({curve.get('claim', '?')})", "text": text, "tables": tables}


def _eps(value: Any) -> str:
    """An ε of the profile or a Rényi bound: null there is infinite (the JSON has no ∞)."""
    number = math.inf if value is None else _number(value)
    return "∞" if number == math.inf else MISSING if math.isnan(number) else sig(number)


def curve_columns(results: RunResults) -> dict[str, Any]:
    """``results.csv``'s columns of a notion's certified figures: the claim, the verdict on its curve, the
    certified rates, μ_lo and the empirical profile's ε_lb at each δ (none for an (ε, δ) claim)."""
    found = notion_curve(results)
    if found is None:
        return {}
    _, curve = found
    rates = curve["certified_rates"]
    out: dict[str, Any] = {
        "run_notion_claim": curve.get("claim"), "run_curve_verdict": Verdict(curve.get("verdict")).word,
        "run_false_positive_rate_upper": rates.get("false_positive_rate_upper"),
        "run_false_negative_rate_upper": rates.get("false_negative_rate_upper"),
        "run_mu_lower_bound": curve.get("mu_lower_bound")}
    profile = curve.get("empirical_profile") or {}
    for delta, bound in zip(profile.get("delta") or [], profile.get("epsilon_lower_bound") or []):
        out[f"run_epsilon_lower_bound_at_delta_{delta:g}"] = bound
    return out
