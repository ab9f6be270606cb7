"""Failures inside dpaudit's own code, told apart from the audited code's.

Every call into the audited code goes through the execution layer, which turns
what the code does wrong into a :class:`~dpaudit.execution.MechanismFailure` (one call
gave no usable release), a :class:`~dpaudit.execution.MechanismBroken` (it keeps
crashing or hanging) or a :class:`~dpaudit.mechanisms.plugins.MalformedReleaseError`.
A part of a run can also stop for a stated reason of the set-up
(:class:`~dpaudit.mechanisms.base.InvalidInputError`: too few records for the shadow
models, a lost Dask cluster) or because it does not apply to the release
(:class:`~dpaudit.attacks.attack.NotApplicable`).  Any other exception raised while an
attack or a part runs is a bug in dpaudit (or a library it drives), not in the
audited code: :func:`classify` says which, :func:`internal_error` makes the
record a run keeps of it — the message a finding shows, and the traceback — in
``results["internal_errors"]``, which :func:`dpaudit.report.render_report` writes
beside the report as ``dpaudit-errors.log`` (:mod:`dpaudit.report.error_log`).
"""

from __future__ import annotations

import traceback
from typing import Any, Final, Literal

from dpaudit.report.error_log import LOG_NAME
from dpaudit.result_shapes import InternalError

__all__ = ["INTERNAL", "LOG_NAME", "MECHANISM", "SETUP", "classify", "internal_error", "internal_message",
           "is_internal_message"]

INTERNAL: Final = "internal"
MECHANISM: Final = "mechanism"
SETUP: Final = "setup"
_PREFIX = "internal dpaudit error (a bug in dpaudit, not in the audited code"


def classify(exc: BaseException) -> Literal["internal", "mechanism", "setup"]:
    """Whose failure ``exc`` is: the audited code's (``mechanism``), the set-up's or the release's
    (``setup``: a stated reason such as too few records, or not applicable), or dpaudit's own
    (``internal``)."""
    from dpaudit.attacks.attack import NotApplicable
    from dpaudit.execution import MechanismBroken, MechanismFailure
    from dpaudit.mechanisms.base import InvalidInputError
    from dpaudit.mechanisms.plugins import MalformedReleaseError

    if isinstance(exc, (MechanismFailure, MechanismBroken, MalformedReleaseError)):
        return MECHANISM
    if isinstance(exc, (InvalidInputError, NotApplicable)):
        return SETUP
    return INTERNAL


def internal_message(exc: BaseException) -> str:
    """The one line a finding, a part status or a conclusion shows for an internal error."""
    return f"{_PREFIX}; traceback in {LOG_NAME}): {type(exc).__name__}: {exc}"


def is_internal_message(text: Any) -> bool:
    """Whether a recorded error message (from :func:`internal_message`) names an internal error."""
    return str(text).startswith(_PREFIX)


def in_repeat(error: InternalError, repeat: int) -> InternalError:
    """An internal error of a repeat, with the repeat's number (from 1) for the log."""
    out: InternalError = {**error, "repeat": repeat}
    return out


def internal_error(exc: BaseException, where: str, *, step: str | None = None, attack: str | None = None
                   ) -> InternalError:
    """What a run keeps of an internal error: where it happened (``where``, e.g. ``attack repeats``; the ``step``
    or the ``attack`` of a repeat), the message and the formatted traceback."""
    out: InternalError = {"where": where}
    if step is not None:
        out["step"] = step
    if attack is not None:
        out["attack"] = attack
    out["error"] = internal_message(exc)
    out["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return out
