"""``dpaudit report RESULTS.json --format html|md|all``: re-render a stored run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from dpaudit.commands.options import Force, out_option
from dpaudit.commands.support import check_not_input, check_report_dir, info, user_errors

_CHOICES = {"html": ("html",), "md": ("md",), "csv": ("csv",), "all": ("md", "html", "csv")}


def report(
    results: Annotated[Path, typer.Argument(help="A results.json written by dpaudit (or its run directory).")],
    format: Annotated[str, typer.Option("--format", "-f", help="html, md, csv or all.")] = "html",
    out: Annotated[Optional[Path], out_option(
        "Directory to write into (default: beside RESULTS.json); refused when it holds another run's report "
        "unless --force. A copy of RESULTS.json goes with the report, so the folder describes one run.")] = None,
    force: Force = False,
) -> None:
    """Re-render a stored results.json as report.html / report.md (+ figures) / results.csv.

    Beside RESULTS.json the run's own report is re-rendered; into another folder (--out) the report and a copy of
    RESULTS.json are written, and a folder that already holds a report is never overwritten silently (--force
    replaces it)."""
    with user_errors():
        from dpaudit.mechanisms.base import InvalidInputError
        from dpaudit.report import load_results, render_report

        if format not in _CHOICES:
            raise InvalidInputError(f"--format must be one of {', '.join(_CHOICES)}; got {format!r}")
        if results.is_dir() and (results / "results.json").is_file():  # a run directory
            results = results / "results.json"
        data = load_results(results)
        formats = _CHOICES[format]
        if out is not None and not _same_folder(out, results.parent):
            check_not_input(out, [results], directory=True, option="--out")
            check_report_dir(out, force=force)
            formats = ("json", *formats)  # the report's own results beside it: one folder, one run
        try:
            written = render_report(data, out or results.parent, formats)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            # A results.json edited by hand (or truncated) no longer has the shape dpaudit wrote.
            raise InvalidInputError(f"{results} is not a results.json as dpaudit writes it "
                                    f"({type(exc).__name__}: {exc}); re-run the command that made it") from None
        for kind, path in written.items():
            info(f"wrote {kind}: {path}")
        if not written:
            info("nothing to write (no raw repeats for csv)")


def _same_folder(a: Path, b: Path) -> bool:
    """Whether ``a`` is the folder ``b`` (the stored run's own: re-rendering there replaces its own report)."""
    try:
        return a.exists() and a.samefile(b)
    except OSError:
        return a.absolute() == b.absolute()


def register(app: typer.Typer) -> None:
    app.command("report")(report)
