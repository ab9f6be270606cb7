"""What ``dpaudit estimate-eps`` is asked to do: :class:`EstimateConfig`, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpaudit.attacks.epsilon.sampling.budget import DEFAULT_TIME_BUDGET
from dpaudit.attacks.epsilon.settings import Budget
from dpaudit.claims import check_notion_options
from dpaudit.data.limits import check_budget, check_epsilon_floor
from dpaudit.execution import DEFAULT_TIMEOUT, Isolation, MechanismRecipe, is_builtin
from dpaudit.mechanisms.base import NEIGHBOURS, InvalidInputError, check_epsilon

__all__ = ["ACCESS", "CLASSIFIERS", "OUTPUTS", "EstimateConfig"]

OUTPUTS = ("points", "centroids", "labels", "vector", "parameters", "predictions")
CLASSIFIERS = ("logistic", "mlp", "none")
ACCESS = ("output", "transcript")  # what the auditor sees: the final release, or every noisy statistic drawn


@dataclass(frozen=True)
class EstimateConfig:
    """The mechanism, its claim's overrides and the estimator's settings.

    ``epsilon`` / ``delta`` / ``neighbours`` of ``None`` keep the mechanism's own
    claim (plug-in functions: δ = 0, add-remove; ε is then required, as for built-ins); ``params`` are the mechanism's ``--param`` values.
    ``release`` is ``output`` (the final release) or ``transcript`` (every noisy
    statistic the mechanism drew: :class:`dpaudit.attacks.epsilon.selection.transcripts.TranscriptView`).
    Supervised plug-ins (:mod:`dpaudit.mechanisms.supervised`): ``classes`` /
    ``label_range`` state the labels (else the data's labels give the classes),
    ``label_anchors`` adds one record per class to every dataset, and
    ``supervision`` is what the run built from them (:func:`dpaudit.data.labels.supervision_for`).
    ``own_randomness``: the code draws its own randomness (no replay probe).
    """

    mechanism: str
    epsilon: float | None = None
    delta: float | None = None
    neighbours: str | None = None
    distance: float = 1.0
    output: str | None = None  # --output; None: not stated (a plug-in function is then read as points)
    params: dict[str, Any] = field(default_factory=dict)
    samples: int | None = None
    selection_samples: int | None = None
    time_budget: float | None = DEFAULT_TIME_BUDGET
    releases: int | None = None
    bounds: tuple[list[float], list[float]] | None = None  # --bounds: the public box the code works in
    confidence: float = 0.95
    seed: int = 0
    n_jobs: int = 1
    scheduler: str | None = None
    max_pairs: int | None = None
    min_records: int | None = None  # --min-records: the code's stated domain (pairs below it are not tried)
    classifier: str = "logistic"
    access: str = "output"
    timeout: float = DEFAULT_TIMEOUT
    python: str | None = None
    memory_limit: int | None = None
    classes: tuple[float, ...] | None = None
    label_range: tuple[float, float] | None = None
    label_anchors: bool = True
    own_randomness: bool = False
    supervision: Any = None
    rho: float | None = None      # --rho: the claim is ρ-zCDP (dpaudit.claims; docs/notions.md)
    mu: float | None = None       # --mu: μ-GDP
    rdp: str | None = None        # --rdp "A:E,A:E": Rényi DP at orders
    profile: str | None = None    # --profile FILE: a privacy profile, epsilon,delta rows

    def __post_init__(self) -> None:
        if self.epsilon is not None:
            check_epsilon_floor(check_epsilon(self.epsilon, name="--eps"))
        elif is_builtin(self.mechanism):
            raise InvalidInputError(f"--eps is required: {self.mechanism} runs at the ε it is given")
        Isolation(self.timeout, self.python, self.memory_limit)  # validates --timeout, --python, --memory-limit
        check_budget(self.time_budget, self.releases, self.samples)
        if self.min_records is not None and self.min_records < 0:
            raise InvalidInputError(f"--min-records must be a whole number ≥ 0; got {self.min_records}")
        if self.neighbours is not None and self.neighbours not in NEIGHBOURS:
            raise InvalidInputError(f"--neighbours must be one of {', '.join(NEIGHBOURS)}; got {self.neighbours!r}")
        if self.classifier not in CLASSIFIERS:
            raise InvalidInputError(f"--classifier must be one of {', '.join(CLASSIFIERS)}; got {self.classifier!r}")
        if self.output is not None and self.output not in OUTPUTS:
            raise InvalidInputError(f"--output must be one of {', '.join(OUTPUTS)}; got {self.output!r}")
        if self.access not in ACCESS:
            raise InvalidInputError(f"--access must be one of {', '.join(ACCESS)}; got {self.access!r}")
        check_notion_options(self, delta=self.delta, neighbours=self.neighbours)

    def budget(self) -> Budget:
        """The estimator's :class:`~dpaudit.attacks.epsilon.settings.Budget` these settings ask for."""
        return Budget(releases=self.releases, time_budget=self.time_budget, samples=self.samples,
                      selection_samples=self.selection_samples, confidence=self.confidence)

    def recipe(self, params: dict[str, Any]) -> MechanismRecipe:
        """The mechanism with ``params`` and where it runs (built-ins in this process unless --python)."""
        return MechanismRecipe(self.mechanism, dict(params), output=self.output,
                               neighbours=self.neighbours or "add-remove", delta=self.delta,
                               isolation=Isolation(self.timeout, self.python, self.memory_limit),
                               supervision=self.supervision, own_randomness=self.own_randomness)
