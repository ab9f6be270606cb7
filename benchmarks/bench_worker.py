"""Cost of the execution layer: isolated in-process draws and the worker process, against raw calls.

    python benchmarks/bench_worker.py [--releases 5000] [--records 200] [--repeats 3] [--out FILE.md]

Baseline: the mechanism called directly in this process with no isolation
(``dpaudit.mechanisms.base.release_many``: its vectorised ``release_many`` when it has
one, else a loop of ``release`` sharing one generator).  Compared with it:

* ``isolated`` — :func:`dpaudit.execution.draw_releases` in this process: a private
  copy of the data per call, compared afterwards, an opaque generator per call
  (per release for code without ``release_many``), validation;
* ``worker`` — the same draw through :class:`dpaudit.execution.WorkerMechanism`
  (pipes, .npy frames, fixed batches of 64 for vectorised code).

Mechanisms: ``ndlaplace`` (vectorised: the layer's cost is per call), a plug-in
function adding Laplace noise (cheap, called once per release: the layer's
worst case) and ``dpfcm`` (slow: the layer's cost disappears).  Releases per
second, median of ``--repeats`` runs, one process; the ratios are what to
compare across machines.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dpaudit.mechanisms  # noqa: E402
from dpaudit.data import datasets  # noqa: E402
from dpaudit.execution import WorkerMechanism, draw_releases  # noqa: E402
from dpaudit.mechanisms.base import release_many  # noqa: E402
from dpaudit.mechanisms.plugins import FunctionMechanism  # noqa: E402

PLUGIN = Path(__file__).resolve().parents[1] / "tests" / "plugins" / "faults.py"


def _rate(fn, n: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return n / statistics.median(times)


def measure(name: str, local, spec: str, X: np.ndarray, n: int, repeats: int, **worker_kw) -> dict[str, float]:
    seed = np.random.SeedSequence(0)
    raw = _rate(lambda: release_many(local, X, np.random.default_rng(0), n), n, repeats)
    isolated = _rate(lambda: draw_releases(local, X, seed, n), n, repeats)
    remote = WorkerMechanism(spec, epsilon=1.0, timeout=120, **worker_kw)
    draw_releases(remote, X, seed, min(n, 64))  # start the worker, send the data, warm the batch size
    worker = _rate(lambda: draw_releases(remote, X, seed, n), n, repeats)
    remote.close()
    return {"name": name, "releases": n, "raw": raw, "isolated": isolated, "worker": worker}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=5000)
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="also write the table as Markdown")
    add_force(ap)
    args = ap.parse_args()
    guard_outputs(args, 'out')
    X = datasets.load("blobs-2d", records=args.records).X
    warnings.simplefilter("ignore")
    n = args.releases
    rows = [
        measure("ndlaplace (vectorised)", dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), "ndlaplace", X, n, args.repeats),
        measure("Laplace plug-in function", FunctionMechanism(
            _laplace_plugin(), epsilon=1.0, output="points"), f"{PLUGIN}:honest", X, n, args.repeats),
        measure("dpfcm", dpaudit.mechanisms.get("dpfcm", epsilon=1.0), "dpfcm", X, max(20, n // 250), args.repeats),
    ]
    header = (f"{args.records} records × 2 dims; releases per second, median of {args.repeats} runs "
              "(higher is better); ratios: baseline ÷ layer (1.0 = free)")
    table = ["| mechanism | releases | raw in-process (baseline) | isolated in-process | ratio | worker | ratio |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        table.append(f"| {r['name']} | {r['releases']} | {r['raw']:,.0f} | {r['isolated']:,.0f} | "
                     f"{r['raw'] / r['isolated']:.2f} | {r['worker']:,.0f} | {r['raw'] / r['worker']:.2f} |")
    text = header + "\n\n" + "\n".join(table) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(f"# Execution layer overhead\n\n`python benchmarks/bench_worker.py "
                            f"--releases {n} --records {args.records} --repeats {args.repeats}`\n\n{text}",
                            encoding="utf-8")


def _laplace_plugin():
    """The plug-in file's ``honest`` function, loaded as the worker loads it."""
    from dpaudit.mechanisms.registry import load_object
    return load_object(f"{PLUGIN}:honest")


if __name__ == "__main__":
    main()
