"""The results dict of a sweep (see :mod:`dpaudit.report`): mean ± std per ε, findings, the
release figure; and writing its report.

Nothing is averaged over silently: each ε's summary row says how many repeats
it holds (``n``), how many failed (``failed``) and how many were not run
(``missing``); ``sweep.cells_failed`` / ``cells_partial`` / ``cells_missing``
count them over the sweep, and ``findings`` lists what the audited code did
(:class:`~dpaudit.execution.RunFindings`: the release calls of every cell and of
the replay probe, then the cells that could not finish).  ``complete_and_clean``
is true only when every cell ran, none failed and no finding blocks.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from dpaudit.data.datasets import Dataset
from dpaudit.execution import Findings, RunFindings
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import PrivacyLeakWarning
from dpaudit.report import render_report
from dpaudit.report.standin import release_2d
from dpaudit.result_shapes import ClaimRecord, ProvenanceRecord
from dpaudit.run_shapes import MetricSummary, RunResults, SweepCell, SweepSummaryRow
from dpaudit.verdicts.sweep_conclusion import conclude

from .config import SweepConfig

__all__ = ["summarise", "sweep_findings", "sweep_results", "write_sweep_report"]


def summarise(cfg: SweepConfig, cells: Iterable[SweepCell]) -> list[SweepSummaryRow]:
    """Mean ± std (sample std, ddof = 1) per ε over the finished repeats, in ε-list order."""
    by_eps: dict[int, list[SweepCell]] = {}
    for cell in sorted(cells, key=lambda c: (c["eps_index"], c["repeat"])):
        by_eps.setdefault(int(cell["eps_index"]), []).append(cell)
    summary: list[SweepSummaryRow] = []
    for i, eps in enumerate(cfg.epsilons):
        ran = by_eps.get(i, [])
        rows = [c["metrics"] for c in ran if c.get("metrics") and not c.get("error")]
        names: list[str] = []
        for r in rows:
            names += [n for n in r if n not in names]
        metrics: dict[str, MetricSummary] = {}
        for name in names:
            vals = np.array([r[name] for r in rows if r.get(name) is not None], dtype=float)
            vals = vals[np.isfinite(vals)]
            if vals.size:
                metrics[name] = {"mean": float(vals.mean()),
                                 "std": float(vals.std(ddof=1)) if vals.size > 1 else 0.0, "n": int(vals.size)}
        summary.append({"epsilon": eps, "n": len(rows), "failed": sum(1 for c in ran if c.get("error")),
                        "missing": cfg.repeats - len(ran), "metrics": metrics})
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
        mech = cfg.recipe().open(eps)  # a plug-in runs in its worker here too
    except Exception:  # noqa: BLE001 - the figure is optional
        return {}
    rng = np.random.default_rng(Stream.SWEEP_RELEASE_FIGURE.of(cfg.seed, i))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the cells already recorded the mechanism's leaks
        return release_2d(mech, data.bounds, eps, rng, records=data.X)


def sweep_findings(cells: list[SweepCell], total: int, probe: Findings | None = None,
                   not_run: str | None = None) -> RunFindings:
    """The findings of a sweep: every release call (cells and probe), then the cells that did not finish."""
    calls = Findings().merge(probe)
    for c in cells:
        calls.merge(Findings.from_list(c.get("findings", []), calls=c.get("calls", 0)))
    run = RunFindings().add("release calls", calls)
    failed = [c for c in cells if c.get("error")]
    if failed or not_run:
        first = (f"ε = {failed[0]['epsilon']:g}, repeat {failed[0]['repeat']}: {failed[0]['error']}" if failed
                 else not_run or "")
        run.incomplete("cells", len(failed) + (total - len(cells) if not_run else 0), total, "cells", first)
    partial = [c for c in cells if c.get("partial_errors")]
    if partial:
        name, error = next(iter(partial[0]["partial_errors"].items()))
        run.incomplete("cell measurements", len(partial), len(cells), "cells",
                       f"ε = {partial[0]['epsilon']:g}, repeat {partial[0]['repeat']}, {name}: {error}")
    return run


def sweep_results(cfg: SweepConfig, data: Dataset, cells: list[SweepCell], status: str,
                  provenance: ProvenanceRecord | None, *, mechanism: dict[str, Any] | None = None,
                  probe: Findings | None = None, baseline: dict[str, float] | None = None) -> RunResults:
    """Plain results dict of a (possibly partial) sweep; never holds a record.

    ``mechanism``: name, claim and where it ran (:func:`dpaudit.sweep.run.check_setup`);
    ``probe``: the replay probe's findings.  A ``status`` starting with ``not run``
    says why no cell was run.  ``baseline``: the clusterers' utility on the plain data
    (:func:`~dpaudit.sweep.metrics.non_private_baseline`).
    """
    cells = sorted(cells, key=lambda c: (c["eps_index"], c["repeat"]))
    if mechanism is None:
        first = cfg.recipe().open(cfg.epsilons[0])
        mechanism = {"name": getattr(first, "name", cfg.target.mechanism), "claim": first.claim.to_dict()}
    claim = ClaimRecord(**mechanism["claim"])
    claim["epsilon"] = list(cfg.epsilons)
    warnings_seen: list[str] = []
    for c in cells:
        warnings_seen += [w for w in c.get("warnings", []) if w not in warnings_seen]
    warnings_seen += [w for w in data.params.get("leaks", []) if w not in warnings_seen]
    total = len(cfg.epsilons) * cfg.repeats
    not_run = status if status.startswith("not run") else None
    findings = sweep_findings(cells, total, probe, not_run)
    status = status if status != "complete" or len(cells) == total else "partial"
    failed = sum(1 for c in cells if c.get("error"))
    partial = sum(1 for c in cells if c.get("partial_errors"))
    results: RunResults = {
        "kind": "sweep",
        "title": f"Privacy–utility sweep: {cfg.target.mechanism} on {data.name}",
        "status": status,
        "complete_and_clean": len(cells) == total and not failed and not partial and not findings.blocking,
        "mechanism": {"spec": cfg.target.mechanism, "name": mechanism["name"], "claim": claim,
                      "params": cfg.target.params},
        "execution": {k: v for k, v in mechanism.items() if k not in ("name", "claim")},
        "dataset": {**data.summary(), "selection": cfg.data.selection()},
        "warnings": [{"category": "PrivacyLeakWarning", "message": m} for m in warnings_seen],
        "findings": findings.to_list(),
        "sweep": {"epsilons": list(cfg.epsilons), "repeats": cfg.repeats, "clusterers": list(cfg.clusterers),
                  "attacks": list(cfg.attack.attacks), "cells_done": len(cells), "cells_total": total,
                  "cells_failed": failed, "cells_partial": partial, "cells_missing": total - len(cells),
                  "cells": [_as_stored(c) for c in cells],
                  "summary": summarise(cfg, cells), "baseline": dict(baseline or {})},
        "release_2d": _release_figure(cfg, data) if cells else {},
        "provenance": provenance or ProvenanceRecord(),
    }
    results["conclusion"] = conclude(results)
    return results


def _as_stored(cell: SweepCell) -> SweepCell:
    """A cell as the results hold it: without its warnings and findings (the run's own carry them)."""
    out = cell.copy()
    out.pop("warnings", None)
    out.pop("findings", None)
    return out


def write_sweep_report(results: RunResults, out_dir: str | Path, formats: Iterable[str] | None = None
                       ) -> dict[str, Path]:
    return render_report(results, out_dir, formats or ("json", "csv", "md", "html"))
