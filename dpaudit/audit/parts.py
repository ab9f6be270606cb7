"""The parts of an audit, each filling its share of the results dict and verdict table.

1. :func:`smoke` — one release on the data: does the code run, what does it release?
2. :func:`epsilon` — :func:`attacks.epsilon.estimate_epsilon`: a certified lower
   bound on ε for the claim's neighbour relation, and its verdict.
3. :func:`attacks` — membership inference (Shokri, Yeom, label-only) and
   reconstruction, as ``dpaudit attack`` runs them (:mod:`dpaudit.attack.repeat`);
   the ε their TPR/FPR certify is compared with the claim when the claim is
   add-remove or replace DP (a metric claim promises nothing about membership).
4. :func:`utility` — where the data has labels: ARI/AMI/F-measure of the release's
   partition against the ground truth and against non-private KMeans.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from dpaudit.attack.config import AttackConfig
from dpaudit.data.datasets import Dataset
from dpaudit.utility import clusterers as cl
from dpaudit.utility.metrics import partition_metrics
from attacks.execution import WorkerMechanism

from .config import AuditConfig
from .verdict import NO_VIOLATION, VIOLATION, claim_at

__all__ = ["attack_step", "attacks", "epsilon", "smoke", "utility"]


def attack_step(repeat: int, cfg: AuditConfig, name: str) -> str:
    """The progress step of one attack in one repeat."""
    return f"attacks, repeat {repeat + 1}/{cfg.attack_repeats} · {name}"


def smoke(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    rel = mech.release(data.X, np.random.default_rng(np.random.SeedSequence(cfg.seed, spawn_key=(0,))))
    results["smoke"] = {"status": "ok", "release_kind": rel.kind, "seconds_per_release": time.perf_counter() - t0}


def epsilon(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any],
            progress: Any) -> None:
    """``progress``: the audit's :class:`~dpaudit.progress.RunProgress` (its ``update`` counts chunks)."""
    from attacks.epsilon import estimate_epsilon
    est = estimate_epsilon(mech, data.X, samples=cfg.samples, confidence=cfg.confidence, bounds=data.bounds,
                           seed=cfg.seed, n_jobs=1,
                           progress=progress if getattr(progress, "mode", "off") != "off" else False).to_dict()
    est["pair"] = {k: v for k, v in (est.get("pair") or {}).items() if not isinstance(v, (list, dict))}
    est.pop("candidates", None)
    est["status"] = "ok"
    results["epsilon_estimate"] = est
    results["verdict_table"].append({
        "part": "ε estimation", "statistic": f"certified ε lower bound ({cfg.confidence:.0%})",
        "value": est["epsilon_lower_bound"], "claim": claim_at(results["mechanism"]["claim"]),
        "verdict": est["verdict"]})


def attacks(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any],
            progress: Any) -> None:
    """``progress``: the audit's :class:`~dpaudit.progress.RunProgress`; each repeat's attacks are its steps."""
    from dpaudit.attack.repeat import run_repeat
    from dpaudit.attack.summary import summarise
    attack_cfg = AttackConfig(mechanism=cfg.mechanism, epsilon=cfg.epsilon, attacks=cfg.attacks,
                              dataset=data.name, records=data.n_records, repeats=cfg.attack_repeats,
                              seed=cfg.seed, output=cfg.output, neighbours=cfg.neighbours)
    attack_cfg.split_sizes(data.n_records)  # too few records: a clear reason, recorded by the caller
    k = data.default_k
    seeds = np.random.SeedSequence(cfg.seed).spawn(cfg.attack_repeats)
    outcomes = []
    for r, seed in enumerate(seeds):
        outcomes.append(run_repeat(attack_cfg, data.X, k, seed, lambda: mech,
                                   on_step=lambda name, r=r: progress.start(attack_step(r, cfg, name)),
                                   progress=progress.hook))
    entries = [summarise(name, outcomes, 1.0 - cfg.confidence) for name in cfg.attacks]
    results["attacks"] = [{k: v for k, v in e.items() if k != "per_repeat"} for e in entries]
    claim = results["mechanism"]["claim"]
    for e in results["attacks"]:
        if e.get("status") != "ok":
            continue
        if e["name"] == "reconstruction":
            results["verdict_table"].append({
                "part": "reconstruction", "statistic": "success rate (prior baseline)",
                "value": f"{e.get('success_rate', float('nan')):.3g} ({e.get('baseline_success_rate', float('nan')):.3g})",
                "claim": "–", "verdict": "informational"})
            continue
        lb = float(e.get("epsilon_lower_bound") or 0.0)
        # One-run bound (Steinke et al. 2023): add/remove only; attack.summary says when it is comparable.
        verdict = (str(e.get("epsilon_lower_bound_scope", "not comparable")).split(":")[0]
                   if not e.get("epsilon_lower_bound_comparable")
                   else VIOLATION if lb > claim["epsilon"] else NO_VIOLATION)
        results["verdict_table"].append({
            "part": f"membership: {e['name']}",
            "statistic": f"one-run ε lower bound ({cfg.confidence:.0%}, add/remove)", "value": lb,
            "claim": claim_at(claim), "verdict": verdict})


def utility(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any]) -> None:
    if data.y is None:
        results["utility"] = {"status": "skipped: the data has no labels"}
        return
    k = data.default_k
    reference = cl.cluster("kmeans", data.X, k=k, seed=cfg.seed)
    rows: list[dict[str, Any]] = []
    for r in range(cfg.utility_repeats):
        rng = np.random.default_rng(np.random.SeedSequence(cfg.seed, spawn_key=(3, r)))
        rel = mech.release(data.X, rng)
        if rel.kind == "points":
            labels = cl.cluster("kmeans", rel.points, k=k, seed=cfg.seed + r)
        elif rel.kind == "labels":
            labels = rel.labels
        elif rel.kind in ("centroids", "spans"):
            labels = rel.predict(data.X)
        else:
            results["utility"] = {"status": f"skipped: a {rel.kind} release has no partition"}
            return
        m = partition_metrics(np.asarray(labels), reference=reference, truth=data.y, internal_on=None)
        rows.append({"ARI vs truth": m["ari_truth"], "ARI vs non-private KMeans": m["ari"],
                     "AMI vs non-private KMeans": m["ami"], "F-measure": m["f_measure"]})
    how = "KMeans on the released points" if rel.kind == "points" else f"the released {rel.kind}"
    results["utility"] = {how: {key: float(np.mean([row[key] for row in rows])) for key in rows[0]},
                          "repeats": cfg.utility_repeats}
