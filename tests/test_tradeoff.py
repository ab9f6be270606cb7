"""Certifying a claim's curve (attacks/epsilon/certification/tradeoff.py, renyi.py, curve_verdict.py).

* the Gaussian anchor (Askin et al. 2025; Nasr et al. 2023): μ = 1 at 10⁶ releases per side certifies μ_lo
  within 0.01 of 1 on a threshold chosen on a separate selection sample, and the false claims μ = 0.2,
  ρ = 0.1 and (1, 10⁻⁵) are each rejected, while the true μ = 1 and ρ = 0.5 are not;
* soundness: correct mechanisms (Gaussian under μ and ρ, the exponential mechanism under ρ = ε²/8, Laplace
  under its profile) are flagged in at most α of audits, the Rényi bound and the curve's band cover the truth
  in at least 1 − α of samples (fast versions here; ≥ 300 audits per notion in the slow tier);
* the conclusions' wording names the notion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.attacks.bounds import epsilon_one_statement
from dpaudit.attacks.epsilon.certification.curve_verdict import judge_curve
from dpaudit.attacks.epsilon.certification.renyi import bernoulli_renyi, renyi_lower_bound
from dpaudit.attacks.epsilon.certification.tradeoff import (
    CURVE_TOL,
    best_cut,
    certify_rates,
    claimed_curve,
    curve_gap,
    empirical_profile,
    mu_lower_bound,
    tradeoff_curve,
)
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.notions import ApproxDP, GaussianDP, Notion, PrivacyProfile, ZeroCDP

ALPHA = 0.05
EDGES = np.concatenate([[-np.inf], np.linspace(-4.0, 5.0, 181), [np.inf]])


def _bins(x: np.ndarray) -> np.ndarray:
    return np.histogram(x, bins=EDGES)[0]


def _audit_gaussian(notion: Notion | None, mu: float, n_sel: int, n_cert: int, rng: np.random.Generator
                    ) -> tuple[float, float]:
    """Select a threshold on one sample of N(μ, 1) vs N(0, 1), certify on a fresh one: (gap, μ_lo)."""
    cut, _ = best_cut(_bins(rng.normal(mu, 1, n_sel)), _bins(rng.normal(0, 1, n_sel)), notion, alpha=ALPHA,
                      n_cert=n_cert)
    t = EDGES[cut]
    k_fav = rng.binomial(n_cert, stats.norm.sf(t - mu))
    k_oth = rng.binomial(n_cert, stats.norm.sf(t))
    rates = certify_rates(k_fav, n_cert, k_oth, n_cert, alpha=ALPHA)
    return (curve_gap(rates, notion) if notion is not None else math.nan), mu_lower_bound(rates)


def test_mu_lower_bound_on_a_gaussian_at_a_million_releases_is_within_a_hundredth() -> None:
    rng = np.random.default_rng(2026)
    n = 10 ** 6
    _, mu_lo = _audit_gaussian(None, 1.0, 20_000, n, rng)
    assert 0.99 <= mu_lo <= 1.0
    # Raw releases, not only binomial counts: the same bound from the releases themselves.
    xf, xo = rng.normal(1, 1, n), rng.normal(0, 1, n)
    rates = certify_rates(int((xf >= 0.5).sum()), n, int((xo >= 0.5).sum()), n, alpha=ALPHA)
    assert 0.99 <= mu_lower_bound(rates) <= 1.0


@pytest.mark.parametrize("notion,false", [(GaussianDP(0.2), True), (ZeroCDP(0.1), True), (ApproxDP(1.0, 1e-5), True),
                                          (GaussianDP(1.0), False), (ZeroCDP(0.5), False)])
def test_false_claims_on_a_unit_gaussian_are_rejected_and_true_ones_not(notion: Notion, false: bool) -> None:
    gap, _ = _audit_gaussian(notion, 1.0, 20_000, 10 ** 6, np.random.default_rng(7))
    assert (gap > CURVE_TOL) is false


def test_the_curve_statement_agrees_with_the_epsilon_statement_for_epsilon_delta_claims() -> None:
    """For an (ε, δ) claim the curve test is the ε estimator's own statement: same limits, same verdict."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(50, 5000))
        k_p, k_q = int(rng.integers(0, n + 1)), int(rng.integers(0, n + 1))
        eps, delta, share = float(rng.uniform(0.1, 3)), float(rng.choice([0.0, 1e-3, 0.05])), float(rng.uniform(0.1, 0.9))
        rates = certify_rates(k_p, n, k_q, n, alpha=ALPHA, q_share=share)
        lb = float(epsilon_one_statement(k_p, n, k_q, n, alpha=ALPHA, q_share=share, delta=delta))
        # ln((p_lo − δ)/q_hi) is one of the two profile terms at δ
        assert empirical_profile(rates, (delta,))[0] >= lb - 1e-9
        if lb > eps * (1 + 1e-6):
            assert curve_gap(rates, ApproxDP(eps, delta)) > 0


def _flag_rate(notion: Notion, audits: int, draw) -> float:
    """Share of audits whose certified point falls below the curve, each on its own fresh counts."""
    rng = np.random.default_rng(11)
    rates = [certify_rates(*draw(rng), alpha=ALPHA) for _ in range(audits)]
    f = notion.tradeoff(np.array([r.fpr_hi for r in rates]))
    return float(np.mean(f - np.array([r.fnr_hi for r in rates]) > CURVE_TOL))


def _gaussian_counts(mu: float, t: float, n: int):
    return lambda rng: (rng.binomial(n, stats.norm.sf(t - mu)), n, rng.binomial(n, stats.norm.sf(t)), n)


def _exponential_counts(eps: float, n: int):
    """The exponential mechanism over 4 outputs with utilities (0, 1, 2, 3) on D and (1, 1, 2, 3) on D′ (sensitivity
    1), event: output 0 — the output the pair moves most.  It is ε-DP and ε²/8-zCDP (Cesar & Rogers 2021)."""
    def probs(u: np.ndarray) -> np.ndarray:
        w = np.exp(eps * u / 2)
        return w / w.sum()
    p, q = probs(np.array([1.0, 1, 2, 3]))[0], probs(np.array([0.0, 1, 2, 3]))[0]
    return lambda rng: (rng.binomial(n, p), n, rng.binomial(n, q), n)


def _laplace_profile(eps: float) -> PrivacyProfile:
    from dp_accounting.pld import privacy_loss_distribution
    pld = privacy_loss_distribution.from_laplace_mechanism(1.0 / eps, sensitivity=1.0)
    return PrivacyProfile.from_pld(pld, np.linspace(0.0, eps, 11))


def _laplace_counts(eps: float, t: float, n: int):
    return lambda rng: (rng.binomial(n, stats.laplace.sf(t - 1, scale=1 / eps)), n,
                        rng.binomial(n, stats.laplace.sf(t, scale=1 / eps)), n)


CORRECT = {
    "gaussian under mu": (GaussianDP(1.0), _gaussian_counts(1.0, 0.5, 2000)),
    "gaussian under rho": (ZeroCDP(0.5), _gaussian_counts(1.0, 1.5, 2000)),
    "exponential under rho": (ZeroCDP(1.0 / 8), _exponential_counts(1.0, 2000)),
    "laplace under its profile": (_laplace_profile(1.0), _laplace_counts(1.0, 1.0, 2000)),
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_mechanisms_are_flagged_at_most_alpha_of_the_time(name: str) -> None:
    notion, draw = CORRECT[name]
    assert _flag_rate(notion, 200, draw) <= ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_mechanisms_over_300_fresh_audits(name: str) -> None:
    notion, draw = CORRECT[name]
    assert _flag_rate(notion, 400, draw) <= ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("notion", [GaussianDP(1.0), ZeroCDP(0.5)], ids=["mu", "rho"])
def test_gaussian_audits_with_their_own_selection_are_sound(notion: Notion) -> None:
    """300 whole audits (threshold chosen on a selection sample, certified on fresh counts) of the Gaussian
    with μ = 1 under its true claims: at most α flag it."""
    rng = np.random.default_rng(5)
    flags = [_audit_gaussian(notion, 1.0, 4000, 20_000, rng)[0] > CURVE_TOL for _ in range(300)]
    assert np.mean(flags) <= ALPHA


def _true_renyi(p: np.ndarray, q: np.ndarray, a: float) -> float:
    return max(math.log(np.sum(p ** a * q ** (1 - a))) / (a - 1), math.log(np.sum(q ** a * p ** (1 - a))) / (a - 1))


def _renyi_miss_rate(p: np.ndarray, q: np.ndarray, n: int, seeds: int) -> float:
    """Share of seeds in which the bound at any order exceeds the true divergence (must be ≤ α)."""
    rng = np.random.default_rng(seeds)
    misses = 0
    for _ in range(seeds):
        bound = renyi_lower_bound(rng.multinomial(n, p), rng.multinomial(n, q), alpha=ALPHA)
        misses += any(d > _true_renyi(p, q, a) + 1e-12 for a, d in zip(bound.orders, bound.lower))
    return misses / seeds


RR = (np.array([math.e, 1.0]) / (1 + math.e), np.array([1.0, math.e]) / (1 + math.e))   # randomised response, ε = 1
EM = (np.exp(np.array([1.0, 1, 2, 3]) / 2) / np.exp(np.array([1.0, 1, 2, 3]) / 2).sum(),
      np.exp(np.array([0.0, 1, 2, 3]) / 2) / np.exp(np.array([0.0, 1, 2, 3]) / 2).sum())


@pytest.mark.parametrize("pair", [RR, EM], ids=["randomised response", "exponential mechanism"])
def test_renyi_bound_covers_the_true_divergence(pair) -> None:
    assert _renyi_miss_rate(*pair, n=5000, seeds=150) <= ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("pair", [RR, EM], ids=["randomised response", "exponential mechanism"])
def test_renyi_bound_covers_the_true_divergence_over_many_seeds(pair) -> None:
    assert _renyi_miss_rate(*pair, n=2000, seeds=1000) <= ALPHA


def test_renyi_bound_is_tight_on_two_cells_and_flags_a_false_rho() -> None:
    rng = np.random.default_rng(1)
    n = 10 ** 6
    p, q = RR
    bound = renyi_lower_bound(rng.multinomial(n, p), rng.multinomial(n, q), alpha=ALPHA)
    assert bound.at(2.0) == pytest.approx(bernoulli_renyi(p[0], q[0], 2.0), rel=0.02)
    # randomised response at ε = 1 is ε²/2 = 0.5-zCDP (Bun & Steinke Prop. 3.3): ρ = 0.5 holds, ρ = 0.1 does not
    assert bound.exceeding(ZeroCDP(0.5).renyi) == []
    assert bound.exceeding(ZeroCDP(0.1).renyi)


def test_the_band_covers_the_true_curve_at_every_threshold() -> None:
    rng = np.random.default_rng(9)
    t = EDGES[1:-1]
    true_fpr, true_fnr = stats.norm.sf(t), stats.norm.cdf(t - 1.0)
    misses = 0
    for _ in range(100):
        curve = tradeoff_curve(_bins(rng.normal(1, 1, 3000)), _bins(rng.normal(0, 1, 3000)), alpha=ALPHA)
        inner = slice(1, -1)
        misses += bool(np.any((true_fpr < curve.fpr_lo[inner]) | (true_fpr > curve.fpr_hi[inner])
                              | (true_fnr < curve.fnr_lo[inner]) | (true_fnr > curve.fnr_hi[inner])))
    assert misses / 100 <= ALPHA
    d = curve.to_dict()
    assert d["false_positive_rate"][0] == 1.0 and d["false_negative_rate"][-1] == 1.0
    assert len(d["false_positive_rate"]) == len(t) + 2 and d["confidence"] == 1 - ALPHA
    claimed = claimed_curve(GaussianDP(1.0))
    assert claimed["claim"] == "μ = 1 (GDP)" and len(claimed["false_positive_rate"]) == len(claimed["false_negative_rate"])


def test_conclusions_name_the_notion() -> None:
    where = 'the event "x ≥ 1"'
    violation = judge_curve(ZeroCDP(0.1), 600_000, 10 ** 6, 200_000, 10 ** 6, alpha=ALPHA, where=where)
    assert violation.verdict == Verdict.VIOLATION
    assert violation.conclusion().startswith("VIOLATION of ρ = 0.1 (zCDP): certified false-positive rate ≤ ")
    assert where in violation.conclusion() and "95% confidence" in violation.conclusion()
    consistent = judge_curve(GaussianDP(1.0), 500_000, 10 ** 6, 200_000, 10 ** 6, alpha=ALPHA, where=where)
    assert consistent.verdict == Verdict.NO_VIOLATION
    assert consistent.conclusion().startswith("Consistent with μ = 1 (GDP): ") and "certified μ ≥ 0.8" in consistent.conclusion()
    k = 730_000
    renyi = judge_curve(ZeroCDP(0.05), k, 10 ** 6, 10 ** 6 - k, 10 ** 6, alpha=ALPHA,
                        cells=([k, 10 ** 6 - k], [10 ** 6 - k, k]), where="two cells")
    text = renyi.conclusion()
    assert text.startswith("VIOLATION of ρ = 0.05 (zCDP): certified D_") and "> ρ·α = " in text
    assert renyi.to_dict()["renyi"]["confidence"] == pytest.approx(1 - 0.2 * ALPHA)
    assert renyi.rates.alpha == pytest.approx(0.8 * ALPHA)
    profile = judge_curve(PrivacyProfile((0.5, 1.0), (0.1, 1e-5)), 600_000, 10 ** 6, 200_000, 10 ** 6, alpha=ALPHA)
    assert profile.conclusion().startswith("VIOLATION of (ε, δ) ∈ {(0.5, 0.1), (1, 1e-05)} (2 rows) (privacy profile)")
