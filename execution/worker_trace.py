"""One call into the audited code, traced: the lines it ran, the noise it drew and its scale, where it raised.

Imported by ``_worker_calls.py`` (in the worker, possibly another
interpreter) and by :mod:`.isolation`: standard library and numpy only.
The search traces its *coupled screening* calls — D and D′ on the same
random stream — to name where the code leaks; certification calls are never
traced (nothing here runs unless a draw asks for it).

* **Lines.**  ``sys.settrace`` with a global trace function that hands a
  local (line) tracer only to frames of the audited code
  (:class:`~.worker_frames.FrameRule`: never dpaudit's own, the standard
  library's, numpy's or scipy's): hit counts per (file, line).  Only the
  calling thread is traced, and the previous trace function (coverage.py, a
  debugger) is put back afterwards, even when the call raises.
  ``sys.monitoring`` (3.12+) is not used: ``sys.settrace`` works on every
  interpreter dpaudit's worker runs in (3.12 and 3.13 implement it on top of
  the same instrumentation), the cost is paid only by the few traced calls,
  and one implementation is one behaviour to test.
* **Noise draws.**  ``numpy.random.Generator`` methods are C functions, not
  traceable: the traced call is given a :class:`RecordingGenerator` (a
  ``Generator`` subclass on the *same* bit generator: ``isinstance`` holds,
  the numbers are identical, its ``spawn`` children record too), and for the
  call only the global functions ``numpy.random.normal``, … (numpy's legacy
  global state), ``numpy.random.default_rng`` and ``random.gauss``, … are
  swapped for recording wrappers (put back afterwards, even on an
  exception).  A draw records its call site (the innermost frame of the
  audited code), its distribution and its *scale* parameters only — never a
  location or mean (those are the records' values) — summarised as
  ``[min, max]`` (a covariance: the square roots of its diagonal).
* **Raises.**  Where an exception left the audited code: its type and the
  innermost audited frame of its traceback (``their_kmeans.py:61``, not numpy's
  ``linalg.py``).

What cannot be seen: draws inside C extensions, draws through names bound
before the call (``from numpy.random import laplace`` at import time, a
``random.Random`` or ``numpy.random.RandomState`` instance of the code's own,
an estimator's ``random_state``), noise scaled after a standard draw
(``sigma * rng.standard_normal()``, scipy.stats' ``rvs``): their *lines*
are still counted.
"""

from __future__ import annotations

import random
import sys
from _thread import allocate_lock, get_ident
from types import FrameType, TracebackType
from typing import Any, Callable, Iterable

import numpy as np

try:
    from . import worker_frames as _frames
    from . import worker_globals as _globals
except ImportError:  # loaded by path from _worker_main.py, which loaded its siblings first
    _frames = sys.modules["_audit_worker_worker_frames"]
    _globals = sys.modules["_audit_worker_worker_globals"]

__all__ = ["DISTRIBUTIONS", "CallTrace", "RecordingGenerator", "ScreeningCall", "frame_rule"]

# Parameter = (name, position, default, transform): the scale-like parameters of a draw, never loc or mean.
Parameter = tuple[str, int, Any, Callable[[Any], Any] | None]


def _inverse(rate: Any) -> Any:
    return 1.0 / np.asarray(rate, dtype=np.float64)


_SCALE1: tuple[Parameter, ...] = (("scale", 1, 1.0, None),)
DISTRIBUTIONS: dict[str, tuple[Parameter, ...]] = {  # numpy's name (Generator and legacy global) -> its scales
    "normal": _SCALE1, "laplace": _SCALE1, "gumbel": _SCALE1, "logistic": _SCALE1,
    "exponential": (("scale", 0, 1.0, None),), "rayleigh": (("scale", 0, 1.0, None),),
    "gamma": (("shape", 0, None, None), ("scale", 1, 1.0, None)), "standard_gamma": (("shape", 0, None, None),),
    "wald": (("scale", 1, None, None),), "lognormal": (("sigma", 1, 1.0, None),),
    "geometric": (("p", 0, None, None),), "standard_t": (("df", 0, None, None),),
    "vonmises": (("kappa", 1, None, None),), "multivariate_normal": (("cov", 1, None, None),),
}
# random's functions -> (numpy's name for the distribution, its scales)
_RANDOM: dict[str, tuple[str, tuple[Parameter, ...]]] = {
    "gauss": ("normal", (("scale", 1, 1.0, None),)), "normalvariate": ("normal", (("scale", 1, 1.0, None),)),
    "lognormvariate": ("lognormal", (("sigma", 1, None, None),)),
    "expovariate": ("exponential", (("scale", 0, 1.0, _inverse),)),
    "gammavariate": ("gamma", (("shape", 0, None, None), ("scale", 1, None, None))),
    "weibullvariate": ("weibull", (("scale", 0, None, None), ("shape", 1, None, None))),
    "vonmisesvariate": ("vonmises", (("kappa", 1, None, None),)),
}

# The traced calls running now, by thread.  The stand-ins are swapped in when the first starts and the
# originals put back when the last ends; a draw is recorded by the trace of the thread that made it.
_ACTIVE: "dict[int, CallTrace]" = {}
_SWAPPED: list[tuple[Any, str, Any]] = []
_LOCK = allocate_lock()
_RULES: dict[tuple[str, ...], Any] = {}


def frame_rule(roots: Iterable[str] = ()) -> Any:
    """The :class:`~.worker_frames.FrameRule` for ``roots``, one per process (it caches file names)."""
    key = tuple(roots)
    rule = _RULES.get(key)
    if rule is None:
        rule = _RULES[key] = _frames.FrameRule(key)
    return rule


def _summary(name: str, value: Any) -> list[float] | None:
    """``[min, max]`` of a scale parameter (a covariance: of the square roots of its diagonal); None if not numeric."""
    try:
        a = np.asarray(value, dtype=np.float64)
        if name == "cov" and a.ndim >= 2:
            a = np.sqrt(np.clip(np.diagonal(a, axis1=-2, axis2=-1), 0.0, None))
        if a.size == 0:
            return None
        return [float(a.min()), float(a.max())]
    except (TypeError, ValueError):
        return None


def _note(dist: str, call: str, params: tuple[Parameter, ...], args: tuple[Any, ...],
          kwargs: dict[str, Any]) -> None:
    """Record one draw in the active trace (called from a recording method or wrapper; never raises)."""
    trace = _ACTIVE.get(get_ident())
    if trace is None:  # outside a traced call, or in a thread no traced call runs in
        return
    try:
        trace.draw(sys._getframe(2), dist, call, params, args, kwargs)
    except Exception:  # noqa: BLE001 - recording must never change what the audited code sees
        pass


class RecordingGenerator(np.random.Generator):
    """A ``numpy.random.Generator`` that records its noise draws in the active :class:`CallTrace`.

    Built on the bit generator of the generator it stands for, so it draws
    the same numbers; outside a traced call it records nothing.
    """


def _recording_method(dist: str, params: tuple[Parameter, ...]) -> Callable[..., Any]:
    base = getattr(np.random.Generator, dist)

    def method(self: np.random.Generator, *args: Any, **kwargs: Any) -> Any:
        _note(dist, f"rng.{dist}", params, args, kwargs)
        return base(self, *args, **kwargs)

    method.__name__, method.__qualname__, method.__doc__ = dist, f"RecordingGenerator.{dist}", base.__doc__
    return method


for _dist, _params in DISTRIBUTIONS.items():
    setattr(RecordingGenerator, _dist, _recording_method(_dist, _params))


def _twin(rng: Any) -> Any:
    """``rng`` as a :class:`RecordingGenerator` on the same bit generator (anything else as it is)."""
    if isinstance(rng, RecordingGenerator) or not isinstance(rng, np.random.Generator):
        return rng
    return RecordingGenerator(rng.bit_generator)


def _wrapper(original: Callable[..., Any], dist: str, call: str, params: tuple[Parameter, ...]
             ) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _note(dist, call, params, args, kwargs)
        return original(*args, **kwargs)

    wrapper.__name__ = getattr(original, "__name__", dist)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    return wrapper


def _default_rng(original: Callable[..., Any]) -> Callable[..., Any]:
    def default_rng(*args: Any, **kwargs: Any) -> Any:
        made = original(*args, **kwargs)
        return made if args and made is args[0] else _twin(made)  # a Generator passed in comes back as it is

    default_rng.__doc__ = original.__doc__
    return default_rng


def _stand_ins() -> list[tuple[Any, str, Any, Any]]:
    """(module, name, original, recording stand-in) for every global noise function there is to swap."""
    out: list[tuple[Any, str, Any, Any]] = []
    for dist, params in DISTRIBUTIONS.items():
        original = getattr(np.random, dist, None)
        if callable(original):
            out.append((np.random, dist, original, _wrapper(original, dist, f"numpy.random.{dist}", params)))
    for name, (dist, params) in _RANDOM.items():
        original = getattr(random, name, None)
        if callable(original):
            out.append((random, name, original, _wrapper(original, dist, f"random.{name}", params)))
    out.append((np.random, "default_rng", np.random.default_rng, _default_rng(np.random.default_rng)))
    return out


_STAND_INS: list[tuple[Any, str, Any, Any]] = []


def _swaps() -> list[tuple[Any, str, Any, Any]]:
    """:func:`_stand_ins`, built once and again only when one of the originals has changed since."""
    global _STAND_INS
    if not _STAND_INS or any(getattr(module, name, None) is not original for module, name, original, _ in _STAND_INS):
        _STAND_INS = _stand_ins()
    return _STAND_INS


class CallTrace:
    """The trace of one call: ``with trace: fn(X, eps, trace.generator(rng))``, then :meth:`to_dict`.

    ``rule``: which files are the audited code's (:func:`frame_rule`).  The
    context traces the calling thread only and puts back what it changed —
    the trace function, numpy's and ``random``'s global functions — however
    the call ends; an exception goes on, its site recorded.
    """

    def __init__(self, rule: Any) -> None:
        self.rule = rule
        self.counts: dict[tuple[str, int], int] = {}
        self.codes: dict[int, Any] = {}
        self.draws: dict[tuple[str, int, str, str], dict[str, Any]] = {}
        self.raised: dict[str, Any] | None = None
        self._previous: Any = None

    def generator(self, rng: Any) -> Any:
        """The generator the traced call is given in place of ``rng`` (same numbers, draws recorded)."""
        return _twin(rng)

    # ---- the tracer ---------------------------------------------------------------------
    def _tracers(self) -> Callable[..., Any]:
        audited: dict[str, bool] = {}
        counts, codes, rule = self.counts, self.codes, self.rule

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                key = (frame.f_code.co_filename, frame.f_lineno)
                counts[key] = counts.get(key, 0) + 1
            return local

        def global_(frame: FrameType, event: str, arg: Any) -> Any:
            code = frame.f_code
            mine = audited.get(code.co_filename)
            if mine is None:
                mine = audited[code.co_filename] = rule.audited_name(code.co_filename) is not None
            if mine:
                codes[id(code)] = code
                return local
            return None

        return global_

    def __enter__(self) -> "CallTrace":
        thread = get_ident()
        with _LOCK:
            if thread in _ACTIVE:
                raise RuntimeError("a traced call is already running in this thread")
            if not _ACTIVE:
                for module, name, original, stand_in in _swaps():
                    _SWAPPED.append((module, name, original))
                    setattr(module, name, stand_in)
            _ACTIVE[thread] = self
        self._previous = sys.gettrace()
        sys.settrace(self._tracers())
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        sys.settrace(self._previous)
        with _LOCK:
            _ACTIVE.pop(get_ident(), None)
            if not _ACTIVE:
                for module, name, original in reversed(_SWAPPED):
                    setattr(module, name, original)
                _SWAPPED.clear()
        if exc is not None:
            self.raised = {"type": type(exc).__name__, "site": self._raise_site(tb)}

    def _raise_site(self, tb: TracebackType | None) -> list[Any] | None:
        site = None
        while tb is not None:
            name = self.rule.audited_name(tb.tb_frame.f_code.co_filename)
            if name is not None:
                site = [name, tb.tb_lineno]
            tb = tb.tb_next
        return site

    # ---- draws ------------------------------------------------------------------------------
    def draw(self, frame: FrameType | None, dist: str, call: str, params: tuple[Parameter, ...],
             args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Record a draw made from ``frame`` (or the innermost audited frame above it)."""
        while frame is not None:
            name = self.rule.audited_name(frame.f_code.co_filename)
            if name is not None:
                break
            frame = frame.f_back
        if frame is None:  # drawn by dpaudit's own code or a library alone: not the audited code's draw
            return
        entry = self.draws.setdefault((name, frame.f_lineno, dist, call), {"count": 0, "params": {}})
        entry["count"] += 1
        for pname, position, default, transform in params:
            value = args[position] if len(args) > position else kwargs.get(pname, default)
            if value is None:
                continue
            summary = _summary(pname, transform(value) if transform is not None else value)
            if summary is None:
                continue
            seen = entry["params"].get(pname)
            entry["params"][pname] = summary if seen is None else [min(seen[0], summary[0]), max(seen[1], summary[1])]

    # ---- the result ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """``{"lines": {file: [[line, count], …]}, "functions": {file: [[qualname, first, last], …]},
        "draws": [{"site": [file, line], "dist", "call", "count", "params": {name: [min, max]}}],
        "raised": {"type", "site": [file, line] | None} | None}`` — files as :class:`~.worker_frames.FrameRule`
        shows them; JSON-able, no value of the data."""
        lines: dict[str, list[list[int]]] = {}
        for (filename, line), count in sorted(self.counts.items()):
            name = self.rule.audited_name(filename)
            if name is not None:
                lines.setdefault(name, []).append([line, count])
        functions: dict[str, list[list[Any]]] = {}
        for code in self.codes.values():
            numbers = [n for _, _, n in code.co_lines() if n is not None]
            name = self.rule.audited_name(code.co_filename)
            if numbers and name is not None:
                functions.setdefault(name, []).append([getattr(code, "co_qualname", code.co_name),
                                                       min(numbers), max(numbers)])
        draws = [{"site": [f, line], "dist": dist, "call": call, **entry}
                 for (f, line, dist, call), entry in sorted(self.draws.items())]
        return {"lines": lines, "functions": {k: sorted(v, key=lambda e: e[1]) for k, v in functions.items()},
                "draws": draws, "raised": self.raised}


class ScreeningCall:
    """One coupled screening call: ``with call: fn(X, eps, call.rng(rng))``, then :attr:`trace`.

    ``seed_globals``: numpy's and ``random``'s global state seeded from the
    call's entropy ``words`` as it starts (:func:`~.worker_globals.seed_globals`;
    the caller puts the states back after its batch: :class:`~.worker_globals.SavedGlobals`);
    ``rule`` (:func:`frame_rule`; None: not traced): the call traced
    (:class:`CallTrace`), its :meth:`~CallTrace.to_dict` in :attr:`trace` once it ends.
    """

    def __init__(self, words: Any, rule: Any, seed_globals: bool) -> None:
        self.words = words if seed_globals else None
        self.tracer = CallTrace(rule) if rule is not None else None
        self.trace: dict[str, Any] | None = None

    def rng(self, rng: Any) -> Any:
        return rng if self.tracer is None else self.tracer.generator(rng)

    def __enter__(self) -> "ScreeningCall":
        if self.words is not None:
            _globals.seed_globals(self.words)
        if self.tracer is not None:
            self.tracer.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.tracer is not None:
            self.tracer.__exit__(kind, exc, tb)
            self.trace = self.tracer.to_dict()
