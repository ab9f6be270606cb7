"""The two label releases of the DP-DBSCAN family (Approximate DBSCAN under DP): ``dpdbscan-labels``
(the paper's evaluation output) and ``dbscan-labels`` (noisy pairwise distances)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.cluster import DBSCAN
from sklearn.metrics import adjusted_rand_score

import dpaudit.mechanisms
from dpaudit.data import datasets
from dpaudit.mechanisms.base import InvalidInputError, Labels


@pytest.fixture
def moons() -> np.ndarray:
    return datasets.load("moons").X


# --------------------------------------------------------------------------- #
# The label releases
# --------------------------------------------------------------------------- #
def test_dpdbscan_labels_are_the_spans_on_the_private_points(moons: np.ndarray) -> None:
    kw = dict(epsilon=1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0))
    spans = dpaudit.mechanisms.get("dpdbscan", **kw).release(moons, np.random.default_rng(9))
    mech = dpaudit.mechanisms.get("dpdbscan-labels", **kw)
    labels = mech.release(moons, np.random.default_rng(9))
    assert isinstance(labels, Labels) and mech.claim.neighbours == "add-remove"
    assert np.array_equal(labels.labels, spans.predict(moons))


def test_dbscan_labels_has_no_utility_at_eps_1() -> None:
    ds = datasets.load("moons")
    mech = dpaudit.mechanisms.get("dbscan-labels", epsilon=1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0))
    assert mech.claim.neighbours == "replace"
    assert mech.sensitivity(2000, 2) == pytest.approx(1999 * 6 * math.sqrt(2))
    # Lap((n − 1)·diam/ε) noise, scale ≈ 1.7e4, dwarfs every distance (≤ diam ≈ 8.5): after clipping
    # about half of all distances are 0 whatever the data, every record has ~1000 neighbours
    # within alpha and DBSCAN returns a single cluster, whose ARI is exactly 0
    for seed in range(3):
        labels = mech.release(ds.X, np.random.default_rng(seed)).labels
        assert adjusted_rand_score(ds.y, labels) == 0.0
    # with the noise off it is plain DBSCAN (so the near-zero ARI is the noise, not a bug)
    exact = dpaudit.mechanisms.get("dbscan-labels", epsilon=1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0), noise=False)
    want = DBSCAN(eps=0.2, min_samples=7).fit(ds.X).labels_
    assert np.array_equal(exact.release(ds.X, np.random.default_rng(0)).labels, want)
    assert adjusted_rand_score(ds.y, want) > 0.9


def test_dbscan_labels_rejects_bad_input() -> None:
    with pytest.raises(InvalidInputError, match="bounds"):
        dpaudit.mechanisms.get("dbscan-labels", epsilon=1.0, alpha=0.2, min_pts=7)
    with pytest.raises(InvalidInputError, match="min_pts"):
        dpaudit.mechanisms.get("dbscan-labels", epsilon=1.0, alpha=0.2, min_pts=0, bounds=(-3.0, 3.0))
