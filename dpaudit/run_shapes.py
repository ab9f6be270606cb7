"""The shapes of whole runs as mypy checks them: a sweep's cells and summary, an attack run's timings, and
:class:`RunResults` — every command's results.json at its top level — with :data:`SCHEMA_DEFINITIONS`, which
pairs each definition of the JSON schema with the class that holds its keys (a test holds them together).

The parts they are made of are :mod:`dpaudit.result_shapes`'.
"""

from __future__ import annotations

from typing import Any, TypedDict

from dpaudit.execution.findings import FindingRecord
from dpaudit.result_shapes import (
    AttackSummary,
    AuditConfidence,
    ClaimedCurve,
    ClaimRecord,
    Conclusion,
    CurveVerdict,
    DatasetRecord,
    EmbeddedEstimate,
    EstimateCounts,
    EstimateEvent,
    EstimatePair,
    EstimateSearch,
    EstimateSummary,
    InternalError,
    JsonNumber,
    MechanismRecord,
    ProvenanceRecord,
    TradeoffCurve,
    VerdictRow,
    VerdictTest,
    WarningRecord,
)

__all__ = ["AttackTimings", "MetricSummary", "REPORT_ONLY_KEYS", "RunResults", "SCHEMA_DEFINITIONS", "SweepCell", "SweepRecord",
           "SweepSummaryRow"]


class SweepCell(TypedDict, total=False):
    """One (ε, repeat) cell of a sweep: its metrics (by metric name: the clusterers' utility, the attacks' and the
    ε bound's privacy figures), the calls into the code and what they did, and why a cell or a measurement failed."""

    eps_index: int
    epsilon: float
    repeat: int
    metrics: dict[str, Any]
    partial_errors: dict[str, str]
    error: str
    calls: int
    findings: list[FindingRecord]
    warnings: list[str]


class MetricSummary(TypedDict):
    """A metric over a sweep's repeats at one ε: mean, sample standard deviation, how many repeats measured it."""

    mean: float
    std: float
    n: int


class SweepSummaryRow(TypedDict):
    """A sweep's summary at one ε: repeats measured, failed and missing, and each metric's mean ± std."""

    epsilon: float
    n: int
    failed: int
    missing: int
    metrics: dict[str, MetricSummary]


class SweepRecord(TypedDict, total=False):
    """A sweep's ``sweep`` block: the grid (ε, repeats, clusterers, attacks), the cell counts, the cells (without
    their warnings and findings, which the run's own carry), the summary per ε and the non-private baseline."""

    epsilons: list[float]
    repeats: int
    clusterers: list[str]
    attacks: list[str]
    cells_done: int
    cells_total: int
    cells_failed: int
    cells_partial: int
    cells_missing: int
    cells: list[SweepCell]
    summary: list[SweepSummaryRow]
    baseline: dict[str, float]


class AttackTimings(TypedDict, total=False):
    """Where an attack run's time went: in all, repeats done, per attack (summed over repeats), the ε estimate."""

    total_seconds: float
    repeats_done: int
    attack_seconds: dict[str, float]
    estimate_seconds: float


class RunResults(TypedDict, total=False):
    """A run's results (any command: ``kind`` says which), as the report layer and the verdicts read them.

    The keys every kind shares come first; then each kind's own (the schema's ``attack_results``,
    ``audit_results``, ``estimate_results``, ``sweep_results``).  ``confidence`` is an audit's confidence map or
    an estimate's number; ``attacks`` the attack summaries of an attack or audit run.
    """

    schema_version: int
    kind: str
    title: str
    conclusion: Conclusion
    mechanism: MechanismRecord
    dataset: DatasetRecord
    findings: list[FindingRecord]
    warnings: list[WarningRecord]
    internal_errors: list[InternalError]
    provenance: ProvenanceRecord
    execution: dict[str, object]
    status: str
    verdict: str
    # attack
    command: str
    seed: int | None
    dpaudit_version: str
    parameters: dict[str, Any]
    setup: dict[str, Any]
    notes: list[Any]
    attacks: list[AttackSummary]
    package_versions: dict[str, str]
    timings: AttackTimings | dict[str, float]  # an attack run's, or estimate-eps's seconds per stage
    complete: bool
    epsilon_estimate: EmbeddedEstimate
    verdict_basis: str
    verdict_tests: list[VerdictTest]
    measured: bool
    # audit
    confidence: float | AuditConfidence
    verdict_table: list[VerdictRow]
    parts: dict[str, str]
    smoke: dict[str, object]
    attack_repeats_failed: dict[str, int]
    attack_repeats_error: str
    utility: dict[str, object]
    release_2d: dict[str, Any]
    # estimate-eps: the estimate's keys at the top level, and what was estimated
    epsilon_lower_bound: JsonNumber
    claim: ClaimRecord
    samples: int
    selection_samples: int
    selection_samples_total: int
    ceiling: JsonNumber
    raw_bound: JsonNumber
    point_estimate: JsonNumber
    pair: EstimatePair
    event: EstimateEvent
    counts: EstimateCounts
    search: EstimateSearch
    candidates: list[dict[str, Any]]
    elapsed_seconds: float
    guarantee: str
    leak_warnings: list[str]
    curve: CurveVerdict
    tradeoff_curve: TradeoffCurve
    claimed_curve: ClaimedCurve
    mechanism_name: str
    access: str
    box: dict[str, object]
    pair_source: str
    randomness: str
    supervision: dict[str, object]
    pair_datasets: list[DatasetRecord]
    # sweep
    complete_and_clean: bool
    sweep: SweepRecord
    # the report layer's own input, never in a results.json: further ROC curves ``{label, fpr, tpr}`` to draw
    roc_curves: list[dict[str, Any]]


REPORT_ONLY_KEYS = ("roc_curves",)
"""Keys of :class:`RunResults` that no results.json holds (the schema allows none): inputs of the report layer."""

SCHEMA_DEFINITIONS: dict[str, tuple[type, ...]] = {
    "claim": (ClaimRecord,), "conclusion": (Conclusion,), "mechanism": (MechanismRecord,),
    "dataset": (DatasetRecord,), "finding": (FindingRecord,), "provenance": (ProvenanceRecord,),
    "verdict_test": (VerdictTest,), "verdict_row": (VerdictRow,), "attack": (AttackSummary,),
    "estimate": (EstimateSummary,), "embedded_estimate": (EmbeddedEstimate,),
    "attack_results": (RunResults,), "audit_results": (RunResults,), "estimate_results": (RunResults,),
    "sweep_results": (RunResults,),
}
"""Each schema definition (``$defs``) and the class that holds its keys: the classes carry every key of the
definition's ``properties`` (the four results kinds all in :class:`RunResults`)."""
