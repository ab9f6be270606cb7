"""Claims in a notion end to end: the command line's notion options (dpaudit/claims.py) and the ε estimate
judging a notion's whole curve (attacks/epsilon/result/curve_result.py), with the results' curve parts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpaudit.attacks.epsilon.estimator import estimate_epsilon
from dpaudit.attacks.epsilon.settings import Budget, RunSettings, SearchSpace
from dpaudit.claims import notion_from_options, parse_rdp, read_profile
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import InvalidInputError, PrivacyClaim, Vector
from dpaudit.mechanisms.notions import GaussianDP, PrivacyProfile, RenyiDP, ZeroCDP


def test_the_options_build_the_notion(tmp_path: Path) -> None:
    assert parse_rdp("8:1.9, 2:0.5") == RenyiDP((2.0, 8.0), (0.5, 1.9))
    csv = tmp_path / "profile.csv"
    csv.write_text("epsilon,delta\n1.0,1e-5\n0.5,0.01\n")
    assert read_profile(csv) == PrivacyProfile((0.5, 1.0), (0.01, 1e-5))
    assert notion_from_options(rho=0.5) == ZeroCDP(0.5) and notion_from_options(mu=1.0) == GaussianDP(1.0)
    assert notion_from_options() is None
    with pytest.raises(InvalidInputError, match="one notion"):
        notion_from_options(rho=0.5, mu=1.0)
    with pytest.raises(InvalidInputError, match="order:epsilon"):
        parse_rdp("2=0.5")
    (tmp_path / "bad.csv").write_text("epsilon,delta\none,two\n")
    with pytest.raises(InvalidInputError, match="rows of numbers"):
        read_profile(tmp_path / "bad.csv")


class ClippedGaussianSum:
    """Σ clip(x, 0, 1) + N(0, σ²): sensitivity 1 under add-remove, so exactly (1/σ)-GDP and 1/(2σ²)-zCDP."""

    name = "clipped-gaussian-sum"

    def __init__(self, sigma: float, claim: PrivacyClaim) -> None:
        self.sigma, self.claim = sigma, claim

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector(np.array([np.clip(X, 0.0, 1.0).sum() + rng.normal(0.0, self.sigma)]))

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> list[Vector]:
        return [self.release(X, rng) for _ in range(n)]


X = np.array([[0.2], [0.9], [0.5]])


@pytest.mark.parametrize("notion,violated", [(GaussianDP(0.2), True), (GaussianDP(1.0), False)])
def test_the_estimate_judges_the_notions_curve(notion, violated: bool) -> None:
    claim = PrivacyClaim.stated(notion)
    res = estimate_epsilon(ClippedGaussianSum(1.0, claim), X, claim, budget=Budget(releases=8000),
                           search=SearchSpace(max_pairs=2), run=RunSettings(progress=False), seed=0)
    assert res.verdict == (Verdict.VIOLATION if violated else Verdict.NO_VIOLATION)
    data = res.to_dict()
    assert data["claim"]["notion"] == notion.to_dict()
    curve = data["curve"]
    start = "VIOLATION of μ = 0.2 (GDP): " if violated else "Consistent with μ = 1 (GDP): "
    assert curve["conclusion"].startswith(start) and curve["decides_verdict"]
    assert 0.0 < curve["mu_lower_bound"] < 1.3
    assert data["claimed_curve"]["claim"] == notion.text()
    band = data["tradeoff_curve"]
    assert band and all(lo <= hi for lo, hi in zip(band["false_positive_rate_lower"], band["false_positive_rate_upper"]))


def test_an_epsilon_claim_keeps_its_verdict_and_reports_the_curve_beside_it() -> None:
    claim = PrivacyClaim(1.0, 1e-5)
    res = estimate_epsilon(ClippedGaussianSum(1.0, claim), X, claim, budget=Budget(releases=8000),
                           search=SearchSpace(max_pairs=2), run=RunSettings(progress=False), seed=0)
    assert res.verdict == (Verdict.VIOLATION if res.epsilon_lower_bound > 1.0 else Verdict.NO_VIOLATION)
    assert res.curve and not res.curve["decides_verdict"] and "notion" not in res.to_dict()["claim"]
