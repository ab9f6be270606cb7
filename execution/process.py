"""Worker processes running ``_worker_main.py``: started clean, waited on with a timeout, killed for good.

:class:`WorkerProcess` is an interpreter started here; with ``control`` it
gets one end of a Unix socket pair and may become a fork server (a
*template*), whose :meth:`~WorkerProcess.fork` hands it a socket and a stderr
pipe for a new lane and returns the child as a :class:`ForkedLane`.  Both
speak frames through reader threads, so every wait can time out.

The interpreter gets a scrubbed environment (:func:`scrubbed_environment`:
what Python needs to run and the thread-count settings, nothing that names the
auditor, its test runner or a CI system), its own session (a Ctrl-C in the
terminal reaches the auditor, which then ends the worker), and — inside
``_worker_main.py`` — a neutral ``sys.argv`` and a parent-death signal (a
forked lane dies with its template, the template with the auditor).
"""

from __future__ import annotations

import array
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, BinaryIO, Mapping, cast

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

from ._worker_main import read_frame, write_frame

__all__ = ["ForkedLane", "WorkerProcess", "scrubbed_environment"]

MAIN = Path(__file__).with_name("_worker_main.py")

_KEEP = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TEMP", "TMP",
                   "SYSTEMROOT", "COMSPEC", "PATHEXT"})  # the last three: Windows needs them to start Python
_THREAD_COUNTS = frozenset({"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                            "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"})
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # 1 unless the auditor sets them
_TELLTALE = ("dpaudit", "pytest")


def _telltale(value: str) -> bool:
    low = value.lower()
    return any(word in low for word in _TELLTALE)


def scrubbed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a worker starts with: PATH, HOME, LANG/LC_*, TMPDIR and thread counts only.

    PATH loses the auditor's own virtual environment and any entry naming the
    auditor or its test runner; other values that do are dropped.  A thread
    count the auditor's environment does not set is 1 (:data:`ONE_THREAD`):
    lanes run side by side, one process each, so more threads per lane only
    contend for the cores — and an OpenMP or BLAS thread pool started by a
    template's warm-up would make forking its lanes unsafe.
    """
    environ = os.environ if environ is None else environ
    own_venv = sys.prefix if sys.prefix != sys.base_prefix else None
    out: dict[str, str] = {}
    for key, value in environ.items():
        if not (key in _KEEP or key.startswith("LC_") or key in _THREAD_COUNTS):
            continue
        if key == "PATH":
            entries = [p for p in value.split(os.pathsep) if p and not _telltale(p)
                       and not (own_venv and os.path.abspath(p).startswith(os.path.abspath(own_venv) + os.sep))]
            value = os.pathsep.join(entries)
        elif _telltale(value):
            continue
        out[key] = value
    for key in ONE_THREAD:
        out.setdefault(key, "1")
    return out


class _Channel:
    """Frames to and from one worker process, with reader threads so every wait can time out."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO, stderr: BinaryIO) -> None:
        self._reader, self._writer, self._stderr_stream = reader, writer, stderr
        self.replies: queue.Queue[Any] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=20)
        self.x_id: str | None = None  # the dataset the process holds
        self.dead = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                self.replies.put(read_frame(self._reader))
        except Exception as exc:  # noqa: BLE001 - EOF or a torn frame: the worker died
            self.replies.put(exc)

    def _drain(self) -> None:
        try:
            for line in iter(self._stderr_stream.readline, b""):
                self.stderr.append(line.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):  # closed under us
            pass

    def exit_code(self) -> int | None:
        """The process's exit code (negative: killed by that signal), None when unknown."""
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def send(self, header: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> None:
        """Send one request (its reply: :meth:`receive`); a dead process is reported by :meth:`receive`."""
        try:
            write_frame(self._writer, header, arrays)
        except (BrokenPipeError, OSError, ValueError):
            pass  # the reader reports the death

    def receive(self, timeout: float) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The next reply within ``timeout`` s, else :class:`TimeoutError`.

        Raises :class:`ChildProcessError` when the process died (with its exit
        code and last words on stderr).
        """
        try:
            reply = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer within {timeout:g} s") from None
        if isinstance(reply, Exception):
            self.dead = True
            code = self.exit_code()
            time.sleep(0.05)  # let the stderr drain catch the last words
            tail = " | ".join(list(self.stderr)[-3:])
            raise ChildProcessError(f"the worker process died ({_exit_status(code)})"
                                    f"{': ' + tail if tail else ''}")
        return reply

    def call(self, header: dict[str, Any], arrays: dict[str, np.ndarray] | None, timeout: float
             ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Send one request and wait for its reply (see :meth:`receive`)."""
        self.send(header, arrays)
        return self.receive(timeout)


class WorkerProcess(_Channel):
    """A worker interpreter running ``_worker_main.py``; with ``control``, one that may become a fork server."""

    def __init__(self, python: str, *, control: bool = False) -> None:
        self.control: socket.socket | None = None
        self.info: dict[str, Any] = {}  # a template's load reply
        self.lock = threading.Lock()  # a template shared by threads serves one request at a time
        self.doomed: deque[int] = deque()  # lanes to end at the template's next request (see ForkedLane.drop)
        child_end = None
        if control:
            self.control, child_end = socket.socketpair()
        try:
            self.proc = subprocess.Popen([python, str(MAIN)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=scrubbed_environment(), close_fds=True,
                                         start_new_session=True,
                                         pass_fds=(child_end.fileno(),) if child_end is not None else ())
        except OSError as exc:
            raise InvalidInputError(f"cannot start the worker interpreter {python}: {exc}") from None
        finally:
            if child_end is not None:
                self.control_fd: int | None = child_end.fileno()
                child_end.close()
            else:
                self.control_fd = None
        # All three are pipes (never None).
        super().__init__(cast(BinaryIO, self.proc.stdout), cast(BinaryIO, self.proc.stdin),
                         cast(BinaryIO, self.proc.stderr))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return not self.dead and self.proc.poll() is None

    def exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return None

    def fork(self, timeout: float) -> "ForkedLane":
        """A new lane forked from this template (see ``_worker_main.py``)."""
        if self.control is None:
            raise RuntimeError("fork() on a template without its control channel")
        with self.lock:
            self._end_doomed()
            return self._fork(timeout)

    def _end_doomed(self) -> None:
        """End the lanes dropped since the last request (the lock is held)."""
        while self.doomed:
            try:
                self.call({"op": "kill", "pid": self.doomed.popleft()}, None, 10.0)
            except (TimeoutError, ChildProcessError):
                return

    def _fork(self, timeout: float) -> "ForkedLane":
        if self.control is None:
            raise RuntimeError("fork() on a template without its control channel")
        mine, theirs = socket.socketpair()
        err_read, err_write = os.pipe()
        try:
            self.control.sendmsg([b"F"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                           array.array("i", [theirs.fileno(), err_write]).tobytes())])
            reply, _ = self.call({"op": "fork"}, None, timeout)
        except BaseException:
            mine.close()
            os.close(err_read)
            raise
        finally:
            theirs.close()
            os.close(err_write)
        if not reply.get("ok"):
            mine.close()
            os.close(err_read)
            raise ChildProcessError(f"could not start a worker for a new lane: {reply.get('error')}")
        return ForkedLane(self, int(reply["pid"]), mine, os.fdopen(err_read, "rb"))

    def lane_call(self, op: str, pid: int) -> int | None:
        """``status`` / ``kill`` of a forked lane: its exit code (None when unknown or the template is gone)."""
        try:
            with self.lock:
                self._end_doomed()
                reply, _ = self.call({"op": op, "pid": pid}, None, 10.0)
        except (TimeoutError, ChildProcessError):
            return None
        return reply.get("code")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        if self.control is not None:
            self.control.close()
        try:  # stdout and stderr belong to the reader threads, which end at EOF
            self._writer.close()
        except OSError:
            pass

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                write_frame(self._writer, {"op": "exit"})
                self.proc.wait(timeout=2)
            except Exception:  # noqa: BLE001
                pass
        self.kill()


class ForkedLane(_Channel):
    """A lane's process, forked by a template: loaded, never called before this lane."""

    def __init__(self, template: WorkerProcess, pid: int, sock: socket.socket, stderr: BinaryIO) -> None:
        self.template, self.pid, self.sock = template, pid, sock
        super().__init__(sock.makefile("rb"), sock.makefile("wb"), stderr)

    def alive(self) -> bool:
        return not self.dead and self.template.alive()

    def exit_code(self) -> int | None:
        return self.template.lane_call("status", self.pid)

    def abandon(self) -> None:
        """Stop using this lane without asking the template (which is about to go, and the lane with it)."""
        self.dead = True
        try:  # the reader thread sees EOF and ends; the file objects are its to drop
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def kill(self) -> None:
        if not self.dead and self.template.alive():
            self.template.lane_call("kill", self.pid)
        self.abandon()

    def drop(self) -> None:
        """End this lane without a request now (garbage collection may run inside one of the template's
        requests, in this very thread): the template ends it before its next request, or dies with it."""
        if not self.dead:
            self.template.doomed.append(self.pid)
        self.abandon()

    close = kill  # a lane holds nothing worth a graceful exit


def _exit_status(code: int | None) -> str:
    if code is None:
        return "exit code unknown"
    if code < 0:
        import signal
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
