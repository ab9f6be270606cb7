"""Every call into audited code, isolated: a private copy of the data, an opaque generator, faults as findings.

:func:`draw_releases` is how the attacks package gets releases: ``n`` releases
of ``mechanism`` on ``X`` seeded by one :class:`numpy.random.SeedSequence`,
returned as a :class:`Draw` (the releases and the :class:`Findings`).

* **Input isolation.**  The audited code never receives the caller's array:
  every call gets a fresh private copy, compared with the original afterwards
  — a write is a ``mutates-input`` finding (a note), and the caller's data
  and every later call are unaffected, so a mechanism that adds its noise in
  place (``X += noise``) is audited exactly like one that returns ``X + noise``.
* **Opaque randomness.**  Call generators come from :class:`OpaqueSeeds`: no
  spawn key tells the code which sample it is drawing.
* **Faults.**  An exception or a malformed value is deterministic given
  (input, seed): :class:`~dpaudit.mechanisms.base.Failed` takes the release's place
  (an outcome).  Running out of memory or exiting (``SystemExit``) depends on
  the environment: the release is retried once and then dropped, so the draw
  may hold fewer than ``n`` releases; :data:`MAX_CONSECUTIVE_DROPS` drops in
  a row raise :class:`MechanismBroken`.  An :class:`InvalidInputError` from
  the mechanism is its documented refusal of the input (e.g. data outside its
  public box): it propagates, as it would without the layer.
* **Proxies.**  An object with ``isolates_calls = True`` and a ``draw`` method
  (the :class:`~dpaudit.execution.worker.WorkerMechanism`, which runs the code
  in other processes with timeouts, one per *lane*) does all of this itself;
  the ``lane`` a caller names is passed on to it and ignored here.

Vectorised mechanisms (a callable ``release_many``) are called once per draw
on one private copy; a call that raises or returns a malformed batch is
redrawn one release at a time, so each failure is its own, independent
outcome.  Every generator is a function of the seed alone, so the same seed
gives the same draw in any process.
"""

from __future__ import annotations

import contextvars
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Iterator

import numpy as np

from dpaudit.mechanisms.base import (
    Failed,
    InvalidInputError,
    PrivacyLeakWarning,
    Release,
    ReleaseBatch,
    TranscriptBatch,
)
from dpaudit.mechanisms.plugins import MalformedReleaseError

from ._worker_calls import describe_exception
from .findings import ENVIRONMENT_KINDS, Findings, MechanismBroken, MechanismFailure
from .seeds import OpaqueSeeds, seed_from_rng
from .validate import check_batch, check_release, failure_kind, note_non_finite
from .worker_frames import defining_folders
from .worker_globals import SavedGlobals
from .worker_trace import ScreeningCall, frame_rule

__all__ = ["MAX_CONSECUTIVE_DROPS", "Draw", "EnvironmentFailure", "close_lanes", "describe_exception", "draw_releases", "quiet",
           "recording", "release_once", "warm_lanes"]

MAX_CONSECUTIVE_DROPS = 3  # dropped releases in a row (each already retried once) before a draw gives up


def quiet(fn: Any, *args: Any) -> Any:
    """Call ``fn`` with PrivacyLeakWarnings silenced: a run reports them once, from its probe, not once per
    release drawn."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return fn(*args)


@dataclass
class Draw:
    """The releases one draw produced, and what went wrong on the way.

    ``releases`` holds :class:`Failed` in place of a release that raised or was
    malformed; releases dropped after a timeout or crash are left out, and
    ``indices`` says which of the ``requested`` positions are present.
    """

    releases: ReleaseBatch | TranscriptBatch | list[Release]
    findings: Findings
    requested: int
    indices: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # a traced draw's traces (execution.worker_trace), one per kept release in the releases' order; else None
    traces: list[dict[str, Any] | None] | None = None

    @property
    def n(self) -> int:
        return len(self.releases)


def _mutated(private: np.ndarray, original: np.ndarray) -> bool:
    return (private.shape != original.shape or private.dtype != original.dtype
            or not np.array_equal(private, original))


class EnvironmentFailure(Exception):
    """A call failed because of its environment, not its answer (memory, an exit, a worker that died or
    timed out): retried, then dropped — in this process and in a worker's draw alike."""

    def __init__(self, kind: str, error: str) -> None:
        super().__init__(error)
        self.kind, self.error = kind, error


class _InProcessDraw:
    """One draw in this process (see the module docstring)."""

    def __init__(self, mechanism: Any, X: np.ndarray, seed: np.random.SeedSequence, *, trace: bool = False,
                 seed_globals: bool = False) -> None:
        self.mechanism = mechanism
        self.X = X
        self.seeds = OpaqueSeeds(seed)
        self.findings = Findings()
        self.consecutive_drops = 0
        self.screening = trace or seed_globals  # coupled screening calls (worker_trace.ScreeningCall)
        self.seed_globals = seed_globals
        self.rule = frame_rule(defining_folders(mechanism)) if trace else None
        self.traces: list[dict[str, Any] | None] | None = [] if trace else None
        self._screened: ScreeningCall | None = None

    def _release(self, i: int) -> Any:
        """The mechanism's ``release``; for a screening draw, wrapped as release i's :class:`ScreeningCall`."""
        if not self.screening:
            return self.mechanism.release
        call = self._screened = ScreeningCall(self.seeds.release_words([i])[0], self.rule, self.seed_globals)

        def release(X: np.ndarray, rng: np.random.Generator) -> Any:
            with call:
                return self.mechanism.release(X, call.rng(rng))
        release.__name__ = getattr(self.mechanism.release, "__name__", "release")
        return release

    def _call(self, method: Any, *args: Any, releases: int) -> Any:
        """``method(private copy of X, *args)``: faults sorted into outcomes and environment failures."""
        private = self.X.copy()
        try:
            return method(private, *args)
        except InvalidInputError:
            raise  # the mechanism refuses this input: not a fault of the code
        except MalformedReleaseError as exc:  # a plug-in adapter found the value unusable
            return Failed(failure_kind(str(exc)), describe_exception(exc))
        except MemoryError as exc:
            raise EnvironmentFailure("crash", f"ran out of memory: {describe_exception(exc)}") from None
        except SystemExit as exc:
            raise EnvironmentFailure("crash", f"tried to exit the process (SystemExit {exc.code!r})") from None
        except Exception as exc:  # noqa: BLE001 - audited code: its exception is an outcome
            return Failed("raises", describe_exception(exc))
        finally:
            if _mutated(private, self.X):
                self.findings.record("mutates-input", f"{getattr(method, '__name__', 'release')} wrote into "
                                     "its input array", count=releases)

    def one(self, i: int) -> Release | None:
        """Release i (its own generator), retried once after an environment failure; None when dropped."""
        last: EnvironmentFailure | None = None
        for attempt in range(2):
            if attempt:
                self.findings.add_calls(1)  # a retry is a call of its own
            try:
                rel = self._call(self._release(i), self.seeds.release(i), releases=1)
            except EnvironmentFailure as env:
                self.findings.record(env.kind, env.error)
                last = env
                continue
            self.consecutive_drops = 0
            if self.traces is not None and self._screened is not None:
                self.traces.append(self._screened.trace)
            rel = check_release(rel, self.X)
            if isinstance(rel, Failed):
                self.findings.record(rel.reason, rel.error)
            return rel
        if last is None:
            raise RuntimeError("a release was dropped without an environment failure")
        self.findings.record(last.kind, last.error, count=0, dropped=1)
        self.consecutive_drops += 1
        if self.consecutive_drops >= MAX_CONSECUTIVE_DROPS:
            raise MechanismBroken(f"the audited code failed {self.consecutive_drops} releases in a row, each "
                                  f"retried once ({last.kind}: {last.error})", self.findings, scope="dataset")
        return None

    def one_by_one(self, positions: range) -> tuple[list[Release], list[int]]:
        releases, kept = [], []
        for i in positions:
            rel = self.one(i)
            if rel is not None:
                releases.append(rel)
                kept.append(i)
        return releases, kept

    def vectorised(self, n: int) -> tuple[ReleaseBatch | TranscriptBatch | list[Release], list[int] | None]:
        """One ``release_many`` call; redrawn one by one when it fails as a whole."""
        try:
            batch = self._call(self.mechanism.release_many, self.seeds.call(0), n, releases=n)
        except EnvironmentFailure as env:
            self.findings.record(env.kind, f"release_many: {env.error}")
            return self.one_by_one(range(n))
        if isinstance(batch, Failed):
            self.findings.record(batch.reason, f"release_many: {batch.error}")
            return self.one_by_one(range(n))
        releases, problem = check_batch(batch, self.X, n)
        if releases is None:
            self.findings.record("wrong-shape", problem or "malformed batch")
            return self.one_by_one(range(n))
        if not isinstance(releases, ReleaseBatch):
            for rel in releases:
                if isinstance(rel, Failed):
                    self.findings.record(rel.reason, rel.error)
        return releases, None

    def run(self, n: int, per_release: bool) -> Draw:
        self.findings.add_calls(n)
        if not (per_release or self.screening) and callable(getattr(self.mechanism, "release_many", None)):
            releases, kept = self.vectorised(n)
        elif self.seed_globals:  # each call seeds the global generators: the caller's states come back after
            with SavedGlobals():
                releases, kept = self.one_by_one(range(n))
        else:
            releases, kept = self.one_by_one(range(n))
        indices = np.arange(n) if kept is None else np.asarray(kept, dtype=np.int64)
        stacked = ReleaseBatch.stack(releases)
        note_non_finite(self.findings, stacked)
        return Draw(stacked, self.findings, n, indices, self.traces)


def draw_releases(mechanism: Any, X: np.ndarray, seed: np.random.SeedSequence, n: int, *,
                  per_release: bool = False, lane: Hashable = None, trace: bool = False,
                  seed_globals: bool = False) -> Draw:
    """``n`` isolated releases of ``mechanism`` on ``X`` from ``seed`` (see the module docstring).

    ``per_release`` calls ``release`` once per release even when the mechanism
    has a vectorised ``release_many`` (each release then has its own generator,
    so any single one can be replayed).  ``lane`` (any hashable key; None: the
    shared lane) names the worker process the draw runs in, for code that runs
    in workers: a lane's process only ever receives data drawn in that lane
    (see :mod:`execution`).  Code in this process ignores it.

    ``trace`` and ``seed_globals`` make every call a *coupled screening call*
    (one call per release; never for certification: they cost time):
    ``seed_globals`` seeds numpy's and ``random``'s global state from the
    release's own entropy for the call (:mod:`.worker_globals`), so that D and
    D′ drawn from one ``seed`` share those streams too; ``trace`` traces each
    call (:mod:`.worker_trace`) and the draw's :attr:`Draw.traces` holds one
    trace per kept release.  Without them nothing changes.
    """
    n = int(n)
    if getattr(mechanism, "isolates_calls", False):
        if trace or seed_globals:  # (the proxy's draw takes the flags only when they are set)
            return mechanism.draw(X, seed, n, per_release=True, lane=lane, trace=trace, seed_globals=seed_globals)
        return mechanism.draw(X, seed, n, per_release=per_release, lane=lane)
    X = np.ascontiguousarray(X, dtype=np.float64)
    return _InProcessDraw(mechanism, X, seed, trace=trace, seed_globals=seed_globals).run(n, per_release)


def warm_lanes(mechanism: Any, X: np.ndarray) -> str:
    """Warm the worker template of ``mechanism`` up on the public dataset ``X`` before more lanes are started
    (:meth:`~dpaudit.execution.worker.WorkerMechanism.warm`): lanes then start with the code's imports done
    and its caches filled.  Code in this process has no lanes: nothing to do.  Returns why warming was given
    up ("" when it works or there is nothing to warm)."""
    warm = getattr(mechanism, "warm", None)
    if not (getattr(mechanism, "isolates_calls", False) and callable(warm)):
        return ""
    return str(warm(np.ascontiguousarray(X, dtype=np.float64)))


def close_lanes(mechanism: Any, keep: Iterable[Hashable] = ()) -> int:
    """End the worker process of every lane of ``mechanism`` not in ``keep``; how many were ended.

    For callers done with some lanes (eliminated candidates): their processes
    stop holding memory.  A lane used again later starts afresh.  Code in this
    process has no lanes: nothing to do.
    """
    closer = getattr(mechanism, "close_lanes", None)
    return int(closer(keep)) if getattr(mechanism, "isolates_calls", False) and callable(closer) else 0


# --------------------------------------------------------------------------- #
# Single releases (attacks' targets, reconstruction) and where their findings go
# --------------------------------------------------------------------------- #
_RECORDER: contextvars.ContextVar[Findings | None] = contextvars.ContextVar("execution_findings", default=None)


@contextmanager
def recording(*, propagate: bool = True) -> Iterator[Findings]:
    """Collect the findings of every :func:`release_once` in this context (this process only).

    Chunked work in other processes returns its findings with its results
    instead; a nested context passes what it collected on to the outer one,
    unless ``propagate=False`` — for work that returns its findings itself
    (so that a caller who merges them does not count them twice).
    """
    findings = Findings()
    outer = _RECORDER.get()
    token = _RECORDER.set(findings)
    try:
        yield findings
    finally:
        _RECORDER.reset(token)
        if outer is not None and propagate:
            outer.merge(findings)


def release_once(mechanism: Any, X: np.ndarray, seed: np.random.SeedSequence | np.random.Generator, *,
                 call: str = "release", lane: Hashable = None) -> Release:
    """One isolated release (in ``lane``), for callers that need a usable release or nothing.

    ``seed`` may be a caller's generator: the opaque seed is then drawn from it.
    A failed or dropped release raises :class:`MechanismFailure`; code that is
    broken (:class:`MechanismBroken`) raises that.  Findings (failures and
    notes alike, a broken draw's too) go to the active :func:`recording`, if any.
    """
    if isinstance(seed, np.random.Generator):
        seed = seed_from_rng(seed)
    recorder = _RECORDER.get()
    try:
        draw = draw_releases(mechanism, X, seed, 1, per_release=True, lane=lane)
    except MechanismBroken as exc:
        if recorder is not None:
            recorder.merge(exc.findings)
        raise
    if recorder is not None:
        recorder.merge(draw.findings)
    if draw.n == 0:
        worst = next(f for f in draw.findings if f.kind in ENVIRONMENT_KINDS)
        raise MechanismFailure({"kind": worst.kind, "call": call, "error": worst.error})
    rel = draw.releases[0]
    if isinstance(rel, Failed):
        raise MechanismFailure({"kind": rel.reason, "call": call, "error": rel.error})
    return rel
