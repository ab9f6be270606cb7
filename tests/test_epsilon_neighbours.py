"""Neighbouring pairs: every construction is a neighbouring pair under its relation, and
``pair_from_datasets`` accepts exactly the user pairs that are neighbours."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.attacks.epsilon.pairs.neighbours import MAX_CORNERS, candidate_pairs, pair_from_datasets
from dpaudit.mechanisms.base import InvalidInputError

X = np.random.default_rng(0).normal(size=(12, 3))


def _multiset(A: np.ndarray) -> list[tuple[float, ...]]:
    return sorted(map(tuple, np.asarray(A).tolist()))


@pytest.mark.parametrize("relation", ["add-remove", "replace", "metric"])
def test_every_candidate_is_a_neighbouring_pair(relation):
    pairs = candidate_pairs(X, relation, bounds=(-5.0, 5.0), distance=0.5, kind="labels")
    names = [p.name for p in pairs]
    assert len(names) == len(set(names))
    for p in pairs:
        if p.relation == "add-remove":
            assert len(p.D_prime) == len(p.D) + 1 and p.index == len(p.D)
            assert _multiset(p.D_prime) == _multiset(np.vstack([p.D, p.new[None, :]]))
        else:
            assert p.D.shape == p.D_prime.shape
            changed = np.flatnonzero(np.any(p.D != p.D_prime, axis=1))
            assert list(changed) == [p.index]
            if p.relation == "metric":
                assert np.linalg.norm(p.D_prime[p.index] - p.D[p.index]) == pytest.approx(0.5)
                assert p.scale == pytest.approx(0.5)


def test_families_searched():
    add = candidate_pairs(X, "add-remove", bounds=(-5.0, 5.0))
    families = {p.family for p in add}
    assert {"construction", "small", "duplicates", "corner", "axis"} <= families
    assert sorted(len(p.D) for p in add if p.family == "small") == [0, 1, 2, 5, 9]
    corners = [p.new for p in add if p.family == "corner" or p.name == "canary-corner"]
    assert len(corners) == 2 ** 3 and all(np.all(np.abs(c) == 5.0) for c in corners)  # every corner once
    # High dimension: a sample of the corners, not 2^d of them.
    wide = candidate_pairs(np.random.default_rng(1).normal(size=(8, 12)), "add-remove", bounds=(-1.0, 1.0))
    assert sum(p.family == "corner" for p in wide) <= MAX_CORNERS
    # The existing constructions stay first (a truncated search keeps them).
    assert [p.name for p in add[:4]] == ["canary-corner", "canary-isolated", "canary-dense", "remove-isolated"]
    rep = candidate_pairs(X, "replace", bounds=(-5.0, 5.0))
    swap = next(p for p in rep if p.name == "corner-to-opposite")
    np.testing.assert_array_equal(swap.D[0], -swap.D_prime[0])


def test_pair_from_datasets_add_remove_either_way():
    D = np.array([[0.0, 1.0], [2.0, 3.0], [2.0, 3.0]])
    D2 = np.array([[2.0, 3.0], [5.0, 5.0], [0.0, 1.0], [2.0, 3.0]])  # other rows reordered: still a multiset +1
    pair = pair_from_datasets(D, D2, "add-remove")
    assert pair.relation == "add-remove" and pair.index == 1 and np.array_equal(pair.new, [5.0, 5.0])
    back = pair_from_datasets(D2, D, "add-remove")  # removal: D is the larger one
    assert back.index == 1 and len(back.D) == 4 and back.n_shared == 3
    dup = pair_from_datasets(D[:2], D, "add-remove")  # the extra record duplicates one present
    assert np.array_equal(dup.new, [2.0, 3.0])


@pytest.mark.parametrize("D, D2, relation, message", [
    (np.zeros((3, 2)), np.zeros((5, 2)), "add-remove", "differ by exactly one record"),
    (np.zeros((2, 2)), np.ones((3, 2)), "add-remove", "more than one record differs"),
    (np.zeros((2, 2)), np.zeros((3, 2)), "replace", "same number of records"),
    (np.zeros((2, 2)), np.zeros((2, 2)), "replace", "identical"),
    (np.zeros((2, 2)), np.ones((2, 2)), "metric", "differ in 2 rows"),
    (np.array([[0.0], [1.0]]), np.array([[1.0], [0.0]]), "replace", "same order"),
    (np.zeros((2, 2)), np.zeros((2, 3)), "replace", "same columns"),
    (np.zeros((2, 2)), np.zeros((2, 2)), "swap", "neighbours must be one of"),
])
def test_pair_from_datasets_rejects_non_neighbours(D, D2, relation, message):
    with pytest.raises(InvalidInputError, match=message):
        pair_from_datasets(D, D2, relation)


def test_pair_from_datasets_replace_and_metric():
    D = np.array([[0.0, 0.0], [1.0, 1.0]])
    D2 = np.array([[0.0, 0.0], [4.0, 5.0]])
    rep = pair_from_datasets(D, D2, "replace")
    assert rep.index == 1 and rep.scale == 1.0 and np.array_equal(rep.old, [1.0, 1.0])
    met = pair_from_datasets(D, D2, "metric")
    assert met.distance == pytest.approx(5.0) and met.scale == pytest.approx(5.0)
    assert "moved by 5" in met.description
