"""Run audited code in worker processes under a timeout — optionally in another interpreter.

:class:`WorkerMechanism` is a :class:`~dpaudit.mechanisms.base.Mechanism`-compatible
proxy that isolates its own calls (``isolates_calls``): :func:`draw_releases`
hands it the draw, and it sends the data to the worker process of the draw's
*lane* (:mod:`.lanes`: one process per lane, forked from a loaded template on
Linux; ``_worker_main.py``, stdlib + numpy only; :mod:`.process`) and waits at
most ``timeout`` seconds per request.  ``python`` names the interpreter the
workers run in — the audited code's own virtual environment (IBM diffprivlib,
for one, needs scikit-learn < 1.8, which dpaudit's own environment does not have).

A lane's process is reused between that lane's calls.  Inside it every call
gets the worker's private copy of the data (checked after the call) and an
opaque generator (the entropy is chosen here, from the draw's seed, exactly as
in-process, so a per-release draw gives the same numbers in both places).
Exceptions and malformed values become :class:`~dpaudit.mechanisms.base.Failed`
outcomes; a timeout or a dead process (exit, segfault, out of memory — see
``memory_limit``) kills the lane's process, and what follows is the *hang
budget* of the current :attr:`WorkerMechanism.part` (:meth:`WorkerMechanism._timed_out`,
:mod:`.worker_draw`): code that has not answered in time in this part is
broken for the part at once; code that has is retried once in a fresh process
and then dropped.  Besides the :class:`Findings` of each draw, the proxy keeps
:attr:`WorkerMechanism.findings`, one entry per (part, kind) over its lifetime,
for callers that label their phases with :attr:`part`.
"""

from __future__ import annotations

import sys
import threading
import uuid
from pathlib import Path
from typing import Any, Hashable, Iterable, cast

import numpy as np

import dpaudit.mechanisms
from dpaudit.mechanisms.base import (
    InvalidInputError,
    PrivacyClaim,
    Release,
    ReleaseBatch,
    TranscriptBatch,
    check_epsilon,
)
from dpaudit.mechanisms.plugin_forms import OWN_PACKAGES, PLUGIN_ROOT, spec_form
from dpaudit.mechanisms.plugins import plugin_root

from ._worker_calls import show_internal
from .findings import Findings, MechanismBroken
from .isolation import Draw, release_once
from .lanes import Channel, LaneLoadError, Lanes, close_later
from .seeds import OpaqueSeeds, seed_from_rng
from .validate import note_non_finite
from .worker_draw import WorkerDraw, concatenate

__all__ = ["HangBudget", "WorkerMechanism"]

LOAD_TIMEOUT = 60.0  # seconds a worker may take to start and load the audited code
WARM_UP_CALLS = 2    # calls a template makes on the public warm-up dataset before it forks lanes (Lanes.warm)
WARM_UP_SEED = 0x5EED  # their generators' seed (public: the warm-up's answers are thrown away)
# The folders of dpaudit's own packages a worker loads a registered mechanism from (first, whatever the audited
# interpreter has installed: execution/worker_audited.py, OwnPackages).
_OWN_PACKAGES = {name: str(Path(cast(str, module.__file__)).resolve().parent)
                 for name, module in (("dpaudit", dpaudit), ("dpaudit.mechanisms", dpaudit.mechanisms))}  # `dpaudit`: bound by
# the import of dpaudit.mechanisms (its package, light to import: its names load on first use)


class HangBudget:
    """What a mechanism's timeouts have cost so far, per part: shared by its copies within a process.

    ``answered``: parts in which the code answered a request in time;
    ``waiting``: per part, single-release timeouts before its first answer;
    ``broken``: per part, why the code is not called again in it.  Copies
    unpickled in one process (joblib, Dask chunks) share one budget, so a hang
    costs that process one timeout, not one per chunk; each process may spend
    its own, in parallel.
    """

    _ALL: dict[str, "HangBudget"] = {}
    _ALL_LOCK = threading.Lock()

    def __init__(self) -> None:
        self.answered: set[str] = set()
        self.waiting: dict[str, int] = {}
        self.broken: dict[str, str] = {}
        self.lock = threading.Lock()

    @classmethod
    def of(cls, token: str) -> "HangBudget":
        with cls._ALL_LOCK:
            budget = cls._ALL.get(token)
            if budget is None:
                budget = cls._ALL[token] = cls()
            return budget

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"answered": sorted(self.answered), "waiting": dict(self.waiting), "broken": dict(self.broken)}

    def absorb(self, state: dict[str, Any]) -> None:
        with self.lock:
            self.answered.update(state["answered"])
            for part, n in state["waiting"].items():
                self.waiting[part] = max(self.waiting.get(part, 0), n)
            for part, reason in state["broken"].items():
                self.broken.setdefault(part, reason)


class WorkerMechanism:
    """A mechanism whose every call runs in a worker process under ``timeout`` seconds.

    Parameters
    ----------
    spec : str
        Registered name, ``module:attr`` or ``file.py:attr`` (resolved in the worker).
    epsilon : float or None
        The ε the audited code is asked to honour (and claims, unless it states its own claim).
        None: a plug-in class that states its own claim runs at it (passed only to constructors
        that take ``epsilon``); code that states none is refused.
    output, neighbours, delta
        For plain functions and estimators, which cannot state them: the release kind and the claim.
    params : dict
        Further constructor parameters.
    python : str
        Interpreter the worker runs in (default: this one).  A plug-in spec is
        resolved with that interpreter's own packages only; a registered name
        loads dpaudit's own ``dpaudit.mechanisms`` from this installation (never a
        ``dpaudit`` the interpreter may hold), everything else from the interpreter.
    timeout : float
        Seconds each request may take.
    memory_limit : int, optional
        Bytes the worker may allocate beyond its start-up size (``RLIMIT_AS``,
        Unix): a larger allocation fails in the worker instead of exhausting the machine.
    max_lanes : int, optional
        Live lane processes at most (default :attr:`MAX_LANES`); one more closes the least recently used.
    supervision : dpaudit.mechanisms.supervised.Supervision, optional
        How the last column of each record becomes the labels of a supervised plug-in (``fit(X, y)``,
        ``fn(X, y, epsilon, rng)``); ignored by other code.  After loading, :attr:`supervised` says
        whether the code takes labels (the caller then appends the label column to its records).
    own_randomness : bool
        The code draws its own randomness (stated by the user; a function without a generator parameter
        states it itself): :attr:`own_randomness` is then true and the replay probe is skipped.

    A mechanism with a vectorised ``release_many`` runs in fixed batches of
    :attr:`VECTOR_BATCH` per request; other code is called once per release,
    with a number of releases per request that adapts so a request takes about
    a quarter of the timeout.  Neither changes the numbers.
    """

    VECTOR_BATCH = 64
    MAX_LANES = 8
    isolates_calls = True

    def __init__(self, spec: str, *, epsilon: float | None, output: str = "points", neighbours: str = "add-remove",
                 delta: float = 0.0, params: dict[str, Any] | None = None, python: str | None = None,
                 timeout: float = 60.0, memory_limit: int | None = None, max_lanes: int | None = None,
                 supervision: Any = None, own_randomness: bool = False, output_stated: bool = True) -> None:
        self.spec = spec
        self.output_stated = bool(output_stated)  # False: --output not given, read as points (check_unstated_output)
        self.supervision = supervision
        self._own_randomness = bool(own_randomness)
        self.epsilon = None if epsilon is None else check_epsilon(epsilon)
        self.output = output
        self.params = dict(params or {})
        self.python = python or sys.executable
        if not timeout > 0:
            raise InvalidInputError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.timeout = float(timeout)
        if memory_limit is not None and int(memory_limit) <= 0:
            raise InvalidInputError(f"memory_limit must be a positive number of bytes, got {memory_limit!r}")
        self.memory_limit = None if memory_limit is None else int(memory_limit)
        self.max_lanes = int(max_lanes or self.MAX_LANES)
        self.findings: list[dict[str, Any]] = []
        self.part = "load"
        self._batch, self._batch_part = 1, self.part
        self._token = uuid.uuid4().hex  # names this mechanism's hang budget, in every process, across copies
        self._lanes = self._new_lanes()
        info = self._load()
        self.name = info.get("name", spec)
        self.plugin_kind = info.get("kind", "mechanism")
        self.vectorised = bool(info.get("vectorised"))
        self.supervised = bool(info.get("supervised"))
        self.own_randomness = bool(info.get("own_randomness")) or self._own_randomness
        self.memory = info.get("memory", "no limit")
        if "output" in info:  # plug-in form: a program (cmd:COMMAND) says what it releases in its handshake
            self.output, self.output_stated = str(info["output"]), True
        stated = info.get("claim")
        if stated is None and self.epsilon is None:
            self._lanes.close(graceful=False)
            raise InvalidInputError(f"{spec} states no privacy claim of its own: give the ε it claims (--eps)")
        if self.epsilon is None:  # asked for no ε: the code runs at, and is audited against, its own claim
            if stated is None:
                raise RuntimeError("no claim and no ε passed the check above")
            self.epsilon = float(stated["epsilon"])
        self.claim = (PrivacyClaim(stated["epsilon"], stated["delta"], stated["neighbours"]) if stated
                      else PrivacyClaim(self.epsilon, delta, neighbours))
        self.part = "release"

    # ---- process management ------------------------------------------------------
    def _load_header(self) -> dict[str, Any]:
        params = {**({} if self.epsilon is None else {"epsilon": self.epsilon}), **self.params}
        # What loading the spec's form needs there (a registered name: dpaudit's own packages, which drop the
        # output/neighbours/delta a registered class does not take, as in this process; gaussian does take delta)
        needs = getattr(spec_form(self.spec), "needs", ())
        return {"op": "load", "spec": self.spec, "params": params, "output": self.output,
                "output_stated": self.output_stated,
                "own_packages": _OWN_PACKAGES if OWN_PACKAGES in needs else None,
                "plugin_root": plugin_root(self.spec) if PLUGIN_ROOT in needs else None,
                "memory_limit": self.memory_limit,
                "supervision": None if self.supervision is None else self.supervision.to_dict(),
                "own_randomness": self._own_randomness, "debug": show_internal()}

    @property
    def _load_timeout(self) -> float:
        """Starting an interpreter and importing the audited code is not a call: it gets at least a minute."""
        return max(self.timeout, LOAD_TIMEOUT)

    def _new_lanes(self, shared: bool = False) -> Lanes:
        return Lanes(self.python, self._load_header, lambda: (self._load_timeout, self.timeout), self.max_lanes,
                     shared=shared, warm_with=getattr(self, "_warm_with", None))

    def warm(self, X: np.ndarray) -> str:
        """Warm the template up on the public dataset ``X`` (:meth:`~dpaudit.execution.lanes.Lanes.warm`): lanes
        forked from now on start with the code's imports done and its caches filled.  Copies made after
        (joblib, Dask) warm theirs the same way.  Returns why warming was given up ("" when it works)."""
        words = OpaqueSeeds(np.random.SeedSequence(WARM_UP_SEED)).release_words(range(WARM_UP_CALLS))
        self._warm_with = (np.ascontiguousarray(X, dtype=np.float64), words)
        self._lanes.warm(*self._warm_with)
        return self._lanes.warm_note

    def _load(self) -> dict[str, Any]:
        try:
            return self._lanes.load()
        except LaneLoadError as exc:
            self._lanes.close(graceful=False)
            raise InvalidInputError(str(exc) if exc.plain else f"loading {self.spec} failed: {exc}") from None
        except (TimeoutError, ChildProcessError) as exc:
            self._lanes.close(graceful=False)
            raise InvalidInputError(f"loading {self.spec} in a worker failed: {exc}") from None

    def _start(self, lane: Hashable = None) -> Channel:
        """The process serving ``lane`` (started, or forked, when it has none)."""
        try:
            return self._lanes.channel(lane)
        except LaneLoadError as exc:
            raise ChildProcessError(f"the restarted worker could not load {self.spec}: {exc}") from None

    def _discard(self, lane: Hashable = None) -> None:
        self._lanes.discard(lane)

    def close_lane(self, lane: Hashable) -> None:
        """End ``lane``'s process; the lane's next draw starts a fresh one."""
        self._lanes.discard(lane)

    def close_lanes(self, keep: Iterable[Hashable] = ()) -> int:
        """End the process of every lane not in ``keep`` (e.g. eliminated candidates); how many were ended."""
        return self._lanes.close_lanes(keep)

    @property
    def lanes(self) -> list[Hashable]:
        """The lanes that have a live process, least recently used first."""
        return list(self._lanes.live)

    def lane_pids(self) -> dict[Hashable, int]:
        """The process id serving each live lane."""
        return self._lanes.pids()

    def close(self) -> None:
        self._lanes.close()

    def __del__(self) -> None:
        # Never close here: a finalizer may run inside another library's critical section (Dask's profiler
        # on CPython 3.11): the lanes go to a thread of their own (dpaudit.execution.lanes.close_later).
        lanes = getattr(self, "_lanes", None)
        if lanes is not None:
            close_later(lanes)

    def __getstate__(self) -> dict[str, Any]:  # picklable: a copy starts its own processes, per lane
        # (forked from a template shared by the copies in its process: see dpaudit.execution.lanes)
        state = dict(self.__dict__)
        state["_lanes"] = None
        state["_budget_state"] = self._budget.snapshot()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        budget = state.pop("_budget_state", None)
        self.__dict__.update(state)
        self._lanes = self._new_lanes(shared=True)  # copies in one process fork from one template
        if budget is not None:
            self._budget.absorb(budget)  # what the original knew; copies in this process share the rest

    @property
    def _budget(self) -> HangBudget:
        return HangBudget.of(self._token)

    # ---- the hang budget ----------------------------------------------------------------
    def _answered(self) -> None:
        """A request of the current part came back in time."""
        self._budget.answered.add(self.part)

    def _timed_out(self, single: bool) -> str | None:
        """Account a timeout of the current part: why the code is now broken for the part, or None.

        Code that has answered in time in this part keeps the retry-then-drop
        rule, and so does a request of several releases (redone one at a time).
        A single release that timed out before any answer in this part breaks
        the code for the part at once — after one retry when the code did
        answer in an earlier part (it may hang only sometimes).
        """
        budget, part = self._budget, self.part
        with budget.lock:
            if single and part not in budget.answered:
                waited = budget.waiting[part] = budget.waiting.get(part, 0) + 1
                if waited > (1 if budget.answered else 0):
                    before = "since its last answer" if budget.answered else "and has never answered"
                    return (f"the audited code did not answer within {self.timeout:g} s {before} in this part "
                            f"({part}): it is not called again in this part")
        return None

    # ---- the execution-layer protocol ------------------------------------------------
    def draw(self, X: np.ndarray, seed: np.random.SeedSequence, n: int, *, per_release: bool = False,
             lane: Hashable = None, trace: bool = False, seed_globals: bool = False) -> Draw:
        """``n`` releases on ``X`` from ``seed`` in ``lane`` (see :func:`~dpaudit.execution.isolation.draw_releases`;
        ``trace``, ``seed_globals``: coupled screening calls, one per release).

        Raises :class:`MechanismBroken` at once, calling nothing, when the code
        is broken for the current :attr:`part`.
        """
        reason = self._budget.broken.get(self.part)
        if reason is not None:
            raise MechanismBroken(reason, Findings())
        if self._batch_part != self.part:  # a new part starts with single calls: a hang costs one release
            self._batch, self._batch_part = 1, self.part
        run = WorkerDraw(self, np.ascontiguousarray(X, dtype=np.float64), OpaqueSeeds(seed), lane, trace=trace,
                         seed_globals=seed_globals)
        run.findings.add_calls(n)
        try:
            if self.vectorised and not (per_release or trace or seed_globals):
                segments, kept = run.vectorised(int(n))
            else:
                segments, kept = run.one_by_one(range(int(n)))
            releases = concatenate(segments)
            note_non_finite(run.findings, releases)
        except MechanismBroken as exc:
            if exc.scope == "part":  # failures on one dataset leave the code callable on the others
                self._budget.broken.setdefault(self.part, str(exc))
            raise
        finally:
            self._note(run.findings)
        return Draw(releases, run.findings, int(n), np.asarray(kept, dtype=np.int64), run.traces)

    def _note(self, findings: Findings) -> None:
        """Add a draw's findings to the lifetime list, one entry per (part, kind)."""
        for f in findings:
            entry = next((e for e in self.findings if e["kind"] == f.kind and e["part"] == self.part), None)
            if entry is None:
                entry = {"kind": f.kind, "part": self.part, "call": "release", "error": f.error,
                         "count": 0, "calls": 0, "dropped": 0}
                self.findings.append(entry)
            entry["count"] += f.count
            entry["dropped"] += f.dropped
        for entry in self.findings:
            if entry["part"] == self.part:
                entry["calls"] += findings.calls
                entry["share"] = entry["count"] / entry["calls"] if entry["calls"] else 1.0

    # ---- the Mechanism protocol ----------------------------------------------------
    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release:
        """One release (seeded from ``rng``); a failed or dropped one raises :class:`MechanismFailure`."""
        return release_once(self, X, rng)

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int
                     ) -> ReleaseBatch | TranscriptBatch | list[Release]:
        """``n`` releases seeded from ``rng``, with :class:`Failed` in place of failed ones (dropped ones left out)."""
        return self.draw(X, seed_from_rng(rng), n).releases

    def __repr__(self) -> str:
        return f"WorkerMechanism({self.spec!r}, epsilon={self.epsilon:g}, python={self.python!r})"
