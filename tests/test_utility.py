"""Utility metrics against hand-computed values and their degenerate cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.utility import metrics

X1 = np.array([[0.0], [1.0], [4.0], [5.0]])
L1 = np.array([0, 0, 1, 1])


def test_f_measure_hand_computed() -> None:
    y = [0, 0, 0, 1, 1, 1]
    pred = [0, 0, 1, 1, 1, 1]
    # class 0 best matches cluster 0: P = 2/2, R = 2/3 → F = 0.8
    # class 1 best matches cluster 1: P = 3/4, R = 3/3 → F = 6/7; weights 1/2 each
    assert metrics.f_measure(y, pred) == pytest.approx(0.5 * 0.8 + 0.5 * 6 / 7)


def test_f_measure_perfect_and_permutation_invariant() -> None:
    y = [0, 0, 1, 1, 2, 2]
    assert metrics.f_measure(y, [5, 5, 3, 3, 9, 9]) == pytest.approx(1.0)


def test_f_measure_noise_is_in_no_cluster() -> None:
    # class 0 entirely noise → 0; class 1 perfectly found → 1
    assert metrics.f_measure([0, 0, 0, 1, 1, 1], [-1, -1, -1, 1, 1, 1]) == pytest.approx(0.5)
    assert metrics.f_measure([0, 1, 1], [-1, -1, -1]) == 0.0


def test_nicv_hand_computed() -> None:
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0], [12.0, 0.0]])
    assert metrics.nicv(X, [[1.0, 0.0], [11.0, 0.0]]) == pytest.approx(1.0)
    assert metrics.nicv(X, [[0.0, 0.0]]) == pytest.approx((0 + 4 + 100 + 144) / 4)
    assert math.isnan(metrics.nicv(X, np.empty((0, 2))))


def test_internal_metrics_hand_computed() -> None:
    # silhouettes: 1 − 1/4.5, 1 − 1/3.5, 1 − 1/3.5, 1 − 1/4.5
    sil = np.mean([1 - 1 / 4.5, 1 - 1 / 3.5, 1 - 1 / 3.5, 1 - 1 / 4.5])
    assert metrics.silhouette(X1, L1) == pytest.approx(sil)
    # between SS 16 over k−1 = 1, within SS 1 over n−k = 2 → 32
    assert metrics.calinski_harabasz(X1, L1) == pytest.approx(32.0)
    # scatter 0.5 each, centroid distance 4 → (0.5 + 0.5)/4
    assert metrics.davies_bouldin(X1, L1) == pytest.approx(0.25)


def test_internal_metrics_drop_noise() -> None:
    X = np.vstack([X1, [[100.0]]])
    L = np.append(L1, -1)
    assert metrics.calinski_harabasz(X, L) == pytest.approx(32.0)


@pytest.mark.parametrize("labels", [[0, 0, 0, 0], [-1, -1, -1, -1], [0, -1, -1, -1], [0, 1, 2, 3]])
def test_internal_metrics_degenerate_are_nan(labels: list[int]) -> None:
    for fn in (metrics.silhouette, metrics.calinski_harabasz, metrics.davies_bouldin):
        assert math.isnan(fn(X1, labels))


def test_ari_ami() -> None:
    assert metrics.adjusted_rand([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert metrics.adjusted_mutual_info([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    # hand-computed ARI: contingency [[2,0],[1,1]]: Σ C(n_ij,2)=1, a: C(2,2)+C(2,2)=2,
    # b: C(3,2)+C(1,2)=3, C(4,2)=6 → expected 1; ARI = (1−1)/(2.5−1) = 0
    assert metrics.adjusted_rand([0, 0, 1, 1], [0, 0, 0, 1]) == pytest.approx(0.0)
    # all-noise prediction does not crash
    assert math.isfinite(metrics.adjusted_rand([0, 0, 1, 1], [-1, -1, -1, -1]))


def test_clustering_utility_keys() -> None:
    out = metrics.clustering_utility(X1, L1, labels_true=[0, 0, 1, 1], reference=[1, 1, 0, 0],
                                     centers=[[0.5], [4.5]])
    assert out["ari"] == pytest.approx(1.0) and out["ari_ref"] == pytest.approx(1.0)
    assert out["f_measure"] == pytest.approx(1.0) and out["nicv"] == pytest.approx(0.25)
    assert set(out) >= {"silhouette", "calinski_harabasz", "davies_bouldin", "ami", "ami_ref"}


def test_length_mismatch_rejected() -> None:
    with pytest.raises(InvalidInputError, match="differ in length"):
        metrics.adjusted_rand([0, 1], [0, 1, 1])
    with pytest.raises(InvalidInputError, match="labels"):
        metrics.silhouette(X1, [0, 1])
