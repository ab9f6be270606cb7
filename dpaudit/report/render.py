"""Write a results dict as ``results.json``, ``report.md`` (+ PNGs), ``report.html`` and ``results.csv``.

The results dict is plain JSON-able data (see :mod:`dpaudit.report`); every
writer is atomic (temporary file, then rename), so an interrupted run never
leaves a half-written file behind.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, cast

import numpy as np

from dpaudit.run_shapes import RunResults

from .banner import banner, figures, rounded_prose, verdict_of
from .curve_sections import curve_columns
from .error_log import LOG_NAME, error_log
from .figures import Figure, all_figures
from .markdown import markdown_text
from .section import Section
from .sections import build_sections, headline, is_number, numeric_columns, provenance_section

__all__ = ["FORMATS", "SCHEMA_FILE", "SCHEMA_VERSION", "load_results", "render_report", "results_schema", "to_jsonable",
           "write_csv", "write_json"]

FORMATS: tuple[str, ...] = ("json", "md", "html", "csv")
_UMASK = os.umask(0)
os.umask(_UMASK)


def to_jsonable(obj: Any) -> Any:
    """Plain JSON data: numpy scalars/arrays to Python, NaN to null, ±inf to "inf"/"-inf"."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if obj is None or isinstance(obj, (str, int)):
        return obj
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return str(obj)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


SCHEMA_VERSION = 2  # of results.json, the same for every command (2: estimate-eps writes one too; "conclusion")
# The JSON Schema (draft 2020-12) of that version: each command's top level, the verdict words, the conclusion, the
# claim, the findings (tests/test_results_schema.py validates every committed results.json against it).
SCHEMA_FILE = Path(__file__).with_name("schema") / "results.schema.json"


def results_schema() -> dict[str, Any]:
    """The JSON Schema of ``results.json`` at :data:`SCHEMA_VERSION` (:data:`SCHEMA_FILE`), for a validator such as
    ``jsonschema.Draft202012Validator``."""
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


def write_json(results: RunResults, path: str | Path) -> Path:
    """Write ``results`` as indented JSON (atomic), stamped with :data:`SCHEMA_VERSION`."""
    path = Path(path)
    stamped = {"schema_version": SCHEMA_VERSION, **{k: v for k, v in results.items() if k != "schema_version"}}
    text = json.dumps(to_jsonable(stamped), indent=2, ensure_ascii=False, allow_nan=False)
    _atomic_write(path, (text + "\n").encode("utf-8"))
    return path


RESULT_KINDS: tuple[str, ...] = ("attack", "sweep", "audit", "estimate-eps")


def load_results(path: str | Path) -> RunResults:
    """Read a ``results.json`` written by dpaudit."""
    from dpaudit.mechanisms.base import InvalidInputError
    path = Path(path)
    if path.is_dir():  # a run directory: its results.json
        if not (path / "results.json").is_file():
            raise InvalidInputError(f"{path} is a directory without a results.json; give a run's results.json")
        path = path / "results.json"
    if not path.is_file():
        raise InvalidInputError(f"results file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"{path} is not a JSON results file: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} is not a dpaudit results file (top level is not an object)")
    if data.get("kind") not in RESULT_KINDS:
        raise InvalidInputError(f"{path} is not a dpaudit results.json (no 'kind' of {', '.join(RESULT_KINDS)}); "
                                "give the results.json a run of one of these commands wrote (an estimate-eps "
                                "--json file from before version 2 has no report: run it again)")
    return cast(RunResults, data)  # JSON a dpaudit run wrote, of a known kind: the report reads it defensively


def raw_rows(results: RunResults) -> list[dict[str, Any]]:
    """Raw repeats for results.csv: the sweep's cells, else one row per attack."""
    sweep = results.get("sweep") or {}
    rows: list[dict[str, Any]] = []
    for cell in sweep.get("cells") or []:
        row = {k: v for k, v in cell.items() if k != "metrics" and not isinstance(v, (list, dict))}
        row.update(cell.get("metrics") or {})
        rows.append(row)
    if rows:
        return rows
    if results.get("kind") == "estimate-eps":  # the candidate pairs the search tried, one row each
        return [{k: v for k, v in c.items() if not isinstance(v, (list, dict))}
                for c in results.get("candidates") or [] if isinstance(c, dict)]
    for a in results.get("attacks") or []:
        if isinstance(a, dict):
            rows.append({k: v for k, v in a.items() if not isinstance(v, (list, dict))})
    return rows


def run_columns(results: RunResults) -> dict[str, Any]:
    """The columns every line of ``results.csv`` starts with: the run's verdict (its word, as the banner and the
    ``Conclusion:`` line say it) and the certified figures it rests on — the claimed ε, the run's certified ε lower
    bound and its confidence, as numbers (none of these for a run without a verdict); a claim in a notion adds its
    certified figures (:func:`~dpaudit.report.curve_sections.curve_columns`)."""
    verdict = verdict_of(results)
    if verdict is None:
        return {}
    exact = figures(results)
    claim = exact["claim"]
    return {"run_verdict": verdict.word,
            "run_claim_epsilon": " ".join(str(e) for e in claim) if isinstance(claim, list) else claim,
            "run_epsilon_lower_bound": exact["bound"], "run_confidence": exact["confidence"],
            **curve_columns(results)}


def _cell_text(column: list[Any]) -> Callable[[Any], str]:
    """How a column's cells are written (as ``pandas.DataFrame.to_csv`` wrote them before): a
    column of numbers with a gap or a fraction is a float column (3 is written ``3.0``); a gap
    is an empty cell; anything else is ``str`` of the value."""
    present = [v for v in column if v is not None]
    numbers = bool(present) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present)
    as_float = numbers and (len(present) < len(column) or any(isinstance(v, float) for v in present))
    return lambda v: "" if v is None else repr(float(v)) if as_float else str(v)


def write_csv(results: RunResults, path: str | Path) -> Path | None:
    """``results.csv`` of the raw repeats, one column per key (in order of first appearance), one
    line per row (control characters and line breaks in a cell written as escapes: a cell may hold
    the audited code's text); ``None`` when there are none."""
    from dpaudit.execution.untrusted import printable

    rows = [to_jsonable(r) for r in raw_rows(results)]
    run = run_columns(results)
    if not rows and not run:
        return None
    rows = [{**run, **row} for row in rows or [{}]]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    texts = {key: _cell_text([row.get(key) for row in rows]) for key in columns}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([printable(texts[key](row.get(key))) for key in columns] for row in rows)
    path = Path(path)
    _atomic_write(path, buffer.getvalue().encode("utf-8"))
    return path


def _env() -> Any:
    import jinja2
    env = jinja2.Environment(loader=jinja2.PackageLoader("dpaudit.report", "templates"),
                             autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return env


def _printable(value: Any) -> Any:
    """Every string of the report context on one line without control characters: text from the
    audited code (error messages, warnings, names) must not act on a terminal that shows
    ``report.md`` or on the HTML (:func:`dpaudit.execution.untrusted.printable`)."""
    from dpaudit.execution.untrusted import printable

    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


def _sections(results: RunResults) -> list[Section]:
    """The body sections, each table with ``numeric`` (which columns hold only numbers: their header and
    Markdown column are right-aligned) and ``number`` (which cells are numbers: right-aligned in HTML)."""
    out = build_sections(results)
    for section in out:
        for table in section["tables"]:
            table["numeric"] = numeric_columns(table)
            table["number"] = [[is_number(cell) for cell in row] for row in table["rows"]]
    return out


def _context(results: RunResults, figures: Iterable[Figure]) -> dict[str, Any]:
    mech = results.get("mechanism") or {}
    title = results.get("title") or f"dpaudit {results.get('kind', 'report')}: {mech.get('name', '?')}"
    sections = _sections(results)
    for section in sections:
        section["text"] = [rounded_prose(t) for t in section["text"]]
    return {"title": _printable(title), "banner": _printable(banner(results)), "headline": _printable(headline(results)),
            "sections": _printable(sections), "provenance": _printable(provenance_section(results)),
            "figures": [{"title": f.title, "caption": f.caption, "filename": f"fig-{f.name}.png",
                         "b64": base64.b64encode(f.png).decode("ascii"), **_png_size(f.png)} for f in figures]}


def _png_size(png: bytes) -> dict[str, int]:
    """Width and height of a PNG from its IHDR chunk (the HTML reserves the space before it decodes)."""
    import struct

    width, height = struct.unpack(">II", png[16:24])
    return {"width": int(width), "height": int(height)}


def render_markdown(results: RunResults, out_dir: str | Path, figures: list[Figure] | None = None) -> Path:
    """``report.md`` with its PNG figures written beside it."""
    out_dir = Path(out_dir)
    figures = all_figures(results) if figures is None else figures
    for f in figures:
        _atomic_write(out_dir / f"fig-{f.name}.png", f.png)
    path = out_dir / "report.md"
    _atomic_write(path, markdown_text(_context(results, figures)).encode("utf-8"))
    return path


def render_html(results: RunResults, out_dir: str | Path, figures: list[Figure] | None = None) -> Path:
    """Self-contained ``report.html`` (figures embedded as base64 PNG)."""
    figures = all_figures(results) if figures is None else figures
    text = _env().get_template("report.html.j2").render(**_context(results, figures))
    path = Path(out_dir) / "report.html"
    _atomic_write(path, text.encode("utf-8"))
    return path


def render_report(results: RunResults, out_dir: str | Path, formats: Iterable[str] = FORMATS
                  ) -> dict[str, Path]:
    """Write the requested formats into ``out_dir``; returns format → path (and ``"figure NAME"`` →
    the PNG beside ``report.md``; ``"log"`` → ``dpaudit-errors.log`` when the run hit an error inside
    dpaudit itself, :mod:`dpaudit.report.error_log`)."""
    from dpaudit.mechanisms.base import InvalidInputError
    formats = list(formats)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise InvalidInputError(f"unknown report format(s) {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = to_jsonable(results)
    written: dict[str, Path] = {}
    if results.get("internal_errors"):  # dpaudit's own bugs: their tracebacks, whatever the formats
        written["log"] = out_dir / LOG_NAME
        _atomic_write(written["log"], error_log(results["internal_errors"]).encode("utf-8"))
    if "json" in formats:
        written["json"] = write_json(results, out_dir / "results.json")
    if "csv" in formats:
        path = write_csv(results, out_dir / "results.csv")
        if path is not None:
            written["csv"] = path
    if "md" in formats or "html" in formats:
        figures = all_figures(results)
        if "md" in formats:
            written["md"] = render_markdown(results, out_dir, figures)
            written.update({f"figure {f.name}": out_dir / f"fig-{f.name}.png" for f in figures})
        if "html" in formats:
            written["html"] = render_html(results, out_dir, figures)
    return written
