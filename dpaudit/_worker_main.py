"""The worker side of dpaudit's protocol for running audited code in its own process.

Run as a script — ``python path/to/_worker_main.py [--source-root DIR]`` — by
:mod:`dpaudit.worker`, possibly in *another* interpreter (the audited code's
own virtual environment).  It therefore imports only the standard library
and numpy; the audited plug-in is loaded by spec.  Registered mechanism names
(``dpfcm``, ...) additionally need dpaudit's ``mechanisms`` package, found
under ``--source-root``.

Protocol (both directions): a *frame* is an 8-byte big-endian header length,
a UTF-8 JSON header, then for each name in ``header["arrays"]`` an 8-byte
length and that array as ``.npy`` bytes (``allow_pickle=False``).  Requests:
``load`` {spec, params, output}, ``release`` {x_id, seed, start, n, vectorised} (+ array ``X``
when the worker does not hold ``x_id`` yet), ``exit``.  Replies: ``{"ok":
true, ...}`` or ``{"ok": false, "error": "Type: message"}``.  Anything the
audited code prints goes to stderr; stdout carries only frames.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import json
import os
import struct
import sys
import traceback
import warnings
from typing import Any, BinaryIO

import numpy as np

__all__ = ["read_frame", "write_frame"]

_LEN = struct.Struct(">Q")


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            raise EOFError("stream closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def write_frame(stream: BinaryIO, header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> None:
    arrays = arrays or {}
    header = {**header, "arrays": list(arrays)}
    body = json.dumps(header).encode("utf-8")
    parts = [_LEN.pack(len(body)), body]
    for name in header["arrays"]:
        buf = io.BytesIO()
        np.save(buf, np.asarray(arrays[name]), allow_pickle=False)
        parts += [_LEN.pack(buf.tell()), buf.getvalue()]
    stream.write(b"".join(parts))
    stream.flush()


def read_frame(stream: BinaryIO) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    (size,) = _LEN.unpack(_read_exact(stream, _LEN.size))
    header = json.loads(_read_exact(stream, size).decode("utf-8"))
    arrays = {}
    for name in header.get("arrays", []):
        (n,) = _LEN.unpack(_read_exact(stream, _LEN.size))
        arrays[name] = np.load(io.BytesIO(_read_exact(stream, n)), allow_pickle=False)
    return header, arrays


# --------------------------------------------------------------------------- #
# Loading the audited object (a stdlib-only mirror of mechanisms.registry)
# --------------------------------------------------------------------------- #
def _load_object(spec: str) -> Any:
    left, _, attr = spec.rpartition(":")
    if left.endswith(".py") or "/" in left or "\\" in left:
        mod_spec = importlib.util.spec_from_file_location("dpaudit_audited_plugin", left)
        if mod_spec is None or mod_spec.loader is None:
            raise ImportError(f"cannot load {left} as a Python module")
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules["dpaudit_audited_plugin"] = module
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(left)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class _Audited:
    """The audited object and how to call it."""

    def __init__(self, spec: str, params: dict[str, Any], output: str) -> None:
        self.output = output
        self.epsilon = params.get("epsilon")
        self.kind = "mechanism"
        if ":" not in spec:  # a registered name: needs dpaudit's mechanisms package
            import mechanisms
            self.obj = mechanisms.get(spec, **params)
            return
        obj = _load_object(spec)
        plugin_keys = {"output", "neighbours", "delta"}
        if inspect.isclass(obj):
            sig = inspect.signature(obj)
            if hasattr(obj, "release"):
                self.obj = obj(**{k: v for k, v in params.items() if k not in plugin_keys or k in sig.parameters})
            elif hasattr(obj, "fit") and "epsilon" in sig.parameters:
                self.kind, self.obj, self.params = "estimator", obj, {k: v for k, v in params.items()
                                                                       if k not in plugin_keys}
                self.takes_random_state = "random_state" in sig.parameters
            else:
                raise TypeError(f"{spec} is a class with neither release() nor fit() and an epsilon parameter")
        elif hasattr(obj, "release") and hasattr(obj, "claim"):
            self.obj = obj
        elif callable(obj):
            self.kind, self.obj = "function", obj
        else:
            raise TypeError(f"{spec} is neither a mechanism, a function nor an estimator class")

    def describe(self) -> dict[str, Any]:
        name = getattr(self.obj, "name", None) or getattr(self.obj, "__name__", "plugin")
        out: dict[str, Any] = {"name": str(name), "kind": self.kind,
                               "vectorised": self.kind == "mechanism" and callable(getattr(self.obj, "release_many", None))}
        claim = getattr(self.obj, "claim", None) if self.kind == "mechanism" else None
        if claim is not None:
            out["claim"] = {"epsilon": float(claim.epsilon), "delta": float(getattr(claim, "delta", 0.0)),
                            "neighbours": str(getattr(claim, "neighbours", "add-remove"))}
        return out

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int
                     ) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """The mechanism's own vectorised ``release_many``, stacked; ``None`` when it returns a list."""
        batch = self.obj.release_many(X, rng, n)
        array = getattr(batch, "array", None)
        if array is None or getattr(batch, "kind", None) not in ("points", "centroids", "labels", "vector"):
            return None
        arrays = {"value": np.asarray(array)}
        if getattr(batch, "counts", None) is not None:
            arrays["counts"] = np.asarray(batch.counts)
        return {"kind": batch.kind, "batched": n}, arrays

    def release(self, X: np.ndarray, rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        if self.kind == "function":
            return {"kind": "raw"}, {"value": np.asarray(self.obj(X, self.epsilon, rng))}
        if self.kind == "estimator":
            params = dict(self.params)
            if self.takes_random_state:
                params["random_state"] = int(rng.integers(2**31 - 1))
            est = self.obj(**params)
            est.fit(X)
            attr = "cluster_centers_" if self.output == "centroids" else "labels_"
            if not hasattr(est, attr):
                raise AttributeError(f"fit did not set {attr}")
            return {"kind": "raw"}, {"value": np.asarray(getattr(est, attr))}
        rel = self.obj.release(X, rng)
        if isinstance(rel, np.ndarray):
            return {"kind": "raw"}, {"value": rel}
        kind = getattr(rel, "kind", None)
        if kind == "spans":
            arrays = {"origin": np.asarray(rel.origin), "width": np.asarray(rel.width),
                      "shape": np.asarray(rel.shape, dtype=np.int64)}
            arrays.update({f"cells{j}": np.asarray(c, dtype=np.int64) for j, c in enumerate(rel.cells)})
            return {"kind": "spans", "n_cells": len(rel.cells)}, arrays
        field = {"points": "points", "centroids": "centers", "labels": "labels", "vector": "values"}.get(kind)
        if field is None:
            raise TypeError(f"release() returned {type(rel).__name__}, not a release")
        arrays = {"value": np.asarray(getattr(rel, field))}
        if kind == "centroids" and getattr(rel, "counts", None) is not None:
            arrays["counts"] = np.asarray(rel.counts)
        return {"kind": kind}, arrays


def _leaks(caught: list[Any]) -> list[str]:
    return sorted({str(w.message) for w in caught if w.category.__name__ == "PrivacyLeakWarning"})


def _error(exc: BaseException) -> dict[str, Any]:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return {"ok": False, "error": f"{type(exc).__name__}: {exc}{where}"}


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    audited: _Audited | None = None
    data: dict[str, np.ndarray] = {}
    while True:
        try:
            header, arrays = read_frame(inp)
        except EOFError:
            return
        op = header.get("op")
        if op == "exit":
            write_frame(out, {"ok": True})
            return
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if op == "load":
                    audited = _Audited(header["spec"], header.get("params", {}), header.get("output", "points"))
                    reply, payload = {"ok": True, **audited.describe()}, {}
                elif op == "release":
                    if audited is None:
                        raise RuntimeError("no mechanism loaded")
                    if "X" in arrays:
                        data = {header["x_id"]: arrays["X"]}  # hold one dataset at a time
                    if header["x_id"] not in data:
                        write_frame(out, {"ok": False, "need_x": True})
                        continue
                    X = data[header["x_id"]]
                    metas, payload = [], {}
                    start = int(header.get("start", 0))
                    n = int(header.get("n", 1))
                    if header.get("vectorised"):
                        # One vectorised call seeded by the batch's first index: the caller keeps batch
                        # boundaries fixed, so the numbers do not depend on timing.
                        rng = np.random.default_rng(np.random.SeedSequence(header["seed"], spawn_key=(start,)))
                        done = audited.release_many(X, rng, n)
                        if done is not None:
                            reply = {"ok": True, "releases": [done[0]], "leaks": _leaks(caught)}
                            write_frame(out, reply, {f"0.{k}": v for k, v in done[1].items()})
                            continue
                    for i in range(n):
                        # Release number start+i has its own seed: batching never changes the numbers.
                        rng = np.random.default_rng(np.random.SeedSequence(header["seed"], spawn_key=(start + i,)))
                        meta, arrs = audited.release(X, rng)
                        metas.append(meta)
                        payload.update({f"{i}.{k}": v for k, v in arrs.items()})
                    reply = {"ok": True, "releases": metas}
                else:
                    raise ValueError(f"unknown op {op!r}")
            reply["leaks"] = _leaks(caught)
            write_frame(out, reply, payload)
        except Exception as exc:  # noqa: BLE001 - audited code: report, never die
            write_frame(out, _error(exc))


def _exit_with_parent() -> None:
    """Stop when the auditing process dies (killed, Ctrl-C) even while audited code is busy."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    _exit_with_parent()
    if argv[:1] == ["--source-root"] and len(argv) > 1:
        sys.path.insert(0, argv[1])
    # Frames go to the original stdout; anything the audited code prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
