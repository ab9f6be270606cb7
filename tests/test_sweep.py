"""Sweeps: resumable, order-independent numbers, partial reports, no records in any output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit.attacks.epsilon import Budget
from dpaudit.cli import app
from dpaudit.data.datasets import Dataset
from dpaudit.options import AttackOptions, TargetOptions
from dpaudit.sweep.config import SweepConfig
from dpaudit.sweep.run import run_sweep
from dpaudit.sweep.store import CellStore

DISTINCT = 123.456789


def _cfg(mechanism: str = "ndlaplace", params: dict | None = None, attacks: tuple[str, ...] = (),
         samples: int | None = None, **kw) -> SweepConfig:
    base = dict(epsilons=(0.5, 2.0, 8.0), repeats=3, clusterers=("kmeans", "dbscan"), seed=11)
    base.update(kw)
    return SweepConfig(target=TargetOptions(mechanism=mechanism, params=params or {}),
                       attack=AttackOptions(attacks=attacks), budget=Budget(samples=samples), **base)


def _data() -> Dataset:
    from sklearn.datasets import make_blobs
    X, y = make_blobs(40, centers=3, n_features=2, cluster_std=0.5, random_state=3)
    return Dataset("test-blobs", X, y, (np.full(2, -15.0), np.full(2, 15.0)), "test blobs")


def _final(results: dict) -> list:
    return [(r["epsilon"], r["n"], r["metrics"]) for r in results["sweep"]["summary"]]


class _Kill(KeyboardInterrupt):
    pass


def _stop_after(k: int):
    seen = []

    def cb(cell):
        seen.append(cell)
        if len(seen) >= k:
            raise _Kill()
    return cb


def test_resume_after_kill_gives_the_same_numbers(tmp_path: Path):
    cfg, data = _cfg(), _data()
    full = run_sweep(cfg, data, tmp_path / "full", progress=False, formats=("json",))
    assert full["status"] == "complete" and full["sweep"]["cells_done"] == 9

    run = tmp_path / "killed"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cfg, data, run, progress=False, on_cell=_stop_after(4), formats=("json", "md"))
    partial = json.loads((run / "results.json").read_text())
    assert partial["status"] == "interrupted" and partial["sweep"]["cells_done"] == 4
    assert (run / "report.md").is_file()
    with pytest.raises(Exception, match="--resume"):
        run_sweep(cfg, data, run, progress=False)
    ran = []
    resumed = run_sweep(cfg, data, run, resume=True, progress=False, on_cell=ran.append, formats=("json",))
    assert len(ran) == 5  # only the missing cells were run
    assert _final(resumed) == _final(full)


def test_torn_last_line_is_redone(tmp_path: Path):
    cfg, data = _cfg(repeats=2), _data()
    full = run_sweep(cfg, data, tmp_path / "full", progress=False, formats=("json",))
    run = tmp_path / "torn"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cfg, data, run, progress=False, on_cell=_stop_after(3), formats=("json",))
    path = run / "cells.jsonl"
    text = path.read_text()
    path.write_text(text[: len(text) - 25])  # the process died while writing the third line
    assert len(CellStore(path).load()) == 2
    resumed = run_sweep(cfg, data, run, resume=True, progress=False, formats=("json",))
    assert _final(resumed) == _final(full)


def test_resume_refuses_a_different_sweep(tmp_path: Path):
    run_sweep(_cfg(repeats=1), _data(), tmp_path, progress=False, formats=("json",))
    with pytest.raises(Exception, match="different sweep"):
        run_sweep(_cfg(repeats=1, seed=12), _data(), tmp_path, resume=True, progress=False)


def test_parallel_equals_serial(tmp_path: Path):
    cfg, data = _cfg(repeats=2), _data()
    serial = run_sweep(cfg, data, tmp_path / "a", progress=False, formats=("json",))
    parallel = run_sweep(cfg, data, tmp_path / "b", n_jobs=2, progress=False, formats=("json",))
    assert _final(serial) == _final(parallel)


def test_utility_rises_and_displacement_falls_with_epsilon(tmp_path: Path):
    res = run_sweep(_cfg(epsilons=(0.1, 50.0), repeats=3), _data(), tmp_path, progress=False, formats=("json",))
    lo, hi = (r["metrics"] for r in res["sweep"]["summary"])
    # E‖noise‖ = d/ε = 20 at ε = 0.1 and 0.04 at ε = 50 (Gamma(2, 1/ε) radius); 40 records
    # average it, so the measured means sit within a factor 2 of that for any seed.
    assert 10 < lo["displacement"]["mean"] < 40 and hi["displacement"]["mean"] < 0.08
    # Noise of 0.04 on clusters 0.5 wide leaves KMeans' partition intact; noise of 20 destroys it.
    assert hi["kmeans.ari"]["mean"] > 0.9 and lo["kmeans.ari"]["mean"] < 0.3


def test_no_record_value_in_any_output(tmp_path: Path):
    """Seed the data with distinctive values and search every file the CLI writes, PNGs and CSV included."""
    X = np.random.default_rng(5).normal(size=(30, 2))
    X[:, 0] += DISTINCT
    X[7, 1] = 987.654321
    csv = tmp_path / "secret.csv"
    np.savetxt(csv, X, delimiter=",", header="a,b", comments="", fmt="%.6f")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["sweep", "-m", "ndlaplace", "--eps", "1,5", "--repeats", "2", "--data", str(csv),
                                   "--clusterers", "kmeans", "--rescale", "minmax", "--out", str(out),
                                   "--no-progress"])
    assert res.exit_code == 0, res.output
    files = [p for p in out.iterdir() if p.is_file()]
    assert {"results.json", "results.csv", "report.md", "report.html", "cells.jsonl"} <= {p.name for p in files}
    needles = [b"123.45", b"123,45", b"987.65", b"987,65", b"1.2345", b"9.8765"]
    for v in np.round(X[:, 0], 6):  # every record's first value, truncated to 4 decimals (as text in JSON/CSV)
        s = repr(float(v))
        needles.append(s[: s.index(".") + 5].encode())
    for path in files:
        blob = path.read_bytes()
        for needle in needles:
            assert needle not in blob, (path.name, needle)
    report = (out / "report.md").read_text()
    assert "PrivacyLeakWarning" in report and "min/max" in report


def test_cli_sweep_errors(tmp_path: Path):
    runner = CliRunner()
    for args, msg in [(["--eps", "1,-2"], "> 0"), (["--clusterers", "kmeanz"], "unknown clusterer"),
                      (["--dataset", "nope"], "unknown dataset"), (["--resume"], "--out")]:
        res = runner.invoke(app, ["sweep", "-m", "ndlaplace", "--repeats", "1", *args])
        assert res.exit_code == 2 and msg in res.output and "Traceback" not in res.output, (args, res.output)
    res = runner.invoke(app, ["sweep", "-m", "nosuchmech", "--eps", "1", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "unknown mechanism" in res.output


def test_membership_attack_and_epsilon_bound_per_cell(tmp_path: Path):
    from sklearn.datasets import make_blobs
    X, y = make_blobs(120, centers=3, n_features=2, cluster_std=0.5, random_state=3)
    data = Dataset("blobs", X, y, (np.full(2, -15.0), np.full(2, 15.0)), "test blobs")
    cfg = _cfg(epsilons=(2.0,), repeats=1, clusterers=("kmeans",), attacks=("yeom",), epsilon_bound=True,
               samples=200)
    res = run_sweep(cfg, data, tmp_path, progress=False, formats=("json", "md"))
    assert not res["findings"]
    for row in res["sweep"]["summary"]:
        m = row["metrics"]
        assert {"mia.yeom.advantage", "mia.yeom.auc", "mia.yeom.epsilon_lower_bound", "epsilon_lower_bound"} <= set(m)
        # ndlaplace claims metric privacy; a certified bound per unit distance above the claim would be a bug.
        assert m["epsilon_lower_bound"]["mean"] <= row["epsilon"] + 1e-9
    assert (tmp_path / "fig-advantage.png").is_file() and (tmp_path / "fig-certified.png").is_file()


def test_a_failing_cell_is_a_finding_not_a_crash(tmp_path: Path):
    plugin = tmp_path / "flaky.py"
    plugin.write_text("import numpy as np\n"
                      "def perturb(X, epsilon, rng):\n"
                      "    if epsilon > 2:\n"
                      "        raise ValueError('refuses large epsilon')\n"
                      "    return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)\n")
    cfg = _cfg(mechanism=f"{plugin}:perturb", epsilons=(1.0, 4.0), repeats=2, clusterers=("kmeans",),
               params={"output": "points", "neighbours": "metric"})
    res = run_sweep(cfg, _data(), tmp_path / "run", progress=False, formats=("json", "md"))
    low, high = res["sweep"]["summary"]
    assert low["metrics"]["kmeans.ari"]["n"] == 2 and high["metrics"] == {}
    assert len(res["findings"]) == 2 and all("refuses large epsilon" in f["error"] for f in res["findings"])
    assert "Findings" in (tmp_path / "run" / "report.md").read_text()


def test_baseline_with_membership_attacks_runs_at_the_cell_epsilon(tmp_path: Path):
    """A non-private baseline claims ε = ∞ but runs at each cell's ε; --attack must not reject it."""
    res = CliRunner().invoke(app, ["sweep", "-m", "identity", "--eps", "1", "--repeats", "1", "--records", "100",
                                   "--clusterers", "none", "--attack", "yeom", "--out", str(tmp_path / "run"),
                                   "--no-progress"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert "Yeom: advantage (TPR − FPR)" in res.stdout and "mia.yeom" not in res.stdout  # headers in words
    assert max(len(line) for line in lines if not line.startswith("Conclusion:")) <= 100  # quoted whole


def test_duplicate_records_print_no_sklearn_warnings(tmp_path: Path):
    """KMeans on 2 distinct points with k = 4 warns in scikit-learn; the sweep's output stays clean."""
    csv = tmp_path / "dupes.csv"
    csv.write_text("a,b\n" + "1,1\n" * 4 + "2,2\n" * 4)
    import warnings
    with warnings.catch_warnings(record=True) as caught:  # in-process: what a user's terminal would show
        warnings.simplefilter("always")
        res = CliRunner().invoke(app, ["sweep", "-m", "identity", "--eps", "1", "--repeats", "1", "--data",
                                       str(csv), "--clusterers", "kmeans", "--out", str(tmp_path / "run"),
                                       "--no-progress"])
    assert res.exit_code == 0, res.output
    assert not [w for w in caught if "sklearn" in w.filename], [str(w.message) for w in caught]


def test_epsilon_bound_cells_list_leaks_once_and_print_no_raw_warning(tmp_path: Path):
    """dpfcm normalises with the data's min/max: the report lists that leak; stderr gets no warnings-module dump."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = CliRunner().invoke(app, ["sweep", "-m", "dpfcm", "--eps", "1", "--repeats", "1", "--records", "40",
                                       "--epsilon-bound", "--samples", "20", "--clusterers", "none",
                                       "--out", str(tmp_path / "run"), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert not [w for w in caught if "min/max" in str(w.message)], [str(w.message) for w in caught]
    assert "min/max" in (tmp_path / "run" / "report.md").read_text()
