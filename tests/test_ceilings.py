"""Perfect-test ceilings (attacks/epsilon/certification/ceilings.py) against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.attacks.bounds import clopper_pearson, epsilon_ceiling
from dpaudit.attacks.epsilon.certification.ceilings import (
    compose,
    dominating_ceiling,
    laplace_composition,
    laplace_loss,
    perfect_test_ceiling,
    randomized_response_loss,
    simulated_ceiling,
)
from dpaudit.mechanisms.base import InvalidInputError


def _closed(p: float, q: float, n: int, alpha: float) -> float:
    lo, _ = clopper_pearson(n * p, n, alpha / 2, side="lower")
    _, hi = clopper_pearson(n * q, n, alpha / 2, side="upper")
    return math.log(float(lo) / float(hi))


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_laplace_loss_is_a_distribution_with_the_right_atoms(eps: float) -> None:
    h = eps / 500
    d = laplace_loss(eps, h)
    assert d.p.sum() == pytest.approx(1.0, abs=1e-12) and d.q.sum() == pytest.approx(1.0, abs=1e-12)
    # The top bin holds the atom at ε (y ≤ 0) and the continuous part on [ε − h/2, ε).
    assert d.p[-1] == pytest.approx(0.5 + 0.5 * (1.0 - math.exp(-h / 4)), rel=1e-12)
    assert d.q[-1] == pytest.approx(0.5 * math.exp(-eps) * math.exp(h / 4), rel=1e-12)
    # KL(P‖Q) of two Laplace laws a shift Δ = ε·b apart is ε + e^−ε − 1.
    kl = float(np.sum(d.p * d.losses))
    assert kl == pytest.approx(eps + math.exp(-eps) - 1.0, rel=1e-3)
    sw = d.swapped()
    np.testing.assert_allclose(sw.p, d.p, atol=1e-15)        # Laplace is symmetric under D ↔ D′


def test_randomized_response_ceiling_is_the_closed_form() -> None:
    """RR(ε): the best event is the +ε atom, p = e^ε/(1+e^ε), q = 1/(1+e^ε)."""
    eps, n, alpha = 1.0, 10_000, 0.05
    hi = 1.0 / (1.0 + math.exp(-eps))
    want = _closed(hi, 1.0 - hi, n, alpha)
    got = perfect_test_ceiling(randomized_response_loss(eps, 0.01), n, alpha=alpha)
    assert got.bound == pytest.approx(want, rel=1e-9) and got.p == pytest.approx(hi)
    assert dominating_ceiling([eps], n, alpha=alpha, fractions=0).bound == pytest.approx(want, rel=1e-9)


def test_single_laplace_ceiling_brackets() -> None:
    """The ceiling is at least the closed form of the event {y ≤ 0} (p = ½, q = ½e^−ε), below ε, and
    tends to ε: within 0.01 at n = 10⁷."""
    eps, alpha = 1.0, 0.025
    for n in (10_000, 10_000_000):
        c = perfect_test_ceiling(laplace_composition([eps]), n, alpha=alpha).bound
        assert _closed(0.5, 0.5 * math.exp(-eps), n, alpha) - 1e-9 <= c < eps
    assert c > eps - 0.01


def test_composition_multiplies_the_maximum_atoms() -> None:
    """k draws: the top atom has probability (top of one)^k under P and under Q."""
    k, eps = 6, 0.2
    rr = compose([randomized_response_loss(eps, eps / 100)] * k)
    hi = 1.0 / (1.0 + math.exp(-eps))
    assert rr.p[-1] == pytest.approx(hi ** k, rel=1e-9) and rr.q[-1] == pytest.approx((1 - hi) ** k, rel=1e-9)
    assert rr.losses[-1] == pytest.approx(k * eps)
    one = laplace_loss(eps, eps / 100)
    lap = laplace_composition([eps] * k, step=eps / 100)
    assert lap.p[-1] == pytest.approx(one.p[-1] ** k, rel=1e-9)
    np.testing.assert_allclose(compose([one] * k).p, lap.p, atol=1e-12)


def test_ceiling_grows_with_n_and_never_beats_perfect_separation() -> None:
    d = laplace_composition([1 / 12] * 12)
    values = [perfect_test_ceiling(d, n, alpha=0.025).bound for n in (10**4, 10**5, 10**6)]
    assert values == sorted(values) and values[-1] < 1.0
    for n in (10**4, 10**6):
        assert dominating_ceiling([1 / 12] * 12, n, alpha=0.025).bound <= epsilon_ceiling(n, alpha=0.025)


def test_dominating_bound_is_above_the_laplace_composition() -> None:
    """RR(ε_i) dominates Laplace(ε_i): its ceiling is an upper bound."""
    eps = [0.1] * 5 + [0.05] * 10
    for n in (10**4, 10**6):
        lap = perfect_test_ceiling(laplace_composition(eps), n, alpha=0.025).bound
        assert dominating_ceiling(eps, n, alpha=0.025).bound >= lap - 1e-9


def test_simulated_ceiling_matches_the_exact_one() -> None:
    """10⁶ simulated losses of one Laplace(1) draw: the exact-loss estimate is within 0.01 of the
    exact ceiling (its p and q have standard errors near 5·10⁻⁴, moving the bound by < 0.005)."""
    rng = np.random.default_rng(0)
    y = rng.laplace(0.0, 1.0, 1_000_000)
    loss = np.abs(y - 1.0) - np.abs(y)
    yp = rng.laplace(1.0, 1.0, 1_000_000)
    loss_p = np.abs(yp - 1.0) - np.abs(yp)
    exact = perfect_test_ceiling(laplace_composition([1.0]), 100_000, alpha=0.025).bound
    assert simulated_ceiling(loss, None, 100_000, alpha=0.025, exact_loss=True).bound == pytest.approx(exact, abs=0.01)
    assert simulated_ceiling(loss, loss_p, 100_000, alpha=0.025).bound == pytest.approx(exact, abs=0.01)


def test_simulated_ceiling_does_not_credit_float_noise() -> None:
    a = np.ones(1000)
    b = np.ones(1000) + 1e-15
    assert simulated_ceiling(b, a, 10_000, alpha=0.025).bound == 0.0


def test_bad_arguments() -> None:
    with pytest.raises(InvalidInputError):
        laplace_loss(0.0, 0.1)
    with pytest.raises(InvalidInputError):
        perfect_test_ceiling(laplace_loss(1.0, 0.1), 0, alpha=0.05)
    with pytest.raises(InvalidInputError):
        simulated_ceiling(np.zeros(3), None, 10, alpha=0.05)


def test_draw_budgets_add_up_to_the_claim() -> None:
    """A corner canary uses each mechanism's whole stated budget; diffprivlib's declared draws
    add up to (1 + d·c)/(d + c)·ε with c = (4dρ²)^(1/3), ρ = 0.225 — 1.75·ε at d = 30."""
    from dpaudit.attacks.epsilon.certification.draw_budgets import draw_budgets
    from dpaudit.attacks.epsilon.pairs.constructions import tiny_pair
    from dpaudit.mechanisms.dpdbscan import DPDBSCAN
    from dpaudit.mechanisms.dpfcm import DPFCMCorrected
    from dpaudit.mechanisms.dpkccm import DPKCCM

    kccm = DPKCCM(1.0, n_clusters=1, variant="allocation_k", bounds=(-100.0, 100.0))
    b = draw_budgets(kccm, tiny_pair(kccm.bounds, 1))
    assert b.kind == "exact" and len(b.epsilons) == 24 and b.total == pytest.approx(1.0)
    assert max(b.epsilons) == pytest.approx(1 / 8 * 100 / 101)
    dbscan = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="naive")
    assert draw_budgets(dbscan, tiny_pair(dbscan.bounds, 2)).epsilons == (1.0,)
    sparse = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="sparse")
    assert draw_budgets(sparse, tiny_pair(sparse.bounds, 2)).total == pytest.approx(1.0)
    fcm = DPFCMCorrected(1.0, n_clusters=2)
    assert draw_budgets(fcm, tiny_pair(fcm.bounds, 1)).total == pytest.approx(1.0)
    from dpaudit.mechanisms.diffprivlib_adapter import diffprivlib_available
    if diffprivlib_available():
        from dpaudit.mechanisms.diffprivlib_adapter import DiffprivlibKMeans

        d, rho = 30, 0.225
        c = (4 * d * rho ** 2) ** (1 / 3)
        mech = DiffprivlibKMeans(1.0, 1, bounds=(0.0, 1.0))
        spend = draw_budgets(mech, tiny_pair(mech.bounds, d, at="lo")).total
        assert spend == pytest.approx((1 + d * c) / (d + c), rel=1e-9) and spend > 1.75
