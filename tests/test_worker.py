"""The worker protocol: audited code runs in a process under a timeout; misbehaviour becomes a finding."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dpaudit.worker import MechanismFailure, WorkerMechanism
from mechanisms.base import InvalidInputError

PLUGIN = Path(__file__).parent / "plugins" / "misbehaving.py"


@pytest.fixture(scope="module")
def plugin() -> Path:
    return PLUGIN


@pytest.fixture
def X() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(25, 2))


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
    ("nan", "nan", "NaN"),
    ("shape", "wrong-shape", "shape (25, 1)"),
    ("dies", "crash", "exit code 3"),
])
def test_misbehaviour_becomes_a_finding(plugin, X, fn, kind, text):
    mech = WorkerMechanism(f"{plugin}:{fn}", epsilon=1.0, timeout=30)
    mech.part = "ε estimation"
    with pytest.raises(MechanismFailure):
        mech.release(X, np.random.default_rng(0))
    assert len(mech.findings) == 1
    finding = mech.findings[0]
    assert finding["kind"] == kind and text in finding["error"] and finding["part"] == "ε estimation"
    with pytest.raises(MechanismFailure):  # the next call still answers (a fresh worker if it died)
        mech.release_many(X, np.random.default_rng(0), 3)


def test_hang_times_out_and_the_worker_is_replaced(plugin, X):
    mech = WorkerMechanism(f"{plugin}:hangs", epsilon=1.0, timeout=1.0)
    t0 = time.perf_counter()
    with pytest.raises(MechanismFailure):
        mech.release(X, np.random.default_rng(0))
    assert time.perf_counter() - t0 < 10  # 1 s timeout plus process teardown
    assert mech.findings[0]["kind"] == "timeout"
    assert mech._proc is None  # the hung worker was killed
    t0 = time.perf_counter()
    with pytest.raises(MechanismFailure):  # a fresh worker is started, and hangs in turn
        mech.release(X, np.random.default_rng(0))
    assert time.perf_counter() - t0 >= 1.0
    assert len(mech.findings) == 1  # the same finding is not listed twice


def test_mechanism_class_states_its_own_claim(plugin, X):
    mech = WorkerMechanism(f"{plugin}:Counter", epsilon=0.5, output="vector", timeout=30)
    assert mech.name == "counter" and mech.claim.epsilon == 0.5
    assert mech.release(X, np.random.default_rng(0)).kind == "vector"


def test_registered_mechanism_through_the_worker_matches_in_process(X):
    import mechanisms
    mech = WorkerMechanism("ndlaplace", epsilon=1.0, timeout=30)
    assert mech.claim.neighbours == "metric"
    # the worker seeds release i by SeedSequence(seed, spawn_key=(i,)) with seed drawn from rng
    seed = int(np.random.default_rng(9).integers(0, 2**63 - 1))
    local = mechanisms.get("ndlaplace", epsilon=1.0).release(
        X, np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))).points
    assert np.array_equal(mech.release(X, np.random.default_rng(9)).points, local)


def test_load_errors_are_user_errors(plugin):
    with pytest.raises(InvalidInputError, match="no_such"):
        WorkerMechanism(f"{plugin}:no_such", epsilon=1.0, timeout=30)
    with pytest.raises(InvalidInputError, match="cannot start"):
        WorkerMechanism(f"{plugin}:good", epsilon=1.0, python="/nonexistent/python", timeout=30)


@pytest.mark.slow
def test_python_option_runs_in_a_second_venv_with_numpy_only(tmp_path, plugin, X):
    """A fresh venv holding only numpy (copied from this environment's wheel cache / index)."""
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
    import json
    data = json.loads((out / "results.json").read_text())
    assert data["mechanism"]["interpreter"] == str(py) and data["parts"]["epsilon"] == "ok"


def test_vectorised_mechanism_runs_in_fixed_batches(X):
    """ndlaplace has its own release_many: batch b of VECTOR_BATCH is one vectorised call seeded by b·VECTOR_BATCH."""
    import mechanisms
    mech = WorkerMechanism("ndlaplace", epsilon=1.0, timeout=30)
    assert mech.vectorised
    n = mech.VECTOR_BATCH + 10
    batch = mech.release_many(X, np.random.default_rng(2), n)
    assert batch.array.shape == (n, 25, 2)
    seed = int(np.random.default_rng(2).integers(0, 2**63 - 1))
    local = mechanisms.get("ndlaplace", epsilon=1.0)
    second = local.release_many(X, np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(mech.VECTOR_BATCH,))), 10)
    assert np.array_equal(batch.array[mech.VECTOR_BATCH:], second.array)
    assert np.array_equal(batch.array, mech.release_many(X, np.random.default_rng(2), n).array)
    mech.close()
