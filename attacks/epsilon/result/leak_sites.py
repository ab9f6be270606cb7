"""Where the audited code leaks: the lines, noise draws and raises that differ between D and D′ on one stream.

The pair search draws *coupled* screening releases — D and D′ called with the
same entropy words (and the global generators seeded from them:
``draw_releases(..., trace=True, seed_globals=True)``), each call traced by
:mod:`dpaudit.execution.worker_trace`.  Where coupling holds, noise drawn the
same way is the same on both sides, so what still differs between the two
calls of one stream is the data's doing.  :func:`leak_sites` compares them
and names, ranked, at most a handful of :class:`LeakSite` s:

1. ``noise-scale`` — a draw whose scale differs between D and D′ on the same
   stream: the noise is calibrated from the data ("`their_kmeans.py:88` draws
   Gaussian noise (rng.normal) with scale 0.003 on D and 0.21 on D′");
2. ``one-side`` — lines that run on one dataset and never on the other in a
   stream (consecutive lines merged: "`k_means.py:243–244` run on D′ only");
3. ``raises`` — the code raised on one side of a stream and released on the
   other ("raises LinAlgError at `their_kmeans.py:61` on D′");
4. ``count`` — lines run on both, a different number of times (most often a
   loop whose iterations depend on the data: the least telling).

Within a kind, sites that differ in more streams come first, and a site that
differs in under a quarter of the streams goes after every more regular one
(line counts always last).  Lines and scales are compared only on streams
where both sides released; calls of D twice on one stream (``control``), when
given, set aside whatever differs there (randomness the coupling missed).

These sites locate a leak for a maintainer; they never certify anything
(only fresh, uncoupled samples do).  Nothing here reads a record: a site is a
file, lines, counts, scale parameters and an exception's type (never its
message, which may quote a value).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from dpaudit.execution import Draw, Findings
from dpaudit.mechanisms.base import Failed, Release

from ..pairs.pair import NeighbourPair

__all__ = ["KINDS", "TRACE_STREAMS", "CallSide", "CoupledCall", "LeakSite", "coupled_calls", "leak_sites",
           "where_it_leaks"]

TRACE_STREAMS = 8  # coupled, traced calls per dataset on a certified pair (and as many of D again, the control)

KINDS = ("noise-scale", "one-side", "raises", "count")  # in rank order
SIDES = ("D", "D′")
RARE = 0.25  # a site that differs in fewer than this share of the streams compared ranks after the regular ones

_NOISE_WORDS = {
    "normal": "Gaussian noise", "laplace": "Laplace noise", "gumbel": "Gumbel noise", "logistic": "logistic noise",
    "exponential": "exponential noise", "rayleigh": "Rayleigh noise", "gamma": "gamma noise",
    "standard_gamma": "gamma noise", "wald": "Wald noise", "lognormal": "log-normal noise",
    "geometric": "geometric noise", "standard_t": "Student-t noise", "vonmises": "von Mises noise",
    "multivariate_normal": "multivariate Gaussian noise", "weibull": "Weibull noise"}
_PARAM_WORDS = {"cov": "standard deviation (√ of the covariance's diagonal)", "sigma": "σ", "df": "degrees of freedom"}
_AT = re.compile(r"^([A-Za-z_][\w.]*): .*\(at ([^()]+):(\d+)\)$", re.S)


@dataclass(frozen=True)
class CallSide:
    """One dataset's call on a stream: its trace (None: not traced) and, when it raised, its error text."""

    trace: dict[str, Any] | None
    error: str | None = None


@dataclass(frozen=True)
class CoupledCall:
    """D's and D′'s calls on one random stream (the same entropy words)."""

    d: CallSide
    d_prime: CallSide


@dataclass(frozen=True)
class LeakSite:
    """A place in the audited code that behaves differently on D and D′, in a maintainer's words.

    ``side``: the dataset it happens on (``D``, ``D′``), ``either`` (on D in some
    streams, D′ in others) or ``both`` (a scale or a count that differs);
    ``streams`` of ``compared`` streams show it.
    """

    kind: str
    file: str
    first_line: int
    last_line: int
    side: str
    streams: int
    compared: int
    what: str
    function: str = ""

    @property
    def where(self) -> str:
        lines = str(self.first_line) if self.last_line == self.first_line else f"{self.first_line}–{self.last_line}"
        return f"{self.file}:{lines}"

    @property
    def share(self) -> float:
        return self.streams / self.compared if self.compared else 0.0

    @property
    def sentence(self) -> str:
        """The site as one sentence: "`their_kmeans.py:88` draws Gaussian noise … (10 of 10 streams)"."""
        tail = f" ({self.streams} of {self.compared} streams)"
        if self.kind == "raises":
            head, _, rest = self.what.partition(" on ")
            return f"{head} at `{self.where}` on {rest}{tail}"
        inside = f", in `{self.function}`" if self.function else ""
        return f"`{self.where}` {self.what}{inside}{tail}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "where": self.where, "sentence": self.sentence}


def coupled_calls(d: Draw, d_prime: Draw) -> list[CoupledCall]:
    """The coupled calls of two traced draws from one seed (D's and D′'s), matched by release position.

    A release dropped on either side (a timeout, a crash) has no partner and is left out; a call that
    raised keeps its error text (a malformed value is a call that ran to its end: it has none).
    """
    def sides(draw: Draw) -> dict[int, CallSide]:
        traces = draw.traces or [None] * len(draw.releases)
        out = {}
        for position, rel, trace in zip(draw.indices.tolist(), draw.releases, traces):
            raised = rel.error if isinstance(rel, Failed) and rel.reason == "raises" else None
            out[int(position)] = CallSide(trace, raised)
        return out

    left, right = sides(d), sides(d_prime)
    return [CoupledCall(left[i], right[i]) for i in sorted(set(left) & set(right))]


# --------------------------------------------------------------------------- #
# Reading traces
# --------------------------------------------------------------------------- #
def _lines(trace: dict[str, Any]) -> dict[tuple[str, int], int]:
    return {(file, int(line)): int(count) for file, rows in (trace.get("lines") or {}).items() for line, count in rows}


def _scales(trace: dict[str, Any]) -> dict[tuple[str, int, str, str, str], tuple[float, float]]:
    """(file, line, dist, call, parameter) → (min, max) of the scales drawn there in one call."""
    out = {}
    for draw in trace.get("draws") or []:
        file, line = draw["site"]
        for name, (lo, hi) in (draw.get("params") or {}).items():
            out[(file, int(line), str(draw["dist"]), str(draw.get("call", draw["dist"])), name)] = (lo, hi)
    return out


def _functions(traces: Iterable[dict[str, Any]]) -> dict[str, list[tuple[str, int, int]]]:
    out: dict[str, set[tuple[str, int, int]]] = {}
    for trace in traces:
        for file, rows in (trace.get("functions") or {}).items():
            out.setdefault(file, set()).update((str(q), int(a), int(b)) for q, a, b in rows)
    return {file: sorted(rows, key=lambda r: r[2] - r[1]) for file, rows in out.items()}


def _function_of(functions: dict[str, list[tuple[str, int, int]]], file: str, line: int) -> str:
    """The innermost function (by its line span) whose lines hold ``line``."""
    return next((q for q, a, b in functions.get(file, []) if a <= line <= b), "")


def _same(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Two scale summaries equal (to 1e-9 relative; NaN equals NaN: the same undefined scale twice)."""
    if a is None or b is None:
        return a is b
    return all(x == y or (x != x and y != y) or abs(x - y) <= 1e-9 * max(abs(x), abs(y)) for x, y in zip(a, b))


def _differing(calls: Sequence[CoupledCall]) -> tuple[set[tuple[str, int]], set[tuple[Any, ...]]]:
    """Lines and scales that differ between the two calls of any control stream (D twice)."""
    lines: set[tuple[str, int]] = set()
    scales: set[tuple[Any, ...]] = set()
    for call in calls:
        if call.d.trace is None or call.d_prime.trace is None:
            continue
        a, b = _lines(call.d.trace), _lines(call.d_prime.trace)
        lines |= {k for k in set(a) | set(b) if a.get(k, 0) != b.get(k, 0)}
        s, t = _scales(call.d.trace), _scales(call.d_prime.trace)
        scales |= {k for k in set(s) | set(t) if not _same(s.get(k), t.get(k))}
    return lines, scales


# --------------------------------------------------------------------------- #
# The sites
# --------------------------------------------------------------------------- #
def _number(value: float) -> str:
    return f"{value:.2g}" if value != 0 else "0"


def _span(values: list[tuple[float, float]]) -> str:
    lo, hi = min(v[0] for v in values), max(v[1] for v in values)
    return _number(lo) if _number(lo) == _number(hi) else f"{_number(lo)}–{_number(hi)}"


def _scale_sites(pairs: list[tuple[dict[str, Any], dict[str, Any]]], noise: set[tuple[Any, ...]],
                 functions: dict[str, list[tuple[str, int, int]]]) -> list[LeakSite]:
    seen: dict[tuple[Any, ...], list[tuple[tuple[float, float], tuple[float, float]]]] = {}
    both: dict[tuple[Any, ...], int] = {}
    for a, b in pairs:
        s, t = _scales(a), _scales(b)
        for key in set(s) & set(t):
            both[key] = both.get(key, 0) + 1
            if key not in noise and not _same(s[key], t[key]):
                seen.setdefault(key, []).append((s[key], t[key]))
    out = []
    for key, values in seen.items():
        file, line, dist, call, name = key
        what = (f"draws {_NOISE_WORDS.get(dist, dist + ' noise')} ({call}) with {_PARAM_WORDS.get(name, name)} "
                f"{_span([v[0] for v in values])} on D and {_span([v[1] for v in values])} on D′")
        out.append(LeakSite("noise-scale", file, line, line, "both", len(values), both[key], what,
                            _function_of(functions, file, line)))
    return out


def _line_stats(pairs: list[tuple[dict[str, Any], dict[str, Any]]], noise: set[tuple[str, int]]
                ) -> dict[tuple[str, int], dict[str, Any]]:
    """Per line: the streams where it ran on D only, D′ only, or a different number of times on both."""
    stats: dict[tuple[str, int], dict[str, Any]] = {}
    for a, b in pairs:
        x, y = _lines(a), _lines(b)
        for key in set(x) | set(y):
            if key in noise:
                continue
            c, e = x.get(key, 0), y.get(key, 0)
            if c == e:
                continue
            row = stats.setdefault(key, {"D": 0, "D′": 0, "count": 0, "counts": []})
            if c == 0 or e == 0:
                row["D" if e == 0 else "D′"] += 1
            else:
                row["count"] += 1
                row["counts"].append((c, e))
    return stats


def _line_site(row: dict[str, Any]) -> tuple[str, str, int, str]:
    """(kind, side, streams, what) of one line's statistics."""
    if row["D"] or row["D′"]:
        if row["D"] and row["D′"]:
            return ("one-side", "either", row["D"] + row["D′"],
                    f"run on one dataset only (on D in {row['D']} streams, on D′ in {row['D′']})")
        side = "D" if row["D"] else "D′"
        return "one-side", side, row[side], f"run on {side} only"
    on_d = statistics.median(c for c, _ in row["counts"])
    on_other = statistics.median(e for _, e in row["counts"])
    return ("count", "both", row["count"],
            f"run a different number of times ({on_d:g} on D, {on_other:g} on D′, medians where they differ)")


def _merged_line_sites(stats: dict[tuple[str, int], dict[str, Any]], executed: dict[str, list[int]],
                       compared: int, functions: dict[str, list[tuple[str, int, int]]]) -> list[LeakSite]:
    """One site per run of consecutive executed lines of one file and function with the same kind and side."""
    out: list[LeakSite] = []
    for file, lines in executed.items():
        current: LeakSite | None = None
        for line in lines:
            row = stats.get((file, line))
            if row is None:
                current = None
                continue
            kind, side, streams, what = _line_site(row)
            function = _function_of(functions, file, line)
            if current is not None and (current.kind, current.side, current.function) == (kind, side, function):
                current = LeakSite(kind, file, current.first_line, line, side, max(current.streams, streams),
                                   compared, current.what if current.streams >= streams else what, function)
                out[-1] = current
                continue
            current = LeakSite(kind, file, line, line, side, streams, compared, what, function)
            out.append(current)
    return out


def _error_site(error: str) -> tuple[str, str, int] | None:
    """(type, file, line) of a ``describe_exception`` text, ``Type: message (at file:line)``."""
    match = _AT.match(error.strip())
    return (match.group(1), match.group(2), int(match.group(3))) if match else None


def _raise_sites(calls: Sequence[CoupledCall], files: set[str]) -> list[LeakSite]:
    """Where the code raised on one side of a stream and released on the other."""
    counts: dict[tuple[str, str, int, str], int] = {}
    for call in calls:
        for side, this, other in (("D", call.d, call.d_prime), ("D′", call.d_prime, call.d)):
            if this.error is None or other.error is not None:
                continue
            raised = (this.trace or {}).get("raised") or {}
            if raised.get("site"):
                where: tuple[str, str, int] | None = (str(raised["type"]), str(raised["site"][0]),
                                                      int(raised["site"][1]))
            else:
                where = _error_site(this.error)
                if where is not None:  # describe_exception names a base name: the traced file's full name if one
                    full = sorted(f for f in files if f.rsplit("/", 1)[-1] == where[1])
                    where = (where[0], full[0] if len(full) == 1 else where[1], where[2])
            if where is not None:
                key = (*where, side)
                counts[key] = counts.get(key, 0) + 1
    return [LeakSite("raises", file, line, line, side, n, len(calls), f"raises {kind} on {side} only")
            for (kind, file, line, side), n in counts.items()]


def _rank(site: LeakSite) -> tuple[Any, ...]:
    return (site.kind == "count", site.share < RARE, KINDS.index(site.kind), -site.share, site.file, site.first_line)


def leak_sites(calls: Sequence[CoupledCall], *, control: Sequence[CoupledCall] = (), limit: int = 5
               ) -> list[LeakSite]:
    """The sites where D's and D′'s coupled calls differ, most telling first, at most ``limit`` (see the module)."""
    pairs = [(c.d.trace, c.d_prime.trace) for c in calls
             if c.d.trace is not None and c.d_prime.trace is not None and c.d.error is None and c.d_prime.error is None]
    traces = [t for c in calls for t in (c.d.trace, c.d_prime.trace) if t is not None]
    functions = _functions(traces)
    noisy_lines, noisy_scales = _differing(control)
    sites = _scale_sites(pairs, noisy_scales, functions)
    executed: dict[str, set[int]] = {}
    for trace in traces:
        for file, line in _lines(trace):
            executed.setdefault(file, set()).add(line)
    if pairs:
        stats = _line_stats(pairs, noisy_lines)
        sites += _merged_line_sites(stats, {f: sorted(v) for f, v in sorted(executed.items())}, len(pairs), functions)
    sites += _raise_sites(calls, set(executed))
    return sorted(sites, key=_rank)[:max(0, int(limit))]


def where_it_leaks(sampler: Any, pair: NeighbourPair, streams: int = TRACE_STREAMS) -> list[dict[str, Any]]:
    """The leak sites of one pair (``sampler``: :class:`~dpaudit.attacks.epsilon.sampling.sampling.Sampler`): D, D′ and D
    once more on ``streams`` coupled, traced calls, compared (:func:`leak_sites`), as the results hold them."""
    d, d_prime, again = sampler.traced(pair, (0,), streams)

    def as_draw(drawn: tuple[list[Release], list[Any]]) -> Draw:
        releases, traces = drawn
        return Draw(list(releases), Findings(), len(releases), np.arange(len(releases)), list(traces))

    control = coupled_calls(as_draw(d), as_draw(again))
    return [site.to_dict() for site in leak_sites(coupled_calls(as_draw(d), as_draw(d_prime)), control=control)]
