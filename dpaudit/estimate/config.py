"""What ``dpaudit estimate-eps`` is asked to do: :class:`EstimateConfig`, the workflow's parts and its own field."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from dpaudit.claims import NOTIONS
from dpaudit.execution import is_builtin
from dpaudit.options import OptionError, Workflow, one_of

__all__ = ["ACCESS", "CLASSIFIERS", "RECORD_KEYS", "EstimateConfig"]

CLASSIFIERS = ("logistic", "mlp", "none")
ACCESS = ("output", "transcript")  # what the auditor sees: the final release, or every noisy statistic drawn

# The parameters an estimate's provenance has always shown, in their order.
RECORD_KEYS = ("mechanism", "epsilon", "delta", "neighbours", "distance", "output", "params", "samples",
               "selection_samples", "time_budget", "releases", "bounds", "confidence", "seed", "n_jobs", "scheduler",
               "max_pairs", "min_records", "classifier", "access", "timeout", "python", "memory_limit", "classes",
               "label_range", "label_anchors", "own_randomness", "supervision", *(n.name for n in NOTIONS))


@dataclass(frozen=True, kw_only=True)
class EstimateConfig(Workflow):
    """The parts of :class:`~dpaudit.options.Workflow` — a ``claim`` whose ε, δ and neighbour relation, where
    stated, restate the mechanism's own (plug-in functions: δ = 0, add-remove; ε is then required, as for
    built-ins), the estimator's ``budget``, its ``search`` (``classifier`` named: logistic, mlp or none) — and
    ``access``: ``output`` (the final release) or ``transcript`` (every noisy statistic the mechanism drew:
    :class:`dpaudit.attacks.epsilon.selection.transcripts.TranscriptView`)."""

    access: str = "output"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.claim.epsilon is None and is_builtin(self.target.mechanism):
            raise OptionError("epsilon", f"epsilon is required: {self.target.mechanism} runs at the ε it is given")
        if isinstance(self.search.classifier, str):
            one_of(self.search.classifier, "classifier", CLASSIFIERS)
        one_of(self.access, "access", ACCESS)

    def to_dict(self) -> dict[str, Any]:
        """The estimate's parameters as its provenance shows them (:data:`RECORD_KEYS`)."""
        supervision = self.target.supervision
        flat = {**self.flat(), "access": self.access,
                "supervision": None if supervision is None else dataclasses.asdict(supervision)}
        return {key: flat[key] for key in RECORD_KEYS}
