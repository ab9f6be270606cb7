"""Releases whose size changes go through every attack: matched, padded, or "not applicable" — never a crash.

Real DP clustering code releases fewer centres than k on small data (k capped by a private
coreset), drops empty clusters, releases a noisy number of synthetic points or spans of no cell.
The plug-ins of ``tests/plugins/varying.py`` do each of these; ``dpaudit attack`` and
``dpaudit audit`` must measure every attack on them or say why it does not apply, and end with
exit status 0 (every part measured) — not a part that "failed" on dpaudit's own assumption of a
fixed release size.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit.attacks.attack import NotApplicable
from dpaudit.attacks.membership.vector_map import VectorMap, fit_length, pad_vectors
from dpaudit.attacks.reconstruction import difference_centroids, reconstruct
from dpaudit.attacks.reconstruction.differencing import match_centres
from dpaudit.attacks.targets import CentroidTarget, PointsTarget, Reference, SpanTarget, check_release
from dpaudit.cli import app
from dpaudit.mechanisms.base import Centroids, Points, Spans

PLUGINS = Path(__file__).parent / "plugins" / "varying.py"
ALL_ATTACKS = ("shokri", "yeom", "label-only", "reconstruction", "lira", "rmia", "tracing")
# plug-in → --output; the classes state their own release kind.
VARYING = {"coreset_kmeans": "centroids", "k_min_n": "centroids", "random_k": "centroids",
           "RandomCentroids": "centroids", "RaggedSpans": "centroids", "ragged_labels": "labels",
           "RaggedPoints": "points", "ragged_histogram": "vector"}
SMALL = ["--eps", "1", "--records", "100", "--releases", "1500", "--seed", "0", "--timeout", "20",
         "--no-progress"]


# --------------------------------------------------------------------------- differencing


def test_differencing_of_equal_sizes_inverts_the_mean_update() -> None:
    """k = k′: the centre that moved most is inverted exactly (x = c′ + n (c′ − c))."""
    D = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 10.0], [12.0, 10.0]])
    x = np.array([4.0, 0.0])
    before = Centroids(np.array([[11.0, 10.0], [1.0, 0.0]]))
    after = Centroids(np.array([[2.0, 0.0], [11.0, 10.0]]))  # (0 + 2 + 4)/3 = 2; listed in another order
    x_hat, case = difference_centroids(before, after, D)
    assert case == "same size" and np.allclose(x_hat, x)


def test_differencing_of_a_new_centre_takes_the_unmatched_one() -> None:
    """k′ = k + 1 (the record opened a cluster of its own): the unmatched centre far from the old ones."""
    D = np.array([[0.0, 0.0], [1.0, 0.0]])
    before = Centroids(np.array([[0.5, 0.0]]))
    after = Centroids(np.array([[0.4, 0.1], [9.0, 9.0]]))
    x_hat, case = difference_centroids(before, after, D)
    assert case == "new centre" and np.allclose(x_hat, [9.0, 9.0])
    x_hat, case = difference_centroids(Centroids(np.empty((0, 2))), after, D)  # nothing before
    assert case == "new centre" and np.isfinite(x_hat).all()


def test_differencing_of_fewer_or_no_centres() -> None:
    """k′ < k: the matched pair that moved most; k′ = 0: the prior mean (the release says nothing)."""
    D = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 10.0]])
    before = Centroids(np.array([[1.0, 0.0], [10.0, 10.0]]), counts=np.array([2.0, 1.0]))
    after = Centroids(np.array([[2.0, 0.0]]))
    x_hat, case = difference_centroids(before, after, D)
    assert case == "fewer centres" and np.allclose(x_hat, [2.0 + 2.0 * 1.0, 0.0])
    x_hat, case = difference_centroids(before, Centroids(np.empty((0, 2))), D, prior_mean=np.array([3.0, 4.0]))
    assert case == "no centre" and np.allclose(x_hat, [3.0, 4.0])


def test_matching_is_permutation_invariant_on_the_common_size() -> None:
    rng = np.random.default_rng(0)
    c, c2 = rng.normal(size=(3, 2)), rng.normal(size=(5, 2))
    rows, cols = match_centres(c, c2)
    perm = rng.permutation(5)
    rows_p, cols_p = match_centres(c, c2[perm])
    assert len(rows) == 3 and np.array_equal(rows, rows_p) and np.array_equal(perm[cols_p], cols)
    assert match_centres(np.empty((0, 2)), c2)[0].size == 0


# --------------------------------------------------------------------------- targets and scores


def _reference() -> Reference:
    return Reference(np.array([[0.0, 0.0], [5.0, 5.0], [-5.0, 5.0]]))


def test_a_release_of_any_size_is_usable_by_the_attacks() -> None:
    X = np.zeros((10, 2))
    assert check_release(Points(np.ones((7, 2))), X) is not None  # synthetic points: 7 for 10 records
    assert check_release(Centroids(np.empty((0, 2))), X) is not None  # no centre at all
    queries = np.array([[0.0, 0.0], [5.0, 5.0]])
    for target in (CentroidTarget(np.empty((0, 2)), _reference()).fit(),
                   PointsTarget(_reference()).fit(np.empty((0, 2)))):
        assert np.allclose(target.predict_proba(queries), 1.0 / 3.0)
    one = CentroidTarget(np.array([[5.0, 5.0]]), _reference()).fit()  # fewer centres than classes
    p = one.predict_proba(queries)
    cls = int(_reference().predict(np.array([[5.0, 5.0]]))[0])
    assert np.allclose(p.sum(axis=1), 1.0) and np.allclose(p[:, cls], 1.0)
    assert np.isinf(CentroidTarget(np.empty((0, 2)), _reference()).fit().distance(queries)).all()


def test_spans_with_empty_clusters_build_a_target_without_warnings() -> None:
    spans = Spans(np.array([-10.0, -10.0]), 2.0, (10, 10),
                  (np.empty((0, 2), dtype=np.int64), np.array([[5, 5], [5, 6]]), np.empty((0, 2), dtype=np.int64)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        target = SpanTarget(spans, _reference()).fit()
        p = target.predict_proba(np.array([[1.0, 1.0], [-9.0, -9.0]]))
    cls = int(_reference().predict(np.array([[1.0, 2.0]]))[0])  # the span's mean cell centre's class
    assert p[0, cls] == 1.0 and p[0].sum() == 1.0 and np.allclose(p[1], 1.0 / 3.0)
    none = SpanTarget(Spans(np.array([-10.0, -10.0]), 2.0, (10, 10), ()), _reference()).fit()
    assert np.allclose(none.predict_proba(np.zeros((2, 2))), 1.0 / 3.0)


def test_ragged_vectors_are_padded_with_no_answer_and_fitted_to_the_map() -> None:
    V = pad_vectors([np.array([1.0, 2.0]), np.array([3.0]), np.array([4.0, 5.0, 6.0])])
    assert V.shape == (3, 3) and np.isnan(V[1, 1:]).all() and np.isnan(V[0, 2]) and V[2, 2] == 6.0
    assert np.array_equal(fit_length(np.array([1.0, 2.0, 3.0]), 2), [1.0, 2.0])
    assert np.isnan(fit_length(np.array([1.0]), 3)[1:]).all()
    rng = np.random.default_rng(1)
    inputs = [rng.normal(size=(10, 2)) for _ in range(4)]
    vmap = VectorMap.fit(np.zeros(2), inputs, pad_vectors([rng.normal(size=n) for n in (1, 3, 2, 3)]))
    for n in (1, 3, 5):  # a target vector shorter, as long as, or longer than any run's
        assert np.isfinite(vmap.statistic(inputs[0], rng.normal(size=n))).all()


def test_linkage_on_synthetic_points_is_not_applicable() -> None:
    """A points release of another number of points than records is no perturbation of them."""
    rng = np.random.default_rng(2)
    members, non_members, prior = rng.normal(size=(10, 2)), rng.normal(size=(10, 2)), rng.normal(size=(50, 2))
    with pytest.raises(NotApplicable, match="9 points for 10 records"):
        reconstruct(object(), Points(rng.normal(size=(9, 2))), members, non_members, prior, 0.5, rng)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the commands


def _attack_entries(data: dict) -> dict[str, dict]:
    return {a["name"]: a for a in data["attacks"]}


@pytest.mark.parametrize("plugin", sorted(VARYING))
def test_attack_measures_every_attack_on_a_varying_release(plugin: str, tmp_path: Path) -> None:
    """Every attack a number or "not applicable" with a reason; nothing failed; exit status not 3."""
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["attack", "-m", f"{PLUGINS}:{plugin}", "--output", VARYING[plugin], *SMALL,
                                   "--repeats", "1", "--out", str(out)])
    assert res.exit_code in (0,), (res.exit_code, res.output)
    data = json.loads((out / "results.json").read_text())
    entries = _attack_entries(data)
    assert set(entries) == set(ALL_ATTACKS)
    for name, e in entries.items():
        assert e["status"] in ("ok", "not-applicable"), (name, e)
        assert not e.get("repeats_failed") and not e.get("errors"), (name, e)
        if e["status"] == "not-applicable":
            assert e["reason"], (name, e)
        elif name == "reconstruction":
            assert 0.0 <= e["success_rate"] <= 1.0
        else:
            assert 0.0 <= e["auc"] <= 1.0 and e["epsilon_lower_bound"] >= 0.0
    assert data["conclusion"]["incomplete"] is False and not data.get("internal_errors")
    assert not (out / "dpaudit-errors.log").exists()
    if VARYING[plugin] == "centroids" and plugin != "RaggedSpans":  # differencing ran and said how it matched
        matching = entries["reconstruction"]["per_repeat"][0]["matching"]
        assert sum(matching["targets_per_case"].values()) == entries["reconstruction"]["per_repeat"][0]["n_records"]


@pytest.mark.parametrize("plugin", ["coreset_kmeans", "RaggedPoints", "RandomCentroids"])
def test_audit_runs_every_part_on_a_varying_release(plugin: str, tmp_path: Path) -> None:
    """The issue's case (k = min(4, coreset)) and its neighbours: every part ok, no attack row failed."""
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["audit", "-m", f"{PLUGINS}:{plugin}", "--output", VARYING[plugin], *SMALL,
                                   "--repeats", "1", "--out", str(out)])
    data = json.loads((out / "results.json").read_text())
    assert data["parts"] == {"smoke": "ok", "epsilon": "ok", "attacks": "ok", "utility": "ok"}, data["parts"]
    assert res.exit_code == 0, (res.exit_code, res.output)
    rows = {r["part"]: r for r in data["verdict_table"]}
    assert len(rows) == len(ALL_ATTACKS) + 1
    for row in rows.values():
        assert row["verdict"] != "inconclusive", row
        if row["verdict"] == "not applicable":
            assert row["value"], row
    assert all(not e.get("repeats_failed") for e in data["attacks"])
    assert data["conclusion"]["incomplete"] is False
