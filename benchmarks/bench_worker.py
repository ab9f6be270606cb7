"""Cost of running audited code in a worker process (dpaudit.worker) versus in-process.

    python benchmarks/bench_worker.py [--releases 5000] [--records 200]

Prints releases per second for `ndlaplace` (a vectorised mechanism: the worker's
cost is the pipe) and `dpfcm` (a slow one: the worker's cost disappears in the
mechanism's own time), in one process, one run each.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mechanisms  # noqa: E402
from dpaudit import datasets  # noqa: E402
from attacks.execution import WorkerMechanism  # noqa: E402
from mechanisms.base import release_many  # noqa: E402


def rate(mech, X, n: int) -> float:
    t0 = time.perf_counter()
    release_many(mech, X, np.random.default_rng(0), n)
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=5000)
    ap.add_argument("--records", type=int, default=200)
    args = ap.parse_args()
    X = datasets.load("blobs-2d", records=args.records).X
    warnings.simplefilter("ignore")
    print(f"{args.records} records × 2 dims; releases per second (higher is better)")
    print(f"{'mechanism':<12} {'releases':>8} {'in-process':>12} {'worker':>10} {'ratio':>7}")
    for name, n in (("ndlaplace", args.releases), ("dpfcm", max(20, args.releases // 250))):
        local = rate(mechanisms.get(name, epsilon=1.0), X, n)
        remote_mech = WorkerMechanism(name, epsilon=1.0, timeout=120)
        remote_mech.release(X, np.random.default_rng(0))  # start the worker, warm the batch size
        remote = rate(remote_mech, X, n)
        remote_mech.close()
        print(f"{name:<12} {n:>8} {local:>12.0f} {remote:>10.0f} {local / remote:>7.1f}")


if __name__ == "__main__":
    main()
