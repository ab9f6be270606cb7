"""Plain functions called in batches in the worker: the same numbers and the same faults as one by one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.execution import WorkerMechanism, draw_releases
from dpaudit.execution.validate import check_release, failure_kind, wrap_rows
from dpaudit.execution.worker_rng import GeneratorBatch, entropy_int
from dpaudit.mechanisms.base import Failed, ReleaseBatch
from dpaudit.mechanisms.plugins import MalformedReleaseError, wrap_array

PLUGINS = Path(__file__).parent / "plugins"
STATEFUL = PLUGINS / "stateful.py"


@pytest.fixture
def X() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(12, 2))


def _outcomes(releases) -> list:
    """Each release as (kind, values) or ("failed", reason): comparable across paths."""
    return [("failed", r.reason) if isinstance(r, Failed)
            else (r.kind, np.nan_to_num(np.asarray(r.points), nan=-7e77).round(12).tolist())  # NaN compares equal
            for r in releases]


def test_bulk_generators_are_numpys_generators():
    """SeedSequence's hashing run over a whole request gives the generator default_rng(SeedSequence(e)) gives."""
    words = np.random.default_rng(5).integers(0, 2**32, size=(300, 4), dtype=np.uint64).astype(np.uint32)
    words[:20, 3] = 0  # entropies of fewer than four words: numpy pads them the same way
    words[20:30, 1:] = 0
    assert GeneratorBatch.fast
    batch = GeneratorBatch(words)
    for i in range(len(words)):
        e = entropy_int(words[i])
        mine, numpys = batch[i], np.random.default_rng(np.random.SeedSequence(e))
        assert np.array_equal(mine.integers(0, 2**63, 5), numpys.integers(0, 2**63, 5))
    seq = batch[0].bit_generator.seed_seq  # what the audited code can see: numpy's own description
    assert isinstance(seq, np.random.SeedSequence) and seq.entropy == entropy_int(words[0]) and seq.spawn_key == ()
    assert seq.spawn(1)[0].generate_state(2).tolist() == np.random.SeedSequence(seq.entropy).spawn(1)[0] \
        .generate_state(2).tolist()
    assert batch[0] is not batch[0]  # a new generator for every call


@pytest.mark.parametrize("fn", ["fails_by_seed", "mutates_sometimes", "identity_then_in_place"])
def test_a_batch_gives_the_numbers_and_faults_of_one_by_one(X, fn):
    """Stacked replies, vectorised checks: release i is what the same function gives on its own in this process."""
    spec = f"{STATEFUL}:{fn}"
    local = dpaudit.mechanisms.get(spec, epsilon=1.0, output="points")
    worker = WorkerMechanism(spec, epsilon=1.0, timeout=30)
    seed = np.random.SeedSequence(7)
    here = draw_releases(local, X, seed, 200, per_release=True)
    worker._batch = 1
    single = draw_releases(worker, X, seed, 40)
    worker._batch = 1000
    batched = draw_releases(worker, X, seed, 200)
    worker.close()
    assert _outcomes(batched.releases) == _outcomes(here.releases)
    assert _outcomes(single.releases) == _outcomes(here.releases)[:40]
    failures = {f.kind: f.count for f in here.findings}
    assert {f.kind: f.count for f in batched.findings} == failures
    if fn == "fails_by_seed":  # faults in the middle of a batch, each at its own release
        assert set(failures) == {"raises", "non-finite", "wrong-shape"}  # NaN: part of the release, a note
        assert sum(isinstance(r, Failed) for r in batched.releases) == failures["raises"] + failures["wrong-shape"]
    else:  # the input was written into on some calls: a note each time, and never seen by a later call
        assert failures.get("mutates-input", 0) > 0 and set(failures) == {"mutates-input"}


def test_a_stateful_fault_is_attributed_to_its_own_release(X):
    """``raises_on_call_5`` fails the fifth call its process serves: release 4 of a fresh lane, in one request."""
    worker = WorkerMechanism(f"{PLUGINS / 'faults.py'}:raises_on_call_5", epsilon=1.0, timeout=30)
    worker._batch = 1000
    draw = draw_releases(worker, X, np.random.SeedSequence(0), 12, lane="fresh")
    worker.close()
    failed = [i for i, r in enumerate(draw.releases) if isinstance(r, Failed)]
    assert failed == [4] and draw.releases[4].reason == "raises" and "call 5 fails" in draw.releases[4].error
    assert draw.findings["raises"].count == 1 and draw.n == 12


@pytest.mark.parametrize("output", ["points", "centroids", "labels", "vector"])
def test_wrap_rows_is_wrap_array_row_by_row(X, output):
    rng = np.random.default_rng(1)
    shapes = {"points": X.shape, "centroids": (3, 2), "labels": (len(X),), "vector": (4,)}
    rows = rng.normal(size=(6, *shapes[output]))
    if output == "labels":
        rows = np.round(rows)
        rows[4, 0] = 0.5  # not a whole number
    rows[2].flat[0] = np.nan
    rows[3].flat[-1] = np.inf
    for values in (rows, rows[:, :1]):  # right shape, and a wrong one for every kind but vector
        batch = wrap_rows(values, output, X)
        for got, value in zip(batch, values):
            try:
                expected = check_release(wrap_array(value, output, X), X)
            except MalformedReleaseError as exc:
                expected = Failed(failure_kind(str(exc)), str(exc))
            assert type(got) is type(expected)
            if isinstance(expected, Failed):
                assert (got.reason, got.error) == (expected.reason, expected.error)
    assert isinstance(wrap_rows(rows[:2], output, X), ReleaseBatch)  # all usable: one batch, no objects


def test_entropy_stream_is_numpys_generate_state():
    """The entropies of a draw come from SeedSequence.generate_state, vectorised: the same words, prefix-stable."""
    from dpaudit.execution.seeds import child_seed
    from dpaudit.execution.worker_rng import stream_words
    seeds = [np.random.SeedSequence(1), child_seed(np.random.SeedSequence(5), 3, 1, 0),
             np.random.SeedSequence(2**200 + 7, spawn_key=(1, 2)), np.random.SeedSequence(3, pool_size=8)]
    for seed in seeds:
        for n in (1, 5, 17, 1000):
            assert np.array_equal(stream_words(seed, n), seed.generate_state(n, np.uint32))
