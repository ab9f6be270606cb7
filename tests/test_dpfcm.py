"""DP-FCM (Yang, Zhang & Ismail): as published (labels) and corrected (centres)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.data import datasets
from dpaudit.mechanisms.base import Centroids, InvalidInputError, Labels, PrivacyLeakWarning
from dpaudit.mechanisms.dpfcm import DPFCM, DPFCMCorrected, fcm_centres, fcm_memberships, random_memberships
from dpaudit.utility import metrics


@pytest.fixture(scope="module")
def iris() -> datasets.Dataset:
    return datasets.load("iris")


def test_eq5_centres() -> None:
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    U = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    V = fcm_centres(X, U, 2.0)
    # weights u² : centre 0 = (1·x0 + .25·x1)/1.25, centre 1 = (.25·x1 + 1·x2)/1.25
    np.testing.assert_allclose(V, [[0.2, 0.0], [0.2, 0.8]])


def test_eq7_memberships() -> None:
    X = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    V = np.array([[0.0, 1.0], [2.0, 0.0]])
    U = fcm_memberships(X, V, 2.0)
    d = np.sqrt(((X[:, None] - V[None]) ** 2).sum(-1))
    expected = 1.0 / ((d[:, :, None] / d[:, None, :]) ** 2).sum(axis=2)   # eq. 7 verbatim, m = 2
    np.testing.assert_allclose(U, expected)
    np.testing.assert_allclose(U.sum(axis=1), 1.0)


def test_memberships_at_a_centre_and_far_away() -> None:
    V = np.array([[0.0, 0.0], [1.0, 0.0]])
    U = fcm_memberships(np.array([[0.0, 0.0], [1e6, 0.0]]), V, 1.05)   # exponent 40: no overflow
    np.testing.assert_allclose(U[0], [1.0, 0.0])
    assert np.all(np.isfinite(U)) and np.allclose(U.sum(axis=1), 1.0)


def test_random_memberships_rows_sum_to_one(rng: np.random.Generator) -> None:
    U = random_memberships(50, 4, rng)
    assert U.shape == (50, 4) and np.all(U > 0) and np.allclose(U.sum(axis=1), 1.0)


def test_published_api_labels(iris: datasets.Dataset) -> None:
    mech = dpaudit.mechanisms.get("dpfcm", epsilon=1.0, n_clusters=3)
    assert mech.claim.epsilon == 1.0 and mech.claim.neighbours == "add-remove"
    with pytest.warns(PrivacyLeakWarning, match="min/max"):
        rel = mech.release(iris.X, np.random.default_rng(0))
    assert isinstance(rel, Labels)
    assert rel.labels.shape == (150,)
    assert rel.labels.min() >= 0 and rel.labels.max() < 3


def test_published_with_public_bounds_does_not_warn(iris: datasets.Dataset) -> None:
    mech = DPFCM(1.0, n_clusters=3, bounds=iris.bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        rel = mech.release(iris.X, np.random.default_rng(0))
    assert rel.labels.shape == (150,)


def test_published_same_seed_same_labels(iris: datasets.Dataset) -> None:
    mech = DPFCM(0.5, n_clusters=3, bounds=iris.bounds)
    a = mech.release(iris.X, np.random.default_rng(3)).labels
    b = mech.release(iris.X, np.random.default_rng(3)).labels
    np.testing.assert_array_equal(a, b)


def test_published_nearly_noiseless_clusters_iris(iris: datasets.Dataset) -> None:
    """With negligible noise DP-FCM is FCM: iris F-measure ≈ 0.89 (FCM's known value)."""
    rel = DPFCM(1e9, n_clusters=3, bounds=iris.bounds).release(iris.X, np.random.default_rng(0))
    assert metrics.f_measure(iris.y, rel.labels) > 0.85


def test_corrected_releases_centres(iris: datasets.Dataset) -> None:
    mech = dpaudit.mechanisms.get("dpfcm-corrected", epsilon=1.0, n_clusters=3, bounds=iris.bounds)
    rel = mech.release(iris.X, np.random.default_rng(0))
    assert isinstance(rel, Centroids)
    assert rel.centers.shape == (3, 4) and rel.counts.shape == (3,)
    lo, hi = iris.bounds
    assert np.all(rel.centers >= lo) and np.all(rel.centers <= hi)
    assert mech.claim.epsilon == 1.0 and mech.claim.neighbours == "add-remove"
    again = mech.release(iris.X, np.random.default_rng(0))
    np.testing.assert_array_equal(rel.centers, again.centers)


def test_corrected_without_noise_is_fcm_from_same_start(iris: datasets.Dataset) -> None:
    """ε = 1e12 makes the noise ~1e-11: the result is plain FCM from the same random start."""
    lo, hi = iris.bounds
    T = 10
    rel = DPFCMCorrected(1e12, n_clusters=3, iterations=T, bounds=iris.bounds).release(iris.X, np.random.default_rng(5))
    Z = (iris.X - lo) / (hi - lo)
    U = random_memberships(len(Z), 3, np.random.default_rng(5))
    V = fcm_centres(Z, U, 2.0)
    for _ in range(T - 1):
        U = fcm_memberships(Z, V, 2.0)
        V = fcm_centres(Z, U, 2.0)
    np.testing.assert_allclose(rel.centers, lo + V * (hi - lo), atol=1e-6)


def test_corrected_noise_scale() -> None:
    """T = 1: released weights are Σ u^m + Lap(Δ/(ε/T)) with Δ = d/2 + 1, replayed from the seed."""
    X = np.random.default_rng(1).random((20, 3))
    eps = 0.7
    rel = DPFCMCorrected(eps, n_clusters=2, iterations=1).release(X, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    U = random_memberships(20, 2, rng)
    b = (3 / 2 + 1) / eps
    rng.laplace(0.0, b, size=(2, 3))                 # the sums' noise is drawn first
    expected = (U ** 2).sum(axis=0) + rng.laplace(0.0, b, size=2)
    np.testing.assert_allclose(rel.counts, expected)


@pytest.mark.parametrize("cls,params,match", [
    ("dpfcm", {"n_clusters": 1}, "n_clusters must be"),
    ("dpfcm", {"m": 1.0}, "m \\(fuzzifier\\)"),
    ("dpfcm", {"epsilon": 0}, "epsilon must be > 0"),
    ("dpfcm", {"max_iter": 0}, "max_iter"),
    ("dpfcm", {"bounds": (1, 0)}, "lo < hi"),
    ("dpfcm", {"sensitivity": -1}, "sensitivity"),
    ("dpfcm-corrected", {"iterations": 0}, "iterations"),
    ("dpfcm-corrected", {"bounds": None}, "bounds are required"),
    ("dpfcm-corrected", {"epsilon": float("nan")}, "NaN"),
])
def test_bad_parameters(cls: str, params: dict, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        dpaudit.mechanisms.get(cls, **{"epsilon": 1.0, "n_clusters": 3, **params})


@pytest.mark.parametrize("cls", [DPFCM, DPFCMCorrected])
def test_c_larger_than_records(cls: type) -> None:
    with pytest.raises(InvalidInputError, match="larger than the number of records"):
        cls(1.0, n_clusters=5).release(np.random.default_rng(0).random((3, 2)), np.random.default_rng(0))


def test_published_release_many_matches_release(iris: datasets.Dataset) -> None:
    """The vectorised path is the same algorithm: one run of it equals release()."""
    mech = DPFCM(2.0, n_clusters=3, bounds=iris.bounds, max_iter=200)
    one = mech.release(iris.X, np.random.default_rng(12)).labels
    batch = mech.release_many(iris.X, np.random.default_rng(12), 1)
    np.testing.assert_array_equal(batch[0].labels, one)
    many = mech.release_many(iris.X, np.random.default_rng(3), 5)
    again = mech.release_many(iris.X, np.random.default_rng(3), 5)
    assert many.kind == "labels" and many.array.shape == (5, 150)
    np.testing.assert_array_equal(many.array, again.array)
    assert many.array.min() >= 0 and many.array.max() < 3
    assert len({tuple(r) for r in many.array}) > 1   # independent runs differ
