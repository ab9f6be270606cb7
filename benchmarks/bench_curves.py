"""Claims in every notion, audited: correct releases are not flagged, wrong ones are (docs/notions.md).

Each row is a mechanism, a claim in a notion (ρ-zCDP, μ-GDP, a privacy profile), the verdict on the claim's
whole curve, and beside it the verdict its (ε, δ) point alone (δ = 10⁻⁵) would get from the same certified
bound, to show what the curve adds.  The mechanisms are :mod:`benchmarks.curve_mechanisms`; the OpenDP rows run
OpenDP 0.16 (``benchmarks/libraries/opendp_zcdp_plugins.py``) in its own interpreter, a virtual environment
built from the registry under ``benchmarks/.venvs/curves/opendp/`` (gitignored), audited through a worker
process (:class:`dpaudit.execution.worker.WorkerMechanism` with ``python=``).

Run: ``python -m benchmarks.bench_curves [--seeds N] [--time-budget S] [--only TEXT] [--shard K/N] [--json FILE]``;
``--from-json A.json B.json …`` renders the page from runs made apart (shards run side by side).  Results go
to ``benchmarks/results/curves.json`` and ``curves.md``, headed by the commit and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from dpaudit.attacks.epsilon.estimator import estimate_epsilon
from dpaudit.attacks.epsilon.settings import Budget, RunSettings
from dpaudit.mechanisms.base import PrivacyClaim
from dpaudit.mechanisms.notions import GaussianDP, Notion, ZeroCDP

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._outputs import git_commit  # noqa: E402
from benchmarks.curve_mechanisms import (  # noqa: E402
    ExponentialMechanism,
    GaussianSum,
    NoisyLloydStep,
    ReportNoisyMax,
    gaussian_profile,
    gaussian_sigma,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
VENVS = ROOT / "benchmarks" / ".venvs" / "curves"
PLUGINS = "benchmarks/libraries/opendp_zcdp_plugins.py"
X = np.array([[0.2], [0.9], [0.5], [0.1]])
X_TIED = np.array([[0.1], [0.35], [0.6], [0.85]])             # one record per bin: tied counts
X_SIGNED = np.array([[0.2], [-0.9], [0.5], [-0.1]])           # OpenDP's box is [-1, 1]
X_CLUSTERS = np.array([[0.2, 0.1], [0.3, 0.25], [0.8, 0.7], [0.7, 0.9], [0.1, 0.3], [0.9, 0.8]])

Row = tuple[str, bool, Notion, Callable[[PrivacyClaim], Any], np.ndarray]


def opendp_python() -> str | None:
    """OpenDP 0.16's interpreter, its environment built from the registry on first use (None: it cannot be)."""
    from benchmarks.bench_libraries import ensure_venv, venv_python
    from benchmarks.libraries.catalogue import ENVIRONMENTS
    try:
        ensure_venv(ENVIRONMENTS["opendp"], VENVS, reuse=True)
    except (OSError, SystemExit, Exception) as exc:  # noqa: BLE001 - a row is skipped, with the reason printed
        print(f"OpenDP rows skipped: {exc}", file=sys.stderr)
        return None
    return str(venv_python(VENVS / "opendp"))


def _opendp(function: str) -> Callable[[PrivacyClaim], Any]:
    def make(claim: PrivacyClaim) -> Any:
        from dpaudit.execution.worker import WorkerMechanism
        python = opendp_python()
        if python is None:
            raise RuntimeError("no OpenDP interpreter")
        return WorkerMechanism(f"{ROOT / PLUGINS}:{function}", epsilon=1.0, output="vector", python=python)
    return make


def rows() -> list[Row]:
    """(row, the claim is correct, notion, mechanism for a claim, data)."""
    s_right, s_wrong = gaussian_sigma(1.0), gaussian_sigma(10.0)
    profile = gaussian_profile(s_right)
    return [
        ("Gaussian calibrated for ρ = 0.5", True, ZeroCDP(0.5), lambda c: GaussianSum("gauss-rho", 1.0, c), X),
        ("Gaussian calibrated for μ = 1", True, GaussianDP(1.0), lambda c: GaussianSum("gauss-mu", 1.0, c), X),
        ("exponential mechanism ε = 1 under ρ = ε²/8", True, ZeroCDP(1 / 8),
         lambda c: ExponentialMechanism("em", 1.0, c), X),
        ("exponential mechanism at scale ε (monotone counts: still ε-bounded-range) under ρ = ε²/8", True,
         ZeroCDP(1 / 8), lambda c: ExponentialMechanism("em-scale-eps", 1.0, c, scale=1.0), X_TIED),
        ("OpenDP make_gaussian (zCDP, map(1) = 0.5) under ρ = 0.5", True, ZeroCDP(0.5),
         _opendp("gaussian_sum"), X_SIGNED),
        ("OpenDP make_noisy_max (zCDP, Gumbel) under ρ = 0.125", True, ZeroCDP(0.125),
         _opendp("noisy_max_zcdp"), X_SIGNED),
        (f"Lloyd step, Gaussian σ = {s_right:.2f} (dp-accounting, ε = 1) under its own profile", True, profile,
         lambda c: NoisyLloydStep("lloyd", s_right, c), X_CLUSTERS),
        ("Gaussian with half its σ under ρ = 0.5", False, ZeroCDP(0.5),
         lambda c: GaussianSum("gauss-rho-half", 0.5, c), X),
        ("Gaussian with half its σ under μ = 1", False, GaussianDP(1.0),
         lambda c: GaussianSum("gauss-mu-half", 0.5, c), X),
        ("report-noisy-max, exponential noise (ε = 1, ε-DP) under ρ = ε²/8", False, ZeroCDP(1 / 8),
         lambda c: ReportNoisyMax("rnm-exp", 1.0, c, "exponential"), X_TIED),
        ("report-noisy-max, Laplace noise (ε = 1, ε-DP) under ρ = ε²/8", False, ZeroCDP(1 / 8),
         lambda c: ReportNoisyMax("rnm-laplace", 1.0, c, "laplace"), X_TIED),
        ("OpenDP make_noisy_max (MaxDivergence ε = 1, exponential noise) under ρ = ε²/8", False, ZeroCDP(0.125),
         _opendp("noisy_max_pure"), X_SIGNED),
        (f"Lloyd step, σ = {s_wrong:.2f} (for ε = 10) under the ε = 1 profile", False, profile,
         lambda c: NoisyLloydStep("lloyd-10eps", s_wrong, c), X_CLUSTERS),
    ]


def _one(name: str, correct: bool, notion: Notion, make: Callable[[PrivacyClaim], Any], data: np.ndarray,
         seed: int, time_budget: float) -> dict[str, Any]:
    claim = PrivacyClaim.stated(notion)
    t0 = time.perf_counter()
    mechanism = make(claim)
    try:
        res = estimate_epsilon(mechanism, data, claim, budget=Budget(time_budget=time_budget),
                               run=RunSettings(progress=False), seed=seed)
    finally:
        if hasattr(mechanism, "close"):
            mechanism.close()
    point = "violation" if res.epsilon_lower_bound > claim.epsilon else "no violation found"
    return {"row": name, "correct": correct, "claim": notion.text(), "seed": seed, "verdict": str(res.verdict),
            "point_verdict": point, "point": {"epsilon": claim.epsilon, "delta": claim.delta},
            "epsilon_lower_bound": res.epsilon_lower_bound, "mu_lower_bound": res.curve.get("mu_lower_bound"),
            "gap_below_curve": res.curve.get("gap_below_curve"), "conclusion": res.curve.get("conclusion"),
            "seconds": time.perf_counter() - t0}


def run(seeds: int, time_budget: float, only: str = "", on_row: Callable[[list[dict[str, Any]]], None] | None = None,
        shard: tuple[int, int] = (0, 1)) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for seed in range(seeds):  # seed by seed: an interrupted run still covers every row
        for i, (name, correct, notion, make, data) in enumerate(rows()):
            if (only and only not in name) or i % shard[1] != shard[0]:
                continue
            out.append(_one(name, correct, notion, make, data, seed, time_budget))
            r = out[-1]
            print(f"{name} seed {seed}: {r['verdict']} (point: {r['point_verdict']}) in {r['seconds']:.0f} s",
                  flush=True)
            if on_row is not None:
                on_row(out)
    return out


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on {os.cpu_count()} cores"


def markdown(rows_: list[dict[str, Any]], head: dict[str, Any]) -> str:
    lines = [f"Commit {head.get('commit')}; {head.get('seeds_run', '?')} seeds per row (of {head.get('seeds')} "
             f"asked), time budget {head.get('time_budget')} s per run; {head.get('how', '')}",
             f"Machine load before: {head.get('load_before')}; after: {head.get('load_after')}.", "",
             "| row | claim | correct | curve verdicts | (ε, δ)-point verdicts | μ_lo (median) | median s | max s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name in dict.fromkeys(r["row"] for r in rows_):
        mine = [r for r in rows_ if r["row"] == name]
        flagged = sum(r["verdict"] == "violation" for r in mine)
        point = sum(r["point_verdict"] == "violation" for r in mine)
        mu = float(np.median([r["mu_lower_bound"] or 0.0 for r in mine]))
        lines.append(f"| {name} | {mine[0]['claim']} | {mine[0]['correct']} | {flagged}/{len(mine)} flagged | "
                     f"{point}/{len(mine)} flagged | {mu:.3f} | {np.median([r['seconds'] for r in mine]):.0f} | "
                     f"{max(r['seconds'] for r in mine):.0f} |")
    return "\n".join(lines) + "\n"


def _write(path: Path, head: dict[str, Any], rows_: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({**head, "rows": rows_}, indent=1, default=lambda v: None
                               if isinstance(v, float) and not math.isfinite(v) else str(v)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--time-budget", type=float, default=60.0)
    parser.add_argument("--only", default="", help="run the rows whose name contains this text")
    parser.add_argument("--json", default=str(RESULTS / "curves.json"))
    parser.add_argument("--shard", default="0/1", help="K/N: run the rows whose index is K modulo N")
    parser.add_argument("--how", default="", help="how the run was made (niceness, shards), for the page's head")
    parser.add_argument("--from-json", nargs="+", help="merge these runs' JSON files into curves.json and curves.md")
    args = parser.parse_args()
    if args.from_json:
        runs = [json.loads(Path(p).read_text()) for p in args.from_json]
        rows_ = [r for run_ in runs for r in run_["rows"]]
        order = [r[0] for r in rows()]
        rows_.sort(key=lambda r: (order.index(r["row"]) if r["row"] in order else len(order), r["seed"]))
        head = {**runs[0], "seeds_run": min(len({r["seed"] for r in rows_ if r["row"] == n})
                                             for n in dict.fromkeys(r["row"] for r in rows_)),
                "load_after": runs[-1].get("load_after"), "how": args.how or runs[0].get("how", "")}
        (RESULTS / "curves.md").write_text(markdown(rows_, head))
        _write(RESULTS / "curves.json", {k: v for k, v in head.items() if k != "rows"}, rows_)
        return
    head: dict[str, Any] = {"commit": git_commit(), "seeds": args.seeds, "time_budget": args.time_budget,
                            "load_before": load(), "how": args.how}
    RESULTS.mkdir(exist_ok=True)
    path = Path(args.json)
    k, n = (int(v) for v in args.shard.split("/"))
    found = run(args.seeds, args.time_budget, args.only,
                on_row=lambda out: _write(path, {**head, "load_after": load()}, out), shard=(k, n))
    head.update(load_after=load(), seeds_run=len({r["seed"] for r in found}))
    _write(path, head, found)
    print(markdown(found, head))


if __name__ == "__main__":
    main()
