"""The shapes of a run's results as mypy checks them: one :class:`typing.TypedDict` per part of ``results.json``.

Each class is named after what it holds and carries the keys of the JSON schema's definition of the same part
(``dpaudit/report/schema/results.schema.json``, ``$defs``; :data:`dpaudit.run_shapes.SCHEMA_DEFINITIONS` pairs them, and a test
holds the keys of each class to the schema's properties).  They are all ``total=False``: the report layer reads
results written by older versions and by runs that stopped part-way, so no key may be assumed present there;
the schema says which keys a complete run writes.

Values that are open mappings stay ``dict[str, Any]``: a mechanism's or data set's ``params`` (whatever the
plug-in takes), the execution record, the provenance's machine and package maps, and the parts whose content
belongs to one command's own module (an audit's ``parts``, ``smoke`` and ``utility``, a sweep's ``sweep``, the ε
estimate's ``pair``, ``event``, ``counts``, ``search`` and curves).  A JSON number may be written as ``"inf"`` /
``"-inf"`` (:data:`JsonNumber`); in memory, before writing, it is a float.

It imports only :class:`~dpaudit.execution.findings.FindingRecord` (a finding's record lives beside the finding,
in the layer that makes it), so every module of the application can use it.
"""

from __future__ import annotations

from typing import Any, TypedDict

from dpaudit.execution.findings import FindingRecord
from dpaudit.mechanisms.base import PrivacyClaim

__all__ = ["as_number", "AttackSummary", "AuditConfidence", "claim_record", "ClaimedCurve", "ClaimRecord", "Conclusion", "CurveVerdict", "DatasetRecord", "EmbeddedEstimate", "EstimateCounts", "EstimateEvent", "EstimatePair", "EstimateSearch", "EstimateSummary", "FindingRecord", "InternalError", "JsonNumber", "MechanismRecord", "ProvenanceRecord", "TradeoffCurve", "VerdictRow", "VerdictTest", "WarningRecord"]

JsonNumber = float | str | None
"""A number as results hold it: a float in memory, ``"inf"``/``"-inf"`` as results.json writes ±∞, None: none."""


def as_number(value: object) -> float:
    """``float(value)`` for a value read from results (a number, or ``"inf"`` text), typed for any value: what
    ``float`` refuses (None, a list, a mapping) raises :class:`TypeError` as ``float`` would."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"float() argument must be a string or a real number, not '{type(value).__name__}'")


class ClaimRecord(TypedDict, total=False):
    """The privacy claim under test: ε (a sweep's list of ε), δ, the neighbour relation, and a notion if any."""

    epsilon: float | list[float] | str | None
    delta: float | list[float]
    neighbours: str
    notion: dict[str, Any]


def claim_record(claim: PrivacyClaim) -> ClaimRecord:
    """``claim`` as results hold it: :meth:`~dpaudit.mechanisms.base.PrivacyClaim.to_dict`'s keys, typed."""
    out: ClaimRecord = {"epsilon": claim.epsilon, "delta": claim.delta, "neighbours": claim.neighbours}
    if claim.notion is not None:
        out["notion"] = claim.notion.to_dict()
    return out


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
    params: dict[str, object]
    # beyond the schema's keys: what the run knows of the code (its repr, a plug-in's kind, randomness,
    # interpreter and time limit)
    repr: str
    plugin_kind: str
    randomness: str
    interpreter: str
    timeout_seconds: float | None
    supervision: dict[str, object]


class DatasetRecord(TypedDict, total=False):
    """The data set's summary (never its records): name, size, shape, classes, description, parameters."""

    name: str
    n_records: int
    n_features: int
    n_classes: int | None
    description: str
    params: dict[str, object]
    # beyond the schema's keys: the public box (lows, highs) and how the records were chosen
    bounds: list[list[float]] | None
    selection: dict[str, object]


class WarningRecord(TypedDict, total=False):
    """A privacy-leak warning the audited code raised: its category and message."""

    category: str
    message: str


class InternalError(TypedDict, total=False):
    """One of dpaudit's own failures: where, the error, and its traceback (in the error log, not the report)."""

    where: str
    error: str
    traceback: str
    # beyond the schema's keys: where in the run (the attack, the repeat, the cell)
    step: str
    attack: str
    repeat: int


class ProvenanceRecord(TypedDict, total=False):
    """Who ran what, when and where: command, version, seed, times, machine, packages, parameters, durations."""

    command: str
    dpaudit_version: str
    seed: int | None
    started: str
    finished: str
    machine: dict[str, object]
    packages: dict[str, str | None]
    parameters: dict[str, object]
    durations_seconds: dict[str, float]


class VerdictTest(TypedDict, total=False):
    """One certified statement an attack run's verdict rests on: the attack (or the ε estimate), its bound, the
    confidence it was certified at (α split over the statements), and whether it exceeds the claim."""

    attack: str
    epsilon_lower_bound: float
    confidence: float
    exceeds_claim: bool


class AuditConfidence(TypedDict, total=False):
    """An audit's confidence: the whole audit's, each test's (α split by Bonferroni), the rule, how many tests
    share α and which, and why each other test cannot decide."""

    overall: float
    per_test: float
    rule: str
    certified_tests: int
    tests: list[str]
    not_deciding: dict[str, str]


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
    # beyond the schema's keys: what each family adds (membership: the one-run bound's method and scope, the
    # ROC, the score histograms, the most exposed records; reconstruction: its success rates), and dpaudit's
    # own failures among the failed repeats
    # (the TPRs at low FPR, ``tpr_at_1pct_fpr`` and its ``_std``, ``_reason`` and ``_band``, are read by a name
    # built from the FPR: :func:`dpaudit.report.attack_sections` reads them as a mapping)
    internal_errors: int
    variant: str
    repeats: int
    mechanism_calls_per_repeat: list[int]
    advantage_std: JsonNumber
    advantage_same_data: JsonNumber
    advantage_same_data_std: JsonNumber
    advantage_ceiling: JsonNumber
    auc_std: JsonNumber
    tpr: JsonNumber
    fpr: JsonNumber
    counts: dict[str, int]
    epsilon_lower_bound_method: str
    epsilon_lower_bound_per_repeat: list[JsonNumber]
    epsilon_lower_bound_scope: str
    epsilon_lower_bound_exceeds_claim: bool
    epsilon_lower_bound_abstaining: JsonNumber
    abstaining: dict[str, object]
    tpr_at_1pct_fpr: JsonNumber
    tpr_at_1pct_fpr_reason: str | None
    repeats_not_applicable: int
    chance: bool
    chance_rule: str
    score: str
    score_unit: str
    roc: dict[str, Any]
    score_histogram: dict[str, Any]
    score_histogram_per_repeat: list[dict[str, Any]]
    most_exposed: list[dict[str, Any]]
    most_exposed_rule: str
    per_repeat: list[dict[str, Any]]
    method: str
    radius: JsonNumber
    success_rate: JsonNumber
    success_rate_std: JsonNumber
    median_error: JsonNumber
    median_error_std: JsonNumber
    baseline_success_rate: JsonNumber
    baseline_success_rate_std: JsonNumber
    baseline_median_error: JsonNumber
    baseline_median_error_std: JsonNumber
    linkage_success_rate: JsonNumber
    linkage_success_rate_std: JsonNumber


class EstimatePair(TypedDict, total=False):
    """The pair of neighbouring datasets the ε estimate certified on: its name, relation, the record that differs,
    sizes, distance and scale, and what it is."""

    name: str
    relation: str
    changed_index: int
    records_D: int
    records_D_prime: int
    distance: float
    scale: float
    description: str
    family: str


class EstimateEvent(TypedDict, total=False):
    """The event the ε estimate counted: the statistic, its kind, threshold and direction, the dataset it
    favours, in words; ``refusal``: the code refused one dataset of the pair."""

    statistic: str
    kind: str
    threshold: float | None
    direction: str
    favours: str
    text: str
    refusal: str


class EstimateCounts(TypedDict, total=False):
    """What the certifying releases counted: the event on each side, the sample sizes, the statement certified,
    its α split, and the sequential looks (``looks``, with ``stopped`` when the plan ended early)."""

    favoured_in_event: int
    other_in_event: int
    n_per_dataset: int
    n_favoured: int
    n_other: int
    requested: list[int]
    favoured_dataset: str
    statement: str
    alpha_p: float
    alpha_q: float
    alpha_look: float
    looks: dict[str, Any]
    stopped: str


class EstimateSearch(TypedDict, total=False):
    """How the ε estimate chose its pair and event: the selection releases, candidates built and tried, rounds,
    the budget's plan, why it stopped, the domain, where it leaks, screening, and the other pairs it certified."""

    selection_releases: int
    fast: bool
    candidates_built: int
    candidates_tried: int
    model_search_trials: int
    round_sizes: list[int]
    rounds: int
    plan: dict[str, Any]
    stopped: str
    search_cut_at_deadline: bool
    domain: dict[str, Any]
    leak_sites: list[dict[str, Any]]
    screening: dict[str, Any]
    also_certified: list[dict[str, Any]]


class CurveVerdict(TypedDict, total=False):
    """The verdict on a claim in a notion, on its whole trade-off curve: the notion, the claim in words, the
    verdict and its sentence, the certified rates, the gap below the curve, μ, and whether it decides."""

    notion: dict[str, Any]
    claim: str
    verdict: str
    conclusion: str
    certified_rates: dict[str, Any]
    claimed_false_negative_rate: float
    gap_below_curve: float
    mu_lower_bound: float
    confidence: float
    empirical_profile: dict[str, Any]
    decides_verdict: bool
    part_of_verdict: bool


class TradeoffCurve(TypedDict, total=False):
    """The estimated trade-off curve: false positive and negative rates with their confidence band."""

    false_positive_rate: list[float]
    false_negative_rate: list[float]
    false_positive_rate_lower: list[float]
    false_positive_rate_upper: list[float]
    false_negative_rate_lower: list[float]
    false_negative_rate_upper: list[float]
    confidence: float
    releases: list[int]
    band: str
    statistic: str


class ClaimedCurve(TypedDict, total=False):
    """The claimed notion's trade-off curve, for the figure."""

    notion: dict[str, Any]
    claim: str
    false_positive_rate: list[float]
    false_negative_rate: list[float]


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
    pair: EstimatePair
    event: EstimateEvent
    counts: EstimateCounts
    search: EstimateSearch
    candidates: list[dict[str, Any]]
    elapsed_seconds: float
    seed: int | None
    guarantee: str
    timings: dict[str, float]
    leak_warnings: list[str]
    findings: list[FindingRecord]
    mechanism: str
    curve: CurveVerdict
    tradeoff_curve: TradeoffCurve
    claimed_curve: ClaimedCurve
    notes: list[str]


class EmbeddedEstimate(EstimateSummary, total=False):
    """The ε estimate as an attack or audit run embeds it: the estimate's keys, plus whether it ran (``status``),
    on how many records under which rule, and why not."""

    status: str
    records: int
    records_rule: str
    error: str
    internal: bool
    internal_error: InternalError  # in memory only: the run moves it into its internal_errors
