"""Summaries of ``dpaudit attack`` repeats: one JSON-ready entry per attack.

Means over repeats, per-repeat values, errors; for membership attacks the
pooled one-run ε bound (:func:`attacks.metrics.aggregate`) and whether it
may be compared with the mechanism's claim (:func:`attacks.metrics.one_run_comparison`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attacks.metrics import MembershipMetrics, aggregate, one_run_comparison
from attacks.reconstruction import ReconstructionResult

from .repeat import RepeatOutcome

__all__ = ["package_versions", "summarise"]


def summarise(name: str, outcomes: list[RepeatOutcome], alpha: float) -> dict[str, Any]:
    """One ``attacks`` entry: means over repeats, per-repeat values, errors."""
    done = [o.results[name] for o in outcomes if name in o.results]
    errors = [o.errors[name] for o in outcomes if name in o.errors]
    entry: dict[str, Any] = {"name": name, "repeats_ok": len(done), "repeats_failed": len(errors)}
    if errors:
        entry["errors"] = sorted(set(errors))
    variants = [o.details[name]["variant"] for o in outcomes if name in o.details]
    if variants:
        entry["variant"] = max(set(variants), key=variants.count)
    if not done:
        reasons = sorted({o.not_applicable[name] for o in outcomes if name in o.not_applicable})
        entry["status"] = "not-applicable" if reasons and not errors else "error"
        if reasons:
            entry["reason"] = "; ".join(reasons)
        return entry
    entry["status"] = "ok"
    if name == "reconstruction":
        recs = [r for r in done if isinstance(r, ReconstructionResult)]
        for key in ("success_rate", "median_error", "baseline_success_rate", "baseline_median_error",
                    "linkage_success_rate"):
            values = [getattr(r, key) for r in recs if getattr(r, key) is not None]
            if values:
                entry[key] = float(np.mean(values))
                entry[f"{key}_std"] = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
        entry["method"] = recs[0].method
        entry["radius"] = float(np.mean([r.radius for r in recs]))
        entry["per_repeat"] = [r.to_dict() for r in recs]
        return entry
    mets = [r for r in done if isinstance(r, MembershipMetrics)]
    entry.update(aggregate(mets, alpha=alpha))
    claim = next((o.claim for o in outcomes if o.claim), {})
    kind = next((o.release_kind for o in outcomes if o.release_kind), None)
    comparable, why = one_run_comparison(claim, kind)
    entry["epsilon_lower_bound_comparable"] = comparable
    entry["epsilon_lower_bound_scope"] = why
    if comparable and math.isfinite(float(claim.get("epsilon", math.inf))):
        entry["epsilon_lower_bound_exceeds_claim"] = bool(entry["epsilon_lower_bound"] > float(claim["epsilon"]))
    entry["per_repeat"] = [m.to_dict() for m in mets]
    return entry


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for pkg in ("numpy", "scipy", "scikit-learn", "adversarial-robustness-toolbox", "joblib"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out
