"""The README works as typed.

Every command in a fenced block of ``README.md`` (and every ``dpaudit …`` in inline code that is
a command rather than a synopsis) must still parse: ``dpaudit`` commands through the CLI's own
parser (an unknown option, a value of the wrong type or an unknown command fails here), benchmark
scripts by their ``--help``.  Every runnable command carries its time on the 2-core development
machine (``… 35 s`` / ``… 1.5 min`` at the end of its comment or of the comment line above it);
the first screen's commands each finish in under a minute.  The fast tier runs the quickest
commands and every Python snippet; ``-m slow`` runs every command marked under two minutes, in
README order, in a fresh copy of the repository (tracked files only, ``.venv`` pointing at this
interpreter's environment, as the first screen's install would leave it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
TIME = re.compile(r"(\d+(?:\.\d+)?)\s?(s|min)\b")
SETUP = ("python3 -m venv", ". .venv/bin/activate", "pip install", "python -m pytest")
FAST_SECONDS = 2.0     # run in the fast tier
SLOW_SECONDS = 120.0   # run in the slow tier


@dataclass(frozen=True)
class Command:
    text: str
    line: int
    seconds: float | None
    first_screen: bool

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text)

    def __str__(self) -> str:
        return f"README.md:{self.line}: {self.text}"


def _seconds(comment: str) -> float | None:
    found = TIME.findall(comment)
    if not found:
        return None
    value, unit = found[-1]
    return float(value) * (60.0 if unit == "min" else 1.0)


def _strip_comment(line: str) -> tuple[str, str]:
    """(command, comment): a comment starts at `` #`` outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if ch in "\"'" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:]
    return line.rstrip(), ""


def readme_commands(text: str | None = None) -> list[Command]:
    """Every command in the README's fenced blocks (bash, or unlabelled blocks of commands)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    first_screen_end = text.find("\nContents:")
    out: list[Command] = []
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        if lang not in ("bash", "") or (lang == "" and not re.search(r"^(dpaudit|python|pip) ", body, re.M)):
            continue
        start = text[:m.start()].count("\n") + 2
        above = ""  # the comment lines just above a command
        lines = body.splitlines()
        i = 0
        while i < len(lines):
            line_no, line = start + i, lines[i]
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
            if not line.strip():
                above = ""
                continue
            command, comment = _strip_comment(line.strip())
            if not command:
                above += " " + comment
                continue
            seconds = _seconds(comment) if _seconds(comment) is not None else _seconds(above)
            above = ""
            for part in (p.strip() for p in command.split("&&")):
                if part and not part.startswith(SETUP):
                    out.append(Command(" ".join(part.split()), line_no, seconds,
                                       0 <= m.start() < first_screen_end))
    return out


def inline_commands(text: str | None = None) -> list[Command]:
    """``dpaudit …`` in inline code outside fences that is a runnable command (not a synopsis with
    NAME / DIR placeholders, alternatives or optional brackets)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out = []
    for m in re.finditer(r"`(dpaudit [^`]+)`", prose):
        cmd = " ".join(m.group(1).split())
        if (re.search(r"[|\[\]…]|\.\.\.|->|\b[A-Z][A-Z0-9_]*\b", cmd) or " --" not in cmd
                or "--help" in cmd):
            continue  # a synopsis, a bare command name or a help request: not a command to check
        out.append(Command(cmd, prose[:m.start()].count("\n") + 1, None, False))
    return out


def check_parses(cmd: Command) -> None:
    """The command line is accepted by its parser (nothing runs)."""
    argv = cmd.argv
    if argv[0] == "dpaudit":
        from dpaudit.cli import app

        group = typer.main.get_command(app)
        ctx = group.make_context("dpaudit", argv[1:])
        protected = getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", None) or []
        args = [*protected, *ctx.args]
        if not args:
            return
        name, sub, rest = group.resolve_command(ctx, args)
        assert sub is not None, f"{cmd}: unknown command"
        sub.make_context(name, rest, parent=ctx)
        return
    assert argv[0] == "python" and argv[1].startswith("benchmarks/"), f"{cmd}: not a command this test knows"
    script = REPO / argv[1]
    assert script.is_file(), f"{cmd}: {argv[1]} does not exist"
    # The script's argparse options, read from its source (importing it would load numpy and friends).
    source = script.read_text(encoding="utf-8")
    options = set(re.findall(r"add_argument\(\s*[\"'](--[\w-]+)[\"']", source))
    options |= {"--force"} if "add_force(" in source else set()
    subcommands = set(re.findall(r"add_parser\(\s*[\"'](\w+)[\"']", source))
    if subcommands:
        assert argv[2:3] and argv[2] in subcommands, f"{cmd}: needs one of {sorted(subcommands)}"
    for option in (a.split("=")[0] for a in argv[2:] if a.startswith("--")):
        assert option in options, f"{cmd}: {option} is not an option of {argv[1]}"


ALL = readme_commands()
RUNNABLE = [c for c in ALL if c.argv[0] in ("dpaudit", "python")]


def test_the_readme_has_its_commands() -> None:
    assert len(RUNNABLE) >= 25
    first = [c for c in ALL if c.first_screen]
    assert any(c.text == "dpaudit attack --mechanism ndlaplace --eps 1" for c in first)


@pytest.mark.parametrize("cmd", ALL + inline_commands(), ids=str)
def test_every_command_parses(cmd: Command) -> None:
    check_parses(cmd)


def test_every_command_is_timed_and_the_first_screen_is_quick() -> None:
    untimed = [str(c) for c in RUNNABLE if c.seconds is None]
    assert not untimed, "commands without their time:\n" + "\n".join(untimed)
    slow = [str(c) for c in RUNNABLE if c.first_screen and c.seconds >= 60]
    assert not slow, "first-screen commands of a minute or more:\n" + "\n".join(slow)


def test_extraction_fails_on_a_broken_command() -> None:
    """The checks above can fail: a stale option, a typo'd command, a missing script."""
    text = ("```bash\ndpaudit attack --mechanism ndlaplace --eps 1 --no-such-option   # 1 s\n"
            "dpaudit atack --mechanism ndlaplace   # 1 s\npython benchmarks/bench_gone.py --out x   # 1 s\n```\n")
    broken = readme_commands(text)
    assert [c.seconds for c in broken] == [1.0, 1.0, 1.0]
    for cmd in broken:
        with pytest.raises(Exception):
            check_parses(cmd)


def test_python_snippets_run() -> None:
    blocks = [m.group(2) for m in FENCE.finditer(README.read_text(encoding="utf-8")) if m.group(1) == "python"]
    assert len(blocks) >= 3
    for block in blocks:
        proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=120,
                              cwd=REPO)
        assert proc.returncode == 0, f"{block}\n{proc.stderr[-1500:]}"


def _expected_exit(cmd: Command) -> set[int]:
    return {0, 1} if "--fail-on-violation" in cmd.argv else {0}


def _run(cmd: Command, cwd: Path, env: dict[str, str]) -> None:
    limit = max(60.0, 4 * (cmd.seconds or 60.0))
    proc = subprocess.run(cmd.argv, capture_output=True, text=True, timeout=limit, cwd=cwd, env=env)
    assert proc.returncode in _expected_exit(cmd), f"{cmd}\nexit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, f"{cmd}\n{proc.stderr[-2000:]}"


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}


@pytest.mark.parametrize("cmd", [c for c in RUNNABLE if c.seconds is not None and c.seconds <= FAST_SECONDS
                                 and "--resume" not in c.argv   # a --resume needs its sweep first
                                 and not any(a.startswith("examples/")
                                             for a in c.argv)],  # repo files: run in the fresh copy below
                         ids=str)
def test_the_quickest_commands_run(cmd: Command, tmp_path: Path) -> None:
    assert shutil.which("dpaudit", path=_env()["PATH"]), "dpaudit is not installed in this environment"
    _run(cmd, tmp_path, _env())


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tracked files of this checkout in a new folder, with ``.venv`` → this environment."""
    dest = tmp_path_factory.mktemp("clone") / "dpaudit"
    files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, cwd=REPO, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    (dest / ".venv").symlink_to(Path(sys.prefix))
    return dest


@pytest.mark.slow
def test_every_command_under_two_minutes_runs_as_typed(fresh_copy: Path) -> None:
    """README order matters (a sweep, then its --resume); each command gets four times its mark."""
    env = _env()
    todo = [c for c in RUNNABLE if c.seconds is not None and c.seconds <= SLOW_SECONDS]
    assert len(todo) >= 15
    for cmd in todo:
        _run(cmd, fresh_copy, env)
