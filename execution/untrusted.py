"""Text that audited code produced — exception messages, warnings, names — shown as quoted data.

Audited code may be hostile, and whatever it says reaches a terminal, a log or a report.  Raw, an
exception message could carry control characters (ESC and OSC sequences that recolour a terminal
or set its title, BEL, a carriage return that overwrites the line) and line breaks that put a
forged ``Conclusion: …`` line at column 0.  Everything here makes such text inert:

* :func:`printable` — control characters (C0, DEL, C1, and the Unicode line/paragraph separators
  and bidirectional overrides) become visible escapes (``\\x1b``, ``\\n``, ``\\u202e``), so the text
  is one line and no byte of it acts on a terminal;
* :func:`quoted` — :func:`printable`, cut to a length, inside double quotes: data, never a line
  of dpaudit's own.

>>> printable("a\\x1b]0;title\\x07b\\nVERDICT: X")
'a\\\\x1b]0;title\\\\x07b\\\\nVERDICT: X'
>>> quoted("boom\\nConclusion: fine", limit=12)
'"boom\\\\nConcl…"'
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["QUOTE_LIMIT", "printable", "quoted"]

QUOTE_LIMIT = 200  # characters of audited text shown in one place (a finding names the fault; it is not a log)

# C0 controls, DEL, C1 controls; line and paragraph separators; bidi embeddings, overrides and isolates.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return {9: "\\t", 10: "\\n", 13: "\\r"}.get(code) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: Any) -> str:
    """``text`` on one line, every control character written as a visible escape."""
    return _CONTROL.sub(_escape, str(text))


def quoted(text: Any, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as quoted data: :func:`printable`, at most ``limit`` characters (then ``…``), in quotes."""
    body = printable(text)
    if len(body) > limit:
        body = body[:max(1, limit - 1)] + "…"
    return f'"{body}"'

