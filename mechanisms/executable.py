"""A program in any language as a :class:`~dpaudit.mechanisms.base.Mechanism` — the plug-in form ``cmd:COMMAND``.

The program speaks the protocol of :mod:`dpaudit.mechanisms.executable_protocol` (``docs/executables.md``): it
names what it releases in its handshake and answers batches of (data, ε, one seed per release).  The command line
runs it the way it runs every plug-in, in worker processes (:mod:`dpaudit.execution.worker`: timeouts, memory
limits, lanes, findings), where the worker's copy of the protocol client owns the program and asks it for a whole
request's releases at once.  :class:`ExecutableMechanism` is the same client in *this* process, for the Python API
(``dpaudit.plugin("cmd:node dp_mean.js", epsilon=1, neighbours="replace")``): one release per request, no time
limit — as a Python plug-in in process has none —, and a program that dies is an exception of that call (it is
started again for the next).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .base import Centroids, InvalidInputError, Labels, Points, PrivacyClaim, Release, Vector, check_epsilon
from .executable_protocol import CommandSpec, Program, ProgramError, Stacked, seed_from_generator
from .plugins import MalformedReleaseError

__all__ = ["ExecutableMechanism", "ExecutableSpec", "ProgramFailure"]

_RELEASES: dict[str, Callable[[np.ndarray], Release]] = {"points": Points, "centroids": Centroids, "labels": Labels,
                                                         "vector": Vector}


class ProgramFailure(RuntimeError):
    """The program answered an error for this release (the call's exception, as a Python plug-in's would be)."""


class ExecutableSpec(CommandSpec):
    """What the registry loads for a ``cmd:COMMAND`` spec: the command, built into a mechanism with the parameters
    the spec is given (:meth:`build`)."""

    def build(self, params: dict[str, Any], label: str) -> "ExecutableMechanism":
        if params.get("epsilon") is None:
            raise InvalidInputError(f"{label} is a program: give the epsilon it should honour")
        # named as the program names itself (its handshake), as in a worker, unless the caller names it
        return ExecutableMechanism(self.spec, name=None if label == self.spec else label, **params)


class ExecutableMechanism:
    """The program ``cmd:COMMAND`` names, as a mechanism in this process.

    Parameters
    ----------
    spec : str
        ``cmd:COMMAND``.
    epsilon, delta, neighbours
        The claim (a program states none): the ε it is asked to honour, sent with every request.
    output : str, optional
        What the program releases; it says so itself in its handshake, and a different ``output`` is refused.
    bounds : (lo, hi), optional
        The public box (where the auditor places canaries), sent to the program in ``params``.
    own_randomness : bool
        The program draws its own randomness rather than from the seed it is given (stated by the user).
    params
        Further parameters, sent to the program with every request (``params``).
    """

    plugin_kind = "executable"

    def __init__(self, spec: str, *, epsilon: float, output: str | None = None, neighbours: str = "add-remove",
                 delta: float = 0.0, name: str | None = None, bounds: Any = None, own_randomness: bool = False,
                 **params: Any) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.claim = PrivacyClaim(self.epsilon, delta, neighbours)
        self.bounds = bounds
        self.own_randomness = bool(own_randomness)
        sent = dict(params) if bounds is None else {**params, "bounds": bounds}
        try:
            self.program = Program(spec, epsilon=self.epsilon, output=output, params=sent)
        except ProgramError as exc:
            raise InvalidInputError(str(exc)) from None
        self.output = self.program.output
        self.output_stated = True
        self.name = name or self.program.name

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release:
        """The program's release on ``X`` for the seed ``rng`` gives (:func:`seed_from_generator`)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        answer = self.program.answer(X, [seed_from_generator(rng)])
        if isinstance(answer, Stacked):
            value = answer.value[0]
        else:
            meta, arrays = answer[0]
            if meta["kind"] == "failed":
                error = str(meta.get("error", ""))
                raise MalformedReleaseError(error) if meta.get("reason") == "wrong-shape" else ProgramFailure(error)
            value = arrays["value"]
        return _RELEASES[self.output](value)

    def close(self) -> None:
        """End the program (a later release starts it again)."""
        self.program.close()

    def __repr__(self) -> str:
        return f"ExecutableMechanism({self.program.spec!r}, epsilon={self.epsilon:g}, output={self.output!r})"
