"""The worker side of the protocol for running audited code in its own process.

Run as a script — ``python path/to/_worker_main.py`` — by
:mod:`dpaudit.execution.worker`, possibly in *another* interpreter (the audited
code's own virtual environment).  It therefore imports only the standard
library, numpy and its siblings ``_worker_calls.py``, ``worker_audited.py``,
``worker_rng.py``, ``worker_frames.py``, ``worker_globals.py`` and
``worker_trace.py`` (loaded by path), and adds nothing to the import path
ahead of the target interpreter's own packages: a
plug-in spec gets nothing added at all; a registered mechanism name makes
dpaudit's own ``dpaudit`` and ``dpaudit.mechanisms`` packages importable from
the folders the auditor's interpreter has them in, through a finder put first
on ``sys.meta_path`` for exactly those two names (so an audited environment's
own ``dpaudit`` is never picked up instead).

Protocol (both directions): a *frame* is an 8-byte big-endian header length,
a UTF-8 JSON header, then for each name in ``header["arrays"]`` an 8-byte
length and that array as ``.npy`` bytes (``allow_pickle=False``).  Requests:

``load``     {spec, params, output, own_packages, memory_limit, control_fd?}
``release``  {x_id, vectorised, n, trace?, seed_globals?} + array ``entropy``
             (k×4 uint32: one 128-bit entropy per call, little-endian words)
             (+ array ``X`` when the worker does not hold ``x_id`` yet).  Not
             vectorised: one call per entropy row, on the worker's private
             copy of X, with ``default_rng(SeedSequence(entropy))``;
             vectorised: one ``release_many(copy of X, rng(entropy[0]), n)``
             call.  ``seed_globals`` (not vectorised): numpy's and
             ``random``'s global state seeded from each call's entropy for
             that call; ``trace``: each call traced, its meta's ``"trace"``
             (``worker_trace``).
``fork``     (a template only) a new lane: see below.
``status`` / ``kill``  {pid} (a template only): a lane's exit code / end it.
``exit``

Replies: ``{"ok": true, ...}`` or ``{"ok": false, "error": "Type: message"}``;
a release reply as ``_worker_calls.pack`` describes (stacked, or one meta per
call).  Anything the audited code prints goes to stderr; stdout carries only frames.

**Fork server** (Linux).  A ``load`` with ``control_fd`` (one end of a Unix
socket pair) makes this process a *template* when it can fork (no other
Python thread runs): it loads the audited code and then never calls it and
never receives data.  Each ``fork`` request comes with two file descriptors
over the control socket — a socket for the lane's frames and a pipe for its
stderr — and forks a child that serves ``release`` requests on them: a process
that has imported and built the audited code but has never been called.  The
template reaps its children and reports their exit codes; a child dies with it
(parent-death signal).  Elsewhere (or when the code started threads at import)
the reply says ``"fork": false`` and the process serves releases itself; the
auditor then starts a fresh interpreter per lane.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # A script's own directory is put first on sys.path: it would let the audited code import the
    # auditor's modules by accident (or on purpose).  Remove it before anything else is imported.
    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import ast  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from typing import Any, BinaryIO, cast  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["read_frame", "write_frame"]


def _sibling(name: str) -> Any:
    """A module beside this file: imported normally in the package, by path when run as a script."""
    if __package__:
        return importlib.import_module(f"{__package__}.{name}")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(f"_audit_worker_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the worker module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


for _name in ("worker_rng", "worker_frames", "worker_globals", "worker_trace"):  # before _worker_calls, which uses them
    _sibling(_name)
_audited = _sibling("worker_audited")
_calls = _sibling("_worker_calls")
_LEN = struct.Struct(">Q")


def _read_exact(stream: BinaryIO, n: int) -> bytearray:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        chunk = cast(io.BufferedIOBase, stream).readinto(view[got:])  # stdin's buffer, a pipe: buffered
        if not chunk:
            raise EOFError("stream closed")
        got += chunk
    return buf


def _npy_parts(array: Any) -> list[Any]:
    """One array as .npy bytes, without copying its data: [length, header, data]."""
    a = np.asarray(array)
    if a.dtype.hasobject:
        raise ValueError("object arrays cannot be sent")
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    head = io.BytesIO()
    np.lib.format.write_array_header_2_0(head, np.lib.format.header_data_from_array_1_0(a))
    data = a.reshape(-1).data.cast("B") if a.nbytes else b""
    return [_LEN.pack(head.tell() + a.nbytes), head.getvalue(), data]


def _npy_array(buf: bytearray) -> np.ndarray:
    """The array of .npy bytes (``allow_pickle=False``): a writable view of ``buf``, no copy."""
    if bytes(buf[:6]) != b"\x93NUMPY":
        raise ValueError("not an .npy array")
    size, start = (struct.unpack("<H", buf[8:10])[0], 10) if buf[6] == 1 else (struct.unpack("<I", buf[8:12])[0], 12)
    header = ast.literal_eval(bytes(buf[start:start + size]).decode("latin1"))
    dtype = np.lib.format.descr_to_dtype(header["descr"])
    if dtype.hasobject:
        raise ValueError("object arrays are not accepted")
    shape = tuple(header["shape"])
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    flat = np.frombuffer(buf, dtype=dtype, count=count, offset=start + size)
    return flat.reshape(shape, order="F" if header["fortran_order"] else "C")


def write_frame(stream: BinaryIO, header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> None:
    arrays = arrays or {}
    header = {**header, "arrays": list(arrays)}
    body = json.dumps(header).encode("utf-8")
    parts: list[Any] = [_LEN.pack(len(body)), body]
    for name in header["arrays"]:
        parts += _npy_parts(arrays[name])
    for part in parts:
        stream.write(part)
    stream.flush()


def read_frame(stream: BinaryIO) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    (size,) = _LEN.unpack(_read_exact(stream, _LEN.size))
    header = json.loads(_read_exact(stream, size).decode("utf-8"))
    arrays = {}
    for name in header.get("arrays", []):
        (n,) = _LEN.unpack(_read_exact(stream, _LEN.size))
        arrays[name] = _npy_array(_read_exact(stream, n))
    return header, arrays


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
    """Die when the parent dies (the auditor killed, Ctrl-C; a lane's template), even inside C code.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` — the kernel kills this process
    when its parent goes.  Elsewhere (or if that fails): a thread polling the
    parent pid, which cannot interrupt C code holding the GIL.
    """
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0:  # 1 = PR_SET_PDEATHSIG
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(0)
                return
        except (OSError, AttributeError):
            pass
    import threading

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


def _can_fork() -> bool:
    """Fork only on Linux, and only while this is the one Python thread (a fork copies the caller alone)."""
    threading = sys.modules.get("threading")
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and (threading is None or threading.active_count() == 1))


def _native_threads() -> int:
    """The threads of this process the operating system knows (Linux: ``/proc/self/task``; elsewhere Python's)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        threading = sys.modules.get("threading")
        return 1 if threading is None else threading.active_count()


def _receive_fds(sock: Any, count: int) -> list[int]:
    """``count`` file descriptors sent with ``SCM_RIGHTS`` over ``sock``."""
    import array
    import socket

    fds = array.array("i")
    _msg, ancdata, _flags, _addr = sock.recvmsg(1, socket.CMSG_LEN(count * fds.itemsize))
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    if len(fds) != count:
        raise OSError(f"expected {count} file descriptors, got {len(fds)}")
    return list(fds)


def _exit_code(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


# --------------------------------------------------------------------------- #
# Serving
# --------------------------------------------------------------------------- #
class _Worker:
    """This process's role: a worker (load, then releases), a template (forks) or a forked lane."""

    def __init__(self) -> None:
        self.audited: Any = None
        self.data: dict[str, Any] = {}
        self.control: Any = None  # a template's control socket
        self.exited: dict[int, int] = {}  # a template's reaped children: pid -> exit code

    def handle(self, op: str, header: dict[str, Any], arrays: dict[str, np.ndarray], inp: BinaryIO,
               out: BinaryIO) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        if op == "load":
            return self._load(header), {}
        if op == "release":
            if self.audited is None or self.control is not None:
                raise RuntimeError("no mechanism loaded here" if self.audited is None
                                   else "a template never runs the audited code")
            if "X" in arrays:
                self.data = {header["x_id"]: _calls.PrivateInput(arrays["X"])}  # one dataset at a time
            if header["x_id"] not in self.data:
                return None
            data, words = self.data[header["x_id"]], arrays["entropy"]
            if header.get("vectorised"):
                return _calls.release_many_call(self.audited, data, words, int(header["n"]))
            return _calls.release_calls(self.audited, data, words, trace=bool(header.get("trace")),
                                        seed_globals=bool(header.get("seed_globals")))
        if op == "warm":
            if self.audited is None or self.control is None:
                raise RuntimeError("only a template is warmed up")
            threads = _native_threads()
            reply = _calls.warm_up(self.audited, arrays["X"], arrays["entropy"])
            # A warm-up that started threads (Python's, or a native pool such as OpenMP's) makes forking unsafe
            reply["fork_safe"] = _can_fork() and _native_threads() <= threads
            return reply, {}
        if op in ("fork", "status", "kill") and self.control is not None:
            return getattr(self, "_" + op)(header, inp, out), {}
        raise ValueError(f"unknown op {op!r}")

    def _load(self, header: dict[str, Any]) -> dict[str, Any]:
        _calls.SHOW_INTERNAL = bool(header.get("debug"))
        memory = _limit_memory(header["memory_limit"]) if header.get("memory_limit") else "no limit"
        self.audited = _audited.load_audited(header)
        reply = {"ok": True, **self.audited.describe(), "memory": memory, "fork": False}
        if header.get("control_fd") is not None:
            import socket

            control = socket.socket(fileno=int(header["control_fd"]))
            if _can_fork():
                self.control, reply["fork"] = control, True
                signal.signal(signal.SIGCHLD, self._reap)
            else:
                control.close()
        return reply

    def _reap(self, signum: int, frame: Any) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.exited[pid] = _exit_code(status)

    def _fork(self, header: dict[str, Any], inp: BinaryIO, out: BinaryIO) -> dict[str, Any]:
        sock_fd, err_fd = _receive_fds(self.control, 2)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the lane: never returns into the template's loop
            try:
                self._become_lane(sock_fd, err_fd, inp, out)
            finally:
                os._exit(0)
        os.close(sock_fd)
        os.close(err_fd)
        return {"ok": True, "pid": pid}

    def _become_lane(self, sock_fd: int, err_fd: int, inp: BinaryIO, out: BinaryIO) -> None:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.control.close()
        self.control, self.exited = None, {}
        os.close(out.fileno())
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)  # the template's requests are not this process's
        os.close(null)
        os.dup2(err_fd, 1)
        os.dup2(err_fd, 2)
        os.close(err_fd)
        _exit_with_parent()
        np.random.seed()  # numpy's global generator seeded afresh, as in a new interpreter
        lane_in = os.fdopen(sock_fd, "rb")
        lane_out = os.fdopen(os.dup(sock_fd), "wb")
        self.serve(lane_in, lane_out)

    def _status(self, header: dict[str, Any], inp: BinaryIO, out: BinaryIO, wait: float = 2.0) -> dict[str, Any]:
        pid = int(header["pid"])
        deadline = time.monotonic() + wait
        while pid not in self.exited and time.monotonic() < deadline:
            time.sleep(0.01)
        return {"ok": True, "code": self.exited.pop(pid, None)}

    def _kill(self, header: dict[str, Any], inp: BinaryIO, out: BinaryIO) -> dict[str, Any]:
        if int(header["pid"]) not in self.exited:
            try:
                os.kill(int(header["pid"]), signal.SIGKILL)
            except ProcessLookupError:
                pass
        return self._status(header, inp, out, wait=5.0)

    def serve(self, inp: BinaryIO, out: BinaryIO) -> None:
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
                    answer = self.handle(str(op), header, arrays, inp, out)
                if answer is None:
                    write_frame(out, {"ok": False, "need_x": True})
                    continue
                reply, payload = answer
                reply["leaks"] = sorted({str(w.message) for w in caught
                                         if w.category.__name__ == "PrivacyLeakWarning"})
                write_frame(out, reply, payload)
            except Exception as exc:  # noqa: BLE001 - loading the audited code failed: report, never die
                write_frame(out, {"ok": False, "error": _calls.describe_exception(exc),
                                  "plain": bool(getattr(exc, "plain", False))})


def main() -> None:
    _exit_with_parent()
    sys.argv = [""]  # nothing that says what runs this process
    # Frames go to the original stdout; anything the audited code prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _Worker().serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
