"""Core types and validation (mechanisms/base.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.mechanisms.base import (
    Centroids,
    InvalidInputError,
    Labels,
    Points,
    PrivacyClaim,
    ReleaseBatch,
    Spans,
    Vector,
    check_bounds,
    check_data,
    check_epsilon,
    release_many,
)


@pytest.mark.parametrize("X, message", [
    ([[1.0, float("nan")], [0.0, 0.0]], "NaN or infinity"),
    ([[1.0, float("inf")], [0.0, 0.0]], "NaN or infinity"),
    (np.zeros((0, 2)), "is empty"),
    (np.zeros((1, 2)), "1 row"),
    (np.zeros(5), "must be 2-D"),
    (np.zeros((2, 2, 2)), "must be 2-D"),
    (np.zeros((3, 0)), "no features"),
    ([["a", "b"], ["c", "d"]], "numeric"),
])
def test_check_data_rejects(X: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        check_data(X)


def test_check_data_wrong_dims() -> None:
    with pytest.raises(InvalidInputError, match="has 3 features, expected 2"):
        check_data(np.zeros((4, 3)), n_features=2)


def test_check_data_returns_float_contiguous() -> None:
    out = check_data([[1, 2], [3, 4]])
    assert out.dtype == np.float64 and out.flags.c_contiguous


@pytest.mark.parametrize("eps", [0, -0.1, float("nan"), float("inf"), None, "x"])
def test_check_epsilon_rejects(eps: object) -> None:
    with pytest.raises(InvalidInputError):
        check_epsilon(eps)


def test_claim_validation_and_helpers() -> None:
    claim = PrivacyClaim(1.0, 0.0, "metric")
    assert claim.epsilon_at(2.0) == 2.0
    assert PrivacyClaim(1.0).epsilon_at(2.0) == 1.0
    assert claim.advantage_ceiling() == pytest.approx((math.e - 1) / (math.e + 1))
    assert not PrivacyClaim(float("inf")).is_private
    with pytest.raises(InvalidInputError, match="neighbours"):
        PrivacyClaim(1.0, 0.0, "swap")
    with pytest.raises(InvalidInputError, match="delta"):
        PrivacyClaim(1.0, 1.5)
    with pytest.raises(InvalidInputError):
        PrivacyClaim(0.0)


def test_check_bounds_broadcasts_and_validates() -> None:
    lo, hi = check_bounds((-1, 1), 3)
    assert lo.tolist() == [-1, -1, -1] and hi.tolist() == [1, 1, 1]
    with pytest.raises(InvalidInputError, match="features"):
        check_bounds(([0, 0], [1, 1]), 3)
    with pytest.raises(InvalidInputError, match="required"):
        check_bounds(None)


def test_releases_are_read_only() -> None:
    p = Points(np.zeros((3, 2)))
    with pytest.raises(ValueError):
        p.points[0, 0] = 1.0


def test_centroids_predict_nearest() -> None:
    c = Centroids(np.array([[0.0, 0.0], [10.0, 0.0]]))
    assert c.predict(np.array([[1.0, 1.0], [9.0, -1.0]])).tolist() == [0, 1]


def test_spans_predict() -> None:
    spans = Spans(origin=np.zeros(2), width=1.0, shape=(4, 4),
                  cells=(np.array([[0, 0], [0, 1]]), np.array([[3, 3]])))
    X = np.array([[0.5, 0.5], [0.5, 1.5], [3.2, 3.9], [2.0, 2.0], [-1.0, 0.0], [9.0, 9.0]])
    assert spans.predict(X).tolist() == [0, 0, 1, -1, -1, -1]
    assert Spans(np.zeros(2), 1.0, (2, 2)).predict(X).tolist() == [-1] * 6


def test_labels_and_points_cannot_predict() -> None:
    with pytest.raises(NotImplementedError):
        Labels(np.array([0, 1])).predict(np.zeros((2, 2)))


def test_release_batch_stack_and_index() -> None:
    class Loop:
        name = "loop"

        def release(self, X, rng):
            return Vector(rng.normal(size=3))

    batch = release_many(Loop(), np.zeros((2, 2)), np.random.default_rng(0), 4)
    assert isinstance(batch, ReleaseBatch) and batch.array.shape == (4, 3)
    assert isinstance(batch[2], Vector) and len(batch[1:3]) == 2
    mixed = ReleaseBatch.stack([Centroids(np.zeros((2, 2))), Centroids(np.zeros((3, 2)))])
    assert isinstance(mixed, list)
