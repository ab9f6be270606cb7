"""The shapes of a run's results as mypy checks them: one :class:`typing.TypedDict` per part of ``results.json``.

Each class is named after what it holds and carries the keys of the JSON schema's definition of the same part
(``dpaudit/report/schema/results.schema.json``, ``$defs``; :data:`SCHEMA_DEFINITIONS` pairs them, and a test
holds the keys of each class to the schema's properties).  They are all ``total=False``: the report layer reads
results written by older versions and by runs that stopped part-way, so no key may be assumed present there;
the schema says which keys a complete run writes.

Values that are open mappings stay ``dict[str, Any]``: a mechanism's or data set's ``params`` (whatever the
plug-in takes), the execution record, the provenance's machine and package maps, and the parts whose content
belongs to one command's own module (an audit's ``parts``, ``smoke`` and ``utility``, a sweep's ``sweep``, the ε
estimate's ``pair``, ``event``, ``counts``, ``search`` and curves).  A JSON number may be written as ``"inf"`` /
``"-inf"`` (:data:`JsonNumber`); in memory, before writing, it is a float.

This module imports nothing of dpaudit, so every layer of the application can use it.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["AttackSummary", "ClaimRecord", "Conclusion", "DatasetRecord", "EmbeddedEstimate", "EstimateSummary",
           "FindingRecord", "InternalError", "JsonNumber", "MechanismRecord", "ProvenanceRecord",
           "RunResults", "SCHEMA_DEFINITIONS", "VerdictRow", "VerdictTest", "WarningRecord"]

JsonNumber = float | str | None
"""A number as results hold it: a float in memory, ``"inf"``/``"-inf"`` as results.json writes ±∞, None: none."""


class ClaimRecord(TypedDict, total=False):
    """The privacy claim under test: ε (a sweep's list of ε), δ, the neighbour relation, and a notion if any."""

    epsilon: float | list[float] | str | None
    delta: float | list[float]
    neighbours: str
    notion: dict[str, Any]


class Conclusion(TypedDict, total=False):
    """A run's conclusion: the verdict, its word, the sentence, whether the run was incomplete and why, the
    detail printed above the ``Conclusion:`` line, and the bound and its source when a bound decided."""

    verdict: str
    word: str
    text: str
    incomplete: bool
    reasons: list[str]
    detail: str
    epsilon_lower_bound: JsonNumber
    source: str | None


class MechanismRecord(TypedDict, total=False):
    """The audited mechanism: its spec as given, its name, its claim and its parameters (an open mapping)."""

    spec: str
    name: str
    claim: ClaimRecord
    params: dict[str, Any]


class DatasetRecord(TypedDict, total=False):
    """The data set's summary (never its records): name, size, shape, classes, description, parameters."""

    name: str
    n_records: int
    n_features: int
    n_classes: int
    description: str
    params: dict[str, Any]


class FindingRecord(TypedDict, total=False):
    """A finding about the audited code (:mod:`dpaudit.execution.findings`), as results.json holds it."""

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


class WarningRecord(TypedDict, total=False):
    """A privacy-leak warning the audited code raised: its category and message."""

    category: str
    message: str


class InternalError(TypedDict, total=False):
    """One of dpaudit's own failures: where, the error, and its traceback (in the error log, not the report)."""

    where: str
    error: str
    traceback: str


class ProvenanceRecord(TypedDict, total=False):
    """Who ran what, when and where: command, version, seed, times, machine, packages, parameters, durations."""

    command: str
    dpaudit_version: str
    seed: int | None
    started: str
    finished: str
    machine: dict[str, Any]
    packages: dict[str, Any]
    parameters: dict[str, Any]
    durations_seconds: dict[str, float]


class VerdictTest(TypedDict, total=False):
    """One certified statement an attack run's verdict rests on: the attack (or the ε estimate), its bound, the
    confidence it was certified at (α split over the statements), and whether it exceeds the claim."""

    attack: str
    epsilon_lower_bound: float
    confidence: float
    exceeds_claim: bool


class VerdictRow(TypedDict, total=False):
    """A row of an audit's verdict table: the part, the statistic, its value, the claim it meets, the verdict."""

    part: str
    statistic: str
    value: JsonNumber
    claim: str
    verdict: str


class AttackSummary(TypedDict, total=False):
    """One attack's summary over its repeats: status, repeats that ran and failed, the measures, and why not."""

    name: str
    status: str
    repeats_ok: int
    repeats_failed: int
    advantage: JsonNumber
    auc: JsonNumber
    epsilon_lower_bound: JsonNumber
    epsilon_lower_bound_comparable: bool
    confidence: float
    reason: str
    errors: list[str]


class EstimateSummary(TypedDict, total=False):
    """The certified ε estimate (``estimate-eps``, and embedded in attack and audit runs): the bound, the verdict
    and confidence, the claim, the samples, the pair and event that certified it, the search and its evidence."""

    epsilon_lower_bound: JsonNumber
    verdict: str
    confidence: float
    claim: ClaimRecord
    samples: int
    selection_samples: int
    selection_samples_total: int
    ceiling: JsonNumber
    raw_bound: JsonNumber
    point_estimate: JsonNumber
    pair: dict[str, Any]
    event: dict[str, Any]
    counts: dict[str, Any]
    search: dict[str, Any]
    candidates: list[dict[str, Any]]
    elapsed_seconds: float
    seed: int | None
    guarantee: str
    timings: dict[str, float]
    leak_warnings: list[str]
    findings: list[FindingRecord]
    curve: dict[str, Any]
    tradeoff_curve: dict[str, Any]
    claimed_curve: dict[str, Any]
    notes: list[str]


class EmbeddedEstimate(EstimateSummary, total=False):
    """The ε estimate as an attack or audit run embeds it: the estimate's keys, plus whether it ran (``status``),
    on how many records under which rule, and why not."""

    status: str
    records: int
    records_rule: str
    error: str
    internal: bool


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
    execution: dict[str, Any]
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
    package_versions: dict[str, Any]
    timings: dict[str, Any]
    complete: bool
    epsilon_estimate: EmbeddedEstimate
    verdict_basis: str
    verdict_tests: list[VerdictTest]
    measured: bool
    # audit
    confidence: float | dict[str, float]
    verdict_table: list[VerdictRow]
    parts: dict[str, Any]
    smoke: dict[str, Any]
    attack_repeats_failed: dict[str, int]
    attack_repeats_error: str
    utility: dict[str, Any]
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
    pair: dict[str, Any]
    event: dict[str, Any]
    counts: dict[str, Any]
    search: dict[str, Any]
    candidates: list[dict[str, Any]]
    elapsed_seconds: float
    guarantee: str
    leak_warnings: list[str]
    curve: dict[str, Any]
    tradeoff_curve: dict[str, Any]
    claimed_curve: dict[str, Any]
    mechanism_name: str
    access: str
    box: dict[str, Any]
    pair_source: str
    randomness: str
    supervision: dict[str, Any]
    pair_datasets: list[DatasetRecord]
    # sweep
    complete_and_clean: bool
    sweep: dict[str, Any]


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
