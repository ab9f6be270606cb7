"""The one verdict vocabulary: what every result, conclusion, report and JSON file says of a claim.

:class:`Verdict` is a ``str`` enum, so a verdict compares equal to its text and is written as it
(``json.dumps(Verdict.VIOLATION) == '"violation"'``); every layer — the ε estimate, the attacks, the
run's conclusion, the reports — uses these members and no string of its own.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Verdict"]


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
