"""The results dict of a sweep (see :mod:`dpaudit.report`): mean ± std per ε, findings, the
release figure; and writing its report."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Iterable

import numpy as np

import mechanisms
from dpaudit.data.datasets import Dataset
from dpaudit.report import render_report
from dpaudit.report.standin import release_2d
from mechanisms.base import PrivacyLeakWarning

from .config import SweepConfig, cell_seed

__all__ = ["summarise", "sweep_results", "write_sweep_report"]


def summarise(cfg: SweepConfig, cells: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean ± std (sample std, ddof = 1) per ε over the finished repeats, in ε-list order."""
    by_eps: dict[int, list[dict[str, Any]]] = {}
    for cell in sorted(cells, key=lambda c: (c["eps_index"], c["repeat"])):
        by_eps.setdefault(int(cell["eps_index"]), []).append(cell)
    summary = []
    for i, eps in enumerate(cfg.epsilons):
        rows = [c.get("metrics") or {} for c in by_eps.get(i, [])]
        names: list[str] = []
        for r in rows:
            names += [n for n in r if n not in names]
        metrics = {}
        for name in names:
            vals = np.array([r[name] for r in rows if r.get(name) is not None], dtype=float)
            vals = vals[np.isfinite(vals)]
            if vals.size:
                metrics[name] = {"mean": float(vals.mean()),
                                 "std": float(vals.std(ddof=1)) if vals.size > 1 else 0.0, "n": int(vals.size)}
        summary.append({"epsilon": eps, "n": len(rows), "metrics": metrics})
    return summary


def _figure_epsilon(epsilons: tuple[float, ...]) -> tuple[int, float]:
    """The ε the 2-D stand-in figure is drawn at: 1 when swept, else the middle of the list."""
    if 1.0 in epsilons:
        return epsilons.index(1.0), 1.0
    i = len(epsilons) // 2
    return i, epsilons[i]


def _release_figure(cfg: SweepConfig, data: Dataset) -> dict[str, Any]:
    if data.n_features != 2:
        return {}
    i, eps = _figure_epsilon(cfg.epsilons)
    try:
        mech = mechanisms.get(cfg.mechanism, epsilon=eps, **cfg.params)
    except Exception:  # noqa: BLE001 - the figure is optional
        return {}
    rng = np.random.default_rng(cell_seed(cfg.seed, i, 2**31 - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the cells already recorded the mechanism's leaks
        return release_2d(mech, data.bounds, eps, rng, records=data.X)


def sweep_results(cfg: SweepConfig, data: Dataset, cells: list[dict[str, Any]], status: str,
                  provenance: dict[str, Any] | None, baseline: dict[str, float] | None = None) -> dict[str, Any]:
    """Plain results dict of a (possibly partial) sweep; never holds a record.

    ``baseline``: the clusterers' utility on the plain data (:func:`~dpaudit.sweep.metrics.non_private_baseline`).
    """
    cells = sorted(cells, key=lambda c: (c["eps_index"], c["repeat"]))
    first = mechanisms.get(cfg.mechanism, epsilon=cfg.epsilons[0], **cfg.params)
    claim = first.claim.to_dict()
    claim["epsilon"] = list(cfg.epsilons)
    warnings_seen: list[str] = []
    for c in cells:
        warnings_seen += [w for w in c.get("warnings", []) if w not in warnings_seen]
    warnings_seen += [w for w in data.params.get("leaks", []) if w not in warnings_seen]
    findings = [{"kind": "raises", "part": "sweep", "call": f"release at ε = {c['epsilon']:g}, repeat {c['repeat']}",
                 "error": c["error"]} for c in cells if c.get("error")]
    total = len(cfg.epsilons) * cfg.repeats
    status = status if status != "complete" or len(cells) == total else "partial"
    return {
        "kind": "sweep",
        "title": f"Privacy–utility sweep: {cfg.mechanism} on {data.name}",
        "status": status,
        "mechanism": {"spec": cfg.mechanism, "name": getattr(first, "name", cfg.mechanism), "claim": claim,
                      "params": cfg.params},
        "dataset": {**data.summary(), "selection": cfg.dataset},
        "warnings": [{"category": "PrivacyLeakWarning", "message": m} for m in warnings_seen],
        "findings": findings,
        "sweep": {"epsilons": list(cfg.epsilons), "repeats": cfg.repeats, "clusterers": list(cfg.clusterers),
                  "attacks": list(cfg.attacks), "cells_done": len(cells), "cells_total": total,
                  "cells": [{k: v for k, v in c.items() if k != "warnings"} for c in cells],
                  "summary": summarise(cfg, cells), "baseline": dict(baseline or {})},
        "release_2d": _release_figure(cfg, data),
        "provenance": provenance or {},
    }


def write_sweep_report(results: dict[str, Any], out_dir: str | Path, formats: Iterable[str] | None = None
                       ) -> dict[str, Path]:
    return render_report(results, out_dir, formats or ("json", "csv", "md", "html"))
