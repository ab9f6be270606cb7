"""What a skilled auditor certifies on each buggy function of ``functions.py``, knowing its bug.

    benchmarks/.venvs/thirdparty/bin/python benchmarks/thirdparty/witnesses.py [--fits 2000] [--seed 0] [--json PATH]

For every buggy function: one neighbouring pair (D, D′) under add/remove and one event, both
chosen from reading the code (no search), the function run ``--fits`` times on each dataset
(default 2,000, about the certification sample dpaudit's default budget leaves for a plain
function), and the textbook certificate ε ≥ ln(p_lo/q_hi): p_lo the Clopper–Pearson lower limit of
the favoured dataset's rate, q_hi the upper limit of the other's, at α/2 = 2.5 % each (95 %
together).  It is the bar an estimator working blind should reach at its defaults.  Runs in the
third party's interpreter (numpy, scipy, diffprivlib, dp-accounting; nothing of dpaudit) and imports
``functions.py`` by path.  The datasets of the main table are two-dimensional, as blobs-2d is.

``gaussian_kmeans_accounted_10x`` gets 2.5 × ``--fits`` per dataset (5,000 at the default), and its
claim has δ = 10⁻⁶: ε ≥ ln((p_lo − δ)/q_hi).  Grid cells (``--only NAME@D``, e.g.
``dplloyd_empty_skip_k3@2``) run the k-variant on d-dimensional datasets in [-1, 1]^d.  For
``diffprivlib_kmeans_bounded_k*`` the event is a threshold on one statistic read off the code (the
farthest centre's distance from the corner holding the data) and the threshold is chosen on a pilot
of ``--fits``/4 fits per dataset drawn from a separate stream, then certified on fresh fits.
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


# the file beside this one that defines a function (this script runs in the third party's interpreter, without
# the project's catalogue): the (ε, δ) k-means have a file of their own, every other function is functions.py's
GAUSSIAN_FUNCTIONS = ("gaussian_kmeans_accounted", "gaussian_kmeans_accounted_10x")


def _load(name):
    file = "gaussian_functions.py" if name in GAUSSIAN_FUNCTIONS else "functions.py"
    spec = importlib.util.spec_from_file_location("thirdparty_functions", HERE / file)
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
        ("the start centres lie in [-0.5, 0.5]² at least 1 apart, so one has a coordinate ≥ 0; on D the "
        "cluster that owns no record keeps it")),
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


def certify_delta(k_fav, k_other, n, delta, alpha=0.05):
    """``certify`` for an (ε, δ) claim: ε ≥ ln((p_lo − δ)/q_hi)."""
    p_lo = beta.ppf(alpha / 2, k_fav, n - k_fav + 1) if k_fav > 0 else 0.0
    q_hi = beta.ppf(1 - alpha / 2, k_other + 1, n - k_other) if k_other < n else 1.0
    return max(0.0, float(np.log((p_lo - delta) / q_hi))) if p_lo > delta else 0.0


def _projection_event(c):
    """``gaussian_kmeans_accounted_10x``: one centre only, and it lies on the far side from (1, 1)."""
    u = np.ones(c.shape[1]) / np.sqrt(c.shape[1])
    return bool(len(c) == 1 and float(c[0] @ u) <= -0.8)


EXTRA = {
    "gaussian_kmeans_accounted_10x": (
        _at((0, 0), 2), _plus(_at((0, 0), 2), (1, 1)), _projection_event,
        "one centre released, its projection on (1, 1)/√2 ≤ −0.8", "D",
        ("the noisy record count (σ = z ≈ 1.43 at 10·ε) says 2 records more often than 3, so one centre "
        "(k_eff = 1); without the record at the corner nothing pulls that centre towards (1, 1)")),
}
FITS_FACTOR = {"gaussian_kmeans_accounted_10x": 2.5}  # the witness: 5,000 fits per side
DELTA = {"gaussian_kmeans_accounted_10x": 1e-6}


def _corner_distance(c):
    """The farthest centre's L2 distance from the corner (-1, …, -1)."""
    return float(np.max(np.linalg.norm(c + 1.0, axis=1)))


def grid_witness(name, d):
    """The pair and event of a grid cell ``<base>_k<k>`` on d-dimensional data (records in [-1, 1]^d)."""
    base, k = name.rsplit("_k", 1)
    k = int(k)
    lo, hi = -np.ones(d), np.ones(d)
    D = _at(lo, 10)
    if base == "dplloyd_empty_skip":
        last = -1.0 + (k - 0.5) * 2.0 / k  # the last start centre, (last, …, last): the farthest from lo
        return (D, _plus(D, hi), lambda c: bool(np.any(np.all(c == last, axis=1))),
                f"some centre is exactly the last start point ({last:.3g}, …)", "D",
                "on D every record is nearest the first centre; the last never owns one and keeps its start")
    if base == "dplloyd_unclipped":
        return (D, _plus(D, 1e6 * hi), lambda c: bool(np.any(c > 1e4)), "some centre has a coordinate > 10⁴",
                "D′", "nothing is clipped: the far record's cluster sum is 10⁶ per coordinate")
    if base == "diffprivlib_kmeans_bounded":
        return (D, _plus(D, hi), ("statistic", _corner_distance),
                "farthest centre from (-1, …) within t (t from a pilot)", "D′",
                ("on D every record is at one corner, so each iteration updates only the centre nearest it: the "
                "farthest centre is never noised and keeps its start point (inside the box); on D′ the record "
                "at the far corner gets the farthest start centre noised"))
    raise KeyError(name)


def _describe(X):
    return f"{len(X)} records at {_point(X[0])}"


def _pilot_threshold(fn, D, D2, statistic, pilot, fits, rng):
    """The threshold t of the event ``statistic < t`` (favouring D′) that a pilot says certifies most."""
    a = np.array([statistic(np.asarray(fn(D.copy(), 1.0, rng))) for _ in range(pilot)])
    b = np.array([statistic(np.asarray(fn(D2.copy(), 1.0, rng))) for _ in range(pilot)])
    best, best_t = -1.0, float(np.max(b)) + 1.0
    for t in np.unique(np.r_[a, b]):
        p, q = np.mean(b < t), np.mean(a < t)
        score = certify(int(p * fits + 0.5), int(q * fits + 0.5), fits)
        if score > best:
            best, best_t = score, float(t)
    return best_t


def run(name, fits, seed, d=None):
    """One witness: ``name`` of ``WITNESSES``/``EXTRA`` (d None), or a grid cell (``name`` = ``<base>_k<k>``)."""
    fn = getattr(_load(name), name)
    if d is None:
        D, D2, event, words, favours, why = {**WITNESSES, **EXTRA}[name]
        stream = sorted({**WITNESSES, **EXTRA}).index(name)
    else:
        D, D2, event, words, favours, why = grid_witness(name, d)
        stream = 1000 + 10 * sum(map(ord, name)) + d
    fits = int(fits * FITS_FACTOR.get(name, 1.0) + 0.5)
    delta = DELTA.get(name, 0.0)
    rng = np.random.default_rng([seed, stream])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(event, tuple):  # ("statistic", f): the threshold from a pilot on a separate stream
            statistic = event[1]
            t = _pilot_threshold(fn, D, D2, statistic, max(50, fits // 4), fits,
                                 np.random.default_rng([seed, stream, 1]))
            words = words.replace("t (t from a pilot)", f"{t:.4g} (threshold from a pilot)")

            def event(c, statistic=statistic, t=t):
                return statistic(c) < t
        on_D = sum(event(np.asarray(fn(D.copy(), 1.0, rng))) for _ in range(fits))
        on_D2 = sum(event(np.asarray(fn(D2.copy(), 1.0, rng))) for _ in range(fits))
    k_fav, k_other = (on_D, on_D2) if favours == "D" else (on_D2, on_D)
    return {"function": name, "d": d if d is not None else 2, "D": _describe(D),
            "D_prime": f"D plus one at {_point(D2[-1])}", "event": words, "favours": favours, "why": why,
            "fits": fits, "in_event_D": int(on_D), "in_event_D_prime": int(on_D2), "delta": delta,
            "epsilon_lower_bound": certify_delta(k_fav, k_other, fits, delta), "seconds": time.perf_counter() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=2000, help="fits per dataset")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="",
                    help="comma-separated function names; a grid cell as NAME@D (e.g. dplloyd_empty_skip_k3@2)")
    ap.add_argument("--json", default=None, help="write the rows here as JSON")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or [*WITNESSES, *EXTRA]
    rows = []
    for entry in names:
        name, _, dim = entry.partition("@")
        row = run(name, args.fits, args.seed, int(dim) if dim else None)
        rows.append(row)
        print(f"{entry:<34} {row['in_event_D']:>5}/{row['fits']} on D vs {row['in_event_D_prime']:>5}/{row['fits']} "
              f"on D′ ({row['event']}): ε ≥ {row['epsilon_lower_bound']:.2f}  [{row['seconds']:.0f} s]", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
