"""The textbook controls: calibration, shapes, reproducibility, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import dpaudit.mechanisms
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.mechanisms.controls import analytic_gaussian_sigma, classic_gaussian_sigma


def test_registered_with_claims():
    lap = dpaudit.mechanisms.get("laplace", epsilon=0.5)
    gau = dpaudit.mechanisms.get("gaussian", epsilon=1.0, delta=1e-5)
    assert (lap.claim.epsilon, lap.claim.delta, lap.claim.neighbours) == (0.5, 0.0, "add-remove")
    assert (gau.claim.epsilon, gau.claim.delta) == (1.0, 1e-5)


def test_laplace_count_noise_is_laplace(rng):
    # 20,000 draws: a KS test at level 0.001 rejects a wrong scale (×1.1) with near certainty.
    mech = dpaudit.mechanisms.get("laplace", epsilon=0.5)
    vals = mech.release_many(np.zeros((7, 2)), rng, 20_000).array[:, 0]
    assert stats.kstest(vals - 7.0, stats.laplace(scale=2.0).cdf).pvalue > 1e-3


def test_laplace_sum_sensitivity_follows_bounds():
    add = dpaudit.mechanisms.get("laplace", epsilon=1.0, query="sum", bounds=(-1.0, 3.0))
    rep = dpaudit.mechanisms.get("laplace", epsilon=1.0, query="sum", bounds=(-1.0, 3.0), neighbours="replace")
    assert add.query_sensitivity(2) == 6.0   # Σ max(|lo|, |hi|) = 3 + 3
    assert rep.query_sensitivity(2) == 8.0   # Σ (hi − lo) = 4 + 4
    X = np.array([[5.0, 0.0], [1.0, -4.0]])
    np.testing.assert_allclose(add.answer(X), [4.0, -1.0])  # clipped to the box first


def test_gaussian_calibrations():
    # Balle & Wang (2018) Table/Fig.: ε = 1, δ = 1e-5, Δ = 1 gives σ ≈ 3.73; classic gives 4.84 at ε = 1−.
    sigma = analytic_gaussian_sigma(1.0, 1e-5)
    assert sigma == pytest.approx(3.7306, abs=1e-3)
    assert classic_gaussian_sigma(0.5, 1e-5) == pytest.approx(np.sqrt(2 * np.log(1.25e5)) / 0.5)
    # The analytic σ meets the (ε, δ) curve with equality.
    a, b = 1 / (2 * sigma), sigma
    assert stats.norm.cdf(a - b) - np.e * stats.norm.cdf(-a - b) == pytest.approx(1e-5, rel=1e-6)
    assert analytic_gaussian_sigma(0.5, 1e-5) < classic_gaussian_sigma(0.5, 1e-5)


def test_same_seed_same_release():
    mech = dpaudit.mechanisms.get("gaussian", epsilon=1.0, delta=1e-6)
    X = np.ones((4, 3))
    a = mech.release(X, np.random.default_rng(5)).values
    b = mech.release(X, np.random.default_rng(5)).values
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=1.0, query="mean"), "query"),
    (dict(epsilon=1.0, query="sum"), "bounds"),
    (dict(epsilon=1.0, sensitivity=-1), "sensitivity"),
])
def test_laplace_bad_input(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        dpaudit.mechanisms.get("laplace", **kwargs)


def test_gaussian_bad_input():
    with pytest.raises(InvalidInputError, match="delta"):
        dpaudit.mechanisms.get("gaussian", epsilon=1.0, delta=0.0)
    with pytest.raises(InvalidInputError, match="epsilon < 1"):
        dpaudit.mechanisms.get("gaussian", epsilon=2.0, delta=1e-5, calibration="classic")
