"""Shared plumbing of the CLI commands: one-line errors with exit code 2, the one ending, examples,
option parsing, the default run directory (the options themselves: :mod:`dpaudit.commands.options`).

Every command body runs inside :func:`user_errors`, which turns a user
mistake (:class:`~dpaudit.mechanisms.base.InvalidInputError`, a missing file) into one
line on stderr and exit code 2 — never a traceback.  Tracebacks are also off
globally (``pretty_exceptions_enable=False``): locals can hold the records.
Inside it SIGTERM is handled like Ctrl-C (the results so far are written with
status ``interrupted``; exit 143), and every warning shown is one stderr line
with its text as data.  Every run ends in :func:`finish`: hints, the
``Conclusion:`` line, the exit status of :mod:`dpaudit.verdicts.exit_status`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NoReturn

import typer
from typer.core import TyperGroup

from dpaudit.commands.argv import pair_comma_form
from dpaudit.commands.flags import flag_words
from dpaudit.verdicts.exit_status import (  # the table: EXIT_STATUS
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
)

if TYPE_CHECKING:  # annotations only: --help loads no heavy module
    from dpaudit.result_shapes import FindingRecord
    from dpaudit.run_shapes import RunResults

__all__ = ["RUN_FILES", "is_run_file", "OneLineErrorGroup", "Terminated", "check_not_input", "check_outputs", "check_report_dir", "check_writable",
           "default_out_dir", "epilog", "fail", "files_written", "finish", "info", "input_files",
           "parse_float_list", "progress_mode", "report_findings", "user_errors"]


def epilog(*examples: str, fail_on_violation: bool = True) -> str:
    """A command's help epilog: its examples, then the exit-status table (:mod:`dpaudit.verdicts.exit_status`; without
    what ``--fail-on-violation`` adds when the command has no such option).
    Paragraphs are separated by blank lines, as typer keeps them apart."""
    from dpaudit.verdicts.exit_status import exit_status_help

    return ("Examples:\n\n" + "\n\n".join(examples) + "\n\n"
            + exit_status_help(fail_on_violation=fail_on_violation))


def finish(results: RunResults, *, fail_on_violation: bool) -> None:
    """End a command the one way every command ends (:mod:`dpaudit.verdicts`): the hints for what
    went wrong on stderr, ``Conclusion: …`` as the last line of stdout, and the exit status."""
    from dpaudit.hints import hints
    from dpaudit.verdicts.ending import line
    from dpaudit.verdicts.exit_status import exit_status

    conclusion = results["conclusion"]
    for hint in hints(results):
        info(f"hint: {hint}")
    typer.echo("")
    typer.echo(line(conclusion))
    code = exit_status(conclusion["verdict"], incomplete=conclusion["incomplete"],
                       fail_on_violation=fail_on_violation)
    if code:
        raise typer.Exit(code=code)


def report_findings(findings: list[FindingRecord]) -> None:
    """One stderr line per kind of finding and first error: the parts it hit, how often, the first
    error as quoted data (it is the audited code's text).  Parts that failed alike — every attack's
    repeats on one bad release — share one line."""
    from dpaudit.execution.untrusted import quoted

    groups: dict[tuple[str, str], list[FindingRecord]] = {}
    for f in findings:
        groups.setdefault((str(f["kind"]), str(f.get("error") or "")), []).append(f)
    for (kind, error), same in groups.items():
        tallies = {f"{f['count']} of {f['calls']} {f.get('unit', 'calls')}" for f in same if f.get("calls")}
        tally = f" ({tallies.pop()}{' each' if len(same) > 1 else ''})" if len(tallies) == 1 else ""
        parts = ", ".join(str(f.get("part", "release calls")) for f in same)
        info(f"finding [{kind}] in {parts}{tally}{': first error ' + quoted(error) if error else ''}")


def _printable(text: Any) -> str:
    """``text`` on one line without control characters (stdlib only: loaded for --help too)."""
    return "".join(ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
                   for ch in str(text))


def info(message: str) -> None:
    """Diagnostics go to stderr so stdout stays machine-readable: one line each, whatever the
    message quotes (control characters and line breaks are written as escapes)."""
    typer.echo(_printable(message), err=True)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``Error: message`` on one line to stderr and exit."""
    typer.echo(f"Error: {_printable(' '.join(str(message).split()))}", err=True)
    raise typer.Exit(code=code)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI cancel, ``timeout``): handled like Ctrl-C — results so far written, status
    ``interrupted`` — but with exit status 143."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def _show_warning(message: Any, category: type, filename: str, lineno: int, file: Any = None,
                  line: Any = None) -> None:
    """Warnings shown during a command are one stderr line each, their text as data: a warning
    raised by audited code cannot print lines of its own.  Privacy-leak warnings are not shown here:
    every command collects them and reports each once (``PrivacyLeakWarning: "…"``, and in the report)."""
    if getattr(category, "__name__", "") == "PrivacyLeakWarning":
        return
    info(f"warning: {getattr(category, '__name__', 'Warning')}: {_printable(message)[:300]}")


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Run a command body, mapping user mistakes to one line + exit 2."""
    import signal
    import threading

    from dpaudit.mechanisms.base import InvalidInputError  # here, not at import: `dpaudit --help` loads no numpy

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main else None
    with warnings.catch_warnings():
        # ART warns at import when PyTorch / TensorFlow are absent; keep output clean.
        warnings.filterwarnings("ignore", module=r"art(\..*)?")
        warnings.showwarning = _show_warning
        try:
            yield
        except typer.Exit:
            raise
        except (InvalidInputError, typer.BadParameter) as exc:
            fail(flag_words(exc))  # a run option's mistake names its flag
        except OSError as exc:  # a path the user gave (or its disk) cannot be read or written
            where = f": {exc.filename}" if exc.filename else ""
            fail(f"{exc.strerror or exc}{where}")
        except KeyboardInterrupt as exc:
            terminated = isinstance(exc, Terminated)
            # commands that save partial results said where, just before
            typer.echo("Terminated." if terminated else "Interrupted.", err=True)
            raise typer.Exit(code=EXIT_TERMINATED if terminated else EXIT_INTERRUPTED) from None
        except Exception as exc:  # noqa: BLE001 - a bug in dpaudit itself: said as dpaudit's, one line, exit 3
            fail(internal_error_line(exc), code=EXIT_INCOMPLETE)
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)


def internal_error_line(exc: BaseException) -> str:
    """The one line for an error inside dpaudit that no part caught (the audited code's failures are findings,
    the user's mistakes exit 2): whose it is, what it was, and where its traceback was written."""
    import tempfile
    import time
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    where = "not written"
    try:
        with tempfile.NamedTemporaryFile("w", prefix=f"dpaudit-error-{time.strftime('%Y%m%dT%H%M%S')}-",
                                         suffix=".log", delete=False, encoding="utf-8") as log:
            log.write(text)
            where = log.name
    except OSError:
        pass
    return (f"internal dpaudit error (a bug in dpaudit, not in the audited code): {type(exc).__name__}: "
            f"{str(exc)[:300]}; traceback written to {where} — please report it")


# click's exception classes as typer uses them (newer typer vendors click as typer._click)
_CLICK_EXC = sys.modules[typer.BadParameter.__module__]
_NO_ARGS_IS_HELP = getattr(_CLICK_EXC, "NoArgsIsHelpError", ())
_ABORT = tuple({typer.Abort, getattr(_CLICK_EXC, "Abort", typer.Abort)})


def _plain_flags(command: Any) -> None:
    """A flag (``--force``, ``--help``) shows no value type in ``--help`` (typer writes ``<bool>``): it takes none."""
    original = command.get_help_option

    def help_option(ctx: Any) -> Any:
        option = original(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option
    for param in command.params:
        if getattr(param, "is_flag", False):
            param.metavar = ""


class OneLineErrorGroup(TyperGroup):
    """The root command group: click's usage errors (unknown option, a value of the wrong type,
    an unknown command) become the same one ``Error:`` line and exit code 2 as every other
    user mistake, instead of click's usage block."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in (self, *self.commands.values()):
            _plain_flags(command)

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        extra["windows_expand_args"] = windows_expand_args  # click's own parameter, passed on as it came
        args = pair_comma_form(list(sys.argv[1:] if args is None else args))  # dpaudit.commands.argv
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS_IS_HELP as exc:  # bare `dpaudit`: the help text, as before
            exc.show()
            sys.exit(exc.exit_code)
        except _CLICK_EXC.ClickException as exc:
            cmd = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "dpaudit"
            hint = f" (see {cmd} --help)" if isinstance(exc, _CLICK_EXC.UsageError) else ""
            typer.echo(f"Error: {' '.join(exc.format_message().split())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except _ABORT:
            typer.echo("Aborted.", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def check_writable(path: Path | None, *, directory: bool, option: str) -> None:
    """Fail before any work when ``path`` cannot be created or written (nothing is created here).

    ``directory``: the path is a run directory (it may exist as a directory) rather than a file.
    """
    from dpaudit.mechanisms.base import InvalidInputError

    if path is None:
        return
    path = Path(path)
    if path.exists():
        if directory and not path.is_dir():
            raise InvalidInputError(f"{option} {path} is a file; give a directory")
        if not directory and path.is_dir():
            raise InvalidInputError(f"{option} {path} is a directory; give a file name")
        if not os.access(path, os.W_OK):
            raise InvalidInputError(f"{option} {path} is not writable")
        return
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise InvalidInputError(f"{option} {path}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidInputError(f"{option} {path}: cannot create it in {parent} (not writable)")


# Files a run writes into its --out directory (figures: fig-*.png): a folder holding any of them holds a report.
RUN_FILES = frozenset({"results.json", "results.csv", "report.md", "report.html", "cells.jsonl", "config.json"})


def is_run_file(path: Path) -> bool:
    """Whether ``path`` is one a run writes into its folder (:data:`RUN_FILES` or a figure)."""
    return path.name in RUN_FILES or (path.name.startswith("fig-") and path.suffix == ".png")


def input_files(*, data: Path | None = None, mechanism: str | None = None, python: str | None = None
                ) -> list[Path]:
    """The files a run reads: the --data CSV, a plug-in file named in --mechanism, the --python interpreter."""
    files = [Path(data)] if data is not None else []
    if mechanism and ":" in mechanism:
        left = mechanism.rpartition(":")[0]
        if left.endswith(".py") or "/" in left or "\\" in left:
            files.append(Path(left))
    if python:
        files.append(Path(python))
    return files


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_not_input(path: Path | None, inputs: list[Path], *, directory: bool, option: str) -> None:
    """Refuse an output that would overwrite an input: ``--json`` naming the data CSV (or the plug-in,
    or the interpreter), or an ``--out`` directory holding an input under a name the run writes."""
    from dpaudit.mechanisms.base import InvalidInputError

    if path is None:
        return
    for src in inputs:
        if directory:
            clash = is_run_file(src) and (
                _same(src.parent, Path(path)) or src.parent.absolute() == Path(path).absolute())
        else:
            clash = _same(src, Path(path)) or src.absolute() == Path(path).absolute()
        if clash:
            raise InvalidInputError(f"{option} {path} would overwrite the input file {src}; choose another "
                                    f"{'directory' if directory else 'file'}")


def parse_float_list(text: str, name: str) -> list[float]:
    """Parse ``"0.1,0.5,1"`` into floats (ε lists and the like)."""
    from dpaudit.mechanisms.base import InvalidInputError

    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidInputError(f"{name} must be a comma-separated list of numbers, got {text!r}") from None
    if not values:
        raise InvalidInputError(f"{name} is empty")
    return values


def default_out_dir(kind: str, mechanism: str, eps: str) -> Path:
    """``reports/<UTC time>-<kind>-<mechanism>-eps<E>/`` (mechanism spec made filename-safe); a
    folder that already exists gets a ``-2``, ``-3``, … suffix: a new run never lands in an old one."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(mechanism.split(":")[-1]).name)[:40]
    base = Path("reports") / f"{stamp}-{kind}-{safe}-eps{eps}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def check_report_dir(path: Path, *, force: bool, option: str = "--out", resume: bool = False) -> None:
    """Refuse to write a run into a folder that already holds a report, unless ``force``.

    With ``force`` the old report's files (:func:`is_run_file`)
    are deleted first, so nothing of the old run is left beside the new one.  ``resume``: the
    folder is a sweep to continue; it is left as it is.
    """
    from dpaudit.mechanisms.base import InvalidInputError

    check_writable(path, directory=True, option=option)
    if resume or not path.is_dir():
        return
    old = [p for p in path.iterdir() if is_run_file(p)]
    if not old:
        return
    if not force:
        raise InvalidInputError(f"{option} {path} already holds a report ({', '.join(sorted(p.name for p in old)[:3])}"
                                f"{', …' if len(old) > 3 else ''}); pass --force to replace it, or choose another "
                                f"{option}")
    for p in old:
        p.unlink()


def check_outputs(out_dir: Path, json_path: Path | None, reads: list[Path], *, force: bool,
                  resume: bool = False) -> None:
    """Fail before any work when a run's outputs cannot be written: ``--out`` or ``--json`` would
    overwrite an input (checked before ``--force`` deletes anything), ``--out`` holds a report
    (:func:`check_report_dir`), ``--json`` is not writable."""
    check_not_input(out_dir, reads, directory=True, option="--out")
    check_not_input(json_path, reads, directory=False, option="--json")
    check_report_dir(out_dir, force=force, resume=resume)
    check_writable(json_path, directory=False, option="--json")


def files_written(out_dir: Path, written: dict[str, Path], extra: tuple[Path | None, ...] = ()) -> str:
    """One line naming every file a run wrote: ``wrote 7 files in DIR: results.json, …``."""
    names = [p.name for p in written.values()]
    names = sorted(set(names), key=lambda n: (not n.startswith("results"), not n.startswith("report"), n))
    line = f"wrote {len(names)} files in {out_dir}{'/' if not str(out_dir).endswith('/') else ''}: {', '.join(names)}"
    for path in extra:
        if path is not None:
            line += f"; and {path}"
    return line


def progress_mode(progress: bool, quiet: bool) -> str:
    """``--progress/--no-progress`` and ``--quiet`` as a :mod:`dpaudit.progress` mode."""
    return "off" if quiet or not progress else "auto"
