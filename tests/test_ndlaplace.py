"""Statistical and behavioural tests of nD-Laplace (thesis §3.1).

Tolerances.  Every statistical check uses a fixed seed, so each test is
deterministic; the thresholds say how surprising the observed sample would be
if the sampler were right.  KS tests use p > 1e-3 with N = 20 000 draws: a
correct sampler fails with probability 1e-3 for a random seed, while a
wrong law is rejected once its CDF differs by more than about
1.95/√N ≈ 0.014 anywhere (the KS critical value at 1e-3).  Moment checks allow
5 standard errors (two-sided false-failure rate 6e-7 under a correct sampler).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import dpaudit.mechanisms
from dpaudit.mechanisms.base import InvalidInputError, PrivacyLeakWarning
from dpaudit.mechanisms.ndlaplace import NDLaplace, lambertw_radius

N = 20_000
KS_P = 1e-3


def _noise(d: int, eps: float, seed: int, n: int = N, **kw) -> np.ndarray:
    mech = NDLaplace(epsilon=eps, **kw)
    batch = mech.release_many(np.zeros((1, d)), np.random.default_rng(seed), n)
    return batch.array[:, 0, :]


@pytest.mark.parametrize("d", [1, 2, 3, 5, 10])
def test_radius_is_gamma_d_over_eps(d: int) -> None:
    eps = 0.7
    radii = np.linalg.norm(_noise(d, eps, seed=d), axis=1)
    assert stats.kstest(radii, stats.gamma(a=d, scale=1 / eps).cdf).pvalue > KS_P


@pytest.mark.parametrize("d", [1, 2, 3, 5, 10])
def test_mean_displacement_is_d_over_eps(d: int) -> None:
    eps = 2.0
    radii = np.linalg.norm(_noise(d, eps, seed=100 + d), axis=1)
    se = math.sqrt(d) / eps / math.sqrt(N)  # sd of Gamma(d, 1/ε) is √d/ε
    assert abs(radii.mean() - d / eps) < 5 * se


def test_gamma_rejects_wrong_law() -> None:
    """The KS check has power: Gamma(d+1) radii are rejected at N = 20 000."""
    eps = 1.0
    radii = np.linalg.norm(_noise(3, eps, seed=7), axis=1)
    assert stats.kstest(radii, stats.gamma(a=4, scale=1 / eps).cdf).pvalue < KS_P


def test_lambertw_path_matches_gamma2() -> None:
    eps = 1.3
    lw = np.linalg.norm(_noise(2, eps, seed=11, radius_sampler="lambertw"), axis=1)
    gm = np.linalg.norm(_noise(2, eps, seed=12), axis=1)
    assert stats.ks_2samp(lw, gm).pvalue > KS_P
    assert stats.kstest(lw, stats.gamma(a=2, scale=1 / eps).cdf).pvalue > KS_P


def test_lambertw_inverse_cdf_is_exact() -> None:
    """r(p) inverts C(r) = 1 − (1 + εr)e^(−εr) (thesis eq. 3.2) to machine precision."""
    eps = 0.5
    p = np.linspace(0.001, 0.999, 999)
    r = lambertw_radius(p, eps)
    assert np.allclose(1 - (1 + eps * r) * np.exp(-eps * r), p, atol=1e-10)


@pytest.mark.parametrize("d", [2, 3, 5, 10])
def test_direction_is_uniform_on_sphere(d: int) -> None:
    """A coordinate of a uniform unit vector follows Beta((d−1)/2, (d−1)/2) on [−1, 1]."""
    z = _noise(d, 1.0, seed=200 + d)
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    a = (d - 1) / 2
    for j in (0, d - 1):
        assert stats.kstest((u[:, j] + 1) / 2, stats.beta(a, a).cdf).pvalue > KS_P


def test_direction_is_symmetric_in_1d() -> None:
    z = _noise(1, 1.0, seed=5)[:, 0]
    # sign is Bernoulli(1/2): 5 standard errors of a proportion with N draws
    assert abs((z > 0).mean() - 0.5) < 5 * 0.5 / math.sqrt(N)


def test_level_and_radius_parameterisation() -> None:
    mech = dpaudit.mechanisms.get("ndlaplace", level=2.0, radius=4.0)
    assert mech.claim.epsilon == pytest.approx(0.5)
    assert mech.claim.neighbours == "metric"


@pytest.mark.parametrize("domain", ["clip", "resample"])
def test_domain_handling_stays_in_box(domain: str, blobs2d: np.ndarray) -> None:
    X = np.clip(blobs2d / 10, -1, 1)
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=0.5, domain=domain, bounds=(-1.0, 1.0))
    Z = mech.release(X, np.random.default_rng(3)).points
    assert Z.shape == X.shape
    assert Z.min() >= -1.0 and Z.max() <= 1.0


def test_resample_draws_at_half_epsilon() -> None:
    """Correct resampling honours ε by drawing at ε/2 (renormalisation doubles ε)."""
    eps = 1.0
    mech = NDLaplace(epsilon=eps, domain="resample", bounds=(-1e6, 1e6))
    assert mech.sampling_epsilon == eps / 2
    radii = np.linalg.norm(mech.release_many(np.zeros((1, 2)), np.random.default_rng(9), N).array[:, 0], axis=1)
    # The box is so large nothing is rejected: the radius law is Gamma(2, 2/ε).
    assert stats.kstest(radii, stats.gamma(a=2, scale=2 / eps).cdf).pvalue > KS_P


def test_resample_is_the_conditional_law() -> None:
    """Resampling into [0, 1] from x = 0.5 (1-D) gives Laplace(ε/2) truncated to the box."""
    eps = 2.0
    mech = NDLaplace(epsilon=eps, domain="resample", bounds=(0.0, 1.0))
    z = mech.release_many(np.array([[0.5]]), np.random.default_rng(4), N).array[:, 0, 0]
    lap = stats.laplace(loc=0.5, scale=2 / eps)
    lo, hi = lap.cdf(0.0), lap.cdf(1.0)
    assert stats.kstest(z, lambda t: (lap.cdf(t) - lo) / (hi - lo)).pvalue > KS_P


def test_same_seed_same_release(blobs2d: np.ndarray) -> None:
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    a = mech.release(blobs2d, np.random.default_rng(42)).points
    b = mech.release(blobs2d, np.random.default_rng(42)).points
    c = mech.release(blobs2d, np.random.default_rng(43)).points
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    one = mech.release_many(blobs2d, np.random.default_rng(42), 1)[0].points
    assert np.array_equal(a, one)


def test_release_many_shape_and_independence(blobs2d: np.ndarray) -> None:
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    batch = mech.release_many(blobs2d, np.random.default_rng(0), 5)
    assert batch.array.shape == (5, *blobs2d.shape) and len(batch) == 5
    assert not np.array_equal(batch.array[0], batch.array[1])


def test_thesis_variant_warns_and_is_biased(blobs2d: np.ndarray) -> None:
    mech = dpaudit.mechanisms.get("ndlaplace-thesis", epsilon=1.0)
    assert mech.claim.epsilon == 1.0 and mech.claim.neighbours == "metric"
    with pytest.warns(PrivacyLeakWarning):
        Z = mech.release(blobs2d, np.random.default_rng(0)).points
    # All first draws point into the positive orthant: the mean shift is
    # far from 0 (a correct mechanism's mean shift is ~N(0, 2/(ε²n)) per axis).
    shift = (Z - blobs2d).mean(axis=0)
    assert np.all(shift > 5 * math.sqrt(2 / len(blobs2d)))


def test_thesis_variant_with_public_bounds_does_not_warn(blobs2d: np.ndarray) -> None:
    mech = dpaudit.mechanisms.get("ndlaplace-thesis", epsilon=1.0, bounds=(-15.0, 15.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        Z = mech.release(blobs2d, np.random.default_rng(0)).points
    assert Z.min() >= -15 and Z.max() <= 15


@pytest.mark.parametrize("kwargs, message", [
    ({"epsilon": 0.0}, "epsilon must be > 0"),
    ({"epsilon": -1.0}, "epsilon must be > 0"),
    ({"epsilon": float("nan")}, "NaN"),
    ({"epsilon": float("inf")}, "finite"),
    ({"epsilon": "abc"}, "must be a number"),
    ({}, "give epsilon"),
    ({"epsilon": 1.0, "level": 1.0, "radius": 1.0}, "not both"),
    ({"epsilon": 1.0, "domain": "clip"}, "needs public bounds"),
    ({"epsilon": 1.0, "domain": "wrap", "bounds": (0, 1)}, "domain must be"),
    ({"epsilon": 1.0, "domain": "clip", "bounds": (1, 0)}, "lo < hi"),
])
def test_bad_parameters_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        dpaudit.mechanisms.get("ndlaplace", **kwargs)


def test_lambertw_needs_2d() -> None:
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0, radius_sampler="lambertw")
    with pytest.raises(InvalidInputError, match="2-D"):
        mech.release(np.zeros((3, 3)), np.random.default_rng(0))
