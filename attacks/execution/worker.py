"""Run audited code in a worker process under a timeout — optionally in another interpreter.

:class:`WorkerMechanism` is a :class:`~mechanisms.base.Mechanism`-compatible
proxy that isolates its own calls (``isolates_calls``): :func:`draw_releases`
hands it the draw, and it sends the data to a worker process
(``_worker_main.py``, stdlib + numpy only; :mod:`.process`) and waits at most
``timeout`` seconds per request.  ``python`` names the interpreter the worker
runs in — the audited code's own virtual environment (IBM diffprivlib, for
one, needs scikit-learn < 1.8, which dpaudit's own environment does not have).

The worker is reused between calls.  Inside it every call gets a fresh copy of
the cached data and an opaque generator (the entropy is chosen here, from the
draw's seed, exactly as in-process, so a per-release draw gives the same
numbers in both places).  Exceptions and malformed values become
:class:`~mechanisms.base.Failed` outcomes; a timeout or a dead process (exit,
segfault, out of memory — see ``memory_limit``) kills the worker, and the
release is retried once in a fresh one and then dropped, as
:mod:`.isolation` describes.  Besides the :class:`Findings` of each draw, the
proxy keeps :attr:`WorkerMechanism.findings`, one entry per (part, kind) over
its lifetime, for callers that label their phases with :attr:`part`.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import mechanisms
from mechanisms.base import (
    Centroids,
    Failed,
    InvalidInputError,
    Labels,
    Points,
    PrivacyClaim,
    Release,
    ReleaseBatch,
    Spans,
    Vector,
    check_epsilon,
    warn_privacy_leak,
)
from mechanisms.plugins import MalformedReleaseError, wrap_array

from .findings import Findings, MechanismBroken
from .isolation import MAX_CONSECUTIVE_DROPS, Draw, release_once
from .process import WorkerProcess
from .seeds import OpaqueSeeds, seed_from_rng
from .validate import check_batch, check_release, failure_kind

__all__ = ["WorkerMechanism"]

LOAD_TIMEOUT = 60.0  # seconds a worker may take to start and load the audited code
_MECHANISMS_ROOT = str(Path(mechanisms.__file__).resolve().parent.parent)
_KINDS: dict[str, tuple[type[Release], str]] = {
    "points": (Points, "points"), "centroids": (Centroids, "centers"), "labels": (Labels, "labels"),
    "vector": (Vector, "values")}


class _Environment(Exception):
    def __init__(self, kind: str, error: str) -> None:
        super().__init__(error)
        self.kind, self.error = kind, error


class WorkerMechanism:
    """A mechanism whose every call runs in a worker process under ``timeout`` seconds.

    Parameters
    ----------
    spec : str
        Registered name, ``module:attr`` or ``file.py:attr`` (resolved in the worker).
    epsilon : float
        The ε the audited code is asked to honour (and claims, unless it states its own claim).
    output, neighbours, delta
        For plain functions and estimators, which cannot state them: the release kind and the claim.
    params : dict
        Further constructor parameters.
    python : str
        Interpreter the worker runs in (default: this one).  A plug-in spec is
        resolved with that interpreter's own packages only; a registered name
        additionally finds dpaudit's ``mechanisms`` package (appended, so the
        interpreter's own packages come first).
    timeout : float
        Seconds each request may take.
    memory_limit : int, optional
        Bytes the worker may allocate beyond its start-up size (``RLIMIT_AS``,
        Unix): a larger allocation fails in the worker instead of exhausting the machine.

    A mechanism with a vectorised ``release_many`` runs in fixed batches of
    :attr:`VECTOR_BATCH` per request; other code is called once per release,
    with a number of releases per request that adapts so a request takes about
    a quarter of the timeout.  Neither changes the numbers.
    """

    VECTOR_BATCH = 64
    isolates_calls = True

    def __init__(self, spec: str, *, epsilon: float, output: str = "points", neighbours: str = "add-remove",
                 delta: float = 0.0, params: dict[str, Any] | None = None, python: str | None = None,
                 timeout: float = 60.0, memory_limit: int | None = None) -> None:
        self.spec = spec
        self.epsilon = check_epsilon(epsilon)
        self.output = output
        self.params = dict(params or {})
        self.python = python or sys.executable
        if not timeout > 0:
            raise InvalidInputError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.timeout = float(timeout)
        if memory_limit is not None and int(memory_limit) <= 0:
            raise InvalidInputError(f"memory_limit must be a positive number of bytes, got {memory_limit!r}")
        self.memory_limit = None if memory_limit is None else int(memory_limit)
        self.findings: list[dict[str, Any]] = []
        self.part = "load"
        self._proc: WorkerProcess | None = None
        self._batch = 1
        info = self._load()
        self.name = info.get("name", spec)
        self.plugin_kind = info.get("kind", "mechanism")
        self.vectorised = bool(info.get("vectorised"))
        self.memory = info.get("memory", "no limit")
        stated = info.get("claim")
        self.claim = (PrivacyClaim(stated["epsilon"], stated["delta"], stated["neighbours"]) if stated
                      else PrivacyClaim(self.epsilon, delta, neighbours))
        self.part = "release"

    # ---- process management ------------------------------------------------------
    def _load_header(self) -> dict[str, Any]:
        params = {"epsilon": self.epsilon, **self.params}
        registered = ":" not in self.spec
        if registered:  # registered names take only their own parameters
            params = {k: v for k, v in params.items() if k not in ("output", "neighbours", "delta")}
        return {"op": "load", "spec": self.spec, "params": params, "output": self.output,
                "mechanisms_root": _MECHANISMS_ROOT if registered else None, "memory_limit": self.memory_limit}

    @property
    def _load_timeout(self) -> float:
        """Starting an interpreter and importing the audited code is not a call: it gets at least a minute."""
        return max(self.timeout, LOAD_TIMEOUT)

    def _start(self) -> WorkerProcess:
        if self._proc is None or self._proc.proc.poll() is not None:
            self._discard()
            self._proc = WorkerProcess(self.python)
            header, _ = self._proc.call(self._load_header(), None, self._load_timeout)
            if not header.get("ok"):
                raise ChildProcessError(f"the restarted worker could not load {self.spec}: {header.get('error')}")
        return self._proc

    def _load(self) -> dict[str, Any]:
        try:
            self._proc = WorkerProcess(self.python)
            header, _ = self._proc.call(self._load_header(), None, self._load_timeout)
        except (TimeoutError, ChildProcessError) as exc:
            self._discard()
            raise InvalidInputError(f"loading {self.spec} in a worker failed: {exc}") from None
        if not header.get("ok"):
            self._discard()
            raise InvalidInputError(f"loading {self.spec} failed: {header.get('error')}")
        return header

    def _discard(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc = None

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()
            self._proc = None

    def __del__(self) -> None:
        try:
            self._discard()
        except Exception:  # noqa: BLE001
            pass

    def __getstate__(self) -> dict[str, Any]:  # picklable: a copy starts its own worker
        state = dict(self.__dict__)
        state["_proc"] = None
        return state

    # ---- the execution-layer protocol ------------------------------------------------
    def draw(self, X: np.ndarray, seed: np.random.SeedSequence, n: int, *, per_release: bool = False) -> Draw:
        """``n`` releases on ``X`` from ``seed`` (see :func:`~attacks.execution.isolation.draw_releases`)."""
        run = _WorkerDraw(self, np.ascontiguousarray(X, dtype=np.float64), OpaqueSeeds(seed))
        run.findings.add_calls(n)
        try:
            if self.vectorised and not per_release:
                releases, kept = run.vectorised(int(n))
            else:
                releases, kept = run.one_by_one(list(range(int(n))))
        finally:
            self._note(run.findings)
        return Draw(ReleaseBatch.stack(releases), run.findings, int(n), np.asarray(kept, dtype=np.int64))

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

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch | list[Release]:
        """``n`` releases seeded from ``rng``, with :class:`Failed` in place of failed ones (dropped ones left out)."""
        return self.draw(X, seed_from_rng(rng), n).releases

    def __repr__(self) -> str:
        return f"WorkerMechanism({self.spec!r}, epsilon={self.epsilon:g}, python={self.python!r})"


class _WorkerDraw:
    """One draw through the worker: requests, retries, drops, findings."""

    def __init__(self, owner: WorkerMechanism, X: np.ndarray, seeds: OpaqueSeeds) -> None:
        self.owner, self.X, self.seeds = owner, X, seeds
        self.x_id = hashlib.blake2b(X.tobytes() + str(X.shape).encode(), digest_size=16).hexdigest()
        self.findings = Findings()
        self.consecutive_drops = 0

    # ---- one request ----------------------------------------------------------------
    def request(self, header: dict[str, Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        owner = self.owner
        header = {"op": "release", "x_id": self.x_id, **header}
        try:
            proc = owner._start()
            reply, payload = proc.call(header, None if proc.x_id == self.x_id else {"X": self.X}, owner.timeout)
            if reply.get("need_x"):
                reply, payload = proc.call(header, {"X": self.X}, owner.timeout)
            proc.x_id = self.x_id
        except TimeoutError as exc:
            owner._discard()
            raise _Environment("timeout", str(exc)) from None
        except ChildProcessError as exc:
            owner._discard()
            raise _Environment("crash", str(exc)) from None
        for leak in reply.get("leaks", []):
            warn_privacy_leak(leak if leak.startswith(str(owner.name)) else f"{owner.name}: {leak}")
        if not reply.get("ok"):  # the worker could not even frame the answer: an outcome of these calls
            n = 1 if header.get("vectorised") else len(header["entropy"])
            reply = {"releases": [{"kind": "failed", "reason": "raises", "error": str(reply.get("error"))}] * n}
        return reply, payload

    def _environment_failure(self, kind: str, error: str) -> None:
        self.findings.record(kind, error)
        self.owner._discard()  # the retry runs in a fresh worker

    def _drop(self, kind: str, error: str) -> None:
        self.findings.record(kind, error, count=0, dropped=1)
        self.consecutive_drops += 1
        if self.consecutive_drops >= MAX_CONSECUTIVE_DROPS:
            raise MechanismBroken(f"the audited code failed {self.consecutive_drops} releases in a row, each "
                                  f"retried once in a fresh worker ({kind}: {error})", self.findings)

    # ---- building releases -------------------------------------------------------------
    def build(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Release:
        """The release a reply describes, checked; :class:`Failed` when it is not usable."""
        if meta.get("mutated"):
            self.findings.record("mutates-input", "the audited code wrote into its input array")
        kind = meta["kind"]
        if kind == "refused":
            raise InvalidInputError(str(meta.get("error")))
        if kind == "failed":
            rel: Release = Failed(meta["reason"], str(meta.get("error", "")))
        else:
            try:
                if kind == "spans":
                    cells = tuple(arrays[f"cells{j}"] for j in range(meta["n_cells"]))
                    rel = Spans(arrays["origin"], float(arrays["width"]), tuple(arrays["shape"].tolist()), cells)
                elif kind == "raw":
                    rel = wrap_array(arrays["value"], self.owner.output, self.X)
                else:
                    cls, _field = _KINDS[kind]
                    rel = (Centroids(arrays["value"], arrays.get("counts")) if cls is Centroids
                           else cls(arrays["value"]))  # type: ignore[call-arg]
                rel = check_release(rel, self.X)
            except (MalformedReleaseError, InvalidInputError, ValueError, KeyError, TypeError) as exc:
                rel = Failed(failure_kind(str(exc)), str(exc))
        if isinstance(rel, Failed):
            self.findings.record(rel.reason, rel.error)
        return rel

    # ---- per release ---------------------------------------------------------------------
    def one_by_one(self, positions: list[int]) -> tuple[list[Release], list[int]]:
        """Releases at ``positions``, several per request; each retried once after a timeout or crash."""
        owner = self.owner
        out: list[Release] = []
        kept: list[int] = []
        attempts: dict[int, int] = {}
        careful: set[int] = set()  # releases of a request that failed as a whole: one per request until past them
        pending = list(positions)
        while pending:
            size = 1 if (attempts.get(pending[0]) or pending[0] in careful) else min(owner._batch, len(pending))
            batch = pending[:size]
            if attempts.get(pending[0]):
                self.findings.add_calls(1)  # a retry is a call of its own
            t0 = time.perf_counter()
            try:
                reply, payload = self.request({"entropy": [self.seeds.release_entropy(i) for i in batch],
                                               "vectorised": False})
            except _Environment as env:
                if size > 1:  # cannot tell which release it was: find out one at a time
                    careful.update(batch)
                    continue
                reply, payload = {"releases": [{"kind": "failed", "reason": env.kind, "environment": True,
                                                "error": env.error}]}, {}
            per_call = _split_payload(payload)
            metas = reply["releases"][:len(batch)]
            if not metas:  # a reply that answers nothing: as if the process had died
                metas = [{"kind": "failed", "reason": "crash", "environment": True,
                          "error": "the worker answered a request with no release"}]
            if not metas[-1].get("environment"):
                per = (time.perf_counter() - t0) / len(metas)
                owner._batch = int(np.clip(owner.timeout / 4.0 / max(per, 1e-6), 1, 1000))
            for j, meta in enumerate(metas):
                i = batch[j]
                if meta.get("environment"):
                    self._environment_failure(meta["reason"], meta["error"])
                    attempts[i] = attempts.get(i, 0) + 1
                    if attempts[i] >= 2:
                        pending.pop(0)
                        self._drop(meta["reason"], meta["error"])
                    break  # the worker stopped at this release
                out.append(self.build(meta, per_call.get(str(j), {})))
                kept.append(i)
                pending.pop(0)
                self.consecutive_drops = 0
        return out, kept

    # ---- vectorised ------------------------------------------------------------------------
    def vectorised(self, n: int) -> tuple[ReleaseBatch | list[Release], list[int]]:
        """Fixed batches of ``VECTOR_BATCH``, batch b seeded by call entropy b; a failed batch is redrawn per release."""
        segments: list[ReleaseBatch | list[Release]] = []
        kept: list[int] = []
        size_of = self.owner.VECTOR_BATCH
        for b, start in enumerate(range(0, n, size_of)):
            size = min(size_of, n - start)
            positions = list(range(start, start + size))
            segment, problem = self._vector_batch(b, size)
            if segment is None:
                if problem is not None:
                    kind, error = problem
                    self.findings.record(kind, f"release_many: {error}")
                segment, got = self.one_by_one(positions)
                kept += got
            else:
                kept += positions
            segments.append(segment)
        return _concatenate(segments), kept

    def _vector_batch(self, b: int, size: int) -> tuple[ReleaseBatch | list[Release] | None, tuple[str, str] | None]:
        try:
            reply, payload = self.request({"entropy": [self.seeds.call_entropy(b)], "vectorised": True, "n": size})
        except _Environment as env:
            self.owner._discard()
            return None, (env.kind, env.error)
        metas = reply["releases"]
        meta = metas[0]
        if meta["kind"] == "refused":
            raise InvalidInputError(str(meta.get("error")))
        if meta["kind"] == "failed":
            if meta.get("environment"):
                self.owner._discard()
            return None, (meta["reason"], str(meta.get("error", "")))
        if "batched" not in meta:  # release_many returned a list: one entry per release
            if len(metas) != size:
                return None, ("wrong-shape", f"release_many returned {len(metas)} releases, {size} were asked for")
            per_call = _split_payload(payload)
            return [self.build(m, per_call.get(str(j), {})) for j, m in enumerate(metas)], None
        if meta.get("mutated"):
            self.findings.record("mutates-input", "release_many wrote into its input array", count=size)
        arrays = _split_payload(payload).get("0", {})
        try:
            batch = ReleaseBatch(meta["kind"], arrays["value"], arrays.get("counts"))
        except (InvalidInputError, KeyError) as exc:
            return None, ("wrong-shape", str(exc))
        releases, problem = check_batch(batch, self.X, size)
        if releases is None:
            return None, ("wrong-shape", problem or "malformed batch")
        if not isinstance(releases, ReleaseBatch):
            for rel in releases:
                if isinstance(rel, Failed):
                    self.findings.record(rel.reason, rel.error)
        return releases, None


def _split_payload(payload: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """``{"<call>.<name>": array}`` (or stacked ``{"*.<name>": array}``) → ``{call: {name: array}}``."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for key, value in payload.items():
        call, _, name = key.partition(".")
        if call == "*":
            for j, row in enumerate(value):
                out.setdefault(str(j), {})[name] = row
        else:
            out.setdefault(call, {})[name] = value
    return out


def _concatenate(segments: list[ReleaseBatch | list[Release]]) -> ReleaseBatch | list[Release]:
    """One batch when every segment is a batch of the same kind and shape, else one flat list."""
    if segments and all(isinstance(s, ReleaseBatch) for s in segments):
        batches: list[ReleaseBatch] = segments  # type: ignore[assignment]
        same = len({(s.kind, s.array.shape[1:], s.counts is None) for s in batches}) == 1
        if same:
            counts = None if batches[0].counts is None else np.concatenate([s.counts for s in batches])
            return ReleaseBatch(batches[0].kind, np.concatenate([s.array for s in batches]), counts)
    flat = [r for s in segments for r in (list(s) if isinstance(s, ReleaseBatch) else s)]
    return ReleaseBatch.stack(flat)
