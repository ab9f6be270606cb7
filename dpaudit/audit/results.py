"""What ``dpaudit audit`` found, as it stands: :class:`AuditResults`, serialised once, at the edge.

Each part (:mod:`dpaudit.audit.parts`) sets its own field — ``smoke``, ``epsilon_estimate``,
``attacks``, ``utility`` — and adds its rows to ``verdict_table``; :mod:`dpaudit.audit.run` keeps
each part's status, the findings, and the verdict and conclusion recomputed from them, and writes
:meth:`AuditResults.to_dict` (``results.json``, the reports) after every part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpaudit.execution.verdict import Verdict

__all__ = ["AuditResults"]


@dataclass
class AuditResults:
    """One audit's results (``results.json`` is :meth:`to_dict`).

    Set before the first part: ``title``, ``mechanism`` (spec, name, claim, how it runs),
    ``execution``, ``dataset`` (its summary, never records), ``confidence`` (overall, per test, the
    rule), ``provenance`` (shared with the command, which stamps it).  Each part's outcome:
    ``parts[part]`` is ``ok``, ``skipped: …``, ``failed: …`` or ``not run: …``.  ``status``:
    ``running``, ``complete`` or ``interrupted``.
    """

    title: str
    mechanism: dict[str, Any]
    execution: dict[str, Any]
    dataset: dict[str, Any]
    confidence: dict[str, Any]
    provenance: dict[str, Any]
    status: str = "running"
    verdict: Verdict = Verdict.INCONCLUSIVE
    verdict_table: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    parts: dict[str, str] = field(default_factory=dict)
    smoke: dict[str, Any] | None = None
    epsilon_estimate: dict[str, Any] | None = None
    attacks: list[dict[str, Any]] | None = None
    attack_repeats_failed: dict[str, int] | None = None
    attack_repeats_error: str | None = None
    utility: dict[str, Any] | None = None
    release_2d: dict[str, Any] | None = None
    internal_errors: list[dict[str, Any]] = field(default_factory=list)
    conclusion: dict[str, Any] = field(default_factory=dict)

    kind = "audit"

    def to_dict(self) -> dict[str, Any]:
        """The results as JSON values; parts that have not run are left out."""
        out: dict[str, Any] = {
            "kind": self.kind, "title": self.title, "status": self.status, "mechanism": self.mechanism,
            "execution": self.execution, "dataset": self.dataset, "confidence": self.confidence,
            "verdict": self.verdict, "verdict_table": self.verdict_table, "findings": self.findings,
            "warnings": self.warnings, "parts": self.parts, "provenance": self.provenance,
        }
        optional = {"smoke": self.smoke, "epsilon_estimate": self.epsilon_estimate, "attacks": self.attacks,
                    "attack_repeats_failed": self.attack_repeats_failed,
                    "attack_repeats_error": self.attack_repeats_error, "utility": self.utility,
                    "release_2d": self.release_2d, "internal_errors": self.internal_errors or None}
        out.update({key: value for key, value in optional.items() if value is not None})
        if self.conclusion:
            out["conclusion"] = self.conclusion
        return out
