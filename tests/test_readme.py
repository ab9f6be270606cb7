"""The README and the documentation pages work as typed.

Every command in a fenced block of ``README.md`` and of the pages under ``docs/`` (blocks indented
inside a list item too), and every ``dpaudit …`` in inline code that is a command rather than a
synopsis, must still parse: ``dpaudit`` commands through the CLI's own parser (an unknown option, a
value of the wrong type or an unknown command fails here), benchmark scripts by their options.
Every runnable command carries its time on the 2-core development machine (``… 35 s`` /
``… 1.5 min`` at the end of its comment or of the comment line above it); the README's first screen
(everything above its first ``##`` heading: the two set-up commands and the tour) runs each command
in under a minute.  The fast tier runs the quickest commands and every Python snippet; ``-m slow``
runs the README's tour, then every other command marked under two minutes, README first and then
the pages in the site's order, in a fresh copy of the repository (tracked files only, ``.venv``
pointing at this interpreter's environment, as the first screen's install would leave it).

The two set-up commands are checked against ``.ci/run``: the second is what CI runs (the same
virtual environment, the same extras, the same test command), the first installs the same project
without extras and runs the main job.  The site's getting-started page shows the same two commands
and the same tour as the README, and every link from the README into ``docs/`` reaches a page and,
where it names one, a heading of that page.
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
DOCS = REPO / "docs"
CI = REPO / ".ci" / "run"
# A fence at the left margin or indented inside a list item; the closing fence at the same indent.
FENCE = re.compile(r"^( *)```(\w*)[ \t]*\n(.*?)^\1```[ \t]*$", re.S | re.M)
TIME = re.compile(r"(\d+(?:\.\d+)?)\s?(s|min)\b")
SETUP = ("python3 -m venv", ". .venv/bin/activate", ". .venv-test/bin/activate", "pip install", "python -m pytest")
FAST_SECONDS = 2.0     # run in the fast tier
SLOW_SECONDS = 120.0   # run in the slow tier
MAIN_JOB = "dpaudit attack --mechanism ndlaplace --eps 1"


@dataclass(frozen=True)
class Command:
    text: str
    line: int
    seconds: float | None
    first_screen: bool
    page: str = "README.md"

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text)

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


# Reports written for a library's maintainers: their commands and code run in that library's own environment,
# without dpaudit (the library panel runs each reproduction and its control: benchmarks/bench_libraries.py and
# tests/test_libraries_bench.py), and they quote the library's source as it is.
FOR_MAINTAINERS = DOCS / "findings"


def pages() -> list[Path]:
    """README.md, then the docs pages in the order of the site's navigation (any page the navigation
    does not name after them, sorted); not the reports for other libraries' maintainers (:data:`FOR_MAINTAINERS`)."""
    config = REPO / "mkdocs.yml"
    nav = re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?([\w./-]+\.md)\s*$", config.read_text(encoding="utf-8"), re.M) \
        if config.is_file() else []
    ordered = [DOCS / name for name in nav if (DOCS / name).is_file()]
    rest = sorted(p for p in DOCS.rglob("*.md") if p not in ordered)
    return [p for p in [README, *ordered, *rest] if FOR_MAINTAINERS not in p.parents]


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def fenced_blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, body with the fence's indent removed, line of the body's first line)."""
    out = []
    for m in FENCE.finditer(text):
        indent, lang, body = len(m.group(1)), m.group(2), m.group(3)
        body = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in body.split("\n"))
        out.append((lang, body, text[:m.start()].count("\n") + 2))
    return out


def first_screen_end(text: str) -> int:
    """The README's first screen: everything above its first ``##`` heading."""
    m = re.search(r"^## ", text, re.M)
    return m.start() if m else len(text)


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


def _is_command_block(lang: str, body: str) -> bool:
    return lang == "bash" or (lang == "" and bool(re.search(r"^(dpaudit|python|pip) ", body, re.M)))


def block_lines(body: str, start: int) -> list[tuple[int, str, str, str]]:
    """(line, whole command line, command, comment) of a shell block, continuations joined."""
    out = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line_no, line = start + i, lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i].strip()
        i += 1
        command, comment = _strip_comment(line.strip())
        out.append((line_no, line.strip(), command, comment))
    return out


def readme_commands(text: str | None = None, page: str = "README.md") -> list[Command]:
    """Every command in a page's fenced blocks (bash, or unlabelled blocks of commands)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    screen_end = first_screen_end(text) if page == "README.md" else -1
    out: list[Command] = []
    for lang, body, start in fenced_blocks(text):
        if not _is_command_block(lang, body):
            continue
        above = ""  # the comment lines just above a command
        for line_no, line, command, comment in block_lines(body, start):
            if not line:
                above = ""
                continue
            if not command:
                above += " " + comment
                continue
            seconds = _seconds(comment) if _seconds(comment) is not None else _seconds(above)
            above = ""
            first = page == "README.md" and text[:screen_end].count("\n") + 1 > line_no
            for part in (p.strip() for p in command.split("&&")):
                if part and not part.startswith(SETUP):
                    out.append(Command(" ".join(part.split()), line_no, seconds, first, page))
    return out


def inline_commands(text: str | None = None, page: str = "README.md") -> list[Command]:
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
        out.append(Command(cmd, prose[:m.start()].count("\n") + 1, None, False, page))
    return out


def python_snippets(text: str) -> list[str]:
    return [body for lang, body, _ in fenced_blocks(text) if lang == "python"]


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


PAGES = pages()
TEXTS = {_name(p): p.read_text(encoding="utf-8") for p in PAGES}
ALL = [c for name, text in TEXTS.items() for c in readme_commands(text, name)]
INLINE = [c for name, text in TEXTS.items() for c in inline_commands(text, name)]
RUNNABLE = [c for c in ALL if c.argv[0] in ("dpaudit", "python")]
SNIPPETS = [(name, block) for name, text in TEXTS.items() for block in python_snippets(text)]


def _blocks(page: str) -> list[str]:
    return [body for lang, body, _ in fenced_blocks(TEXTS[page]) if lang == "bash"]


def _readme_setup_and_tour() -> tuple[str, str]:
    """The README's first two shell blocks: the two set-up commands, then the tour."""
    screen = TEXTS["README.md"][:first_screen_end(TEXTS["README.md"])]
    blocks = [body for lang, body, _ in fenced_blocks(screen) if lang == "bash"]
    assert len(blocks) == 2, "the README's first screen holds two shell blocks: the set-up commands and the tour"
    return blocks[0], blocks[1]


TOUR_TEXT = _readme_setup_and_tour()[1]
TOUR = [c for c in readme_commands(f"```bash\n{TOUR_TEXT}```\n", "README.md (tour)") if c.argv[0] == "dpaudit"]


def _once(commands: list[Command]) -> list[Command]:
    """Each command line once (a page may repeat one the README shows), in order."""
    seen: set[str] = set()
    out = []
    for cmd in commands:
        if cmd.text not in seen:
            seen.add(cmd.text)
            out.append(cmd)
    return out


def test_the_pages_have_their_commands() -> None:
    assert len(RUNNABLE) >= 25
    assert len(TEXTS) >= 10, "the docs pages are read"
    first = [c for c in ALL if c.first_screen]
    assert any(c.text == MAIN_JOB for c in first), "the README's first screen shows the main job"
    assert any(c.text == MAIN_JOB for c in TOUR)
    assert len(TOUR) >= 5


def test_the_readme_is_a_front_page() -> None:
    lines = TEXTS["README.md"].count("\n")
    assert lines <= 250, f"README.md has {lines} lines; the front page holds at most 250 (the rest lives in docs/)"


@pytest.mark.parametrize("cmd", ALL + INLINE, ids=str)
def test_every_command_parses(cmd: Command) -> None:
    check_parses(cmd)


def test_every_command_is_timed_and_the_first_screen_is_quick() -> None:
    untimed = [str(c) for c in RUNNABLE if c.seconds is None]
    assert not untimed, "commands without their time:\n" + "\n".join(untimed)
    slow = [str(c) for c in RUNNABLE if c.first_screen and c.seconds >= 60]
    assert not slow, "first-screen commands of a minute or more:\n" + "\n".join(slow)
    assert TOUR and all(c.seconds is not None and c.seconds < 60 for c in TOUR), "every tour command under a minute"


def test_extraction_fails_on_a_broken_command() -> None:
    """The checks above can fail: a stale option, a typo'd command, a missing script — in a page's
    block at the margin and in one indented inside a list item."""
    text = ("```bash\ndpaudit attack --mechanism ndlaplace --eps 1 --no-such-option   # 1 s\n"
            "dpaudit atack --mechanism ndlaplace   # 1 s\npython benchmarks/bench_gone.py --out x   # 1 s\n```\n"
            "1. a step:\n\n   ```bash\n   # the same, in a list     2 min\n"
            "   dpaudit estimate-eps --mechanism ndlaplace \\\n       --no-such-option\n   ```\n")
    broken = readme_commands(text, "docs/x.md")
    assert [c.seconds for c in broken] == [1.0, 1.0, 1.0, 120.0]
    assert broken[-1].text == "dpaudit estimate-eps --mechanism ndlaplace --no-such-option"
    for cmd in broken:
        # AssertionError: an unknown command or script; a usage error of typer's click: an unknown option
        with pytest.raises((AssertionError, typer.BadParameter.__mro__[1])):
            check_parses(cmd)


def printed_lines(block: str) -> list[str]:
    """What a snippet says it prints: the ``# …`` lines under a closing ``# prints:`` line (none: nothing said)."""
    lines = block.rstrip().splitlines()
    if "# prints:" not in lines:
        return []
    at = len(lines) - 1 - lines[::-1].index("# prints:")
    said = lines[at + 1:]
    return [line[2:] for line in said] if said and all(line.startswith("# ") for line in said) else []


def test_python_snippets_run() -> None:
    """Every Python example of the README and the pages runs as typed, and prints what its closing ``# prints:``
    lines say (the figures the page quotes)."""
    assert len(SNIPPETS) >= 3
    for name, block in SNIPPETS:
        proc = subprocess.run([sys.executable, "-W", "error::SyntaxWarning", "-c", block], capture_output=True,
                              text=True, timeout=120, cwd=REPO)
        assert proc.returncode == 0, f"{name}:\n{block}\n{proc.stderr[-1500:]}"
        said = printed_lines(block)
        if said:
            assert proc.stdout.splitlines() == said, f"{name}:\n{block}\nprinted:\n{proc.stdout}"


def test_the_plugin_examples_run_plain_functions_through_the_api() -> None:
    """docs/plugins.md shows a plain function audited from Python (dpaudit.plugin, estimate_epsilon, an attack
    class), with the figures it prints checked above."""
    blocks = [block for name, block in SNIPPETS if name == "docs/plugins.md"]
    assert any("dpaudit.plugin(" in b and "estimate_epsilon(" in b and printed_lines(b) for b in blocks)
    assert any("AttackerKnowledge(" in b and ".infer(" in b for b in blocks)
    assert any("NoPublicBoxWarning" in b for b in blocks)


def test_printed_lines_read_the_closing_comments() -> None:
    assert printed_lines("x = 1\nprint(x)\n# prints:\n# 1\n") == ["1"]
    assert printed_lines("x = 1  # one\nprint(x)\n# a comment, not output\n") == []
    assert printed_lines("print(1)\n# prints:\n# 1\nx = 2\n") == []


def api_modules() -> list[str]:
    """The modules the API reference pages render (``::: module`` in docs/api/*.md)."""
    return sorted({m for page in sorted((DOCS / "api").glob("*.md"))
                   for m in re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), re.M)})


def test_the_api_pages_examples_run() -> None:
    """The docstrings the API pages render are documentation too: their ``>>>`` examples run (doctest)."""
    import doctest
    import importlib

    modules = api_modules()
    assert len(modules) >= 20
    attempted = 0
    for name in modules:
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
        assert result.failed == 0, f"{name}: {result.failed} docstring example(s) failed"
        attempted += result.attempted
    assert attempted >= 10


# ---- the set-up commands are what CI does ------------------------------------------------------------

def _ci_steps() -> list[str]:
    """The commands of .ci/run, in order, without its shell settings."""
    lines = (line.strip() for line in CI.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith(("#", "set ", "cd "))]


def _install_target(step: str) -> str:
    """``pip install [--options] TARGET`` → TARGET (``.`` or ``.[extras]``)."""
    argv = shlex.split(step)
    assert "install" in argv, step
    targets = [a for a in argv[argv.index("install") + 1:] if not a.startswith("-")]
    assert len(targets) == 1, step
    return targets[0]


def _extras(target: str) -> set[str]:
    m = re.fullmatch(r"\.(?:\[([\w,-]*)\])?", target)
    assert m, f"{target}: not this project"
    return set(filter(None, (m.group(1) or "").split(",")))


def _declared_extras() -> set[str]:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([\w-]+)\s*=", section, re.M))


def _setup_commands() -> tuple[list[str], list[str]]:
    setup = _readme_setup_and_tour()[0]
    commands = [command for _, _, command, _ in block_lines(setup, 0) if command]
    assert len(commands) == 2, f"two set-up commands, got {commands}"
    return tuple([p.strip() for p in c.split("&&")] for c in commands)  # type: ignore[return-value]


def test_the_readme_s_test_command_is_what_ci_runs() -> None:
    ci = _ci_steps()
    venv, activate, install, test = _setup_commands()[1]
    assert venv == ci[0] and activate == ci[1], (venv, activate, ci[:2])
    ci_installs = [s for s in ci if " install " in f" {s} " and "--upgrade pip" not in s]
    assert len(ci_installs) == 1, ci_installs
    assert _install_target(install) == _install_target(ci_installs[0]), "the same extras as .ci/run"
    assert _extras(_install_target(install)) <= _declared_extras(), "every extra is declared in pyproject.toml"
    assert "docs" in _extras(_install_target(install)), "the docs extra: the test suite builds the site"
    assert test == ci[-1] == "python -m pytest -q", (test, ci[-1])
    assert ci.index(ci_installs[0]) < len(ci) - 1, ".ci/run installs before it tests"


def test_the_readme_s_first_command_installs_the_project_and_runs_the_main_job() -> None:
    venv, activate, install, job = _setup_commands()[0]
    assert (venv, activate) == ("python3 -m venv .venv", ". .venv/bin/activate")
    assert _install_target(install) == ".", "the project itself, no extras"
    assert job == MAIN_JOB
    scripts = (REPO / "pyproject.toml").read_text(encoding="utf-8").split("[project.scripts]", 1)[1]
    assert re.search(r'^dpaudit\s*=\s*"dpaudit\.cli:main"', scripts, re.M), "pip install . provides `dpaudit`"


def test_the_test_command_leaves_the_main_job_s_environment_alone() -> None:
    """The two set-up commands build two environments: the test extras (diffprivlib pins scikit-learn < 1.8)
    never downgrade what the first command installed, so run in sequence they leave scikit-learn at the
    version the first installed."""
    (venv1, activate1, *_), (venv2, activate2, install2, _) = _setup_commands()
    first, second = venv1.split()[-1], venv2.split()[-1]
    assert first != second, "the test command needs an environment of its own"
    assert activate1 == f". {first}/bin/activate" and activate2 == f". {second}/bin/activate"
    assert "diffprivlib" in _extras(_install_target(install2))
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").split()
    assert f"{second}/" in ignored, f"{second}/ is in .gitignore"


def test_the_site_shows_the_readme_s_set_up_and_tour() -> None:
    setup, tour = _readme_setup_and_tour()
    blocks = _blocks("docs/getting-started.md")
    assert setup in blocks, "docs/getting-started.md shows the README's set-up commands as they are"
    assert tour in blocks, "docs/getting-started.md shows the README's tour as it is"


# ---- links from the README into docs/ --------------------------------------------------------------

def _github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading (what a link from the README into docs/ lands on)."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    prose = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_github_slug(h) for h in re.findall(r"^#+\s+(.+?)\s*$", prose, re.M)}


def test_every_readme_link_into_docs_resolves() -> None:
    """A link from the README lands on a page of docs/ and, where it names one, on a heading of it (or
    of the README itself for ``#…``)."""
    links = re.findall(r"\]\(((?:docs/|#)[^)\s]*)\)", TEXTS["README.md"])
    assert len([link for link in links if link.startswith("docs/")]) >= 10
    for link in links:
        path, _, anchor = link.partition("#")
        target = REPO / path if path else README
        assert target.is_file(), f"README.md links to {path}, which does not exist"
        if anchor:
            assert anchor in _anchors(target), f"README.md: no heading #{anchor} in {_name(target)}"


# ---- running them ------------------------------------------------------------------------------------

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


def _needs_a_built_environment(cmd: Command) -> bool:
    """``--python benchmarks/.venvs/…``: an interpreter a benchmark builds (the library panel's), never
    in a fresh copy; such a command is parsed and timed, and run by its benchmark."""
    argv = cmd.argv
    return "--python" in argv and argv[argv.index("--python") + 1].startswith("benchmarks/.venvs/")


@pytest.mark.parametrize("cmd", [c for c in _once(RUNNABLE) if c.seconds is not None and c.seconds <= FAST_SECONDS
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
def test_the_tour_runs_as_typed(fresh_copy: Path) -> None:
    """The README's tour, in order, each command within four times its mark."""
    env = _env()
    for cmd in TOUR:
        _run(cmd, fresh_copy, env)


@pytest.mark.slow
def test_every_command_under_two_minutes_runs_as_typed(fresh_copy: Path) -> None:
    """README order, then the pages in the site's order (a sweep, then its --resume); each command
    gets four times its mark.  The tour's commands are run by the test above."""
    env = _env()
    tour = {c.text for c in TOUR}
    todo = [c for c in _once(RUNNABLE) if c.seconds is not None and c.seconds <= SLOW_SECONDS
            and c.text not in tour and not _needs_a_built_environment(c)]
    assert len(todo) >= 15
    for cmd in todo:
        _run(cmd, fresh_copy, env)


# ---- the catalogue's tables on the front page ------------------------------------------------------

def _table(text: str, header_start: str) -> dict[str, dict[str, str]]:
    """The rows (by their first cell) of the Markdown table whose header line starts with ``header_start``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    head = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(head, cells))
    return rows


def test_the_readme_s_catalogue_tables_are_the_committed_run() -> None:
    """The coverage and tightness tables on the front page quote benchmarks/results/catalogue.md, the
    output of the command printed above them, figure for figure."""
    readme = TEXTS["README.md"]
    run = (REPO / "benchmarks" / "results" / "catalogue.md").read_text(encoding="utf-8")
    assert "python benchmarks/bench_catalogue.py --force" in readme
    tight_run = _table(run, "| mechanism | claim | true ε | ε_lb 95 %")
    cov_run = _table(run, "| mechanism | claim | true ε | correct")
    tight = _table(readme, "| mechanism | claim | true ε | ε_lb 90 %")
    cov = _table(readme, "| mechanism | true ε (claim) | correct")
    assert set(tight) == set(tight_run) and set(cov) == set(cov_run) and len(tight) >= 20
    for name, row in tight.items():
        ran = tight_run[name]
        peers = [v for v in ran["DP-Sniper LR / MLP"].split(" / ") if v != "–"]
        assert row["ε_lb 90 %"] == ran["ε_lb 90 %"] and row["goal met"] == ran["goal met"], name
        assert row["DP-Sniper (best)"] == (max(peers, key=float) if peers else "–"), name
        assert row["exact ε, best pair"] == ran["exact ε, best input pair"], name
    for name, row in cov.items():
        ran = cov_run[name]
        assert (row["seed 0"], row["flagged / seeds 0–9"], row["ε_lb 90 %, seed 0"], row["lowest, seeds 0–9"]) == (
            ran["verdict (seed 0)"], ran["flagged / seeds"], ran["ε_lb 90 %, seed 0"], ran["lowest over seeds"]), name
