"""The protocol for programs (``cmd:COMMAND``, :mod:`dpaudit.mechanisms.executable_protocol`) and its two hosts: the
client in this process (:class:`~dpaudit.mechanisms.executable.ExecutableMechanism`, the Python API) and the one a
worker owns (:class:`~dpaudit.execution.WorkerMechanism`).  The programs are small Python scripts written here or
``tests/programs/faults.py``; what they are written in does not matter to the protocol.
"""

from __future__ import annotations

import os
import pickle
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import dpaudit
from dpaudit.execution import OpaqueSeeds, WorkerMechanism, draw_releases
from dpaudit.execution.worker_rng import GeneratorBatch
from dpaudit.mechanisms import executable_protocol as protocol
from dpaudit.mechanisms.base import InvalidInputError, Vector
from dpaudit.mechanisms.executable import ExecutableMechanism

FAULTS = Path(__file__).parent / "programs" / "faults.py"
X = np.linspace(-2.0, 2.0, 20).reshape(10, 2)


def script(tmp_path: Path, body: str, output: str = "vector") -> str:
    """The spec of a Python program that shakes hands and then runs ``body`` for each request ``req``."""
    path = tmp_path / f"prog_{abs(hash(body)) % 10**8}.py"
    path.write_text("import json, sys\n"
                    f"print(json.dumps({{'protocol': 'dpaudit/1', 'output': {output!r}}}), flush=True)\n"
                    "for line in sys.stdin:\n"
                    "    req = json.loads(line)\n" + textwrap.indent(textwrap.dedent(body), "    "))
    return f"cmd:{sys.executable} {path}"


def reply(expression: str) -> str:
    return f"print(json.dumps({expression}), flush=True)\n"


def test_seeds_are_the_same_in_this_process_and_in_a_worker() -> None:
    words = OpaqueSeeds(np.random.SeedSequence(7)).release_words(range(50))
    in_worker = protocol.seeds_from_words(words)
    gens = GeneratorBatch(words)
    assert in_worker == [protocol.seed_from_generator(gens[i]) for i in range(50)]
    assert in_worker == [protocol.seed_from_generator(OpaqueSeeds(np.random.SeedSequence(7)).release(i))
                         for i in range(50)]
    assert all(0 <= s < 2**53 for s in in_worker) and len(set(in_worker)) == 50
    spawned = np.random.default_rng(np.random.SeedSequence(7).spawn(2)[1])  # a spawn key: drawn, not read off
    assert 0 <= protocol.seed_from_generator(spawned) < 2**53


def test_a_batch_is_one_request_and_one_stacked_answer(tmp_path: Path) -> None:
    spec = script(tmp_path, reply("{'releases': [[s % 7, req['n'], req['d'], req['epsilon']] for s in req['seeds']]}"))
    program = protocol.Program(spec, epsilon=0.5, params={"bounds": (-1.0, np.float64(1.0))})
    try:
        answer = program.answer(X, [3, 10, 2**53 - 1])
        assert isinstance(answer, protocol.Stacked) and answer.kind == "vector"
        assert answer.value.tolist() == [[3, 10, 2, 0.5], [3, 10, 2, 0.5], [(2**53 - 1) % 7, 10, 2, 0.5]]
    finally:
        program.close()


def test_a_failed_or_unframed_batch_is_asked_again_one_seed_at_a_time(tmp_path: Path) -> None:
    program = protocol.Program(f"cmd:{sys.executable} {FAULTS} garbage", epsilon=1.0)
    try:
        entries = program.answer(X, [1, 400, 3])  # 400: garbage for any request that holds it
        assert isinstance(entries, list)
        assert [m["kind"] for m, _ in entries] == ["vector", "failed", "vector"]
        assert entries[1][0]["reason"] == "wrong-shape" and "not a JSON reply" in entries[1][0]["error"]
    finally:
        program.close()
    spec = script(tmp_path, "if any(s == 2 for s in req['seeds']):\n    " + reply("{'error': 'seed 2 is bad'}")
                  + "else:\n    " + reply("{'releases': [[s] for s in req['seeds']]}"))
    program = protocol.Program(spec, epsilon=1.0)
    try:
        entries = program.answer(X, [1, 2, 3])
        assert isinstance(entries, list)
        metas = [m for m, _ in entries]
        assert [m["kind"] for m in metas] == ["vector", "failed", "vector"] and "seed 2 is bad" in metas[1]["error"]
    finally:
        program.close()


def test_each_release_is_checked_on_its_own(tmp_path: Path) -> None:
    spec = script(tmp_path, reply("{'releases': [[1, None], {'error': 'no'}, 'text', [1, 2, 3]]}"))
    program = protocol.Program(spec, epsilon=1.0)
    try:
        entries = program.answer(X, [1, 2, 3, 4])
        assert isinstance(entries, list)
        kinds = [(m["kind"], m.get("reason")) for m, _ in entries]
        assert kinds == [("vector", None), ("failed", "raises"), ("failed", "wrong-shape"), ("vector", None)]
        assert np.isnan(entries[0][1]["value"][1])  # null: no answer, part of the release
    finally:
        program.close()
    labels = script(tmp_path, reply("{'releases': [[0] * req['n'], [0.5] * req['n']]}"), output="labels")
    program = protocol.Program(labels, epsilon=1.0)
    try:
        entries = program.answer(X, [1, 2])
        assert isinstance(entries, list)
        assert entries[0][1]["value"].dtype == np.int64 and entries[1][0]["reason"] == "wrong-shape"
    finally:
        program.close()


def test_the_wrong_number_of_releases_is_unframed(tmp_path: Path) -> None:
    one = protocol.Program(script(tmp_path, reply("{'releases': [[1]]}")), epsilon=1.0)
    none = protocol.Program(script(tmp_path, reply("{'releases': []}")), epsilon=1.0)
    try:
        entries = one.answer(X, [1, 2])  # asked again one at a time: one release each, then answered
        assert isinstance(entries, list) and [m["kind"] for m, _ in entries] == ["vector", "vector"]
        entries = none.answer(X, [5])
        assert isinstance(entries, list) and "answered 0 releases to a request for 1" in entries[0][0]["error"]
    finally:
        one.close()
        none.close()


def test_the_handshake_is_checked_at_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(protocol.ProgramError, match="says it releases vector .* --output says centroids"):
        protocol.Program(script(tmp_path, ""), epsilon=1.0, output="centroids")
    with pytest.raises(protocol.ProgramError, match="output 'histogram'"):
        protocol.Program(script(tmp_path, "", output="histogram"), epsilon=1.0)
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(30)\n")
    monkeypatch.setattr(protocol, "HANDSHAKE_SECONDS", 0.5)
    t0 = time.perf_counter()
    with pytest.raises(protocol.ProgramError, match="no handshake line within 0.5 s"):
        protocol.Program(f"cmd:{sys.executable} {slow}", epsilon=1.0)
    assert time.perf_counter() - t0 < 10


def test_a_program_is_a_mechanism_in_this_process(tmp_path: Path) -> None:
    spec = f"cmd:{sys.executable} {FAULTS} honest"
    mech = dpaudit.plugin(spec, epsilon=1.0, neighbours="replace", bounds=(-15, 15))
    assert isinstance(mech, ExecutableMechanism) and mech.name == "faults-honest" and mech.output == "vector"
    assert mech.claim.neighbours == "replace" and mech.bounds == (-15, 15)
    first = mech.release(X, np.random.default_rng(1))
    assert isinstance(first, Vector) and first.values.shape == (2,)
    again = pickle.loads(pickle.dumps(mech))  # a copy starts its own program
    assert np.array_equal(again.release(X, np.random.default_rng(1)).values, first.values)
    mech.close()
    again.close()
    with pytest.raises(InvalidInputError, match="give the epsilon"):
        dpaudit.mechanisms.get(spec)


def test_a_worker_gives_the_same_releases_and_its_program_dies_with_it(tmp_path: Path) -> None:
    spec = f"cmd:{sys.executable} {FAULTS} honest"
    worker = WorkerMechanism(spec, epsilon=1.0, neighbours="replace", output_stated=False)
    here = ExecutableMechanism(spec, epsilon=1.0, neighbours="replace")
    try:
        assert worker.output == "vector" and worker.plugin_kind == "executable" and worker.name == "faults-honest"
        seed = np.random.SeedSequence(3)
        remote = draw_releases(worker, X, seed, 300, lane="a").releases
        local = draw_releases(here, X, seed, 300).releases
        assert np.array_equal(np.stack([r.values for r in remote]), np.stack([r.values for r in local]))
        lane = worker.lane_pids()["a"]
        children = _children(lane)
        assert len(children) == 1  # the lane's own program
        os.kill(lane, 9)  # a worker killed (as for a timeout): its program goes too
        deadline = time.monotonic() + 5
        while _alive(children[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(children[0])
    finally:
        worker.close()
        here.close()


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False
