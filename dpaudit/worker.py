"""Run audited code in a worker process under a timeout — optionally in another interpreter.

:class:`WorkerMechanism` is a :class:`~mechanisms.base.Mechanism`-compatible
proxy: ``release`` and ``release_many`` send the data to a worker process
(:mod:`dpaudit._worker_main`, stdlib + numpy only) and wait at most
``timeout`` seconds per call.  ``python`` names the interpreter the worker
runs in — the audited code's own virtual environment (IBM diffprivlib, for
one, needs scikit-learn < 1.8, which dpaudit's own environment does not have).

Misbehaviour becomes a *finding* rather than a crash: the proxy records
``{kind, part, call, error}`` (kinds: ``load``, ``raises``, ``timeout``,
``crash``, ``nan``, ``wrong-shape``) in :attr:`WorkerMechanism.findings` and
raises :class:`MechanismFailure`, which the audit catches per part so the
other parts go on.  A worker that timed out or died is killed and replaced
on the next call.
"""

from __future__ import annotations

import hashlib
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from mechanisms.base import (
    Centroids,
    InvalidInputError,
    PrivacyClaim,
    Release,
    ReleaseBatch,
    Spans,
    check_epsilon,
    warn_privacy_leak,
)
from mechanisms.plugins import MalformedReleaseError, wrap_array

from ._worker_main import read_frame, write_frame

__all__ = ["MechanismFailure", "WorkerMechanism"]

_MAIN = Path(__file__).with_name("_worker_main.py")
_SOURCE_ROOT = Path(__file__).resolve().parent.parent
_FINDING_KINDS = ("load", "raises", "timeout", "crash", "nan", "wrong-shape")


class MechanismFailure(RuntimeError):
    """The audited code misbehaved in one call; :attr:`finding` says how."""

    def __init__(self, finding: dict[str, str]) -> None:
        super().__init__(f"{finding['kind']} in {finding['call']}: {finding['error']}")
        self.finding = finding


class _Process:
    """One worker process with a reader thread, so every wait can time out."""

    def __init__(self, python: str) -> None:
        cmd = [python, str(_MAIN), "--source-root", str(_SOURCE_ROOT)]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise InvalidInputError(f"cannot start the worker interpreter {python}: {exc}") from None
        self.replies: queue.Queue[Any] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=20)
        self.x_id: str | None = None
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                self.replies.put(read_frame(self.proc.stdout))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - EOF or a torn frame: the worker died
            self.replies.put(exc)

    def _drain(self) -> None:
        for line in iter(self.proc.stderr.readline, b""):  # type: ignore[union-attr]
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    def call(self, header: dict[str, Any], arrays: dict[str, np.ndarray] | None, timeout: float
             ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        try:
            write_frame(self.proc.stdin, header, arrays)  # type: ignore[arg-type]
        except (BrokenPipeError, OSError):
            pass  # the reader reports the death below
        try:
            reply = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer within {timeout:g} s") from None
        if isinstance(reply, Exception):
            time.sleep(0.05)  # let the stderr drain catch the last words
            code = self.proc.poll()
            tail = " | ".join(list(self.stderr)[-3:])
            raise ChildProcessError(f"the worker process died (exit code {code}){': ' + tail if tail else ''}")
        return reply

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                write_frame(self.proc.stdin, {"op": "exit"})  # type: ignore[arg-type]
                self.proc.wait(timeout=2)
            except Exception:  # noqa: BLE001
                pass
        self.kill()


class WorkerMechanism:
    """A mechanism whose every call runs in a worker process under ``timeout`` seconds.

    ``VECTOR_BATCH`` releases go in one call for mechanisms with a vectorised
    ``release_many`` (a fixed size, so the seeds never depend on timing).

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
        Interpreter the worker runs in (default: this one).
    timeout : float
        Seconds each call may take.
    """

    VECTOR_BATCH = 64

    def __init__(self, spec: str, *, epsilon: float, output: str = "points", neighbours: str = "add-remove",
                 delta: float = 0.0, params: dict[str, Any] | None = None, python: str | None = None,
                 timeout: float = 60.0) -> None:
        self.spec = spec
        self.epsilon = check_epsilon(epsilon)
        self.output = output
        self.params = dict(params or {})
        self.python = python or sys.executable
        if timeout <= 0:
            raise InvalidInputError(f"timeout must be > 0 seconds, got {timeout:g}")
        self.timeout = float(timeout)
        self.findings: list[dict[str, str]] = []
        self.part = "load"
        self._proc: _Process | None = None
        self._batch = 1
        info = self._load()
        self.name = info.get("name", spec)
        self.plugin_kind = info.get("kind", "mechanism")
        self.vectorised = bool(info.get("vectorised"))
        stated = info.get("claim")
        self.claim = (PrivacyClaim(stated["epsilon"], stated["delta"], stated["neighbours"]) if stated
                      else PrivacyClaim(self.epsilon, delta, neighbours))
        self.part = "release"

    # ---- process management ------------------------------------------------------
    def _load_header(self) -> dict[str, Any]:
        params = {"epsilon": self.epsilon, **self.params}
        if ":" not in self.spec:  # registered names take only their own parameters
            params = {k: v for k, v in params.items() if k not in ("output", "neighbours", "delta")}
        return {"op": "load", "spec": self.spec, "params": params, "output": self.output}

    def _start(self) -> _Process:
        if self._proc is None or self._proc.proc.poll() is not None:
            self._proc = _Process(self.python)
            header, _ = self._proc.call(self._load_header(), None, self.timeout)
            if not header.get("ok"):
                raise RuntimeError(header.get("error", "loading failed"))
        return self._proc

    def _load(self) -> dict[str, Any]:
        try:
            proc = _Process(self.python)
            self._proc = proc
            header, _ = proc.call(self._load_header(), None, self.timeout)
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

    # ---- calls -------------------------------------------------------------------
    def _fail(self, kind: str, call: str, error: str) -> MechanismFailure:
        finding = {"kind": kind, "part": self.part, "call": call, "error": error}
        if not any(f["kind"] == kind and f["part"] == self.part and f["call"] == call for f in self.findings):
            self.findings.append(finding)
        return MechanismFailure(finding)

    def _request(self, X: np.ndarray, seed: int, n: int, call: str, start: int = 0, vectorised: bool = False) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        X = np.ascontiguousarray(X, dtype=np.float64)
        x_id = hashlib.sha1(X.tobytes() + str(X.shape).encode()).hexdigest()
        try:
            proc = self._start()
            header = {"op": "release", "x_id": x_id, "seed": seed, "start": start, "n": n,
                      "vectorised": vectorised}
            arrays = None if proc.x_id == x_id else {"X": X}
            reply, payload = proc.call(header, arrays, self.timeout)
            if reply.get("need_x"):
                reply, payload = proc.call(header, {"X": X}, self.timeout)
            proc.x_id = x_id
        except TimeoutError as exc:
            self._discard()
            raise self._fail("timeout", call, str(exc)) from None
        except (ChildProcessError, RuntimeError) as exc:
            self._discard()
            raise self._fail("crash", call, str(exc)) from None
        if not reply.get("ok"):
            raise self._fail("raises", call, str(reply.get("error")))
        for leak in reply.get("leaks", []):
            warn_privacy_leak(leak if leak.startswith(str(self.name)) else f"{self.name}: {leak}")
        return reply, payload

    def _build(self, meta: dict[str, Any], arrays: dict[str, np.ndarray], X: np.ndarray, call: str) -> Release:
        try:
            if meta["kind"] == "spans":
                cells = tuple(arrays[f"cells{j}"] for j in range(meta["n_cells"]))
                rel: Release = Spans(arrays["origin"], float(arrays["width"]), tuple(arrays["shape"].tolist()), cells)
                if not (np.all(np.isfinite(rel.origin)) and np.isfinite(rel.width)):
                    raise MalformedReleaseError("returned NaN or infinite values")
                return rel
            kind = self.output if meta["kind"] == "raw" else meta["kind"]
            rel = wrap_array(arrays["value"], kind, X)
            if kind == "centroids" and "counts" in arrays:
                rel = Centroids(rel.centers, arrays["counts"])  # type: ignore[attr-defined]
            return rel
        except (MalformedReleaseError, InvalidInputError, ValueError, KeyError, TypeError) as exc:
            text = str(exc)
            kind = "nan" if "NaN" in text or "infinite" in text else "wrong-shape"
            raise self._fail(kind, call, text) from None

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release:
        """One release, computed in the worker (seeded from ``rng``)."""
        seed = int(rng.integers(0, 2**63 - 1))
        reply, payload = self._request(X, seed, 1, "release")
        meta = reply["releases"][0]
        return self._build(meta, {k[2:]: v for k, v in payload.items() if k.startswith("0.")}, X, "release")

    def _build_batch(self, meta: dict[str, Any], arrays: dict[str, np.ndarray], X: np.ndarray, size: int
                     ) -> ReleaseBatch:
        """Check a stacked batch from the mechanism's own ``release_many`` (NaN, shapes) and wrap it."""
        kind, value = meta["kind"], arrays["value"]
        n, d = X.shape
        expected = {"points": (size, n, d), "labels": (size, n)}.get(kind)
        ok = value.shape[0] == size and (expected is None or value.shape == expected)
        if kind == "centroids":
            ok = ok and value.ndim == 3 and value.shape[2] == d
        if not ok:
            raise self._fail("wrong-shape", "release_many", f"returned a batch of shape {value.shape} for {size} "
                             f"{kind} releases of {n}×{d} data")
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise self._fail("nan", "release_many", "returned NaN or infinite values")
        return ReleaseBatch(kind, value, arrays.get("counts"))

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> Any:
        """``n`` releases in batched worker calls, each call under the timeout.

        One ``seed`` is drawn from ``rng``.  A mechanism with its own vectorised
        ``release_many`` runs in fixed batches of :attr:`VECTOR_BATCH`, batch b
        seeded by ``SeedSequence(seed, spawn_key=(b·VECTOR_BATCH,))``; any other
        code is called once per release, release i seeded by
        ``SeedSequence(seed, spawn_key=(i,))``, with a batch size that adapts so a
        call takes about a quarter of the timeout.  Either way the numbers never
        depend on timing.
        """
        seed = int(rng.integers(0, 2**63 - 1))
        if self.vectorised:
            batches: list[ReleaseBatch] = []
            for start in range(0, n, self.VECTOR_BATCH):
                size = min(self.VECTOR_BATCH, n - start)
                reply, payload = self._request(X, seed, size, "release_many", start=start, vectorised=True)
                meta = reply["releases"][0]
                if "batched" not in meta:  # the mechanism returned a list: per-release frames
                    batches.extend(self._per_release(reply, payload, X))
                    continue
                batches.append(self._build_batch(meta, {k[2:]: v for k, v in payload.items()}, X, size))
            if all(isinstance(b, ReleaseBatch) for b in batches) and len({b.array.shape[1:] for b in batches}) == 1:
                counts = None
                if all(b.counts is not None for b in batches):
                    counts = np.concatenate([b.counts for b in batches])
                return ReleaseBatch(batches[0].kind, np.concatenate([b.array for b in batches]), counts)
            return ReleaseBatch.stack([r for b in batches for r in (b if isinstance(b, ReleaseBatch) else [b])])
        out: list[Release] = []
        while len(out) < n:
            size = min(self._batch, n - len(out))
            t0 = time.perf_counter()
            reply, payload = self._request(X, seed, size, "release_many", start=len(out))
            per = (time.perf_counter() - t0) / size
            self._batch = int(np.clip(self.timeout / 4.0 / max(per, 1e-6), 1, 1000))
            out.extend(self._per_release(reply, payload, X))
        return ReleaseBatch.stack(out)

    def _per_release(self, reply: dict[str, Any], payload: dict[str, np.ndarray], X: np.ndarray) -> list[Release]:
        out = []
        for i, meta in enumerate(reply["releases"]):
            prefix = f"{i}."
            out.append(self._build(meta, {k[len(prefix):]: v for k, v in payload.items() if k.startswith(prefix)},
                                   X, "release_many"))
        return out

    def __repr__(self) -> str:
        return f"WorkerMechanism({self.spec!r}, epsilon={self.epsilon:g}, python={self.python!r})"
