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
from dpaudit.result_shapes import (
    AttackSummary,
    AuditConfidence,
    Conclusion,
    DatasetRecord,
    EmbeddedEstimate,
    FindingRecord,
    InternalError,
    MechanismRecord,
    ProvenanceRecord,
    VerdictRow,
    WarningRecord,
)
from dpaudit.run_shapes import RunResults

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
    mechanism: MechanismRecord
    execution: dict[str, object]
    dataset: DatasetRecord
    confidence: AuditConfidence
    provenance: ProvenanceRecord
    status: str = "running"
    verdict: Verdict = Verdict.INCONCLUSIVE
    verdict_table: list[VerdictRow] = field(default_factory=list)
    findings: list[FindingRecord] = field(default_factory=list)
    warnings: list[WarningRecord] = field(default_factory=list)
    parts: dict[str, str] = field(default_factory=dict)
    smoke: dict[str, Any] | None = None
    epsilon_estimate: EmbeddedEstimate | None = None
    attacks: list[AttackSummary] | None = None
    attack_repeats_failed: dict[str, int] | None = None
    attack_repeats_error: str | None = None
    utility: dict[str, Any] | None = None
    release_2d: dict[str, Any] | None = None
    internal_errors: list[InternalError] = field(default_factory=list)
    conclusion: Conclusion = field(default_factory=lambda: Conclusion())

    kind = "audit"

    def to_dict(self) -> RunResults:
        """The results as JSON values; parts that have not run are left out."""
        out: RunResults = {
            "kind": self.kind, "title": self.title, "status": self.status, "mechanism": self.mechanism,
            "execution": self.execution, "dataset": self.dataset, "confidence": self.confidence,
            "verdict": self.verdict, "verdict_table": self.verdict_table, "findings": self.findings,
            "warnings": self.warnings, "parts": self.parts, "provenance": self.provenance,
        }
        if self.smoke is not None:
            out["smoke"] = self.smoke
        if self.epsilon_estimate is not None:
            out["epsilon_estimate"] = self.epsilon_estimate
        if self.attacks is not None:
            out["attacks"] = self.attacks
        if self.attack_repeats_failed is not None:
            out["attack_repeats_failed"] = self.attack_repeats_failed
        if self.attack_repeats_error is not None:
            out["attack_repeats_error"] = self.attack_repeats_error
        if self.utility is not None:
            out["utility"] = self.utility
        if self.release_2d is not None:
            out["release_2d"] = self.release_2d
        if self.internal_errors:
            out["internal_errors"] = self.internal_errors
        if self.conclusion:
            out["conclusion"] = self.conclusion
        return out
