"""Reading a CSV file into numeric columns, with numpy and the standard library (no pandas).

The first non-blank row is the header; every other row is a record — unless every field of the first row
is a number: a row of numbers is data, so the file has no header, every row is a record and the columns are
named ``column 1``, ``column 2``, … (:attr:`CsvTable.header` is then false).  What counts as a number
and as a missing value follows pandas' ``read_csv`` defaults, which dpaudit used before, so the
same files load to the same numbers:

* a number is a decimal (optional sign, point, exponent) or ``inf``/``infinity`` in any case,
  with surrounding whitespace allowed; a column of ``True``/``False`` (any of the three usual
  casings, no missing values) reads as 1/0;
* a missing value is one of pandas' NA spellings, matched exactly (empty field, ``NA``, ``NaN``,
  ``nan``, ``null``, ``None``, ``N/A``, ...); rows shorter than the header are padded with
  missing values; a column with any other text is non-numeric;
* blank (or whitespace-only) lines are skipped; a UTF-8 byte-order mark is ignored; duplicate
  header names get ``.1``, ``.2`` suffixes and empty ones ``Unnamed: i``.

Unlike pandas, a row *longer* than the header is always an error (pandas silently made the
first column an index when every row was one field too long).

Two paths, same result: a fast one (:func:`numpy.loadtxt`, C-speed, for files of plain numbers)
and an exact one (:mod:`csv`, for anything else: quotes, text, missing values, NaN spellings),
taken whenever the fast one fails or meets a NaN.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["MISSING", "CsvColumn", "CsvTable", "is_number_row", "read_table"]

# pandas' default NA spellings (pandas._libs.parsers.STR_NA_VALUES), matched without stripping.
MISSING: frozenset[str] = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
    "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_TRUE, _FALSE = frozenset({"True", "TRUE", "true"}), frozenset({"False", "FALSE", "false"})
_NUMBER = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?)\s*", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, eq=False)
class CsvColumn:
    """One column: ``values`` (float64, NaN where missing) when numeric, else ``None`` and the raw
    ``tokens``; ``missing`` marks the missing values either way."""

    name: str
    values: np.ndarray | None
    tokens: np.ndarray | None
    missing: np.ndarray

    @property
    def numeric(self) -> bool:
        return self.values is not None


@dataclass(frozen=True, eq=False)
class CsvTable:
    columns: list[CsvColumn]
    n_rows: int
    header: bool = True  # False: the first row held numbers only and was read as a record

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def _header_names(raw: list[str]) -> list[str]:
    names: list[str] = []
    for i, name in enumerate(raw):
        name = name or f"Unnamed: {i}"
        base, k = name, 0
        while name in names:
            k += 1
            name = f"{base}.{k}"
        names.append(name)
    return names


def _is_blank(row: list[str]) -> bool:
    return not row or (len(row) == 1 and not row[0].strip())


def _header(path: Path) -> tuple[list[str], int] | None:
    """The header row and how many physical lines precede the records (None: no header at all)."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, strict=True)
        for row in reader:
            if not _is_blank(row):
                return row, reader.line_num
    return None


def read_fast(path: Path, skip: int, width: int) -> np.ndarray | None:
    """All records as floats when the file is plain numbers of the header's width, else None."""
    try:
        with warnings.catch_warnings():  # a header-only file: "input contained no data"
            warnings.simplefilter("ignore", UserWarning)
            values = np.loadtxt(path, delimiter=",", skiprows=skip, comments=None, ndmin=2, dtype=np.float64,
                                encoding="utf-8")
    except ValueError:
        return None
    if values.size == 0 or values.shape[1] != width or np.isnan(values).any():
        return None
    return values


def _column(name: str, tokens: np.ndarray) -> CsvColumn:
    missing = np.isin(tokens, list(MISSING))
    present = tokens[~missing]
    values: np.ndarray | None = None
    if present.size and not missing.any() and all(t in _TRUE or t in _FALSE for t in set(present.tolist())):
        values = np.isin(tokens, list(_TRUE)).astype(np.float64)
    elif all(_NUMBER.fullmatch(t) for t in set(present.tolist())):
        values = np.full(tokens.shape, np.nan)
        values[~missing] = present.astype(np.float64)
    return CsvColumn(name, values, None if values is not None else tokens, missing)


def is_number_row(row: list[str]) -> bool:
    """Whether every field of ``row`` is a number (none missing): a record, not a header."""
    return bool(row) and all(_NUMBER.fullmatch(field) for field in row)


def _numbered(width: int) -> list[str]:
    return [f"column {j + 1}" for j in range(width)]


def _exact(path: Path, has_header: bool = True) -> CsvTable:
    text = path.read_text(encoding="utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    for row in reader:
        if _is_blank(row):
            continue
        if header is None:
            header = row if has_header else _numbered(len(row))
            if has_header:
                continue
        if len(row) > len(header):
            raise ValueError(f"Expected {len(header)} fields in line {reader.line_num}, saw {len(row)}")
        rows.append(row + [""] * (len(header) - len(row)))
    if header is None:
        raise ValueError("No columns to parse from file")
    names = _header_names(header)
    if not rows:
        return CsvTable([CsvColumn(n, np.empty(0), None, np.zeros(0, bool)) for n in names], 0, has_header)
    return CsvTable([_column(n, np.array(col, dtype=str)) for n, col in zip(names, zip(*rows))], len(rows),
                    has_header)


def read_table(path: str | Path) -> CsvTable:
    """Read ``path`` (UTF-8, comma-separated, header row).

    Raises ``ValueError`` (with pandas' wording for an empty file or a too-long row),
    :class:`csv.Error` for broken quoting, ``UnicodeDecodeError``/``OSError`` when unreadable.
    """
    path = Path(path)
    found = _header(path)
    if found is None:
        raise ValueError("No columns to parse from file")
    header, skip = found
    has_header = not is_number_row(header)  # a first row of numbers is a record
    values = read_fast(path, skip if has_header else skip - 1, len(header))
    if values is None:
        return _exact(path, has_header)
    names = _header_names(header) if has_header else _numbered(len(header))
    no_missing = np.zeros(values.shape[0], bool)
    return CsvTable([CsvColumn(n, values[:, j], None, no_missing) for j, n in enumerate(names)], values.shape[0],
                    has_header)
