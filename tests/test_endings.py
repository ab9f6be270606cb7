"""Every command ends the same way: the same ``Conclusion:`` line last on stdout, the documented exit
status, one report folder with the same files and schema, and ``interrupted`` after SIGTERM.

Each of ``attack``, ``audit``, ``estimate-eps`` and ``sweep`` runs on a plug-in that keeps its claim, one
that breaks it and one that segfaults on every call (``tests/plugins/endings.py``), at small fixed budgets
(``--releases``: the same numbers on any machine).  A sweep certifies no verdict: it ends ``NOT TESTED``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app
from dpaudit.verdicts.exit_status import EXIT_STATUS, exit_status, exit_status_help

REPO = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).parent / "plugins" / "endings.py"
COMMON = ["--eps", "1", "--output", "centroids", "--seed", "0", "--timeout", "20", "--no-progress"]
SMALL = {
    "attack": ["--records", "100", "--repeats", "1", "--attack", "yeom", "--releases", "4000"],
    "audit": ["--records", "100", "--attack", "yeom", "--repeats", "1", "--releases", "4000"],
    "estimate-eps": ["--releases", "4000"],
    "sweep": ["--eps", "1,2", "--repeats", "2", "--records", "30", "--clusterers", "none"],
}
# plug-in -> (how the Conclusion line starts, exit status) for the commands that certify a verdict;
# the violating runs pass --fail-on-violation (exit 1), the others run at the defaults.
EXPECTED = {"passing": ("Conclusion: Consistent with ε = 1", 0),
            "violating": ("Conclusion: VIOLATION: the claim ε = 1 cannot hold", 1),
            "crashing": ("Conclusion: INCONCLUSIVE: ", 3)}
SWEEP = {"passing": ("Conclusion: NOT TESTED: ", 0), "violating": ("Conclusion: NOT TESTED: ", 0),
         "crashing": ("Conclusion: NOT TESTED: ", 3)}
FILES = {"results.json", "report.md", "report.html"}


@pytest.mark.parametrize("plugin", sorted(EXPECTED))
@pytest.mark.parametrize("command", sorted(SMALL))
def test_every_command_ends_the_same_way(command: str, plugin: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    fail = ["--fail-on-violation"] if plugin == "violating" and command != "sweep" else []
    res = CliRunner().invoke(app, [command, "-m", f"{PLUGINS}:{plugin}", *COMMON, *SMALL[command], *fail,
                                   "--out", str(out)])
    starts, status = (SWEEP if command == "sweep" else EXPECTED)[plugin]
    lines = res.stdout.rstrip("\n").splitlines()
    assert lines[-1].startswith(starts), res.output
    assert [line for line in lines if line.startswith("Conclusion:")] == [lines[-1]]
    assert res.exit_code == status, (res.exit_code, res.output)
    data = json.loads((out / "results.json").read_text())
    assert data["kind"] == command and data["schema_version"] >= 2 and data["status"] != "running"
    assert lines[-1] == f"Conclusion: {data['conclusion']['text']}"
    assert exit_status(data["conclusion"]["verdict"], incomplete=data["conclusion"]["incomplete"],
                       fail_on_violation=bool(fail)) == status
    assert FILES <= {p.name for p in out.iterdir()}
    if plugin == "crashing":
        assert any(f["kind"] == "crash" for f in data["findings"]), data["findings"]
    if plugin == "violating" and command == "sweep":
        assert "certifies no verdict" in lines[-1]


def test_an_estimate_of_code_that_segfaults_everywhere_does_not_exit_0(tmp_path: Path) -> None:
    """The issue's case: estimate-eps on a plug-in that segfaults on every call exited 0."""
    res = CliRunner().invoke(app, ["estimate-eps", "-m", f"{PLUGINS}:crashing", *COMMON, "--releases", "2000",
                                   "--out", str(tmp_path / "run")])
    assert res.exit_code == 3 and "finding [crash]" in res.stderr, res.output


@pytest.mark.parametrize("command", ["attack", "audit", "estimate-eps", "sweep"])
def test_help_groups_options_and_shows_examples_and_the_exit_status(command: str) -> None:
    res = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "120", "TERMINAL_WIDTH": "120"})
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    for panel in ("What is audited", "Budget", "Execution", "Output", "Examples:", "Exit status:"):
        assert panel in text, (panel, res.output)
    assert f"dpaudit {command} " in text.split("Examples:", 1)[1]
    # a sweep has no --fail-on-violation: its table leaves out what that option adds (status 1, its clause of 3)
    shown = " ".join(exit_status_help(fail_on_violation=command != "sweep").split())
    assert shown in text, res.output
    for code, when in EXIT_STATUS:
        if command != "sweep" or "--fail-on-violation" not in when:
            assert f"{code} {when}" in text, (code, res.output)
    assert ("--fail-on-violation" in text.split("Exit status:", 1)[1]) is (command != "sweep")


def test_the_readme_documents_the_same_exit_status_table() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Exit status", 1)[1].split("\n\n", 2)[1]
    rows = [tuple(c.strip() for c in line.strip("|").split("|")) for line in table.splitlines()[2:]]
    assert rows == [(code, when) for code, when in EXIT_STATUS]


@pytest.mark.parametrize("argv", [
    ["attack", "-m", "ndlaplace", "--eps", "1", "--records", "400", "--repeats", "40", "--attack", "yeom",
     "--epsilon-estimate", "off"],
    ["estimate-eps", "-m", "ndlaplace", "--eps", "1", "--releases", "20000000"],  # ~20 s of work, not a plan cut short
], ids=["attack", "estimate-eps"])
def test_sigterm_leaves_status_interrupted(argv: list[str], tmp_path: Path) -> None:
    """A CI cancel or ``timeout`` sends SIGTERM: results.json used to say ``running`` forever."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", *argv, "--out", str(out), "--no-progress"], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    started = (lambda: (out / "results.json").is_file()) if argv[0] == "attack" else (lambda: True)
    time.sleep(6.0 if argv[0] != "attack" else 0.5)  # past the interpreter's start-up, even on a loaded machine
    while not started() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, (proc.returncode, stderr[-2000:])
    assert stderr.rstrip().splitlines()[-1] == "Terminated." and "Traceback" not in stderr, stderr[-2000:]
    data = json.loads((out / "results.json").read_text())
    assert data["status"] == "interrupted" and data["verdict"] != "no violation found"
    assert not re.search(r"^Conclusion: Consistent", stdout, re.M)


@pytest.mark.parametrize("module", ["attack", "audit", "estimate", "sweep"])
def test_the_help_examples_parse(module: str) -> None:
    """Each example under a command's --help is accepted by the command line's parser as typed."""
    import importlib
    import shlex

    import typer

    examples = importlib.import_module(f"dpaudit.commands.{module}").EXAMPLES
    group = typer.main.get_command(app)
    for example in examples:
        argv = shlex.split(example.split("   (")[0])
        assert argv[0] == "dpaudit", example
        ctx = group.make_context("dpaudit", argv[1:])
        protected = getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", None) or []
        name, sub, rest = group.resolve_command(ctx, [*protected, *ctx.args])
        sub.make_context(name, rest, parent=ctx)
