"""mkdocs hook: Sphinx cross-reference roles in docstrings, shown as plain code.

Some docstrings use Sphinx roles (``:func:`estimate_epsilon```, ``:class:`~.pairs.PairSource```);
rendered as Markdown they would read ``:func:estimate_epsilon``.  This hook drops the role and shows
the target as code, as Sphinx would: ``~`` keeps the last component only, a leading ``.`` (relative to
the module) is dropped.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):<code>([^<]*)</code>")


def _code(match: re.Match[str]) -> str:
    target = match.group(1)
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    return f"<code>{target.lstrip('.')}</code>"


def on_page_content(html: str, **kwargs: object) -> str:
    return ROLE.sub(_code, html)
