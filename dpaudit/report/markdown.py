"""``report.md``: the report sections as Markdown, every string from the results escaped.

Plug-in names, error texts and anything else a results dict carries come from
code under audit; in Markdown, ``<script>`` or ``[x](javascript:…)`` would be
live markup in many renderers.  :func:`escape` turns them into literal text:
``<``, ``>`` and ``&`` become entities; the punctuation that makes code,
emphasis, links, images or table cells gets a backslash (and a line that
would start a heading or list is escaped); a line break becomes a space.

>>> print(escape("<script>alert(1)</script> | *x* [a](b) ε_lb"))
&lt;script&gt;alert(1)&lt;/script&gt; \\| \\*x\\* \\[a\\](b) ε\\_lb
"""

from __future__ import annotations

import re
from typing import Any

from .section import Table

__all__ = ["escape", "markdown_text"]

_SPECIAL = re.compile(r"([\\`*_\[\]|~])")  # code, emphasis, links/images, table cells, strike-through


def escape(text: Any, *, line: bool = False) -> str:
    """``text`` as literal Markdown (inline): entities for ``<>&``, backslashes for punctuation;
    ``line``: it starts a line, so a leading ``#``, ``-``, ``+``, ``=`` or ``1.`` is escaped too."""
    s = " ".join(str(text).split()) if "\n" in str(text) or "\r" in str(text) else str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _SPECIAL.sub(r"\\\1", s)
    return "\\" + s if line and (s.startswith(("#", "-", "+", "=")) or re.match(r"\d+[.)] ", s)) else s


def _table(table: Table) -> list[str]:
    numeric = table.get("numeric") or [False] * len(table["header"])
    lines = ["| " + " | ".join(escape(h) for h in table["header"]) + " |",
             "|" + "".join("---:|" if num else "---|" for num in numeric)]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in table["rows"]]
    return lines + [""]


def markdown_text(context: dict[str, Any]) -> str:
    """The Markdown report from the shared context (title, headline, sections, figures, provenance)."""
    lines = [f"# {escape(context['title'])}", ""]
    top = context.get("banner")
    if top:  # the verdict first: its word, the conclusion, the numbers that decide it
        lines += [f"> **{escape(top['word'])}**" + (f" — {escape(top['text'])}" if top["text"] else ""), ">",
                  *([f"> {escape(top['detail'])}", ">"] if top.get("detail") else []),
                  "> " + " · ".join(f"{escape(k)} **{escape(v)}**" for k, v in top["numbers"]), ""]
    lines += [f"{escape(line['text'], line=True)}  " for line in context["headline"]] + [""]
    for sec in context["sections"]:
        lines += [f"## {escape(sec['title'])}", ""]
        for t in sec["text"]:
            lines += [escape(t, line=True), ""]
        for table in sec["tables"]:
            lines += _table(table)
    if context["figures"]:
        lines += ["## Figures", ""]
        for f in context["figures"]:
            lines += [f"### {escape(f['title'])}", "", f"![{escape(f['title'])}]({f['filename']})", "",
                      escape(f["caption"], line=True), ""]
    if context["provenance"]:
        lines += [f"## {escape(context['provenance']['title'])}", ""]
        lines += _table(context["provenance"]["tables"][0])
    return "\n".join(lines).rstrip() + "\n"
