"""What ``dpaudit attack`` found, as it stands: :class:`AttackResults`, serialised once, at the edge.

The run (:mod:`dpaudit.attack.run`) fills one :class:`AttackResults` as its parts finish — the
repeats' summaries, the certified ε estimate, the findings, then the verdict and the conclusion
that rest on them — and hands :meth:`AttackResults.to_dict` to whatever writes it
(``results.json``, the reports, the console).  Sections of their own shape (a mechanism's
parameters, an attack's summary, the ε estimate's evidence) stay plain JSON values: they are
produced whole by the module that owns them and only read after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpaudit.execution.verdict import Verdict
from dpaudit.result_shapes import (
    AttackSummary,
    Conclusion,
    DatasetRecord,
    EmbeddedEstimate,
    FindingRecord,
    InternalError,
    MechanismRecord,
    ProvenanceRecord,
    VerdictTest,
    WarningRecord,
)
from dpaudit.run_shapes import AttackTimings, RunResults

__all__ = ["AttackResults", "Timings"]


@dataclass
class Timings:
    """Where the run's time went: in all, per attack (summed over repeats) and in the ε estimate."""

    total_seconds: float = 0.0
    repeats_done: int = 0
    attack_seconds: dict[str, float] = field(default_factory=dict)
    estimate_seconds: float | None = None

    def durations(self) -> dict[str, float]:
        """Each part's seconds, by its name in the provenance block."""
        return {**self.attack_seconds, **({"ε estimate": self.estimate_seconds}
                                          if self.estimate_seconds is not None else {})}

    def to_dict(self) -> AttackTimings:
        out: AttackTimings = {"total_seconds": self.total_seconds, "repeats_done": self.repeats_done,
                               "attack_seconds": dict(self.attack_seconds)}
        if self.estimate_seconds is not None:
            out["estimate_seconds"] = self.estimate_seconds
        return out


@dataclass
class AttackResults:
    """One attack run's results (``results.json`` is :meth:`to_dict`).

    What was run — ``title``, ``command``, ``seed``, ``parameters`` (the config as given),
    ``mechanism`` (spec, name, claim, parameters), ``dataset`` (its summary, never records),
    ``setup``, ``notes``, ``execution`` (where the code ran) — is set before the first repeat.
    What was measured — ``attacks`` (one summary per attack), ``warnings`` (privacy leaks the code
    raised), ``timings``, ``epsilon_estimate`` (:func:`dpaudit.attack.certify.estimate_for_attack`) —
    grows as the parts finish; ``findings``, ``internal_errors`` (dpaudit's own failures), the
    ``verdict`` with its ``verdict_basis`` and ``verdict_tests``, ``measured`` and the ``conclusion``
    are recomputed from them at every publication.  ``status`` is ``partial``, ``complete`` or
    ``interrupted``; ``complete`` says every part ran.
    """

    title: str
    command: str
    seed: int
    dpaudit_version: str
    parameters: dict[str, Any]
    mechanism: MechanismRecord
    dataset: DatasetRecord
    setup: dict[str, Any]
    notes: list[Any]
    execution: dict[str, object]
    package_versions: dict[str, str]
    status: str = "partial"
    attacks: list[AttackSummary] = field(default_factory=list)
    warnings: list[WarningRecord] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    epsilon_estimate: EmbeddedEstimate | None = None
    findings: list[FindingRecord] = field(default_factory=list)
    internal_errors: list[InternalError] = field(default_factory=list)
    verdict: Verdict = Verdict.INCONCLUSIVE
    verdict_basis: str = ""
    verdict_tests: list[VerdictTest] = field(default_factory=list)
    measured: bool = False
    conclusion: Conclusion = field(default_factory=lambda: Conclusion())
    provenance: ProvenanceRecord = field(default_factory=lambda: ProvenanceRecord())
    complete: bool = False

    kind = "attack"

    def add_warnings(self, messages: list[str]) -> None:
        """PrivacyLeakWarnings the code raised, each once."""
        seen = {w["message"] for w in self.warnings}
        for message in messages:
            if message not in seen:
                self.warnings.append({"category": "PrivacyLeakWarning", "message": message})
                seen.add(message)

    def to_dict(self) -> RunResults:
        """The results as JSON values, in the order a reader meets them; empty optional parts left out."""
        out: RunResults = {
            "kind": self.kind, "title": self.title, "status": self.status, "dpaudit_version": self.dpaudit_version,
            "command": self.command, "seed": self.seed, "parameters": self.parameters, "mechanism": self.mechanism,
            "dataset": self.dataset, "setup": self.setup, "notes": self.notes, "attacks": self.attacks,
            "warnings": self.warnings, "package_versions": self.package_versions, "timings": self.timings.to_dict(),
            "complete": self.complete, "execution": self.execution,
        }
        if self.epsilon_estimate is not None:
            out["epsilon_estimate"] = self.epsilon_estimate
        out["findings"] = self.findings
        if self.internal_errors:  # written to the report folder's dpaudit-errors.log by render_report
            out["internal_errors"] = self.internal_errors
        out["verdict"], out["verdict_basis"] = self.verdict, self.verdict_basis
        out["verdict_tests"], out["measured"], out["conclusion"] = self.verdict_tests, self.measured, self.conclusion
        if self.provenance:
            out["provenance"] = self.provenance
        return out
