"""Help that is true: what every command's ``--help`` says, it does.

* every example in an ``Examples:`` epilog parses, and names only files a checkout has (or the README's
  ``.venv``); the slow tier runs each one as typed, in a copy of the repository;
* one option, one short flag: a long option two commands share has the same short flag on both, and the
  house short flags (``-m -d -n -o -p -j -q -r``) are on every command that has their option;
* every command that writes results takes ``--json``;
* a help text documents only what its command accepts (no ``--fail-on-violation`` statuses on a command
  without the option), and a flag shows no value type (``<bool>``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from dpaudit.cli import app
from dpaudit.commands import attack, audit, estimate, sweep

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
GROUP: Any = typer.main.get_command(app)
COMMANDS = {name: GROUP.commands[name] for name in GROUP.commands}
WRITE_RESULTS = ("attack", "audit", "estimate-eps", "sweep")
HOUSE_SHORT = {"--mechanism": "-m", "--dataset": "-d", "--records": "-n", "--out": "-o", "--param": "-p",
               "--n-jobs": "-j", "--quiet": "-q", "--repeats": "-r"}

EXAMPLES = [(module.__name__.rsplit(".", 1)[-1], text) for module in (attack, audit, estimate, sweep)
            for text in module.EXAMPLES]


def _command_line(example: str) -> list[str]:
    """The command of an example: everything before the three spaces and the explanation in parentheses."""
    return shlex.split(example.split("   (", 1)[0])


def _options(command: Any) -> dict[str, list[str]]:
    """Each long option of ``command`` → its short flags."""
    out: dict[str, list[str]] = {}
    for param in command.params:
        names = [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]
        shorts = sorted(n for n in names if not n.startswith("--"))
        for name in names:
            if name.startswith("--"):
                out[name] = shorts
    return out


def test_every_command_has_examples() -> None:
    assert {name for name, _ in EXAMPLES} == {"attack", "audit", "estimate", "sweep"}
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("example", [e for _, e in EXAMPLES], ids=lambda e: " ".join(_command_line(e)[:4]))
def test_every_example_parses_and_names_files_that_exist(example: str) -> None:
    argv = _command_line(example)
    assert argv[0] == "dpaudit"
    command = COMMANDS[argv[1]]
    command.make_context(argv[1], argv[2:])  # an unknown option or a bad value raises here
    for arg in argv[2:]:
        path = arg.partition(":")[0] if ".py:" in arg else arg
        if "/" in path and not path.startswith(("reports/", "tcp:")):
            assert path == ".venv/bin/python" or (REPO / path).exists(), f"{example}: {path} does not exist"


def test_one_option_one_short_flag() -> None:
    seen: dict[str, dict[str, list[str]]] = {}
    for name, command in COMMANDS.items():
        for option, shorts in _options(command).items():
            seen.setdefault(option, {})[name] = shorts
            if option in HOUSE_SHORT:
                assert HOUSE_SHORT[option] in shorts, f"dpaudit {name} {option} lacks {HOUSE_SHORT[option]}"
    for option, by_command in seen.items():
        assert len({tuple(s) for s in by_command.values()}) == 1, f"{option}: {by_command}"


@pytest.mark.parametrize("name", WRITE_RESULTS)
def test_every_command_that_writes_results_takes_json(name: str) -> None:
    assert "--json" in _options(COMMANDS[name])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_shows_no_bool_and_only_what_the_command_accepts(name: str) -> None:
    result = runner.invoke(app, [name, "--help"], terminal_width=100)
    assert result.exit_code == 0
    assert "<bool>" not in result.output
    command = COMMANDS[name]
    texts = [command.epilog or "", *(getattr(p, "help", None) or "" for p in command.params)]
    for option in set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", " ".join(texts))):
        assert option in _options(command), f"dpaudit {name} --help mentions {option}, not its option"


def test_root_help_shows_no_bool() -> None:
    assert "<bool>" not in runner.invoke(app, ["--help"]).output


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tracked files in a new folder, ``.venv`` → this environment (as the README's first command leaves it)."""
    dest = tmp_path_factory.mktemp("help") / "dpaudit"
    files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, cwd=REPO, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    (dest / ".venv").symlink_to(Path(sys.prefix))
    return dest


@pytest.mark.slow
@pytest.mark.parametrize("example", [e for _, e in EXAMPLES], ids=lambda e: " ".join(_command_line(e)[:4]))
def test_every_example_runs_as_typed(example: str, checkout: Path) -> None:
    argv = _command_line(example)
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=checkout, env=env)
    allowed = {0, 1} if "--fail-on-violation" in argv else {0}
    assert proc.returncode in allowed, f"{example}\nexit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr
