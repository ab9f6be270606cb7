"""Coupled screening calls through the worker (``trace``, ``seed_globals`` on a release request): each kept
release's trace in the draw, the global generators coupled, and an untraced draw exactly as before."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from dpaudit.attacks.epsilon.result.leak_sites import coupled_calls, leak_sites
from dpaudit.execution import WorkerMechanism, _worker_calls, draw_releases, worker_audited
from dpaudit.mechanisms.base import Failed

CODE = textwrap.dedent('''
    import random

    import numpy as np


    def their_kmeans(X, epsilon, rng):
        centre = X.mean(axis=0)
        if len(X) > 3:
            centre = centre * 1.0
        spread = X.std() + 0.01
        noise = rng.normal(0.0, spread / epsilon, size=centre.shape)
        jitter = np.random.laplace(0.0, 1.0, size=centre.shape) + random.gauss(0.0, 1.0)
        if len(X) == 2:
            np.linalg.inv(np.zeros((2, 2)))
        return centre + noise + jitter


    def rng_only(X, epsilon, rng):
        return X.mean(axis=0) + rng.laplace(0.0, 1.0 / epsilon, size=X.shape[1])
''')


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("screening") / "their_kmeans.py"
    path.write_text(CODE, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def mech(spec: str):
    m = WorkerMechanism(f"{spec}:their_kmeans", epsilon=1.0, output="vector", timeout=30)
    yield m
    m.close()


def _line(text: str) -> int:
    return next(i for i, line in enumerate(CODE.splitlines(), start=1) if text in line)


D = np.random.default_rng(0).normal(size=(4, 2))


def test_each_kept_release_carries_its_trace(mech: WorkerMechanism) -> None:
    draw = draw_releases(mech, D, np.random.SeedSequence(1), 5, trace=True, seed_globals=True)
    assert draw.traces is not None and len(draw.traces) == draw.n == 5
    trace = draw.traces[0]
    assert trace is not None and set(trace["lines"]) == {"their_kmeans.py"}  # named from the plug-in's folder
    assert {d["call"] for d in trace["draws"]} == {"rng.normal", "numpy.random.laplace", "random.gauss"}
    assert draw_releases(mech, D, np.random.SeedSequence(1), 5).traces is None


def test_seeded_globals_couple_the_global_draws(mech: WorkerMechanism) -> None:
    a = draw_releases(mech, D, np.random.SeedSequence(2), 4, seed_globals=True)
    b = draw_releases(mech, D, np.random.SeedSequence(2), 4, seed_globals=True, lane="other")
    c = draw_releases(mech, D, np.random.SeedSequence(2), 4)
    assert np.array_equal(a.releases.array, b.releases.array)  # D twice on one stream: one release
    assert not np.array_equal(a.releases.array, c.releases.array)  # the globals are not coupled without it


def test_tracing_changes_no_release(spec: str) -> None:
    m = WorkerMechanism(f"{spec}:rng_only", epsilon=1.0, output="vector", timeout=30)
    try:
        plain = draw_releases(m, D, np.random.SeedSequence(3), 6)
        traced = draw_releases(m, D, np.random.SeedSequence(3), 6, trace=True)
    finally:
        m.close()
    assert np.array_equal(plain.releases.array, traced.releases.array)
    assert traced.traces is not None and all(t is not None for t in traced.traces)


def test_only_a_flagged_request_gets_unstacked_replies_with_traces(spec: str) -> None:
    audited = worker_audited.load_audited({"spec": f"{spec}:rng_only", "params": {"epsilon": 1.0},
                                           "output": "vector"})
    words = np.arange(12, dtype=np.uint32).reshape(3, 4)
    plain, stacked = _worker_calls.release_calls(audited, _worker_calls.PrivateInput(D), words)
    assert plain == {"ok": True, "n": 3, "stacked": {"kind": "raw", "failed": {}, "mutated": []}}
    traced, arrays = _worker_calls.release_calls(audited, _worker_calls.PrivateInput(D), words, trace=True)
    assert [set(m) for m in traced["releases"]] == [{"kind", "trace"}] * 3
    assert np.array_equal(arrays["*.value"], stacked["*.value"])


def test_coupled_draws_name_the_scale_the_branch_and_the_raise(mech: WorkerMechanism) -> None:
    seed = np.random.SeedSequence(4)
    d = draw_releases(mech, D, seed, 6, trace=True, seed_globals=True)
    smaller = draw_releases(mech, D[:3], seed, 6, trace=True, seed_globals=True)
    again = draw_releases(mech, D, seed, 6, trace=True, seed_globals=True, lane="again")
    sites = leak_sites(coupled_calls(d, smaller), control=coupled_calls(d, again))
    assert [(s.kind, s.where, s.side) for s in sites[:2]] == [
        ("noise-scale", f"their_kmeans.py:{_line('noise = rng.normal')}", "both"),
        ("one-side", f"their_kmeans.py:{_line('centre = centre * 1.0')}", "D")]
    assert "Gaussian noise (rng.normal) with scale" in sites[0].sentence
    pair = draw_releases(mech, D[:2], seed, 6, trace=True, seed_globals=True)
    assert all(isinstance(r, Failed) for r in pair.releases)
    raised = [s for s in leak_sites(coupled_calls(smaller, pair)) if s.kind == "raises"]
    assert [s.sentence for s in raised] == [
        f"raises LinAlgError at `their_kmeans.py:{_line('np.linalg.inv')}` on D′ only (6 of 6 streams)"]
