"""One worker process running ``_worker_main.py``: started clean, waited on with a timeout, killed for good.

The process gets a scrubbed environment (:func:`scrubbed_environment`: what
Python needs to run and the thread-count settings, nothing that names the
auditor, its test runner or a CI system), its own session (a Ctrl-C in the
terminal reaches the auditor, which then ends the worker), and — inside
``_worker_main.py`` — a neutral ``sys.argv`` and a parent-death signal.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from mechanisms.base import InvalidInputError

from ._worker_main import read_frame, write_frame

__all__ = ["WorkerProcess", "scrubbed_environment"]

MAIN = Path(__file__).with_name("_worker_main.py")

_KEEP = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TEMP", "TMP",
                   "SYSTEMROOT", "COMSPEC", "PATHEXT"})  # the last three: Windows needs them to start Python
_THREAD_COUNTS = frozenset({"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                            "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"})
_TELLTALE = ("dpaudit", "pytest")


def _telltale(value: str) -> bool:
    low = value.lower()
    return any(word in low for word in _TELLTALE)


def scrubbed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a worker starts with: PATH, HOME, LANG/LC_*, TMPDIR and thread counts only.

    PATH loses the auditor's own virtual environment and any entry naming the
    auditor or its test runner; other values that do are dropped.
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
    return out


class WorkerProcess:
    """One worker process with reader threads, so every wait can time out."""

    def __init__(self, python: str) -> None:
        try:
            self.proc = subprocess.Popen([python, str(MAIN)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=scrubbed_environment(), close_fds=True,
                                         start_new_session=True)
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
        """Send one request; its reply within ``timeout`` s, else :class:`TimeoutError`.

        Raises :class:`ChildProcessError` when the process died (with its exit
        code and last words on stderr).
        """
        try:
            write_frame(self.proc.stdin, header, arrays)  # type: ignore[arg-type]
        except (BrokenPipeError, OSError):
            pass  # the reader reports the death below
        try:
            reply = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer within {timeout:g} s") from None
        if isinstance(reply, Exception):
            try:
                code = self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
            time.sleep(0.05)  # let the stderr drain catch the last words
            tail = " | ".join(list(self.stderr)[-3:])
            raise ChildProcessError(f"the worker process died ({_exit_status(code)})"
                                    f"{': ' + tail if tail else ''}")
        return reply

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        try:  # stdout and stderr belong to the reader threads, which end at EOF
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                write_frame(self.proc.stdin, {"op": "exit"})  # type: ignore[arg-type]
                self.proc.wait(timeout=2)
            except Exception:  # noqa: BLE001
                pass
        self.kill()


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
