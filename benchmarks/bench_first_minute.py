"""The first minute: the README's main job, ``dpaudit attack --mechanism ndlaplace --eps 1``, before and after.

One benchmark process runs the main job as a user types it (a child ``python -m dpaudit attack …`` with the
same seed, its report written to a temporary folder) on two checkouts in turn — the code before
(``--baseline-tree``, a worktree of the older commit) and this one — ``--rounds`` times each, alternating, so
both meet the same load on a shared machine.  For each run it records

* the wall time, and the child's CPU time (user + system) — both grow with the load on a shared machine (the
  job is one busy process, but shared cores and caches slow each instruction), so neither is a quiet-machine
  time: what the alternating runs measure is the ratio after / before under the same load.  A quiet-machine
  time is then one quiet run of the job before (``--quiet-before SECONDS``, with the load it was measured at,
  ``--quiet-load``) times that ratio;
* the 1-minute load average when the run started and when it ended;
* each part's seconds (``provenance.durations_seconds`` of its results.json: every attack and the ε estimate);
* each attack's advantage and TPR at 1 % FPR (means over the repeats) — the same seed on both checkouts, so an
  attack whose code did not change gives the same numbers, and one that did is compared on them;
* the Conclusion line's length.

It also measures the one search that changed, label-only's decision-boundary distances: ART's HopSkipJump
record by record against the batched search (:mod:`dpaudit.attacks.membership.boundary_search`) on the same
shadow target and records — time, mean and median distance, and the correlation of the two (two runs of
either search differ by their random draws; a second batched run with another seed shows how much).

Usage::

    git worktree add /tmp/dpaudit-before <older commit>
    python benchmarks/bench_first_minute.py --baseline-tree /tmp/dpaudit-before --rounds 3 \
        --quiet-before 28.6 --quiet-load 0.2-0.75 --force
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)

REPO = Path(__file__).resolve().parents[1]
MAIN_JOB = ["attack", "--mechanism", "ndlaplace", "--eps", "1"]
PARTS = ("shokri", "yeom", "label-only", "reconstruction", "lira", "rmia", "tracing", "ε estimate")


def run_main_job(tree: Path) -> dict[str, Any]:
    """The main job once, from ``tree``'s code: wall and CPU seconds, load, parts, attack numbers, conclusion."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "dpaudit", *MAIN_JOB, "--out", str(out), "-q"], cwd=tree,
                              env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1, 3):
            raise RuntimeError(f"the main job failed in {tree}:\n{proc.stderr[-2000:]}")
        results = json.loads((out / "results.json").read_text())
    conclusion = proc.stdout.rstrip().splitlines()[-1]
    attacks = {a["name"]: {"advantage": a.get("advantage"), "tpr_at_1pct_fpr": a.get("tpr_at_1pct_fpr"),
                           "auc": a.get("auc")}
               for a in results["attacks"] if a.get("status") == "ok" and a.get("advantage") is not None}
    return {"wall_seconds": wall, "cpu_seconds": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "load_start": load0, "load_end": os.getloadavg()[0],
            "parts": results["provenance"].get("durations_seconds", {}), "attacks": attacks,
            "epsilon_lower_bound": (results.get("epsilon_estimate") or {}).get("epsilon_lower_bound"),
            "conclusion_length": len(conclusion), "conclusion": conclusion}


def search_agreement(seed: int = 0, records: int = 200) -> dict[str, Any]:
    """ART's HopSkipJump against the batched search on one shadow target of the main job's set-up."""
    import warnings

    import numpy as np

    if str(REPO) not in sys.path:  # this checkout's dpaudit, whatever the interpreter has installed
        sys.path.insert(0, str(REPO))
    import dpaudit
    from dpaudit.attacks.membership.boundary_search import boundary_distances
    from dpaudit.attacks.membership.shadow import AttackerKnowledge
    from dpaudit.attacks.targets import Reference
    from dpaudit.data import datasets

    data = datasets.load("blobs-2d")
    order = np.random.default_rng(seed).permutation(len(data.X))
    shadow, candidates = data.X[order[:1500]], data.X[order[1500:]]
    mech = dpaudit.get_mechanism("ndlaplace", epsilon=1.0, bounds=data.bounds)
    knowledge = AttackerKnowledge(mech, shadow, Reference.fit(shadow, 4, 0), 250, bounds=data.bounds)
    target = knowledge.pipeline(1).fit(candidates[:250])
    Q = candidates[:records]
    y = knowledge.reference.predict(Q)
    t0 = time.perf_counter()
    ours = boundary_distances(target, Q, y, knowledge.clip_values, np.random.default_rng(seed + 1))
    ours_seconds = time.perf_counter() - t0
    again = boundary_distances(target, Q, y, knowledge.clip_values, np.random.default_rng(seed + 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from art.attacks.evasion import HopSkipJump
        from art.estimators.classification.scikitlearn import ScikitlearnClassifier

        clf = ScikitlearnClassifier(model=target, clip_values=knowledge.clip_values)
        np.random.seed(seed + 1)
        t0 = time.perf_counter()
        hsj = HopSkipJump(clf, targeted=False, max_iter=5, max_eval=200, init_eval=20, init_size=50, verbose=False)
        x32 = Q.astype(np.float32)
        art = np.linalg.norm(hsj.generate(x32, np.eye(4)[y]) - x32, axis=1)
        art[np.argmax(clf.predict(x32), axis=1) != y] = 0.0
        art_seconds = time.perf_counter() - t0
    return {"records": records, "art_seconds": art_seconds, "batched_seconds": ours_seconds,
            "art_mean": float(art.mean()), "batched_mean": float(ours.mean()),
            "art_median": float(np.median(art)), "batched_median": float(np.median(ours)),
            "correlation_art_batched": float(np.corrcoef(art, ours)[0, 1]),
            "correlation_batched_two_seeds": float(np.corrcoef(ours, again)[0, 1])}


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(r[key]) for r in rows)


def _part_median(rows: list[dict[str, Any]], part: str) -> float:
    return statistics.median(float(r["parts"].get(part, 0.0)) for r in rows)


def _fmt(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def markdown(before: list[dict[str, Any]], after: list[dict[str, Any]], agreement: dict[str, Any],
             meta: dict[str, Any]) -> str:
    lines = ["# The first minute: the main job before and after", "",
             f"`dpaudit {' '.join(MAIN_JOB)}`, {meta['rounds']} runs of each checkout alternating in one benchmark "
             f"process ({meta['machine']}); before = {meta['baseline']}, after = {meta['after']}.  The wall and CPU "
             "seconds are those measured, at the 1-minute load averages shown (both grow with the load); the ratio "
             "is what the alternating runs measure.", "",
             "| | before | after | after / before |", "|---|---|---|---|"]
    for label, key in (("wall seconds (median)", "wall_seconds"), ("CPU seconds (median)", "cpu_seconds")):
        b, a = _median(before, key), _median(after, key)
        lines.append(f"| {label} | {b:.1f} | {a:.1f} | {a / b:.2f} |")
    quiet = meta.get("quiet")
    if quiet:
        lines.append(f"| quiet machine, wall seconds | {quiet['before']:.1f} (measured at load {quiet['load']}) | "
                     f"{quiet['after']:.1f} (estimated: before × the ratio) | {quiet['ratio']:.2f} |")
    for label, rows in (("before", before), ("after", after)):
        loads = ", ".join(f"{r['load_start']:.1f}–{r['load_end']:.1f}" for r in rows)
        walls = ", ".join(f"{r['wall_seconds']:.1f}" for r in rows)
        lines.append(f"| load at start–end, {label} (runs: {walls} s) | {loads} | | |")
    lines.append(f"| Conclusion line (characters) | {before[0]['conclusion_length']} | {after[0]['conclusion_length']} | |")
    lines += ["", "Each part (seconds, median over the runs, from results.json):", "",
              "| part | before | after | after / before |", "|---|---|---|---|"]
    for part in PARTS:
        b, a = _part_median(before, part), _part_median(after, part)
        lines.append(f"| {part} | {b:.2f} | {a:.2f} | {(a / b if b else float('nan')):.2f} |")
    lines += ["", "Each membership attack's numbers (means over the 3 repeats, first run of each checkout; the same "
              "seed, so an attack whose code did not change gives the same numbers):", "",
              "| attack | advantage before | advantage after | TPR @ 1 % FPR before | TPR @ 1 % FPR after | "
              "AUC before | AUC after |", "|---|---|---|---|---|---|---|"]
    for name in sorted(set(before[0]["attacks"]) | set(after[0]["attacks"])):
        b, a = before[0]["attacks"].get(name, {}), after[0]["attacks"].get(name, {})
        lines.append(f"| {name} | {_fmt(b.get('advantage'))} | {_fmt(a.get('advantage'))} | "
                     f"{_fmt(b.get('tpr_at_1pct_fpr'))} | {_fmt(a.get('tpr_at_1pct_fpr'))} | "
                     f"{_fmt(b.get('auc'))} | {_fmt(a.get('auc'))} |")
    lines.append(f"| ε estimate (ε_lb) | {_fmt(before[0]['epsilon_lower_bound'])} | "
                 f"{_fmt(after[0]['epsilon_lower_bound'])} | | | | |")
    g = agreement
    lines += ["", f"Label-only's boundary search on one shadow target of the set-up, {g['records']} records:", "",
              "| | ART HopSkipJump | batched search |", "|---|---|---|",
              f"| seconds | {g['art_seconds']:.2f} | {g['batched_seconds']:.2f} |",
              f"| mean distance | {g['art_mean']:.3f} | {g['batched_mean']:.3f} |",
              f"| median distance | {g['art_median']:.3f} | {g['batched_median']:.3f} |",
              f"| correlation with ART's | 1 | {g['correlation_art_batched']:.2f} "
              f"(two batched runs, other seeds: {g['correlation_batched_two_seeds']:.2f}) |", "",
              "Conclusion lines:", "", f"* before: `{before[0]['conclusion']}`", f"* after: `{after[0]['conclusion']}`", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-tree", required=True, help="a checkout of the code before (git worktree add …)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each checkout, alternating")
    parser.add_argument("--quiet-before", type=float, help="the job before, timed once on a quiet machine (seconds)")
    parser.add_argument("--quiet-load", default="?", help="the load average that quiet run was timed at")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "first_minute.md"))
    parser.add_argument("--json", default=str(REPO / "benchmarks" / "results" / "first_minute.json"))
    add_force(parser)
    args = parser.parse_args()
    guard_outputs(args, "out", "json")
    baseline = Path(args.baseline_tree).resolve()
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    for r in range(args.rounds):
        for label, tree, rows in (("before", baseline, before), ("after", REPO, after)):
            rows.append(run_main_job(tree))
            print(f"round {r + 1} {label}: {rows[-1]['wall_seconds']:.1f} s wall, {rows[-1]['cpu_seconds']:.1f} s CPU, "
                  f"load {rows[-1]['load_start']:.1f}", file=sys.stderr)
    agreement = search_agreement()

    def commit(tree: Path) -> str:
        head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "?"
        dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return f"{head} (with uncommitted changes)" if dirty else head

    ratio = _median(after, "wall_seconds") / _median(before, "wall_seconds")
    quiet = ({"before": args.quiet_before, "load": args.quiet_load, "ratio": ratio, "after": args.quiet_before * ratio}
             if args.quiet_before else None)
    meta = {"rounds": args.rounds, "quiet": quiet, "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}",
            "baseline": commit(baseline), "after": commit(REPO)}
    Path(args.out).write_text(markdown(before, after, agreement, meta), encoding="utf-8")
    Path(args.json).write_text(json.dumps({"meta": meta, "before": before, "after": after,
                                           "search_agreement": agreement}, indent=1, ensure_ascii=False) + "\n",
                               encoding="utf-8")
    print(f"wrote {args.out} and {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
