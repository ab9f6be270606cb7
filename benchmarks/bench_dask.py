"""``dpaudit sweep`` and ``dpaudit audit`` on joblib and on a Dask cluster: wall time and identical numbers.

    python benchmarks/bench_dask.py [--records 300] [--runs 5] [--out benchmarks/results/dask.md] [--force]

One small sweep and one small audit, each run three ways in this process
through the library calls the CLI makes (:func:`dpaudit.sweep.run.run_sweep`,
:func:`dpaudit.audit.run.run_audit`):

* ``one process`` — the baseline: ``n_jobs=1``, no scheduler;
* ``joblib ×2`` — ``n_jobs=2`` (loky worker processes; ``--n-jobs 2``);
* ``Dask LocalCluster ×2`` — ``scheduler=`` the address of a
  ``dask.distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``
  started once in this process (its start-up time is reported apart, not in the runs).

Sweep: ``ndlaplace`` at ``--eps`` (default 0.5, 1, 2, 4) × ``--repeats``
(default 3) on ``--records`` blobs-2d records, KMeans utility, the ``yeom``
membership attack.  Audit: ``ndlaplace`` at ε = 1 on the same records,
``--samples`` ε-estimation samples (default 1000), ``yeom`` with
``--attack-repeats`` (default 4), the default parts (smoke, ε estimation,
attacks, utility).  Each (workload, backend) runs ``--runs`` times (default 5)
and the table gives the median wall time and its ratio to one process.  The
runs go round-robin (run 1 of every backend, then run 2, ...) so that a busy
spell on a shared machine hits every backend alike; the first run of a
backend pays its workers' imports, and the median leaves it out.

The identity check compares every number (and string and flag) of the
results dicts across the backends, leaving out only what describes the run
rather than its outcome: ``provenance`` (timings, host, command), the
``execution`` block (which names the scheduler), timings (every key naming seconds) and output paths.
Any difference is listed and the script exits 1 — after writing the results
file, which then says FAILED.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Keys that describe how and where a run happened, not what it measured.
# Timings (any key naming seconds) are left out too.
RUN_DESCRIPTION_KEYS = frozenset({"provenance", "execution", "out_dir", "files"})
BACKENDS = ("one process", "joblib ×2", "Dask LocalCluster ×2")


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar of a results dict as (dotted path, value), run-description keys left out."""
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            if str(key) not in RUN_DESCRIPTION_KEYS and "seconds" not in str(key):
                yield from leaves(value[key], f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def differences(reference: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """Paths whose values differ (NaN equals NaN: both runs failed to measure the same thing)."""
    a, b = dict(leaves(reference)), dict(leaves(other))
    out = []
    for path in sorted(a.keys() | b.keys()):
        x, y = a.get(path, "<absent>"), b.get(path, "<absent>")
        same = x == y or (isinstance(x, float) and isinstance(y, float) and x != x and y != y)
        if not same:
            out.append(f"{path}: {x!r} vs {y!r}")
    return out


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=300)
    ap.add_argument("--eps", default="0.5,1,2,4", help="the sweep's ε list")
    ap.add_argument("--repeats", type=int, default=3, help="the sweep's repeats per ε")
    ap.add_argument("--samples", type=int, default=1000, help="the audit's ε-estimation samples")
    ap.add_argument("--attack-repeats", type=int, default=4, help="the audit's yeom repeats")
    ap.add_argument("--runs", type=int, default=5, help="runs per (workload, backend); the median is reported")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="also write the table as Markdown")
    add_force(ap)
    return ap.parse_args()


Workload = Callable[..., Callable[[], dict[str, Any]]]


def _workloads(args: argparse.Namespace) -> tuple[Workload, Workload, tempfile.TemporaryDirectory]:
    """The sweep and the audit (each a factory of one run for a backend) and their scratch folder."""
    from dpaudit.attacks.epsilon import Budget, RunSettings
    from dpaudit.audit.config import AuditConfig
    from dpaudit.audit.run import run_audit
    from dpaudit.data.inputs import load_data
    from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions
    from dpaudit.sweep.config import SweepConfig
    from dpaudit.sweep.run import run_sweep

    warnings.simplefilter("ignore")
    epsilons = tuple(float(e) for e in args.eps.split(","))
    data = load_data(None, None, records=args.records, seed=args.seed)
    dataset = DataOptions(dataset="blobs-2d", records=args.records)
    target = TargetOptions(mechanism="ndlaplace")
    sweep_cfg = SweepConfig(target=target, epsilons=epsilons, repeats=args.repeats, clusterers=("kmeans",),
                            attack=AttackOptions(attacks=("yeom",)), seed=args.seed, data=dataset)
    audit_kw = dict(target=target, claim=ClaimOptions(epsilon=1.0), budget=Budget(samples=args.samples),
                    attack=AttackOptions(attacks=("yeom",), repeats=args.attack_repeats), seed=args.seed, data=dataset)
    scratch_dir = tempfile.TemporaryDirectory(prefix="bench-dask-")
    scratch = Path(scratch_dir.name)
    counter = iter(range(10**6))

    def sweep(n_jobs: int = 1, scheduler: str | None = None) -> Callable[[], dict[str, Any]]:
        return lambda: run_sweep(sweep_cfg, data, scratch / f"sweep-{next(counter)}", n_jobs=n_jobs,
                                 scheduler=scheduler, progress=False, formats=("json",))

    def audit(n_jobs: int = 1, scheduler: str | None = None) -> Callable[[], dict[str, Any]]:
        cfg = AuditConfig(**audit_kw, run=RunSettings(n_jobs=n_jobs, scheduler=scheduler))
        return lambda: run_audit(cfg, data, scratch / f"audit-{next(counter)}", progress=False).to_dict()

    return sweep, audit, scratch_dir


def _measure(args: argparse.Namespace) -> tuple[dict[tuple[str, str], list[float]],
                                                dict[tuple[str, str], list[dict[str, Any]]], float, str]:
    """Every run of every (workload, backend), round-robin: wall times, results, cluster start-up, dask version."""
    import dask
    from dask.distributed import LocalCluster

    sweep, audit, scratch_dir = _workloads(args)
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=":0")
    cluster_start = time.perf_counter() - t0
    times: dict[tuple[str, str], list[float]] = {}
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        address = cluster.scheduler_address
        plan = [("sweep", BACKENDS[0], sweep()), ("sweep", BACKENDS[1], sweep(n_jobs=2)),
                ("sweep", BACKENDS[2], sweep(scheduler=address)),
                ("audit", BACKENDS[0], audit()), ("audit", BACKENDS[1], audit(n_jobs=2)),
                ("audit", BACKENDS[2], audit(scheduler=address))]
        for run in range(args.runs):  # round-robin: a busy spell on the machine hits every backend alike
            for workload, backend, fn in plan:
                t0 = time.perf_counter()
                results.setdefault((workload, backend), []).append(fn())
                times.setdefault((workload, backend), []).append(time.perf_counter() - t0)
                print(f"run {run + 1}: {workload} on {backend}: {times[workload, backend][-1]:.1f} s",
                      file=sys.stderr, flush=True)
    finally:
        cluster.close()
        scratch_dir.cleanup()
    return times, results, cluster_start, dask.__version__


def _compare(results: dict[tuple[str, str], list[dict[str, Any]]]) -> tuple[list[str], dict[str, int]]:
    """The differences of every run against the first run in one process, and how many values were compared."""
    failures: list[str] = []  # every run of every backend against the first run in one process
    for workload in ("sweep", "audit"):
        reference = results[workload, BACKENDS[0]][0]
        for backend in BACKENDS:
            for run, result in enumerate(results.get((workload, backend), [])):
                failures += [f"{workload}, {backend} run {run + 1} vs one process run 1: {d}"
                             for d in differences(reference, result)]
    compared = {w: len(list(leaves(results[w, BACKENDS[0]][0]))) for w in ("sweep", "audit")}
    return failures, compared


def _page(args: argparse.Namespace, times: dict[tuple[str, str], list[float]], failures: list[str],
          compared: dict[str, int], cluster_start: float, dask_version: str) -> tuple[str, str]:
    """The results text (table, identity check, machine) and the command that reproduces it."""
    table = ["| workload | backend | median wall time (s) | runs (s) | ratio to one process |",
             "|---|---|---:|---:|---:|"]
    for workload in ("sweep", "audit"):
        base = statistics.median(times[workload, BACKENDS[0]])
        for backend in BACKENDS:
            t = times[workload, backend]
            table.append(f"| {workload} | {backend} | {statistics.median(t):.1f} | "
                         f"{' / '.join(f'{x:.1f}' for x in t)} | {statistics.median(t) / base:.2f} |")
    verdict = (f"identical: every compared value ({compared['sweep']} in the sweep's results, "
               f"{compared['audit']} in the audit's) equal on all backends and runs" if not failures else
               f"FAILED: {len(failures)} value(s) differ")
    command = (f"python benchmarks/bench_dask.py --records {args.records} --eps {args.eps} --repeats {args.repeats} "
               f"--samples {args.samples} --attack-repeats {args.attack_repeats} --runs {args.runs} --seed {args.seed}"
               + (f" --out {args.out.as_posix()} --force" if args.out else ""))
    machine = (f"{os.cpu_count()} logical cores, {platform.machine()}, Python {platform.python_version()}, "
               f"dask {dask_version}; LocalCluster start-up {cluster_start:.1f} s (not in the runs)")
    text = "\n".join([
        f"Sweep: `ndlaplace`, ε ∈ {{{args.eps}}} × {args.repeats} repeats, {args.records} blobs-2d records, "
        f"KMeans, `yeom`. Audit: `ndlaplace` at ε = 1, {args.samples} samples, `yeom` × {args.attack_repeats} "
        f"repeats, default parts. Wall time: median of {args.runs} runs, taken round-robin over the backends "
        "(each a fresh output folder); ratio = backend ÷ one process (< 1 is faster). "
        "Timed on a shared machine: compare ratios, not seconds.", "",
        *table, "",
        f"Identity check: {verdict}.", "",
        f"Machine: {machine}.", ""])
    if failures:
        text += "\nDifferences:\n\n" + "\n".join(f"- {f}" for f in failures) + "\n"
    return text, command


def main() -> int:
    args = _parse_args()
    guard_outputs(args, "out")
    times, results, cluster_start, dask_version = _measure(args)
    failures, compared = _compare(results)
    text, command = _page(args, times, failures, compared, cluster_start, dask_version)
    print(text)
    if args.out is not None:
        args.out.write_text(f"# `sweep` and `audit` on joblib and Dask\n\n`{command}`\n\n{text}", encoding="utf-8")
    if failures:
        print(f"Error: the backends disagree on {len(failures)} value(s); see above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
