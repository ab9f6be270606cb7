"""What auditing a plain plug-in function costs per release, against the function's own time.

    python benchmarks/bench_plugin_overhead.py [--releases 20000] [--records 30] [--repeats 5] [--out FILE.md]

The project's standard: auditing a plain function ``fn(X, epsilon, rng)`` costs
at most 2× the function's own time per release.  For each plug-in of
``benchmarks/overhead_plugins.py`` (a clipped sum plus Laplace noise, noisy
points, a few noisy Lloyd iterations — from a few µs to about a millisecond):

* **own** — the function called in a loop in this process with one generator;
* **audit** — :func:`dpaudit.execution.draw_releases` of a
  :class:`dpaudit.execution.WorkerMechanism` (the worker warm: started, data
  sent, batch size settled), i.e. everything the audit does per release: a
  fresh seeded generator, the private-copy check, the stacked reply, the
  checks and wrapping in this process.

Both in µs per release, median of ``--repeats`` rounds taken in turn (own,
audit, own, ...), so a loaded machine slows both alike.  The second table is
what a *lane* costs (:mod:`dpaudit.execution.lanes`): starting a worker and
loading the plug-in, and the first release in a new lane (forked from the
loaded template on Linux), for a numpy-only plug-in and, when diffprivlib is
installed, one that imports diffprivlib and scikit-learn.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)

from dpaudit.execution import WorkerMechanism, draw_releases  # noqa: E402
from dpaudit.mechanisms.registry import load_object  # noqa: E402

HERE = Path(__file__).resolve().parent
PLUGINS = HERE / "overhead_plugins.py"
HEAVY = HERE / "overhead_plugins_diffprivlib.py"
FUNCTIONS = (("clipped_sum", "vector", 1.0), ("noisy_points", "points", 1.0), ("noisy_kmeans", "centroids", 0.02))


def _seconds(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def per_release(name: str, output: str, X: np.ndarray, n: int, repeats: int) -> dict[str, Any]:
    """Own and audited µs per release of one plug-in function (medians over interleaved rounds)."""
    fn = load_object(f"{PLUGINS}:{name}")
    mech = WorkerMechanism(f"{PLUGINS}:{name}", epsilon=1.0, output=output, timeout=60)
    draw_releases(mech, X, np.random.SeedSequence(99), min(n, 2000))  # warm: started, data sent, batch settled

    def own() -> None:
        rng = np.random.default_rng(0)
        for _ in range(n):
            fn(X, 1.0, rng)

    owns, audits = [], []
    for r in range(repeats):
        owns.append(_seconds(own) / n * 1e6)
        audits.append(_seconds(lambda r=r: draw_releases(mech, X, np.random.SeedSequence(r), n)) / n * 1e6)
    mech.close()
    own_us, audit_us = statistics.median(owns), statistics.median(audits)
    return {"name": name, "output": output, "releases": n, "own": own_us, "audit": audit_us,
            "ratio": audit_us / own_us}


def lane_costs(spec: str, output: str, X: np.ndarray, lanes: int = 8) -> dict[str, Any]:
    """Seconds to start a worker and load ``spec``; ms for the first release in a new lane and a warm one."""
    t0 = time.perf_counter()
    mech = WorkerMechanism(spec, epsilon=1.0, output=output, timeout=120)
    load = time.perf_counter() - t0
    try:
        firsts = [_seconds(lambda lane=lane: draw_releases(mech, X, np.random.SeedSequence(0), 1, lane=lane))
                  for lane in range(lanes)]
    except TypeError:  # an execution layer without lanes
        mech.close()
        return {"spec": spec, "load": load, "lane": float("nan"), "warm": float("nan"), "forks": "no lanes"}
    warm = statistics.median(_seconds(lambda: draw_releases(mech, X, np.random.SeedSequence(0), 1, lane=0))
                             for _ in range(5))
    forks = "fork" if getattr(getattr(mech, "_lanes", None), "forks", False) else "new interpreter"
    mech.close()
    return {"spec": spec, "load": load, "lane": statistics.median(firsts) * 1e3, "warm": warm * 1e3, "forks": forks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=20000, help="releases per round for the cheapest function")
    ap.add_argument("--records", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None, help="also write the tables as Markdown")
    add_force(ap)
    args = ap.parse_args()
    guard_outputs(args, "out")
    warnings.simplefilter("ignore")
    X = np.random.default_rng(0).normal(size=(args.records, 2))
    rows = [per_release(name, output, X, max(200, int(args.releases * share)), args.repeats)
            for name, output, share in FUNCTIONS]
    table = ["| plug-in function | release | releases per round | own (µs/release) | audited (µs/release) "
             "| ratio |", "|---|---|---:|---:|---:|---:|"]
    table += [f"| `{r['name']}` | {r['output']} | {r['releases']} | {r['own']:.2f} | {r['audit']:.2f} | "
              f"{r['ratio']:.2f} |" for r in rows]
    specs = [(f"{PLUGINS}:noisy_points", "points", "numpy only")]
    try:
        import diffprivlib  # noqa: F401
        specs.append((f"{HEAVY}:dp_kmeans", "centroids", "diffprivlib + scikit-learn"))
    except ImportError:
        print("diffprivlib is not installed: its start-up row is left out", file=sys.stderr)
    costs = [{**lane_costs(spec, output, X), "what": what} for spec, output, what in specs]
    lanes = ["| plug-in imports | start a worker and load (s) | first release in a new lane (ms) | "
             "a warm release (ms) | a new lane is |", "|---|---:|---:|---:|---|"]
    lanes += [f"| {c['what']} | {c['load']:.2f} | {c['lane']:.1f} | {c['warm']:.1f} | {c['forks']} |" for c in costs]
    text = (f"{args.records} records × 2 dims; medians of {args.repeats} interleaved rounds; ratio = audited ÷ own "
            "(the standard: at most 2).\n\n" + "\n".join(table) + "\n\nWhat a lane costs (one run each; the "
            "first release includes the process's first call):\n\n" + "\n".join(lanes) + "\n\n"
            f"Machine: {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}; "
            "a shared machine: compare ratios, not microseconds.\n")
    print(text)
    if args.out is not None:
        command = (f"python benchmarks/bench_plugin_overhead.py --releases {args.releases} --records {args.records} "
                   f"--repeats {args.repeats} --out {args.out.as_posix()} --force")
        args.out.write_text(f"# Auditing a plain plug-in function: cost per release\n\n`{command}`\n\n{text}",
                            encoding="utf-8")


if __name__ == "__main__":
    main()
