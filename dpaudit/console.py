"""Console output of every command: tables drawn with ``rich``, at most 100 columns wide.

Results go to stdout, diagnostics to stderr (:func:`info`), so stdout stays
clean for piping.  On a terminal tables are drawn with colour in the
terminal's width (at most :data:`MAX_WIDTH`); on a pipe, a file or in CI they
are plain text exactly :data:`MAX_WIDTH` columns wide, with no escape codes.
Cell text is never read as rich markup (a plug-in's name such as
``"[bold]x"`` prints as written), and no control character reaches the terminal: cells are one
line with their control characters escaped, and so is every line of a printed string
(:func:`dpaudit.execution.untrusted.printable` — text from audited code cannot recolour the terminal, set
its title, or break into a line of its own).

>>> print(render(table(["a", "b"], [["1", "2"]])).strip().splitlines()[0].split())
['a', 'b']
"""

from __future__ import annotations

import io
import sys
from typing import IO, Any, Iterable, Sequence

__all__ = ["MAX_WIDTH", "echo", "info", "key_value", "render", "table"]

MAX_WIDTH = 100  # no console table is wider than this


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or exotic stream
        return False


def _console(stream: IO[str], *, terminal: bool | None = None) -> Any:
    from rich.console import Console

    terminal = _is_terminal(stream) if terminal is None else terminal
    if terminal:
        import shutil

        width = min(MAX_WIDTH, shutil.get_terminal_size((MAX_WIDTH, 24)).columns)
        return Console(file=stream, width=width, highlight=False, markup=False, emoji=False,
                       force_terminal=True, soft_wrap=False)
    return Console(file=stream, width=MAX_WIDTH, highlight=False, markup=False, emoji=False,
                   force_terminal=False, color_system=None, soft_wrap=False)


def _text(value: Any, style: str | None = None) -> Any:
    from rich.text import Text

    from dpaudit.execution.untrusted import printable

    return Text(printable(value), style=style or "")


NUMBER_WIDTH = 24  # the widest a numeric cell is kept whole ("0.00554 ± 0.0052 ~" is 18)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None,
          right: Sequence[int] = (), styles: dict[int, str] | None = None,
          row_styles: Sequence[str | None] | None = None) -> Any:
    """A ``rich`` table: ``header`` words, ``rows`` of cells (shown with ``str``).

    ``right``: indices of right-aligned (numeric) columns, which keep a number and its marks on one line
    (a ``~`` never wraps onto a line of its own: a column whose cells are all at most :data:`NUMBER_WIDTH`
    wide is as wide as its widest cell or header word, and its header wraps within it; a wider text cell, such
    as an n/a reason, leaves the width to rich); ``styles``: column index → style; ``row_styles``: a style per row (e.g.
    ``"bold red"`` for a violation), ignored on a pipe.
    """
    from rich import box
    from rich.table import Table

    t = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", show_edge=False, pad_edge=False,
              header_style="bold", expand=False)
    styles = styles or {}
    rows = [list(row) for row in rows]
    for i, name in enumerate(header):
        widest = max([len(str(row[i])) for row in rows if i < len(row)] + [len(w) for w in str(name).split()],
                     default=0)
        t.add_column(_text(name), justify="right" if i in right else "left", style=styles.get(i),
                     overflow="fold", width=widest if i in right and widest <= NUMBER_WIDTH else None)
    for i, row in enumerate(rows):
        style = row_styles[i] if row_styles is not None and i < len(row_styles) else None
        t.add_row(*(_text(c) for c in row), style=style)
    return t


def key_value(rows: Iterable[tuple[str, Any]]) -> Any:
    """Two columns without borders: a label and its value (the value wraps within the width)."""
    from rich.table import Table

    t = Table.grid(padding=(0, 2))
    t.add_column(no_wrap=True, style="bold")
    t.add_column(overflow="fold")
    for key, value in rows:
        t.add_row(_text(key), _text(value))
    return t


def render(*parts: Any, terminal: bool = False) -> str:
    """The text ``parts`` print as, one after the other: strings as they are (a line a reader
    quotes is never wrapped), rich renderables drawn without trailing blanks."""
    from dpaudit.execution.untrusted import printable

    out = []
    for part in parts:
        if isinstance(part, str):
            out.append("".join(printable(line) + "\n" for line in part.split("\n")))
            continue
        buffer = io.StringIO()
        _console(buffer, terminal=terminal).print(part)
        out.append("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()))
    return "".join(out)


def echo(*parts: Any, err: bool = False) -> None:
    """Print ``parts`` on stdout (``err``: stderr): tables styled on a terminal, plain otherwise."""
    stream = sys.stderr if err else sys.stdout
    stream.write(render(*parts, terminal=_is_terminal(stream)))
    stream.flush()


def info(message: str) -> None:
    """One diagnostic line on stderr (never on stdout), control characters escaped."""
    from dpaudit.execution.untrusted import printable

    print(printable(message), file=sys.stderr, flush=True)
