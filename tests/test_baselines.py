"""Non-private baselines and the diffprivlib adapter."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.mechanisms.base import Centroids, InvalidInputError, Labels, Points
from dpaudit.mechanisms.diffprivlib_adapter import diffprivlib_available
from dpaudit.utility import metrics

BASELINES = {"kmeans": Centroids, "dbscan": Labels, "affinity-propagation": Labels, "fcm": Labels,
             "identity": Points}


@pytest.fixture
def blobs() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_blobs
    return make_blobs(120, centers=[(-5, -5), (0, 5), (5, -5)], cluster_std=0.5, random_state=1)


@pytest.mark.parametrize("name,kind", BASELINES.items())
def test_claim_and_kind(name: str, kind: type, blobs: tuple[np.ndarray, np.ndarray]) -> None:
    mech = dpaudit.mechanisms.get(name, epsilon=1.0)   # epsilon accepted and ignored
    assert mech.claim.epsilon == math.inf and not mech.claim.is_private
    rel = mech.release(blobs[0], np.random.default_rng(0))
    assert isinstance(rel, kind)


@pytest.mark.parametrize("name", ["kmeans", "affinity-propagation", "fcm"])
def test_same_seed_same_release(name: str, blobs: tuple[np.ndarray, np.ndarray]) -> None:
    mech = dpaudit.mechanisms.get(name)
    a = mech.release(blobs[0], np.random.default_rng(4))
    b = mech.release(blobs[0], np.random.default_rng(4))
    field = "centers" if isinstance(a, Centroids) else "labels"
    np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_baselines_recover_blobs(blobs: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = blobs
    rng = np.random.default_rng(0)
    km = dpaudit.mechanisms.get("kmeans", n_clusters=3).release(X, rng)
    assert metrics.adjusted_rand(y, km.predict(X)) == pytest.approx(1.0)
    assert km.counts.sum() == len(X)
    assert metrics.adjusted_rand(y, dpaudit.mechanisms.get("fcm", n_clusters=3).release(X, rng).labels) == pytest.approx(1.0)
    assert metrics.adjusted_rand(y, dpaudit.mechanisms.get("dbscan", alpha=1.0, min_pts=5).release(X, rng).labels) \
        == pytest.approx(1.0)
    assert metrics.adjusted_rand(y, dpaudit.mechanisms.get("affinity-propagation").release(X, rng).labels) > 0.5


def test_identity_releases_records(blobs: tuple[np.ndarray, np.ndarray]) -> None:
    X = blobs[0]
    np.testing.assert_array_equal(dpaudit.mechanisms.get("identity").release(X, np.random.default_rng(0)).points, X)


@pytest.mark.parametrize("name,params,match", [
    ("kmeans", {"n_clusters": 0}, "n_clusters must be"),
    ("dbscan", {"alpha": 0}, "alpha"),
    ("dbscan", {"min_pts": 0}, "min_pts"),
    ("affinity-propagation", {"damping": 1.0}, "damping"),
    ("fcm", {"n_clusters": 1}, "n_clusters must be"),
])
def test_bad_parameters(name: str, params: dict, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        dpaudit.mechanisms.get(name, **params)


def test_kmeans_k_larger_than_records() -> None:
    with pytest.raises(InvalidInputError, match="larger than the number of records"):
        dpaudit.mechanisms.get("kmeans", n_clusters=5).release(np.zeros((3, 2)), np.random.default_rng(0))


# ---- diffprivlib adapter ----------------------------------------------------------
def test_adapter_module_imports_without_diffprivlib() -> None:
    import dpaudit.mechanisms.diffprivlib_adapter as mod  # must never fail
    assert hasattr(mod, "DiffprivlibKMeans")


@pytest.mark.skipif(diffprivlib_available(), reason="diffprivlib is installed")
def test_adapter_without_diffprivlib_fails_clearly() -> None:
    with pytest.raises(InvalidInputError, match="dpaudit\\[diffprivlib\\]"):
        dpaudit.mechanisms.get("diffprivlib-kmeans", epsilon=1.0, n_clusters=3)


@pytest.mark.skipif(not diffprivlib_available(), reason="diffprivlib not installed (optional extra)")
def test_adapter_releases_centroids(blobs: tuple[np.ndarray, np.ndarray]) -> None:
    import warnings
    X = blobs[0] / 10.0   # inside the public box [−1, 1]
    mech = dpaudit.mechanisms.get("diffprivlib-kmeans", epsilon=5.0, n_clusters=3, bounds=(-1.0, 1.0))
    assert mech.claim.epsilon == 5.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # explicit bounds: no PrivacyLeakWarning from diffprivlib
        a = mech.release(X, np.random.default_rng(1))
    b = mech.release(X, np.random.default_rng(1))
    assert a.centers.shape == (3, 2)
    np.testing.assert_array_equal(a.centers, b.centers)
    with pytest.raises(InvalidInputError, match="larger than the number of records"):
        mech.release(X[:2], np.random.default_rng(0))
