"""DP-FCM (Yang, Zhang & Ismail): F-measure vs ε, as published vs corrected.

Seed 004 Figs. 2–4 plot the F-measure of DP-FCM against ε ∈ [0.05, 1] on Iris
(D1), Breast Cancer Wisconsin (D2) and Aggregation (D3).  Here, per ε and
dataset, ``--runs`` independent runs of

* ``dpfcm`` as published: Δf = d, full ε at every iteration, up to 1000
  iterations, data normalised with its own min/max (the paper's step 1; the
  PrivacyLeakWarning is silenced here), labels released;
* the same with Δf = d/n (what the sensitivity of an *unweighted* mean of n
  records would be; unjustified for a weighted FCM centre and derived from the
  exact n) — to show what Δf the paper's reported utility needs;
* ``dpfcm-corrected``: ε split over 5 iterations (its default), noisy weighted sums and
  weights over the public box, centres released — its F-measure uses the
  labels of the nearest released centre, measured after normalising records
  and centres with the public box (the same geometry FCM clusters in);
* plain FCM (no noise) on the box-normalised data, for scale.

c = number of classes (iris 3, breast cancer 2, aggregation 7).  Aggregation
is read from ``../shared/datasets`` (or ``--datasets DIR``) and skipped when
absent; its public box is [0, 40]² (a round box enclosing the set's canvas).

Usage::

    python benchmarks/bench_dpfcm.py [--runs 50] [--datasets ../shared/datasets] \
        [--out benchmarks/results/dpfcm.md]
"""

from __future__ import annotations

import argparse
import gzip
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _outputs import add_force, guard_outputs, skipped_note  # noqa: E402  (benchmarks/_outputs.py)
from tqdm import tqdm  # noqa: E402

from dpaudit.data import datasets  # noqa: E402
from dpaudit.mechanisms.base import Centroids, PrivacyLeakWarning  # noqa: E402
from dpaudit.mechanisms.baselines import FCMBaseline  # noqa: E402
from dpaudit.mechanisms.dpfcm import DPFCM, DPFCMCorrected  # noqa: E402
from dpaudit.utility import metrics  # noqa: E402

EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
REPO = Path(__file__).resolve().parents[1]


SKIPPED: list[str] = []  # datasets whose files are absent: named in the output, never dropped silently


def load_sets(data_dir: Path) -> list[tuple[str, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray], int]]:
    out = []
    for name, c in (("iris", 3), ("breast-cancer", 2)):
        ds = datasets.load(name)
        assert ds.bounds is not None and ds.y is not None
        out.append((name, ds.X, ds.y, ds.bounds, c))
    data, labels = data_dir / "aggregation.data.gz", data_dir / "aggregation.labels0.gz"
    if data.is_file() and labels.is_file():
        with gzip.open(data, "rt") as fh:
            X = np.loadtxt(fh)
        with gzip.open(labels, "rt") as fh:
            y = np.loadtxt(fh, dtype=int)
        out.append(("aggregation", X, y, (np.zeros(2), np.full(2, 40.0)), 7))
    else:
        SKIPPED.append(f"aggregation ({data.name} not found under {data_dir})")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-progress", action="store_true")
    add_force(parser)
    args = parser.parse_args()
    guard_outputs(args, 'out')
    root = np.random.SeedSequence(4)
    lines = [f"# DP-FCM: F-measure vs ε, as published vs corrected ({args.runs} runs per cell)", "",
             f"`python benchmarks/bench_dpfcm.py --runs {args.runs}` — Python {platform.python_version()}, "
             f"numpy {np.__version__}, one thread.", "",
             "Mean F-measure ± standard error (higher is better). Published: Δf = d, full ε per "
             "iteration, labels of the private records. Corrected: ε/5 per iteration, centres only "
             "(scored by nearest released centre).", ""]
    csv = ["dataset,epsilon,variant,runs,f_mean,f_se"]
    t0 = time.perf_counter()
    sets = load_sets(args.datasets)
    bar = tqdm(total=len(sets) * len(EPSILONS), file=sys.stderr,
               disable=args.no_progress or not sys.stderr.isatty())
    for name, X, y, (lo, hi), c in sets:
        Z = (np.clip(X, lo, hi) - lo) / (hi - lo)
        fcm = [metrics.f_measure(y, FCMBaseline(n_clusters=c).release(Z, np.random.default_rng(s)).labels)
               for s in root.spawn(10)]
        lines += [f"## {name} ({X.shape[0]} × {X.shape[1]}, c = {c}); non-private FCM F = "
                  f"{np.mean(fcm):.3f}", "",
                  "| ε | published dpfcm (Δf = d) | published, Δf = d/n | dpfcm-corrected |", "|---|---|---|---|"]
        for eps in EPSILONS:
            seeds = root.spawn(args.runs)
            pub, small, cor = [], [], []
            for s in seeds:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyLeakWarning)
                    lab = DPFCM(eps, n_clusters=c).release(X, np.random.default_rng(s)).labels
                    lab_small = DPFCM(eps, n_clusters=c, sensitivity=X.shape[1] / X.shape[0]).release(
                        X, np.random.default_rng(s)).labels
                pub.append(metrics.f_measure(y, lab))
                small.append(metrics.f_measure(y, lab_small))
                rel = DPFCMCorrected(eps, n_clusters=c, bounds=(lo, hi)).release(X, np.random.default_rng(s))
                pred = Centroids((rel.centers - lo) / (hi - lo)).predict(Z)
                cor.append(metrics.f_measure(y, pred))
            cells = []
            for tag, vals in (("published", pub), ("published_d_over_n", small), ("corrected", cor)):
                v = np.asarray(vals)
                m, se = v.mean(), v.std(ddof=1) / np.sqrt(v.size)
                cells.append(f"{m:.3f} ± {se:.3f}")
                csv.append(f"{name},{eps},{tag},{v.size},{m:.6f},{se:.6f}")
            lines.append(f"| {eps:g} | " + " | ".join(cells) + " |")
            bar.update()
        lines.append("")
    bar.close()
    lines.append(f"Total time {time.perf_counter() - t0:.0f} s.")
    text = "\n".join(lines) + "\n" + skipped_note(SKIPPED)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        args.out.with_suffix(".csv").write_text("\n".join(csv) + "\n")


if __name__ == "__main__":
    main()
