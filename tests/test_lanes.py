"""Lanes: each lane's worker process has never received another lane's data; state does not cross lanes."""

from __future__ import annotations

import pickle
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from dpaudit.execution import ReplayProbe, WorkerMechanism, close_lanes, draw_releases
from dpaudit.execution.findings import Findings

PLUGINS = Path(__file__).parent / "plugins"
STATEFUL = PLUGINS / "stateful.py"


@pytest.fixture
def D() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(20, 2))


def _mech(fn: str, **kw) -> WorkerMechanism:
    return WorkerMechanism(f"{STATEFUL}:{fn}", epsilon=1.0, output="vector", timeout=30, **kw)


def _who(mech: WorkerMechanism, X: np.ndarray, lane, n: int = 1) -> np.ndarray:
    """[pid, calls served by that process, crc of its first input] of each of ``n`` releases in ``lane``."""
    return draw_releases(mech, X, np.random.SeedSequence(0), n, lane=lane).releases.array


def _crc(X: np.ndarray) -> float:
    return float(zlib.crc32(np.ascontiguousarray(X, dtype=np.float64).tobytes()))


def test_each_lane_has_its_own_process(D):
    mech = _mech("whoami")
    a, b, shared = _who(mech, D, "a"), _who(mech, D[:-1], "b"), _who(mech, D, None)
    assert len({a[0, 0], b[0, 0], shared[0, 0]}) == 3  # three processes
    assert a[0, 2] == _crc(D) and b[0, 2] == _crc(D[:-1])  # each saw its own data first
    again = _who(mech, D, "a", 3)
    assert (again[:, 0] == a[0, 0]).all() and again[:, 1].tolist() == [2, 3, 4]  # the lane's process is kept
    assert set(mech.lanes) == {"a", "b", None} and len(set(mech.lane_pids().values())) == 3
    mech.close()


def test_state_does_not_cross_lanes(D):
    """The plug-in that remembers its first input: with a lane per side each side releases its own sums."""
    D_prime = D[:-1]
    mech = _mech("remembers_first")
    seed = np.random.SeedSequence(1)
    shared = [draw_releases(mech, data, seed, 5).releases.array for data in (D, D_prime)]
    assert np.array_equal(shared[0], shared[1])  # one process for both sides: the leak is hidden
    laned = [draw_releases(mech, data, seed, 5, lane=(0, side)).releases.array
             for side, data in enumerate((D, D_prime))]
    assert np.allclose(laned[0], D.sum(axis=0)) and np.allclose(laned[1], D_prime.sum(axis=0))
    assert not np.array_equal(laned[0][0], laned[1][0])  # D and D' differ, as they should
    mech.close()


def test_closed_and_evicted_lanes_restart_fresh(D):
    mech = _mech("whoami", max_lanes=2)
    first = _who(mech, D, "a")[0]
    mech.close_lane("a")
    again = _who(mech, D[:-2], "a")[0]
    assert again[0] != first[0] and again[1] == 1 and again[2] == _crc(D[:-2])  # a new process, nothing seen
    b, c = _who(mech, D, "b")[0], _who(mech, D, "c")[0]  # a third lane evicts the least recently used ("a")
    assert mech.lanes == ["b", "c"]
    evicted = _who(mech, D[:-3], "a")[0]
    assert evicted[1] == 1 and evicted[2] == _crc(D[:-3])
    assert evicted[0] not in (again[0], b[0], c[0])  # never another lane's process
    assert close_lanes(mech, keep=["c"]) == 1 and mech.lanes == ["c"]  # "b" was evicted by "a" in turn
    assert close_lanes(object()) == 0  # code in this process has no lanes
    mech.close()


def test_a_pickled_copy_starts_its_own_processes(D):
    mech = _mech("whoami")
    mine = _who(mech, D, "a")[0]
    copy = pickle.loads(pickle.dumps(mech))
    theirs = _who(copy, D, "a")[0]
    assert theirs[0] != mine[0] and theirs[1] == 1
    assert _who(mech, D, "a")[0][1] == 2  # the original's lane is untouched
    other = pickle.loads(pickle.dumps(mech))  # another chunk's copy in this process
    assert _who(other, D, "a")[0][0] not in (mine[0], theirs[0])  # a process of its own for the lane ...
    if mech._lanes.forks:  # ... forked from the one template the copies share (a chunk costs a fork, not a load)
        assert other._lanes.template is copy._lanes.template is not mech._lanes.template
    copy.close()
    assert _who(other, D, "b")[0][1] == 1  # closing one copy leaves the shared template to the others
    other.close()
    mech.close()


def test_the_template_never_receives_data(D):
    mech = _mech("whoami")
    if mech._lanes.template is None:
        pytest.skip("no fork server on this platform")
    reply, _ = mech._lanes.template.call({"op": "release", "x_id": "x", "vectorised": False},
                                         {"X": D, "entropy": np.zeros((1, 4), np.uint32)}, 10)
    assert not reply["ok"] and "template never runs" in reply["error"]
    mech.close()


def test_code_that_starts_threads_gets_a_fresh_interpreter_per_lane(D):
    mech = WorkerMechanism(f"{PLUGINS / 'threaded.py'}:whoami", epsilon=1.0, output="vector", timeout=60)
    assert not mech._lanes.forks  # a thread at import: forking it would copy one thread of two
    a, b = (draw_releases(mech, data, np.random.SeedSequence(0), 2, lane=lane).releases.array
            for lane, data in (("a", D), ("b", D[:-1])))
    assert a[0, 0] != b[0, 0] and a[0, 1] == pytest.approx(D.sum()) and b[0, 1] == pytest.approx(D[:-1].sum())
    mech.close()


def test_the_replay_probe_catches_code_that_remembers_its_first_input(D):
    mech = _mech("remembers_first")
    probe = ReplayProbe(mech, D, np.random.SeedSequence(2))
    draw_releases(mech, D[:-1], np.random.SeedSequence(3), 10, lane=(0, 1))  # the run, in lanes of its own
    findings: Findings = probe.finish()
    assert "nondeterministic" in findings and findings["nondeterministic"].count == 3
    mech.close()


def test_lanes_are_ignored_in_process(D):
    import dpaudit.mechanisms
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    seed = np.random.SeedSequence(4)
    a = draw_releases(mech, D, seed, 5, lane="a").releases.array
    assert np.array_equal(a, draw_releases(mech, D, seed, 5).releases.array)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux-only")
def test_a_lane_starts_much_faster_than_a_worker(D):
    """Forking a loaded template costs milliseconds; a new interpreter costs the whole import."""
    import time
    mech = _mech("whoami")
    t0 = time.perf_counter()
    for lane in range(5):
        _who(mech, D, lane)
    per_lane = (time.perf_counter() - t0) / 5
    assert per_lane < 0.5 and mech._lanes.started == 5
    mech.close()
