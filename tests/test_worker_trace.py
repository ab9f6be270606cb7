"""The tracer of one coupled screening call (execution/worker_trace.py, worker_frames.py, worker_globals.py):
the audited code's lines, its noise draws and their scales, where it raised — and nothing else changed."""

from __future__ import annotations

import importlib.util
import random
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpaudit.execution import worker_trace
from dpaudit.execution.worker_frames import FrameRule, is_dpaudit_file
from dpaudit.execution.worker_globals import SavedGlobals, SeededGlobals
from dpaudit.execution.worker_trace import CallTrace, RecordingGenerator, ScreeningCall, frame_rule

CODE = textwrap.dedent('''
    import json
    import random
    import threading

    import numpy as np


    def branchy(X, epsilon, rng):
        total = float(X.sum())
        if total > 0:
            total = total + 1.0
            total = total * 2.0
        return rng.laplace(total, 1.0 / epsilon, size=2)


    def scales(X, epsilon, rng):
        spread = float(np.abs(X).max()) + 0.5
        a = rng.normal(X.mean(axis=0), spread / epsilon)
        b = np.random.laplace(0.0, spread, size=2)
        c = random.gauss(0.0, spread)
        d = rng.multivariate_normal(np.zeros(2), np.diag([spread ** 2, 4.0]))
        e = rng.exponential(scale=3.0)
        return a + b + c + d + e


    def stdlib_only(X, epsilon, rng):
        text = json.dumps({"n": len(X)})
        return np.full(2, float(len(text))) + rng.normal(0.0, 1.0, size=2)


    def raises(X, epsilon, rng):
        rng.normal()
        np.linalg.inv(np.zeros((2, 2)))


    def in_a_thread(X, epsilon, rng):
        out = []
        worker = threading.Thread(target=lambda: out.append(helper()))
        worker.start()
        worker.join()
        return rng.normal(size=2) + out[0]


    def helper():
        value = 1.0
        return value


    class Scales:
        """A mechanism object audited in this process."""

        name = "scales"

        def release(self, X, rng):
            from dpaudit.mechanisms.base import Vector

            return Vector(scales(X, 1.0, rng))
''')


@pytest.fixture(scope="module")
def their(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("plugin")
    path = folder / "their_kmeans.py"
    path.write_text(CODE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("their_kmeans_for_trace_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.ROOT = str(folder)
    return module


def _traced(their: Any, fn: Any, X: np.ndarray, seed: int = 0) -> tuple[Any, dict[str, Any]]:
    trace = CallTrace(frame_rule([their.ROOT]))
    with trace:
        out = fn(X, 1.0, trace.generator(np.random.default_rng(seed)))
    return out, trace.to_dict()


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(CODE.splitlines(), start=1) if text in line)


def test_a_data_dependent_branch_shows_in_the_line_counts(their: Any) -> None:
    _, plus = _traced(their, their.branchy, np.ones((3, 2)))
    _, minus = _traced(their, their.branchy, -np.ones((3, 2)))
    lines = {_line_of("total = total + 1.0"), _line_of("total = total * 2.0")}
    ran = {line for line, _ in plus["lines"]["their_kmeans.py"]}
    assert lines <= ran and not lines & {line for line, _ in minus["lines"]["their_kmeans.py"]}
    assert ["branchy", _line_of("def branchy"), _line_of("return rng.laplace(total")] in \
        plus["functions"]["their_kmeans.py"]


def test_data_dependent_scales_are_recorded_from_every_source(their: Any) -> None:
    _, small = _traced(their, their.scales, np.full((4, 2), 0.5))
    _, large = _traced(their, their.scales, np.full((4, 2), 2.5))
    def by_call(trace: dict[str, Any]) -> dict[str, Any]:
        return {d["call"]: d for d in trace["draws"]}
    a, b = by_call(small), by_call(large)
    assert set(a) == {"rng.normal", "numpy.random.laplace", "random.gauss", "rng.multivariate_normal",
                      "rng.exponential"}
    assert a["rng.normal"]["params"] == {"scale": [1.0, 1.0]} and b["rng.normal"]["params"] == {"scale": [3.0, 3.0]}
    assert a["numpy.random.laplace"]["params"]["scale"] == [1.0, 1.0] and a["random.gauss"]["dist"] == "normal"
    assert b["random.gauss"]["params"] == {"scale": [3.0, 3.0]}
    assert b["rng.multivariate_normal"]["params"] == {"cov": [2.0, 3.0]}  # √ of the covariance's diagonal
    assert a["rng.exponential"]["params"] == {"scale": [3.0, 3.0]}
    assert a["rng.normal"]["site"] == ["their_kmeans.py", _line_of("a = rng.normal(")]
    assert all(set(d["params"]) <= {"scale", "cov"} for d in small["draws"])  # never a loc or a mean


def test_tracing_changes_no_number(their: Any) -> None:
    X = np.random.default_rng(1).normal(size=(5, 2))
    for fn in (their.branchy, their.scales, their.stdlib_only):
        np.random.seed(3)
        random.seed(3)
        plain = fn(X, 1.0, np.random.default_rng(7))
        np.random.seed(3)
        random.seed(3)
        traced, _ = _traced(their, fn, X, seed=7)
        assert np.array_equal(plain, traced)


def test_the_generator_stays_a_generator_and_its_children_record(their: Any) -> None:
    rng = np.random.default_rng(4)
    twin = CallTrace(frame_rule([their.ROOT])).generator(rng)
    assert isinstance(twin, np.random.Generator) and isinstance(twin, RecordingGenerator)
    assert twin.bit_generator is rng.bit_generator
    assert all(isinstance(child, RecordingGenerator) for child in twin.spawn(2))


def test_neither_dpaudit_nor_the_standard_library_nor_numpy_is_named(their: Any) -> None:
    _, trace = _traced(their, their.stdlib_only, np.ones((3, 2)))
    assert set(trace["lines"]) == {"their_kmeans.py"}
    rule = FrameRule([their.ROOT])
    assert rule.audited_name(worker_trace.__file__) is None and is_dpaudit_file(worker_trace.__file__)
    assert rule.audited_name(random.__file__) is None and rule.audited_name(np.__file__) is None
    assert rule.audited_name("<frozen importlib._bootstrap>") is None


def test_a_builtin_mechanism_traced_in_process_names_nothing() -> None:
    from dpaudit.execution import draw_releases
    from dpaudit.mechanisms import get

    draw = draw_releases(get("ndlaplace", epsilon=1.0), np.zeros((4, 2)), np.random.SeedSequence(0), 2, trace=True)
    assert draw.traces is not None and len(draw.traces) == 2
    assert all(t is not None and t["lines"] == {} and t["draws"] == [] for t in draw.traces)


def test_a_raise_is_located_and_everything_is_put_back(their: Any) -> None:
    before = (np.random.normal, np.random.default_rng, random.gauss, sys.gettrace())
    trace = CallTrace(frame_rule([their.ROOT]))
    with pytest.raises(np.linalg.LinAlgError):
        with trace:
            their.raises(np.ones((2, 2)), 1.0, trace.generator(np.random.default_rng(0)))
    assert (np.random.normal, np.random.default_rng, random.gauss, sys.gettrace()) == before
    assert trace.to_dict()["raised"] == {"type": "LinAlgError", "site": ["their_kmeans.py", _line_of("np.linalg.inv")]}


def test_the_previous_trace_function_comes_back() -> None:
    seen: list[str] = []

    def outer(frame: Any, event: str, arg: Any) -> None:
        seen.append(event)

    previous = sys.gettrace()
    sys.settrace(outer)
    try:
        with CallTrace(frame_rule()):
            pass
        assert sys.gettrace() is outer
    finally:
        sys.settrace(previous)


def test_only_the_calling_thread_is_traced(their: Any) -> None:
    _, trace = _traced(their, their.in_a_thread, np.ones((2, 2)))
    ran = {line for line, _ in trace["lines"]["their_kmeans.py"]}
    assert _line_of("worker.join()") in ran and _line_of("value = 1.0") not in ran


def test_seeded_globals_couple_calls_on_the_same_words_and_restore_the_state() -> None:
    words = np.array([1, 2, 3, 4], dtype=np.uint32)
    np.random.seed(11)
    random.seed(11)
    expected = (np.random.random(), random.random())
    np.random.seed(11)
    random.seed(11)
    with SeededGlobals(words):
        first = (np.random.normal(), random.gauss(0, 1))
    with pytest.raises(RuntimeError), SeededGlobals(words):
        second = (np.random.normal(), random.gauss(0, 1))
        raise RuntimeError("the call failed")
    with SeededGlobals(words + 1):
        other = (np.random.normal(), random.gauss(0, 1))
    assert first == second != other
    assert (np.random.random(), random.random()) == expected  # the state before, back after each call


def test_a_screening_call_traces_and_seeds_together(their: Any) -> None:
    words = np.array([9, 8, 7, 6], dtype=np.uint32)
    outs = []
    np.random.seed(5)
    expected = np.random.random()
    np.random.seed(5)
    with SavedGlobals():
        for _ in range(2):
            call = ScreeningCall(words, frame_rule([their.ROOT]), seed_globals=True)
            with call:
                outs.append(their.scales(np.ones((3, 2)), 1.0, call.rng(np.random.default_rng(0))))
            assert call.trace is not None and len(call.trace["draws"]) == 5
    assert np.array_equal(outs[0], outs[1])  # rng, numpy's and random's globals: all on one stream
    assert np.random.random() == expected
    untraced = ScreeningCall(words, None, seed_globals=False)
    with untraced:
        pass
    assert untraced.trace is None


def test_an_in_process_draw_couples_the_globals_and_gives_them_back(their: Any) -> None:
    from dpaudit.execution import draw_releases

    mech = their.Scales()
    random.seed(2)
    expected = random.random()
    random.seed(2)
    a = draw_releases(mech, np.ones((3, 2)), np.random.SeedSequence(1), 3, seed_globals=True, trace=True)
    b = draw_releases(mech, np.ones((3, 2)), np.random.SeedSequence(1), 3, seed_globals=True)
    assert random.random() == expected  # the caller's global state, untouched by the seeded draws
    c = draw_releases(mech, np.ones((3, 2)), np.random.SeedSequence(1), 3)
    assert np.array_equal(a.releases.array, b.releases.array) and not np.array_equal(a.releases.array,
                                                                                        c.releases.array)
    assert a.traces is not None and len(a.traces) == 3 and b.traces is None and c.traces is None
    assert a.traces[0] is not None and "their_kmeans.py" in a.traces[0]["lines"]


def test_frame_names_are_relative_to_the_longest_root(tmp_path: Path) -> None:
    inner = tmp_path / "pkg" / "models"
    inner.mkdir(parents=True)
    (inner / "k_means.py").write_text("", encoding="utf-8")
    rule = FrameRule([str(tmp_path)])
    assert rule.audited_name(str(inner / "k_means.py")) == "pkg/models/k_means.py"
    assert FrameRule([str(inner)]).audited_name(str(inner / "k_means.py")) == "k_means.py"


def test_traced_calls_in_two_threads_keep_their_own_draws(their: Any) -> None:
    before = (np.random.laplace, random.gauss)
    started, release = threading.Barrier(2), threading.Event()
    traces: dict[float, dict[str, Any]] = {}

    def run(value: float) -> None:
        trace = CallTrace(frame_rule([their.ROOT]))
        with trace:
            started.wait()
            their.scales(np.full((2, 2), value), 1.0, trace.generator(np.random.default_rng(0)))
            if value > 1:
                release.set()
            else:
                release.wait()  # the other thread's trace has ended: the stand-ins must still record here
                their.scales(np.full((2, 2), value), 1.0, trace.generator(np.random.default_rng(0)))
        traces[value] = trace.to_dict()

    threads = [threading.Thread(target=run, args=(v,)) for v in (0.5, 2.5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    laplace = {v: next(d for d in t["draws"] if d["call"] == "numpy.random.laplace") for v, t in traces.items()}
    assert laplace[0.5]["params"]["scale"] == [1.0, 1.0] and laplace[0.5]["count"] == 2
    assert laplace[2.5]["params"]["scale"] == [3.0, 3.0] and laplace[2.5]["count"] == 1
    assert (np.random.laplace, random.gauss) == before
