"""``dpaudit-errors.log``: the tracebacks of the errors inside dpaudit itself during a run.

A run keeps each such error (:mod:`dpaudit.attack.internal`) in
``results["internal_errors"]`` — ``{where, …context, error, traceback}`` — and
:func:`dpaudit.report.render_report` writes them to :data:`LOG_NAME` in the report
folder whenever there is one, so the report names the failure as dpaudit's and
the log holds what a bug report needs.
"""

from __future__ import annotations

from typing import Iterable, Mapping

__all__ = ["LOG_NAME", "error_log"]

LOG_NAME = "dpaudit-errors.log"

_HEAD = ("Errors inside dpaudit itself during this run: bugs in dpaudit (or a library it drives), not failures "
         "of the audited code.  Each part they stopped is marked incomplete in the report.\n\n")


def error_log(errors: Iterable[Mapping[str, object]]) -> str:
    """The text of the log: one block per error — where it happened, its message, its traceback."""
    blocks = []
    for i, e in enumerate(errors, 1):
        place = ", ".join(f"{k} {v}" for k, v in e.items() if k not in ("where", "error", "traceback"))
        blocks.append(f"[{i}] {e.get('where', '?')}{' (' + place + ')' if place else ''}\n"
                      f"{e.get('error', '')}\n\n{str(e.get('traceback', '')).rstrip()}\n")
    return _HEAD + "\n".join(blocks)
