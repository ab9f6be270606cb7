"""One draw of releases through a worker process: requests, retries, drops and findings.

:class:`WorkerDraw` is the worker-side counterpart of the in-process draw in
:mod:`.isolation`: releases are requested several at a time (one vectorised
batch, or a number of single calls that adapts to the timeout); a request that
times out or kills the process is redone one release at a time, so the
release responsible is found; that release is retried once in a fresh worker
and then dropped, and :data:`~.isolation.MAX_CONSECUTIVE_DROPS` drops in a row
raise :class:`MechanismBroken`.  Exceptions and malformed values come back as
:class:`~mechanisms.base.Failed`, checked here exactly as in-process.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from mechanisms.base import (
    Centroids,
    Failed,
    InvalidInputError,
    Labels,
    Points,
    Release,
    ReleaseBatch,
    Spans,
    Vector,
    warn_privacy_leak,
)
from mechanisms.plugins import MalformedReleaseError, wrap_array

from .findings import Findings, MechanismBroken
from .isolation import MAX_CONSECUTIVE_DROPS
from .seeds import OpaqueSeeds
from .validate import check_batch, check_release, failure_kind

__all__ = ["WorkerDraw"]

_KINDS: dict[str, tuple[type[Release], str]] = {
    "points": (Points, "points"), "centroids": (Centroids, "centers"), "labels": (Labels, "labels"),
    "vector": (Vector, "values")}


class _Environment(Exception):
    def __init__(self, kind: str, error: str) -> None:
        super().__init__(error)
        self.kind, self.error = kind, error


class WorkerDraw:
    """One draw through the worker: requests, retries, drops, findings."""

    def __init__(self, owner: Any, X: np.ndarray, seeds: OpaqueSeeds) -> None:
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
        """Fixed batches of ``VECTOR_BATCH`` (batch b seeded by call entropy b); a failed batch is redrawn
        one release at a time."""
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
