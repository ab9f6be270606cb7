"""Shared plumbing of the CLI commands: one-line errors with exit code 2, consoles, option
parsing, the default run directory.

Every command body runs inside :func:`user_errors`, which turns a user
mistake (:class:`~mechanisms.base.InvalidInputError`, a missing file) into one
line on stderr and exit code 2 — never a traceback.  Tracebacks are also off
globally (``pretty_exceptions_enable=False``): locals can hold the records.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import sys
from pathlib import Path
import warnings
from typing import Iterator, NoReturn

import typer
from typer.core import TyperGroup

__all__ = ["EXIT_USAGE", "EXIT_VIOLATION", "OneLineErrorGroup", "check_report_dir", "check_writable",
           "default_out_dir", "fail", "files_written", "info", "parse_float_list", "progress_mode", "user_errors"]

EXIT_USAGE = 2
EXIT_VIOLATION = 1


def info(message: str) -> None:
    """Diagnostics go to stderr so stdout stays machine-readable."""
    typer.echo(message, err=True)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``Error: message`` on one line to stderr and exit."""
    typer.echo(f"Error: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(code=code)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Run a command body, mapping user mistakes to one line + exit 2."""
    from mechanisms.base import InvalidInputError  # here, not at import: `dpaudit --help` loads no numpy

    with warnings.catch_warnings():
        # ART warns at import when PyTorch / TensorFlow are absent; keep output clean.
        warnings.filterwarnings("ignore", module=r"art(\..*)?")
        try:
            yield
        except typer.Exit:
            raise
        except (InvalidInputError, typer.BadParameter) as exc:
            fail(str(exc))
        except OSError as exc:  # a path the user gave (or its disk) cannot be read or written
            where = f": {exc.filename}" if exc.filename else ""
            fail(f"{exc.strerror or exc}{where}")
        except KeyboardInterrupt:
            typer.echo("Interrupted.", err=True)  # commands that save partial results said where, just before
            raise typer.Exit(code=130) from None


# click's exception classes as typer uses them (newer typer vendors click as typer._click)
_CLICK_EXC = sys.modules[typer.BadParameter.__module__]
_NO_ARGS_IS_HELP = getattr(_CLICK_EXC, "NoArgsIsHelpError", ())
_ABORT = tuple({typer.Abort, getattr(_CLICK_EXC, "Abort", typer.Abort)})


class OneLineErrorGroup(TyperGroup):
    """The root command group: click's usage errors (unknown option, a value of the wrong type,
    an unknown command) become the same one ``Error:`` line and exit code 2 as every other
    user mistake, instead of click's usage block."""

    def main(self, args=None, prog_name=None, complete_var=None,  # type: ignore[no-untyped-def, override]
             standalone_mode: bool = True, **extra):
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
    from mechanisms.base import InvalidInputError

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


def parse_float_list(text: str, name: str) -> list[float]:
    """Parse ``"0.1,0.5,1"`` into floats (ε lists and the like)."""
    from mechanisms.base import InvalidInputError

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


# What a run writes into its folder: a folder holding any of these holds a report.
REPORT_FILES = ("results.json", "results.csv", "report.md", "report.html", "cells.jsonl", "config.json")


def check_report_dir(path: Path, *, force: bool, option: str = "--out", resume: bool = False) -> None:
    """Refuse to write a run into a folder that already holds a report, unless ``force``.

    With ``force`` the old report's files (those in :data:`REPORT_FILES` and its ``fig-*.png``)
    are deleted first, so nothing of the old run is left beside the new one.  ``resume``: the
    folder is a sweep to continue; it is left as it is.
    """
    from mechanisms.base import InvalidInputError

    check_writable(path, directory=True, option=option)
    if resume or not path.is_dir():
        return
    old = [p for p in path.iterdir() if p.name in REPORT_FILES or (p.name.startswith("fig-") and p.suffix == ".png")]
    if not old:
        return
    if not force:
        raise InvalidInputError(f"{option} {path} already holds a report ({', '.join(sorted(p.name for p in old)[:3])}"
                                f"{', …' if len(old) > 3 else ''}); pass --force to replace it, or choose another "
                                f"{option}")
    for p in old:
        p.unlink()


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
