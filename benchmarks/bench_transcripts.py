"""Certified bounds on clustering releases: transcripts, worst-case constructions, ceilings (issue 10).

Every row is one seeded ``estimate_epsilon`` run (95 % confidence, ``--n-jobs``
joblib workers) beside the *ceiling* of its pair: the best bound a perfect
test could certify with the same number of certification releases
(:mod:`dpaudit.attacks.epsilon.certification.ceilings`; per-limit level α/4, as the estimator certifies two
statements at α/2 each), computed

* ``exact``: the transcript's privacy-loss distribution (composed Laplace draws);
* ``RR``: an upper bound, randomised response with each draw's (or
  iteration's) ε — it dominates every composition of such draws;
* ``sim``: a simulation of the audit's own log-likelihood-ratio statistic
  (best threshold on it, 10^6 simulated releases per dataset);
* for final outputs, the transcript's ceiling is an upper bound
  (post-processing), and a single event's exact value a lower one.

Rows (``--rows``, comma-separated; default all):

``kccm-t``       dpkccm (allocation_k: DP-KCCM's schedule) transcript, k = 1, d = 1, box ±100 — goal ≥ 0.8
``kccm-t-default`` dpkccm transcript at its defaults (k = 4, d = 2, box ±1) — ceiling only reachable far below
``dbscan-t``     dpdbscan transcript (naive histogram) — goal ≥ 0.8
``fcmc-t``       dpfcm-corrected transcript, c = 2, m = 1.01, d = 1 — goal ≥ 0.8
``fcmc-t-default`` dpfcm-corrected transcript at m = 2
``dpfcm-t``      dpfcm as published, transcript — flagged with a margin
``dpl-t-empty``  diffprivlib KMeans transcript, empty-cluster construction — flagged
``dpl-overspend`` diffprivlib KMeans, k = 1, d = 30: the 1.75·ε overspend — the computation
``dbscan-f``     dpdbscan spans, final output, core-threshold constructions — goal ε_lb > 0
``dpl-f``        diffprivlib KMeans (bounded), final output, centroid constructions — goal ε_lb > 0
``kccm-f``, ``fcmc-f`` final outputs of dpkccm / dpfcm-corrected with constructions (ceilings)

The two rows with a goal of 0.8·ε (``kccm-t``, ``fcmc-t``) are also run on
further seeds (``--seeds``, default 0,7,11): the goal must hold on each, not
on a lucky one; the table shows every seed's ε_lb.

Usage::

    python benchmarks/bench_transcripts.py [--rows kccm-t,dbscan-t] [--n-jobs 2] [--quick] [--seeds 0,7,11]

Results are merged into ``benchmarks/results/transcripts.json`` (one entry per
row, so rows can be run separately) and the table is rewritten to
``benchmarks/results/transcripts.md``.
"""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpaudit.attacks.bounds import clopper_pearson, epsilon_ceiling  # noqa: E402
from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon  # noqa: E402
from dpaudit.attacks.epsilon.certification.ceilings import (  # noqa: E402
    dominating_ceiling,
    laplace_composition,
    perfect_test_ceiling,
    simulated_ceiling,
)
from dpaudit.attacks.epsilon.certification.draw_budgets import draw_budgets  # noqa: E402
from dpaudit.attacks.epsilon.pairs.constructions import (  # noqa: E402
    core_threshold_pairs,
    empty_cluster_pair,
    lone_corner_pair,
    neighbour_sum_tail,
    tiny_pair,
)
from dpaudit.attacks.epsilon.selection.transcripts import TranscriptFeatureMap, TranscriptView  # noqa: E402
from dpaudit.mechanisms.base import PrivacyLeakWarning  # noqa: E402
from dpaudit.mechanisms.dpdbscan import DPDBSCAN  # noqa: E402
from dpaudit.mechanisms.dpfcm import DPFCM, DPFCMCorrected  # noqa: E402
from dpaudit.mechanisms.dpkccm import DPKCCM  # noqa: E402

ALPHA = 0.05
LIMIT_ALPHA = ALPHA / 2          # per certified statement (two statements), each CP limit at α/4
RESULTS = Path(__file__).resolve().parent / "results"


def _audit(mech: Any, pairs: list, samples: int, n_jobs: int, selection: int | None = None, seed: int = 0,
           classifier: Any = "logistic") -> tuple[Any, float]:
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        res = estimate_epsilon(mech, pairs[0].D, budget=Budget(samples=samples, selection_samples=selection),
                               search=SearchSpace(pairs=pairs, classifier=classifier),
                               run=RunSettings(n_jobs=n_jobs, progress=False), seed=seed)
    return res, time.perf_counter() - t


def _row(key: str, case: str, mode: str, res: Any, wall: float, goal: str, reached: bool | None,
         ceilings: dict[str, float], note: str = "") -> dict[str, Any]:
    return {"key": key, "case": case, "mode": mode, "bound": res.epsilon_lower_bound, "claim": res.claim.epsilon,
            "verdict": res.verdict, "samples": res.samples, "selection": res.selection_samples_total,
            "separation_ceiling": res.ceiling, "ceilings": ceilings, "goal": goal, "reached": reached,
            "pair": res.pair["name"], "event": res.selected_event.describe(reveal=True)["text"],
            "wall": wall, "note": note}


def _budget_ceilings(mech: Any, pair: Any, n: int) -> dict[str, float]:
    b = draw_budgets(mech, pair)
    if b is None:
        return {}
    out = {"RR": dominating_ceiling(b.epsilons, n, alpha=LIMIT_ALPHA).bound}
    if b.kind in ("exact", "laplace-upper"):
        out["exact" if b.kind == "exact" else "Laplace (upper)"] = perfect_test_ceiling(
            laplace_composition(b.epsilons), n, alpha=LIMIT_ALPHA).bound
    return out


def _sim_ceiling(mech: Any, pair: Any, n: int, sims: int) -> float:
    """Best threshold on the audit's llr statistic at n, from ``sims`` simulated transcripts per dataset.

    With fewer simulations than n the tails are too noisy (the best of many thresholds is flattered),
    so the rows simulate as many releases as they certify."""
    view, fmap = TranscriptView(mech), TranscriptFeatureMap(pair)
    chunk = 65_536
    stats = []
    for s, data in enumerate((pair.D, pair.D_prime)):
        rng = np.random.default_rng(10_000 + s)
        parts = []
        for start in range(0, sims, chunk):
            parts.append(fmap(view.release_many(data, rng, min(chunk, sims - start)))[:, 0])
        stats.append(np.concatenate(parts))
    return simulated_ceiling(stats[0], stats[1], n, alpha=LIMIT_ALPHA).bound


# --------------------------------------------------------------------------- transcript rows
GOAL_ROWS = ("kccm-t", "fcmc-t")  # rows whose 0.8·ε goal is checked on every seed of --seeds


def kccm_t(n_jobs: int, quick: bool, seed: int = 0) -> dict:
    # allocation_k: DP-KCCM's budget schedule without the merge step, which for k = 1 only adds two
    # clusters the canary's draws never touch (the pair's per-draw budgets are identical) and a
    # costlier data-independent start.
    mech = DPKCCM(1.0, n_clusters=1, variant="allocation_k", bounds=(-100.0, 100.0))
    pair = tiny_pair(mech.bounds, 1)
    n = 10 ** 6 if quick else 10 ** 7
    res, wall = _audit(TranscriptView(mech), [pair], n, n_jobs, seed=seed)
    ceil = _budget_ceilings(mech, pair, n)
    return _row("kccm-t", "dpkccm (allocation_k) transcript, k=1, d=1, box ±100", "transcript", res, wall,
                "≥ 0.8", res.epsilon_lower_bound >= 0.8, ceil,
                "the sum draw carries 100/101 of each iteration's ε: the loss sits in 12 draws")


def kccm_t_default(n_jobs: int, quick: bool) -> dict:
    mech = DPKCCM(1.0, n_clusters=4, variant="allocation_nk", bounds=(-1.0, 1.0))
    pair = lone_corner_pair(mech.bounds, 2, 4)
    n = 10 ** 4
    res, wall = _audit(TranscriptView(mech), [pair], n, n_jobs)
    ceil = _budget_ceilings(mech, pair, n)
    ceil.update({f"exact @1e{e}": perfect_test_ceiling(laplace_composition(draw_budgets(mech, pair).epsilons),
                                                        10 ** e, alpha=LIMIT_ALPHA).bound for e in (7, 9)})
    return _row("kccm-t-default", "dpkccm transcript at defaults (k=4, d=2, box ±1), lone corner", "transcript",
                res, wall, "(ceiling)", None, ceil, "36 draws of ε/72–ε/24 each: 0.8·ε is out of reach")


def dbscan_t(n_jobs: int, quick: bool) -> dict:
    mech = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="naive")
    pairs = core_threshold_pairs(mech, 2)
    n = 10 ** 4 if quick else 10 ** 5
    res, wall = _audit(TranscriptView(mech), pairs, n, n_jobs)
    ceil = _budget_ceilings(mech, pairs[0], n)
    return _row("dbscan-t", "dpdbscan transcript (naive histogram), core-threshold pairs", "transcript", res, wall,
                "≥ 0.8", res.epsilon_lower_bound >= 0.8, ceil, "one cell moves: a single Laplace(ε) draw")


def fcmc_t(n_jobs: int, quick: bool, m: float = 1.01, seed: int = 0) -> dict:
    mech = DPFCMCorrected(1.0, n_clusters=2, m=m, bounds=(0.0, 1.0))
    pair = tiny_pair(mech.bounds, 1, at="lo")
    n = 10 ** 6 if quick or m != 1.01 else 10 ** 7
    # Direct statistics only: the replayed ratio is (nearly) the Neyman–Pearson statistic, and with
    # the logistic score added, selection on 10^6 releases picked a rarer threshold that realised
    # 0.633 at 10^7 (a winner's-curse choice; the selection itself is not this module's).
    res, wall = _audit(TranscriptView(mech), [pair], n, n_jobs, classifier=None, seed=seed)
    ceil = _budget_ceilings(mech, pair, n)
    if seed == 0:  # a property of n alone (its own simulation seeds): computed once
        ceil["sim (llr)"] = _sim_ceiling(mech, pair, n, 10 ** 5 if quick else n)
    key = "fcmc-t" if m == 1.01 else "fcmc-t-default"
    return _row(key, f"dpfcm-corrected transcript, c=2, m={m:g}, d=1, 2 records + canary", "transcript", res,
                wall, "≥ 0.8" if m == 1.01 else "(ceiling)", res.epsilon_lower_bound >= 0.8 if m == 1.01 else None,
                ceil, "m → 1 puts each iteration's whole ε on the nearest cluster (Σu^m → 1)"
                if m == 1.01 else "m = 2: Σu² < 1 unless the record sits on a centre")


def dpfcm_t(n_jobs: int, quick: bool) -> dict:
    mech = DPFCM(1.0, n_clusters=3)
    pairs = [lone_corner_pair((0.0, 1.0), 2, 3, group_size=3), tiny_pair((0.0, 1.0), 2, size=3)]
    n = 500 if quick else 2000
    res, wall = _audit(TranscriptView(mech), pairs, n, n_jobs)
    return _row("dpfcm-t", "dpfcm as published (c=3, data min/max box) transcript", "transcript", res, wall,
                "violation, margin > final output's 1.66", res.epsilon_lower_bound > 1.66,
                {"separation": epsilon_ceiling(n, alpha=LIMIT_ALPHA)},
                "every iteration spends the full ε: the loss is unbounded in practice")


def dpl_t_empty(n_jobs: int, quick: bool) -> dict:
    from dpaudit.mechanisms.diffprivlib_adapter import DiffprivlibKMeans

    mech = DiffprivlibKMeans(1.0, 2, bounds=(0.0, 1.0))
    pair = empty_cluster_pair(mech.bounds, 1, 2)
    n = 500 if quick else 2000
    res, wall = _audit(TranscriptView(mech), [pair], n, n_jobs)
    return _row("dpl-t-empty", "diffprivlib KMeans transcript, k=2, d=1, empty-cluster pair", "transcript", res,
                wall, "violation", res.is_violation, {"separation": epsilon_ceiling(n, alpha=LIMIT_ALPHA)},
                "an empty cluster draws no noise: which clusters drew is a deterministic function of the data")


def dpl_overspend(n_jobs: int, quick: bool) -> dict:
    from dpaudit.mechanisms.diffprivlib_adapter import DiffprivlibKMeans

    d = 30
    mech = DiffprivlibKMeans(1.0, 1, bounds=(0.0, 1.0))
    pair = tiny_pair(mech.bounds, d, at="lo")
    n = 300 if quick else 2000
    res, wall = _audit(TranscriptView(mech), [pair], n, n_jobs)
    b = draw_budgets(mech, pair)
    ceil = {f"RR @{n:,}": dominating_ceiling(b.epsilons, n, alpha=LIMIT_ALPHA).bound}
    ceil.update({f"RR @1e{e}": dominating_ceiling(b.epsilons, 10 ** e, alpha=LIMIT_ALPHA).bound
                 for e in (7, 9, 12)})
    return _row("dpl-overspend", f"diffprivlib KMeans transcript, k=1, d={d}: declared spend {b.total:.3f}·ε",
                "transcript", res, wall, "flag 1.75·ε, or show it cannot be", False, ceil,
                f"{len(b.epsilons)} draws of ε {min(b.epsilons):.4f}–{max(b.epsilons):.4f}; even the RR bound stays "
                "below the claim at any feasible n")


# --------------------------------------------------------------------------- final-output rows
def dbscan_f(n_jobs: int, quick: bool) -> dict:
    mech = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="naive")
    pairs = core_threshold_pairs(mech, 2)
    n = 5000 if quick else 40_000
    res, wall = _audit(mech, pairs, n, n_jobs)
    # Lower reference: the chosen cell's own core decision (exact law of the κ-noise sum).
    grid, offsets = mech.grid_for(2)
    from dpaudit.mechanisms.grid import tau0
    thr = mech.min_pts + tau0(int(offsets.shape[0]), grid.n_cells, 1.0, mech.beta)
    x, tail = neighbour_sum_tail(int(offsets.shape[0]), 1.0)
    N = len(next(p for p in pairs if p.name == res.pair["name"]).D)
    p, q = float(np.interp(thr - N - 1, x, tail)), float(np.interp(thr - N, x, tail))
    lo, _ = clopper_pearson(p * n, n, LIMIT_ALPHA / 2, side="lower")
    _, hi = clopper_pearson(q * n, n, LIMIT_ALPHA / 2, side="upper")
    ceil = {"one core decision (exact)": max(float(np.log(lo / hi)), 0.0)}
    ceil.update({f"transcript {k} (upper)": v for k, v in _budget_ceilings(mech, pairs[0], n).items()})
    return _row("dbscan-f", "dpdbscan spans (final output), core-threshold pairs", "final", res, wall, "> 0",
                res.epsilon_lower_bound > 0, ceil)


def dpl_f(n_jobs: int, quick: bool) -> dict:
    from dpaudit.mechanisms.diffprivlib_adapter import DiffprivlibKMeans

    mech = DiffprivlibKMeans(1.0, 2, bounds=(0.0, 1.0))
    pairs = [empty_cluster_pair(mech.bounds, 1, 2), lone_corner_pair(mech.bounds, 1, 2),
             tiny_pair(mech.bounds, 1, at="lo")]
    n = 1000 if quick else 10_000
    res, wall = _audit(mech, pairs, n, n_jobs)
    return _row("dpl-f", "diffprivlib KMeans (bounded), final centres, k=2, d=1", "final", res, wall, "> 0",
                res.epsilon_lower_bound > 0,
                {"transcript (upper)": epsilon_ceiling(n, alpha=LIMIT_ALPHA)},
                "the transcript separates perfectly (empty-cluster skip), so it bounds nothing below the "
                "sample-size ceiling")


def kccm_f(n_jobs: int, quick: bool) -> dict:
    mech = DPKCCM(1.0, n_clusters=1, variant="allocation_k", bounds=(-100.0, 100.0))
    pair = tiny_pair(mech.bounds, 1)
    n = 10 ** 5 if quick else 10 ** 6
    res, wall = _audit(mech, [pair], n, n_jobs)
    ceil = {f"transcript {k} (upper)": v for k, v in _budget_ceilings(mech, pair, n).items()}
    return _row("kccm-f", "dpkccm (allocation_k) final centre + count, k=1, d=1, box ±100", "final", res, wall,
                "> 0", res.epsilon_lower_bound > 0, ceil,
                "the release is post-processing of the transcript, whose ceiling bounds it")


def fcmc_f(n_jobs: int, quick: bool) -> dict:
    mech = DPFCMCorrected(1.0, n_clusters=2, m=1.01, bounds=(0.0, 1.0))
    pair = tiny_pair(mech.bounds, 1, at="lo")
    n = 10 ** 5 if quick else 10 ** 6
    res, wall = _audit(mech, [pair], n, n_jobs)
    return _row("fcmc-f", "dpfcm-corrected final centres + weights, c=2, m=1.01, d=1", "final", res, wall,
                "> 0", res.epsilon_lower_bound > 0,
                {f"transcript {k} (upper)": v for k, v in _budget_ceilings(mech, pair, n).items()},
                "the release is post-processing of the transcript, whose ceiling bounds it")


ROWS: dict[str, Callable[..., dict]] = {
    "kccm-t": kccm_t, "kccm-t-default": kccm_t_default, "dbscan-t": dbscan_t, "fcmc-t": fcmc_t,
    "fcmc-t-default": lambda j, q: fcmc_t(j, q, m=2.0), "dpfcm-t": dpfcm_t, "dpl-t-empty": dpl_t_empty,
    "dpl-overspend": dpl_overspend, "dbscan-f": dbscan_f, "dpl-f": dpl_f, "kccm-f": kccm_f, "fcmc-f": fcmc_f,
}


def _fmt_ceilings(c: dict[str, float]) -> str:
    return "; ".join(f"{k} {v:.3f}" for k, v in c.items()) or "-"


def write_table(results: dict[str, dict], n_jobs: int) -> None:
    lines = [f"# Transcripts, constructions, ceilings ({platform.machine()}, {os.cpu_count()} cores, "
             f"--n-jobs {n_jobs})", "",
             f"Command: `python benchmarks/bench_transcripts.py --n-jobs {n_jobs}` (rows: `--rows KEY,...`). "
             "95 % confidence; ceilings at the row's certification sample size, each Clopper–Pearson limit at "
             "α/4 (two statements at α/2, the estimator's former rule). The estimator now certifies one "
             "statement at the full α with the split of α between its two limits chosen on selection data, "
             "so a bound may exceed these ceilings slightly (perfect separation at n = 2,000: 6.12 at α/4 per "
             "limit, 6.49 at the best split of α = 0.05).", "",
             f"Rows {', '.join(GOAL_ROWS)} were also run on the seeds listed (their goal must hold on each).", "",
             "| row | case | mode | ε_lb | claim | verdict | samples/dataset | ceilings (perfect test) | goal | "
             "ε_lb by seed | reached | wall s |", "|" + "---|" * 12]
    for key in ROWS:
        if key not in results:
            continue
        r = results[key]
        seeds = r.get("seeds") or {}
        reached = r["reached"] if not seeds else all(b >= 0.8 for b in seeds.values())
        mark = {True: "yes", False: "no", None: "-"}[reached]
        shown = "; ".join(f"{s}: {b:.4f}" for s, b in sorted(seeds.items(), key=lambda kv: int(kv[0]))) or "-"
        lines.append(f"| {key} | {r['case']} | {r['mode']} | {r['bound']:.4f} | {r['claim']:g} | {r['verdict']} | "
                     f"{r['samples']:,} | {_fmt_ceilings(r['ceilings'])} | {r['goal']} | {shown} | "
                     f"{mark} | {r['wall']:.0f} |")
    lines += ["", "Chosen pair and event, and notes:", ""]
    for key in ROWS:
        if key in results:
            r = results[key]
            lines.append(f"- {key}: pair `{r['pair']}`, event `{r['event']}`" + (f". {r['note']}" if r["note"] else ""))
    (RESULTS / "transcripts.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="fewer samples (a smoke run; results not written)")
    ap.add_argument("--rows", default="", help="comma-separated subset of: " + ", ".join(ROWS))
    ap.add_argument("--seeds", default="0,7,11", help="seeds for the rows with a 0.8·ε goal (" +
                    ", ".join(GOAL_ROWS) + ")")
    ap.add_argument("--resume", action="store_true",
                    help="keep rows (and seeds) already in the results file; run only what is missing")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()] or [0]
    keys = [k for k in args.rows.split(",") if k] or list(ROWS)
    unknown = [k for k in keys if k not in ROWS]
    if unknown:
        ap.error(f"unknown rows: {', '.join(unknown)}")
    store = RESULTS / "transcripts.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    for key in keys:
        _run_row(key, args, seeds, results, store)


def _store(results: dict[str, dict], store: Path, n_jobs: int) -> None:
    store.write_text(json.dumps(results, indent=1, default=float) + "\n", encoding="utf-8")
    write_table(results, n_jobs)


def _run_row(key: str, args: argparse.Namespace, seeds: list[int], results: dict[str, dict], store: Path) -> None:
    """Run one row (and, for a goal row, its further seeds), storing after every run so nothing is lost."""
    kept = results.get(key) if args.resume else None
    if kept is None:
        row = ROWS[key](args.n_jobs, args.quick)
        print(f"{key:<15} ε_lb={row['bound']:.4f} {row['verdict']:<19} ceilings: {_fmt_ceilings(row['ceilings'])}; "
              f"{row['wall']:.0f} s; pair {row['pair']}, event {row['event']}", flush=True)
        if key in GOAL_ROWS:
            row["seeds"] = {"0": row["bound"]}
    else:
        row = kept
    if not args.quick:
        results[key] = row
        _store(results, store, args.n_jobs)
    if key not in GOAL_ROWS:
        return
    row.setdefault("seeds", {"0": row["bound"]})
    for seed in (s for s in seeds if s != 0 and str(s) not in row["seeds"]):
        again = ROWS[key](args.n_jobs, args.quick, seed=seed)
        row["seeds"][str(seed)] = again["bound"]
        print(f"{key:<15} seed {seed}: ε_lb={again['bound']:.4f}; {again['wall']:.0f} s; "
              f"event {again['event']}", flush=True)
        if not args.quick:
            _store(results, store, args.n_jobs)


if __name__ == "__main__":
    main()
