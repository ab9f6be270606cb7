"""Summaries of ``dpaudit attack`` repeats: one JSON-ready entry per attack.

Means over repeats, per-repeat values, errors; for membership attacks the
pooled one-run ε bound (:func:`dpaudit.attacks.membership.metrics.aggregate`) and whether it
may be compared with the mechanism's claim (:func:`dpaudit.attacks.membership.metrics.one_run_comparison`);
the notes and the set-up every attack run's results carry (:func:`run_notes`, :func:`run_setup`).
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from dpaudit.attacks.membership.metrics import MembershipMetrics, aggregate, one_run_comparison
from dpaudit.attacks.reconstruction import ReconstructionResult
from dpaudit.result_shapes import AttackSummary, as_number

from .config import AttackConfig
from .internal import is_internal_message
from .repeat import RepeatOutcome

__all__ = ["CHANCE_RULE", "at_chance", "package_versions", "run_notes", "run_setup", "summarise"]

CHANCE_RULE = ("AUC within two standard errors of 0.5 (Hanley & McNeil 1982, on the members and non-members "
               "of all repeats) or an advantage ≤ 0: indistinguishable from guessing")


def at_chance(entry: AttackSummary) -> bool:
    """Whether a membership attack's numbers are chance (:data:`CHANCE_RULE`)."""
    counts = entry.get("counts") or {}
    auc, n1, n2 = entry.get("auc"), counts.get("n_members"), counts.get("n_non_members")
    if auc is None or not n1 or not n2:
        return False
    a = float(auc)
    q1, q2 = a / (2.0 - a), 2.0 * a * a / (1.0 + a)
    var = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n2 - 1) * (q2 - a * a)) / (n1 * n2)
    return bool(abs(a - 0.5) <= 2.0 * math.sqrt(max(var, 0.0)) or as_number(entry.get("advantage", 0.0)) <= 0.0)


def summarise(name: str, outcomes: list[RepeatOutcome], alpha: float) -> AttackSummary:
    """One ``attacks`` entry: means over repeats, per-repeat values, errors.

    ``repeats_failed`` counts the repeats the attack could not finish, ``internal_errors`` those
    of them stopped by a bug in dpaudit (:mod:`dpaudit.attack.internal`), and
    ``repeats_not_applicable`` (with ``reason``) those whose release it does not score.
    """
    done = [o.results[name] for o in outcomes if name in o.results]
    errors = [o.errors[name] for o in outcomes if name in o.errors]
    entry: AttackSummary = {"name": name, "repeats_ok": len(done), "repeats_failed": len(errors)}
    if errors:
        entry["errors"] = sorted(set(errors))
        internal = sum(is_internal_message(e) for e in errors)
        if internal:  # dpaudit's own bug, not the audited code's: counted apart (tracebacks: the run's log)
            entry["internal_errors"] = internal
    variants = [o.details[name]["variant"] for o in outcomes if name in o.details]
    if variants:
        entry["variant"] = max(set(variants), key=variants.count)
    details = next((o.details[name] for o in outcomes if name in o.details), {})
    for key in ("score", "score_unit"):
        if key in details:
            entry[key] = details[key]
    calls = [o.details[name]["mechanism_calls"] for o in outcomes if "mechanism_calls" in o.details.get(name, {})]
    if calls:
        entry["mechanism_calls_per_repeat"] = calls
    reasons = sorted({o.not_applicable[name] for o in outcomes if name in o.not_applicable})
    if not done:
        entry["status"] = "not-applicable" if reasons and not errors else "error"
        if reasons:
            entry["reason"] = "; ".join(reasons)
        return entry
    entry["status"] = "ok"
    if reasons:  # a release of another size in some repeats (e.g. synthetic points): said, not hidden
        entry["repeats_not_applicable"] = sum(name in o.not_applicable for o in outcomes)
        entry["reason"] = "; ".join(reasons)
    if name == "reconstruction":
        recs = [r for r in done if isinstance(r, ReconstructionResult)]
        stats: dict[str, float] = {}  # each rate's mean and its ``_std``, under names built from the rate's
        for key in ("success_rate", "median_error", "baseline_success_rate", "baseline_median_error",
                    "linkage_success_rate"):
            values = [getattr(r, key) for r in recs if getattr(r, key) is not None]
            if values:
                stats[key] = float(np.mean(values))
                stats[f"{key}_std"] = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
        entry.update(cast(AttackSummary, stats))  # the keys AttackSummary names for reconstruction
        entry["method"] = recs[0].method
        entry["radius"] = float(np.mean([r.radius for r in recs]))
        entry["per_repeat"] = [r.to_dict() for r in recs]
        return entry
    mets = [r for r in done if isinstance(r, MembershipMetrics)]
    entry.update(cast(AttackSummary, aggregate(mets, alpha=alpha)))  # the membership metrics' summary keys
    claim = next((o.claim for o in outcomes if o.claim), {})
    kind = next((o.release_kind for o in outcomes if o.release_kind), None)
    comparable, why = one_run_comparison(claim, kind)
    entry["epsilon_lower_bound_comparable"] = comparable
    entry["epsilon_lower_bound_scope"] = why
    if comparable and math.isfinite(float(claim.get("epsilon", math.inf))):
        entry["epsilon_lower_bound_exceeds_claim"] = bool(as_number(entry["epsilon_lower_bound"]) > float(claim["epsilon"]))
    entry["chance"] = at_chance(entry)
    entry["chance_rule"] = CHANCE_RULE
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


def run_notes(config: AttackConfig) -> list[str]:
    """What the numbers of an attack run mean (the ``notes`` of its results)."""
    return [
        "advantage = TPR − FPR at the threshold chosen on the attacker's own runs (shadow targets; "
        "lira/rmia: their reference runs, each in turn the pseudo-target), mean over repeats; advantage_same_data is the optimistic maximum over thresholds on the scored data itself",
        f"epsilon_lower_bound: one-run bound (Steinke, Nasr & Jagielski 2023, Thm. 3.1) at confidence "
        f"{(1 - config.alpha) * 100:.4g}% from the correct member/non-member guesses at the shadow-chosen threshold, "
        "pooled over repeats (per repeat in epsilon_lower_bound_per_repeat); it bounds add/remove ε and "
        "is compared with the claim only where epsilon_lower_bound_comparable is true",
        "epsilon_lower_bound_abstaining (yeom, lira, rmia, tracing; label-only on spans/labels): the same bound "
        "for guesses on the top/bottom shares of the ranked scores only, shares chosen on the attacker's own "
        "runs; each bound holds at the stated confidence on its own (the larger of the two at twice the error "
        "rate)",
        "tpr_at_*_fpr_band: the TPR pooled over repeats at that FPR with its two-sided Clopper–Pearson band; "
        "chance: AUC within two standard errors of 0.5 or advantage ≤ 0 (nothing beyond guessing)",
        "advantage, AUC and TPR at low FPR describe the attack on the scored candidates; they are not "
        "certificates",
        "advantage_ceiling = (e^ε − 1)/(e^ε + 1) for the claimed ε; for a metric (d_x) claim it is the "
        "ceiling for two records at unit distance",
    ]


def run_setup(config: AttackConfig, n_records: int, k: int) -> dict[str, Any]:
    """How the run is set up: the split, the queries, the reference runs, the threshold."""
    return {"n_classes": k,
            "split": {"shadow_records": config.attack.split_sizes(n_records)[0],
                      "candidates": 2 * config.attack.split_sizes(n_records)[1],
                      "membership": "independent fair coin per candidate (from the split seed)"},
            "queries": "candidates queried with their plain records; every attack scores every candidate "
                       f"but label-only, which scores the first {2 * config.attack.label_only_queries} of the "
                       "seeded shuffle (chosen without looking at membership)",
            "reference_runs": {"runs": config.attack.reference_runs, "n_jobs": config.run.n_jobs,
                               "design": "lira and rmia: the mechanism on the candidates each run's own "
                                         "inclusion row selects (every candidate in half of the runs), "
                                         "drawn from the repeat's reference seed, independent of the "
                                         "target's coins"},
            "threshold": "chosen on shadow targets trained through the mechanism (lira, rmia: on their "
                         "reference runs, each in turn the pseudo-target)"}
