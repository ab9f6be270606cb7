"""Privacy–utility sweeps over ε × repeats (the nD-Laplace thesis's §5.3.2 set-up).

For each claimed ε and each repeat (a *cell*, :mod:`dpaudit.sweep.cells`) the
sweep releases the data once, clusters the release, and measures utility and
privacy (:mod:`dpaudit.sweep.metrics`, :mod:`dpaudit.sweep.privacy`); the
summary is mean ± std per ε (:mod:`dpaudit.sweep.report`).

Nothing is lost: every finished cell goes to ``cells.jsonl``
(:class:`~dpaudit.sweep.store.CellStore`); ``resume=True`` runs only the
missing cells.  Each cell has its own seed, so a resumed, parallel or
interrupted-and-resumed run gives the same numbers as one uninterrupted
serial run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import mechanisms
from dpaudit.attack.config import AttackConfig
from dpaudit.data.datasets import Dataset
from mechanisms.base import InvalidInputError

from .cells import run_cell
from .config import SweepConfig
from .metrics import non_private_baseline, reference_labels
from .report import sweep_results, write_sweep_report
from .store import CellStore

__all__ = ["check_setup", "run_cells", "run_sweep"]


def check_setup(cfg: SweepConfig, data: Dataset) -> None:
    """Fail before any work, in one line: a mechanism the sweep cannot build (bad name or
    parameters), or too few records for the membership attacks' split."""
    mechanisms.get(cfg.mechanism, epsilon=cfg.epsilons[0], **cfg.params)
    if cfg.attacks:
        AttackConfig(mechanism=cfg.mechanism, epsilon=cfg.epsilons[0], attacks=cfg.attacks, dataset=data.name,
                     records=data.n_records).split_sizes(data.n_records)


def _pending(cfg: SweepConfig, done: dict[tuple[int, int], Any]) -> list[tuple[int, int]]:
    return [(i, r) for i in range(len(cfg.epsilons)) for r in range(cfg.repeats) if (i, r) not in done]


def _progress(cfg: SweepConfig, todo: int, progress: Any) -> Any:
    """Cells left to run as one step of equal-cost units (a cell costs about the same at every ε)."""
    from dpaudit.progress import RunProgress, short_label

    mode = progress if isinstance(progress, str) else ("auto" if progress else "off")
    bar = RunProgress(short_label("sweep", cfg.mechanism), [("cells", 1.0)], mode=mode, unit="cells")
    bar.start("cells")
    bar.total = todo
    return bar


def run_cells(cfg: SweepConfig, data: Dataset, store: CellStore, *, n_jobs: int = 1, progress: Any = True,
              on_cell: Callable[[dict[str, Any]], None] | None = None,
              refs: dict[str, Any] | None = None) -> dict[tuple[int, int], dict[str, Any]]:
    """Run the cells ``store`` does not hold yet, appending each as it finishes.

    ``on_cell`` is called after each cell is stored (tests use it to simulate
    a kill).  Returns every finished cell.
    """
    done = store.load()
    todo = _pending(cfg, done)
    if not todo:
        return done
    k = cfg.k or data.default_k
    refs = reference_labels(cfg, data.X, k) if refs is None else refs
    bar = _progress(cfg, len(todo), progress)
    try:
        if n_jobs == 1:
            results: Iterable[dict[str, Any]] = (run_cell(cfg, data, refs, i, r) for i, r in todo)
        else:
            from joblib import Parallel, delayed
            results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                delayed(run_cell)(cfg, data, refs, i, r) for i, r in todo)
        for cell in results:
            store.append(cell)
            done[(cell["eps_index"], cell["repeat"])] = cell
            bar.update(1)
            if on_cell is not None:
                on_cell(cell)
    finally:
        bar.close()
    return done


def _set_duration(provenance: dict[str, Any] | None, seconds: float) -> None:
    from dpaudit.report import stamp_finished

    if provenance is not None:
        provenance.setdefault("durations_seconds", {})["sweep (this session)"] = round(seconds, 3)
        stamp_finished(provenance)


def run_sweep(cfg: SweepConfig, data: Dataset, out_dir: str | Path, *, resume: bool = False, n_jobs: int = 1,
              progress: Any = True, on_cell: Callable[[dict[str, Any]], None] | None = None,
              provenance: dict[str, Any] | None = None, formats: Iterable[str] | None = None) -> dict[str, Any]:
    """Run (or resume) a sweep into ``out_dir`` and write its report.

    On Ctrl-C the report of the finished cells is still written (status
    ``interrupted``) before the interrupt propagates.
    """
    out_dir = Path(out_dir)
    store = CellStore(out_dir / "cells.jsonl")
    config_path = out_dir / "config.json"
    if store.path.exists() or config_path.exists():
        if not resume:
            raise InvalidInputError(f"{out_dir} already holds a sweep; pass --resume to continue it or choose --out")
        stored = json.loads(config_path.read_text()) if config_path.is_file() else None
        if stored is not None and stored != cfg.to_dict():
            raise InvalidInputError(f"{out_dir} holds a different sweep (its config.json differs); "
                                    "resume with the same options or choose another --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    config_path.write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
    status = "complete"
    t0 = time.perf_counter()
    refs = reference_labels(cfg, data.X, cfg.k or data.default_k)
    baseline = non_private_baseline(cfg, data, refs)
    try:
        done = run_cells(cfg, data, store, n_jobs=n_jobs, progress=progress, on_cell=on_cell, refs=refs)
    except KeyboardInterrupt:
        done, status = store.load(), "interrupted"
        _set_duration(provenance, time.perf_counter() - t0)
        write_sweep_report(sweep_results(cfg, data, list(done.values()), status, provenance, baseline), out_dir,
                           formats)
        raise
    _set_duration(provenance, time.perf_counter() - t0)
    results = sweep_results(cfg, data, list(done.values()), status, provenance, baseline)
    write_sweep_report(results, out_dir, formats)
    return results
