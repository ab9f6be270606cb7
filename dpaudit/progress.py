"""Progress of a long run where people look: a bar on a terminal, plain lines in a pipe or a CI log.

A run declares its *plan*: the steps it will take, each with an estimated
relative cost (label-only scoring costs several times Yeom's, an ε estimate
on a slow mechanism more than all the attacks).  Progress is the
cost-weighted share of the plan that is done, and

    ETA = elapsed × (cost still to do) / (cost done),

so a cheap first step does not make an expensive rest look short; as steps
finish, the measured time replaces the guess (the ratio is measured time per
unit of estimated cost).  Inside a step, work that reports its own progress
(chunks of releases, the attacks' ``progress(phase, done, total)`` hook)
moves the bar within the step's share.

Modes (:func:`resolve_mode`):

``bar``
    a tqdm bar on stderr (the default on a terminal);
``lines``
    plain lines on stderr (the default when stderr is a pipe, a file or a CI
    log): one when a step starts and one each time the run passes another
    10 %, each with the elapsed time and the ETA;
``off``
    nothing (``--quiet`` / ``--no-progress``).

Nothing here writes to stdout, which stays clean for piping.
"""

from __future__ import annotations

import math
import sys
import time
from typing import IO, Any, Callable, Sequence

__all__ = ["MODES", "RunProgress", "format_seconds", "resolve_mode", "short_label"]

MODES = ("auto", "bar", "lines", "off")
_LINE_STEP = 0.10  # a plain line each time the run passes another 10 %
HEARTBEAT_SECONDS = 15.0  # lines mode: at most this long without a line while units are done
_BAR_UNITS = 1000


def resolve_mode(mode: str = "auto", stream: IO[str] | None = None) -> str:
    """``auto`` → ``bar`` on a terminal, else ``lines``; other modes as given."""
    if mode not in MODES:
        raise ValueError(f"progress mode must be one of {', '.join(MODES)}; got {mode!r}")
    if mode != "auto":
        return mode
    stream = sys.stderr if stream is None else stream
    try:
        return "bar" if stream.isatty() else "lines"
    except (AttributeError, ValueError):
        return "lines"


def short_label(command: str, mechanism: str) -> str:
    """``attack ndlaplace``; a plug-in spec ``path/to/code.py:fn`` shows as its ``fn``."""
    name = mechanism.rsplit(":", 1)[-1] if ":" in mechanism else mechanism
    return f"{command} {name.rsplit('/', 1)[-1]}"


def format_seconds(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


class RunProgress:
    """Cost-weighted progress of one run (see the module docstring).

    >>> import io
    >>> out, now = io.StringIO(), [0.0]
    >>> p = RunProgress("demo", [("cheap", 1.0), ("dear", 9.0)], mode="lines", stream=out, clock=lambda: now[0])
    >>> p.start("cheap"); now[0] = 10.0; p.finish(); p.start("dear")
    >>> print(out.getvalue().strip())
    demo: 10% done after 10 s, about 1 min 30 s left
    demo: dear … (10% done after 10 s, about 1 min 30 s left)
    """

    def __init__(self, label: str, plan: Sequence[tuple[str, float]] = (), *, mode: str = "auto",
                 stream: IO[str] | None = None, clock: Callable[[], float] = time.monotonic,
                 unit: str = "chunks") -> None:
        self.label = label
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.mode = resolve_mode(mode, self.stream)
        self._clock = clock
        self._t0 = clock()
        self._last_line = self._t0
        self._printed = False
        self._weights: dict[str, float] = {}
        for name, weight in plan:
            self.add(name, weight)
        self._done = 0.0            # cost of the finished steps
        self._step: str | None = None
        self._within = 0.0          # fraction of the current step that is done
        self._phases: list[str] = []  # phases the current step reported through hook()
        self._group: str | None = None  # steps named "GROUP · part" print one line per group
        self._next_line = _LINE_STEP
        self._bar: Any = None
        self.total: int | None = None  # tqdm-like use (map_seeds): chunks in the current step
        self.n = 0

    # ---- the plan ---------------------------------------------------------------------------
    def add(self, name: str, weight: float) -> None:
        """Add a step of estimated relative cost ``weight`` (> 0) to the plan."""
        if not (weight > 0 and math.isfinite(weight)):
            raise ValueError(f"step cost must be a positive number, got {weight!r}")
        self._weights[name] = self._weights.get(name, 0.0) + float(weight)

    @property
    def steps(self) -> list[tuple[str, float]]:
        """The plan: (step, estimated relative cost), in the order the steps were added."""
        return list(self._weights.items())

    @property
    def planned(self) -> float:
        return sum(self._weights.values())

    def fraction(self) -> float:
        """Cost-weighted share of the plan that is done, in [0, 1]."""
        total = self.planned
        if total <= 0:
            return 0.0
        current = self._weights.get(self._step, 0.0) * self._within if self._step else 0.0
        return min(1.0, (self._done + current) / total)

    def elapsed(self) -> float:
        return self._clock() - self._t0

    def eta(self) -> float | None:
        """Seconds left: elapsed × cost to do / cost done; ``None`` before anything is done."""
        frac = self.fraction()
        if frac <= 0.0:
            return None
        return self.elapsed() * (1.0 - frac) / frac

    # ---- steps ------------------------------------------------------------------------------
    def start(self, name: str, *, weight: float | None = None) -> None:
        """Begin step ``name`` (finishing the previous one); a step not in the plan is added with
        ``weight`` (default: the mean planned step cost)."""
        if self._step is not None:
            self.finish()
        if name not in self._weights:
            self.add(name, weight if weight is not None else (self.planned / len(self._weights)
                                                               if self._weights else 1.0))
        self._step, self._within, self.total, self.n = name, 0.0, None, 0
        self._phases = []
        group = name.split(" · ")[0]  # "repeat 2/3 · yeom": one line per repeat, not per attack
        # Nothing in the first second: a run that stops at once (a bad input) prints only its error.
        if self.mode == "lines" and group != self._group and (self._printed or self.elapsed() >= 1.0):
            self._line(f"{group} …")
        self._group = group
        self._draw()

    def advance(self, fraction: float) -> None:
        """The current step is ``fraction`` done (never moves back)."""
        self._within = min(1.0, max(self._within, float(fraction)))
        self._draw()

    def finish(self) -> None:
        """The current step is done."""
        if self._step is not None:
            self._done += self._weights.get(self._step, 0.0)
            self._step, self._within = None, 0.0
        self._draw()

    def skip(self, name: str) -> None:
        """Drop a planned step that will not run (its cost leaves the plan)."""
        self._weights.pop(name, None)
        self._draw()

    def hook(self, phase: str, done: int, total: int) -> None:
        """The attacks' progress hook ``progress(phase, done, total)``: moves within the current step.

        A step's phases are not known in advance: the k-th phase seen (k = 0, 1, …) covers
        [1 − 2^−k, 1 − 2^−(k+1)] of the step's first 95 %, so the bar never moves back.
        """
        if total <= 0:
            return
        if phase not in self._phases:
            self._phases.append(phase)
        k = self._phases.index(phase)
        lo, hi = 1.0 - 0.5 ** k, 1.0 - 0.5 ** (k + 1)
        self.advance(0.95 * (lo + (hi - lo) * min(done, total) / total))

    # ---- tqdm-like, for map_seeds (``update(n)`` per chunk) -----------------------------------
    def note(self, text: str) -> None:
        """A line for the reader between progress updates (what a timed budget buys, say); nothing when off."""
        if self.mode == "off":
            return
        if self._bar is not None:
            self._bar.write(f"{self.label}: {text}", file=self.stream)
        else:
            print(f"{self.label}: {text}", file=self.stream, flush=True)

    def update(self, n: int = 1) -> None:
        """``n`` more units (chunks) of the current step are done.  Without a ``total`` the step's
        share cannot move; in ``lines`` mode a heartbeat line says how many units are done at most
        every :data:`HEARTBEAT_SECONDS`, so a log never stays silent for long."""
        self.n += n
        if self.total:
            self.advance(self.n / self.total)
            return
        if self.mode == "lines" and self._clock() - self._last_line >= HEARTBEAT_SECONDS:
            self._line(f"{self._step or 'working'}: {self.n} {self.unit} done after "
                       f"{format_seconds(self.elapsed())}", status=False)
        self._draw()

    def close(self) -> None:
        """Finish the run's display (a last line in ``lines`` mode)."""
        if self._step is not None:
            self.finish()
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self.mode == "lines" and self._printed:
            self._line(None, final=True)

    def __enter__(self) -> "RunProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- display ----------------------------------------------------------------------------
    def _status(self) -> str:
        frac, eta = self.fraction(), self.eta()
        text = f"{frac:.0%} done after {format_seconds(self.elapsed())}"
        if eta is not None and frac < 1.0:
            text += f", about {format_seconds(eta)} left"
        return text

    def _line(self, what: str | None, final: bool = False, status: bool = True) -> None:
        if final:
            text = f"{self.label}: finished in {format_seconds(self.elapsed())}"
        elif what is None:
            text = f"{self.label}: {self._status()}" + (f" ({self._step})" if self._step else "")
        else:
            status = status and (self.fraction() > 0 or self.elapsed() >= 1.0)
            text = f"{self.label}: {what}" + (f" ({self._status()})" if status else "")
        self._last_line = self._clock()
        self._printed = True
        print(text, file=self.stream, flush=True)

    def _draw(self) -> None:
        if self.mode == "off":
            return
        frac = self.fraction()
        if self.mode == "lines":
            if frac + 1e-12 >= self._next_line and frac < 1.0:
                self._line(None)
            while self._next_line <= frac + 1e-12:
                self._next_line += _LINE_STEP
            return
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=_BAR_UNITS, file=self.stream, leave=False, dynamic_ncols=True,
                             bar_format="{desc} {percentage:3.0f}%|{bar}| {postfix}")
        self._bar.set_description_str(f"{self.label}: {self._step or '…'}", refresh=False)
        eta = self.eta()
        done = f"{self.n} {self.unit} done, " if self.total is None and self.n else ""  # no total: count, no ETA
        self._bar.set_postfix_str(f"{done}{format_seconds(self.elapsed())} elapsed"
                                  + (f", ~{format_seconds(eta)} left" if eta is not None else ""), refresh=False)
        self._bar.n = int(round(frac * _BAR_UNITS))
        self._bar.refresh()
