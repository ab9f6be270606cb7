"""Claims in every notion, audited: correct releases are not flagged, wrong ones are (docs/notions.md).

Each row is a mechanism, a claim in a notion (ρ-zCDP, μ-GDP), the verdict on the claim's whole curve, and
beside it the verdict its (ε, δ) point alone (δ = 10⁻⁵) would get from the same certified bound, to show what
the curve adds.  Run: ``python -m benchmarks.bench_curves [--seeds N] [--time-budget S]``; results go to
``benchmarks/results/curves.json`` and ``curves.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from dpaudit.attacks.epsilon.estimator import estimate_epsilon
from dpaudit.attacks.epsilon.settings import Budget, RunSettings
from dpaudit.mechanisms.base import PrivacyClaim, Vector
from dpaudit.mechanisms.notions import GaussianDP, Notion, ZeroCDP

RESULTS = Path(__file__).resolve().parent / "results"
X = np.array([[0.2], [0.9], [0.5], [0.1]])


class GaussianSum:
    """Σ clip(x, 0, 1) + N(0, σ²): sensitivity 1 (add-remove), exactly (1/σ)-GDP and 1/(2σ²)-zCDP."""

    def __init__(self, name: str, sigma: float, claim: PrivacyClaim) -> None:
        self.name, self.sigma, self.claim = name, sigma, claim

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector(np.array([np.clip(X, 0.0, 1.0).sum() + rng.normal(0.0, self.sigma)]))


class ExponentialMechanism:
    """Selects one of 4 bins of [0, 1] with probability ∝ exp(ε·count/2) (count: sensitivity 1); ε-DP and
    ε²/8-zCDP (Cesar & Rogers 2021, bounded range)."""

    def __init__(self, name: str, epsilon: float, claim: PrivacyClaim, scale: float = 0.5) -> None:
        self.name, self.epsilon, self.claim, self.scale = name, epsilon, claim, scale

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        counts = np.bincount(np.clip((np.asarray(X)[:, 0] * 4).astype(int), 0, 3), minlength=4).astype(float)
        w = np.exp(self.epsilon * self.scale * (counts - counts.max()))
        return Vector(np.array([float(rng.choice(4, p=w / w.sum()))]))


def _rows() -> list[tuple[str, bool, Notion, Callable[[PrivacyClaim], Any]]]:
    """(row, the claim is correct, notion, mechanism for a claim)."""
    return [
        ("Gaussian calibrated for ρ = 0.5", True, ZeroCDP(0.5), lambda c: GaussianSum("gauss-rho", 1.0, c)),
        ("Gaussian calibrated for μ = 1", True, GaussianDP(1.0), lambda c: GaussianSum("gauss-mu", 1.0, c)),
        ("exponential mechanism ε = 1 under ρ = ε²/8", True, ZeroCDP(1 / 8), lambda c: ExponentialMechanism("em", 1.0, c)),
        ("Gaussian with half its σ under ρ = 0.5", False, ZeroCDP(0.5), lambda c: GaussianSum("gauss-rho-half", 0.5, c)),
        ("Gaussian with half its σ under μ = 1", False, GaussianDP(1.0), lambda c: GaussianSum("gauss-mu-half", 0.5, c)),
        ("selection at ε·1 (scale ε, not ε/2) under ρ = ε²/8", False, ZeroCDP(1 / 8),
         lambda c: ExponentialMechanism("em-wrong-scale", 1.0, c, scale=1.0)),
    ]


def run(seeds: int, time_budget: float) -> list[dict[str, Any]]:
    out = []
    for name, correct, notion, make in _rows():
        claim = PrivacyClaim.stated(notion)
        for seed in range(seeds):
            t0 = time.perf_counter()
            res = estimate_epsilon(make(claim), X, claim, budget=Budget(time_budget=time_budget),
                                  run=RunSettings(progress=False), seed=seed)
            point = "violation" if res.epsilon_lower_bound > claim.epsilon else "no violation found"
            out.append({"row": name, "correct": correct, "claim": notion.text(), "seed": seed,
                        "verdict": str(res.verdict), "point_verdict": point,
                        "point": {"epsilon": claim.epsilon, "delta": claim.delta},
                        "epsilon_lower_bound": res.epsilon_lower_bound,
                        "mu_lower_bound": res.curve.get("mu_lower_bound"),
                        "conclusion": res.curve.get("conclusion"), "seconds": time.perf_counter() - t0})
            print(f"{name} seed {seed}: {res.verdict} (point: {point}) in {out[-1]['seconds']:.0f} s", flush=True)
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| row | claim | correct | curve verdicts | (ε, δ)-point verdicts | μ_lo (median) | max s |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in dict.fromkeys(r["row"] for r in rows):
        mine = [r for r in rows if r["row"] == name]
        flagged = sum(r["verdict"] == "violation" for r in mine)
        point = sum(r["point_verdict"] == "violation" for r in mine)
        mu = float(np.median([r["mu_lower_bound"] or 0.0 for r in mine]))
        lines.append(f"| {name} | {mine[0]['claim']} | {mine[0]['correct']} | {flagged}/{len(mine)} flagged | "
                     f"{point}/{len(mine)} flagged | {mu:.3f} | {max(r['seconds'] for r in mine):.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--time-budget", type=float, default=60.0)
    args = parser.parse_args()
    rows = run(args.seeds, args.time_budget)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "curves.json").write_text(json.dumps({"seeds": args.seeds, "time_budget": args.time_budget,
                                                     "rows": rows}, indent=1, default=lambda v: None
                                                    if isinstance(v, float) and not math.isfinite(v) else str(v)))
    (RESULTS / "curves.md").write_text(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
