"""``dpaudit audit``: the full battery on someone else's code, with a verdict on top (DESIGN §5).

Parts, each run on a :class:`~attacks.execution.worker.WorkerMechanism` (every call in a
worker process under a timeout, optionally in the audited code's own
interpreter) and written to ``results.json`` as soon as it finishes:

1. ``smoke`` — one release on the data: does the code run, what does it release?
2. ``epsilon`` — :func:`attacks.epsilon.estimate_epsilon`: a certified lower
   bound on ε for the claim's neighbour relation, and its verdict.
3. ``attacks`` — membership inference (Shokri, Yeom, label-only) and
   reconstruction, as ``dpaudit attack`` runs them (:mod:`dpaudit.attack_run`);
   the ε their TPR/FPR certify is compared with the claim when the claim is
   add-remove or replace DP (a metric claim promises nothing about membership).
4. ``utility`` — where the data has labels: ARI/AMI/F-measure of the release's
   partition against the ground truth and against non-private KMeans.

Misbehaviour of the audited code (raises, hangs, NaN, wrong shape, crash)
becomes a *finding*; the part it broke is marked failed and the audit goes on.
The top-level ``verdict`` is ``violation`` when any certified bound exceeds
the claim, ``no violation found`` when at least one certified test ran and
none did, else ``inconclusive``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from attacks.execution import WorkerMechanism
from mechanisms.base import NEIGHBOURS, InvalidInputError, PrivacyClaim, check_epsilon
from mechanisms.plugins import check_output

from . import clusterers as cl
from .datasets import Dataset
from .report import capture_warnings, render_report
from .report.standin import release_2d
from .sweep_metrics import partition_metrics

__all__ = ["PARTS", "AuditConfig", "run_audit"]

PARTS: tuple[str, ...] = ("smoke", "epsilon", "attacks", "utility")
VIOLATION, NO_VIOLATION, INCONCLUSIVE = "violation", "no violation found", "inconclusive"


@dataclass(frozen=True)
class AuditConfig:
    """What ``dpaudit audit`` was asked to do."""

    mechanism: str
    epsilon: float
    output: str = "points"
    neighbours: str = "add-remove"
    delta: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    python: str | None = None
    timeout: float = 60.0
    samples: int = 2000
    confidence: float = 0.95
    attacks: tuple[str, ...] = ("shokri", "yeom", "label-only", "reconstruction")
    attack_repeats: int = 2
    utility_repeats: int = 3
    seed: int = 0
    parts: tuple[str, ...] = PARTS
    dataset: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, name="--eps"))
        if self.timeout <= 0 or not math.isfinite(self.timeout):
            raise InvalidInputError(f"--timeout must be a positive number of seconds, got {self.timeout!r}")
        if int(self.samples) != self.samples or self.samples < 100:
            raise InvalidInputError(f"--samples must be a whole number ≥ 100, got {self.samples!r}")
        check_output(self.output)
        if self.neighbours not in NEIGHBOURS:
            raise InvalidInputError(f"--neighbours must be one of {', '.join(NEIGHBOURS)}; got {self.neighbours!r}")
        PrivacyClaim(self.epsilon, self.delta, self.neighbours)  # δ in [0, 1)
        from .attack_run import ATTACKS
        unknown = [a for a in self.attacks if a not in ATTACKS]
        if unknown:
            raise InvalidInputError(f"unknown attack {', '.join(unknown)}; choose from {', '.join(ATTACKS)}, "
                                    "all or none")
        if self.attacks and (int(self.attack_repeats) != self.attack_repeats or self.attack_repeats < 1):
            raise InvalidInputError(f"--attack-repeats must be a whole number ≥ 1, got {self.attack_repeats!r}")
        bad = [p for p in self.parts if p not in PARTS]
        if bad:
            raise InvalidInputError(f"unknown audit part(s) {', '.join(bad)}; choose from {', '.join(PARTS)}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["attacks"], d["parts"] = list(self.attacks), list(self.parts)
        return d


def _claim_at(claim: dict[str, Any]) -> str:
    eps = float(claim["epsilon"])
    unit = " per unit distance" if claim["neighbours"] == "metric" else ""
    return ("ε = ∞" if math.isinf(eps) else f"ε = {eps:g}") + unit


# --------------------------------------------------------------------------- #
# The parts
# --------------------------------------------------------------------------- #
def _smoke(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    rel = mech.release(data.X, np.random.default_rng(np.random.SeedSequence(cfg.seed, spawn_key=(0,))))
    results["smoke"] = {"status": "ok", "release_kind": rel.kind, "seconds_per_release": time.perf_counter() - t0}


def _epsilon(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any],
             progress: bool) -> None:
    from attacks.epsilon import estimate_epsilon
    est = estimate_epsilon(mech, data.X, samples=cfg.samples, confidence=cfg.confidence, bounds=data.bounds,
                           seed=cfg.seed, n_jobs=1,
                           progress=None if progress else False).to_dict()  # None: a bar only on a terminal
    est["pair"] = {k: v for k, v in (est.get("pair") or {}).items() if not isinstance(v, (list, dict))}
    est.pop("candidates", None)
    est["status"] = "ok"
    results["epsilon_estimate"] = est
    results["verdict_table"].append({
        "part": "ε estimation", "statistic": f"certified ε lower bound ({cfg.confidence:.0%})",
        "value": est["epsilon_lower_bound"], "claim": _claim_at(results["mechanism"]["claim"]),
        "verdict": est["verdict"]})


def _attacks(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any],
             progress: bool) -> None:
    from dpaudit.attack_run import AttackConfig, run_repeat, summarise
    attack_cfg = AttackConfig(mechanism=cfg.mechanism, epsilon=cfg.epsilon, attacks=cfg.attacks,
                              dataset=data.name, records=data.n_records, repeats=cfg.attack_repeats,
                              seed=cfg.seed, output=cfg.output, neighbours=cfg.neighbours)
    attack_cfg.split_sizes(data.n_records)  # too few records: a clear reason, recorded by the caller
    k = data.default_k
    seeds = np.random.SeedSequence(cfg.seed).spawn(cfg.attack_repeats)
    outcomes = []
    from tqdm.auto import tqdm
    import sys
    bar = tqdm(total=cfg.attack_repeats, desc="attacks", unit="repeat", file=sys.stderr,
               disable=not (progress and sys.stderr.isatty()), leave=False)
    try:
        for seed in seeds:
            outcomes.append(run_repeat(attack_cfg, data.X, k, seed, lambda: mech))
            bar.update(1)
    finally:
        bar.close()
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
        # One-run bound (Steinke et al. 2023): add/remove only; attack_run says when it is comparable.
        verdict = (str(e.get("epsilon_lower_bound_scope", "not comparable")).split(":")[0]
                   if not e.get("epsilon_lower_bound_comparable")
                   else VIOLATION if lb > claim["epsilon"] else NO_VIOLATION)
        results["verdict_table"].append({
            "part": f"membership: {e['name']}",
            "statistic": f"one-run ε lower bound ({cfg.confidence:.0%}, add/remove)", "value": lb,
            "claim": _claim_at(claim), "verdict": verdict})


def _utility(cfg: AuditConfig, mech: WorkerMechanism, data: Dataset, results: dict[str, Any]) -> None:
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


# --------------------------------------------------------------------------- #
# Orchestration
# --------------------------------------------------------------------------- #
def _verdict(results: dict[str, Any]) -> str:
    verdicts = [row["verdict"] for row in results["verdict_table"]]
    if VIOLATION in verdicts:
        return VIOLATION
    return NO_VIOLATION if NO_VIOLATION in verdicts else INCONCLUSIVE


def run_audit(cfg: AuditConfig, data: Dataset, out_dir: str | Path, *, progress: bool = True,
              provenance: dict[str, Any] | None = None,
              mechanism_factory: Callable[[], WorkerMechanism] | None = None) -> dict[str, Any]:
    """Run the battery into ``out_dir``; ``results.json`` is rewritten after every part.

    On Ctrl-C the parts that finished are rendered (status ``interrupted``)
    before the interrupt propagates.
    """
    out_dir = Path(out_dir)
    mech = (mechanism_factory or (lambda: WorkerMechanism(
        cfg.mechanism, epsilon=cfg.epsilon, output=cfg.output, neighbours=cfg.neighbours, delta=cfg.delta,
        params=cfg.params, python=cfg.python, timeout=cfg.timeout)))()
    prov = provenance if provenance is not None else {}
    prov.setdefault("durations_seconds", {})
    results: dict[str, Any] = {
        "kind": "audit", "title": f"Audit of {cfg.mechanism} at claimed ε = {cfg.epsilon:g}", "status": "running",
        "mechanism": {"spec": cfg.mechanism, "name": mech.name, "claim": mech.claim.to_dict(),
                      "params": cfg.params, "plugin_kind": mech.plugin_kind,
                      "interpreter": cfg.python or "this one", "timeout_seconds": cfg.timeout},
        "dataset": {**data.summary(), "selection": cfg.dataset},
        "verdict": INCONCLUSIVE, "verdict_table": [], "findings": mech.findings, "warnings": [],
        "parts": {}, "provenance": prov,
    }
    for leak in data.params.get("leaks", []):
        results["warnings"].append({"category": "PrivacyLeakWarning", "message": leak})

    def save(formats: tuple[str, ...] = ("json",)) -> None:
        results["verdict"] = _verdict(results)
        render_report(results, out_dir, formats)

    runners: dict[str, Callable[[], None]] = {
        "smoke": lambda: _smoke(cfg, mech, data, results),
        "epsilon": lambda: _epsilon(cfg, mech, data, results, progress),
        "attacks": lambda: _attacks(cfg, mech, data, results, progress),
        "utility": lambda: _utility(cfg, mech, data, results),
    }
    try:
        for part in cfg.parts:
            mech.part = part
            t0 = time.perf_counter()
            try:
                with capture_warnings(results["warnings"]):
                    runners[part]()
                results["parts"][part] = "ok"
            except KeyboardInterrupt:
                raise
            except ModuleNotFoundError as exc:
                results["parts"][part] = f"skipped: {exc}"
            except InvalidInputError as exc:  # the set-up does not allow this part (e.g. too few records)
                results["parts"][part] = f"skipped: {exc}"
            except Exception as exc:  # noqa: BLE001 - one part failing never stops the audit
                results["parts"][part] = f"failed: {type(exc).__name__}: {exc}"
                if not any(f["part"] == part for f in mech.findings):
                    mech.findings.append({"kind": "error", "part": part, "call": part,
                                          "error": f"{type(exc).__name__}: {exc}"})
            prov["durations_seconds"][part] = round(time.perf_counter() - t0, 3)
            save()
        if len(data.X[0]) == 2:
            mech.part = "figure"
            with capture_warnings(results["warnings"]):
                results["release_2d"] = release_2d(mech, data.bounds, cfg.epsilon, np.random.default_rng(
                    np.random.SeedSequence(cfg.seed, spawn_key=(4,))))
        results["status"] = "complete"
    except KeyboardInterrupt:
        results["status"] = "interrupted"
        save(("json", "md", "html", "csv"))
        raise
    finally:
        mech.close()
    save(("json", "md", "html", "csv"))
    return results
