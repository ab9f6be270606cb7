"""``dpaudit audit``: the full battery on someone else's code, with a verdict on top.

The parts (:mod:`dpaudit.audit.parts`: smoke, ε estimation, attacks, utility)
each run on a :class:`~attacks.execution.worker.WorkerMechanism` (every call in a
worker process under a timeout, optionally in the audited code's own
interpreter); ``results.json`` is rewritten as soon as each finishes.

Misbehaviour of the audited code (raises, hangs, NaN, wrong shape, crash)
becomes a *finding*; the part it broke is marked failed and the audit goes on.
The top-level verdict is :func:`dpaudit.audit.verdict.overall_verdict`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from dpaudit.attack.config import AttackConfig
from dpaudit.data.datasets import Dataset
from dpaudit.progress import RunProgress, short_label
from dpaudit.report import capture_warnings, render_report, stamp_finished
from dpaudit.report.standin import release_2d
from attacks.execution import WorkerMechanism
from mechanisms.base import InvalidInputError

from . import parts
from .config import AuditConfig
from .verdict import INCONCLUSIVE, overall_verdict

__all__ = ["run_audit"]


def _progress(cfg: AuditConfig, progress: Any) -> RunProgress:
    """The audit's progress display and its plan (rough costs; measured time recalibrates the ETA)."""
    from dpaudit.attack.run import LABEL_ONLY_COST_PER_QUERY, STEP_COST

    mode = progress if isinstance(progress, str) else ("auto" if progress else "off")
    bar = RunProgress(short_label("audit", cfg.mechanism), mode=mode)
    for part in cfg.parts:
        if part == "attacks":
            for r in range(cfg.attack_repeats):
                for name in ("target", *cfg.attacks):
                    cost = (LABEL_ONLY_COST_PER_QUERY * AttackConfig.label_only_queries if name == "label-only"
                            else STEP_COST.get(name, 1.0))
                    bar.add(parts.attack_step(r, cfg, name), cost * 0.3)  # the audit's data is small
        else:
            bar.add(part, {"smoke": 0.1, "epsilon": 2.0 + cfg.samples / 100.0, "utility": 0.5}[part])
    return bar


def run_audit(cfg: AuditConfig, data: Dataset, out_dir: str | Path, *, progress: Any = True,
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
        results["verdict"] = overall_verdict(results)
        stamp_finished(prov)  # the parts saved so far ended now
        render_report(results, out_dir, formats)

    bar = _progress(cfg, progress)
    runners: dict[str, Callable[[], None]] = {
        "smoke": lambda: parts.smoke(cfg, mech, data, results),
        "epsilon": lambda: parts.epsilon(cfg, mech, data, results, bar),
        "attacks": lambda: parts.attacks(cfg, mech, data, results, bar),
        "utility": lambda: parts.utility(cfg, mech, data, results),
    }
    try:
        for part in cfg.parts:
            if part != "attacks":
                bar.start(part)
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
                    np.random.SeedSequence(cfg.seed, spawn_key=(4,))), records=data.X)
        results["status"] = "complete"
    except KeyboardInterrupt:
        results["status"] = "interrupted"
        save(("json", "md", "html", "csv"))
        raise
    finally:
        bar.close()
        mech.close()
    save(("json", "md", "html", "csv"))
    return results
