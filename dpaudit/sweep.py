"""Privacy–utility sweeps over ε × repeats (thesis seed 000 §5.3.2; DESIGN §5).

For each claimed ε and each repeat (a *cell*) the sweep releases the data
once, clusters the release, and measures utility and privacy
(:mod:`dpaudit.sweep_metrics`); the summary is mean ± std per ε.

Nothing is lost: every finished cell is appended as one JSON line to
``cells.jsonl`` in the run directory (flushed and fsynced); ``resume=True``
reads it back and runs only the missing cells.  A cell's randomness comes from
``SeedSequence(seed, spawn_key=(ε index, repeat))`` — keyed by the cell, not by
execution order or worker count — so a resumed, parallel or interrupted-and-
resumed run gives the same numbers as one uninterrupted serial run.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

import mechanisms
from mechanisms.base import InvalidInputError, PrivacyLeakWarning, check_epsilon

from .utility import clusterers as cl
from .data.datasets import Dataset
from .sweep_metrics import displacement
from .utility.metrics import partition_metrics

__all__ = ["CellStore", "SweepConfig", "cell_seed", "run_cell", "run_sweep", "summarise"]

THESIS_EPSILONS: tuple[float, ...] = (0.05, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 7.0, 9.0)


@dataclass(frozen=True)
class SweepConfig:
    """Everything that determines a sweep's numbers (stored as ``config.json`` for --resume)."""

    mechanism: str
    epsilons: tuple[float, ...]
    repeats: int = 10
    params: dict[str, Any] = field(default_factory=dict)
    clusterers: tuple[str, ...] = cl.CLUSTERERS
    k: int | None = None
    attacks: tuple[str, ...] = ()
    epsilon_bound: bool = False
    epsilon_samples: int = 1000
    seed: int = 0
    dataset: dict[str, Any] = field(default_factory=dict)  # how the data was chosen (name/records/rescale)

    def __post_init__(self) -> None:
        eps = tuple(check_epsilon(e, name="each ε") for e in self.epsilons)
        if not eps:
            raise InvalidInputError("the ε list is empty")
        if len(set(eps)) != len(eps):
            raise InvalidInputError("the ε list has duplicates")
        object.__setattr__(self, "epsilons", eps)
        if int(self.repeats) != self.repeats or self.repeats < 1:
            raise InvalidInputError(f"repeats must be a whole number ≥ 1, got {self.repeats!r}")
        object.__setattr__(self, "clusterers", cl.parse_clusterers(",".join(self.clusterers)))
        if self.k is not None and (int(self.k) != self.k or self.k < 2):
            raise InvalidInputError(f"k must be a whole number ≥ 2, got {self.k!r}")
        if self.epsilon_bound and (int(self.epsilon_samples) != self.epsilon_samples or self.epsilon_samples < 10):
            # estimate_epsilon needs ≥ 10 selection releases, and selection uses at most `samples`
            raise InvalidInputError(f"--epsilon-samples must be a whole number ≥ 10, got {self.epsilon_samples!r}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["epsilons"] = list(self.epsilons)
        d["clusterers"] = list(self.clusterers)
        d["attacks"] = list(self.attacks)
        return json.loads(json.dumps(d, default=str))


def cell_seed(seed: int, eps_index: int, repeat: int) -> np.random.SeedSequence:
    """The cell's own seed: independent of execution order and worker count."""
    return np.random.SeedSequence(seed, spawn_key=(eps_index, repeat))


def _reference_labels(cfg: SweepConfig, X: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Each clusterer on the plain data: the non-private partition ARI/AMI compare against."""
    seed = int(np.random.SeedSequence(cfg.seed, spawn_key=(2**31 - 1,)).generate_state(1)[0])
    return {name: cl.cluster(name, X, k=k, seed=seed) for name in cfg.clusterers}


def _release_metrics(cfg: SweepConfig, release: Any, data: Dataset, refs: dict[str, np.ndarray], k: int,
                     rng: np.random.Generator) -> dict[str, Any]:
    X, y = data.X, data.y
    out: dict[str, Any] = {}
    if release.kind == "points":
        Z = release.points
        out["displacement"] = displacement(X, Z)
        Zs = cl.standard_scale(Z)
        for name in cfg.clusterers:
            labels = cl.cluster(name, Zs, k=k, seed=int(rng.integers(2**31 - 1)), scale=False)
            for key, value in partition_metrics(labels, reference=refs[name], truth=y, internal_on=Zs).items():
                out[f"{name}.{key}"] = value
        return out
    if release.kind == "vector":
        return out
    labels = release.labels if release.kind == "labels" else release.predict(X)
    first = cfg.clusterers[0] if cfg.clusterers else None
    metrics = partition_metrics(np.asarray(labels), reference=refs.get(first) if first else None, truth=y,
                                internal_on=cl.standard_scale(X),
                                centers=release.centers if release.kind == "centroids" else None, plain=X)
    for key, value in metrics.items():
        out[f"release.{key}"] = value
    return out


def run_cell(cfg: SweepConfig, data: Dataset, refs: dict[str, np.ndarray], eps_index: int, repeat: int
             ) -> dict[str, Any]:
    """One (ε, repeat) cell: release, cluster, measure.  Returns plain JSON data.

    A mechanism that raises in one cell does not stop the sweep: the cell
    records the error (a finding) and has no metrics.
    """
    eps = cfg.epsilons[eps_index]
    rng = np.random.default_rng(cell_seed(cfg.seed, eps_index, repeat))
    k = cfg.k or data.default_k
    cell: dict[str, Any] = {"eps_index": eps_index, "epsilon": eps, "repeat": repeat}
    leaks: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PrivacyLeakWarning)
            mech = mechanisms.get(cfg.mechanism, epsilon=eps, **cfg.params)
            release = mech.release(data.X, rng)
        leaks = sorted({str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)})
        metrics = _release_metrics(cfg, release, data, refs, k, rng)
        if cfg.attacks or cfg.epsilon_bound:
            from .sweep_privacy import privacy_metrics
            metrics.update(privacy_metrics(cfg, mech, data, rng, epsilon=eps))
        cell["metrics"] = metrics
    except InvalidInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - audited code misbehaved in this cell
        cell["metrics"] = {}
        cell["error"] = f"{type(exc).__name__}: {exc}"
    if leaks:
        cell["warnings"] = leaks
    return cell


class CellStore:
    """Append-only ``cells.jsonl``: one finished cell per line, durable as soon as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[tuple[int, int], dict[str, Any]]:
        """Finished cells by (ε index, repeat); a torn last line (killed mid-write) is ignored."""
        cells: dict[tuple[int, int], dict[str, Any]] = {}
        if not self.path.is_file():
            return cells
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                cell = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(cell, dict) and "eps_index" in cell and "repeat" in cell:
                cells[(int(cell["eps_index"]), int(cell["repeat"]))] = cell
        return cells

    def append(self, cell: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        prefix = b""
        if self.path.is_file() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                prefix = b"" if fh.read(1) == b"\n" else b"\n"  # start fresh after a torn line
        with open(self.path, "ab") as fh:
            fh.write(prefix + json.dumps(cell, allow_nan=True).encode("utf-8") + b"\n")
            fh.flush()
            os.fsync(fh.fileno())


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


def _pending(cfg: SweepConfig, done: dict[tuple[int, int], Any]) -> list[tuple[int, int]]:
    return [(i, r) for i in range(len(cfg.epsilons)) for r in range(cfg.repeats) if (i, r) not in done]


def _progress(total: int, initial: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm
    return tqdm(total=total, initial=initial, desc="sweep cells", unit="cell", file=sys.stderr,
                disable=not (enabled and sys.stderr.isatty()))


def run_cells(cfg: SweepConfig, data: Dataset, store: CellStore, *, n_jobs: int = 1, progress: bool = True,
              on_cell: Callable[[dict[str, Any]], None] | None = None) -> dict[tuple[int, int], dict[str, Any]]:
    """Run the cells ``store`` does not hold yet, appending each as it finishes.

    ``on_cell`` is called after each cell is stored (tests use it to simulate
    a kill).  Returns every finished cell.
    """
    done = store.load()
    todo = _pending(cfg, done)
    if not todo:
        return done
    k = cfg.k or data.default_k
    refs = _reference_labels(cfg, data.X, k)
    bar = _progress(len(cfg.epsilons) * cfg.repeats, len(done), progress)
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
    if provenance is not None:
        provenance.setdefault("durations_seconds", {})["sweep (this session)"] = round(seconds, 3)


def run_sweep(cfg: SweepConfig, data: Dataset, out_dir: str | Path, *, resume: bool = False, n_jobs: int = 1,
              progress: bool = True, on_cell: Callable[[dict[str, Any]], None] | None = None,
              provenance: dict[str, Any] | None = None, formats: Iterable[str] | None = None) -> dict[str, Any]:
    """Run (or resume) a sweep into ``out_dir`` and write its report.

    On Ctrl-C the report of the finished cells is still written (status
    ``interrupted``) before the interrupt propagates.
    """
    from .sweep_report import sweep_results, write_sweep_report
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
    try:
        done = run_cells(cfg, data, store, n_jobs=n_jobs, progress=progress, on_cell=on_cell)
    except KeyboardInterrupt:
        done, status = store.load(), "interrupted"
        _set_duration(provenance, time.perf_counter() - t0)
        write_sweep_report(sweep_results(cfg, data, list(done.values()), status, provenance), out_dir, formats)
        raise
    _set_duration(provenance, time.perf_counter() - t0)
    results = sweep_results(cfg, data, list(done.values()), status, provenance)
    write_sweep_report(results, out_dir, formats)
    return results
