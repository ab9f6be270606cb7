
"""Findings: what the audited code did wrong, counted, and what that does to a verdict.

A *finding* is a note on the audited code, never a crash of the auditor.
Kinds and what the execution layer does about each:

=====================  ==============================================================
``raises``             an exception — deterministic given (input, seed), so the release
``nan``                is replaced by :class:`~dpaudit.mechanisms.base.Failed`: an *outcome* the
``wrong-shape``        estimator counts like any other (sound: a failure rate that
                       depends on the data is itself a leak).
``timeout``            no answer in time / the process died (exit, ``sys.exit``,
``crash``              ``os._exit``, segfault, out of memory) — the environment, not
                       the input: never an outcome.  Retried once in a fresh worker,
                       then *dropped*; the estimator certifies on the releases it has.
``mutates-input``      wrote into the array it was given.  Every call gets a private
                       copy, so this only *notes* a bug; it never blocks a verdict.
``refuses-input``      raised on *every* call on one dataset: a refusal of that input, not a
                       fault.  When both datasets of a pair are refused for the same reason
                       the pair is outside the code's domain and is not used; when only one
                       is, the refusal is observable output (the estimator counts it like
                       any other).  A note: it never blocks a verdict.
``nondeterministic``   the same (X, seed) gave a different release on replay: state
                       kept between calls, or randomness not drawn from the generator.
``non-finite``         a points or centroids release held NaN or infinite values (a division by a
                       noisy count that reached 0, say): they are part of the release — its
                       features read them as "no answer" — so this is a note, never a verdict's block.
``own-randomness``     the code draws its own randomness (stated: a function without a
                       generator parameter, ``own_randomness = True`` on a class, or
                       ``--own-randomness``), so the replay is not run: state kept between
                       calls is not looked for beyond the lanes, and the releases do not
                       reproduce from the seed.  A note: it never blocks a verdict.
``incomplete``         a unit of a run — an attack repeat, a sweep cell, an audit part —
                       could not finish (counted in units, not calls; the error says why).
=====================  ==============================================================

Every kind except the notes ``mutates-input``, ``refuses-input``, ``non-finite`` and ``own-randomness`` is *blocking*: :func:`~dpaudit.execution.verdict.settle_verdict` turns
"no violation found" into "inconclusive" when one is present (a part that
could not run as specified proves nothing), while a certified violation stays
a violation.

:class:`Findings` is a plain, picklable counter: chunk functions return theirs
with their results and the caller merges them in chunk order, so the numbers
do not depend on which process ran which chunk.  :class:`RunFindings` keeps
one :class:`Findings` per *part* of a run (a workflow's phases, or its units
of work) and lists them as the results dict shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, TypedDict

from dpaudit.mechanisms.base import InvalidInputError

from .untrusted import printable

__all__ = [
    "BLOCKING_KINDS", "ENVIRONMENT_KINDS", "FINDING_KINDS", "NOTE_KINDS",
    "OUTCOME_KINDS", "Finding", "Findings", "MechanismBroken", "MechanismFailure", "NoUsableRelease",
    "RunFindings",
]


FINDING_KINDS: dict[str, str] = {
    "raises": "raised an exception",
    "nan": "returned NaN or infinite values",
    "wrong-shape": "returned a malformed release",
    "timeout": "did not answer within the time limit",
    "crash": "the process died or ran out of memory",
    "mutates-input": "wrote into the array it was given (it got a private copy)",
    "refuses-input": "raised on every call on a dataset: a refusal of that input (a note, see the pair)",
    "non-finite": "released NaN or infinite values (read as part of the release: a note)",
    "nondeterministic": "the same data and seed gave a different release",
    "own-randomness": "draws its own randomness (stated): not replayed, releases do not reproduce from the seed",
    "incomplete": "a repeat, cell or part of the run could not finish",
}
OUTCOME_KINDS: tuple[str, ...] = ("raises", "nan", "wrong-shape")
ENVIRONMENT_KINDS: tuple[str, ...] = ("timeout", "crash")
NOTE_KINDS: tuple[str, ...] = ("mutates-input", "refuses-input", "non-finite", "own-randomness")
BLOCKING_KINDS: tuple[str, ...] = tuple(k for k in FINDING_KINDS if k not in NOTE_KINDS)

_MAX_ERROR = 500  # characters of an error message kept (a finding names the fault; it is not a log)


def _short(text: str) -> str:
    """The error on one line, its control characters escaped (it comes from audited code), cut to a length."""
    text = printable(" ".join(str(text).split(" ")).strip())
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 1] + "…"


@dataclass(frozen=True)
class Finding:
    """One kind of misbehaviour over a run: ``count`` of ``calls`` calls showed it."""

    kind: str
    count: int
    calls: int
    error: str
    dropped: int = 0  # releases given up after the retry (timeouts and crashes only)
    unit: str = "calls"  # what ``calls`` counts: calls into the code, or repeats / cells / parts

    @property
    def share(self) -> float:
        return self.count / self.calls if self.calls else 1.0

    @property
    def blocking(self) -> bool:
        return self.kind in BLOCKING_KINDS

    @property
    def tally(self) -> str:
        """``3 of 200 calls (1.5 %), 1 dropped`` — how often, in words."""
        text = f"{self.count} of {self.calls} {self.unit} ({100 * self.share:.3g} %)"
        return text + (f", {self.dropped} dropped" if self.dropped else "")

    def to_dict(self) -> FindingRecord:
        return {"kind": self.kind, "count": self.count, "calls": self.calls, "share": self.share,
                "dropped": self.dropped, "blocking": self.blocking, "error": self.error,
                "meaning": FINDING_KINDS.get(self.kind, ""), "unit": self.unit, "call": self.tally}


class FindingRecord(TypedDict, total=False):
    """A finding as results hold it (:meth:`Finding.to_dict`, and ``part`` in :meth:`RunFindings.to_list`): the
    schema's ``finding`` (:mod:`dpaudit.result_shapes` names it with the other shapes of results)."""

    kind: str
    count: int
    calls: int
    share: float
    dropped: int
    blocking: bool
    error: str
    meaning: str
    unit: str
    call: str
    part: str


class Findings:
    """A mergeable count of findings over the calls of a run (picklable, no shared state)."""

    def __init__(self, unit: str = "calls") -> None:
        self.calls = 0
        self.unit = unit
        self._kinds: dict[str, list[Any]] = {}  # kind -> [count, dropped, first error]; first-seen order

    def record(self, kind: str, error: str, count: int = 1, dropped: int = 0) -> None:
        if kind not in FINDING_KINDS:
            raise ValueError(f"unknown finding kind {kind!r}")
        entry = self._kinds.setdefault(kind, [0, 0, _short(error)])
        entry[0] += int(count)
        entry[1] += int(dropped)

    def add_calls(self, n: int) -> None:
        self.calls += int(n)

    def merge(self, other: "Findings | None") -> "Findings":
        if other is None:
            return self
        self.calls += other.calls
        for kind, (count, dropped, error) in other._kinds.items():
            entry = self._kinds.setdefault(kind, [0, 0, error])
            entry[0] += count
            entry[1] += dropped
        return self

    def as_refusals(self) -> "Findings":
        """A copy with the outcome kinds (raises, NaN, wrong shape) counted as ``refuses-input``: the findings
        of draws on a dataset the code refuses as a whole (see the module doc)."""
        out = Findings(self.unit)
        out.calls = self.calls
        for kind, (count, dropped, error) in self._kinds.items():
            out.record("refuses-input" if kind in OUTCOME_KINDS else kind, error, count=count, dropped=dropped)
        return out

    @classmethod
    def merged(cls, parts: Iterable["Findings | None"]) -> "Findings":
        out = cls()
        for part in parts:
            out.merge(part)
        return out

    @classmethod
    def from_list(cls, entries: Iterable[Mapping[str, Any]], calls: int | None = None) -> "Findings":
        """The counts a :meth:`to_list` wrote (e.g. read back from a results file)."""
        out = cls()
        entries = list(entries)
        for e in entries:
            if e["kind"] in FINDING_KINDS:
                out.record(e["kind"], str(e.get("error", "")), count=int(e.get("count", 1)),
                           dropped=int(e.get("dropped", 0)))
        out.calls = int(calls if calls is not None else max((int(e.get("calls", 0)) for e in entries), default=0))
        return out

    def __iter__(self) -> Iterator[Finding]:
        for kind, (count, dropped, error) in self._kinds.items():
            yield Finding(kind, count, self.calls, error, dropped, self.unit)

    def __len__(self) -> int:
        return len(self._kinds)

    def __contains__(self, kind: object) -> bool:
        return kind in self._kinds

    def __getitem__(self, kind: str) -> Finding:
        count, dropped, error = self._kinds[kind]
        return Finding(kind, count, self.calls, error, dropped, self.unit)

    @property
    def kinds(self) -> list[str]:
        return list(self._kinds)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self if f.blocking]

    def to_list(self) -> list[FindingRecord]:
        return [f.to_dict() for f in self]

    def __repr__(self) -> str:
        body = ", ".join(f"{f.kind}={f.count}" for f in self)
        return f"Findings(calls={self.calls}{', ' + body if body else ''})"


class RunFindings:
    """The findings of a whole run, one :class:`Findings` per part, in first-seen order.

    A *part* is a phase of a workflow ("release calls", "ε estimation") or a
    kind of unit ("shokri repeats", "cells"); :meth:`incomplete` counts units
    that could not finish.  :meth:`to_list` is what results dicts store under
    ``findings``: one entry per (part, kind) with ``kind``, ``part``, ``count``,
    ``calls``, ``unit``, ``share``, ``dropped``, ``blocking``, ``error``,
    ``meaning`` and ``call`` (the tally in words).
    """

    def __init__(self) -> None:
        self.parts: dict[str, Findings] = {}

    def add(self, part: str, findings: "Findings | None") -> "RunFindings":
        if findings is not None:
            self.parts.setdefault(part, Findings(findings.unit)).merge(findings)
        return self

    def incomplete(self, part: str, failed: int, total: int, unit: str, error: str) -> None:
        """``failed`` of ``total`` units of ``part`` could not finish (first reason ``error``)."""
        findings = Findings(unit)
        findings.add_calls(total)
        if failed:
            findings.record("incomplete", error, count=failed)
        self.parts[part] = findings

    def __iter__(self) -> Iterator[tuple[str, Finding]]:
        for part, findings in self.parts.items():
            for f in findings:
                yield part, f

    @property
    def blocking(self) -> list[tuple[str, Finding]]:
        return [(part, f) for part, f in self if f.blocking]

    def to_list(self) -> list[FindingRecord]:
        return [{**f.to_dict(), "part": part} for part, f in self]


class MechanismFailure(RuntimeError):
    """One call into the audited code produced no usable release; :attr:`finding` says how.

    Raised where a single release is needed (an attack's target, a smoke
    test); chunked draws put :class:`~dpaudit.mechanisms.base.Failed` in the release's
    place or drop it instead.
    """

    def __init__(self, finding: dict[str, str]) -> None:
        super().__init__(f"{finding['kind']} in {finding.get('call', 'release')}: {finding['error']}")
        self.finding = finding

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.finding,))


class MechanismBroken(Exception):
    """The audited code timed out or crashed on several releases in a row, retries included.

    Drawing more would only repeat the failure.  ``scope`` says how far: ``"part"`` — the code is broken for
    the whole part of the run (it never answered in time), which stops; ``"dataset"`` — it failed on this one
    dataset several times in a row (it runs out of memory on a far outlier, say): the caller sets that
    dataset aside and goes on with the others.  The findings so far travel with the exception (it pickles
    across joblib and Dask); whatever could not run makes its verdict inconclusive, never clean.
    """

    def __init__(self, message: str, findings: Findings | None = None, scope: str = "part") -> None:
        super().__init__(message)
        self.findings = findings if findings is not None else Findings()
        self.scope = scope

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.args[0], self.findings, self.scope))


class NoUsableRelease(InvalidInputError):
    """The audited code produced no usable release at all on the data it was given (every call failed).

    Nothing can be audited, so this is reported like a bad input (one line,
    exit code 2) rather than as a verdict; :attr:`findings` says what failed.
    """

    def __init__(self, message: str, findings: Findings | None = None) -> None:
        super().__init__(message)
        self.findings = findings if findings is not None else Findings()

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.args[0], self.findings))
