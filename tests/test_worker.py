"""The worker proxy: audited code in its own process, under a timeout, in a clean and neutral environment."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.execution import (
    MechanismBroken,
    MechanismFailure,
    NoUsableRelease,
    OpaqueSeeds,
    WorkerMechanism,
    draw_releases,
)
from dpaudit.execution.process import MAIN, scrubbed_environment
from dpaudit.mechanisms.base import Failed, InvalidInputError

PLUGINS = Path(__file__).parent / "plugins"
PLUGIN = PLUGINS / "misbehaving.py"
FAULTS = PLUGINS / "faults.py"


@pytest.fixture(scope="module")
def plugin() -> Path:
    return PLUGIN


@pytest.fixture
def X() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(25, 2))


def _small_estimate(mech, X, neighbours=None):
    claim = dataclasses.replace(mech.claim, neighbours=neighbours) if neighbours else None
    return estimate_epsilon(mech, X, claim, budget=Budget(samples=200, selection_samples=60),
                            search=SearchSpace(max_pairs=1), run=RunSettings(progress=False), seed=1)


def test_good_plugin_is_reproducible_and_batching_does_not_change_numbers(plugin, X):
    mech = WorkerMechanism(f"{plugin}:good", epsilon=1.0, timeout=30)
    one = mech.release(X, np.random.default_rng(3)).points
    assert one.shape == X.shape and not np.allclose(one, X)
    assert np.array_equal(one, mech.release(X, np.random.default_rng(3)).points)
    mech._batch = 1
    a = mech.release_many(X, np.random.default_rng(4), 6).array
    mech._batch = 4
    b = mech.release_many(X, np.random.default_rng(4), 6).array
    assert a.shape == (6, 25, 2) and np.array_equal(a, b)
    assert mech.findings == [] and mech.claim.epsilon == 1.0
    mech.close()


@pytest.mark.parametrize("fn, kind, text", [
    ("raises", "raises", "boom from the plug-in"),
    ("shape", "wrong-shape", "shape (25, 1)"),
])
def test_a_failed_call_is_an_outcome_and_a_finding(plugin, X, fn, kind, text):
    mech = WorkerMechanism(f"{plugin}:{fn}", epsilon=1.0, timeout=30)
    mech.part = "ε estimation"
    with pytest.raises(MechanismFailure) as failure:  # one release needed: no usable one
        mech.release(X, np.random.default_rng(0))
    assert failure.value.finding["kind"] == kind
    assert len(mech.findings) == 1
    finding = mech.findings[0]
    assert finding["kind"] == kind and text in finding["error"] and finding["part"] == "ε estimation"
    batch = mech.release_many(X, np.random.default_rng(0), 3)  # a draw: Failed in each release's place
    assert len(batch) == 3 and all(isinstance(r, Failed) and r.reason == kind for r in batch)
    assert len(mech.findings) == 1 and mech.findings[0]["count"] == 4 and mech.findings[0]["calls"] == 4
    mech.close()


def test_nan_values_are_a_release_and_a_note(plugin, X):
    """NaN in a points release is part of it (read as "no answer" by the estimator's features), noted once per
    release and never blocking."""
    mech = WorkerMechanism(f"{plugin}:nan", epsilon=1.0, timeout=30)
    rel = mech.release(X, np.random.default_rng(0))
    assert np.isnan(rel.points).all()
    batch = mech.release_many(X, np.random.default_rng(0), 3)
    assert len(batch) == 3 and not any(isinstance(r, Failed) for r in batch)
    (finding,) = mech.findings
    assert finding["kind"] == "non-finite" and finding["count"] == 4
    mech.close()


def test_a_dying_worker_is_retried_once_then_dropped(plugin, X):
    mech = WorkerMechanism(f"{plugin}:dies", epsilon=1.0, timeout=30)
    with pytest.raises(MechanismFailure, match="exit code 3"):
        mech.release(X, np.random.default_rng(0))
    (finding,) = mech.findings
    assert finding["kind"] == "crash" and finding["count"] == 2 and finding["dropped"] == 1  # tried, retried
    with pytest.raises(MechanismBroken) as broken:  # three releases dropped in a row: the draw stops
        mech.release_many(X, np.random.default_rng(0), 5)
    assert broken.value.findings["crash"].dropped == 3


def test_hang_times_out_once_per_part_and_the_worker_is_replaced(plugin, X):
    """Code that never answers: broken after one timeout (no retry), not called again in the part."""
    mech = WorkerMechanism(f"{plugin}:hangs", epsilon=1.0, timeout=0.5)
    t0 = time.perf_counter()
    with pytest.raises(MechanismBroken, match="never answered"):
        mech.release(X, np.random.default_rng(0))
    assert 0.5 <= time.perf_counter() - t0 < 5  # one 0.5 s timeout plus a process start-up
    assert mech.findings[0]["kind"] == "timeout" and mech.findings[0]["dropped"] == 1
    assert mech.lanes == []  # the hung worker was killed
    started = mech._lanes.started
    t0 = time.perf_counter()
    with pytest.raises(MechanismBroken, match="not called again"):  # the same part: nothing is called
        mech.release_many(X, np.random.default_rng(0), 5)
    assert time.perf_counter() - t0 < 0.2 and mech._lanes.started == started
    mech.part = "another part"  # a new part gets one timeout of its own
    with pytest.raises(MechanismBroken):
        mech.release(X, np.random.default_rng(0))
    assert mech._lanes.started == started + 1
    assert [(f["part"], f["dropped"]) for f in mech.findings] == [("release", 1), ("another part", 1)]
    mech.close()


def test_mechanism_class_states_its_own_claim(plugin, X):
    mech = WorkerMechanism(f"{plugin}:Counter", epsilon=0.5, output="vector", timeout=30)
    assert mech.name == "counter" and mech.claim.epsilon == 0.5
    assert mech.release(X, np.random.default_rng(0)).kind == "vector"


def test_registered_mechanism_gives_the_in_process_numbers(X):
    """Same seed ⇒ same releases in the worker as in this process (one release per call; one vectorised batch)."""
    import dpaudit.mechanisms
    local = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    mech = WorkerMechanism("ndlaplace", epsilon=1.0, timeout=30)
    assert mech.claim.neighbours == "metric" and mech.vectorised
    seed = np.random.SeedSequence(9)
    for per_release in (True, False):
        here = draw_releases(local, X, seed, 7, per_release=per_release)
        there = draw_releases(mech, X, seed, 7, per_release=per_release)
        assert np.array_equal(here.releases.array, there.releases.array)
    mech.close()


def test_vectorised_mechanism_runs_in_fixed_batches(X):
    """ndlaplace has its own release_many: batch b of VECTOR_BATCH is one vectorised call seeded by call entropy b."""
    import dpaudit.mechanisms
    mech = WorkerMechanism("ndlaplace", epsilon=1.0, timeout=30)
    n = mech.VECTOR_BATCH + 10
    seed = np.random.SeedSequence(2)
    batch = draw_releases(mech, X, seed, n).releases
    assert batch.array.shape == (n, 25, 2)
    second = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0).release_many(X, OpaqueSeeds(seed).call(1), 10)
    assert np.array_equal(batch.array[mech.VECTOR_BATCH:], second.array)
    assert np.array_equal(batch.array, draw_releases(mech, X, seed, n).releases.array)
    mech.close()


def test_release_many_may_return_a_list(X):
    mech = WorkerMechanism(f"{FAULTS}:ListBatches", epsilon=1.0, output="vector", timeout=30)
    draw = draw_releases(mech, X, np.random.SeedSequence(0), 5)
    mech.close()
    assert mech.vectorised and draw.n == 5 and len(draw.findings) == 0
    assert draw.releases.array.shape == (5, 1)


def test_load_errors_are_user_errors(plugin):
    with pytest.raises(InvalidInputError, match="no_such"):
        WorkerMechanism(f"{plugin}:no_such", epsilon=1.0, timeout=30)
    with pytest.raises(InvalidInputError, match="cannot start"):
        WorkerMechanism(f"{plugin}:good", epsilon=1.0, python="/nonexistent/python", timeout=30)
    with pytest.raises(InvalidInputError, match="memory_limit"):
        WorkerMechanism(f"{plugin}:good", epsilon=1.0, memory_limit=0)


# --------------------------------------------------------------------------- #
# Every fault through estimate_epsilon with the worker proxy
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("fn, kind", [("exits", "crash"), ("sys_exit_0", "crash"), ("segfault", "crash"),
                                      ("hangs", "timeout"), ("huge_allocation", "crash")])
def test_environment_faults_make_the_estimate_inconclusive(X, fn, kind):
    mech = WorkerMechanism(f"{FAULTS}:{fn}", epsilon=1.0, timeout=0.5, memory_limit=256 << 20)
    est = _small_estimate(mech, X)
    mech.close()
    assert est.verdict == "inconclusive" and est.epsilon_lower_bound == 0.0
    (finding,) = est.findings
    # a hang costs one timeout (the code never answered); a crash is retried, then dropped, three times
    assert finding["kind"] == kind and finding["dropped"] == (1 if kind == "timeout" else 3) and finding["blocking"]
    if fn == "huge_allocation":
        assert "memory" in finding["error"]
    if fn == "segfault":
        assert "SIGSEGV" in finding["error"]


@pytest.mark.parametrize("fn, kind", [("raises_on_call_5", "raises"), ("stateful", "nondeterministic"),
                                      ("global_random", "nondeterministic")])
def test_outcome_faults_are_counted_and_block_a_clean_verdict(X, fn, kind):
    mech = WorkerMechanism(f"{FAULTS}:{fn}", epsilon=1.0, timeout=30)
    est = _small_estimate(mech, X[:, :1], neighbours="metric")  # exactly ε-metric-private in 1-D: the fault decides
    mech.close()
    assert est.verdict == "inconclusive"
    kinds = [f["kind"] for f in est.findings]
    # a call counter is state kept between calls: the replay in a fresh lane may catch it too
    assert kinds[0] == kind and set(kinds) <= {kind, "nondeterministic"}, kinds
    finding = est.findings[0]
    if kind == "raises":
        # one failure in each worker process that reached its fifth call (a lane per side of each pair)
        assert 1 <= finding["count"] <= 16 and "call 5 fails" in finding["error"]


def test_nan_in_some_releases_is_read_as_release_and_noted(X):
    """NaN in about one release in ten, by the seed alone: releases like any other (none dropped), a note that
    does not block the clean verdict an exactly ε-metric-private mechanism deserves."""
    mech = WorkerMechanism(f"{FAULTS}:nan_sometimes", epsilon=1.0, timeout=30)
    est = _small_estimate(mech, X[:, :1], neighbours="metric")
    mech.close()
    assert est.verdict == "no violation found"
    (note,) = [f for f in est.findings if f["kind"] == "non-finite"]
    assert 0.03 < note["share"] < 0.2 and not note["blocking"]
    assert est.counts["n_favoured"] + est.counts["n_other"] == sum(est.counts["requested"])


def test_in_place_plugin_in_the_worker_is_a_note_not_a_violation(X):
    before = X.copy()
    mech = WorkerMechanism(f"{FAULTS}:in_place_ndlaplace", epsilon=1.0, neighbours="metric", timeout=30)
    est = _small_estimate(mech, X)
    mech.close()
    assert est.verdict == "no violation found" and np.array_equal(X, before)
    assert [(f["kind"], f["share"], f["blocking"]) for f in est.findings] == [("mutates-input", 1.0, False)]


def test_an_oversized_release_is_not_sent(X):
    mech = WorkerMechanism(f"{FAULTS}:floods", epsilon=1.0, output="vector", timeout=30)
    with pytest.raises(MechanismFailure, match="bytes for 1 release"):
        mech.release(X, np.random.default_rng(0))
    mech.close()
    assert mech.findings[0]["kind"] == "wrong-shape"


def test_wrong_shape_every_time_is_no_usable_release(X):
    mech = WorkerMechanism(f"{FAULTS}:wrong_shape", epsilon=1.0, timeout=30)
    with pytest.raises(NoUsableRelease, match="wrong-shape") as err:
        _small_estimate(mech, X)
    mech.close()
    assert err.value.findings["wrong-shape"].count == 3


# --------------------------------------------------------------------------- #
# What the audited code can see
# --------------------------------------------------------------------------- #
def _spy(tmp_path: Path, X: np.ndarray, **kw) -> dict:
    out = tmp_path / "seen.json"
    mech = WorkerMechanism(f"{FAULTS}:Spy", epsilon=1.0, params={"out": str(out)}, timeout=30, **kw)
    draw_releases(mech, X, np.random.SeedSequence(0, spawn_key=(1, 0, 1)), 1, per_release=True)
    mech.close()
    return json.loads(out.read_text())


def test_worker_environment_is_scrubbed_and_neutral(tmp_path, X, monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("DPAUDIT_SECRET", "x")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    seen = _spy(tmp_path, X)
    allowed = {"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TEMP", "TMP", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"}
    env = {k: v for k, v in seen["env"].items() if k != "LC_CTYPE"}  # the interpreter may set LC_CTYPE itself
    assert set(env) <= allowed | {"LC_ALL"} and env["OMP_NUM_THREADS"] == "1" and env["LC_ALL"] == "C.UTF-8"
    assert not any(w in json.dumps(env).lower() for w in ("dpaudit", "pytest"))
    assert seen["argv"] == [""]
    here = str(MAIN.parent)
    assert here not in seen["path"] and str(MAIN.parent.parent.parent) not in seen["path"]
    assert not (seen["attacks"] or seen["dpaudit"] or seen["mechanisms"])  # nothing of the auditor loaded
    assert seen["seed_seq"]["spawn_key"] == []  # the generator does not say which sample this is
    assert int(seen["seed_seq"]["entropy"]) > 2**64


def test_scrubbed_environment_drops_the_auditors_traces():
    env = scrubbed_environment({"PATH": os.pathsep.join(["/usr/bin", "/opt/dpaudit/bin", sys.prefix + "/bin"]),
                                "HOME": "/home/u", "TMPDIR": "/tmp/pytest-of-u", "PYTHONPATH": "/src",
                                "VIRTUAL_ENV": sys.prefix, "GITHUB_ACTIONS": "true", "LC_NUMERIC": "C"})
    expected_path = "/usr/bin" if sys.prefix != sys.base_prefix else os.pathsep.join(["/usr/bin", sys.prefix + "/bin"])
    one = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # unless set: lanes run side by side
    assert env == {"PATH": expected_path, "HOME": "/home/u", "LC_NUMERIC": "C", **one}
    assert scrubbed_environment({"OMP_NUM_THREADS": "4"})["OMP_NUM_THREADS"] == "4"  # the auditor's own choice kept


@pytest.fixture(scope="module")
def target_python(tmp_path_factory) -> Path:
    """A second interpreter (a venv of the base Python) whose only package is numpy, linked from here.

    dpaudit, scikit-learn and scipy are installed in this environment but not
    in that one, so anything resolved from here would be a leak.
    """
    import numpy
    root = tmp_path_factory.mktemp("target")
    subprocess.run([os.path.join(sys.base_prefix, "bin", "python3"), "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True)
    site = next((root / "venv" / "lib").glob("python3*/site-packages"))
    numpy_dir = Path(numpy.__file__).parent
    (site / "numpy").symlink_to(numpy_dir, target_is_directory=True)
    libs = numpy_dir.parent / "numpy.libs"
    if libs.is_dir():
        (site / "numpy.libs").symlink_to(libs, target_is_directory=True)
    return root / "venv" / "bin" / "python"


def test_python_option_resolves_from_the_target_interpreter(tmp_path, X, target_python):
    seen = _spy(tmp_path, X, python=str(target_python))
    venv = str(target_python.parent.parent)
    assert seen["executable"].startswith(venv)
    assert seen["numpy"].startswith(venv)  # the target's numpy, not this environment's
    assert seen["sklearn"].startswith("ImportError")  # this environment's site-packages are not on the path
    assert not any(p.startswith(sys.prefix + os.sep) for p in seen["path"] if sys.prefix != sys.base_prefix)


def test_python_option_registered_names_find_only_the_mechanisms_package(target_python):
    """A registered name imports dpaudit's mechanisms package, whose own dependencies must come from the target."""
    with pytest.raises(InvalidInputError, match="No module named '(scipy|sklearn)'"):
        WorkerMechanism("ndlaplace", epsilon=1.0, python=str(target_python), timeout=30)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux-only")
def test_worker_dies_with_the_auditor_even_inside_c_code(tmp_path):
    """A worker stuck in a regular expression (C code holding the GIL) is killed when its auditor is."""
    plugin = tmp_path / "stuck.py"
    plugin.write_text("import re\ndef stuck(X, epsilon, rng):\n    re.match(r'(a+)+$', 'a' * 64 + 'b')\n")
    script = textwrap.dedent(f"""
        import sys, threading, numpy as np
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from dpaudit.execution import WorkerMechanism
        mech = WorkerMechanism({str(plugin) + ':stuck'!r}, epsilon=1.0, timeout=600)
        mech._start(None)  # the shared lane's process (forked from the template on Linux)
        print(mech.lane_pids()[None], mech._lanes.template.pid if mech._lanes.template else "", flush=True)
        mech.release(np.zeros((3, 2)), np.random.default_rng(0))
    """)
    auditor = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in auditor.stdout.readline().split()]  # the lane's worker (and its template)
    time.sleep(1.0)  # the worker is now inside re.match
    auditor.kill()
    auditor.wait()
    for worker_pid in pids:
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                os.kill(worker_pid, 0)
            except ProcessLookupError:
                break
            try:
                with open(f"/proc/{worker_pid}/stat") as fh:  # a zombie waiting to be reaped is dead too
                    if fh.read().split(") ")[1].startswith("Z"):
                        break
            except FileNotFoundError:
                break
            time.sleep(0.1)
        else:
            os.kill(worker_pid, signal.SIGKILL)
            pytest.fail("the worker outlived its auditor")


@pytest.mark.slow
def test_python_option_runs_in_a_second_venv_with_numpy_only(tmp_path, plugin, X):
    """A fresh venv holding only numpy (installed with pip from the configured index)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "numpy"], check=True)
    probe = subprocess.run([str(py), "-c", "import sklearn"], capture_output=True)
    assert probe.returncode != 0  # the worker must not need dpaudit's heavy dependencies
    mech = WorkerMechanism(f"{plugin}:good", epsilon=1.0, python=str(py), timeout=60)
    rel = mech.release(X, np.random.default_rng(1))
    assert rel.points.shape == X.shape and mech.findings == []
    bad = WorkerMechanism(f"{plugin}:nan", epsilon=1.0, python=str(py), timeout=60)
    with pytest.raises(MechanismFailure):
        bad.release(X, np.random.default_rng(1))
    assert bad.findings[0]["kind"] == "nan"
    # The whole audit through the CLI, with the audited code in the second interpreter.
    from typer.testing import CliRunner

    from dpaudit.cli import app
    out = tmp_path / "audit"
    res = CliRunner().invoke(app, ["audit", "-m", f"{plugin}:good", "--eps", "1", "--python", str(py),
                                   "--samples", "200", "--attack", "none", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "results.json").read_text())
    assert data["mechanism"]["interpreter"] == str(py) and data["parts"]["epsilon"] == "ok"


@pytest.mark.slow
def test_dropped_releases_are_certified_on_the_actual_n(X):
    """A plug-in that hangs on about one release in 60: those are dropped, the rest certified."""
    mech = WorkerMechanism(f"{FAULTS}:hangs_sometimes", epsilon=1.0, timeout=0.5)
    est = _small_estimate(mech, X)
    mech.close()
    (finding,) = est.findings
    assert finding["kind"] == "timeout" and finding["dropped"] >= 1 and finding["count"] == 2 * finding["dropped"]
    assert est.verdict == "inconclusive"
    assert est.counts["n_favoured"] + est.counts["n_other"] < sum(est.counts["requested"])
    assert est.counts["statement"] == "two limits"  # drops: never the rate ratio (unknown thinning)


def test_code_that_answered_keeps_retry_then_drop_and_then_stops_for_the_part():
    """Answers on the data, hangs on smaller data: each release retried once, three drops, then that dataset is
    broken — the code still runs on the others (a construction that hangs it is that construction's finding)."""
    mech = WorkerMechanism(f"{PLUGINS / 'stateful.py'}:hangs_on_small_data", epsilon=1.0, timeout=0.3)
    big, small = np.zeros((25, 2)), np.zeros((10, 2))
    assert draw_releases(mech, big, np.random.SeedSequence(0), 2).n == 2  # answered in this part
    t0 = time.perf_counter()
    with pytest.raises(MechanismBroken, match="3 releases in a row") as broken:
        draw_releases(mech, small, np.random.SeedSequence(1), 10, lane="other side")
    assert 6 * 0.3 <= time.perf_counter() - t0 < 15  # three releases, each timed out twice
    assert broken.value.findings["timeout"].count == 6 and broken.value.findings["timeout"].dropped == 3
    assert broken.value.scope == "dataset"
    assert draw_releases(mech, big, np.random.SeedSequence(0), 2).n == 2  # the good data is still drawn
    mech.part = "next part"  # answered before: a first timeout in a new part is retried once, then broken
    with pytest.raises(MechanismBroken, match="since its last answer") as again:
        draw_releases(mech, small, np.random.SeedSequence(2), 3)
    assert again.value.findings["timeout"].count == 2
    mech.close()


def _release_or_broken(task, mech=None, X=None):
    """A chunk that, like an attack repeat, records a broken mechanism and goes on."""
    try:
        draw_releases(mech, X, task, 1)
        return "ok"
    except MechanismBroken:
        return "broken"


def test_copies_in_a_process_share_the_hang_budget(plugin, X):
    """Chunks pickled up front (joblib, Dask): in each process the first copy spends the timeout, the rest none."""
    import functools
    import pickle

    from dpaudit.execution import map_seeds
    mech = WorkerMechanism(f"{plugin}:hangs", epsilon=1.0, timeout=1.0)
    first, second = pickle.loads(pickle.dumps(mech)), pickle.loads(pickle.dumps(mech))
    with pytest.raises(MechanismBroken):
        draw_releases(first, X, np.random.SeedSequence(0), 1)
    t0 = time.perf_counter()
    with pytest.raises(MechanismBroken, match="not called again"):
        draw_releases(second, X, np.random.SeedSequence(0), 1)
    assert time.perf_counter() - t0 < 0.2
    fresh = WorkerMechanism(f"{plugin}:hangs", epsilon=1.0, timeout=1.0)  # another mechanism: its own budget
    chunk = functools.partial(_release_or_broken, mech=fresh, X=X)
    t0 = time.perf_counter()
    results = map_seeds(chunk, [np.random.SeedSequence(i) for i in range(16)], n_jobs=2)
    assert results == ["broken"] * 16
    # about one timeout per process, in parallel (one per chunk would be 8 s a process), plus start-ups
    assert time.perf_counter() - t0 < 6.0
    mech.close()
    fresh.close()


def test_a_collected_mechanism_closes_its_lanes_in_the_reaper_thread(plugin, X, monkeypatch) -> None:
    """Garbage collection of a mechanism makes no system call in the collecting thread: under Dask that
    thread can be the worker's event loop inside its profiler's ``sys._current_frames()``, where CPython 3.11
    deadlocks on a finalizer that releases the GIL (python/cpython#106883).  The lanes are closed by the
    reaper thread instead, and their processes end."""
    import gc
    import threading
    import time

    from dpaudit.execution import lanes as lanes_module

    closed_in: list[str] = []
    real_close = lanes_module.Lanes.close

    def recording_close(self, *, graceful: bool = True) -> None:
        closed_in.append(threading.current_thread().name)
        real_close(self, graceful=graceful)

    monkeypatch.setattr(lanes_module.Lanes, "close", recording_close)
    mech = WorkerMechanism(f"{plugin}:good", epsilon=1.0, timeout=30)
    mech.release(X, np.random.default_rng(0))
    pids = list(mech.lane_pids().values())
    assert pids
    del mech
    gc.collect()
    deadline = time.monotonic() + 10
    while not closed_in and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed_in and set(closed_in) == {"dpaudit-lanes-reaper"}  # (other collected mechanisms too)
