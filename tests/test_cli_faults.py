"""Fault injection through the command line: every fault of ``tests/plugins/faults.py`` against every command.

Each run must end with the fault as a *finding* (its kind, how often, the first error) in
the written results, an exit code that follows from the verdict — never 0 under
``--fail-on-violation`` when a blocking finding exists, never a traceback — and the auditor
alive.  The verdict itself may be a violation (the fault plug-ins add Laplace noise to the
records and claim add/remove ε, which a points release cannot honour: its size reveals n);
what a fault may never do is leave "no violation found" standing.

The fast tier runs each fault against one command (round-robin over the commands); the
slow tier runs the whole matrix.  The audited code runs in a worker process (plug-ins
always do): hangs get a 0.5 s timeout, everything else a generous 20 s so that a loaded
machine cannot turn a slow call into a timeout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

FAULTS_PY = Path(__file__).parent / "plugins" / "faults.py"
COMMANDS = ("attack", "sweep", "estimate-eps", "audit")
EXIT = {"violation": 1, "inconclusive": 3, "no violation found": 0}

# fault -> (finding kinds it must produce, extra options)
FAULTS: dict[str, tuple[set[str], list[str]]] = {
    "hangs": ({"timeout"}, []),
    "raises_on_call_5": ({"raises"}, []),
    "nan_sometimes": ({"non-finite"}, []),  # a note: NaN is part of the release
    "wrong_shape": ({"wrong-shape"}, []),
    "exits": ({"crash"}, []),
    "sys_exit_0": ({"crash"}, []),
    "segfault": ({"crash"}, []),
    "in_place_ndlaplace": ({"mutates-input"}, []),
    "stateful": ({"nondeterministic"}, []),
    "impossible_allocation": ({"crash"}, []),
    "huge_allocation": ({"crash"}, ["--memory-limit", "1G"]),  # 2 GiB asked for, 1 GiB allowed
}
FAST = {fault: COMMANDS[i % len(COMMANDS)] for i, fault in enumerate(FAULTS)}


def _args(command: str, spec: str, out: Path) -> list[str]:
    """The command at its smallest: tiny data, few samples, one repeat; results under ``out``; ``--output points``
    stated, so that a release of another shape is the code's fault (unstated, it is the caller's mistake: exit 2)."""
    return [*_command_args(command, spec, out), "--output", "points"]


def _command_args(command: str, spec: str, out: Path) -> list[str]:
    if command == "attack":
        return ["attack", "-m", spec, "--eps", "1", "--records", "100", "--repeats", "1", "--attack", "yeom",
                "--releases", "4000", "--out", str(out), "--fail-on-violation"]
    if command == "sweep":
        return ["sweep", "-m", spec, "--eps", "1,2", "--repeats", "2", "--records", "30", "--clusterers", "none",
                "--out", str(out)]
    if command == "estimate-eps":
        return ["estimate-eps", "-m", spec, "--eps", "1", "--samples", "200", "--records", "10", "--max-pairs", "1",
                "--out", str(out), "--fail-on-violation"]
    return ["audit", "-m", spec, "--eps", "1", "--records", "100", "--samples", "200", "--attack", "yeom",
            "--repeats", "1", "--out", str(out), "--fail-on-violation"]


def check_fault(command: str, fault: str, tmp_path: Path) -> None:
    kinds, extra = FAULTS[fault]
    out = tmp_path / "run"
    timeout = ["--timeout", "0.5" if fault.startswith("hang") else "20"]
    res = CliRunner().invoke(app, _args(command, f"{FAULTS_PY}:{fault}", out) + timeout + extra + ["--no-progress"])
    assert "Traceback" not in res.output and "Traceback" not in res.stderr, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    results = json.loads((out / "results.json").read_text())  # written whatever happened
    findings = results["findings"]
    found = {f["kind"] for f in findings}
    assert kinds <= found, (found, res.stderr)
    for f in findings:  # kind, how often, the first error
        assert f["count"] >= 1 and f["calls"] >= f["count"] and 0 < f["share"] <= 1 and f["error"], f
        assert f"finding [{f['kind']}]" in res.stderr
    blocking = any(f["blocking"] for f in findings)
    last = res.stdout.rstrip().splitlines()[-1]
    if command == "sweep":  # no verdict: an incomplete or unclean sweep exits 3
        assert res.exit_code == (3 if blocking else 0), (res.exit_code, res.output)
        assert results["complete_and_clean"] is (not blocking)
        assert last.startswith("Conclusion: NOT TESTED") and ("incomplete" in last) is blocking, last
        return
    verdict = results["verdict"]
    assert res.exit_code == EXIT[verdict], (res.exit_code, verdict, res.output)
    if blocking:
        assert verdict != "no violation found"  # a fault never passes for a clean run
    words = {"violation": "Conclusion: VIOLATION", "inconclusive": "Conclusion: INCONCLUSIVE",
             "no violation found": "Conclusion: Consistent with"}[verdict]
    assert last.startswith(words), res.stdout  # every command ends in the same line


@pytest.mark.parametrize("fault, command", sorted(FAST.items()))
def test_each_fault_is_a_finding_with_its_exit_code(fault: str, command: str, tmp_path: Path) -> None:
    check_fault(command, fault, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_fault_against_every_command(fault: str, command: str, tmp_path: Path) -> None:
    if FAST[fault] == command:
        pytest.skip("in the fast tier")
    check_fault(command, fault, tmp_path)


def test_sys_exit_0_does_not_pass_fail_on_violation(tmp_path: Path) -> None:
    """The issue's case: a plug-in calling sys.exit(0) used to end the auditor with exit 0."""
    res = CliRunner().invoke(app, _args("estimate-eps", f"{FAULTS_PY}:sys_exit_0", tmp_path / "run")
                             + ["--no-progress"])
    assert res.exit_code == 3 and "finding [crash]" in res.stderr and "SystemExit 0" in res.stderr


def test_intermittent_failure_makes_a_clean_verdict_inconclusive(tmp_path: Path) -> None:
    """Without the fault the attack verdict is "no violation found"; one failed call makes it inconclusive.
    (nD-Laplace under its metric claim: a points release of one point per record reveals n under add-remove.)"""
    metric = ["--no-progress", "--neighbours", "metric"]
    clean = CliRunner().invoke(app, _args("attack", f"{FAULTS_PY}:honest_metric", tmp_path / "clean") + metric)
    assert clean.exit_code == 0 and "Conclusion: Consistent with" in clean.stdout, clean.output
    res = CliRunner().invoke(app, _args("attack", f"{FAULTS_PY}:metric_raises_on_call_5", tmp_path / "run")
                             + metric + ["--attack", "yeom,reconstruction"])
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res.exit_code == 3 and data["verdict"] == "inconclusive" and data["measured"]
    failed = [f for f in data["findings"] if f["kind"] == "incomplete"]
    assert failed and failed[0]["unit"] == "repeats" and "call 5 fails" in failed[0]["error"]


@pytest.mark.parametrize("command", ["estimate-eps", "audit"])
def test_code_that_never_answers_costs_about_one_timeout_per_part(command: str, tmp_path: Path) -> None:
    """The report: a plug-in that always sleeps kept ``audit --timeout 20`` at 0 % for minutes.  Now each
    part (the audit's smoke test, ε estimation, attacks, utility) spends one timeout and stops."""
    import time

    timeout = 2.0
    t0 = time.perf_counter()
    res = CliRunner().invoke(app, _args(command, f"{FAULTS_PY}:hangs", tmp_path)
                             + ["--timeout", str(timeout), "--no-progress"])
    elapsed = time.perf_counter() - t0
    assert res.exit_code == EXIT["inconclusive"], res.output
    assert elapsed < 10 * timeout, elapsed  # 1 timeout (estimate-eps) or 4 (audit), plus start-up and reports
    results = json.loads((tmp_path / "results.json").read_text())
    timeouts = [f for f in results["findings"] if f["kind"] == "timeout"]
    assert results["verdict"] == "inconclusive" and timeouts
    assert sum(f["count"] for f in timeouts) <= 4 and all(f["dropped"] == f["count"] for f in timeouts)
