"""Throughput of ``ndlaplace.release_many`` (issue: foundation, speed goals).

Goals: ≥ 10^7 perturbed 2-D points per second on one core; 10^6 records ×
10 dims in ≤ 1 s.  Everything runs in this one process, pinned to one
thread, and each figure is the best of ``--repeats`` runs.  Two baselines
are timed beside it:

* ``thesis-loop`` — the thesis's per-point procedure (Algorithm 2 without the
  truncation: one Lambert-W inverse CDF and one angle per point, in a Python
  loop), timed on a 10^5 subset and scaled;
* ``numpy-floor`` — drawing the raw random numbers alone (2 normals + 2
  exponentials per 2-D point), the floor any sampler of this law pays.

Usage::

    python benchmarks/bench_ndlaplace.py [--repeats 5] [--out benchmarks/results/ndlaplace.md]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)
from scipy import special  # noqa: E402

from dpaudit.mechanisms.ndlaplace import NDLaplace  # noqa: E402


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def thesis_loop(X: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The thesis's per-point planar Laplace (formula 3.2 + uniform angle)."""
    out = np.empty_like(X)
    for i, (x, y) in enumerate(X):
        p = rng.random()
        r = -(special.lambertw((p - 1) / math.e, k=-1).real + 1) / epsilon
        theta = rng.random() * 2 * math.pi
        out[i] = (x + r * math.cos(theta), y + r * math.sin(theta))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    add_force(parser)
    args = parser.parse_args()
    guard_outputs(args, 'out')
    rng = np.random.default_rng(0)
    mech = NDLaplace(epsilon=1.0)
    rows = []

    n2 = 10**7
    x1 = np.zeros((1, 2))
    t_many = best_of(lambda: mech.release_many(x1, rng, n2), args.repeats)
    t_floor = best_of(lambda: (rng.standard_normal((2, n2)), rng.standard_exponential((2, n2))), args.repeats)
    sub = 10**5
    Xs = rng.normal(size=(sub, 2))
    t_loop = best_of(lambda: thesis_loop(Xs, 1.0, rng), 1) * (n2 / sub)
    rows.append(("2-D, 10^7 points (release_many)", t_many, n2 / t_many, "≥ 1e7 points/s"))
    rows.append(("  numpy-floor: raw draws only", t_floor, n2 / t_floor, ""))
    rows.append(("  thesis-loop (per point, scaled from 10^5)", t_loop, n2 / t_loop, ""))

    X10 = rng.normal(size=(10**6, 10))
    t10 = best_of(lambda: mech.release(X10, rng), args.repeats)
    rows.append(("10^6 × 10-D records (release)", t10, 10**6 / t10, "≤ 1 s"))

    lines = [
        f"# nD-Laplace throughput ({platform.processor() or platform.machine()}, one thread, "
        f"best of {args.repeats})",
        "",
        "| case | seconds | records/s | goal |",
        "|---|---|---|---|",
    ]
    lines += [f"| {c} | {t:.3f} | {r:.3g} | {g} |" for c, t, r, g in rows]
    lines += ["", f"release_many vs thesis-loop: {t_loop / t_many:.0f}× faster; "
              f"vs numpy-floor: {t_many / t_floor:.2f}× the cost of the raw draws."]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
