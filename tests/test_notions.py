"""The claim notions' conversions (mechanisms/notions.py), each against its closed form.

GDP: f(α) = Φ(Φ⁻¹(1 − α) − μ) and δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022, Eq. 6 and
Cor. 2.13); (ε, δ)-DP: f(α) = max(0, 1 − δ − e^ε α, e^(−ε)(1 − δ − α)) (their Prop. 2.5) and its profile;
zCDP: δ(ε) = inf_α exp((α − 1)(αρ − ε))/(α − 1)·(1 − 1/α)^α (Canonne, Kamath & Steinke 2020, Prop. 12),
never above Bun & Steinke's exp(−(ε − ρ)²/(4ρ)) (2016, Prop. 1.3), and its curve between the (ε, δ(ε)) curves
it implies and the Gaussian's; the Laplace mechanism's curve (Dong et al. 2022, Eq. 9) against its own profile.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpaudit.mechanisms.base import InvalidInputError, PrivacyClaim
from dpaudit.mechanisms.notions import (
    ApproxDP,
    GaussianDP,
    PrivacyProfile,
    RenyiDP,
    ZeroCDP,
    notion_from_dict,
)

X = np.concatenate([np.geomspace(1e-5, 0.05, 15), np.linspace(0.06, 0.99, 25)])


def gdp_curve(mu: float, x: np.ndarray) -> np.ndarray:
    return stats.norm.cdf(stats.norm.ppf(1.0 - x) - mu)


def gdp_delta(mu: float, eps: float) -> float:
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def adp_curve(eps: float, delta: float, x: np.ndarray) -> np.ndarray:
    return np.maximum.reduce([np.zeros_like(x), 1 - delta - math.exp(eps) * x, math.exp(-eps) * (1 - delta - x)])


def cks_delta(rho: float, eps: float) -> float:
    """Canonne, Kamath & Steinke 2020, Prop. 12, minimised over the order."""
    def log_delta(a: float) -> float:
        return (a - 1) * (a * rho - eps) - math.log(a - 1) + a * math.log1p(-1 / a)
    res = optimize.minimize_scalar(log_delta, bounds=(1.0001, 1e4), method="bounded", options={"xatol": 1e-10})
    return math.exp(min(res.fun, log_delta(1.0001)))


def laplace_curve(eps: float, x: np.ndarray) -> np.ndarray:
    """Laplace mechanism with sensitivity/scale ε (Dong, Roth & Su 2022, Eq. 9)."""
    e = math.exp(-eps)
    return np.where(x < e / 2, 1 - x / e, np.where(x <= 0.5, e / (4 * x), e * (1 - x)))


@pytest.mark.parametrize("mu", [0.2, 0.5, 1.0, 3.0])
def test_gdp_curve_and_profile_are_the_closed_forms(mu: float) -> None:
    notion = GaussianDP(mu)
    np.testing.assert_allclose(notion.tradeoff(X), gdp_curve(mu, X), atol=1e-12)
    for eps in (0.0, 0.3, 1.0, 3.0):
        assert float(notion.profile(eps)) == pytest.approx(gdp_delta(mu, eps), rel=1e-6, abs=1e-12)
    delta = 1e-5
    assert gdp_delta(mu, notion.point_epsilon(delta)) == pytest.approx(delta, rel=1e-4)


@pytest.mark.parametrize("eps,delta", [(1.0, 0.0), (0.5, 1e-5), (2.0, 0.01)])
def test_approx_dp_curve_and_profile_are_the_closed_forms(eps: float, delta: float) -> None:
    notion = ApproxDP(eps, delta)
    np.testing.assert_allclose(notion.tradeoff(X), adp_curve(eps, delta, X), atol=1e-12)
    for e in (0.0, eps / 2, eps, 2 * eps):
        exact = delta + (1 - delta) * max(0.0, (math.exp(eps) - math.exp(e)) / (1 + math.exp(eps)))
        assert float(notion.profile(e)) == pytest.approx(exact, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_zcdp_profile_is_canonne_kamath_steinke(rho: float) -> None:
    notion = ZeroCDP(rho)
    for eps in (0.5, 1.0, 3.0, 8.0):
        delta = float(notion.profile(eps))
        assert delta == pytest.approx(cks_delta(rho, eps), rel=0.02)
        if eps > rho:
            assert delta <= math.exp(-(eps - rho) ** 2 / (4 * rho)) * (1 + 1e-9)  # Bun & Steinke, Prop. 1.3
    for delta in (1e-3, 1e-6):
        assert notion.point_epsilon(delta) <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-9


@pytest.mark.parametrize("rho", [0.1, 0.5])
def test_zcdp_curve_lies_between_its_profile_and_the_gaussian(rho: float) -> None:
    notion = ZeroCDP(rho)
    f = notion.tradeoff(X)
    # The Gaussian mechanism with μ = √(2ρ) is ρ-zCDP: the claim's curve is at most the Gaussian's.
    assert np.all(f <= gdp_curve(math.sqrt(2 * rho), X) + 1e-9)
    # ρ-zCDP implies (ε, δ(ε))-DP at every ε: its curve is at least each of those curves.
    for eps in (0.25, 0.5, 1.0, 2.0, 4.0):
        assert np.all(f >= adp_curve(eps, cks_delta(rho, eps) * 1.02, X) - 1e-9)
    assert float(ZeroCDP(0.5).tradeoff(0.1)) == pytest.approx(0.517, abs=1e-3)  # riskcal's documented value


def test_renyi_curve_at_the_zcdp_orders_is_the_zcdp_curve_and_bounds_monotone() -> None:
    orders = tuple(float(a) for a in np.linspace(1.1, 16.0, 60))
    rdp = RenyiDP(orders, tuple(0.5 * a for a in orders))
    np.testing.assert_allclose(rdp.tradeoff(X), ZeroCDP(0.5).tradeoff(X), atol=0.01)
    assert float(rdp.profile(2.0)) == pytest.approx(float(ZeroCDP(0.5).profile(2.0)), rel=0.05)
    single = RenyiDP((2.0, 8.0), (1.0, 4.0))
    assert single.renyi(1.5) == 1.0 and single.renyi(3.0) == 4.0 and math.isinf(single.renyi(9.0))
    assert ZeroCDP(0.5).renyi(3.0) == 1.5 and GaussianDP(1.0).renyi(2.0) == 1.0
    assert ApproxDP(1.0).renyi(4.0) == 1.0 and ApproxDP(0.1).renyi(2.0) == pytest.approx(0.01)
    assert math.isinf(ApproxDP(1.0, 1e-5).renyi(2.0))


def test_a_laplace_profile_implies_a_curve_below_the_laplace_curve() -> None:
    from dp_accounting.pld import privacy_loss_distribution

    eps = 1.0
    pld = privacy_loss_distribution.from_laplace_mechanism(1.0 / eps, sensitivity=1.0)
    profile = PrivacyProfile.from_pld(pld, np.linspace(0.0, eps, 21))
    f, exact = profile.tradeoff(X), laplace_curve(eps, X)
    assert np.all(f <= exact + 1e-6)          # the Laplace mechanism satisfies its own profile
    assert np.max(exact - f) < 0.02           # and 21 rows come close to its curve
    assert float(profile.profile(eps)) == pytest.approx(0.0, abs=1e-6)


def test_claims_in_a_notion_keep_their_point_and_round_trip() -> None:
    claim = PrivacyClaim.stated(ZeroCDP(0.5), delta=1e-6)
    assert claim.delta == 1e-6 and claim.epsilon == pytest.approx(ZeroCDP(0.5).point_epsilon(1e-6))
    assert claim.curve == ZeroCDP(0.5) and claim.to_dict()["notion"] == {"notion": "zcdp", "rho": 0.5}
    assert PrivacyClaim.from_dict(claim.to_dict()) == claim
    plain = PrivacyClaim(1.0, 1e-5)
    assert "notion" not in plain.to_dict() and plain.curve == ApproxDP(1.0, 1e-5)
    assert PrivacyClaim.stated(ApproxDP(2.0)) == PrivacyClaim(2.0)
    assert PrivacyClaim(math.inf).curve is None and PrivacyClaim(1.0, neighbours="metric").curve is None
    for notion in (GaussianDP(1.0), RenyiDP((2.0,), (1.0,)), PrivacyProfile((1.0,), (1e-5,))):
        assert notion_from_dict(notion.to_dict()) == notion
    with pytest.raises(InvalidInputError):
        PrivacyClaim.stated(GaussianDP(1.0), neighbours="metric")
    with pytest.raises(InvalidInputError):
        ZeroCDP(-1.0)
    with pytest.raises(InvalidInputError):
        RenyiDP((1.0,), (1.0,))
    assert ZeroCDP(0.5).text() == "ρ = 0.5 (zCDP)" and GaussianDP(1.0).text() == "μ = 1 (GDP)"


def test_no_notion_but_pure_dp_has_a_point_at_delta_zero() -> None:
    """μ-GDP, ρ-zCDP and Rényi DP at finite orders imply no pure ε: their point at δ = 0 is ∞, never the
    finite ε where δ(ε) underflows to 0 in floats (38 for μ = 1)."""
    for notion in (GaussianDP(1.0), ZeroCDP(0.5), RenyiDP((2.0, 8.0), (0.5, 1.9))):
        assert math.isinf(notion.point_epsilon(0.0)), notion
        assert math.isfinite(notion.point_epsilon(1e-5)), notion
