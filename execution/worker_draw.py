"""One draw of releases through a worker process: requests, retries, drops, the hang rule and findings.

:class:`WorkerDraw` is the worker-side counterpart of the in-process draw in
:mod:`.isolation`, in one lane (:mod:`.lanes`).  Releases are requested
several at a time (one vectorised batch, or a number of single calls that
adapts so a request takes about a quarter of the timeout, up to
:data:`MAX_BATCH`); the worker stacks same-shape answers into one array and
this side checks and wraps them in one vectorised step
(:func:`~.validate.wrap_rows`), placing each failed call's
:class:`~dpaudit.mechanisms.base.Failed` at its own position.

A request that times out or kills the process costs the lane its process.
Then, per the owner's *hang budget* (:meth:`WorkerMechanism._timed_out
<dpaudit.execution.worker.WorkerMechanism._timed_out>`): a request of several
releases is redone one release at a time, so the release responsible is
found; a single release that timed out in a part where the code has not yet
answered in time makes the code *broken* for the part at once
(:class:`MechanismBroken`); otherwise the release is retried once in a fresh
process and then dropped, and :data:`~.isolation.MAX_CONSECUTIVE_DROPS` drops
in a row raise :class:`MechanismBroken`.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from dpaudit.mechanisms.base import (
    Centroids,
    Failed,
    InvalidInputError,
    Labels,
    Points,
    Release,
    ReleaseBatch,
    Spans,
    TranscriptBatch,
    Vector,
    warn_privacy_leak,
)
from dpaudit.mechanisms.plugins import MalformedReleaseError, wrap_array

from .findings import Findings, MechanismBroken
from .isolation import MAX_CONSECUTIVE_DROPS, EnvironmentFailure
from .seeds import OpaqueSeeds
from .validate import batch_problem, check_batch, check_release, failure_kind, wrap_rows

__all__ = ["MAX_BATCH", "WorkerDraw", "concatenate"]

MAX_BATCH = 4096  # single calls per request, at most

_KINDS: dict[str, tuple[Callable[[np.ndarray], Release], str]] = {
    "points": (Points, "points"), "centroids": (Centroids, "centers"), "labels": (Labels, "labels"),
    "vector": (Vector, "values")}

Segment = ReleaseBatch | TranscriptBatch | list[Release]


class _Sent:
    """A request on its way: what was sent, on which process (or why it could not be)."""

    def __init__(self, header: dict[str, Any], words: np.ndarray) -> None:
        self.header, self.words = header, words
        self.t0 = time.perf_counter()  # when it was sent: the worker's time for it runs from here
        self.proc: Any = None
        self.error: BaseException | None = None


class WorkerDraw:
    """One draw through the worker of ``lane``: requests, retries, drops, findings."""

    def __init__(self, owner: Any, X: np.ndarray, seeds: OpaqueSeeds, lane: Hashable = None, *,
                 trace: bool = False, seed_globals: bool = False) -> None:
        self.owner, self.X, self.seeds, self.lane = owner, X, seeds, lane
        self.x_id = hashlib.blake2b(X.tobytes() + str(X.shape).encode(), digest_size=16).hexdigest()
        self.findings = Findings()
        self.consecutive_drops = 0
        # coupled screening calls: the flags each request carries; traces, one per kept release (one_by_one)
        self.flags = {k: True for k, on in (("trace", trace), ("seed_globals", seed_globals)) if on}
        self.traces: list[dict[str, Any] | None] | None = [] if trace else None

    # ---- one request ----------------------------------------------------------------
    def send(self, header: dict[str, Any], words: np.ndarray) -> _Sent:
        """Send one release request in this draw's lane (its reply: :meth:`receive`)."""
        sent = _Sent({"op": "release", "x_id": self.x_id, **header}, np.ascontiguousarray(words, dtype=np.uint32))
        try:
            sent.proc = self.owner._start(self.lane)
        except (TimeoutError, ChildProcessError) as exc:
            sent.error = exc
            return sent
        arrays = {"entropy": sent.words}
        sent.proc.send(sent.header, arrays if sent.proc.x_id == self.x_id else {**arrays, "X": self.X})
        return sent

    def receive(self, sent: _Sent, *, single: bool) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The reply to a request :meth:`send` sent; ``single``: it asked for one release alone."""
        owner = self.owner
        try:
            if sent.error is not None:
                raise sent.error
            reply, payload = sent.proc.receive(owner.timeout)
            if reply.get("need_x"):
                reply, payload = sent.proc.call(sent.header, {"entropy": sent.words, "X": self.X}, owner.timeout)
            sent.proc.x_id = self.x_id
        except TimeoutError as exc:
            owner._discard(self.lane)
            broken = owner._timed_out(single)
            if broken is not None:  # the hang rule: no retry, the part is over for this code
                self.findings.record("timeout", str(exc), dropped=1)
                raise MechanismBroken(f"{broken} ({exc})", self.findings) from None
            raise EnvironmentFailure("timeout", str(exc)) from None
        except ChildProcessError as exc:
            owner._discard(self.lane)
            raise EnvironmentFailure("crash", str(exc)) from None
        owner._answered()
        for leak in reply.get("leaks", []):
            warn_privacy_leak(leak if leak.startswith(str(owner.name)) else f"{owner.name}: {leak}")
        if not reply.get("ok"):  # the worker could not even frame the answer: an outcome of these calls
            n = 1 if sent.header.get("vectorised") else len(sent.words)
            reply = {"releases": [{"kind": "failed", "reason": "raises", "error": str(reply.get("error"))}] * n}
        return reply, payload

    def request(self, header: dict[str, Any], words: np.ndarray, *, single: bool
                ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Send one release request and wait for its reply."""
        return self.receive(self.send(header, words), single=single)

    def _environment_failure(self, kind: str, error: str) -> None:
        self.findings.record(kind, error)
        self.owner._discard(self.lane)  # the retry runs in a fresh worker

    def _drop(self, kind: str, error: str) -> None:
        self.findings.record(kind, error, count=0, dropped=1)
        self.consecutive_drops += 1
        if self.consecutive_drops >= MAX_CONSECUTIVE_DROPS:
            raise MechanismBroken(f"the audited code failed {self.consecutive_drops} releases in a row, each "
                                  f"retried once in a fresh worker ({kind}: {error})", self.findings, scope="dataset")

    # ---- building releases -------------------------------------------------------------
    def _failed(self, meta: dict[str, Any]) -> Failed:
        if meta["kind"] == "refused":
            raise InvalidInputError(str(meta.get("error")))
        rel = Failed(meta["reason"], str(meta.get("error", "")))
        self.findings.record(rel.reason, rel.error)
        return rel

    def build(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Release:
        """The release one call's reply describes, checked; :class:`Failed` when it is not usable."""
        if meta.get("mutated"):
            self.findings.record("mutates-input", "the audited code wrote into its input array")
        kind = meta["kind"]
        if kind in ("failed", "refused"):
            return self._failed(meta)
        try:
            if kind == "spans":
                cells = tuple(arrays[f"cells{j}"] for j in range(meta["n_cells"]))
                rel: Release = Spans(arrays["origin"], float(arrays["width"]), tuple(arrays["shape"].tolist()), cells)
            elif kind == "raw":
                rel = wrap_array(arrays["value"], self.owner.output, self.X)
            else:
                cls, _field = _KINDS[kind]
                rel = (Centroids(arrays["value"], arrays.get("counts")) if cls is Centroids
                       else cls(arrays["value"]))
            rel = check_release(rel, self.X)
        except (MalformedReleaseError, InvalidInputError, ValueError, KeyError, TypeError) as exc:
            rel = Failed(failure_kind(str(exc)), str(exc))
        if isinstance(rel, Failed):
            self.findings.record(rel.reason, rel.error)
        return rel

    def _rows(self, kind: str, payload: dict[str, np.ndarray], m: int) -> Segment:
        """``m`` stacked values of one kind, checked in one step where the kind allows it."""
        value, counts = payload["*.value"], payload.get("*.counts")
        if kind == "raw":
            rows: Segment = wrap_rows(value, self.owner.output, self.X)
        elif kind in _KINDS and batch_problem(batch := ReleaseBatch(kind, value, counts), self.X, m) is None:
            checked = check_batch(batch, self.X, m)[0]
            if checked is None:
                raise RuntimeError("check_batch rejected a batch batch_problem accepted")
            rows = checked
        else:
            return [self.build({"kind": kind}, {"value": value[j], **({} if counts is None else {"counts": counts[j]})})
                    for j in range(m)]
        if not isinstance(rows, ReleaseBatch):
            for rel in rows:
                if isinstance(rel, Failed):
                    self.findings.record(rel.reason, rel.error)
        return rows

    def decode(self, reply: dict[str, Any], payload: dict[str, np.ndarray], asked: int
               ) -> tuple[Segment, dict[str, Any] | None]:
        """The releases a reply gives, in call order, and the environment failure it stopped at (if any)."""
        if "stacked" not in reply:
            per_call = _split_payload(payload)
            out: list[Release] = []
            for j, meta in enumerate(reply["releases"][:asked]):
                if meta.get("environment"):
                    return out, meta
                out.append(self.build(meta, per_call.get(str(j), {})))
            return out, None
        stacked, n = reply["stacked"], min(int(reply["n"]), asked)
        failed = {int(i): m for i, m in stacked["failed"].items() if int(i) < n}
        env = failed.pop(n - 1) if failed.get(n - 1, {}).get("environment") else None
        calls = n - (env is not None)
        if stacked["mutated"]:
            self.findings.record("mutates-input", "the audited code wrote into its input array",
                                 count=sum(1 for i in stacked["mutated"] if i < calls))
        rows = self._rows(stacked["kind"], payload, calls - len(failed))
        if not failed:
            return rows, env
        values = iter(rows)
        return [self._failed(failed[i]) if i in failed else next(values) for i in range(calls)], env

    # ---- per release ---------------------------------------------------------------------
    def one_by_one(self, positions: Sequence[int]) -> tuple[list[Segment], list[int]]:
        """Releases at ``positions``, several per request; each retried once after a timeout or crash.

        In the steady state the next request is sent as soon as a complete
        reply is in, before that reply is checked, so the worker computes while
        this process checks (a reply that is not complete ends the pipelining).
        """
        owner = self.owner
        segments: list[Segment] = []
        kept: list[int] = []
        attempts: dict[int, int] = {}
        careful: set[int] = set()  # releases of a request that failed as a whole: one per request until past them
        start = 0
        ahead: tuple[Sequence[int], _Sent] | None = None  # a request sent before its turn
        while start < len(positions):
            first = positions[start]
            retry = attempts.get(first, 0) > 0
            if ahead is not None and ahead[0][0] == first:
                batch, sent = ahead
            else:
                size = 1 if (retry or first in careful) else min(owner._batch, len(positions) - start)
                batch = positions[start:start + size]
                sent = self.send({"vectorised": False, **self.flags}, self.seeds.release_words(batch))
            ahead, size = None, len(batch)
            if retry:
                self.findings.add_calls(1)  # a retry is a call of its own
            try:
                reply, payload = self.receive(sent, single=size == 1)
                following = positions[start + size:start + size + owner._batch]
                if len(following) and _complete(reply, size) and following[0] not in careful:
                    ahead = following, self.send({"vectorised": False, **self.flags},
                                                 self.seeds.release_words(following))
                segment, env = self.decode(reply, payload, size)
            except EnvironmentFailure as error:
                if size > 1:  # cannot tell which release it was: find out one at a time
                    careful.update(batch)
                    continue
                segment, env = [], {"reason": error.kind, "error": error.error}
            except BaseException:
                if ahead is not None:  # a reply nobody will read: the lane's process goes with it
                    owner._discard(self.lane)
                raise
            got = len(segment)
            if got and self.traces is not None:
                self.traces.extend(_traces(reply, got))
            if got:
                segments.append(segment)
                kept.extend(batch[:got])
                start += got
                self.consecutive_drops = 0
            if env is None and got:
                per = (time.perf_counter() - sent.t0) / got
                owner._batch = int(np.clip(owner.timeout / 4.0 / max(per, 1e-6), 1, MAX_BATCH))
                continue
            env = env or {"reason": "crash", "error": "the worker answered a request with no release"}
            self._environment_failure(env["reason"], env["error"])
            attempts[positions[start]] = attempts.get(positions[start], 0) + 1
            if attempts[positions[start]] >= 2:
                start += 1
                self._drop(env["reason"], env["error"])
        return segments, kept

    # ---- vectorised ------------------------------------------------------------------------
    def vectorised(self, n: int) -> tuple[list[Segment], list[int]]:
        """Fixed batches of ``VECTOR_BATCH`` (batch b seeded by call entropy b); a failed batch is redrawn
        one release at a time."""
        segments: list[Segment] = []
        kept: list[int] = []
        size_of = self.owner.VECTOR_BATCH
        for b, start in enumerate(range(0, n, size_of)):
            size = min(size_of, n - start)
            positions = range(start, start + size)
            segment, problem = self._vector_batch(b, size)
            if segment is None:
                if problem is not None:
                    kind, error = problem
                    self.findings.record(kind, f"release_many: {error}")
                more, got = self.one_by_one(positions)
                segments += more
                kept += got
            else:
                segments.append(segment)
                kept += positions
        return segments, kept

    def _vector_batch(self, b: int, size: int) -> tuple[Segment | None, tuple[str, str] | None]:
        try:
            reply, payload = self.request({"vectorised": True, "n": size}, self.seeds.call_words([b]), single=False)
        except EnvironmentFailure as env:
            self.owner._discard(self.lane)
            return None, (env.kind, env.error)
        metas = reply["releases"]
        meta = metas[0]
        if meta["kind"] == "refused":
            raise InvalidInputError(str(meta.get("error")))
        if meta["kind"] == "failed":
            if meta.get("environment"):
                self.owner._discard(self.lane)
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


def _complete(reply: dict[str, Any], asked: int) -> bool:
    """Whether a reply answers every call of its request, none of them an environment failure."""
    if "stacked" in reply:
        last = reply["stacked"]["failed"].get(str(asked - 1), {})
        return int(reply["n"]) == asked and not last.get("environment")
    metas = reply.get("releases", [])
    return len(metas) == asked and not metas[-1].get("environment")


def _traces(reply: dict[str, Any], got: int) -> list[dict[str, Any] | None]:
    """The traces of a reply's first ``got`` calls (None for a call without one: a stacked reply has none)."""
    if "stacked" in reply:
        return [None] * got
    return [meta.get("trace") for meta in reply["releases"][:got]]


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


def concatenate(segments: Sequence[Segment]) -> Segment:
    """One batch when every segment is a batch of the same kind and shape, else one flat list."""
    batches = [s for s in segments if isinstance(s, ReleaseBatch)]
    if segments and len(batches) == len(segments):
        if len({(s.kind, s.array.shape[1:], s.counts is None) for s in batches}) == 1:
            counts = None if batches[0].counts is None else np.concatenate([s.counts for s in batches])
            return ReleaseBatch(batches[0].kind, np.concatenate([s.array for s in batches]), counts)
    flat = [r for s in segments for r in (list(s) if isinstance(s, ReleaseBatch) else s)]
    return ReleaseBatch.stack(flat)
