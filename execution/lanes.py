"""Lanes: one worker process per lane, each of which only ever receives its own lane's data.

A *lane* is any hashable key a caller draws under (the estimator: one per
side of each candidate pair, and one for its probe; ``None``: the shared
lane).  :class:`Lanes` keeps, for one :class:`~dpaudit.execution.worker.WorkerMechanism`:

* a **template** — the first worker, which loads the audited code and, on
  Linux, becomes a fork server (``_worker_main.py``): it never receives the
  user's data, and each new lane is a child it forks, a process that has
  imported and built the code.  When the caller asks (:meth:`Lanes.warm`) the
  template first calls the code a few times on a *public* dataset the auditor
  built in the public box and throws the answers away, so that every lane
  forked after starts with the code's lazy imports done and its caches filled
  — the same for every lane, so no lane knows more than another; a warm-up
  that hangs, kills the template or starts threads is given up and the lanes
  are forked cold;
* where forking is not available (another OS, or code that starts threads
  when imported) a **fresh interpreter** per lane, loaded from scratch (the
  first lane gets the process that loaded the code at start-up, which has
  never received data either);
* at most ``max_live`` live lane processes: using one more closes the least
  recently used;
* for a *copy* (a worker mechanism unpickled in a joblib or Dask worker, one
  per chunk) the template is **shared** by every copy of the same mechanism in
  that process (:func:`close_shared_templates` ends them; they also die with
  the process): a template never receives data, so sharing it shares nothing
  but the loaded code, and a chunk costs a fork instead of a full load.  A lane that was closed, evicted, or whose process died or
  was killed (a timeout) gets a *new* process when it is used again — never
  another lane's, so the process serving lane L has never received data of
  any other lane.
"""

from __future__ import annotations

import atexit
import json
import sys
import threading
import time
from collections import OrderedDict, deque
from typing import Any, Callable, Hashable, Iterable

import numpy as np

from .process import ForkedLane, WorkerProcess

__all__ = ["LaneLoadError", "Lanes", "close_later", "close_shared_templates"]

Channel = WorkerProcess | ForkedLane

_SHARED: dict[tuple[str, str], WorkerProcess] = {}  # the templates copies share, by (python, load request)
_SHARED_LOCK = threading.Lock()


def close_shared_templates() -> None:
    """End every template shared by copies in this process (their lanes die with them)."""
    with _SHARED_LOCK:
        templates = list(_SHARED.values())
        _SHARED.clear()
    for template in templates:
        try:
            template.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass


atexit.register(close_shared_templates)


class _Reaper:
    """Closes the lanes of mechanisms that were garbage-collected, in a thread of its own.

    A finalizer runs in whichever thread the collection started in — under Dask, the worker's event loop,
    inside its profiler's ``sys._current_frames()``, which holds the interpreter's thread-list lock.  On
    CPython 3.11 a finalizer that releases the GIL there (closing a socket, killing a process) can deadlock
    the whole worker (python/cpython#106883, dask/distributed#8616): the Dask worker stops answering, and
    its chunk never finishes.  So a finalizer only appends to a deque (no lock, no system call) and this
    thread, started with the first lanes of the process, closes them.
    """

    POLL_SECONDS = 0.25

    def __init__(self) -> None:
        self.pending: deque[Lanes] = deque()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def start(self) -> None:
        """Start the thread (never from a finalizer: a thread's start takes the thread-list lock too)."""
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="dpaudit-lanes-reaper", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self.POLL_SECONDS)
            while self.pending:
                lanes = self.pending.popleft()
                try:
                    lanes.close(graceful=False)
                except Exception:  # noqa: BLE001 - already gone; at worst the process dies with its parent
                    pass


_REAPER = _Reaper()


def close_later(lanes: "Lanes") -> None:
    """Hand ``lanes`` to the reaper thread (see :class:`_Reaper`): safe in a finalizer, on any thread."""
    _REAPER.pending.append(lanes)


class LaneLoadError(ChildProcessError):
    """A worker could not load the audited code (the reply's error in the message; ``plain``: the message is
    the whole line of a user mistake, e.g. a plug-in of the wrong form)."""

    def __init__(self, message: str, plain: bool = False) -> None:
        super().__init__(message)
        self.plain = plain


class Lanes:
    """The worker processes of one mechanism, by lane (see the module docstring).

    ``load_header()`` is the ``load`` request; ``timeouts()`` gives
    (load timeout, call timeout) in seconds.
    """

    def __init__(self, python: str, load_header: Callable[[], dict[str, Any]],
                 timeouts: Callable[[], tuple[float, float]], max_live: int, *, shared: bool = False,
                 warm_with: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.python, self.load_header, self.timeouts = python, load_header, timeouts
        self.max_live = max(1, int(max_live))
        self.shared = shared  # the template is this process's shared one for the same load request
        # (public dataset, entropy words) a template is warmed up on before it forks lanes (warm); None: never
        self.warm_with = warm_with
        self.warm_note = ""  # why warming was given up ("" while it works, or was never asked for)
        self.template: WorkerProcess | None = None
        self.spare: WorkerProcess | None = None  # loaded, never given data: the next lane's (no fork)
        self.live: OrderedDict[Hashable, Channel] = OrderedDict()
        self.started = 0  # lane processes started (forked or new), for tests and benchmarks
        _REAPER.start()  # here, not in a finalizer: close_later() needs it running

    # ---- starting ----------------------------------------------------------------------
    def load(self) -> dict[str, Any]:
        """Start a worker and load the audited code: the template when it can fork, else a spare.

        Returns the ``load`` reply; raises :class:`LaneLoadError` (or
        ``TimeoutError`` / ``ChildProcessError``) when that fails.
        """
        if self.shared:
            key = (self.python, json.dumps(self.load_header(), sort_keys=True, default=str))
            with _SHARED_LOCK:  # one load per process and key, even with several threads (Dask)
                template = _SHARED.get(key)
                if template is None or not template.alive():
                    header = self._start_worker()
                    if self.template is not None:
                        _SHARED[key] = self.template
                    return header
                self.template = template
                self._warm_template()
                return dict(template.info)
        return self._start_worker()

    def _start_worker(self) -> dict[str, Any]:
        proc = WorkerProcess(self.python, control=sys.platform.startswith("linux"))
        try:
            header, _ = proc.call({**self.load_header(), "control_fd": proc.control_fd}, None, self.timeouts()[0])
        except BaseException:
            proc.kill()
            raise
        if not header.get("ok"):
            proc.kill()
            raise LaneLoadError(str(header.get("error")), bool(header.get("plain")))
        if header.get("fork"):
            self._drop_template()
            self.template, proc.info = proc, dict(header)
            self._warm_template()
        else:
            if self.spare is not None:
                self.spare.kill()
            self.spare = proc
        return header

    # ---- warming the template ------------------------------------------------------------
    def warm(self, X: np.ndarray, words: np.ndarray) -> None:
        """Warm the template up on the public dataset ``X`` (one call per row of entropy ``words``) before it
        forks more lanes, so that each new lane starts with the code's imports done and its caches filled
        (``_worker_calls.warm_up``); a template started later is warmed the same way.  Lanes forked before
        keep what they had; where the warm-up hangs, kills the template or starts threads, warming is given up
        (:attr:`warm_note` says why) and lanes are forked cold, as before."""
        if self.warm_note:
            return
        self.warm_with = (np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(words, dtype=np.uint32))
        if self.template is not None and self.template.alive() and not self.template.info.get("warm"):
            self._warm_template()

    def _warm_template(self) -> None:
        template = self.template
        if template is None or self.warm_with is None or self.warm_note or template.info.get("warm"):
            return
        X, words = self.warm_with
        try:
            with template.lock:
                reply, _ = template.call({"op": "warm"}, {"X": X, "entropy": words},
                                         self.timeouts()[1] * max(1, len(words)))
        except (TimeoutError, ChildProcessError) as exc:
            self.warm_note = f"the warm-up did not finish ({exc}): lanes start cold"
        else:
            if reply.get("ok") and reply.get("fork_safe", False):
                template.info["warm"] = True
                return
            self.warm_note = ("the warm-up started threads, so the template can no longer fork safely: lanes "
                              "start cold" if reply.get("ok") else f"the warm-up failed: {reply.get('error')}")
        self._drop_template()  # a cold one is started on the next lane

    @property
    def forks(self) -> bool:
        """Whether new lanes are forked from a template (else each is a new interpreter)."""
        return self.template is not None

    def _fresh(self) -> Channel:
        if self.template is not None and not self.template.alive():
            self._drop_template()
            self.load()  # the template itself died (killed from outside): start another
        if self.template is None and self.spare is None:
            self.load()
        if self.template is not None:
            lane: Channel = self.template.fork(self.timeouts()[0])
        else:
            if self.spare is None:
                raise RuntimeError("load() left neither a template nor a spare worker")
            lane, self.spare = self.spare, None
        self.started += 1
        return lane

    def channel(self, lane: Hashable) -> Channel:
        """The process serving ``lane``: its own, or a new one (closing the least recently used beyond the cap)."""
        proc = self.live.get(lane)
        if proc is not None and proc.alive():
            self.live.move_to_end(lane)
            return proc
        if proc is not None:
            self.discard(lane)
        proc = self._fresh()
        self.live[lane] = proc
        while len(self.live) > self.max_live:
            _, oldest = self.live.popitem(last=False)
            oldest.kill()
        return proc

    # ---- ending --------------------------------------------------------------------------
    def discard(self, lane: Hashable) -> None:
        """Kill ``lane``'s process (after a timeout or a crash): the lane's next call gets a new one."""
        proc = self.live.pop(lane, None)
        if proc is not None:
            proc.kill()

    def close_lanes(self, keep: Iterable[Hashable] = ()) -> int:
        """End every lane's process but those in ``keep``; how many were ended."""
        keep = set(keep)
        gone = [lane for lane in self.live if lane not in keep]
        for lane in gone:
            self.discard(lane)
        return len(gone)

    def _drop_template(self) -> None:
        if self.template is not None:
            for lane in [k for k, p in self.live.items() if isinstance(p, ForkedLane)]:
                self.discard(lane)
            if not self.shared:
                self.template.kill()
            self.template = None

    def close(self, *, graceful: bool = True) -> None:
        """End every process: lanes, spare and template.  Not ``graceful`` (garbage collection, exit): no
        request is sent — the template is killed, and its forked lanes die with it (parent-death signal)."""
        for lane in list(self.live):
            proc = self.live.pop(lane)
            if graceful or not isinstance(proc, ForkedLane):
                proc.kill()
            elif self.shared:
                proc.drop()  # the shared template stays: it ends the lane at its next request
            else:
                proc.abandon()  # the template is killed below, and its lanes die with it
        for idle in (self.spare, None if self.shared else self.template):
            if idle is not None:
                idle.close() if graceful else idle.kill()
        self.spare = self.template = None

    def pids(self) -> dict[Hashable, int]:
        """The pid of each live lane's process."""
        return {lane: proc.pid for lane, proc in self.live.items()}
