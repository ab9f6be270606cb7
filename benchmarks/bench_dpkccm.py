"""DP-KCCM family (Ni et al.): NICV of the four variants vs ε, and release speed.

Paper claim (the DP-KCCM paper §4.2): on every dataset
allocation_nk < average_nk < average_k < allocation_k in NICV (lower is
better).  Here: each dataset is min-max scaled into the public box [−1, 1]^d
using its *documented* public bounds (``dpaudit.data.datasets`` ``Dataset.bounds``,
never the data's own min/max), k = 4 as in the paper's figures, ε ∈ {0.1, 0.2,
0.5, 1, 2}, ``--runs`` independent runs per cell (fresh initial centroids and
noise each run, seeds spawned from one SeedSequence).  NICV = (1/N) Σ‖x − c‖²
with each record assigned to its nearest released centre; the table shows mean
± standard error, and the non-private k-means (scikit-learn, k = 4) NICV for
scale.

Speed goal: one ``dpkccm`` release on 30,000 × 24 records in ≤ 0.5 s.

With ``--diffprivlib`` (needs the ``diffprivlib`` extra) it instead runs IBM
diffprivlib's KMeans (``diffprivlib-kmeans``, same box, k, ε grid and seeds)
beside ``average_k`` (DPLloyd-Impr, the algorithm diffprivlib also follows).

Usage::

    python benchmarks/bench_dpkccm.py [--runs 200] [--out benchmarks/results/dpkccm.md]
    python benchmarks/bench_dpkccm.py --diffprivlib [--out benchmarks/results/dpkccm_diffprivlib.md]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)
from tqdm import tqdm  # noqa: E402

from dpaudit.data import datasets  # noqa: E402
from dpaudit.mechanisms.dpkccm import DPKCCM, VARIANTS  # noqa: E402
from dpaudit.utility import metrics  # noqa: E402

EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0)
DATASETS = ("breast-cancer", "wine", "blobs-5d")
PAPER_ORDER = ("allocation_nk", "average_nk", "average_k", "allocation_k")  # best → worst
K = 4


def scaled(name: str) -> np.ndarray:
    """Min-max scale into [−1, 1]^d with the dataset's documented public box."""
    ds = datasets.load(name)
    assert ds.bounds is not None
    lo, hi = ds.bounds
    return np.clip(2.0 * (ds.X - lo) / (hi - lo) - 1.0, -1.0, 1.0)


def nicv_runs(X: np.ndarray, variant: str, eps: float, seeds: list[np.random.SeedSequence]) -> np.ndarray:
    if variant == "diffprivlib":
        from dpaudit.mechanisms.diffprivlib_adapter import DiffprivlibKMeans
        mech = DiffprivlibKMeans(eps, n_clusters=K, bounds=(-1.0, 1.0))
    else:
        mech = DPKCCM(eps, n_clusters=K, variant=variant, bounds=(-1.0, 1.0))  # type: ignore[assignment]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # diffprivlib: empty clusters divide by 0
        return np.array([metrics.nicv(X, mech.release(X, np.random.default_rng(s)).centers) for s in seeds])


def diffprivlib_spend(n: int, d: int) -> str:
    """What diffprivlib's KMeans spends by its own accounting, as a multiple of ε.

    ``fit`` unpacks ``epsilon_0, epsilon_i = _split_epsilon(...)`` (count, per
    dimension) and runs ``_calc_iters`` iterations, each spending
    epsilon_0 + d·epsilon_i under sequential composition.
    """
    from diffprivlib.models import KMeans
    model = KMeans(n_clusters=K, epsilon=1.0, bounds=(np.full(d, -1.0), np.full(d, 1.0)))
    iters = model._calc_iters(d, n)
    eps_count, eps_dim = model._split_epsilon(d, iters)
    total = iters * (eps_count + d * eps_dim)
    return (f"diffprivlib's own accounting at ε = 1: {iters} iterations, count ε {eps_count:.4f} + "
            f"{d} × per-dimension ε {eps_dim:.4f} per iteration ⇒ total spent {total:.3f}·ε.")


def speed(repeats: int) -> tuple[float, float]:
    X = np.random.default_rng(0).uniform(-1.0, 1.0, size=(30_000, 24))
    mech = DPKCCM(1.0, n_clusters=5, variant="allocation_nk")
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        mech.release(X, np.random.default_rng(i))
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.max(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--speed-repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--diffprivlib", action="store_true",
                        help="compare diffprivlib KMeans with average_k instead of the four variants")
    parser.add_argument("--no-progress", action="store_true")
    add_force(parser)
    args = parser.parse_args()
    guard_outputs(args, 'out')
    variants = ("average_k", "diffprivlib") if args.diffprivlib else VARIANTS
    cmd = "python benchmarks/bench_dpkccm.py" + (" --diffprivlib" if args.diffprivlib else "")

    root = np.random.SeedSequence(20261121)
    title = "diffprivlib KMeans vs average_k" if args.diffprivlib else "DP-KCCM family"
    lines = [f"# {title}: NICV vs ε (k = {K}, {args.runs} runs per cell)", "",
             f"`{cmd} --runs {args.runs}` — Python {platform.python_version()}, "
             f"numpy {np.__version__}, one thread.", "",
             "Mean NICV ± standard error (lower is better); data min-max scaled into [−1, 1]^d "
             "with each dataset's documented public box.  `order` is the observed ranking, best first"
             + ("." if args.diffprivlib else "; ✓ when it equals the paper's "
                "allocation_nk < average_nk < average_k < allocation_k."), ""]
    csv = ["dataset,epsilon,variant,runs,nicv_mean,nicv_se"]
    holds = 0
    cells = 0
    t_start = time.perf_counter()
    bar = tqdm(total=len(DATASETS) * len(EPSILONS) * len(variants), file=sys.stderr,
               disable=args.no_progress or not sys.stderr.isatty())
    for name in DATASETS:
        X = scaled(name)
        from sklearn.cluster import KMeans
        ref = metrics.nicv(X, KMeans(K, n_init=10, random_state=0).fit(X).cluster_centers_)
        lines += [f"## {name} ({X.shape[0]} × {X.shape[1]}); non-private k-means NICV {ref:.4f}", ""]
        if args.diffprivlib:
            lines += [diffprivlib_spend(X.shape[0], X.shape[1]), ""]
        lines += [
                  "| ε | " + " | ".join(variants) + " | order |" + ("" if args.diffprivlib else " paper order? |"),
                  "|---|" + "---|" * (len(variants) + (1 if args.diffprivlib else 2))]
        for eps in EPSILONS:
            seeds = root.spawn(args.runs)
            means = {}
            cols = []
            for v in variants:
                vals = nicv_runs(X, v, eps, seeds)   # same seeds across variants (paired design)
                bar.update()
                m, se = vals.mean(), vals.std(ddof=1) / np.sqrt(len(vals))
                means[v] = m
                cols.append(f"{m:.4f} ± {se:.4f}")
                csv.append(f"{name},{eps},{v},{len(vals)},{m:.6f},{se:.6f}")
            order = tuple(sorted(variants, key=means.__getitem__))
            ok = order == PAPER_ORDER
            holds += ok
            cells += 1
            tail = "" if args.diffprivlib else f" {'✓' if ok else '✗'} |"
            lines.append(f"| {eps:g} | " + " | ".join(cols) + f" | {' < '.join(order)} |" + tail)
        lines.append("")
    bar.close()
    elapsed = time.perf_counter() - t_start
    if args.diffprivlib:
        import diffprivlib
        lines += [f"diffprivlib {diffprivlib.__version__}. NICV runs took {elapsed:.0f} s."]
        finish(lines, csv, args.out)
        return
    med, worst = speed(args.speed_repeats)
    lines += [f"Paper's full ordering reproduced in {holds} of {cells} (dataset, ε) cells. "
              f"NICV runs took {elapsed:.0f} s.", "",
              "## Speed", "",
              f"`dpkccm` (allocation_nk, k = 5, 15 clusters during the iterations) on 30,000 × 24 records: "
              f"median {med:.3f} s per release, slowest {worst:.3f} s over {args.speed_repeats} releases "
              "(goal ≤ 0.5 s)."]
    finish(lines, csv, args.out)


def finish(lines: list[str], csv: list[str], out: Path | None) -> None:
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        out.with_suffix(".csv").write_text("\n".join(csv) + "\n")


if __name__ == "__main__":
    main()
