"""Fast checks of the third-party benchmark's new pieces: the Gaussian k-means's σ against the closed form,
the grid variants, and the commands the harness builds (no dpaudit run)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.thirdparty import runs  # noqa: E402 - after the path
from benchmarks.thirdparty.catalogue import FUNCTIONS, GRID_FUNCTIONS, Run  # noqa: E402 - after the path
from benchmarks.thirdparty.page import grid_goals, summary_rows  # noqa: E402 - after the path


def _functions(file: str = "functions.py"):
    spec = importlib.util.spec_from_file_location("thirdparty_functions_test", REPO / "benchmarks/thirdparty" / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _gaussian_delta(eps: float, mu: float) -> float:
    """Balle & Wang's exact δ(ε) of a Gaussian mechanism with sensitivity/σ = μ."""
    from scipy.stats import norm

    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


@pytest.mark.parametrize("eps", [1.0, 10.0])
def test_the_gaussian_noise_meets_the_closed_form(eps: float) -> None:
    pytest.importorskip("dp_accounting")
    f = _functions("gaussian_functions.py")
    z = f.gaussian_noise_multiplier(eps)
    mu = math.sqrt(1 + 2 * f.GAUSS_ITERATIONS) / z  # 1 + 2T Gaussians of multiplier z: one of multiplier z/√(2T+1)
    assert _gaussian_delta(eps, mu) <= 1.0e-6 * 1.01  # the claim holds
    assert _gaussian_delta(eps, mu * 1.02) > 1.0e-6  # and σ is not needlessly large (within 2 %)


def test_the_gaussian_functions_run_refuse_empty_data_and_may_release_fewer_centres() -> None:
    pytest.importorskip("dp_accounting")
    f = _functions("gaussian_functions.py")
    X = np.random.default_rng(0).normal(size=(30, 2))
    a = f.gaussian_kmeans_accounted(X, 1.0, np.random.default_rng(1))
    assert np.array_equal(a, f.gaussian_kmeans_accounted(X, 1.0, np.random.default_rng(1)))
    assert a.shape == (2, 2) and np.all(np.linalg.norm(a, axis=1) <= 1.0 + 1e-12)
    with pytest.raises(ValueError):
        f.gaussian_kmeans_accounted(np.zeros((0, 2)), 1.0, np.random.default_rng(0))
    shapes = {f.gaussian_kmeans_accounted_10x(X[:1], 1.0, np.random.default_rng(i)).shape for i in range(40)}
    assert shapes == {(1, 2), (2, 2)}
    with pytest.raises(ValueError):
        _functions().dplloyd_correct_raises_empty(np.zeros((0, 2)), 1.0, np.random.default_rng(0))


@pytest.mark.parametrize("base", ["dplloyd_correct", "dplloyd_empty_skip", "dplloyd_unclipped"])
def test_grid_variants_take_any_dimension_and_k2_is_the_original(base: str) -> None:
    f = _functions()
    X = np.random.default_rng(0).uniform(-1, 1, size=(20, 2))
    assert np.array_equal(getattr(f, f"{base}_k2")(X, 1.0, np.random.default_rng(3)),
                          getattr(f, base)(X, 1.0, np.random.default_rng(3)))
    for k in (2, 3, 4):
        fn = getattr(f, f"{base}_k{k}")
        assert fn.__name__ == f"{base}_k{k}"
        for d in (1, 2, 3):
            out = fn(np.random.default_rng(d).uniform(-1, 1, size=(15, d)), 1.0, np.random.default_rng(0))
            assert out.shape == (k, d) and np.all(np.isfinite(out))


def test_every_catalogued_function_exists_in_its_file() -> None:
    for fn in (*FUNCTIONS, *GRID_FUNCTIONS):
        assert callable(getattr(_functions(fn.file.rpartition("/")[2]), fn.name)), fn.name


def test_the_harness_passes_the_claim_the_box_the_data_and_the_budget(tmp_path: Path) -> None:
    by_name = {f.name: f for f in (*FUNCTIONS, *GRID_FUNCTIONS)}
    argv = runs.estimate_argv(by_name["gaussian_kmeans_accounted"], 2, "py", tmp_path / "x.json", [],
                               time_budget=240)
    text = " ".join(argv)
    assert "--eps 1 --delta 1e-06 --bounds -1,1 --output centroids" in text
    assert "--seed 2 --time-budget 240" in text
    argv = runs.estimate_argv(by_name["dplloyd_correct"], 0, "py", tmp_path / "x.json", [])
    assert "--delta" not in argv and "--bounds" not in argv and "--seed" not in argv and "--time-budget" not in argv
    csv = runs.blobs_csv(tmp_path, 3)
    rows = csv.read_text(encoding="utf-8").splitlines()
    assert rows[0] == "x1,x2,x3" and len(rows) == 31
    values = np.array([[float(v) for v in r.split(",")] for r in rows[1:]])
    assert values.min() >= -1 and values.max() <= 1
    assert csv.read_text(encoding="utf-8") == runs.blobs_csv(tmp_path / ".." / tmp_path.name, 3).read_text(
        encoding="utf-8")  # seeded
    argv = runs.estimate_argv(by_name["dplloyd_empty_skip_k3"], 0, "py", tmp_path / "x.json", [], data=csv)
    assert f"--bounds -1,1 --output centroids --data {csv}" in " ".join(argv)


def _run(name: str, correct: bool, seed: int, verdict: str, eps: float, **kw: object) -> Run:
    run = Run(name, correct, "estimate-eps", seed, "cmd", 0, 1.0, **kw)
    run.verdict, run.epsilon_lower_bound = verdict, eps
    return run


def test_the_goal_needs_three_violations_at_four_fifths_of_the_witness_and_no_correct_violation() -> None:
    fns = [f for f in FUNCTIONS if f.name in ("gaussian_kmeans_accounted", "gaussian_kmeans_accounted_10x")]
    witnesses = [{"function": "gaussian_kmeans_accounted_10x", "epsilon_lower_bound": 2.0}]
    runs = [_run("gaussian_kmeans_accounted_10x", False, s, "violation", e) for s, e in enumerate((1.7, 1.6, 1.65))]
    runs += [_run("gaussian_kmeans_accounted", True, s, "no violation found", 0.1) for s in range(3)]
    runs += [_run("gaussian_kmeans_accounted", True, 0, "no violation found", 0.2, time_budget=240.0)]
    goals = summary_rows(runs, fns, witnesses)[1]
    assert goals["gaussian_kmeans_accounted_10x"]["meets_goal"]
    assert goals["gaussian_kmeans_accounted"]["meets_goal"] and goals["gaussian_kmeans_accounted"]["budget_seeds"] == 1
    runs[1].epsilon_lower_bound = 1.5  # below 0.8 × 2.0
    assert not summary_rows(runs, fns, witnesses)[1]["gaussian_kmeans_accounted_10x"]["meets_goal"]
    runs[-1].verdict = "violation"  # a correct function flagged with the longer budget
    assert not summary_rows(runs, fns, witnesses)[1]["gaussian_kmeans_accounted"]["meets_goal"]

    grid = [f for f in GRID_FUNCTIONS if f.name in ("dplloyd_empty_skip_k3", "dplloyd_correct_k3")]
    gw = [{"function": "dplloyd_empty_skip_k3", "grid": True, "d": 2, "epsilon_lower_bound": 6.0}]
    cells = grid_goals([_run("dplloyd_empty_skip_k3", False, 0, "violation", 5.0, d=2),
                        _run("dplloyd_empty_skip_k3", False, 0, "violation", 5.0, d=1),
                        _run("dplloyd_correct_k3", True, 0, "no violation found", 0.0, d=2)], grid, gw)
    assert cells["dplloyd_empty_skip_k3@d2"]["meets_goal"] and cells["dplloyd_correct_k3@d2"]["meets_goal"]
    assert cells["dplloyd_empty_skip_k3@d1"]["witness"] is None
