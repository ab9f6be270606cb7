"""One check per kind of run option, in the library's words, and the error that names the option.

A part (:mod:`dpaudit.options`) checks each of its fields once, with the one check for that kind of value
(:func:`whole_number`, :func:`epsilon_value`, :func:`one_of`, :func:`fraction`) and raises an
:class:`OptionError` naming the field: ``records must be a whole number ≥ 2, got 0``.  The command line
says the same with the option's flag (``--records must be …``: :mod:`dpaudit.commands.flags`).  The
estimator's own settings (:class:`~dpaudit.attacks.epsilon.Budget`, ``SearchSpace``, ``RunSettings``)
and the execution layer's :class:`~dpaudit.execution.Isolation` check their fields themselves; built
through :func:`built`, their errors name the field the same way.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence, TypeVar

from dpaudit.data.limits import check_epsilon_floor
from dpaudit.mechanisms.base import InvalidInputError, check_epsilon

__all__ = ["OptionError", "built", "epsilon_value", "fraction", "one_of", "whole_number"]

Part = TypeVar("Part")


class OptionError(InvalidInputError):
    """A run option with a value it cannot take.  ``field`` is the option's name (a part's field); the
    message starts with it, or with the words for it (``each ε`` of a sweep's list)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def whole_number(value: Any, field: str, minimum: int, *, why: str = "") -> int:
    """``value`` as an int, refused unless it is a whole number ≥ ``minimum`` (``why``: the reason for it)."""
    try:
        ok = not isinstance(value, bool) and int(value) == value and value >= minimum
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise OptionError(field, f"{field} must be a whole number ≥ {minimum}{why}, got {value!r}")
    return int(value)


def epsilon_value(value: Any, field: str = "epsilon", words: str | None = None) -> float:
    """A claimed or run-at ε: a finite number > 0 and not below the smallest ε dpaudit audits
    (:data:`~dpaudit.data.limits.EPSILON_FLOOR`).  ``words``: how the message names it (default: ``field``)."""
    name = words or field
    try:
        return check_epsilon_floor(check_epsilon(value, name=name), name)
    except OptionError:
        raise
    except InvalidInputError as exc:
        raise OptionError(field, str(exc)) from None


def one_of(value: Any, field: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        raise OptionError(field, f"{field} must be one of {', '.join(choices)}; got {value!r}")
    return str(value)


def fraction(value: Any, field: str) -> float:
    """A share strictly between 0 and 1."""
    try:
        share = float(value)
    except (TypeError, ValueError):
        share = math.nan
    if not 0.0 < share < 1.0:
        raise OptionError(field, f"{field} must be in (0, 1), got {value!r}")
    return share


def built(kind: Callable[..., Part], **values: Any) -> Part:
    """``kind(**values)`` — a settings object that checks its own fields — with an error that names one of
    them raised as the :class:`OptionError` of that field (the estimator's ``Budget`` says ``samples must be
    ≥ 1``; the command line then says ``--samples must be ≥ 1``)."""
    try:
        return kind(**values)
    except OptionError:
        raise
    except InvalidInputError as exc:
        first = str(exc).split(" ", 1)[0].rstrip(":")
        if first in values:
            raise OptionError(first, str(exc)) from None
        raise
