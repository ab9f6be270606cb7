"""What every workflow is given, each concern one typed part: :class:`Workflow`, and :class:`AttackingWorkflow`
for the workflows that run the attacks.

``dpaudit attack``, ``audit``, ``estimate-eps`` and ``sweep`` each add their own few fields
(:class:`~dpaudit.attack.config.AttackConfig`, :class:`~dpaudit.audit.config.AuditConfig`,
:class:`~dpaudit.estimate.config.EstimateConfig`, :class:`~dpaudit.sweep.config.SweepConfig`); no field is
declared twice.  The results keep the flat names they have always had (:meth:`Workflow.flat`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace
from dpaudit.data.limits import MAX_TIME_BUDGET
from dpaudit.execution import Isolation, MechanismRecipe

from .attacks import AttackOptions
from .checks import OptionError, whole_number
from .claim import ClaimOptions
from .data import DataOptions
from .target import TargetOptions

__all__ = ["AttackingWorkflow", "Workflow"]

# The search settings a workflow is told (the pairs and the box are the run's, from its data).
SEARCH_OPTIONS = ("distance", "max_pairs", "min_records", "classifier")


@dataclass(frozen=True, kw_only=True)
class Workflow:
    """The audited code (``target``), the ``claim`` it is tested against, the ``data``, how much evidence the ε
    estimate draws and at what confidence every certified statement is made (``budget``), where it looks
    (``search``), where the code runs (``isolation``), how the releases are drawn (``run``: processes, never
    the numbers) and the ``seed`` of every random choice."""

    target: TargetOptions
    claim: ClaimOptions = field(default_factory=ClaimOptions)
    data: DataOptions = field(default_factory=DataOptions)
    budget: Budget = field(default_factory=Budget)
    search: SearchSpace = field(default_factory=SearchSpace)
    isolation: Isolation = field(default_factory=Isolation)
    run: RunSettings = field(default_factory=RunSettings)
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "seed", whole_number(self.seed, "seed", 0))
        if self.budget.time_budget is not None and self.budget.time_budget > MAX_TIME_BUDGET:
            raise OptionError("time_budget", f"time_budget must be at most a week ({MAX_TIME_BUDGET:g} s), "
                              f"got {self.budget.time_budget!r}")

    @property
    def alpha(self) -> float:
        """The level the certified statements share: 1 − the budget's confidence."""
        return self.budget.alpha

    def recipe(self, params: dict[str, Any] | None = None) -> MechanismRecipe:
        """The audited mechanism (with ``params``, None: the target's) and where it runs."""
        return self.target.recipe(self.claim, self.isolation, params)

    def flat(self) -> dict[str, Any]:
        """Every option by its one name (the names the command line, the configs and the results share)."""
        target, claim, data, budget = self.target, self.claim, self.data, self.budget
        out = {"mechanism": target.mechanism, "params": target.params, "output": target.output,
               "own_randomness": target.own_randomness, "classes": target.classes,
               "label_range": target.label_range, "label_anchors": target.label_anchors,
               "supervision": target.supervision, "epsilon": claim.epsilon, "delta": claim.delta,
               "neighbours": claim.neighbours, **claim.stated(), **dataclasses.asdict(data),
               "releases": budget.releases, "time_budget": budget.time_budget, "samples": budget.samples,
               "selection_samples": budget.selection_samples, "confidence": budget.confidence,
               **{name: getattr(self.search, name) for name in SEARCH_OPTIONS},
               "timeout": self.isolation.timeout, "python": self.isolation.python,
               "memory_limit": self.isolation.memory_limit, "n_jobs": self.run.n_jobs,
               "scheduler": self.run.scheduler, "seed": self.seed}
        return out


@dataclass(frozen=True, kw_only=True)
class AttackingWorkflow(Workflow):
    """A workflow that runs the attacks (``attack``: which, and how a repeat is set up)."""

    attack: AttackOptions = field(default_factory=AttackOptions)

    def flat(self) -> dict[str, Any]:
        return {**super().flat(), **dataclasses.asdict(self.attack)}
