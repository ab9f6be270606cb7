"""Input isolation, opaque randomness and faults as findings — in this process (no worker)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.execution import (
    Findings,
    MechanismBroken,
    MechanismFailure,
    NoUsableRelease,
    OpaqueSeeds,
    draw_releases,
    recording,
    release_once,
    replay_findings,
    settle_verdict,
)
from dpaudit.mechanisms.base import InvalidInputError, Points, ReleaseBatch

FAULTS = Path(__file__).parent / "plugins" / "faults.py"


def _plugin(fn: str, **kw):
    mech = dpaudit.mechanisms.get(f"{FAULTS}:{fn}", epsilon=1.0, output=kw.pop("output", "points"), **kw)
    mech.fn.__globals__["_calls"] = 0  # the plug-in module is loaded once per process: restart its call counter
    return mech


@pytest.fixture
def X() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(20, 2))


class _Vectorised:
    """A batch-friendly test mechanism whose faults are switched on per test."""

    name = "vectorised"

    def __init__(self, nan_rows=(), raise_batch=False, refuse=False, in_place=False):
        self.nan_rows, self.raise_batch, self.refuse, self.in_place = set(nan_rows), raise_batch, refuse, in_place
        self.calls: list[str] = []

    def release(self, X, rng):
        self.calls.append("release")
        if self.refuse:
            raise InvalidInputError("data outside the public box")
        return Points(X + rng.laplace(size=X.shape))

    def release_many(self, X, rng, n):
        self.calls.append("release_many")
        if self.raise_batch:
            raise ValueError("vectorised path broken")
        out = X[None] + rng.laplace(size=(n, *X.shape))
        for i in self.nan_rows:
            out[i, 0, 0] = np.nan
        if self.in_place:
            X += 1.0
        return ReleaseBatch("points", out)


# --------------------------------------------------------------------------- #
# Input isolation
# --------------------------------------------------------------------------- #
def test_in_place_plugin_gets_no_false_violation(X):
    """X += noise, a correct ε-metric nD-Laplace: without isolation D and D′ drift and ε_lb ≈ 6 against 1."""
    before = X.copy()
    mech = _plugin("in_place_ndlaplace", neighbours="metric")
    for seed in range(4):
        est = estimate_epsilon(mech, X, budget=Budget(samples=1500, selection_samples=300),
                               search=SearchSpace(max_pairs=2), run=RunSettings(progress=False), seed=seed)
        assert est.verdict == "no violation found", (seed, est.epsilon_lower_bound)
        assert est.epsilon_lower_bound <= 1.0
        (note,) = est.findings
        assert note["kind"] == "mutates-input" and note["share"] == 1.0 and not note["blocking"]
    assert np.array_equal(X, before)


def test_in_place_is_audited_exactly_like_a_copy(X):
    kw = dict(budget=Budget(samples=800, selection_samples=200), search=SearchSpace(max_pairs=2),
              run=RunSettings(progress=False), seed=7)
    in_place = estimate_epsilon(_plugin("in_place_ndlaplace", neighbours="metric"), X, **kw)
    copying = estimate_epsilon(_plugin("ndlaplace", neighbours="metric"), X, **kw)
    assert in_place.epsilon_lower_bound == copying.epsilon_lower_bound and in_place.counts == copying.counts
    assert in_place.candidates == copying.candidates and copying.findings == []


def test_every_call_gets_its_own_copy(X):
    before = X.copy()
    mech = _Vectorised(in_place=True)
    draw = draw_releases(mech, X, np.random.SeedSequence(1), 5)
    assert np.array_equal(X, before)
    assert draw.findings["mutates-input"].count == 5  # one vectorised call that wrote, for 5 releases
    one = draw_releases(dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), X, np.random.SeedSequence(1), 3)
    assert "mutates-input" not in one.findings and len(one.findings) == 0


# --------------------------------------------------------------------------- #
# Opaque randomness
# --------------------------------------------------------------------------- #
def test_the_generator_reveals_no_spawn_key(X, tmp_path):
    out = tmp_path / "seen.json"
    spy = dpaudit.mechanisms.get(f"{FAULTS}:Spy", epsilon=1.0, out=str(out))
    import json
    entropies = []
    for key in ((0, 1, 0), (1, 1)):  # a selection-like and a certification-like chunk seed
        draw_releases(spy, X, np.random.SeedSequence(5, spawn_key=key), 1)
        seen = json.loads(out.read_text())["seed_seq"]
        assert seen["spawn_key"] == []
        entropies.append(int(seen["entropy"]))
    assert entropies[0] != entropies[1] and min(entropies) > 2**64
    draw_releases(spy, X, np.random.SeedSequence(5, spawn_key=(0, 1, 0)), 1)  # fully determined by the seed
    assert int(json.loads(out.read_text())["seed_seq"]["entropy"]) == entropies[0]


def test_opaque_seeds_are_prefix_stable():
    a, b = OpaqueSeeds(np.random.SeedSequence(3)), OpaqueSeeds(np.random.SeedSequence(3))
    late = b.release_entropy(40)  # fills a longer cache first
    assert [a.release_entropy(i) for i in range(41)][-1] == late
    assert a.release_entropy(0) == b.release_entropy(0) != a.call_entropy(0)
    assert a.release(2).random() == b.release(2).random()


# --------------------------------------------------------------------------- #
# Faults: outcomes, environment failures, refusals
# --------------------------------------------------------------------------- #
def test_nan_rows_of_a_batch_are_releases_with_a_note(X):
    """NaN values are part of a points release: kept in place, counted by the (non-blocking) non-finite note."""
    draw = draw_releases(_Vectorised(nan_rows=(1, 3)), X, np.random.SeedSequence(0), 5)
    assert isinstance(draw.releases, ReleaseBatch) and draw.n == 5
    assert [bool(np.isnan(r.points).any()) for r in draw.releases] == [False, True, False, True, False]
    note = draw.findings["non-finite"]
    assert note.count == 2 and not note.blocking and draw.findings.calls == 5 and "nan" not in draw.findings


def test_a_failing_batch_is_redrawn_one_release_at_a_time(X):
    mech = _Vectorised(raise_batch=True)
    draw = draw_releases(mech, X, np.random.SeedSequence(0), 4)
    assert mech.calls == ["release_many"] + ["release"] * 4
    assert draw.n == 4 and isinstance(draw.releases, ReleaseBatch)
    assert "vectorised path broken" in draw.findings["raises"].error  # still a (blocking) finding


def test_a_refusal_propagates(X):
    with pytest.raises(InvalidInputError, match="public box"):
        draw_releases(_Vectorised(refuse=True), X, np.random.SeedSequence(0), 2, per_release=True)


def test_exits_and_memory_are_retried_then_dropped_then_the_draw_stops(X):
    for fn in ("sys_exit_0", "impossible_allocation"):
        with pytest.raises(MechanismBroken) as broken:
            draw_releases(_plugin(fn), X, np.random.SeedSequence(0), 10)
        crash = broken.value.findings["crash"]
        assert crash.count == 6 and crash.dropped == 3  # three releases, each tried twice


def test_release_once_raises_a_failure_and_records_the_finding(X):
    with recording() as outer:
        with recording() as inner:
            with pytest.raises(MechanismFailure) as failure:
                release_once(_plugin("wrong_shape"), X, np.random.default_rng(0))
        assert failure.value.finding["kind"] == "wrong-shape"
        assert inner["wrong-shape"].count == 1
        release_once(_plugin("in_place_ndlaplace", neighbours="metric"), X, np.random.default_rng(0))
    assert outer.kinds == ["wrong-shape", "mutates-input"]  # the inner context passed its findings on


def test_replay_finds_state_and_global_randomness(X):
    seed = np.random.SeedSequence(4)
    for fn, expected in (("honest", []), ("stateful", ["nondeterministic"]), ("global_random", ["nondeterministic"])):
        mech = _plugin(fn)
        first = draw_releases(mech, X, seed, 3, per_release=True)
        draw_releases(mech, X, np.random.SeedSequence(5), 10)
        assert replay_findings(mech, X, seed, first).kinds == expected


# --------------------------------------------------------------------------- #
# The estimator with each fault (in this process)
# --------------------------------------------------------------------------- #
def _estimate(mech, X, neighbours=None):
    claim = dataclasses.replace(mech.claim, neighbours=neighbours) if neighbours else None
    return estimate_epsilon(mech, X, claim, budget=Budget(samples=300, selection_samples=80),
                            search=SearchSpace(max_pairs=1), run=RunSettings(progress=False), seed=2)


@pytest.mark.parametrize("fn, kind", [("raises_on_call_5", "raises"), ("stateful", "nondeterministic"),
                                      ("global_random", "nondeterministic")])
def test_estimator_counts_outcome_faults_and_is_inconclusive(X, fn, kind):
    # One column under a metric claim: the plug-ins' per-coordinate Laplace is then exactly ε-metric-private
    # (under add-remove its n released points would give a record away), so only the fault decides.
    est = _estimate(_plugin(fn), X[:, :1], neighbours="metric")
    assert est.verdict == "inconclusive" and [f["kind"] for f in est.findings] == [kind]
    finding = est.findings[0]
    # first releases; the pair's screening (within its first round of 80 per side) and the coupling check (D
    # once more on 2 streams); certification (2 × 300, or Poisson(300) each); replay
    requested = est.counts["requested"]
    assert finding["calls"] == 3 + 2 * 80 + 2 + sum(requested) + 3
    assert 0 < finding["share"] <= 1


@pytest.mark.parametrize("fn", ["sys_exit_0", "impossible_allocation"])
def test_estimator_stops_inconclusive_when_the_code_cannot_run(X, fn):
    est = _estimate(_plugin(fn), X)
    assert est.verdict == "inconclusive" and est.epsilon_lower_bound == 0.0
    assert [f["kind"] for f in est.findings] == ["crash"] and "No bound was certified" in est.guarantee


def test_estimator_refuses_code_that_never_produces_a_release(X):
    with pytest.raises(NoUsableRelease, match="wrong-shape") as err:
        _estimate(_plugin("returns_garbage"), X)
    assert err.value.findings["wrong-shape"].count == 3


def test_a_violation_stays_a_violation_with_failures():
    """A noiseless count that also fails now and then: the certified violation stands."""
    def leaky(X, epsilon, rng):
        if rng.random() < 0.05:
            raise RuntimeError("flaky")
        return np.array([float(len(X))])
    from dpaudit.mechanisms.plugins import FunctionMechanism
    est = _estimate(FunctionMechanism(leaky, epsilon=1.0, output="vector"), np.arange(20.0).reshape(10, 2))
    assert est.verdict == "violation" and [f["kind"] for f in est.findings] == ["raises"]


def test_settle_verdict_rule():
    notes, faults = Findings(), Findings()
    notes.record("mutates-input", "wrote")
    faults.record("timeout", "slow", dropped=1)
    assert settle_verdict("no violation found", notes) == "no violation found"
    assert settle_verdict("no violation found", faults) == "inconclusive"
    assert settle_verdict("violation", faults) == "violation"
    assert settle_verdict("no violation found", [{"kind": "crash"}]) == "inconclusive"
    merged = Findings.merged([notes, faults])
    assert merged.kinds == ["mutates-input", "timeout"] and [f.kind for f in merged.blocking] == ["timeout"]
