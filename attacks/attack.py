"""What every attack class shares, after ART's attack anatomy (``art/attacks/attack.py``):
a declared list of parameters, a strict :meth:`Attack.set_params` that rejects
unknown names, and :meth:`Attack._check_params`, run on construction and on
every change, whose messages name the bad value.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

__all__ = ["Attack", "NotApplicable", "Progress", "check_count", "progress_bars"]

_A = TypeVar("_A", bound="Attack")

# Progress hook of the long phases (shadow targets, scoring, denoising): called as
# ``progress(phase, done, total)`` after each step, e.g. ("shadow targets", 2, 3) or
# ("denoising", 16384, 125000).  A CLI drives a progress bar from it; it must not raise.
Progress = Callable[[str, int, int], None]


class NotApplicable(Exception):
    """The attack has nothing to score on this release kind (e.g. tracing on a points release).

    Not a failure of the audited code: a run records it as "not applicable" with the message.
    """


def check_count(value: object, name: str) -> None:
    """An attack's count parameter (shadow models, queries, …) must be an int ≥ 1."""
    if not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidInputError(f"{name} must be a whole number ≥ 1, got {value!r}")


class Attack:
    """Base of the membership attacks: parameters are declared and checked up front."""

    attack_params: tuple[str, ...] = ()

    def set_params(self: _A, **params: Any) -> _A:
        """Change declared parameters; an unknown name is an error, not ignored."""
        for key, value in params.items():
            if key not in self.attack_params:
                raise InvalidInputError(f"{type(self).__name__} has no parameter {key!r}")
            setattr(self, key, value)
        self._check_params()
        return self

    def _check_params(self) -> None:
        """Validate the parameters (subclasses check their own)."""


@contextlib.contextmanager
def progress_bars(**tqdm_options: Any) -> Iterator[Progress]:
    """A :data:`Progress` hook that drives one ``tqdm`` bar per phase (closed on exit).

    ``tqdm_options`` go to every bar (e.g. ``disable=True``, ``file=sys.stderr``).
    """
    from tqdm.auto import tqdm

    bars: dict[str, Any] = {}

    def report(phase: str, done: int, total: int) -> None:
        bar = bars.get(phase)
        if bar is None:
            bar = bars[phase] = tqdm(total=total, desc=phase, leave=False, **tqdm_options)
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield report
    finally:
        for bar in bars.values():
            bar.close()
