"""Release → features: sizes and shapes, ragged releases, "no answer" entries, failures.

Exact checks on hand-made releases (no randomness): a feature map is a fixed
function of a release, the same on D and on D′, and every row is finite.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.attacks.epsilon.pairs.neighbours import candidate_pairs, pair_from_datasets
from dpaudit.attacks.epsilon.selection.features import MAX_POSITIONS, FeatureMap, position_groups
from dpaudit.execution.validate import wrap_rows
from dpaudit.mechanisms.base import Centroids, Failed, Labels, Points, ReleaseBatch, Vector
from dpaudit.mechanisms.plugins import MalformedReleaseError, wrap_array

X = np.arange(12.0).reshape(6, 2)


def _pair(relation: str = "add-remove"):
    return candidate_pairs(X, relation, bounds=(-20.0, 20.0))[0]


def test_vector_status_flags_for_no_answer_entries():
    fmap = FeatureMap(_pair(), "vector")
    rel = [Vector([1.0, np.nan, -np.inf]), Vector([2.0, 5.0, np.inf]), Vector([3.0, 4.0, 6.0])]
    F = fmap(rel)
    col = {name: F[:, j] for j, name in enumerate(fmap.names)}
    np.testing.assert_array_equal(col["na[1]"], [1.0, 0.0, 0.0])      # NaN / None: no answer
    np.testing.assert_array_equal(col["na[2]"], [2.0, 3.0, 0.0])      # −∞, +∞, a number
    np.testing.assert_array_equal(col["v[1]"], [0.0, 5.0, 4.0])       # non-finite values read 0
    np.testing.assert_array_equal(col["n_na"], [2.0, 1.0, 0.0])
    np.testing.assert_array_equal(col["dv[1]"], [0.0, 3.0, 1.0])      # only between two numbers
    assert np.all(np.isfinite(F)) and np.all(col["failed"] == 0)


def test_ragged_vectors_have_length_and_absent_status():
    fmap = FeatureMap(_pair(), "vector")
    fmap.fit_layout([Vector(np.ones(3)), Vector(np.ones(4))])
    F = fmap([Vector([1.0, 2.0, 3.0]), Vector([1.0, 2.0, 3.0, 4.0]), Vector([7.0])])
    col = {name: F[:, j] for j, name in enumerate(fmap.names)}
    np.testing.assert_array_equal(col["length"], [3.0, 4.0, 1.0])
    np.testing.assert_array_equal(col["na[3]"], [4.0, 0.0, 4.0])       # absent: the release is shorter
    np.testing.assert_array_equal(col["tail[0]"], [3.0, 4.0, 7.0])     # counted from each release's end
    # The same releases as one batch or one by one give the same rows (a fixed function).
    np.testing.assert_array_equal(fmap(ReleaseBatch("vector", np.ones((2, 4))))[0], fmap([Vector(np.ones(4))])[0])


def test_empty_vectors_are_releases_too():
    fmap = FeatureMap(_pair(), "vector").fit_layout([Vector(np.zeros(0)), Vector(np.ones(2))])
    F = fmap([Vector(np.zeros(0)), Vector([1.0, np.nan])])
    col = {name: F[:, j] for j, name in enumerate(fmap.names)}
    np.testing.assert_array_equal(col["length"], [0.0, 2.0])
    np.testing.assert_array_equal(col["na[0]"], [4.0, 0.0])
    np.testing.assert_array_equal(col["na[1]"], [4.0, 1.0])
    only = FeatureMap(_pair(), "vector").fit_layout([Vector(np.zeros(0))])
    assert only(ReleaseBatch("vector", np.zeros((3, 0)))).shape == (3, len(only.names))


def test_long_vectors_keep_a_bounded_layout():
    pair = pair_from_datasets(np.zeros((200, 1)), np.r_[np.zeros((199, 1)), [[1.0]]], "replace")
    fmap = FeatureMap(pair, "vector").fit_layout([Vector(np.zeros(200))])
    assert len(fmap.names) < 3 * MAX_POSITIONS + 20
    assert "v[199]" in fmap.names  # the changed record's position is always featurised
    assert fmap([Vector(np.arange(200.0))]).shape == (1, len(fmap.names))


def test_failed_and_foreign_releases_are_outcomes():
    fmap = FeatureMap(_pair(), "points")
    rel = [Points(X + 1.0), Failed("raises", "boom"), Vector([1.0]), Points(np.vstack([X, X[:1]]))]
    F = fmap(rel)
    failed = F[:, fmap.names.index("failed")]
    np.testing.assert_array_equal(failed, [0.0, 1.0, 2.0, 0.0])
    assert np.all(F[1, :-1] == 0) and np.all(F[2, :-1] == 0)     # other columns fixed
    np.testing.assert_array_equal(F[:, fmap.names.index("n_points")], [6.0, 0.0, 0.0, 7.0])


@pytest.mark.parametrize("kind, good", [
    ("centroids", Centroids(np.zeros((2, 2)))),
    ("labels", Labels(np.zeros(7, dtype=int))),
    ("vector", Vector([1.0])),
])
def test_every_kind_accepts_failed(kind, good):
    fmap = FeatureMap(_pair(), kind)
    F = fmap([good, Failed("nan")])
    assert F.shape == (2, len(fmap.names)) and F[1, -1] == 1.0 and F[0, -1] == 0.0


def test_label_count_is_a_feature_and_extra_entry_is_dropped():
    pair = _pair()  # canary-corner: D has 6 records, D′ 7
    fmap = FeatureMap(pair, "labels")
    on_D = Labels(np.zeros(6, dtype=int))
    on_Dp = Labels(np.r_[np.zeros(6, dtype=int), [3]])  # the canary gets its own label
    F = fmap([on_D, on_Dp])
    np.testing.assert_array_equal(F[:, fmap.names.index("n_labels")], [6.0, 7.0])
    # The shared records' features ignore the canary's own entry.
    shared = [fmap.names.index(k) for k in ("n_clusters", "noise_share", "pair_share")]
    np.testing.assert_array_equal(F[0, shared], F[1, shared])


def test_labels_of_a_user_pair_with_the_extra_record_in_the_middle():
    D = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    D2 = np.array([[0.0, 0.0], [9.0, 9.0], [1.0, 1.0], [2.0, 2.0]])
    pair = pair_from_datasets(D, D2, "add-remove")
    assert pair.index == 1
    fmap = FeatureMap(pair, "labels")
    F = fmap([Labels(np.array([0, 0, 1])), Labels(np.array([0, 5, 0, 1]))])
    np.testing.assert_array_equal(F[0, :-2], F[1, :-2])  # same shared labelling → same features


def test_empty_dataset_pairs_featurise():
    pair = next(p for p in candidate_pairs(X, "add-remove", bounds=(-20.0, 20.0)) if p.name == "small0-canary-corner")
    assert len(pair.D) == 0 and len(pair.D_prime) == 1
    for kind, rel in (("labels", Labels(np.zeros(1, dtype=int))), ("points", Points(np.zeros((1, 2)))),
                      ("centroids", Centroids(np.zeros((1, 2))))):
        fmap = FeatureMap(pair, kind)
        assert np.all(np.isfinite(fmap([rel])))


def test_wrap_array_keeps_no_answer_in_vectors_points_and_centroids_and_refuses_it_in_labels():
    """NaN and ±inf are part of a vector, points or centroids release (a division by a noisy count that reached
    0 is output, not garbage); labels must be whole numbers."""
    X2 = np.zeros((3, 2))
    v = wrap_array([1.0, None, -np.inf], "vector", X2)
    assert np.isnan(v.values[1]) and v.values[2] == -np.inf
    assert np.isnan(wrap_array(np.full((3, 2), np.nan), "points", X2).points).all()
    assert np.isnan(wrap_array([[np.nan, 0.0]], "centroids", X2).centers[0, 0])
    with pytest.raises(MalformedReleaseError):
        wrap_array([0.0, np.nan, 1.0], "labels", X2)


def test_an_empty_set_of_centres_is_a_release():
    """A clustering that finds no cluster releases no centre: ``(0, d)`` or any empty array, read as 0 centres."""
    X2 = np.zeros((3, 2))
    for value in (np.empty((0, 2)), [], np.array([])):
        assert wrap_array(value, "centroids", X2).centers.shape == (0, 2)
    rows = wrap_rows(np.empty((4, 0, 2)), "centroids", X2)
    assert len(rows) == 4 and all(np.asarray(r.centers).shape == (0, 2) for r in rows)
    fmap = FeatureMap(_pair(), "centroids")
    F = fmap(list(rows))
    assert F[:, fmap.names.index("n_centres")].tolist() == [0.0] * 4 and F[:, -1].tolist() == [0.0] * 4


def test_non_finite_centres_are_left_out_of_the_geometry_and_counted():
    """A centre with a NaN coordinate is part of the release: ``n_na`` counts it (the layout has the column when
    the probe saw one) and the nearest-centre columns read the finite centres only."""
    pair = _pair()
    finite = Centroids(np.array([[0.5, 0.5], [2.0, 2.0]]))
    holed = Centroids(np.array([[0.5, 0.5], [np.nan, 2.0]]))
    fmap = FeatureMap(pair, "centroids").fit_layout([finite, holed])
    assert "n_na" in fmap.names and "n_na" not in FeatureMap(pair, "centroids").fit_layout([finite]).names
    F = fmap([finite, holed])
    assert np.isfinite(F).all()
    na, d1 = fmap.names.index("n_na"), fmap.names.index("d1_focus")
    assert F[:, na].tolist() == [0.0, 1.0]
    alone = fmap([Centroids(np.array([[0.5, 0.5]]))])
    assert F[1, d1] == alone[0, d1]


def test_position_groups_are_read_from_the_names_the_map_writes():
    """Sign counts (dpaudit.attacks.epsilon.selection.selection) find the vector's values and increments through these groups."""
    fmap = FeatureMap(_pair(), "vector").fit_layout([Vector(np.arange(5.0))])
    groups = position_groups(fmap.names)
    assert [fmap.names[j] for j in groups["v"]] == [f"v[{j}]" for j in range(5)]
    assert [fmap.names[j] for j in groups["dv"]] == ["v[0]"] + [f"dv[{j}]" for j in range(1, 5)]
    points = FeatureMap(_pair(), "points")
    assert position_groups(points.names) == {"v": [], "dv": []}


def test_all_finite_fast_path_equals_the_general_path():
    """Finite vectors skip the status bookkeeping; a NaN in the batch takes the general path: same numbers."""
    rng = np.random.default_rng(0)
    V = rng.laplace(0.0, 1.0, (50, 6))
    fmap = FeatureMap(_pair(), "vector").fit_layout([Vector(V[0]), Vector(np.array([np.nan] * 6))])
    both = np.vstack([V, np.full((1, 6), np.nan)])
    fast = fmap(ReleaseBatch("vector", V))
    general = fmap(ReleaseBatch("vector", both))
    np.testing.assert_array_equal(fast, general[:-1])
