"""The calling side of the worker: calls into the audited object, in batches.

Imported by ``_worker_main.py`` (by path, when it runs as a script in the
audited code's interpreter): it needs only the standard library, numpy and
its siblings ``worker_audited.py``, ``worker_rng.py``, ``worker_frames.py``,
``worker_globals.py`` and ``worker_trace.py``.

* **The audited object.**  ``worker_audited``: loading it (a stdlib-only
  mirror of dpaudit.mechanisms.registry; supervised plug-ins a numpy-only mirror of
  dpaudit.mechanisms.supervised) and one call's reply as a meta and its arrays; its
  names are re-exported here.
* **Generators.**  ``worker_rng.GeneratorBatch``: the generators of a
  request, ``default_rng(SeedSequence(entropy))`` each, built in bulk.
* **Screening calls.**  A request that asks for it (``trace``,
  ``seed_globals``) runs each call as a ``worker_trace.ScreeningCall``: the
  global generators seeded from the call's words, the call traced, its
  trace in the call's meta (the reply is then never stacked).
* **Input.**  :class:`PrivateInput` keeps the cached data pristine: the code
  gets a working copy that is compared byte for byte after every call and
  replaced when it was touched (a ``mutated`` flag on that call).
* **Calls.**  :func:`release_calls` calls the code once per entropy row and
  packs the replies: same-shape results are stacked into one array per name
  with one meta for the whole batch (:func:`pack`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from typing import Any

import numpy as np

try:
    from . import worker_audited as _audited
    from . import worker_frames as _frames
    from . import worker_globals as _globals
    from . import worker_rng as _rng
    from . import worker_trace as _trace
except ImportError:  # loaded by path from _worker_main.py, which loaded its siblings first
    _audited = sys.modules["_audit_worker_worker_audited"]
    _frames = sys.modules["_audit_worker_worker_frames"]
    _globals = sys.modules["_audit_worker_worker_globals"]
    _rng = sys.modules["_audit_worker_worker_rng"]
    _trace = sys.modules["_audit_worker_worker_trace"]

__all__ = ["PrivateInput", "describe_exception", "release_calls", "release_many_call", "show_internal", "warm_up"]

# A release larger than this is malformed rather than sent: it would only exhaust the auditor's memory.
MAX_RELEASE_FACTOR = 64       # times the data's size
MAX_RELEASE_FLOOR = 64 << 20  # bytes, for small data


SHOW_INTERNAL = False  # --debug in a worker: set by the load request (a worker's environment is scrubbed)


def show_internal() -> bool:
    """Whether errors name dpaudit's own source locations too (``dpaudit --debug``, or ``DPAUDIT_DEBUG=1``)."""
    return SHOW_INTERNAL or os.environ.get("DPAUDIT_DEBUG", "") not in ("", "0")


def describe_exception(exc: BaseException) -> str:
    """An exception as one line: ``Type: message (at file:line)``, where it was raised in the audited code —
    the deepest frame that is neither dpaudit's own nor the interpreter's (``<frozen …>``), none when there is
    no such frame (:data:`SHOW_INTERNAL`: the deepest frame, whoever's).  A user mistake the loaders name
    (an exception with ``plain`` set) is its message alone."""
    debug = show_internal()
    if getattr(exc, "plain", False) and not debug:
        return str(exc)
    tb = [f for f in traceback.extract_tb(exc.__traceback__) if debug or not _frames.is_dpaudit_file(f.filename)]
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


# --------------------------------------------------------------------------- #
# Calls
# --------------------------------------------------------------------------- #
class PrivateInput:
    """The cached data and the working copy the audited code is given (checked after every call)."""

    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        self.raw = X.tobytes()
        self.work = X.copy()
        self.form = (self.work.shape, self.work.dtype, self.work.strides)
        self.limit = max(MAX_RELEASE_FACTOR * X.nbytes, MAX_RELEASE_FLOOR)  # bytes a release may have

    def after(self, arrays: Any) -> bool:
        """Whether the last call changed its input.  A touched copy is replaced, and so is one that a result
        (``arrays``: the call's arrays) shares memory with: no later call sees it, no result changes later."""
        w = self.work
        if (w.__class__ is np.ndarray and (w.shape, w.dtype, w.strides) == self.form and w.flags.writeable
                and w.tobytes() == self.raw):
            for a in arrays:
                if (a is w or a.base is not None) and np.may_share_memory(a, w):
                    self.work = self.X.copy()
                    break
            return False
        self.work = self.X.copy()
        return True


def _fault(exc: BaseException, audited: _audited.Audited) -> dict[str, Any]:
    """The meta of a call that raised ``exc``: an outcome, an environment failure or a refusal."""
    if isinstance(exc, _audited.Malformed):
        return {"kind": "failed", "reason": "wrong-shape", "error": str(exc)}
    if isinstance(exc, MemoryError):
        return {"kind": "failed", "reason": "crash", "environment": True,
                "error": f"ran out of memory: {describe_exception(exc)}"}
    if isinstance(exc, SystemExit):
        return {"kind": "failed", "reason": "crash", "environment": True,
                "error": f"tried to exit the process (SystemExit {exc.code!r})"}
    if audited.refusal is not None and isinstance(exc, audited.refusal):
        return {"kind": "refused", "error": str(exc)}
    return {"kind": "failed", "reason": "raises", "error": describe_exception(exc)}


def _too_big(arrays: Any, releases: int, data: PrivateInput) -> None:
    size = 0
    for a in arrays:
        size += a.nbytes
    if size > releases * data.limit:
        raise _audited.Malformed(f"returned {size} bytes for {releases} release(s) of {data.X.nbytes} bytes of data")


def release_many_call(audited: _audited.Audited, data: PrivateInput, words: np.ndarray, n: int
                      ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One vectorised ``release_many(copy of X, rng(words[0]), n)`` call, packed."""
    rng = _rng.GeneratorBatch(words[:1])[0]
    try:
        entries = audited.release_many(data.work, rng, n)
        _too_big([a for _, arrays in entries for a in arrays.values()], n, data)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - audited code: report, never die
        entries = [(_fault(exc, audited), {})]
    if data.after([a for _, arrays in entries for a in arrays.values()]):
        for meta, _ in entries:
            meta["mutated"] = True
    return {"ok": True, "releases": [m for m, _ in entries]}, pack_list([a for _, a in entries])


def release_calls(audited: _audited.Audited, data: PrivateInput, words: np.ndarray, *, trace: bool = False,
                  seed_globals: bool = False) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One call per entropy row on the private copy, packed (:func:`pack`); stops after a call that failed
    the environment (the caller restarts the worker and retries from there).  ``trace``, ``seed_globals``:
    coupled screening calls (:func:`screening_calls`)."""
    if audited.kind == "executable":  # plug-in form: a program (cmd:COMMAND) answers a whole request at once
        return program_calls(audited.obj, data.X, words)
    gens = _rng.GeneratorBatch(words)
    if trace or seed_globals:
        return pack(screening_calls(audited, data, gens, trace=trace, seed_globals=seed_globals))
    release = audited.release
    entries: list[tuple[dict[str, Any], dict[str, np.ndarray]]] = []
    for i in range(len(gens)):
        try:
            meta, arrays = release(data.work, gens[i])
            _too_big(arrays.values(), 1, data)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - audited code: report, never die
            meta, arrays = _fault(exc, audited), {}
        if data.after(arrays.values()):
            meta["mutated"] = True
        entries.append((meta, arrays))
        if meta.get("environment"):
            break
    return pack(entries)


PROGRAM_DIED_EXIT = 70  # a worker whose program died exits with this code, its last words on stderr


def program_calls(program: Any, X: np.ndarray, words: np.ndarray) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One request's releases from a program (``cmd:COMMAND``: ``mechanisms/executable_protocol.py``), one seed per
    entropy row (its low 53 bits), packed as :func:`pack` packs calls.  Tracing and seeding the global generators
    have nothing to reach in another process; the program's releases are still coupled through their seeds.  A
    program that dies takes this worker with it: the auditor sees a crash, as for Python code that segfaults, and
    finds the release responsible one at a time."""
    try:
        result = program.answer(X, _audited.programs.seeds_from_words(words))
    except _audited.programs.ProgramDied as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stderr.flush()
        os._exit(PROGRAM_DIED_EXIT)
    if isinstance(result, list):
        return pack(result)
    if len(result.value) == 1:
        return pack([({"kind": result.kind}, {"value": result.value[0]})])
    return ({"ok": True, "n": len(result.value), "stacked": {"kind": result.kind, "failed": {}, "mutated": []}},
            {"*.value": result.value})


def warm_up(audited: _audited.Audited, X: np.ndarray, words: np.ndarray) -> dict[str, Any]:
    """A template's warm-up: the audited code called once per entropy row on ``X`` — a public dataset the
    auditor built in the public box, never a record of the user's — and every answer thrown away, so that
    the lanes forked from it start with the code's lazy imports done and its caches filled (a noise
    calibration memoised per ε costs seconds on a first call, milliseconds after).  A call that raises is
    ignored; one that exits or hangs takes the template with it (the auditor then starts a cold one)."""
    if audited.kind == "executable":  # plug-in form: a program — a template never starts it (each lane does)
        return {"ok": True, "calls": 0, "answered": 0}
    gens = _rng.GeneratorBatch(words)
    answered = 0
    for i in range(len(gens)):
        try:
            audited.release(X.copy(), gens[i])
            answered += 1
        except Exception:  # noqa: BLE001 - audited code: a warm-up that fails warms what it reached
            pass
    return {"ok": True, "calls": len(gens), "answered": answered}


def screening_calls(audited: _audited.Audited, data: PrivateInput, gens: Any, *, trace: bool, seed_globals: bool
                    ) -> list[tuple[dict[str, Any], dict[str, np.ndarray]]]:
    """The calls of :func:`release_calls`, each a ``worker_trace.ScreeningCall``: with ``seed_globals``, numpy's
    and ``random``'s global state seeded from the call's entropy words (and put back after the batch); with
    ``trace``, the call traced and its trace in its meta (``"trace"``, failed calls included)."""
    rule = _trace.frame_rule(audited.roots) if trace else None
    entries: list[tuple[dict[str, Any], dict[str, np.ndarray]]] = []
    with _globals.SavedGlobals() if seed_globals else contextlib.nullcontext():
        for i in range(len(gens)):
            entries.append(_screening_call(audited, data, gens, i, rule, seed_globals))
            if entries[-1][0].get("environment"):
                break
    return entries


def _screening_call(audited: _audited.Audited, data: PrivateInput, gens: Any, i: int, rule: Any,
                    seed_globals: bool) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    call = _trace.ScreeningCall(gens.words[i], rule, seed_globals)
    try:
        with call:
            meta, arrays = audited.release(data.work, call.rng(gens[i]))
        _too_big(arrays.values(), 1, data)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - audited code: report, never die
        meta, arrays = _fault(exc, audited), {}
    if data.after(arrays.values()):
        meta["mutated"] = True
    if call.trace is not None:
        meta["trace"] = call.trace
    return meta, arrays


def pack(entries: list[tuple[dict[str, Any], dict[str, np.ndarray]]]
         ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The reply for a batch of calls.

    When every call that gave a value gave the same kind, with the same array
    names, shapes and dtypes (and no other meta), the reply is *stacked*:
    ``{"n": calls, "stacked": {"kind", "failed": {i: meta}, "mutated": [i]}}``
    with one ``*.<name>`` array whose rows are those calls' values in order.
    Otherwise it lists one meta per call (``"releases"``) with ``<i>.<name>`` arrays.
    """
    failed: dict[str, dict[str, Any]] = {}
    mutated: list[int] = []
    good: list[dict[str, np.ndarray]] = []
    form: tuple[Any, ...] | None = None
    same = True
    for i, (meta, arrays) in enumerate(entries):
        if "mutated" in meta:
            mutated.append(i)
        kind = meta["kind"]
        if kind == "failed" or kind == "refused":
            failed[str(i)] = meta
            continue
        if form is None:
            form = (kind, [(k, v.shape, v.dtype) for k, v in arrays.items()])
        if same:
            same = (kind == form[0] and len(meta) == 1 + ("mutated" in meta) and len(arrays) == len(form[1])
                    and all((v := arrays.get(k)) is not None and v.shape == shape and v.dtype == dtype
                            for k, shape, dtype in form[1]))
        good.append(arrays)
    if same and form is not None and form[1] and len(good) > 1:
        stacked = {f"*.{k}": _stack([a[k] for a in good]) for k, _, _ in form[1]}
        return {"ok": True, "n": len(entries), "stacked": {"kind": form[0], "failed": failed,
                                                            "mutated": mutated}}, stacked
    return {"ok": True, "releases": [m for m, _ in entries]}, pack_list([a for _, a in entries])


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    """Same-shape arrays on a new leading axis (one concatenation: ``np.stack`` costs ~4× more per row)."""
    if rows[0].ndim == 0:
        return np.array(rows, dtype=rows[0].dtype)
    return np.concatenate(rows).reshape(len(rows), *rows[0].shape)


def pack_list(results: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Arrays of many calls for one frame: stacked as ``*.<name>`` when every call has the same
    names, shapes and dtypes (one .npy each instead of one per call), else ``<call>.<name>``."""
    signatures = {tuple((k, v.shape, v.dtype.str) for k, v in sorted(r.items())) for r in results}
    if len(results) > 1 and len(signatures) == 1 and results[0]:
        return {f"*.{k}": np.stack([r[k] for r in results]) for k in results[0]}
    return {f"{i}.{k}": v for i, r in enumerate(results) for k, v in r.items()}
