"""The one verdict vocabulary, and the one rule findings impose on a verdict.

:class:`Verdict` is a ``str`` enum, so a verdict compares equal to its text and is written as it
(``json.dumps(Verdict.VIOLATION) == '"violation"'``); every layer — the ε estimate, the attacks, the
run's conclusion, the reports — uses these members and no string of its own (``tests/test_verdict_words.py``
fails on a comparison with a verdict's bare text anywhere in the package).  :func:`settle_verdict` is the
rule every command applies last: a blocking finding about the audited code keeps a verdict from being clean.

The vocabulary lives here, in the execution layer, because that is the lowest layer that speaks of verdicts
(the findings rule below, then the ε estimator in ``dpaudit.attacks``); the mechanisms under test never do.
Everything else about verdicts — how each command's parts settle into one, the exit status, the sentences
of the ``Conclusion:`` line — is the application's, in :mod:`dpaudit.verdicts`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Iterable, Mapping

from .findings import BLOCKING_KINDS, Finding, Findings

__all__ = ["Verdict", "settle_verdict"]


class Verdict(str, Enum):
    """A run's verdict on a privacy claim."""

    VIOLATION = "violation"                 # a certified lower bound exceeds the claim
    NO_VIOLATION = "no violation found"     # every certified test ran and none exceeded the claim
    INCONCLUSIVE = "inconclusive"           # nothing certified, or a part could not run
    NO_CLAIM = "no claim"                   # ε = ∞: a non-private baseline, nothing to test
    NOT_TESTED = "not tested"               # the run certifies nothing about the claim (a sweep, the estimate off)

    @property
    def word(self) -> str:
        """The verdict as a reader meets it — the first word of the ``Conclusion:`` line, the report's banner, the
        ``verdict`` column of ``results.csv``: VIOLATION, Consistent, INCONCLUSIVE, NOT TESTED, no claim."""
        return _WORDS[self]

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


_WORDS = {Verdict.VIOLATION: "VIOLATION", Verdict.NO_VIOLATION: "Consistent", Verdict.INCONCLUSIVE: "INCONCLUSIVE",
          Verdict.NOT_TESTED: "NOT TESTED", Verdict.NO_CLAIM: "no claim"}


def settle_verdict(verdict: str, findings: Findings | Iterable[Finding | Mapping[str, Any]]) -> Verdict:
    """The verdict once findings are taken into account (one rule for every caller).

    A blocking finding turns "no violation found" into "inconclusive"; a
    certified violation stays a violation (it was certified on the releases the
    code did produce, with failures counted as outcomes), and "inconclusive"
    stays inconclusive.
    """
    kinds = [f.kind if isinstance(f, Finding) else f["kind"] for f in findings]
    if verdict == Verdict.NO_VIOLATION and any(k in BLOCKING_KINDS for k in kinds):
        return Verdict.INCONCLUSIVE
    return Verdict(verdict)
