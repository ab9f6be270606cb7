"""Seeded chunked execution: same numbers in-process, on joblib workers and on Dask."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import mechanisms
from attacks.epsilon import estimate_epsilon
from attacks.execution import child_seed, chunk_seeds, chunk_sizes, map_seeds
from mechanisms.base import InvalidInputError

X4 = np.array([[0.1, 0.2], [-0.5, 0.3], [0.4, -0.6], [0.9, 0.8]])


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
    monkeypatch.setattr("attacks.execution.backends.DASK_CONNECT_TIMEOUT", "1s")
    with pytest.raises(InvalidInputError, match="Dask scheduler"):
        map_seeds(_draw, chunk_seeds(np.random.SeedSequence(0), 1), scheduler="tcp://127.0.0.1:9")


def test_dask_local_cluster_matches_joblib_and_one_worker(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    mech = mechanisms.get("ndlaplace", epsilon=1.0)
    kw = dict(samples=4_000, selection_samples=1_000, seed=5, chunk_size=700, max_pairs=2)
    one = estimate_epsilon(mech, X4, n_jobs=1, **kw)
    two = estimate_epsilon(mech, X4, n_jobs=2, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster:
        dask = estimate_epsilon(mech, X4, scheduler=cluster.scheduler_address, **kw)
        # The CLI's --scheduler goes through the same path, here with a function from a
        # plug-in file that Dask workers cannot import (it travels by value).
        from typer.testing import CliRunner
        from dpaudit.cli import app
        plugin = tmp_path / "count.py"
        plugin.write_text("import numpy as np\n"
                          "def noisy_count(X, epsilon, rng):\n"
                          "    return np.array([len(X) + rng.laplace(0.0, 1.0 / epsilon)])\n")
        args = ["estimate-eps", "--mechanism", f"{plugin}:noisy_count", "--output", "vector", "--eps", "1",
                "--samples", "3000", "--no-progress"]
        cli_dask = CliRunner().invoke(app, [*args, "--scheduler", cluster.scheduler_address])
    cli_local = CliRunner().invoke(app, args)
    assert cli_dask.exit_code == 0, cli_dask.output
    assert cli_dask.output.split("elapsed")[0] == cli_local.output.split("elapsed")[0]
    for other in (two, dask):
        assert other.epsilon_lower_bound == one.epsilon_lower_bound
        assert other.counts == one.counts and other.event == one.event and other.pair == one.pair
        assert other.candidates == one.candidates
