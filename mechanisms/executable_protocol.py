"""A program in any language as the audited code: the protocol it speaks, and the client that speaks it to it.

Wherever a mechanism is named, ``cmd:COMMAND`` names a program (``-m "cmd:Rscript their_kmeans.R"``): COMMAND is
split as a shell splits it (:func:`shlex.split`) and run without a shell, in the working directory.  The program
is *long-lived*: one process answers batch after batch.  The user's page is ``docs/executables.md``; this is the
contract.  Standard library and numpy only: a worker in another interpreter loads this file by path
(:mod:`dpaudit.execution.worker_audited`).

Protocol ``dpaudit/1`` — JSON lines (one JSON value per line, UTF-8):

* **handshake**, the program's first line: ``{"protocol": "dpaudit/1", "output": KIND, "name": NAME}`` — KIND is
  what it releases (``points``, ``centroids``, ``labels`` or ``vector``), ``name`` is optional.
* **request**, one line per batch, keys in this order (so a client without a JSON library may scan for them)::

    {"op": "release", "epsilon": 1.0, "count": M, "seeds": [S1, …, SM], "n": N, "d": D, "params": {…},
     "data": [[x11, …, x1D], …, [xN1, …, xND]]}

  ``seeds`` are integers in [0, 2⁵³) (exact in every JSON reader); ``params`` holds what ``--param`` and
  ``--bounds`` say (often ``{}``).  The program seeds its random generator from Si for release i, so the same data,
  ε and seed give the same release whatever else the batch holds: that is how the auditor couples and replays it.
* **reply**, one line: ``{"releases": [R1, …, RM]}`` — Ri of the handshake's KIND (a vector: a list of numbers, or
  one number; centroids or points: a list of rows; labels: one whole number per record); ``null`` for a value the
  program has no answer for (JSON has no NaN).  ``{"error": TEXT}`` instead: the request failed (as an
  exception of a Python plug-in); an Ri of ``{"error": TEXT}``: that release failed.
* stdin closed: the program exits.  Anything else it wants to say goes to stderr: stdout carries only these lines.

What goes wrong is the program's finding, never the auditor's crash: a reply that is not one (:class:`Unframed`:
not JSON, the wrong number of releases, an over-long line) restarts the program; a failed or unframed reply to a
batch is asked again one release at a time, so each failure is the outcome of its own (data, seed) — never of the
seeds it happened to share a batch with; a program that dies is :class:`ProgramDied` (in a worker, the worker dies
with it: the engine's crash handling).  A program that cannot be started, or whose first line is not the
handshake, is :class:`ProgramError`: a user mistake, told in one line before anything runs.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import sys
import time
from typing import Any, Callable, Optional

import numpy as np

try:
    from . import executable_replies as replies
except ImportError:  # loaded by path (a worker in another interpreter): its sibling is loaded by path too
    import importlib.util

    _spec = importlib.util.spec_from_file_location(
        "_audit_worker_executable_replies", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "executable_replies.py"))
    if _spec is None or _spec.loader is None:  # a .py file's spec has a loader
        raise ImportError("dpaudit's protocol client cannot load executable_replies.py beside it") from None
    replies = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = replies
    _spec.loader.exec_module(replies)

Entry = replies.Entry
RequestFailed = replies.RequestFailed
Stacked = replies.Stacked
Unframed = replies.Unframed

__all__ = ["OUTPUTS", "PREFIX", "PROTOCOL", "Program", "ProgramDied", "ProgramError", "RequestFailed", "Stacked", "Unframed",
           "command_of", "parent_death_signal", "seed_from_generator", "seeds_from_words"]

PREFIX = "cmd:"
PROTOCOL = "dpaudit/1"
OUTPUTS = ("points", "centroids", "labels", "vector")
SEED_BITS = 53  # seeds are exact integers in a double, the one number type of JavaScript, R and Octave
HANDSHAKE_SECONDS = 50.0  # a program may take this long to start and write its first line (under the 60 s a
# worker is given to load: the program's own message, not the worker's silence, says what went wrong)
MAX_LINE_FLOOR = 64 << 20  # bytes a reply line may have whatever its size (a line longer is garbage)
MAX_LINE_CEILING = 1 << 30
STDERR_TAIL = 2000  # characters of a program's last words kept for a message


class ProgramError(Exception):
    """The program cannot be audited as named: it does not start, or its first line is not the handshake.
    ``plain``: its message is the whole line (a user mistake, exit 2)."""

    plain = True


class ProgramDied(RuntimeError):
    """The running program ended (exited, was killed, closed its output) while it was asked for releases."""


class CommandSpec:
    """A ``cmd:COMMAND`` spec as loaded: the plug-in forms' ``program`` (:data:`~dpaudit.mechanisms.plugin_forms.FORMS`),
    its process started when a side adopts it (this process: :class:`~dpaudit.mechanisms.executable.ExecutableSpec`;
    a worker: :class:`Program`)."""

    plugin_form = "program"

    def __init__(self, spec: str) -> None:
        self.spec = spec.strip()


def command_of(spec: str) -> list[str]:
    """The argument vector ``cmd:COMMAND`` names (split as a shell splits, run without one)."""
    text = spec.strip()[len(PREFIX):]
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ProgramError(f"{spec.strip()}: cannot split the command ({exc})") from None
    if not argv:
        raise ProgramError(f"{spec.strip()!r} names no command: write cmd:PROGRAM ARGUMENTS, e.g. "
                           "cmd:\"Rscript their_kmeans.R\"")
    return argv


def seeds_from_words(words: np.ndarray) -> list[int]:
    """The seed of each release from its 128-bit entropy (k×4 little-endian 32-bit words, what a worker is sent):
    the entropy's low :data:`SEED_BITS` bits — what :func:`seed_from_generator` gives for its generator."""
    w = np.asarray(words, dtype=np.uint64).reshape(-1, 4)
    low = w[:, 0] | ((w[:, 1] & np.uint64((1 << (SEED_BITS - 32)) - 1)) << np.uint64(32))
    return [int(s) for s in low]


def seed_from_generator(rng: np.random.Generator) -> int:
    """The seed a release drawn with ``rng`` is given: the low bits of the entropy of its ``SeedSequence`` when it is
    a plain one (the auditor's opaque generators: the same seed in this process and in a worker), else a number
    drawn from ``rng``."""
    seq = getattr(rng.bit_generator, "seed_seq", None)
    entropy = getattr(seq, "entropy", None)
    if isinstance(entropy, int) and not tuple(getattr(seq, "spawn_key", ()) or ()):
        return entropy & ((1 << SEED_BITS) - 1)
    return int(rng.integers(0, 1 << SEED_BITS))


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"a parameter of type {type(value).__name__} cannot be sent to a program")


class _Lines:
    """Lines read from a pipe's descriptor, with a limit per line and, when asked, a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, bytearray()

    def readline(self, limit: int, deadline: float | None = None) -> bytes:
        """The next line (with its newline); what is left at end of file (b"" when nothing); at most ``limit``
        bytes (a longer line returns its first ``limit`` bytes, no newline).  Past ``deadline``: TimeoutError."""
        start = 0
        while True:
            end = self.buffer.find(b"\n", start)
            if end >= 0 or len(self.buffer) >= limit:
                cut = min(end + 1 if end >= 0 else limit, limit)
                line = bytes(self.buffer[:cut])
                del self.buffer[:cut]
                return line
            start = len(self.buffer)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    raise TimeoutError
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                line = bytes(self.buffer)
                self.buffer.clear()
                return line
            self.buffer += chunk


class Program:
    """The client of one ``cmd:COMMAND``: starts the program, checks its handshake, and asks it for releases.

    ``in_worker``: run inside a dpaudit worker — the program gets a parent-death signal (a worker killed for a
    timeout takes its program along) and the program started to read the handshake is ended at once (a worker that
    becomes a fork server never calls the code: each process that serves releases starts its own on its first
    request).  ``output``: what the user stated (``--output``); it must agree with the handshake.
    """

    def __init__(self, spec: str, *, epsilon: float | None, output: str | None = None,
                 params: dict[str, Any] | None = None, in_worker: bool = False) -> None:
        self.spec = spec.strip()
        self.argv = command_of(spec)
        self.epsilon = None if epsilon is None else float(epsilon)
        self.in_worker = bool(in_worker)
        try:
            self._params = json.dumps(dict(params or {}), default=_json_default, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ProgramError(f"{self.spec}: the parameters cannot be sent as JSON ({exc})") from None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: _Lines | None = None
        self._owner = 0  # the process that started the program (a forked lane starts its own)
        self._data: tuple[tuple[int, ...], bytes, str] | None = None  # the last dataset and its JSON text
        hello = self._start(load=True)
        self.output = str(hello["output"])
        if output is not None and output != self.output:
            self.close()
            raise ProgramError(f"{self.spec}: the program says it releases {self.output} (its handshake), but "
                               f"--output says {output}: leave --output out, or make the two agree")
        self.name = str(hello.get("name") or os.path.basename(self.argv[-1] if len(self.argv) > 1 else self.argv[0]))
        if self.in_worker:
            self.close()

    # ---- the process --------------------------------------------------------------
    def _spawn(self, capture: bool) -> subprocess.Popen[bytes]:
        """The program, in a process group of its own (:meth:`close` ends the whole group) and, in a worker,
        with a parent-death signal: a worker killed for a timeout or by the auditor takes its program along."""
        parent, die = os.getpid(), parent_death_signal() if self.in_worker else None

        def child_setup() -> None:  # in the child between fork and exec: system calls only
            os.setpgid(0, 0)
            if die is not None and (die() != 0 or os.getppid() != parent):
                os._exit(70)  # the worker is gone already
        try:
            return subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE if capture else None, close_fds=True,
                                    preexec_fn=child_setup if os.name == "posix" else None)
        except OSError as exc:
            raise ProgramError(f"{self.spec}: cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None

    def _start(self, load: bool = False) -> dict[str, Any]:
        """Start the program and read its handshake (``load``: the first start, where a failure is the user's
        mistake and the program's stderr is kept for the message; later, a failure is a death)."""
        try:
            proc = self._spawn(capture=load)
        except ProgramError as exc:
            if load:
                raise
            raise ProgramDied(str(exc)) from None
        if proc.stdout is None:  # a pipe, always: Popen was given stdout=PIPE
            raise RuntimeError("the program was started without a pipe for its output")
        lines = _Lines(proc.stdout.fileno())
        self._proc, self._lines, self._owner = proc, lines, os.getpid()
        try:
            return self._handshake(lines, deadline=time.monotonic() + HANDSHAKE_SECONDS if load else None)
        except (ProgramError, ProgramDied) as exc:
            words = self._stderr_tail() if load else ""
            self.close()
            if load:
                raise ProgramError(f"{exc}{': ' + words if words else ''}") from None
            raise ProgramDied(str(exc)) from None

    def _handshake(self, lines: _Lines, deadline: float | None) -> dict[str, Any]:
        try:
            line = lines.readline(1 << 16, deadline)
        except TimeoutError:
            raise ProgramError(f"{self.spec}: no handshake line within {HANDSHAKE_SECONDS:g} s of starting") from None
        if not line:
            raise ProgramError(f"{self.spec}: the program ended before its handshake ({self._status()})")
        try:
            hello = json.loads(line)
        except ValueError:
            hello = None
        if not isinstance(hello, dict) or hello.get("protocol") != PROTOCOL:
            raise ProgramError(f"{self.spec}: its first line {replies.shown(line)} is not the handshake "
                               f'{{"protocol": "{PROTOCOL}", "output": KIND}} (docs/executables.md)')
        if hello.get("output") not in OUTPUTS:
            raise ProgramError(f"{self.spec}: its handshake names output {hello.get('output')!r}; one of "
                               f"{', '.join(OUTPUTS)}")
        return hello

    def _stderr_tail(self) -> str:
        proc = self._proc
        if proc is None or proc.stderr is None:
            return ""
        try:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=5)
            text = proc.stderr.read().decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return ""
        lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
        return " | ".join(lines)[-STDERR_TAIL:]

    def _status(self) -> str:
        proc = self._proc
        if proc is None:
            return "not started"
        try:
            code = proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "it closed its output but still runs"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def close(self) -> None:
        """End the program (its whole process group), if this process started it; a forked lane's inherited
        handles are only let go (the program is its template's)."""
        proc, self._proc, self._lines = self._proc, None, None
        if proc is None:
            return
        mine = self._owner == os.getpid()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if not mine:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __getstate__(self) -> dict[str, Any]:  # a copy starts its own program on its first request
        return {**self.__dict__, "_proc": None, "_lines": None, "_owner": 0, "_data": None}

    # ---- releases ----------------------------------------------------------------------
    def answer(self, X: np.ndarray, seeds: list[int]) -> Stacked | list[Entry]:
        """The releases for ``seeds`` on ``X``: stacked when the program gave every one, of one shape; else one
        entry per seed (a failed release as the worker's ``failed`` meta).  Raises :class:`ProgramDied`."""
        try:
            return self._ask(X, seeds)
        except (Unframed, RequestFailed) as exc:
            reason = "wrong-shape" if isinstance(exc, Unframed) else "raises"
            if isinstance(exc, Unframed):
                self.close()  # out of step with its replies: a fresh process
            if len(seeds) == 1:
                return [({"kind": "failed", "reason": reason, "error": str(exc)}, {})]
        out: list[Entry] = []  # which seed was it? each alone, so each failure is its own (data, seed)'s
        for seed in seeds:
            one = self.answer(X, [seed])
            out += replies.entries(one) if isinstance(one, Stacked) else one
        return out

    def _ask(self, X: np.ndarray, seeds: list[int]) -> Stacked | list[Entry]:
        if self._proc is None or self._owner != os.getpid():
            self.close()
            self._start()
        if self._proc is None or self._proc.stdin is None or self._lines is None:
            raise RuntimeError("the program is asked for releases before it was started")
        if self.epsilon is None:
            raise RequestFailed("no ε to honour was given (--eps)")
        X = np.ascontiguousarray(X, dtype=np.float64)
        n, d = X.shape
        line = (f'{{"op": "release", "epsilon": {json.dumps(self.epsilon)}, "count": {len(seeds)}, '
                f'"seeds": {json.dumps(seeds)}, "n": {n}, "d": {d}, "params": {self._params}, '
                f'"data": {self._data_json(X)}}}\n')
        try:
            self._proc.stdin.write(line.encode("utf-8"))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise ProgramDied(self._death("it stopped reading its input")) from None
        limit = min(MAX_LINE_CEILING, MAX_LINE_FLOOR + len(seeds) * 64 * 25 * max(X.size, 1))
        raw = self._lines.readline(limit)
        if not raw:
            raise ProgramDied(self._death("it ended before answering"))
        return replies.decode(raw, len(seeds), self.output, d, limit)

    def _data_json(self, X: np.ndarray) -> str:
        """The dataset as JSON, encoded once per dataset (a worker sends many batches on one)."""
        raw = X.tobytes()
        if self._data is None or self._data[0] != X.shape or self._data[1] != raw:
            self._data = (X.shape, raw, json.dumps(X.tolist(), allow_nan=False))
        return self._data[2]

    def _death(self, what: str) -> str:
        status = self._status()
        self.close()
        return f"the program {self.spec} died: {what} ({status})"


_PRCTL: list[Any] = []  # libc's prctl, once looked up (an empty list: not yet; [None]: there is none)


def parent_death_signal() -> Optional[Callable[[], int]]:
    """A call that makes the calling process receive SIGKILL when its parent dies (Linux ``prctl``), looked up here,
    before a fork, so the child only calls it; None where there is no such thing."""
    if not _PRCTL:
        try:
            import ctypes

            _PRCTL.append(ctypes.CDLL(None, use_errno=True).prctl)
        except (OSError, AttributeError):
            _PRCTL.append(None)
    prctl = _PRCTL[0]
    if prctl is None:
        return None
    return lambda: int(prctl(1, int(signal.SIGKILL), 0, 0, 0))  # 1 = PR_SET_PDEATHSIG
