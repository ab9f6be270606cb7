"""Where audited code runs, for every command: in this process (built-ins) or in a worker (anything else).

A command turns its ``--timeout`` / ``--python`` / ``--memory-limit`` into an
:class:`Isolation` and its ``--mechanism`` / ``--param`` / claim options into a
:class:`MechanismRecipe`; :meth:`MechanismRecipe.open` builds the mechanism at
one ε.  The rule:

* a **built-in** (registered by dpaudit's own ``mechanisms`` package, see
  :func:`is_builtin`) runs in this process — trusted code, still called through
  the layer (:func:`~dpaudit.execution.isolation.draw_releases`: a private copy of
  the data per call, opaque generators, faults as findings), but with no timeout;
* anything else — ``module:attr``, ``file.py:attr``, an entry point of another
  package — runs in a :class:`~dpaudit.execution.worker.WorkerMechanism`: worker
  processes, one per lane, each call under ``timeout`` seconds, a crash or a
  hang a finding and a fresh process for that lane;
* with ``python=...`` every mechanism, built-ins too, runs in a worker in that
  interpreter.

Worker mechanisms are *shared within a process*: one per (recipe, ε, thread),
opened on first use and closed by :func:`close_workers` (and at exit), so the
cells of a sweep or the chunks of a run on joblib or Dask reuse one worker
mechanism — its template and its lanes' processes — instead of starting one
per task.  Within a lane a worker keeps the audited code's state between
calls, as any long-running process would; lanes keep it apart between lanes
(see :mod:`execution`), and the replay probe (:class:`ReplayProbe`)
is how such state is found.
"""

from __future__ import annotations

import atexit
import math
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Hashable, cast

import numpy as np

from dpaudit.mechanisms.base import Failed, InvalidInputError, Mechanism
from dpaudit.mechanisms.registry import is_builtin

from .findings import Findings, MechanismBroken
from .isolation import Draw, draw_releases
from .replay import replay_findings
from .worker import WorkerMechanism

__all__ = ["DEFAULT_TIMEOUT", "STATE_HANDLING", "Isolation", "MechanismRecipe", "ReplayProbe", "close_workers",
           "is_builtin", "parse_memory"]

DEFAULT_TIMEOUT = 60.0  # seconds per call into audited code in a worker (every command's --timeout default)
# How state kept between calls is handled, in the words every report shows (see the package docstring).
STATE_HANDLING = ("third-party code runs in worker processes; each side of each neighbouring pair is drawn in "
                  "processes that have never seen the other side (a lane per side), and a few releases are "
                  "replayed in a fresh process: a different answer for the same data and seed is a "
                  "'nondeterministic' finding. Built-ins run in this process.")
REPLAY_CALLS = 3        # single releases drawn early and replayed late (the nondeterminism probe)
REPLAY_MAX_RECORDS = 10_000  # the probe runs on at most this many records: state does not depend on data size

_PLUGIN_ONLY = ("output", "neighbours", "delta")  # what a plug-in function cannot state itself


def parse_memory(text: str | None) -> int | None:
    """``"512M"``, ``"2G"``, ``"1.5GiB"`` or a byte count → bytes (None for None); anything else is refused."""
    if text is None:
        return None
    raw = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(raw[-1:], 1)
    number = raw[:-1] if scale != 1 else raw
    try:
        value = float(number)
    except ValueError:
        raise InvalidInputError(f"--memory-limit must be a size such as 512M or 2G, got {text!r}") from None
    if not math.isfinite(value) or value * scale < 2**24:
        raise InvalidInputError(f"--memory-limit must be at least 16M (the worker needs room for Python and "
                                f"numpy), got {text!r}")
    return int(value * scale)


@dataclass(frozen=True)
class Isolation:
    """How calls into audited code are isolated: per-call ``timeout`` (seconds), the worker's
    ``python`` interpreter (None: this one) and its ``memory_limit`` (bytes, None: no limit)."""

    timeout: float = DEFAULT_TIMEOUT
    python: str | None = None
    memory_limit: int | None = None

    def __post_init__(self) -> None:
        try:
            timeout = float(self.timeout)
        except (TypeError, ValueError):
            raise InvalidInputError(f"timeout must be a number of seconds, got {self.timeout!r}") from None
        if not (timeout > 0 and math.isfinite(timeout)):
            raise InvalidInputError(f"timeout must be a positive number of seconds, got {self.timeout!r}")
        object.__setattr__(self, "timeout", timeout)
        if self.python is not None and not str(self.python).strip():
            raise InvalidInputError("python must name an interpreter")
        if self.memory_limit is not None and int(self.memory_limit) <= 0:
            raise InvalidInputError(f"memory_limit must be positive, got {self.memory_limit!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"timeout_seconds": self.timeout, "python": self.python or "this one",
                "memory_limit_bytes": self.memory_limit, "state": STATE_HANDLING}


@dataclass(frozen=True)
class MechanismRecipe:
    """A picklable recipe for the audited mechanism: what to build, at which ε, where it runs.

    ``output`` / ``neighbours`` / ``delta`` (None: not given) are what a plug-in
    function or estimator cannot state itself; a plug-in class that states its
    own claim keeps it.  ``params`` are the constructor parameters besides ε.
    ``supervision`` (:class:`dpaudit.mechanisms.supervised.Supervision`) is how a
    supervised plug-in gets its labels from the records' last column;
    ``own_randomness``: the user states the code draws its own randomness (no
    replay probe, see :func:`~dpaudit.execution.replay.replay_findings`).
    """

    spec: str
    params: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    neighbours: str | None = None
    delta: float | None = None
    isolation: Isolation = field(default_factory=Isolation)
    supervision: Any = None
    own_randomness: bool = False

    def __post_init__(self) -> None:
        if is_builtin(self.spec):  # built-ins state their own claim; delta etc. are constructor parameters
            return
        params = dict(self.params)
        for key in _PLUGIN_ONLY:  # a plug-in's --param output=... (or a stored config's): a field of its own
            if key in params:
                value = params.pop(key)
                if getattr(self, key) is None:
                    object.__setattr__(self, key, value)
        object.__setattr__(self, "params", params)

    @property
    def in_process(self) -> bool:
        """Built-ins run in this process unless another interpreter was asked for."""
        return self.isolation.python is None and is_builtin(self.spec)

    @property
    def where(self) -> str:
        if self.in_process:
            return "in process (built-in)"
        python = self.isolation.python or "this interpreter"
        return f"worker process ({python}, {self.isolation.timeout:g} s per call)"

    def build(self, epsilon: float | None) -> Mechanism:
        """A new mechanism at ``epsilon`` (a new worker for third-party code: close it when done).
        ``None``: a plug-in class that states its own claim runs at it."""
        if self.in_process:
            import dpaudit.mechanisms

            return dpaudit.mechanisms.get(self.spec, epsilon=epsilon, **self.params)
        return WorkerMechanism(self.spec, epsilon=epsilon, output=self.output or "points",
                               neighbours=self.neighbours or "add-remove", delta=self.delta or 0.0,
                               params=self.params, python=self.isolation.python,
                               timeout=self.isolation.timeout, memory_limit=self.isolation.memory_limit,
                               supervision=self.supervision, own_randomness=self.own_randomness,
                               output_stated=self.output is not None)

    def open(self, epsilon: float | None) -> Mechanism:
        """The mechanism at ``epsilon``: built-ins new each time, worker mechanisms shared in this process."""
        if self.in_process:
            return self.build(epsilon)
        key = (self, None if epsilon is None else float(epsilon), threading.get_ident())
        with _LOCK:
            mech = _OPEN.get(key)
        if mech is None:
            mech = cast(WorkerMechanism, self.build(epsilon))  # not in process: a worker mechanism
            with _LOCK:
                _OPEN[key] = mech
        return mech

    def with_params(self, **params: Any) -> "MechanismRecipe":
        return replace(self, params={**self.params, **params})

    def __hash__(self) -> int:  # params may hold lists (a box): hash their text
        return hash((self.spec, repr(sorted(self.params.items())), self.output, self.neighbours, self.delta,
                     self.isolation, self.supervision, self.own_randomness))


_OPEN: dict[tuple[MechanismRecipe, float | None, int], WorkerMechanism] = {}
_LOCK = threading.Lock()


def close_workers() -> None:
    """End every worker process this process opened through :meth:`MechanismRecipe.open`."""
    with _LOCK:
        mechs = list(_OPEN.values())
        _OPEN.clear()
    for mech in mechs:
        try:
            mech.close()
        except Exception:  # noqa: BLE001 - a worker that is already gone
            pass


atexit.register(close_workers)


class ReplayProbe:
    """The nondeterminism probe of a whole run: a few single releases early, replayed late.

    ``start`` draws :data:`REPLAY_CALLS` releases one call each (on at most
    :data:`REPLAY_MAX_RECORDS` records) in the probe's own ``lane``;
    :meth:`finish`, after the bulk of the run, draws them again with the same
    data and seeds and reports ``nondeterministic`` when any differs (state
    kept between calls, or randomness not drawn from the generator).  For code
    in workers the replay runs in a lane of its own whose process has first
    drawn on other data (:func:`~dpaudit.execution.replay.replay_findings`),
    so code that remembers its first input is caught too.  Both draws'
    failures are findings of their own.  :attr:`broken`: the probe's draw
    raised :class:`MechanismBroken` (the code hangs, or crashes every time) —
    a run would only repeat that, so callers stop there.
    """

    def __init__(self, mechanism: Any, X: np.ndarray, seed: np.random.SeedSequence, *,
                 lane: Hashable = "probe") -> None:
        self.mechanism = mechanism
        self.X = np.ascontiguousarray(X[:REPLAY_MAX_RECORDS], dtype=np.float64)
        self.seed = seed
        self.lane = lane
        self.first: Draw | None
        self.broken = False
        try:
            self.first = draw_releases(mechanism, self.X, seed, REPLAY_CALLS, per_release=True, lane=lane)
            self.findings = Findings().merge(self.first.findings)
        except MechanismBroken as exc:  # the code hangs or crashes every time: nothing to replay
            self.first, self.findings, self.broken = None, Findings().merge(exc.findings), True

    @property
    def usable(self) -> bool:
        """Whether any probe call gave a usable release."""
        return self.first is not None and any(not isinstance(r, Failed) for r in self.first.releases)

    def finish(self) -> Findings:
        """Replay the probe (once); the findings of both draws (``nondeterministic`` when they differ)."""
        if self.first is not None:
            try:
                self.findings.merge(replay_findings(self.mechanism, self.X, self.seed, self.first, lane=self.lane))
            except MechanismBroken as exc:
                self.findings.merge(exc.findings)
            self.first = None
        return self.findings
