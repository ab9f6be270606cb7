"""The auditor against the project's real clustering mechanisms (fixed seeds).

Labels are not DP-friendly (the DP-DBSCAN paper): a label release is either flagged
(dpdbscan-labels, dpfcm as published) or, when it is private
(dbscan-labels with the correct sensitivity), useless.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

import dpaudit.mechanisms
from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.data import datasets
from dpaudit.execution.verdict import Verdict


@pytest.fixture(scope="module")
def blobs30():
    return datasets.load("blobs-2d", records=30)


def test_dpdbscan_labels_flagged_by_lemma_3_1(blobs30):
    mech = dpaudit.mechanisms.get("dpdbscan-labels", epsilon=1.0, alpha=2.0, min_pts=4, bounds=(-15.0, 15.0))
    res = estimate_epsilon(mech, blobs30.X, budget=Budget(samples=300), search=SearchSpace(max_pairs=2), seed=0)
    assert res.verdict == Verdict.VIOLATION
    assert res.pair["name"].startswith("lemma3.1") and res.pair["scale"] == 2.0
    # Perfect separation: the bound is the ceiling of 300 samples (halved for add-remove).
    assert res.epsilon_lower_bound == pytest.approx(res.ceiling)


def test_dbscan_labels_private_but_useless(blobs30):
    mech = dpaudit.mechanisms.get("dbscan-labels", epsilon=1.0, alpha=2.0, min_pts=4, bounds=(-15.0, 15.0))
    res = estimate_epsilon(mech, blobs30.X, budget=Budget(samples=200), search=SearchSpace(max_pairs=1), seed=0)
    assert res.verdict == Verdict.NO_VIOLATION
    # Utility: ARI against the true blobs over 10 releases.  A useful clustering of
    # these well-separated blobs scores ≈ 1; noise this large leaves ≈ 0.  Tolerance: a labelling
    # unrelated to the truth has ARI mean 0 and, on 30 points in 3 groups, sd ≈ 0.05 (0.046 over
    # 2000 random labellings), so the mean of 10 has sd ≈ 0.015 and 0.1 is > 6 sd.
    rng = np.random.default_rng(1)
    ari = [adjusted_rand_score(blobs30.y, mech.release(blobs30.X, rng).labels) for _ in range(10)]
    assert abs(float(np.mean(ari))) < 0.1


@pytest.mark.slow
def test_dpfcm_as_published_flagged(blobs30):
    mech = dpaudit.mechanisms.get("dpfcm", epsilon=1.0, n_clusters=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpaudit.mechanisms.PrivacyLeakWarning)
        res = estimate_epsilon(mech, blobs30.X, budget=Budget(samples=300), search=SearchSpace(max_pairs=1),
                               run=RunSettings(n_jobs=2), seed=0)
    assert res.verdict == Verdict.VIOLATION and res.leak_warnings


@pytest.mark.slow
@pytest.mark.parametrize("spec, params", [
    ("dpkccm", dict(n_clusters=3, bounds=(-15.0, 15.0))),
    ("dpdbscan", dict(alpha=2.0, min_pts=4, bounds=(-15.0, 15.0))),
    ("dpfcm-corrected", dict(n_clusters=3, bounds=(-15.0, 15.0))),
])
def test_correct_clustering_mechanisms_not_flagged(spec, params, blobs30):
    mech = dpaudit.mechanisms.get(spec, epsilon=1.0, **params)
    res = estimate_epsilon(mech, blobs30.X, budget=Budget(samples=500), run=RunSettings(n_jobs=2), seed=0)
    assert res.verdict == Verdict.NO_VIOLATION
