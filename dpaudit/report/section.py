"""A report section and its tables, as :mod:`dpaudit.report.sections` builds them and both formats read them.

A section is a title, paragraphs of plain text and tables; a table is a header and rows of cells, each cell text
(numbers already written by :mod:`dpaudit.report.numbers`).  :func:`dpaudit.report.render.render_markdown` and
the HTML template add which columns and cells are numbers (``numeric``, ``number``) to right-align them.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

__all__ = ["Section", "Table"]


class Table(TypedDict):
    """A table of a section: its header and its rows; ``numeric``/``number``: which columns/cells are numbers."""

    header: list[str]
    rows: list[list[str]]
    numeric: NotRequired[list[bool]]
    number: NotRequired[list[list[bool]]]


class Section(TypedDict):
    """A section of the report: its title, its paragraphs, its tables."""

    title: str
    text: list[str]
    tables: list[Table]
