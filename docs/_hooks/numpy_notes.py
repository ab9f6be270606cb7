"""griffe extension: prose after a numpy-style item section becomes a ``Notes`` section.

Some docstrings end their ``Parameters`` section with a paragraph of prose (what ``infer`` returns,
how calls are batched) without a section header of its own.  The numpy parser would read that
paragraph as malformed parameter lines, warn and drop it; this extension gives it a ``Notes`` header
when the API reference is built, so the text is shown and the strict build passes.  The source
docstrings are not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ITEM_SECTIONS = {"Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises", "Warns",
                 "Attributes", "Methods"}
SECTIONS = ITEM_SECTIONS | {"See Also", "Notes", "References", "Examples", "Warnings", "Warning"}
ITEM = re.compile(r"^\*{0,2}\w+(\s*,\s*\*{0,2}\w+)*\s*(:.*)?$")


def _is_header(lines: list[str], i: int) -> bool:
    return (lines[i].strip() in SECTIONS and i + 1 < len(lines)
            and len(lines[i + 1].strip()) >= 3 and set(lines[i + 1].strip()) == {"-"})


def _is_prose(line: str) -> bool:
    """A paragraph line at the left margin that is no ``name : type`` item."""
    return (bool(line) and not line[0].isspace() and not ITEM.match(line) and " : " not in line
            and len(line.split()) >= 4)


def add_notes_headers(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    in_items = False
    for i, line in enumerate(lines):
        if _is_header(lines, i):
            in_items = line.strip() in ITEM_SECTIONS
        elif in_items and i > 0 and not lines[i - 1].strip() and _is_prose(line):
            out += ["Notes", "-----"]
            in_items = False
        out.append(line)
    return "\n".join(out)


class NumpyNotes(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and "\n---" in obj.docstring.value:
            obj.docstring.value = add_notes_headers(obj.docstring.value)
