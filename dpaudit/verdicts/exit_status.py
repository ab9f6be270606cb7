"""The exit status of every command: one table, one rule.

``attack``, ``audit``, ``estimate-eps`` and ``sweep`` end the same way: 0 when the run finished and every
part of it was measured, 1 with ``--fail-on-violation`` on a VIOLATION, 2 for a user mistake (nothing run),
3 when the run is *incomplete* (the audited code failed or a part could not run, so the verdict cannot be
clean; with ``--fail-on-violation`` also any verdict other than VIOLATION or Consistent), 130/143 when
interrupted or terminated.  The README's table and each command's ``--help`` are written from
:data:`EXIT_STATUS`; :func:`exit_status` is the rule.

This module is loaded for ``--help``: it imports nothing heavy at module level (the verdict vocabulary,
:class:`dpaudit.execution.verdict.Verdict`, is imported where it is used).
"""

from __future__ import annotations

__all__ = ["EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_STATUS", "EXIT_TERMINATED", "EXIT_USAGE",
           "EXIT_VIOLATION", "exit_status", "exit_status_help"]


EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 3, 130, 143

# (status, when) — the one table: README "Exit status" and every command's --help show it.
EXIT_STATUS: tuple[tuple[str, str], ...] = (
    ("0", "the run finished and every part of it was measured; the Conclusion line gives the verdict"),
    ("1", "--fail-on-violation, and the verdict is VIOLATION"),
    ("2", "a user mistake or a setting that cannot run: one Error: line on stderr, nothing run"),
    ("3", "incomplete: the audited code failed (raised, hung, crashed, returned garbage) or a part could not "
          "run, so the verdict cannot be clean — the findings say which; with --fail-on-violation also any "
          "verdict other than VIOLATION or Consistent"),
    ("130, 143", "interrupted (Ctrl-C) or terminated (SIGTERM): the results so far are written, with status "
                 "interrupted"),
)


def exit_status(verdict: str, *, incomplete: bool, fail_on_violation: bool) -> int:
    """The exit status of a run that finished (:data:`EXIT_STATUS`): ``verdict`` is the conclusion's."""
    from dpaudit.execution.verdict import Verdict  # here: this module is loaded for --help, the engine is not

    if fail_on_violation and verdict == Verdict.VIOLATION:
        return EXIT_VIOLATION
    if incomplete:
        return EXIT_INCOMPLETE
    if fail_on_violation and verdict not in (Verdict.VIOLATION, Verdict.NO_VIOLATION, Verdict.NO_CLAIM):
        return EXIT_INCOMPLETE
    return 0


def exit_status_help(fail_on_violation: bool = True) -> str:
    """The table as help text: one paragraph per status (typer keeps paragraphs apart).  A command without
    ``--fail-on-violation`` (a sweep: it certifies no verdict) gets the table without what that option adds."""
    rows = EXIT_STATUS if fail_on_violation else tuple(
        (code, when.partition("; with --fail-on-violation")[0]) for code, when in EXIT_STATUS if code != "1")
    return "Exit status:\n\n" + "\n\n".join(f"{code}  {when}" for code, when in rows)

