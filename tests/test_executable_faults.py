"""Programs (``cmd:COMMAND``) that crash, hang, write garbage or ignore their seed, through the command line: each is
a finding in the written results with exit 3 — never a traceback, never "no violation found" —, the auditor
carries on, and no program outlives the run (a worker killed for a timeout takes its program along).  A program
that cannot start or does not shake hands is a user mistake: one ``Error:`` line, exit 2.

The programs are ``tests/programs/faults.py MODE`` (a replace-DP mean but for its fault), each run from a copy
of its own so that the processes it leaves, if any, can be found by their command line.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

FAULTS = Path(__file__).parent / "programs" / "faults.py"


def program(mode: str, tmp_path: Path) -> tuple[str, str]:
    """The spec of ``faults.py MODE`` run from a copy of its own, and that copy's path."""
    copy = tmp_path / f"faults_{mode.replace('-', '_')}.py"
    shutil.copy(FAULTS, copy)
    return f"cmd:{sys.executable} {copy} {mode}", str(copy)


def estimate(spec: str, out: Path, *extra: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, ["estimate-eps", "-m", spec, "--eps", "1", "--neighbours", "replace",
                                   "--releases", "4000", "--max-pairs", "2", "--no-progress", "--out", str(out),
                                   *extra])
    assert "Traceback" not in res.output and "Traceback" not in res.stderr, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.exit_code, res.stdout, res.stderr


def running(path: str) -> list[int]:
    """The processes whose command line names ``path``."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if path.encode() in f.read():
                    found.append(int(pid))
        except (OSError, ValueError):
            continue
    return found


def no_program_left(path: str) -> None:
    deadline = time.monotonic() + 5.0  # a killed process is gone at once; its reaping may take a moment
    while running(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(path), f"programs outlived the run: {running(path)}"


def findings(out: Path) -> dict[str, dict]:
    return {f["kind"]: f for f in json.loads((out / "results.json").read_text())["findings"]}


def test_a_program_that_crashes_is_a_crash_finding(tmp_path: Path) -> None:
    spec, path = program("crash", tmp_path)
    code, stdout, stderr = estimate(spec, tmp_path / "run")
    found = findings(tmp_path / "run")
    assert code == 3 and "crash" in found and "Conclusion: INCONCLUSIVE" in stdout, (code, found, stdout)
    assert "SIGSEGV" in found["crash"]["error"] and "finding [crash]" in stderr
    assert found["crash"]["dropped"] >= 1  # retried once in a fresh worker, then dropped
    no_program_left(path)


def test_a_program_over_the_memory_limit_dies_as_a_crash(tmp_path: Path) -> None:
    """The program inherits its worker's address-space limit (--memory-limit)."""
    spec, path = program("huge-allocation", tmp_path)
    code, _, _ = estimate(spec, tmp_path / "run", "--memory-limit", "1G")
    found = findings(tmp_path / "run")
    assert code == 3 and "crash" in found and "MemoryError" in found["crash"]["error"], (code, found)
    no_program_left(path)


def test_a_program_that_hangs_is_a_timeout_and_is_killed(tmp_path: Path) -> None:
    spec, path = program("hang", tmp_path)
    t0 = time.perf_counter()
    code, stdout, _ = estimate(spec, tmp_path / "run", "--timeout", "2")
    found = findings(tmp_path / "run")
    assert code == 3 and "timeout" in found and "Conclusion: INCONCLUSIVE" in stdout, (code, found)
    assert time.perf_counter() - t0 < 30  # one timeout for the part, not one per release
    no_program_left(path)


def test_a_program_that_writes_garbage_fails_those_releases_only(tmp_path: Path) -> None:
    """Garbage instead of a reply to a batch: the batch is asked again one seed at a time, so only the releases whose
    seed makes the program write garbage (1 in 400) fail — as outcomes of their own (data, seed)."""
    spec, path = program("garbage", tmp_path)
    code, stdout, _ = estimate(spec, tmp_path / "run")
    found = findings(tmp_path / "run")
    assert code == 3 and "wrong-shape" in found and "Conclusion: INCONCLUSIVE" in stdout, (code, found)
    wrong = found["wrong-shape"]
    assert "not a JSON reply" in wrong["error"] and "oops" in wrong["error"]
    assert 0 < wrong["share"] < 0.02, wrong  # 1/400 of the calls, not whole batches
    no_program_left(path)


def test_a_program_that_ignores_its_seed_is_found_out(tmp_path: Path) -> None:
    """It is told to seed from the seed it is sent; one that draws from the operating system is not coupled (D twice
    on one seed differs) and its replay differs: reported, never trusted."""
    spec, _ = program("ignores-seed", tmp_path)
    code, _, _ = estimate(spec, tmp_path / "run")
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["search"]["screening"]["coupling"]["status"] == "fails"
    assert "nondeterministic" in findings(tmp_path / "run") and code == 3


@pytest.mark.parametrize("mode, words", [
    ("bad-handshake", "is not the handshake"),
    ("dies-at-start", "cannot find libdp.so"),  # the program's own last words on stderr
])
def test_a_program_that_does_not_shake_hands_is_one_error_line(mode: str, words: str, tmp_path: Path) -> None:
    spec, path = program(mode, tmp_path)
    code, stdout, stderr = estimate(spec, tmp_path / "run")
    assert code == 2 and words in stderr and stderr.count("Error:") == 1, (code, stderr)
    assert not (tmp_path / "run").exists()  # nothing run, nothing written
    no_program_left(path)


def test_a_command_that_does_not_exist_is_one_error_line(tmp_path: Path) -> None:
    code, _, stderr = estimate(f"cmd:{tmp_path / 'no-such-program'} --fast", tmp_path / "run")
    assert code == 2 and "cannot start" in stderr and "No such file" in stderr, stderr
    code, _, stderr = estimate("cmd:", tmp_path / "run")
    assert code == 2 and "names no command" in stderr, stderr
