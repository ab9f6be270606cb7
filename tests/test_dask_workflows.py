"""``sweep`` and ``audit`` on Dask: the same numbers and findings as in one process and on joblib;
a frozen worker or a lost scheduler is one ``Error:`` line, exit 2, with the finished work kept.

Needs the ``dask`` extra (CI installs it); skipped without it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

distributed = pytest.importorskip("dask.distributed")

FAULTS_PY = Path(__file__).parent / "plugins" / "faults.py"
SLOW_PY = "import time\nimport numpy as np\ndef slow(X, epsilon, rng):\n    time.sleep(0.4)\n" \
          "    return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)\n"


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as c:
        yield c


def _sweep(tmp_path: Path, name: str, *extra: str, mechanism: str = "ndlaplace", seed: int = 4) -> dict:
    out = tmp_path / name
    res = CliRunner().invoke(app, ["sweep", "-m", mechanism, "--eps", "0.5,2", "--repeats", "3", "--records", "40",
                                   "--clusterers", "kmeans", "--seed", str(seed), "--out", str(out), "--no-progress",
                                   *extra])
    assert res.exit_code in (0, 3), res.output
    return json.loads((out / "results.json").read_text())


def _numbers(results: dict) -> list:
    return [(c["eps_index"], c["repeat"], c["metrics"], c.get("error"), c["calls"]) for c in results["sweep"]["cells"]]


def test_sweep_same_numbers_in_one_process_and_on_dask(cluster, tmp_path: Path):
    """(joblib against one process: tests/test_sweep.py::test_parallel_equals_serial.)"""
    one = _sweep(tmp_path, "one")
    dask = _sweep(tmp_path, "dask", "--scheduler", cluster.scheduler_address)
    assert _numbers(one) == _numbers(dask)
    assert one["sweep"]["summary"] == dask["sweep"]["summary"] and one["complete_and_clean"]


@pytest.mark.slow
def test_plugin_sweep_same_numbers_and_findings_on_joblib_and_dask(cluster, tmp_path: Path):
    """A plug-in (a worker process on each joblib / Dask worker) with seed-dependent NaN: the same cells."""
    faulty = f"{FAULTS_PY}:nan_sometimes"
    kw = {"mechanism": faulty, "seed": 5}  # seed 5: one of the six releases has a NaN
    local = _sweep(tmp_path, "faulty-one", **kw)
    joblib = _sweep(tmp_path, "faulty-joblib", "--n-jobs", "2", **kw)
    remote = _sweep(tmp_path, "faulty-dask", "--scheduler", cluster.scheduler_address, **kw)
    assert _numbers(local) == _numbers(joblib) == _numbers(remote)
    assert any(c.get("error") for c in local["sweep"]["cells"])  # the fault did happen
    cells = [f for f in local["findings"] if f["part"] != "release calls"]  # calls differ: the probe's replay
    assert cells == [f for f in remote["findings"] if f["part"] != "release calls"]


def test_audit_same_numbers_in_one_process_and_on_dask(cluster, tmp_path: Path):
    def run(name: str, *extra: str) -> dict:
        out = tmp_path / name
        res = CliRunner().invoke(app, ["audit", "-m", "laplace", "--eps", "1", "--records", "100", "--samples", "300",
                                       "--attack", "yeom", "--repeats", "2", "--out", str(out),
                                       "--no-progress", *extra])
        assert res.exit_code == 0, res.output
        return json.loads((out / "results.json").read_text())

    one = run("one")
    dask = run("dask", "--scheduler", cluster.scheduler_address)
    assert one["verdict_table"] == dask["verdict_table"] and one["verdict"] == dask["verdict"]
    assert one["epsilon_estimate"]["epsilon_lower_bound"] == dask["epsilon_estimate"]["epsilon_lower_bound"]
    assert one["attacks"] == dask["attacks"]


@pytest.mark.slow
def test_frozen_dask_worker_is_one_error_line_and_keeps_finished_cells(tmp_path: Path, monkeypatch):
    """One of two workers stops (SIGSTOP) once the first cell is stored: its cell never finishes; the
    sweep stops with one error line after the stall timeout, and every finished cell is kept."""
    import threading

    monkeypatch.setattr("dpaudit.execution.backends.DASK_STALL_TIMEOUT", 8.0)
    plugin = tmp_path / "slow.py"
    plugin.write_text(SLOW_PY)
    out = tmp_path / "run"
    result: dict = {}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as c, distributed.Client(c) as client:
        pids = sorted(client.run(os.getpid).values())
        args = ["sweep", "-m", f"{plugin}:slow", "--eps", "1,2", "--repeats", "8", "--records", "20",
                "--clusterers", "none", "--out", str(out), "--no-progress", "--scheduler", c.scheduler_address]
        run = threading.Thread(target=lambda: result.setdefault("res", CliRunner().invoke(app, args)))
        run.start()
        cells = out / "cells.jsonl"
        deadline = time.time() + 120
        while time.time() < deadline and not (cells.is_file() and cells.read_text().count("\n") >= 2):
            time.sleep(0.1)
        os.kill(pids[0], signal.SIGSTOP)
        try:
            run.join(timeout=240)
        finally:
            os.kill(pids[0], signal.SIGCONT)
    res = result["res"]
    assert res.exit_code == 2, res.output
    errors = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "no chunk finished" in errors[0] and "Traceback" not in res.output
    data = json.loads((out / "results.json").read_text())
    assert data["status"] == "interrupted" and 2 <= data["sweep"]["cells_done"] < 16
    assert len(cells.read_text().splitlines()) == data["sweep"]["cells_done"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["sweep", "audit"])
def test_killed_scheduler_is_one_error_line_and_keeps_partial_results(tmp_path: Path, command: str):
    """The scheduler dies mid-run: exit 2, one Error: line, the finished cells / parts on disk."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--dashboard-address", ":0"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1",
                               "--nthreads", "1", "--dashboard-address", ":0"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    plugin = tmp_path / "slow.py"
    plugin.write_text(SLOW_PY)
    out = tmp_path / "run"
    if command == "sweep":
        args = ["sweep", "-m", f"{plugin}:slow", "--eps", "1,2,3", "--repeats", "10", "--records", "20",
                "--clusterers", "none"]
    else:
        args = ["audit", "-m", f"{plugin}:slow", "--eps", "1", "--records", "100", "--samples", "2000",
                "--attack", "none"]
    try:
        time.sleep(3.0)  # the scheduler and the worker come up
        proc = subprocess.Popen([sys.executable, "-m", "dpaudit", *args, "--out", str(out), "--no-progress",
                                 "--scheduler", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        marker = out / ("cells.jsonl" if command == "sweep" else "results.json")
        while time.time() < deadline and not (marker.is_file() and marker.stat().st_size):
            time.sleep(0.5)
        time.sleep(2.0)
        scheduler.kill()
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        for p in (worker, scheduler):
            p.kill()
            p.wait(timeout=30)
    assert proc.returncode == 2, (stdout, stderr)
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Dask scheduler" in errors[0], stderr
    assert "Traceback" not in stderr
    data = json.loads((out / "results.json").read_text())
    assert data["status"] == "interrupted"
    if command == "sweep":
        assert 0 < data["sweep"]["cells_done"] < 30
    else:
        assert data["parts"]["smoke"] == "ok" and "epsilon" not in data["parts"]
