"""The worker side of the protocol for running audited code in its own process.

Run as a script — ``python path/to/_worker_main.py`` — by
:mod:`attacks.execution.worker`, possibly in *another* interpreter (the audited
code's own virtual environment).  It therefore imports only the standard
library and numpy, and adds nothing to the import path ahead of the target
interpreter's own packages: a plug-in spec gets nothing added at all; a
registered mechanism name makes only dpaudit's ``mechanisms`` package
importable, through a finder *appended* to ``sys.meta_path``.

Protocol (both directions): a *frame* is an 8-byte big-endian header length,
a UTF-8 JSON header, then for each name in ``header["arrays"]`` an 8-byte
length and that array as ``.npy`` bytes (``allow_pickle=False``).  Requests:

``load``     {spec, params, output, mechanisms_root, memory_limit}
``release``  {x_id, entropy: [int, ...], vectorised, n} (+ array ``X`` when the
             worker does not hold ``x_id`` yet).  Not vectorised: one call per
             entropy, each on a fresh copy of X with
             ``default_rng(SeedSequence(entropy))``; vectorised: one
             ``release_many(copy of X, rng(entropy[0]), n)`` call.
``exit``

Replies: ``{"ok": true, ...}`` or ``{"ok": false, "error": "Type: message"}``.
A release reply lists one *meta* per call: ``{"kind": ..., "mutated": bool}``
with its arrays under ``"<i>.<name>"`` (or stacked under ``"*.<name>"`` when
every call's arrays have the same names and shapes), or ``{"kind": "failed", "reason":
"raises"|"wrong-shape", "error": ...}`` (an outcome), ``{"kind": "failed",
"reason": "crash", "environment": true, ...}`` (out of memory, an attempted
exit: retried by the caller) or ``{"kind": "refused", ...}`` (a registered
mechanism's ``InvalidInputError``).  Anything the audited code prints goes to
stderr; stdout carries only frames.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # A script's own directory is put first on sys.path: it would let the audited code import the
    # auditor's modules by accident (or on purpose).  Remove it before anything else is imported.
    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import importlib  # noqa: E402
import importlib.machinery  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import struct  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from typing import Any, BinaryIO  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["read_frame", "write_frame"]

_LEN = struct.Struct(">Q")
# A release larger than this is malformed rather than sent: it would only exhaust the auditor's memory.
_MAX_RELEASE_FACTOR = 64       # times the data's size
_MAX_RELEASE_FLOOR = 64 << 20  # bytes, for small data
_RAW_KINDS = ("points", "centroids", "labels", "vector")


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
class _OnlyPackage:
    """A meta-path finder that resolves one top-level package from one directory (appended: a last resort)."""

    def __init__(self, name: str, root: str) -> None:
        self.name, self.root = name, root

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None  # submodules are found through the package's own __path__
        return importlib.machinery.PathFinder.find_spec(fullname, [self.root])


def _load_object(spec: str) -> Any:
    left, _, attr = spec.rpartition(":")
    if left.endswith(".py") or "/" in left or "\\" in left:
        mod_spec = importlib.util.spec_from_file_location("audited_plugin", left)
        if mod_spec is None or mod_spec.loader is None:
            raise ImportError(f"cannot load {left} as a Python module")
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules["audited_plugin"] = module
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(left)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


_OPTIONAL = ("epsilon", "bounds")  # passed to a plug-in class only if its constructor takes them


def _accepts(sig: inspect.Signature, key: str) -> bool:
    return key in sig.parameters or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


class _Audited:
    """The audited object and how to call it."""

    def __init__(self, spec: str, params: dict[str, Any], output: str) -> None:
        self.output = output
        self.epsilon = params.get("epsilon")
        self.kind = "mechanism"
        self.refusal: type[BaseException] | None = None  # a registered mechanism's "bad input" error
        if ":" not in spec:  # a registered name: needs dpaudit's mechanisms package
            import mechanisms
            from mechanisms.validation import InvalidInputError
            self.refusal = InvalidInputError
            self.obj = mechanisms.get(spec, **params)
            return
        obj = _load_object(spec)
        plugin_keys = {"output", "neighbours", "delta"}
        if inspect.isclass(obj):
            sig = inspect.signature(obj)
            # ε and the public box are the auditor's: a class that states its own claim, or places no
            # canaries, need not take them (the box is still where the auditor places canaries)
            params = {k: v for k, v in params.items() if k not in _OPTIONAL or _accepts(sig, k)}
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
        vectorised = self.kind == "mechanism" and callable(getattr(self.obj, "release_many", None))
        out: dict[str, Any] = {"name": str(name), "kind": self.kind, "vectorised": vectorised}
        claim = getattr(self.obj, "claim", None) if self.kind == "mechanism" else None
        if claim is not None:
            out["claim"] = {"epsilon": float(claim.epsilon), "delta": float(getattr(claim, "delta", 0.0)),
                            "neighbours": str(getattr(claim, "neighbours", "add-remove"))}
        return out

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int
                     ) -> list[tuple[dict[str, Any], dict[str, np.ndarray]]]:
        """The mechanism's own vectorised ``release_many``: one stacked entry, or one entry per release."""
        batch = self.obj.release_many(X, rng, n)
        array = getattr(batch, "array", None)
        if array is not None and getattr(batch, "kind", None) in _RAW_KINDS:
            arrays = {"value": _numeric(array)}
            if getattr(batch, "counts", None) is not None:
                arrays["counts"] = _numeric(batch.counts)
            return [({"kind": batch.kind, "batched": n}, arrays)]
        try:
            items = list(batch)
        except TypeError:
            raise _Malformed(f"release_many returned {type(batch).__name__}, not a batch of releases") from None
        return [_encode(rel) for rel in items]

    def release(self, X: np.ndarray, rng: np.random.Generator) -> list[tuple[dict[str, Any], dict[str, np.ndarray]]]:
        return [self._release(X, rng)]

    def _release(self, X: np.ndarray, rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        if self.kind == "function":
            return {"kind": "raw"}, {"value": _numeric(self.obj(X, self.epsilon, rng))}
        if self.kind == "estimator":
            params = dict(self.params)
            if self.takes_random_state:
                params["random_state"] = int(rng.integers(2**31 - 1))
            est = self.obj(**params)
            est.fit(X)
            attr = "cluster_centers_" if self.output == "centroids" else "labels_"
            if not hasattr(est, attr):
                raise AttributeError(f"fit did not set {attr}")
            return {"kind": "raw"}, {"value": _numeric(getattr(est, attr))}
        return _encode(self.obj.release(X, rng))


def _encode(rel: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A release object (or a bare array) as a meta and its arrays."""
    if isinstance(rel, np.ndarray):
        return {"kind": "raw"}, {"value": _numeric(rel)}
    kind = getattr(rel, "kind", None)
    if kind == "spans":
        arrays = {"origin": _numeric(rel.origin), "width": _numeric(rel.width),
                  "shape": np.asarray(rel.shape, dtype=np.int64)}
        arrays.update({f"cells{j}": np.asarray(c, dtype=np.int64) for j, c in enumerate(rel.cells)})
        return {"kind": "spans", "n_cells": len(rel.cells)}, arrays
    field = {"points": "points", "centroids": "centers", "labels": "labels", "vector": "values"}.get(kind)
    if field is None:
        raise _Malformed(f"returned {type(rel).__name__}, not a release")
    arrays = {"value": _numeric(getattr(rel, field))}
    if kind == "centroids" and getattr(rel, "counts", None) is not None:
        arrays["counts"] = _numeric(rel.counts)
    return {"kind": kind}, arrays


class _Malformed(Exception):
    """The audited code returned something that cannot be a release."""


def _numeric(value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise _Malformed(f"returned a non-numeric value ({type(value).__name__} of dtype {arr.dtype})")
    return arr


def _leaks(caught: list[Any]) -> list[str]:
    return sorted({str(w.message) for w in caught if w.category.__name__ == "PrivacyLeakWarning"})


def _describe(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _error(exc: BaseException) -> dict[str, Any]:
    return {"ok": False, "error": _describe(exc)}


def _call(audited: _Audited, method: Any, X: np.ndarray, *args: Any, releases: int = 1
          ) -> list[tuple[dict[str, Any], dict[str, np.ndarray]]]:
    """One call on a private copy of X: its (meta, arrays) entries; a fault becomes one failed meta."""
    private = X.copy()
    try:
        entries = method(private, *args)
        size = sum(a.nbytes for _, arrays in entries for a in arrays.values())
        if size > releases * max(_MAX_RELEASE_FACTOR * X.nbytes, _MAX_RELEASE_FLOOR):
            raise _Malformed(f"returned {size} bytes for {releases} release(s) of {X.nbytes} bytes of data")
    except _Malformed as exc:
        entries = [({"kind": "failed", "reason": "wrong-shape", "error": str(exc)}, {})]
    except MemoryError as exc:
        entries = [({"kind": "failed", "reason": "crash", "environment": True,
                     "error": f"ran out of memory: {_describe(exc)}"}, {})]
    except SystemExit as exc:
        entries = [({"kind": "failed", "reason": "crash", "environment": True,
                     "error": f"tried to exit the process (SystemExit {exc.code!r})"}, {})]
    except Exception as exc:  # noqa: BLE001 - audited code: report, never die
        if audited.refusal is not None and isinstance(exc, audited.refusal):
            entries = [({"kind": "refused", "error": str(exc)}, {})]
        else:
            entries = [({"kind": "failed", "reason": "raises", "error": _describe(exc)}, {})]
    mutated = bool(private.shape != X.shape or private.dtype != X.dtype or not np.array_equal(private, X))
    for meta, _ in entries:
        meta["mutated"] = mutated
    return entries


def _rng(entropy: Any) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(int(entropy)))


def _release(audited: _Audited, X: np.ndarray, header: dict[str, Any]
             ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    entropies = header["entropy"]
    if header.get("vectorised"):
        n = int(header["n"])
        entries = _call(audited, audited.release_many, X, _rng(entropies[0]), n, releases=n)
        return {"ok": True, "releases": [m for m, _ in entries]}, _pack([a for _, a in entries])
    metas, results = [], []
    for entropy in entropies:
        ((meta, arrays),) = _call(audited, audited.release, X, _rng(entropy))
        metas.append(meta)
        results.append(arrays)
        if meta.get("environment"):
            break  # the caller restarts the worker and retries from here
    return {"ok": True, "releases": metas}, _pack(results)


def _pack(results: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Arrays of many calls for one frame: stacked as ``*.<name>`` when every call has the same
    names, shapes and dtypes (one .npy each instead of one per call), else ``<call>.<name>``."""
    signatures = {tuple((k, v.shape, v.dtype.str) for k, v in sorted(r.items())) for r in results}
    if len(results) > 1 and len(signatures) == 1 and results[0]:
        return {f"*.{k}": np.stack([r[k] for r in results]) for k in results[0]}
    return {f"{i}.{k}": v for i, r in enumerate(results) for k, v in r.items()}


# --------------------------------------------------------------------------- #
# Resource limits and lifetime
# --------------------------------------------------------------------------- #
def _limit_memory(extra_bytes: int) -> str:
    """Cap the address space at its current size plus ``extra_bytes`` (RLIMIT_AS); say what was done."""
    try:
        import resource
    except ImportError:
        return "unsupported on this platform"
    current = 0
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    current = int(line.split()[1]) * 1024
    except OSError:
        pass
    limit = current + int(extra_bytes)
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    return f"address space limited to {limit} bytes"


def _exit_with_parent() -> None:
    """Die when the auditing process dies (killed, Ctrl-C), even while the audited code is stuck in C.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` — the kernel kills this process
    when its parent goes.  Elsewhere (or if that fails): a thread polling the
    parent pid, which cannot interrupt C code holding the GIL.
    """
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0:  # 1 = PR_SET_PDEATHSIG
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(0)
                return
        except (OSError, AttributeError):
            pass
    import threading
    import time

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


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
                    root = header.get("mechanisms_root")
                    if root:
                        sys.meta_path.append(_OnlyPackage("mechanisms", root))
                    memory = (_limit_memory(header["memory_limit"]) if header.get("memory_limit")
                              else "no limit")
                    audited = _Audited(header["spec"], header.get("params", {}), header.get("output", "points"))
                    reply, payload = {"ok": True, **audited.describe(), "memory": memory}, {}
                elif op == "release":
                    if audited is None:
                        raise RuntimeError("no mechanism loaded")
                    if "X" in arrays:
                        data = {header["x_id"]: arrays["X"]}  # hold one dataset at a time
                    if header["x_id"] not in data:
                        write_frame(out, {"ok": False, "need_x": True})
                        continue
                    reply, payload = _release(audited, data[header["x_id"]], header)
                else:
                    raise ValueError(f"unknown op {op!r}")
            reply["leaks"] = _leaks(caught)
            write_frame(out, reply, payload)
        except Exception as exc:  # noqa: BLE001 - loading the audited code failed: report, never die
            write_frame(out, _error(exc))


def main() -> None:
    _exit_with_parent()
    sys.argv = [""]  # nothing that says what runs this process
    # Frames go to the original stdout; anything the audited code prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
