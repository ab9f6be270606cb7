"""The parts of an audit, each filling its share of the results dict and verdict table.

1. :func:`smoke` — one release on the data: does the code run, what does it release?
2. :func:`epsilon` — :func:`dpaudit.attacks.epsilon.estimate_epsilon`: a certified lower
   bound on ε for the claim's neighbour relation, and its verdict.
3. :func:`attacks` — membership inference (Shokri, Yeom, label-only) and
   reconstruction, as ``dpaudit attack`` runs them (:mod:`dpaudit.attack.repeat`);
   the ε their TPR/FPR certify is compared with the claim when the claim is
   add-remove or replace DP (a metric claim promises nothing about membership).
4. :func:`utility` — where the data has labels: ARI/AMI/F-measure of the release's
   partition against the ground truth and against non-private KMeans.

Every call into the audited code goes through the execution layer; each part
returns the :class:`~dpaudit.execution.Findings` of its calls that the caller's
:func:`~dpaudit.execution.recording` does not see (the estimator's chunked draws,
repeats run in other processes).  The certified tests that can decide (ε estimation, each
membership attack that applies to the release and the claim) run at the per-test ``alpha`` —
the audit's α split over them (:mod:`dpaudit.verdicts.audit_conclusion`); every attack figure, the
per-repeat bounds included, is computed at that level.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, cast

import numpy as np

from dpaudit.attack.internal import in_repeat
from dpaudit.data.datasets import Dataset
from dpaudit.execution import Findings, map_seeds, release_once
from dpaudit.execution.seeds import Stream
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import Labels, Mechanism, Points
from dpaudit.options import AttackOptions
from dpaudit.result_shapes import AttackSummary, as_number
from dpaudit.utility import clusterers as cl
from dpaudit.utility.metrics import partition_metrics
from dpaudit.verdicts.audit_conclusion import FAILED_EVERY_REPEAT, FAILED_INTERNAL
from dpaudit.verdicts.sentences import claim_at

from .config import AuditConfig
from .results import AuditResults

__all__ = ["AttackRepeat", "InternalPartFailure", "MechanismPartFailure", "attacks", "epsilon", "smoke", "utility"]


def smoke(cfg: AuditConfig, mech: Mechanism, data: Dataset, results: AuditResults) -> Findings:
    t0 = time.perf_counter()
    rel = release_once(mech, data.X, Stream.AUDIT_SMOKE.of(cfg.seed), call="smoke release")
    results.smoke = {"status": "ok", "release_kind": rel.kind, "seconds_per_release": time.perf_counter() - t0}
    return Findings()


def epsilon(cfg: AuditConfig, mech: Mechanism, data: Dataset, results: AuditResults, progress: Any,
            alpha: float) -> Findings:
    """The certified ε estimate, exactly as ``dpaudit attack`` runs it (:func:`dpaudit.attack.certify.estimate_for_attack`:
    a seeded subset of 30 records, the same time budget as ``estimate-eps``), so the commands agree.
    ``progress``: the audit's :class:`~dpaudit.progress.RunProgress` (its ``update`` counts chunks)."""
    from dpaudit.attack.certify import estimate_for_attack

    bounds = cfg.data.bounds
    est = estimate_for_attack(
        lambda: mech, data.X, seed=cfg.seed, budget=dataclasses.replace(cfg.budget, confidence=1.0 - alpha),
        search=dataclasses.replace(cfg.search, bounds=bounds if bounds is not None else data.bounds),
        run=dataclasses.replace(cfg.run, progress=progress if getattr(progress, "mode", "off") != "off" else False),
        claim=cfg.claim.claim(mech.claim))
    internal = est.pop("internal_error", None)
    results.epsilon_estimate = est
    if internal is not None:  # a bug in dpaudit broke the part: said so, the traceback kept for the log
        results.internal_errors.append(internal)
        raise InternalPartFailure(str(est.get("error")))
    if est.get("status") == "error":  # the audited code broke the part: a failed part, with its reason
        raise MechanismPartFailure(str(est.get("error")), Findings.from_list(est.get("findings") or []))
    results.verdict_table.append({
        "part": "ε estimation", "statistic": f"certified ε lower bound ({_confidence(alpha)})",
        "value": est["epsilon_lower_bound"], "claim": claim_at(results.mechanism["claim"]),
        "verdict": est["verdict"]})
    return Findings.from_list(est.get("findings", []))


def _confidence(alpha: float) -> str:
    """``98.8 % per test`` — the per-test confidence (the line under the verdict table says how α
    was split)."""
    return f"{(1 - alpha) * 100:.4g} % per test"


class MechanismPartFailure(RuntimeError):
    """A part the audited code kept from finishing; ``findings``: what its calls showed."""

    def __init__(self, message: str, findings: Findings) -> None:
        super().__init__(message)
        self.findings = findings


class InternalPartFailure(RuntimeError):
    """A part stopped by an error inside dpaudit (its message from :mod:`dpaudit.attack.internal`;
    the traceback is already in ``results.internal_errors``)."""


class AttackRepeat:
    """``task(seed) -> RepeatOutcome``: one attack repeat as a picklable chunk (joblib or Dask), every figure at
    level ``alpha``."""

    def __init__(self, options: AttackOptions, data: Dataset, mech: Mechanism, alpha: float) -> None:
        self.options, self.data, self.mech, self.alpha = options, data, mech, alpha

    def __call__(self, seed: np.random.SeedSequence) -> Any:
        from dpaudit.attack.repeat import run_repeat
        return run_repeat(self.options, self.data.X, self.data.default_k, seed, lambda: self.mech, alpha=self.alpha)


def attacks(cfg: AuditConfig, mech: Mechanism, data: Dataset, results: AuditResults, progress: Any,
            alpha: float) -> Findings:
    """``progress``: the audit's :class:`~dpaudit.progress.RunProgress`; its ``update`` counts repeats."""
    from dpaudit.attack.summary import summarise
    options = cfg.attack
    options.split_sizes(data.n_records)  # too few records: a clear reason, recorded by the caller
    seeds = [Stream.REPEAT.of(cfg.seed, r) for r in range(options.repeats)]
    # per-repeat figures at the audit's per-test level too
    outcomes = map_seeds(AttackRepeat(options, data, mech, alpha), seeds, n_jobs=cfg.run.n_jobs,
                         scheduler=cfg.run.scheduler,
                         progress=progress if getattr(progress, "mode", "off") != "off" else None)
    calls = Findings.merged(o.findings for o in outcomes)
    internal = [in_repeat(e, r + 1) for r, o in enumerate(outcomes) for e in o.internal]
    if internal:  # bugs in dpaudit, not the audited code: their tracebacks go to the run's log
        results.internal_errors.extend(internal)
    entries = [summarise(name, outcomes, alpha) for name in options.attacks]
    summaries = [_without_repeats(e) for e in entries]
    results.attacks = summaries
    claim = results.mechanism["claim"]
    for e in summaries:
        if e.get("status") == "not-applicable":  # e.g. tracing on centroids: no test, no doubt either
            results.verdict_table.append({
                "part": f"{'membership: ' if e['name'] != 'reconstruction' else ''}{e['name']}",
                "statistic": "not applicable", "value": str(e.get("reason", "")), "claim": claim_at(claim),
                "verdict": "not applicable"})
            continue
        if e.get("status") != "ok":  # failed in every repeat: a row that keeps the verdict from being clean
            why = "; ".join(str(x) for x in (e.get("errors") or [])[:1]) or "no repeat finished"
            internal_only = bool(e.get("internal_errors")) and e.get("internal_errors") == e.get("repeats_failed")
            results.verdict_table.append({
                "part": f"{'membership: ' if e['name'] != 'reconstruction' else ''}{e['name']}",
                "statistic": FAILED_INTERNAL if internal_only else FAILED_EVERY_REPEAT, "value": why,
                "claim": claim_at(claim), "verdict": Verdict.INCONCLUSIVE})
            continue
        if e["name"] == "reconstruction":
            results.verdict_table.append({
                "part": "reconstruction", "statistic": "success rate (prior baseline)",
                "value": f"{e.get('success_rate', float('nan')):.3g} ({e.get('baseline_success_rate', float('nan')):.3g})",
                "claim": "–", "verdict": "informational"})
            continue
        lb = float(e.get("epsilon_lower_bound") or 0.0)
        # One-run bound (Steinke et al. 2023): add/remove only; attack.summary says when it is comparable.
        verdict = (str(e.get("epsilon_lower_bound_scope", "not comparable")).split(":")[0]
                   if not e.get("epsilon_lower_bound_comparable")
                   else Verdict.VIOLATION if lb > as_number(claim["epsilon"]) else Verdict.NO_VIOLATION)
        results.verdict_table.append({
            "part": f"membership: {e['name']}",
            "statistic": f"one-run ε lower bound ({_confidence(alpha)}, add/remove)", "value": lb,
            "claim": claim_at(claim), "verdict": verdict})
    failed = {e["name"]: e for e in summaries if e.get("repeats_failed")}
    results.attack_repeats_failed = {name: e["repeats_failed"] for name, e in failed.items()}
    if failed:  # a repeat that could not finish is a finding (the caller records it in repeats)
        first = next(iter(failed.values()))
        results.attack_repeats_error = (f"{first['name']}: "
                                           + "; ".join(str(x) for x in (first.get("errors") or [])[:1]))
    return calls


def _without_repeats(entry: AttackSummary) -> AttackSummary:
    """An attack's summary without its per-repeat figures (the audit reports the pooled ones)."""
    out = entry.copy()
    out.pop("per_repeat", None)
    return out


def _nearest_cluster(points: np.ndarray, X: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The records partitioned by KMeans on a release of another number of points than records: each
    record's label is its nearest cluster centre of the points (all noise, −1, when none was released)."""
    if len(points) == 0:
        return np.full(len(X), -1, dtype=np.int64)
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=min(k, len(points)), n_init=4, random_state=seed).fit(points)
    return km.predict(np.asarray(X, dtype=np.float64)).astype(np.int64)


def utility(cfg: AuditConfig, mech: Mechanism, data: Dataset, results: AuditResults) -> Findings:
    if data.y is None:
        results.utility = {"status": "skipped: the data has no labels"}
        return Findings()
    k = data.default_k
    reference = cl.cluster("kmeans", data.X, n_clusters=k, seed=cfg.seed)
    rows: list[dict[str, Any]] = []
    for r in range(cfg.utility_repeats):
        rel = release_once(mech, data.X, Stream.AUDIT_UTILITY.of(cfg.seed, r), call="utility release")
        if rel.kind == "points" and len(cast(Points, rel).points) == len(data.X):  # one perturbed point per record
            labels = cl.cluster("kmeans", cast(Points, rel).points, n_clusters=k, seed=cfg.seed + r)
        elif rel.kind == "points":  # synthetic points: each record takes the cluster of the points nearest it
            labels = _nearest_cluster(cast(Points, rel).points, data.X, k, cfg.seed + r)
        elif rel.kind == "labels":
            labels = cast(Labels, rel).labels
        elif rel.kind in ("centroids", "spans"):
            labels = rel.predict(data.X)
        else:
            results.utility = {"status": f"skipped: a {rel.kind} release has no partition"}
            return Findings()
        m = partition_metrics(np.asarray(labels), reference=reference, truth=data.y, internal_on=None)
        rows.append({"ARI vs truth": m["ari_truth"], "ARI vs non-private KMeans": m["ari"],
                     "AMI vs non-private KMeans": m["ami"], "F-measure": m["f_measure"]})
    how = "KMeans on the released points" if rel.kind == "points" else f"the released {rel.kind}"
    # (synthetic points of another number than records: the records take their nearest KMeans centre)
    results.utility = {how: {key: float(np.mean([row[key] for row in rows])) for key in rows[0]},
                          "repeats": cfg.utility_repeats}
    return Findings()
