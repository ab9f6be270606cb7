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

__all__ = ["EXIT_USAGE", "EXIT_VIOLATION", "OneLineErrorGroup", "check_writable", "default_out_dir", "fail", "info",
           "parse_float_list", "user_errors"]

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
    """``reports/<UTC time>-<kind>-<mechanism>-eps<E>/`` (mechanism spec made filename-safe)."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(mechanism.split(":")[-1]).name)[:40]
    return Path("reports") / f"{stamp}-{kind}-{safe}-eps{eps}"
