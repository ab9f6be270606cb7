"""How every run ends: one ``conclusion`` in its results and one ``Conclusion:`` line, for every command.

``attack``, ``audit``, ``estimate-eps`` and ``sweep`` each put a ``conclusion`` into their
results dict — ``{"verdict", "word", "text", "incomplete", "reasons"}``, ``word`` the verdict as the
reader meets it (``Verdict.word``) — and print ``Conclusion: <text>`` as the last line of stdout.  The text starts with the verdict in words:

* ``VIOLATION: …`` — a certified lower bound exceeds the claim (a claim in a notion — ρ-zCDP, μ-GDP, Rényi DP,
  a privacy profile — says ``VIOLATION of ρ = 0.5 (zCDP): …``, the curve verdict's sentence where the curve
  decided it: :func:`~dpaudit.verdicts.sentences.curve_sentence`);
* ``Consistent with …`` — every certified test ran and none exceeded the claim;
* ``INCONCLUSIVE: …`` — nothing certified, or a part could not run (the text says which);
* ``NOT TESTED: …`` — the run certifies no verdict on the claim (a sweep; ``--epsilon-estimate off``);
* ``No privacy claim …`` — ε = ∞, a non-private baseline.

The text is one line without control characters (:func:`dpaudit.execution.untrusted.printable`): an error
message of the audited code quoted in it cannot start a line of its own.  The sentences are
:mod:`dpaudit.verdicts.sentences`'; whether ``incomplete`` makes the exit status 3 is
:mod:`dpaudit.verdicts.exit_status`'.
"""

from __future__ import annotations

from typing import Iterable

from dpaudit.execution.untrusted import printable
from dpaudit.execution.verdict import Verdict
from dpaudit.result_shapes import Conclusion

__all__ = ["ending", "line"]


def ending(verdict: str, text: str, *, incomplete: bool, reasons: Iterable[str] = (), detail: str = ""
           ) -> Conclusion:
    """A results dict's ``conclusion``: the verdict, the sentence (one printable line), whether the
    run was incomplete (exit status 3), the reasons it was, and ``detail``: what the reader should know of the
    verdict's basis, printed above the ``Conclusion:`` line so that the line itself stays short."""
    word = Verdict(verdict).word if verdict in {v.value for v in Verdict} else str(verdict)
    out: Conclusion = {"verdict": verdict, "word": word, "text": printable(" ".join(text.split(" "))),
           "incomplete": bool(incomplete), "reasons": [printable(r) for r in reasons]}
    if detail:
        out["detail"] = printable(detail)
    return out


def line(conclusion: Conclusion) -> str:
    """The last line of stdout: ``Conclusion: <text>``."""
    return f"Conclusion: {printable(conclusion.get('text', ''))}"
