"""Tightness and cost of ``estimate_epsilon`` (issue 6 benchmarks).

Cases (one run each, seeded; our figure beside the reference):

1. 1-D Laplace, ε = 0.1, inputs 0 vs 1 (the ``laplace`` control on a sum over
   a [0, 1] box, replace neighbours, so the outputs are Lap(0, 10) vs
   Lap(1, 10)); 10^7 certification samples per dataset.  Target: ε_lb ≥ 0.098
   in ≤ 30 s.  DP-Sniper (REFERENCE-RESULTS.md): 0.0961–0.0990 in 160–186 s
   at 90 % confidence; 0.0866 in 24 s cut to 10^7 final samples.
2. ``ndlaplace`` ε = 1, a record moved by distance 1, d = 2 and d = 5,
   10^6 samples per dataset.  Targets: ≥ 0.95 (d = 2) in ≤ 30 s; ≥ 0.8 (d = 5).
3. Label releases: ``dpdbscan-labels`` and ``dpfcm`` (as published) against
   the sample-size ceiling.
4. ``dpkccm``, ``dpdbscan``, ``dpfcm-corrected`` at ε = 1 on 30 thesis blobs:
   the bound reached, releases per second, wall time — with 1,000
   certification samples, and with the default budget (``defaults``).

Issue 9 (plug-ins from ``tests/plugins/``; 30 records uniform on [−1, 1]²):

5. ``refs`` — selection that does not chase chance: the tight Laplace-type
   references (count, noisy histogram, prefix sums, numerical sparse vector)
   at ε = 0.1, 10⁶ certification samples, seeds 0–9: the smallest ε_lb/ε.
   Target ≥ 0.8.
6. ``delta`` — the raw input released once in 10³ runs, claiming (1, 10⁻⁶),
   default settings (vector and points).  Target: violation.
7. ``shape`` — an output of length n under add-remove (violation) and replace
   (no violation), n synthetic points (violation) or a noisy number of them
   (no violation), default settings.
8. ``small`` — a count exact below 10 records; a count exact only for 3–4
   records with a high mean (the model-based search's case), default settings.
9. ``weak`` — sensitivity 2 treated as 1 at ε = 0.1 (true 0.2), default settings.

Usage::

    python benchmarks/bench_epsilon.py [--n-jobs 2] [--quick] [--only refs,delta,...]
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
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402
from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "plugins"))

import flawed  # noqa: E402
import references  # noqa: E402

import dpaudit.mechanisms  # noqa: E402
from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon  # noqa: E402
from dpaudit.attacks.epsilon.pairs.neighbours import NeighbourPair, candidate_pairs  # noqa: E402
from dpaudit.data import datasets  # noqa: E402

X_UNIT = np.random.default_rng(0).uniform(-1.0, 1.0, size=(30, 2))


def _row(case: str, res, target: str, reference: str, wall: float) -> dict:
    # Thresholds are shown in full here (reveal=True): every dataset in this script is synthetic.
    releases = 2 * res.samples + res.selection_samples_total
    return {"case": case, "bound": res.epsilon_lower_bound, "claim": res.claim.epsilon, "ceiling": res.ceiling,
            "verdict": res.verdict, "samples": res.samples, "selection": res.selection_samples_total,
            "event": res.selected_event.describe(reveal=True)["text"], "pair": res.pair["name"], "wall": wall,
            "rate": releases / wall, "target": target, "reference": reference}


def laplace_1d(n_jobs: int, quick: bool, confidence: float = 0.95) -> dict:
    mech = dpaudit.mechanisms.get("laplace", epsilon=0.1, query="sum", bounds=(0.0, 1.0), neighbours="replace")
    D = np.array([[0.0], [0.0]])
    pair = NeighbourPair("0-vs-1", D, np.array([[0.0], [1.0]]), "replace", 1, np.array([1.0]), np.array([0.0]),
                         description="one input 0 vs 1 (sum query, sensitivity 1)")
    n = 10 ** 6 if quick else 10 ** 7
    t = time.perf_counter()
    res = estimate_epsilon(mech, D, budget=Budget(samples=n, selection_samples=n // 10, confidence=confidence),
                           search=SearchSpace(pairs=[pair]), run=RunSettings(n_jobs=n_jobs, progress=False), seed=0)
    return _row(f"laplace 1-D ε=0.1, 0 vs 1 ({confidence:.0%})", res, "≥ 0.098 in ≤ 30 s",
                "DP-Sniper 0.0961–0.0990 in 160–186 s (90 %); 0.0866 in 24 s at 10^7", time.perf_counter() - t)


def ndlaplace(d: int, n_jobs: int, quick: bool) -> dict:
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    X = np.vstack([np.zeros(d), np.full(d, 5.0)])
    pair = candidate_pairs(X, "metric", distance=1.0)[0]
    n = 10 ** 5 if quick else 10 ** 6
    t = time.perf_counter()
    res = estimate_epsilon(mech, X, budget=Budget(samples=n), search=SearchSpace(pairs=[pair]),
                           run=RunSettings(n_jobs=n_jobs, progress=False), seed=0)
    target = "≥ 0.95 in ≤ 30 s" if d == 2 else "≥ 0.8"
    return _row(f"ndlaplace d={d} ε=1, distance 1", res, target, "-", time.perf_counter() - t)


def clustering(spec: str, params: dict, samples: int | None, n_jobs: int, target: str) -> dict:
    ds = datasets.load("blobs-2d", records=30)
    mech = dpaudit.mechanisms.get(spec, epsilon=1.0, **params)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpaudit.mechanisms.PrivacyLeakWarning)
        res = estimate_epsilon(mech, ds.X, budget=Budget(samples=samples),
                               run=RunSettings(n_jobs=n_jobs, progress=False), seed=0)
    label = "default budget" if samples is None else "30 blobs"
    return _row(f"{spec} ε=1 ({label})", res, target, "no published auditor handles clustering outputs",
                time.perf_counter() - t)


def plugin(case: str, mech, n_jobs: int, target: str, reference: str = "-", samples: int | None = None) -> dict:
    """One audit of a test plug-in on 30 records uniform on [−1, 1]² (default settings unless ``samples``)."""
    t = time.perf_counter()
    res = estimate_epsilon(mech, X_UNIT, budget=Budget(samples=samples),
                           run=RunSettings(n_jobs=n_jobs, progress=False), seed=0)
    return _row(case, res, target, reference, time.perf_counter() - t)


def tightness(make, epsilon: float, n_jobs: int, quick: bool) -> dict:
    """The smallest ε_lb/ε over seeds 0–9 (0–2 with --quick) at 10⁶ certification samples."""
    seeds = range(3 if quick else 10)
    t = time.perf_counter()
    results = [estimate_epsilon(make(epsilon), X_UNIT, budget=Budget(samples=10 ** 6),
                                run=RunSettings(n_jobs=n_jobs, progress=False), seed=s)
               for s in seeds]
    wall = time.perf_counter() - t
    worst = min(results, key=lambda r: r.epsilon_lower_bound)
    row = _row(f"{make.__name__} ε={epsilon:g}, seeds 0–{len(seeds) - 1}", worst, "min ε_lb ≥ 0.8·ε",
               f"min ε_lb/ε = {worst.epsilon_lower_bound / epsilon:.3f}, median "
               f"{np.median([r.epsilon_lower_bound for r in results]) / epsilon:.3f}", wall / len(seeds))
    return row


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="10× fewer samples (a smoke run)")
    ap.add_argument("--only", default="", help="comma-separated subset: laplace,nd2,nd5,labels,clustering,"
                                               "defaults,refs,delta,shape,small,weak")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/epsilon.md"))
    add_force(ap)
    return ap.parse_args()


def _estimator_cases(args: argparse.Namespace, want: Callable[[str], bool]) -> list[Callable[[], dict]]:
    """Cases 1–4: Laplace, nD-Laplace, label releases and clustering mechanisms."""
    box = (-15.0, 15.0)
    cl = 300 if args.quick else 1000
    cases = []
    if want("laplace"):
        cases.append(lambda: laplace_1d(args.n_jobs, args.quick))
        cases.append(lambda: laplace_1d(args.n_jobs, args.quick, confidence=0.9))  # DP-Sniper's level
    if want("nd2"):
        cases.append(lambda: ndlaplace(2, args.n_jobs, args.quick))
    if want("nd5"):
        cases.append(lambda: ndlaplace(5, args.n_jobs, args.quick))
    if want("labels"):
        cases.append(lambda: clustering("dpdbscan-labels", dict(alpha=2.0, min_pts=4, bounds=box), cl, args.n_jobs,
                                        "ε_lb = ceiling"))
        cases.append(lambda: clustering("dpfcm", dict(n_clusters=3), cl // 2, args.n_jobs, "violation"))
    if want("clustering"):
        cases.append(lambda: clustering("dpkccm", dict(n_clusters=4, bounds=box), cl, args.n_jobs, "no violation"))
        cases.append(lambda: clustering("dpdbscan", dict(alpha=2.0, min_pts=4, bounds=box), cl, args.n_jobs,
                                        "no violation"))
        cases.append(lambda: clustering("dpfcm-corrected", dict(n_clusters=3, bounds=box), cl, args.n_jobs, "no violation"))
    if want("defaults"):
        for spec, params in (("dpkccm", dict(n_clusters=4, bounds=box)), ("dpdbscan", dict(alpha=2.0, min_pts=4, bounds=box)),
                             ("dpfcm-corrected", dict(n_clusters=3, bounds=box))):
            cases.append(lambda spec=spec, params=params: clustering(spec, params, None, args.n_jobs, "no violation"))
    return cases


def _plugin_cases(args: argparse.Namespace, want: Callable[[str], bool]) -> list[Callable[[], dict]]:
    """Cases 5–9 (issue 9): the test plug-ins."""
    cases = []
    if want("refs"):
        for make in (references.LaplaceCount, references.NoisyHistogram, references.PrefixSum,
                     references.NumericalSparseVector):
            cases.append(lambda make=make: tightness(make, 0.1, args.n_jobs, args.quick))
    if want("delta"):
        cases.append(lambda: plugin("raw count+sum w.p. 1e-3, claim (1, 1e-6)", flawed.RawWithProbability(), args.n_jobs,
                                    "violation"))
        cases.append(lambda: plugin("raw points w.p. 1e-3, claim (1, 1e-6) metric",
                                    flawed.RawPointsWithProbability(), args.n_jobs, "violation"))
    if want("shape"):
        cases.append(lambda: plugin("length-n vector, add-remove", flawed.PerRecordVector(neighbours="add-remove"),
                                    args.n_jobs, "violation"))
        cases.append(lambda: plugin("length-n vector, replace (ε-DP)", flawed.PerRecordVector(), args.n_jobs,
                                    "no violation"))
        cases.append(lambda: plugin("n synthetic points", flawed.SyntheticPoints(noisy=False), args.n_jobs, "violation"))
        cases.append(lambda: plugin("noisy number of synthetic points (ε-DP)", flawed.SyntheticPoints(), args.n_jobs,
                                    "no violation"))
    if want("small"):
        cases.append(lambda: plugin("count exact below 10 records", flawed.ExactBelowTen(), args.n_jobs, "violation"))
        cases.append(lambda: plugin("count exact for 3–4 records with a high mean", flawed.ExactInACorner(),
                                    args.n_jobs, "violation (model-based search)"))
    if want("weak"):
        cases.append(lambda: plugin("sensitivity 2 as 1, ε = 0.1 (true 0.2)", flawed.SensitivityTwoAsOne(0.1),
                                    args.n_jobs, "violation", "before issue 9: only with 10^5 samples"))
    return cases


def _run(cases: list[Callable[[], dict]]) -> list[dict]:
    """Every case in turn, each printed as it finishes."""
    rows = []
    for case in cases:
        row = case()
        rows.append(row)
        print(f"{row['case']:<36} ε_lb={row['bound']:.4f} (claim {row['claim']:g}, ceiling {row['ceiling']:.3g}) "
              f"{row['verdict']}; {row['wall']:.1f} s, {row['rate']:.3g} releases/s; target {row['target']}",
              flush=True)
    return rows


def _page(args: argparse.Namespace, rows: list[dict]) -> list[str]:
    """The lines of the Markdown page: the table, then the chosen pair and event per case."""
    header = ("| case | ε_lb | claim | ceiling | verdict | samples/dataset | selection releases | "
              "wall s | releases/s | target | reference |")
    lines = [f"# ε estimation benchmark ({platform.machine()}, {os.cpu_count()} cores, --n-jobs {args.n_jobs}"
             f"{', quick' if args.quick else ''})", "",
             "Command: `python benchmarks/bench_epsilon.py --n-jobs %d%s`" % (args.n_jobs, " --quick" if args.quick else ""),
             "", header, "|" + "---|" * 11]
    for r in rows:
        lines.append(f"| {r['case']} | {r['bound']:.4f} | {r['claim']:g} | {r['ceiling']:.3g} | {r['verdict']} | "
                     f"{r['samples']:,} | {r['selection']:,} | {r['wall']:.1f} | {r['rate']:.3g} | {r['target']} | "
                     f"{r['reference']} |")
    lines += ["", "Chosen pair and event per case:", ""]
    lines += [f"- {r['case']}: pair `{r['pair']}`, event `{r['event']}`" for r in rows]
    return lines


def main() -> None:
    args = _parse_args()
    guard_outputs(args, 'out')
    only = set(filter(None, args.only.split(",")))
    want = lambda k: not only or k in only  # noqa: E731
    rows = _run(_estimator_cases(args, want) + _plugin_cases(args, want))
    lines = _page(args, rows)
    if not only:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
