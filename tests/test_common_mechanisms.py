"""Checks every registered mechanism must pass (scikit-learn's
``parametrize_with_checks`` idea): seeded reproducibility, the declared release
kind and claim, rejection of bad data, and no mutation of the input.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.mechanisms.base import InvalidInputError, PrivacyClaim, Release

# Parameters a mechanism needs beyond ε (public box, grid radius, ...).
EXTRA: dict[str, dict] = {
    "dpdbscan": {"alpha": 0.3, "min_pts": 3, "bounds": (-1.0, 1.0), "n_public": 60},
    "dpdbscan-labels": {"alpha": 0.3, "min_pts": 3, "bounds": (-1.0, 1.0), "n_public": 60},
    "dbscan-labels": {"alpha": 0.3, "min_pts": 3, "bounds": (-1.0, 1.0)},
    "dpkccm": {"n_clusters": 3, "bounds": (-1.0, 1.0)},
    "dpfcm": {"n_clusters": 3, "bounds": (-1.0, 1.0)},
    "dpfcm-corrected": {"n_clusters": 3, "bounds": (-1.0, 1.0)},
    "ndlaplace-thesis": {"bounds": (-1.0, 1.0)},
    "diffprivlib-kmeans": {"n_clusters": 3, "bounds": (-1.0, 1.0)},
    "kmeans": {"n_clusters": 3},
    "fcm": {"n_clusters": 3},
}


def _names() -> list[str]:
    names = []
    for name in dpaudit.mechanisms.available():
        marks = []
        if name == "diffprivlib-kmeans":
            marks.append(pytest.mark.skipif(
                not _importable("diffprivlib"), reason="diffprivlib extra not installed"))
        names.append(pytest.param(name, marks=marks))
    return names


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except Exception:  # an incompatible install fails with other errors than ImportError
        return False
    return True


def _data() -> np.ndarray:
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=60, centers=3, cluster_std=0.6, random_state=1)
    return np.clip(X / 12.0, -1.0, 1.0)


def _build(name: str):
    return dpaudit.mechanisms.get(name, epsilon=1.0, **EXTRA.get(name, {}))


@pytest.mark.parametrize("name", _names())
def test_declared_kind_and_claim(name: str) -> None:
    mech = _build(name)
    info = {m.name: m for m in dpaudit.mechanisms.describe()}[name]
    assert isinstance(mech.claim, PrivacyClaim)
    assert mech.claim.neighbours == info.neighbours
    release = mech.release(_data(), np.random.default_rng(0))
    assert isinstance(release, Release) and release.kind == info.release_kind
    assert "0x" not in repr(mech), "mechanisms need a readable repr for reports"


@pytest.mark.parametrize("name", _names())
def test_same_seed_same_release(name: str) -> None:
    mech = _build(name)
    X = _data()
    a = mech.release(X, np.random.default_rng(7))
    b = mech.release(X, np.random.default_rng(7))
    fields = [f for f in ("points", "centers", "labels", "values", "cells") if hasattr(a, f)]
    assert fields, f"no field compared for a {a.kind} release"
    for field in fields:
        va, vb = getattr(a, field), getattr(b, field)
        if field == "cells":
            assert len(va) == len(vb) and all(np.array_equal(x, y) for x, y in zip(va, vb))
        else:
            assert np.array_equal(va, vb)


@pytest.mark.parametrize("name", _names())
def test_input_not_mutated(name: str) -> None:
    X = _data()
    before = X.copy()
    _build(name).release(X, np.random.default_rng(0))
    assert np.array_equal(X, before)


@pytest.mark.parametrize("name", _names())
@pytest.mark.parametrize("bad", ["nan", "inf", "1d", "empty"])
def test_bad_data_rejected(name: str, bad: str) -> None:
    X = _data()
    if bad == "nan":
        X[3, 1] = np.nan
    elif bad == "inf":
        X[0, 0] = np.inf
    elif bad == "1d":
        X = X[:, 0]
    else:
        X = X[:0]
    with pytest.raises(InvalidInputError):
        _build(name).release(X, np.random.default_rng(0))


@pytest.mark.parametrize("name", _names())
def test_private_mechanisms_reject_bad_epsilon(name: str) -> None:
    if not _build(name).claim.is_private:
        pytest.skip("non-private baseline: ε is ignored")
    for eps in (0.0, -1.0, float("nan")):
        with pytest.raises(InvalidInputError):
            dpaudit.mechanisms.get(name, epsilon=eps, **EXTRA.get(name, {}))
