"""What a skilled auditor certifies on each buggy function of ``functions.py``, knowing its bug.

    benchmarks/.venvs/thirdparty/bin/python benchmarks/thirdparty/witnesses.py [--fits 2000] [--seed 0] [--json PATH]

For every buggy function: one neighbouring pair (D, D′) under add/remove and one event, both
chosen from reading the code (no search), the function run ``--fits`` times on each dataset
(default 2,000, about the certification sample dpaudit's default budget leaves for a plain
function), and the textbook certificate ε ≥ ln(p_lo/q_hi): p_lo the Clopper–Pearson lower limit of
the favoured dataset's rate, q_hi the upper limit of the other's, at α/2 = 2.5 % each (95 %
together).  It is the bar an estimator working blind should reach at its defaults.  Runs in the
third party's interpreter (numpy, scipy, diffprivlib; nothing of dpaudit) and imports
``functions.py`` by path.  Every dataset is two-dimensional, as blobs-2d is.
"""

import argparse
import importlib.util
import json
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import beta

HERE = Path(__file__).resolve().parent


def _load():
    spec = importlib.util.spec_from_file_location("thirdparty_functions", HERE / "functions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _at(point, n):
    return np.tile(np.asarray(point, dtype=float), (n, 1))


def _plus(D, record):
    return np.vstack([D, np.asarray(record, dtype=float)[None]])


# name: (D, D′, event on a release (k × 2 centres), event in words, the dataset it favours, why)
WITNESSES = {
    "diffprivlib_kmeans_bounded": (
        _at((-1, -1), 3), _plus(_at((-1, -1), 3), (1, 1)),
        lambda c: bool(np.all(c < 0)), "every centre has both coordinates < 0", "D′",
        "the start centres lie in [-0.5, 0.5]² at least 1 apart, so one has a coordinate ≥ 0; on D the "
        "cluster that owns no record keeps it"),
    "diffprivlib_kmeans_unbounded": (
        _at((-1, -1), 10), _plus(_at((-1, -1), 10), (1, 1)),
        lambda c: bool(np.all(np.abs(c + 1) < 1e-4)), "every centre within 10⁻⁴ of (-1, -1)", "D",
        "on D the bounds are the data's own, (-1, -1) ± 5·10⁻⁶, and every centre lies in them"),
    "their_kmeans": (
        _at((0, 0), 10), _plus(_at((0, 0), 10), (1000, 1000)),
        lambda c: bool(np.any(c > 50)), "some centre has a coordinate > 50", "D′",
        "unclipped means, Lap(1) noise: the far record pulls a centre to ≥ 1000/11"),
    "dplloyd_empty_skip": (
        _at((-1, -1), 10), _plus(_at((-1, -1), 10), (1, 1)),
        lambda c: bool(np.any(np.all(c == 0.5, axis=1))), "some centre is exactly (0.5, 0.5)", "D",
        "the second cluster never owns a record on D and keeps its start point"),
    "dplloyd_unclipped": (
        _at((-1, -1), 10), _plus(_at((-1, -1), 10), (1e6, 1e6)),
        lambda c: bool(np.any(c > 1e4)), "some centre has a coordinate > 10⁴", "D′",
        "nothing is clipped: the far record's cluster sum is 10⁶ against noise of scale 15"),
    "kmeans_noisy_centres_over_n": (
        _at((-1, -1), 30), _plus(_at((-1, -1), 30), (1, 1)),
        lambda c: bool(np.any(np.all(c > 0.75, axis=1))), "some centre has both coordinates > 0.75", "D′",
        "the lone record at (1, 1) is a whole cluster; noise of scale 4/31 ≈ 0.13"),
}


def _point(x):
    return "(" + ", ".join(f"{v:g}" for v in x) + ")"


def certify(k_fav, k_other, n, alpha=0.05):
    p_lo = beta.ppf(alpha / 2, k_fav, n - k_fav + 1) if k_fav > 0 else 0.0
    q_hi = beta.ppf(1 - alpha / 2, k_other + 1, n - k_other) if k_other < n else 1.0
    return max(0.0, float(np.log(p_lo / q_hi))) if p_lo > 0 else 0.0


def run(name, fits, seed):
    fn = getattr(_load(), name)
    D, D2, event, words, favours, why = WITNESSES[name]
    rng = np.random.default_rng([seed, sorted(WITNESSES).index(name)])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_D = sum(event(np.asarray(fn(D.copy(), 1.0, rng))) for _ in range(fits))
        on_D2 = sum(event(np.asarray(fn(D2.copy(), 1.0, rng))) for _ in range(fits))
    k_fav, k_other = (on_D, on_D2) if favours == "D" else (on_D2, on_D)
    return {"function": name, "D": f"{len(D)} records at {_point(D[0])}",
            "D_prime": f"D plus one at {_point(D2[-1])}", "event": words, "favours": favours, "why": why,
            "fits": fits, "in_event_D": int(on_D), "in_event_D_prime": int(on_D2),
            "epsilon_lower_bound": certify(k_fav, k_other, fits), "seconds": time.perf_counter() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=2000, help="fits per dataset")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--json", default=None, help="write the rows here as JSON")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(WITNESSES)
    rows = []
    for name in names:
        row = run(name, args.fits, args.seed)
        rows.append(row)
        print(f"{name:<30} {row['in_event_D']:>5}/{args.fits} on D vs {row['in_event_D_prime']:>5}/{args.fits} on D′ "
              f"({row['event']}): ε ≥ {row['epsilon_lower_bound']:.2f}  [{row['seconds']:.0f} s]", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
