"""Seeded chunked execution: same numbers in-process, on joblib workers and on Dask."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.execution import SchedulerError, child_seed, chunk_seeds, chunk_sizes, map_seeds
from dpaudit.mechanisms.base import InvalidInputError, PrivacyClaim

X4 = np.array([[0.1, 0.2], [-0.5, 0.3], [0.4, -0.6], [0.9, 0.8]])
FAULTS = Path(__file__).parent / "plugins" / "faults.py"


def _draw(seed: np.random.SeedSequence, n: int = 3) -> list[float]:
    return np.random.default_rng(seed).random(n).tolist()


def test_chunking_is_a_function_of_the_problem_only():
    assert chunk_sizes(10, 4) == [4, 4, 2]
    assert chunk_sizes(0, 4) == []
    root = np.random.SeedSequence(7)
    a = chunk_seeds(root, 3)
    b = chunk_seeds(root, 3)  # stateless: spawning twice gives the same children
    assert [_draw(s) for s in a] == [_draw(s) for s in b]
    assert _draw(child_seed(root, 0, 1)) != _draw(child_seed(root, 1, 0))


def test_map_seeds_same_for_one_and_two_workers():
    seeds = chunk_seeds(np.random.SeedSequence(3), 6)
    one = map_seeds(_draw, seeds, n_jobs=1)
    two = map_seeds(functools.partial(_draw, n=3), seeds, n_jobs=2)
    assert one == two and len(one) == 6


def test_bad_scheduler_is_a_clear_error(monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr("dpaudit.execution.backends.DASK_CONNECT_TIMEOUT", "1s")
    with pytest.raises(InvalidInputError, match="Dask scheduler"):
        map_seeds(_draw, chunk_seeds(np.random.SeedSequence(0), 1), scheduler="tcp://127.0.0.1:9")


def _local_cluster(distributed):
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                    dashboard_address=":0")


def test_dask_local_cluster_matches_joblib_and_one_worker():
    distributed = pytest.importorskip("dask.distributed")
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    kw = dict(budget=Budget(samples=4_000, selection_samples=1_000), search=SearchSpace(max_pairs=2), seed=5)
    one = estimate_epsilon(mech, X4, run=RunSettings(n_jobs=1, chunk_size=700), **kw)
    two = estimate_epsilon(mech, X4, run=RunSettings(n_jobs=2, chunk_size=700), **kw)
    # A plug-in that returns NaN for some seeds (part of its release, a note): the same findings on the cluster as
    # in one process.
    # One column and a metric claim: per-coordinate Laplace is then exactly ε-metric-private (its release
    # size, n points, would give it away under add-remove), so only the findings decide the verdict.
    faulty_kw = dict(claim=PrivacyClaim(1.0, 0.0, "metric"), budget=Budget(samples=600, selection_samples=150),
                     search=SearchSpace(max_pairs=1), seed=3)
    with _local_cluster(distributed) as cluster:
        dask = estimate_epsilon(mech, X4, run=RunSettings(scheduler=cluster.scheduler_address, chunk_size=700), **kw)
        faulty_dask = estimate_epsilon(_nan_sometimes(), X4[:, :1], run=RunSettings(
            scheduler=cluster.scheduler_address, chunk_size=100, progress=False), **faulty_kw)
        # A chunk that never finishes (a frozen worker): one clear error, the finished chunks kept.
        with pytest.raises(SchedulerError, match="no chunk finished") as stalled:
            map_seeds(_sleepy, chunk_seeds(np.random.SeedSequence(0), 4), scheduler=cluster.scheduler_address,
                      stall_timeout=1.0)
        assert set(stalled.value.partial_results) == {0, 1, 3}
    for other in (two, dask):
        _estimates_agree(other, one)
    # Faults that depend on the seed only are counted identically by 1 process, joblib and Dask.
    faulty_one = estimate_epsilon(_nan_sometimes(), X4[:, :1], run=RunSettings(n_jobs=1, chunk_size=100,
                                                                                  progress=False), **faulty_kw)
    faulty_two = estimate_epsilon(_nan_sometimes(), X4[:, :1], run=RunSettings(n_jobs=2, chunk_size=100,
                                                                                  progress=False), **faulty_kw)
    assert faulty_one.verdict == "no violation found" and faulty_one.findings[0]["kind"] == "non-finite"
    for other in (faulty_two, faulty_dask):
        _estimates_agree(other, faulty_one)


@pytest.mark.slow  # a Dask cluster of its own, with plug-in worker processes on it
def test_the_cli_on_a_dask_cluster_matches_one_process(tmp_path):
    """The CLI's --scheduler, with a function from a plug-in file that Dask workers cannot import (it travels by
    value) and that runs in worker processes of its own on each Dask worker: the same output as in one process.
    A cluster of its own, so the worker processes it leaves on the Dask workers meet no other test's chunks.

    It stalled in about one run in ten (a chunk never finished; a ``CommClosedError`` in the Dask log) while a
    collected mechanism's finalizer closed its lanes on the Dask worker's event loop, inside the profiler's
    ``sys._current_frames()``, where CPython 3.11 deadlocks on a finalizer that releases the GIL
    (python/cpython#106883); finalizers now hand lanes to a reaper thread (:mod:`dpaudit.execution.lanes`)
    and 46 repeated runs of this command showed no stall (2 in 29 had stalled before)."""
    distributed = pytest.importorskip("dask.distributed")
    from typer.testing import CliRunner

    from dpaudit.cli import app
    plugin = tmp_path / "count.py"
    plugin.write_text("import numpy as np\n"
                      "def noisy_count(X, epsilon, rng):\n"
                      "    return np.array([len(X) + rng.laplace(0.0, 1.0 / epsilon)])\n")
    args = ["estimate-eps", "--mechanism", f"{plugin}:noisy_count", "--output", "vector", "--eps", "1",
            "--samples", "3000", "--no-progress", "--force"]
    with _local_cluster(distributed) as cluster:
        cli_dask = CliRunner().invoke(app, [*args, "--scheduler", cluster.scheduler_address,
                                            "--out", str(tmp_path / "dask")])
    cli_local = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    assert cli_dask.exit_code == 0, cli_dask.output
    assert cli_dask.output.split("elapsed")[0] == cli_local.output.split("elapsed")[0]


# --------------------------------------------------------------------------- #
# Runs that cannot finish keep what was computed
# --------------------------------------------------------------------------- #
def _fails_at_three(seed: np.random.SeedSequence) -> int:
    if seed.spawn_key[-1] == 3:
        raise RuntimeError("chunk 3 fails")
    return int(seed.spawn_key[-1])


def _sleepy(seed: np.random.SeedSequence) -> int:
    import time
    if seed.spawn_key[-1] == 2:
        time.sleep(4.0)  # a frozen worker, as far as the caller can tell
    return int(seed.spawn_key[-1])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_failing_chunk_keeps_the_finished_ones(n_jobs):
    seeds = chunk_seeds(np.random.SeedSequence(0), 6)
    with pytest.raises(RuntimeError, match="chunk 3") as err:
        map_seeds(_fails_at_three, seeds, n_jobs=n_jobs)
    kept = err.value.partial_results
    if n_jobs == 1:
        assert kept == {0: 0, 1: 1, 2: 2}
    else:  # whatever had arrived when the failure did: never a wrong result, never chunk 3
        assert all(kept[i] == i for i in kept) and 3 not in kept


def _estimates_agree(a, b) -> None:
    assert a.epsilon_lower_bound == b.epsilon_lower_bound and a.verdict == b.verdict
    assert a.counts == b.counts and a.event == b.event and a.pair == b.pair and a.candidates == b.candidates
    assert a.findings == b.findings


def _nan_sometimes():
    return dpaudit.mechanisms.get(f"{FAULTS}:nan_sometimes", epsilon=1.0, output="points")


def _half_second(seed: np.random.SeedSequence) -> int:
    import time
    time.sleep(0.5)
    return int(seed.spawn_key[-1])


@pytest.mark.slow
def test_a_killed_scheduler_is_one_clear_error(capfd):
    """The scheduler dies mid-run: SchedulerError (one line), finished chunks kept, no Dask traceback printed."""
    pytest.importorskip("dask.distributed")
    import socket
    import subprocess
    import sys
    import threading
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--dashboard-address", ":0"], **quiet)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                               "--nworkers", "1", "--no-nanny"], **quiet)
    try:
        from dask.distributed import Client
        client = Client(address, timeout="30s")
        client.wait_for_workers(1, timeout=30)
        client.close()
        import cloudpickle
        cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test file
        threading.Timer(3.0, scheduler.kill).start()
        t0 = time.perf_counter()
        with pytest.raises(SchedulerError, match="lost the connection") as lost:
            map_seeds(_half_second, chunk_seeds(np.random.SeedSequence(0), 40), scheduler=address)
        assert time.perf_counter() - t0 < 30
        kept = lost.value.partial_results
        assert kept and all(kept[i] == i for i in kept) and len(kept) < 40
        assert len(str(lost.value).splitlines()) == 1
        assert "Traceback" not in capfd.readouterr().err
    finally:
        for proc in (worker, scheduler):
            proc.kill()
            proc.wait()
