"""Membership attacks and reconstruction at 10⁴–10⁶ records: wall time and peak memory.

One repeat of ``dpaudit attack``'s game per case, driven through ``attacks/``
only (so the numbers do not depend on the CLI): the thesis blobs
(``make_blobs(n, centers=4, std=0.6, 2 dims, random_state=0)``, public box
[−15, 15]²); a seeded shuffle puts 75 % of the records into the attacker's
shadow data and the rest into the candidates, each a member by a fair coin;
``ndlaplace`` (ε = 1) releases the members; the target is the thesis pipeline
(KMeans labels + RandomForest on the released points); then one attack:

* ``shokri`` — 3 ART shadow models trained through the mechanism, RF attack model, all candidates scored;
* ``yeom`` — 3 shadow targets, loss/confidence variant and threshold chosen on them, all candidates scored;
* ``label-only`` — HopSkipJump decision-boundary distance, ``--label-only-queries`` shadow members and
  non-members to calibrate, the first 2 × that many candidates scored;
* ``reconstruction`` — posterior-mean denoising of every released point against the shadow data as
  prior, nearest-neighbour linkage, the prior-guessing baseline.

Each (size, attack) runs in a fresh child process (one process, ``--threads``
BLAS threads), so its peak resident set (``resource.getrusage``) is the
whole attack's: data, split, target, attack, metrics.  Wall time covers the
same span (imports and data generation excluded, reported apart).

The baseline is the same script run against the code before the scale work
(``--json`` there, ``--baseline`` here); ``--address-space-gb`` caps each
child with RLIMIT_AS so a baseline that needs tens of GB fails with a
MemoryError instead of swapping the machine.

Usage::

    python benchmarks/bench_attack_scale.py [--sizes 10000,100000,1000000] \
        [--attacks shokri,yeom,label-only,reconstruction] [--out benchmarks/results/attack_scale.md] \
        [--json rows.json] [--baseline baseline_rows.json] [--address-space-gb 8]
    python benchmarks/bench_attack_scale.py --case 1000000 reconstruction   # one case, JSON on stdout
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)

REPO = Path(__file__).resolve().parents[1]
ATTACKS = ("shokri", "yeom", "label-only", "reconstruction")
SHADOW_FRACTION = 0.75
EPSILON = 1.0


def _rss_mb() -> float:
    """Peak resident set of this process so far (ru_maxrss is in KiB on Linux)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _peak_vm_mb() -> float:
    """Peak virtual size (VmPeak): what an RLIMIT_AS must allow."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_case(n: int, attack: str, *, seed: int = 0, label_only_queries: int = 40,
             progress: bool = False) -> dict[str, Any]:
    """One repeat of the attack game on n records; returns timings, memory and the attack's numbers."""
    import warnings

    warnings.simplefilter("ignore")
    import numpy as np
    from sklearn.datasets import make_blobs

    sys.path.insert(0, str(REPO))
    import dpaudit.mechanisms
    from dpaudit.attacks.membership.metrics import MembershipScores, evaluate
    from dpaudit.attacks.membership.shadow import AttackerKnowledge
    from dpaudit.attacks.reconstruction import default_radius, reconstruct
    from dpaudit.attacks.targets import Reference

    t_import = time.perf_counter()
    X, _ = make_blobs(n_samples=n, centers=4, n_features=2, cluster_std=0.6, random_state=0)
    box = (np.full(2, -15.0), np.full(2, 15.0))
    rss_before = _current_rss_mb()
    t0 = time.perf_counter()

    split_seed, target_seed, ref_seed, attack_seed = np.random.SeedSequence(seed).spawn(4)
    gen = np.random.default_rng(split_seed)
    order = gen.permutation(n)
    n_shadow = int(round(SHADOW_FRACTION * n))
    half = (n - n_shadow) // 2
    shadow, candidates = X[order[:n_shadow]], X[order[n_shadow:n_shadow + 2 * half]]
    coins = gen.integers(0, 2, size=len(candidates))
    members, non_members = candidates[coins == 1], candidates[coins == 0]
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=EPSILON, bounds=box)
    reference = Reference.fit(shadow, 4, int(ref_seed.generate_state(1)[0] >> 1))
    knowledge = AttackerKnowledge(mech, shadow, reference, half, bounds=box)
    target = knowledge.pipeline(int(target_seed.generate_state(1)[0] >> 1)).fit(members)
    t_target = time.perf_counter()

    rng = np.random.default_rng(attack_seed)
    common = {"claimed_epsilon": EPSILON, "candidates": len(candidates)}
    numbers: dict[str, Any]
    if attack == "reconstruction":
        res = reconstruct(mech, target.release_, members, non_members, shadow,
                          default_radius(shadow, rng), rng)
        numbers = res.to_dict()
    elif attack == "yeom":
        from dpaudit.attacks.membership.yeom import YeomAttack
        yeom = YeomAttack().fit(knowledge, rng)
        m = evaluate(MembershipScores(yeom.infer(target, candidates), coins),
                     calibration=yeom.calibration_, abstain=True, **common)
        numbers = _membership_numbers(m)
    elif attack == "shokri":
        from dpaudit.attacks.membership.shokri import ShokriAttack
        shokri = ShokriAttack().fit(knowledge, rng)
        m = evaluate(MembershipScores(shokri.infer(target, candidates), coins),
                     threshold=shokri.threshold, **common)
        numbers = _membership_numbers(m)
    elif attack == "label-only":
        from dpaudit.attacks.membership.label_only import LabelOnlyAttack
        lo = LabelOnlyAttack(n_queries=label_only_queries).fit(knowledge, rng)
        idx = np.arange(min(len(candidates), 2 * label_only_queries))
        m = evaluate(MembershipScores(lo.infer(target, candidates[idx], rng), coins[idx]),
                     calibration=lo.calibration_, threshold=lo.threshold_, **common)
        numbers = _membership_numbers(m)
    elif attack in ("lira", "rmia"):
        from dpaudit.attacks.membership.lira import LiRAAttack
        from dpaudit.attacks.membership.rmia import RMIAAttack
        model = (LiRAAttack if attack == "lira" else RMIAAttack)().fit(knowledge, rng, candidates)
        m = evaluate(MembershipScores(model.infer(target, candidates), coins), calibration=model.calibration_,
                     abstain=True, score_bins=model.score_bins_, **common)
        numbers = _membership_numbers(m)
    else:
        raise SystemExit(f"unknown attack {attack!r}")
    t_end = time.perf_counter()
    return {"records": n, "attack": attack, "seed": seed, "label_only_queries": label_only_queries,
            "seconds": t_end - t0, "seconds_target": t_target - t0, "seconds_attack": t_end - t_target,
            "seconds_imports_and_data": t0 - t_import,
            "peak_rss_mb": _rss_mb(), "rss_before_mb": rss_before, "peak_vm_mb": _peak_vm_mb(),
            "numbers": numbers}


def _membership_numbers(m: Any) -> dict[str, Any]:
    keys = ("advantage", "auc", "tpr_at_1pct_fpr", "epsilon_lower_bound", "n_members", "n_non_members")
    return {k: getattr(m, k) for k in keys}


def run_child(n: int, attack: str, *, seed: int, threads: int, label_only_queries: int,
              timeout: float, address_space_gb: float | None = None) -> dict[str, Any]:
    """Run one case in a fresh interpreter; its peak RSS is the case's."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--case", str(n), attack, "--seed", str(seed),
           "--label-only-queries", str(label_only_queries)]

    def cap() -> None:
        if address_space_gb is not None:
            import resource
            limit = int(address_space_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, preexec_fn=cap)
    except subprocess.TimeoutExpired:
        return {"records": n, "attack": attack, "error": f"timed out after {timeout:g} s"}
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"records": n, "attack": attack, "error": f"exit {proc.returncode}: {tail}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _short_error(text: str) -> str:
    """'exit 1: ..._ArrayMemoryError: Unable to allocate 6.98 GiB for an array with shape (a, b) ...' → short."""
    import re
    m = re.search(r"Unable to allocate ([\d.]+ \w+) for an array with shape (\([^)]*\))", text)
    return f"MemoryError: one {m.group(1)} array {m.group(2)}" if m else text


def _key(r: dict[str, Any]) -> tuple[int, str, int | None]:
    return r["records"], r["attack"], r.get("label_only_queries", 40) if r["attack"] == "label-only" else None


def _name(r: dict[str, Any]) -> str:
    return f"label-only (q = {r.get('label_only_queries', 40)})" if r["attack"] == "label-only" else r["attack"]


def _baseline_cells(r: dict[str, Any], baseline: dict[tuple[int, str], dict[str, Any]] | None) -> str:
    if baseline is None:
        return ""
    b = baseline.get(_key(r))
    if b is None:
        return " - | - |"
    if "error" in b:
        return f" {_short_error(b['error'])} | - |"
    if "seconds" not in r:
        return f" {b['seconds']:.1f} s, {b['peak_rss_mb']:.0f} MB | - |"
    ratio = b["seconds"] / r["seconds"]
    speed = f"{ratio:.1f}× faster" if ratio >= 1 else f"{1 / ratio:.1f}× slower"
    return f" {b['seconds']:.1f} s, {b['peak_rss_mb']:.0f} MB | {speed} |"


def write_markdown(rows: list[dict[str, Any]], path: Path, args: argparse.Namespace,
                   baseline: dict[tuple[int, str], dict[str, Any]] | None = None) -> None:
    extra_head = " baseline wall, peak RSS | vs baseline |" if baseline is not None else ""
    lines = [f"# Attacks at scale ({platform.machine()}, {os.cpu_count()} cores, {args.threads} BLAS thread(s))", "",
             f"Command: `python benchmarks/bench_attack_scale.py --sizes {args.sizes} --attacks {args.attacks}"
             f" --threads {args.threads} --label-only-queries {args.label_only_queries}"
             + (f" --baseline {args.baseline.name}" if args.baseline else "") + "`", "",
             "One repeat per case in a fresh process: split, target (ndlaplace ε = 1 + KMeans + RandomForest), "
             "attack, metrics. Peak RSS is the child's `ru_maxrss` (includes the interpreter and libraries, "
             "column 'RSS before'). Wall times were taken on a shared machine; compare ratios."
             + (f" Baseline: {args.baseline_label}." if baseline is not None else ""), "",
             "| records | attack | wall s | target s | attack s | peak RSS MB | RSS before MB | result |" + extra_head,
             "|---|---|---|---|---|---|---|---|" + ("---|---|" if baseline is not None else "")]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['records']:,} | {_name(r)} | - | - | - | - | - | {_short_error(r['error'])} |"
                         + _baseline_cells(r, baseline))
            continue
        num = r["numbers"]
        if r["attack"] == "reconstruction":
            res = (f"success {num['success_rate']:.3f} (prior {num['baseline_success_rate']:.4f}), "
                   f"linkage {num.get('linkage_success_rate', float('nan')):.3f}")
        else:
            tpr = num["tpr_at_1pct_fpr"]
            res = (f"adv {num['advantage']:.3f}, AUC {num['auc']:.3f}, TPR@1% "
                   f"{'n/a' if tpr is None else f'{tpr:.3f}'}, ε_lb {num['epsilon_lower_bound']:.3f}")
        lines.append(f"| {r['records']:,} | {_name(r)} | {r['seconds']:.1f} | {r['seconds_target']:.1f} | "
                     f"{r['seconds_attack']:.1f} | {r['peak_rss_mb']:.0f} | {r['rss_before_mb']:.0f} | {res} |"
                     + _baseline_cells(r, baseline))
    lines += ["", "Label-only scores the first 2q candidates and calibrates on q shadow members and q shadow "
              "non-members, so it runs HopSkipJump on 4q records per repeat whatever the data size. TPR at 1 % FPR "
              "needs ≥ 100 non-members in the scored set (dpaudit.attacks.membership.roc): with q = 40 about 40 are non-members "
              "(n/a); with q = 125 the 250 scored candidates hold ≥ 100 non-members with probability 0.999 "
              "(Bin(250, ½)). TPR at 0.1 % FPR needs ≥ 1000 non-members: ≥ 2142 scored candidates, i.e. "
              "≥ 8568 records at 25 % candidates for Shokri/Yeom, q ≥ 1071 for label-only."]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--attacks", default=",".join(ATTACKS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--label-only-queries", default="40,125",
                    help="label-only shadow members/non-members to calibrate on (each) and half the scored "
                         "candidates; a comma list runs label-only once per value")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--out", type=Path, default=None, help="Markdown table of the results")
    ap.add_argument("--json", type=Path, default=None, help="the raw rows, for a later --baseline")
    ap.add_argument("--baseline", type=Path, default=None, help="rows of another run (its --json) to compare with")
    ap.add_argument("--baseline-label", default="the code before the scale work",
                    help="what the baseline rows measured")
    ap.add_argument("--address-space-gb", type=float, default=None, help="RLIMIT_AS of each case's process")
    ap.add_argument("--case", nargs=2, metavar=("RECORDS", "ATTACK"))
    add_force(ap)
    args = ap.parse_args()
    guard_outputs(args, 'out', 'json')
    if args.case:
        res = run_case(int(float(args.case[0])), args.case[1], seed=args.seed,
                       label_only_queries=int(args.label_only_queries.split(",")[0]))
        print(json.dumps(res))
        return
    baseline = None
    if args.baseline is not None:
        baseline = {_key(b): b for b in json.loads(args.baseline.read_text())}
    rows = []
    queries = [int(q) for q in args.label_only_queries.split(",")]
    for n in (int(float(s)) for s in args.sizes.split(",")):
        for attack in args.attacks.split(","):
            for q in (queries if attack == "label-only" else queries[:1]):
                r = run_child(n, attack, seed=args.seed, threads=args.threads, label_only_queries=q,
                              timeout=args.timeout, address_space_gb=args.address_space_gb)
                r.setdefault("label_only_queries", q)
                rows.append(r)
                print(json.dumps(r), flush=True)
                if args.json is not None:
                    args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if args.out is not None:
        write_markdown(rows, args.out, args, baseline)


if __name__ == "__main__":
    main()
