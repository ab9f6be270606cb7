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

import contextlib
import json
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from dpaudit.data.datasets import Dataset
from dpaudit.data.limits import check_estimation_size
from dpaudit.execution import Findings, ReplayProbe, SchedulerError, close_workers, map_seeds
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import InvalidInputError, PrivacyLeakWarning
from dpaudit.result_shapes import ProvenanceRecord
from dpaudit.run_shapes import RunResults, SweepCell

from .cells import CellTask
from .config import ISOLATION_FIELDS, SweepConfig
from .metrics import non_private_baseline, reference_labels
from .report import sweep_results, write_sweep_report
from .store import CellStore

__all__ = ["check_setup", "run_cells", "run_sweep"]


def check_setup(cfg: SweepConfig, data: Dataset) -> dict[str, Any]:
    """Fail before any work, in one line: a mechanism the sweep cannot build (bad name or
    parameters, a plug-in that does not load), or too few records for the membership attacks'
    split.  Returns what the results show of the mechanism: name, claim (at the first ε), where
    it runs."""
    k = cfg.n_clusters or data.default_k
    if k > data.n_records:
        raise InvalidInputError(f"k = {k} clusters{'' if cfg.n_clusters else ' (the default: the class count, else 4)'} "
                                f"for {data.n_records} records: give --n-clusters ≤ {data.n_records} or more records")
    if cfg.epsilon_bound:
        check_estimation_size(data.n_records, data.n_features, "--epsilon-bound")
    recipe = cfg.recipe()
    mech = recipe.open(cfg.epsilons[0])
    if cfg.attack.attacks:
        cfg.attack.split_sizes(data.n_records)
    claim = cfg.claim.claim(mech.claim).to_dict()  # a claim in a notion: its point at the default δ
    return {"name": getattr(mech, "name", cfg.target.mechanism), "claim": claim, "where": recipe.where,
            **recipe.isolation.to_dict()}


def _pending(cfg: SweepConfig, done: dict[tuple[int, int], Any]) -> list[tuple[int, int]]:
    return [(i, r) for i in range(len(cfg.epsilons)) for r in range(cfg.repeats) if (i, r) not in done]


def _progress(cfg: SweepConfig, todo: int, progress: Any) -> Any:
    """Cells left to run as one step of equal-cost units (a cell costs about the same at every ε)."""
    from dpaudit.progress import RunProgress, short_label

    mode = progress if isinstance(progress, str) else ("auto" if progress else "off")
    bar = RunProgress(short_label("sweep", cfg.target.mechanism), [("cells", 1.0)], mode=mode, unit="cells")
    bar.start("cells")
    bar.total = todo
    return bar


def run_cells(cfg: SweepConfig, data: Dataset, store: CellStore, *, n_jobs: int | None = None, scheduler: Any = None,
              progress: Any = True, on_cell: Callable[[SweepCell], None] | None = None,
              refs: dict[str, Any] | None = None) -> dict[tuple[int, int], SweepCell]:
    """Run the cells ``store`` does not hold yet, appending each as it finishes.

    Cells run through :func:`dpaudit.execution.map_seeds` — in this process,
    on ``n_jobs`` joblib processes or on the Dask cluster at ``scheduler`` (None: the config's ``run``) —
    and each is stored in this process the moment it finishes, so a lost
    cluster or an interrupt keeps every finished cell.  ``on_cell`` is called
    after each cell is stored (tests use it to simulate a kill).  Returns every
    finished cell.
    """
    done = store.load()
    todo = _pending(cfg, done)
    if not todo:
        return done
    k = cfg.n_clusters or data.default_k
    refs = reference_labels(cfg, data.X, k) if refs is None else refs
    bar = _progress(cfg, len(todo), progress)

    def keep(_: int, cell: SweepCell) -> None:
        store.append(cell)
        done[(cell["eps_index"], cell["repeat"])] = cell
        bar.update(1)
        if on_cell is not None:
            on_cell(cell)

    try:
        map_seeds(CellTask(cfg, data, refs), todo, n_jobs=cfg.run.n_jobs if n_jobs is None else n_jobs,
                  scheduler=cfg.run.scheduler if scheduler is None else scheduler, on_result=keep)
    finally:
        bar.close()
    return done


def _set_duration(provenance: ProvenanceRecord | None, seconds: float) -> None:
    from dpaudit.report import stamp_finished

    if provenance is not None:
        provenance.setdefault("durations_seconds", {})["sweep (this session)"] = round(seconds, 3)
        stamp_finished(provenance)


def _check_resumable(cfg: SweepConfig, out_dir: Path, store: CellStore, config_path: Path, resume: bool) -> None:
    if not (store.path.exists() or config_path.exists()):
        return
    if not resume:
        raise InvalidInputError(f"{out_dir} already holds a sweep; pass --resume to continue it or choose --out")
    if not config_path.is_file():
        return
    stored = json.loads(config_path.read_text())
    defaults = {"output": None, "neighbours": None}  # sweeps stored before these options existed
    stored = {**defaults, **{k: v for k, v in stored.items() if k not in ISOLATION_FIELDS}}
    if stored != cfg.identity():
        raise InvalidInputError(f"{out_dir} holds a different sweep (its config.json differs); "
                                "resume with the same options or choose another --out")


@contextlib.contextmanager
def _quiet_leaks() -> Iterator[None]:
    """Leak warnings of the probe's calls are the cells' too: recorded there, not printed here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def run_sweep(cfg: SweepConfig, data: Dataset, out_dir: str | Path, *, resume: bool = False, n_jobs: int | None = None,
              scheduler: Any = None, progress: Any = True, on_cell: Callable[[SweepCell], None] | None = None,
              provenance: ProvenanceRecord | None = None, formats: Iterable[str] | None = None) -> RunResults:
    """Run (or resume) a sweep into ``out_dir`` and write its report.

    Before the cells, a replay probe draws three releases at the first ε; after
    them it draws them again (:class:`~dpaudit.execution.ReplayProbe`): state
    kept between calls is a ``nondeterministic`` finding.  On Ctrl-C or a lost
    Dask cluster (:class:`~dpaudit.execution.SchedulerError`) the report of the
    finished cells is still written (status ``interrupted``) before the
    exception propagates.
    """
    out_dir = Path(out_dir)
    store = CellStore(out_dir / "cells.jsonl")
    config_path = out_dir / "config.json"
    _check_resumable(cfg, out_dir, store, config_path, resume)
    mechanism = check_setup(cfg, data)
    out_dir.mkdir(parents=True, exist_ok=True)
    config_path.write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
    status = "complete"
    t0 = time.perf_counter()
    probe_findings = Findings()
    refs = reference_labels(cfg, data.X, cfg.n_clusters or data.default_k)
    baseline = non_private_baseline(cfg, data, refs)

    def report(done: dict[tuple[int, int], Any], status: str) -> RunResults:
        _set_duration(provenance, time.perf_counter() - t0)
        results = sweep_results(cfg, data, list(done.values()), status, provenance, mechanism=mechanism,
                                probe=probe_findings, baseline=baseline)
        write_sweep_report(results, out_dir, formats)
        return results

    try:
        try:
            with _quiet_leaks():  # the cells record the mechanism's leak warnings themselves
                probe = ReplayProbe(cfg.recipe().open(cfg.epsilons[0]), data.X, Stream.SWEEP_REPLAY_PROBE.of(cfg.seed))
            probe_findings = probe.findings
            if probe.broken:  # every probe call hung or crashed: the cells would repeat it (a hang: for hours)
                return report(store.load(), "not run: every probe call timed out or crashed")
            done = run_cells(cfg, data, store, n_jobs=n_jobs, scheduler=scheduler, progress=progress,
                             on_cell=on_cell, refs=refs)
            with _quiet_leaks():
                probe_findings = probe.finish()
        except (KeyboardInterrupt, SchedulerError):
            report(store.load(), "interrupted")
            raise
        return report(done, status)
    finally:
        close_workers()
