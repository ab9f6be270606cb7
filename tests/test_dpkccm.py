"""DP-KCCM family (Ni et al.): budget, initialisation, merging, Lloyd equivalence, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.mechanisms.base import Centroids, InvalidInputError
from dpaudit.mechanisms.dpkccm import (
    DPKCCM,
    ITERATIONS,
    VARIANTS,
    budget_shares,
    initial_centroids,
    merge_clusters,
)


@pytest.fixture
def X4() -> np.ndarray:
    """Four tight, well-separated blobs inside [−1, 1]²."""
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(400, centers=[(-0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (0.5, -0.5)],
                      cluster_std=0.08, random_state=3)
    return X


def lloyd(X: np.ndarray, C: np.ndarray, iterations: int) -> np.ndarray:
    """Textbook Lloyd (empty cluster keeps its centroid), independent of the mechanism's code."""
    C = C.copy()
    for _ in range(iterations):
        d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
        lab = d2.argmin(axis=1)
        for j in range(len(C)):
            if np.any(lab == j):
                C[j] = X[lab == j].mean(axis=0)
    return C


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("eps", [0.1, 1.0, 7.3])
def test_shares_sum_to_epsilon(variant: str, eps: float) -> None:
    shares = budget_shares(variant, eps)
    assert shares.shape == (ITERATIONS,)
    assert math.isclose(shares.sum(), eps, rel_tol=1e-12)
    assert np.all(shares > 0)


def test_allocation_schedule_is_the_papers() -> None:
    s = budget_shares("allocation_nk", 24.0)
    np.testing.assert_allclose(s, [1] * 4 + [2] * 4 + [3] * 4)
    np.testing.assert_allclose(budget_shares("average_k", 12.0), np.ones(12))


def test_api_and_claim(X4: np.ndarray, rng: np.random.Generator) -> None:
    mech = dpaudit.mechanisms.get("dpkccm", epsilon=1.0, n_clusters=4, bounds=(-1.0, 1.0))
    rel = mech.release(X4, rng)
    assert isinstance(rel, Centroids)
    assert rel.centers.shape == (4, 2) and rel.counts.shape == (4,)
    assert mech.claim.epsilon == 1.0 and mech.claim.neighbours == "add-remove"
    assert mech.variant == "allocation_nk"
    assert np.all(rel.centers >= -1.0) and np.all(rel.centers <= 1.0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_release_has_k_centroids_in_box(variant: str, X4: np.ndarray) -> None:
    for seed in range(5):
        mech = DPKCCM(0.05, n_clusters=3, variant=variant, bounds=(-1.0, 1.0))
        rel = mech.release(X4, np.random.default_rng(seed))
        assert rel.centers.shape == (3, 2)
        assert np.all(np.abs(rel.centers) <= 1.0)


def test_nk_runs_n_times_k_clusters(X4: np.ndarray) -> None:
    mech = DPKCCM(1.0, n_clusters=4, variant="allocation_nk", n=3)
    tr = mech.run(X4, np.random.default_rng(0))
    assert tr.initial.shape == (12, 2) and tr.centers.shape == (ITERATIONS, 12, 2)
    assert tr.final.shape == (4, 2)
    assert DPKCCM(1.0, n_clusters=4, variant="average_k").run(X4, np.random.default_rng(0)).centers.shape[1] == 4


def test_merge_yields_k_weighted_means() -> None:
    centers = np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 1.0], [1.0, 1.2], [-1.0, 1.0], [-1.0, 0.9]])
    counts = np.array([10.0, 30.0, 5.0, 15.0, 8.0, 2.0])
    out, n = merge_clusters(centers, counts, 3)
    assert out.shape == (3, 2) and n.shape == (3,)
    order = np.argsort(out[:, 0])
    # eq. 12 = noisy-count-weighted mean; counts add
    np.testing.assert_allclose(out[order], [[-1.0, 0.98], [0.075, 0.0], [1.0, 1.15]])
    np.testing.assert_allclose(n[order], [10.0, 40.0, 20.0])
    assert math.isclose(n.sum(), counts.sum())


def test_merge_eq12_form_matches_weighted_mean() -> None:
    """The paper's min + |diff|·num'_max/(num'_p + num'_q), per dimension."""
    cp, cq, npp, nq = np.array([0.3, -0.2]), np.array([0.1, 0.4]), 7.0, 3.0
    m_is_p = cp >= cq
    eq12 = np.minimum(cp, cq) + np.abs(cp - cq) * np.where(m_is_p, npp, nq) / (npp + nq)
    out, _ = merge_clusters(np.stack([cp, cq]), np.array([npp, nq]), 1)
    np.testing.assert_allclose(out[0], eq12)


def test_merge_with_nonpositive_counts() -> None:
    centers = np.array([[0.0, 0.0], [0.2, 0.0], [0.9, 0.9], [0.9, 0.7]])
    out, n = merge_clusters(centers, np.array([5.0, -3.0, -1.0, -2.0]), 2)
    order = np.argsort(out[:, 0])
    np.testing.assert_allclose(out[order][0], [0.0, 0.0])   # weight max(−3, 0) = 0
    np.testing.assert_allclose(out[order][1], [0.9, 0.8])   # both ≤ 0: midpoint
    np.testing.assert_allclose(n[order], [2.0, -3.0])
    assert np.all(np.isfinite(out))


def test_count_nonpositive_keeps_previous_centroid(X4: np.ndarray) -> None:
    """Tiny ε makes many noisy counts ≤ 0; those centroids must not move."""
    mech = DPKCCM(1e-3, n_clusters=4, variant="average_nk")
    tr = mech.run(X4, np.random.default_rng(11))
    prev = np.concatenate([tr.initial[None], tr.centers[:-1]])
    nonpos = tr.counts <= 0
    assert nonpos.sum() > 10  # the test exercises the rule (scale Δ/ε_it = 36000)
    np.testing.assert_array_equal(tr.centers[nonpos], prev[nonpos])
    assert np.all(np.isfinite(tr.centers)) and np.all(np.abs(tr.centers) <= 1.0)


def test_initialisation_is_data_independent(X4: np.ndarray) -> None:
    mech = DPKCCM(1.0, n_clusters=4)
    other = np.random.default_rng(99).uniform(-1, 1, size=(50, 2))
    a = mech.run(X4, np.random.default_rng(5)).initial
    b = mech.run(other, np.random.default_rng(5)).initial
    c = mech.initial_centroids(2, np.random.default_rng(5))  # no data argument at all
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("m,d", [(4, 2), (12, 2), (15, 24), (30, 3)])
def test_su_init_separation(m: int, d: int) -> None:
    C, a = initial_centroids(m, d, np.random.default_rng(1), return_a=True)
    assert C.shape == (m, d) and 0 < a <= 0.5
    margin = np.min(1.0 - np.abs(C))            # distance to the boundary of [−1, 1]^d
    pair = np.sqrt(((C[:, None] - C[None]) ** 2).sum(-1))[np.triu_indices(m, 1)].min()
    assert margin >= a - 1e-12 and pair >= 2 * a - 1e-12
    if m == 12 and d == 2:
        assert a < 0.5  # 12 points 1 apart do not fit in [−0.5, 0.5]²: a had to shrink


def test_init_scales_to_bounds() -> None:
    mech = DPKCCM(1.0, n_clusters=3, variant="average_k", bounds=([0.0, 10.0], [2.0, 30.0]))
    C = mech.initial_centroids(2, np.random.default_rng(0))
    assert np.all((C > [0.0, 10.0]) & (C < [2.0, 30.0]))


@pytest.mark.parametrize("variant", ["average_k", "allocation_k"])
def test_without_noise_equals_lloyd(variant: str, X4: np.ndarray) -> None:
    mech = DPKCCM(1.0, n_clusters=4, variant=variant, noise=False)
    assert mech.claim.epsilon == math.inf
    tr = mech.run(X4, np.random.default_rng(2))
    np.testing.assert_allclose(tr.final, lloyd(X4, tr.initial, ITERATIONS), atol=1e-12)


def test_without_noise_nk_is_lloyd_then_exact_merge(X4: np.ndarray) -> None:
    mech = DPKCCM(1.0, n_clusters=4, variant="allocation_nk", noise=False)
    tr = mech.run(X4, np.random.default_rng(4))
    C = lloyd(X4, tr.initial, ITERATIONS)
    np.testing.assert_allclose(tr.centers[-1], C, atol=1e-12)
    # with exact counts the merged centroid is the mean of the merged clusters' records; the
    # blobs (sd 0.08, centres 1 apart) are each covered by whole sub-clusters, so every final
    # centroid is exactly the mean of the records nearest to it (1e-12: float round-off only)
    lab = Centroids(tr.final).predict(X4)
    assert tr.final.shape == (4, 2) and math.isclose(tr.final_counts.sum(), len(X4))
    np.testing.assert_array_equal(np.bincount(lab, minlength=4), tr.final_counts)
    for j in range(4):
        np.testing.assert_allclose(X4[lab == j].mean(0), tr.final[j], atol=1e-12)


def test_noiseless_recovers_blobs(X4: np.ndarray) -> None:
    rel = DPKCCM(1.0, n_clusters=4, variant="average_k", noise=False).release(X4, np.random.default_rng(0))
    truth = np.array([(-0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (0.5, -0.5)])
    d = np.sqrt(((rel.centers[:, None] - truth[None]) ** 2).sum(-1))
    # a blob's sample mean has standard error 0.08/√100 = 0.008 per coordinate: 0.05 is > 6 of them
    assert np.all(d.min(axis=0) < 0.05)


def test_records_outside_box_are_clipped() -> None:
    X = np.array([[5.0, 5.0], [6.0, 7.0], [-9.0, -9.0], [-8.0, -7.0]])
    rel = DPKCCM(1.0, n_clusters=2, variant="average_k", noise=False).release(X, np.random.default_rng(0))
    assert np.all(np.abs(rel.centers) <= 1.0)
    np.testing.assert_allclose(np.sort(rel.centers[:, 0]), [-1.0, 1.0])


def test_sensitivity_matches_box(X4: np.ndarray) -> None:
    """Noise scale Δ/ε_it with Δ = Σ half-widths + 1: check the empirical Laplace scale."""
    # One record, k = 1: the noisy count's deviation is Lap(Δ/ε_it); E|Lap(b)| = b.
    X = np.zeros((2, 3))
    mech = DPKCCM(1.0, n_clusters=1, variant="average_k", bounds=(-2.0, 2.0))
    devs = np.concatenate([np.abs(mech.run(X, np.random.default_rng(s)).counts - 2.0).ravel()
                           for s in range(100)])
    b = (3 * 2.0 + 1.0) / (1.0 / 12)
    # 1200 draws of |Lap(b)| (sd = b): mean within 5 standard errors of b
    assert abs(devs.mean() - b) < 5 * b / math.sqrt(devs.size)


def test_same_seed_same_release(X4: np.ndarray) -> None:
    mech = dpaudit.mechanisms.get("dpkccm", epsilon=0.5, n_clusters=4)
    a = mech.release(X4, np.random.default_rng(7))
    b = mech.release(X4, np.random.default_rng(7))
    c = mech.release(X4, np.random.default_rng(8))
    np.testing.assert_array_equal(a.centers, b.centers)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert not np.array_equal(a.centers, c.centers)


@pytest.mark.parametrize("params,match", [
    ({"n_clusters": 0}, "n_clusters must be"),
    ({"n_clusters": -2}, "n_clusters must be"),
    ({"n_clusters": 2.5}, "whole number"),
    ({"epsilon": 0.0}, "epsilon must be > 0"),
    ({"epsilon": -1.0}, "epsilon must be > 0"),
    ({"epsilon": float("inf")}, "finite"),
    ({"bounds": None}, "bounds are required"),
    ({"bounds": (1.0, -1.0)}, "lo < hi"),
    ({"bounds": "abc"}, "bounds"),
    ({"variant": "fast"}, "unknown variant"),
    ({"n": 0}, "merge factor"),
])
def test_bad_parameters(params: dict, match: str) -> None:
    base = {"epsilon": 1.0, "n_clusters": 3}
    with pytest.raises(InvalidInputError, match=match):
        dpaudit.mechanisms.get("dpkccm", **{**base, **params})


def test_k_larger_than_records() -> None:
    with pytest.raises(InvalidInputError, match="larger than the number of records"):
        DPKCCM(1.0, n_clusters=5).release(np.zeros((3, 2)), np.random.default_rng(0))


def test_bounds_width_mismatch(X4: np.ndarray) -> None:
    with pytest.raises(InvalidInputError, match="features"):
        DPKCCM(1.0, n_clusters=2, bounds=([0, 0, 0], [1, 1, 1])).release(X4, np.random.default_rng(0))


@pytest.mark.parametrize("variant", ["allocation_k", "average_k"])
def test_count_noise_is_laplace_with_schedule_scale(variant: str) -> None:
    """k = 1: iteration t's noisy count is n + Lap(Δ/ε_t), Δ = Σ half-widths + 1.

    Standardised by the schedule's scale, the 12 × 300 draws must be Lap(1) (KS).
    The KS critical D at α = 0.001 is ≈ 1.95/√3600 ≈ 0.032; a scale 20 % off
    gives D ≈ 0.045, so a wrong Δ (e.g. d·max r + 1 = 7 instead of 4.5) or a
    wrong schedule (ε/24 vs ε/12 is a factor 2) fails; checked below.
    """
    from scipy import stats
    X = np.zeros((5, 3))
    eps = 2.0
    mech = DPKCCM(eps, n_clusters=1, variant=variant, bounds=([-1.0, -2.0, 0.0], [1.0, 2.0, 1.0]))
    delta = 1.0 + 2.0 + 0.5 + 1.0
    scale = delta / budget_shares(variant, eps)
    z = np.concatenate([(mech.run(X, np.random.default_rng(s)).counts[:, 0] - 5.0) / scale
                        for s in range(300)])
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
    assert stats.kstest(z * 1.2, stats.laplace.cdf).pvalue < 1e-3   # the test has power
