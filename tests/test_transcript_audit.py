"""Transcript features, constructions and the transcript audit entry point (issue 10)."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.attacks.epsilon import Budget, SearchSpace, estimate_transcript_epsilon
from dpaudit.attacks.epsilon.pairs.constructions import (
    core_threshold_pairs,
    empty_cluster_pair,
    lone_corner_pair,
    tiny_pair,
    to_replace,
    worst_case_pairs,
)
from dpaudit.attacks.epsilon.selection.features import FeatureMap
from dpaudit.attacks.epsilon.selection.transcripts import TranscriptFeatureMap, TranscriptView
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.mechanisms.dpdbscan import DPDBSCAN
from dpaudit.mechanisms.dpfcm import DPFCM, DPFCMCorrected
from dpaudit.mechanisms.dpkccm import DPKCCM
from dpaudit.mechanisms.replays import laplace_llr


# --------------------------------------------------------------------------- constructions
def _is_neighbour(pair) -> bool:
    if pair.relation == "add-remove":
        return (len(pair.D_prime) == len(pair.D) + 1 and np.array_equal(pair.D_prime[:-1], pair.D)
                and np.array_equal(pair.D_prime[-1], pair.new) and pair.index == len(pair.D))
    if pair.relation == "replace":
        differ = np.flatnonzero(np.any(pair.D != pair.D_prime, axis=1))
        return pair.D.shape == pair.D_prime.shape and differ.tolist() == [pair.index]
    return False


def _constructions() -> list:
    box = (np.array([-1.0, 0.0]), np.array([1.0, 5.0]))
    dbscan = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0))
    pairs = [tiny_pair(box, 2), tiny_pair(box, 2, size=5, at="lo"), lone_corner_pair(box, 2, 4),
             lone_corner_pair(box, 2, 1), empty_cluster_pair(box, 2, 3)]
    pairs += core_threshold_pairs(dbscan, 2)
    return pairs + [to_replace(p) for p in pairs]


@pytest.mark.parametrize("pair", _constructions(), ids=lambda p: p.name)
def test_constructions_are_neighbours_inside_the_box(pair) -> None:
    assert _is_neighbour(pair)
    lo, hi = ((np.array([-1.0, -1.0]), np.array([1.0, 1.0])) if pair.name.startswith("core")
              else (np.array([-1.0, 0.0]), np.array([1.0, 5.0])))
    for data in (pair.D, pair.D_prime):
        assert np.all(data >= lo) and np.all(data <= hi)


def test_core_threshold_pair_sits_in_one_interior_cell_with_empty_neighbours() -> None:
    mech = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0))
    grid, offsets = mech.grid_for(2)
    for pair in core_threshold_pairs(mech, 2):
        cells = np.floor((pair.D_prime - grid.origin) / grid.width).astype(int)
        assert len({tuple(c) for c in cells}) == 1                       # one cell, canary included
        centre = cells[0]
        assert np.all(centre + offsets.min(axis=0) >= 0) and np.all(centre + offsets.max(axis=0) < grid.shape)


def test_lone_corner_canary_is_far_from_every_group() -> None:
    pair = lone_corner_pair((-1.0, 1.0), 2, 4)
    assert np.min(np.linalg.norm(pair.D - pair.new, axis=1)) > 1.0


def test_worst_case_pairs_per_kind() -> None:
    X = np.random.default_rng(0).uniform(-1, 1, (30, 2))
    kccm = [p.name for p in worst_case_pairs(DPKCCM(1.0, n_clusters=3), X)]
    assert kccm[:3] == ["lone-corner-k3", "tiny-3-mid", "empty-cluster-k3"] and "canary-corner" in kccm
    spans = [p.name for p in worst_case_pairs(DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0)), X)]
    assert spans[0].startswith("core-threshold")
    assert all(_is_neighbour(p) for p in worst_case_pairs(DPKCCM(1.0, n_clusters=3), X, relation="replace")
               if p.relation == "replace")


# --------------------------------------------------------------------------- features
def test_laplace_llr_is_the_log_ratio_and_flat_on_its_plateaus() -> None:
    y = np.random.default_rng(0).laplace(0.0, 2.0, 100_000)
    direct = (np.abs(y + 1.3) - np.abs(y - 0.4)) / 2.0
    np.testing.assert_allclose(laplace_llr(y, 0.4, -1.3, 2.0), direct, atol=1e-12)
    plateau = laplace_llr(y[y > 0.4], 0.4, -1.3, 2.0)
    assert np.unique(plateau).size == 1                   # one value whatever y's low-order bits


def _kccm_setup():
    mech = DPKCCM(1.0, n_clusters=2, variant="allocation_k", bounds=(-1.0, 1.0))
    pair = lone_corner_pair(mech.bounds, 2, 2, group_size=3)
    return mech, pair


def _fixed_function_cases() -> list:
    kccm, kccm_pair = _kccm_setup()
    unit = tiny_pair((0.0, 1.0), 1, size=3, at="lo")
    sparse = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="sparse")
    return [(kccm, kccm_pair), (DPFCM(1.0, n_clusters=2, max_iter=20, bounds=(0.0, 1.0)), unit),
            (DPFCMCorrected(1.0, n_clusters=2), unit), (sparse, core_threshold_pairs(sparse, 2)[0])]


@pytest.mark.parametrize("mech, pair", _fixed_function_cases(), ids=lambda x: getattr(x, "name", ""))
def test_feature_map_is_a_fixed_function_of_each_release(mech, pair) -> None:
    """Same releases ⇒ same feature rows, however they are batched or ordered (ragged ones included)."""
    view = TranscriptView(mech)
    batch = view.release_many(pair.D_prime, np.random.default_rng(0), 40)
    fmap = FeatureMap(pair, "transcript")
    assert isinstance(fmap, TranscriptFeatureMap)
    whole = fmap(batch)
    halves = np.vstack([TranscriptFeatureMap(pair)(batch[20:]), TranscriptFeatureMap(pair)(batch[:20])])
    np.testing.assert_array_equal(whole, np.vstack([halves[20:], halves[:20]]))
    np.testing.assert_array_equal(whole[5], fmap([batch[5]])[0])
    assert fmap.names[0] == "llr"


def test_kccm_features_name_every_iteration() -> None:
    mech, pair = _kccm_setup()
    fmap = TranscriptFeatureMap(pair)
    fmap(TranscriptView(mech).release_many(pair.D, np.random.default_rng(0), 3))
    assert "llr[iteration:11]" in fmap.names and "sums:mean" in fmap.names


def test_llr_is_zero_when_both_hypotheses_are_the_same_dataset() -> None:
    mech, pair = _kccm_setup()
    same = type(pair)("same", pair.D, pair.D, "add-remove", len(pair.D), pair.new)
    F = TranscriptFeatureMap(same)(TranscriptView(mech).release_many(pair.D, np.random.default_rng(1), 10))
    assert np.all(F[:, 0] == 0.0)


def test_llr_is_the_exact_privacy_loss_of_a_naive_histogram() -> None:
    """The canary adds one record to one cell: the loss is that cell's Laplace log ratio."""
    mech = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="naive")
    pair = core_threshold_pairs(mech, 2)[0]
    batch = TranscriptView(mech).release_many(pair.D_prime, np.random.default_rng(2), 50)
    grid, _ = mech.grid_for(2)
    cell = int(np.ravel_multi_index(tuple(np.floor((pair.new - grid.origin) / grid.width).astype(int)), grid.shape))
    y = batch.statistics["histogram"][:, cell]
    N = len(pair.D)
    F = TranscriptFeatureMap(pair)(batch)
    np.testing.assert_allclose(F[:, 0], np.abs(y - N - 1) - np.abs(y - N), atol=1e-12)


def test_sparse_histogram_replay_scores_the_canary_cell() -> None:
    mech = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="sparse")
    pair = core_threshold_pairs(mech, 2)[0]
    view = TranscriptView(mech)
    fmap = TranscriptFeatureMap(pair)
    F_D = fmap(view.release_many(pair.D, np.random.default_rng(3), 200))
    F_Dp = fmap(view.release_many(pair.D_prime, np.random.default_rng(4), 200))
    assert "llr[n]" in fmap.names
    assert F_D[:, 0].mean() > 0.0 > F_Dp[:, 0].mean()        # ln f(·|D) − ln f(·|D′) points the right way
    assert np.all(np.abs(F_D[:, 0]) <= 1.0 + 1e-9)            # one cell (ε_h) plus ñ (ε_n): at most ε


@pytest.mark.parametrize("mech, data", [
    (DPFCMCorrected(1.0, n_clusters=2, bounds=(0.0, 1.0)), "lo"),
    (DPFCM(1.0, n_clusters=2, max_iter=20, bounds=(0.0, 1.0)), "lo"),
    (DPFCM(1.0, n_clusters=2, max_iter=20), "lo"),
])
def test_fcm_replays_point_the_right_way(mech, data: str) -> None:
    pair = tiny_pair((0.0, 1.0), 1, size=3, at=data)
    view, fmap = TranscriptView(mech), TranscriptFeatureMap(pair)
    import warnings

    from dpaudit.mechanisms.base import PrivacyLeakWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        F_D = fmap(view.release_many(pair.D, np.random.default_rng(5), 300))
        F_Dp = fmap(view.release_many(pair.D_prime, np.random.default_rng(6), 300))
    assert np.median(F_D[:, 0]) > np.median(F_Dp[:, 0])


def test_view_rejects_mechanisms_without_a_transcript() -> None:
    from dpaudit.mechanisms.controls import LaplaceControl

    with pytest.raises(InvalidInputError, match="does not expose a transcript"):
        TranscriptView(LaplaceControl(1.0))


def test_transcript_audit_runs_end_to_end() -> None:
    """Smoke: the entry point certifies something on a tiny DP-DBSCAN transcript (one Laplace(ε) cell)."""
    mech = DPDBSCAN(1.0, alpha=0.5, min_pts=5, bounds=(-1.0, 1.0), histogram="naive")
    pair = core_threshold_pairs(mech, 2)[0]
    est = estimate_transcript_epsilon(mech, pair.D, budget=Budget(samples=4000),
                                      search=SearchSpace(pairs=[pair], classifier=None), seed=0)
    assert est.mechanism == "dpdbscan[transcript]" and 0.5 < est.epsilon_lower_bound <= 1.0
