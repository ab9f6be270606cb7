"""What a sweep is asked to do (:class:`SweepConfig`, stored as ``config.json`` for ``--resume``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from dpaudit.claims import check_notion_options
from dpaudit.data.limits import check_epsilon_floor
from dpaudit.execution import DEFAULT_TIMEOUT, Isolation, MechanismRecipe
from dpaudit.mechanisms.base import NEIGHBOURS, InvalidInputError, check_epsilon
from dpaudit.utility import clusterers as cl

__all__ = ["ISOLATION_FIELDS", "SweepConfig"]

# Where the audited code runs, not what the sweep measures: a sweep may be resumed with other values.
ISOLATION_FIELDS = ("timeout", "python", "memory_limit")


@dataclass(frozen=True)
class SweepConfig:
    """Everything that determines a sweep's numbers (stored as ``config.json`` for --resume)."""

    mechanism: str
    epsilons: tuple[float, ...]
    repeats: int = 10
    params: dict[str, Any] = field(default_factory=dict)
    clusterers: tuple[str, ...] = cl.CLUSTERERS
    n_clusters: int | None = None
    attacks: tuple[str, ...] = ()
    epsilon_bound: bool = False
    samples: int = 1000
    seed: int = 0
    dataset: dict[str, Any] = field(default_factory=dict)  # how the data was chosen (name/records/rescale)
    output: str | None = None       # plug-in functions: the release kind (points|centroids|labels|vector)
    neighbours: str | None = None   # plug-in functions: the claim's neighbour relation
    timeout: float = DEFAULT_TIMEOUT
    python: str | None = None
    memory_limit: int | None = None
    rho: float | None = None      # --rho: the claim is ρ-zCDP (dpaudit.claims; docs/notions.md)
    mu: float | None = None       # --mu: μ-GDP
    rdp: str | None = None        # --rdp "A:E,A:E": Rényi DP at orders
    profile: str | None = None    # --profile FILE: a privacy profile, epsilon,delta rows

    def __post_init__(self) -> None:
        eps = tuple(check_epsilon_floor(check_epsilon(e, name="each ε"), "each ε") for e in self.epsilons)
        if not eps:
            raise InvalidInputError("the ε list is empty")
        if len(set(eps)) != len(eps):
            raise InvalidInputError("the ε list has duplicates")
        object.__setattr__(self, "epsilons", eps)
        if int(self.repeats) != self.repeats or self.repeats < 1:
            raise InvalidInputError(f"repeats must be a whole number ≥ 1, got {self.repeats!r}")
        object.__setattr__(self, "clusterers", cl.parse_clusterers(",".join(self.clusterers)))
        if self.n_clusters is not None and (int(self.n_clusters) != self.n_clusters or self.n_clusters < 2):
            raise InvalidInputError(f"--n-clusters must be a whole number ≥ 2, got {self.n_clusters!r}")
        if self.epsilon_bound and (int(self.samples) != self.samples or self.samples < 10):
            # estimate_epsilon needs ≥ 10 selection releases, and selection uses at most `samples`
            raise InvalidInputError(f"--samples must be a whole number ≥ 10, got {self.samples!r}")
        if self.neighbours is not None and self.neighbours not in NEIGHBOURS:
            raise InvalidInputError(f"--neighbours must be one of {', '.join(NEIGHBOURS)}; got {self.neighbours!r}")
        if self.output is not None:
            from dpaudit.mechanisms.plugins import check_output
            check_output(self.output)
        Isolation(self.timeout, self.python, self.memory_limit)  # validates --timeout, --python, --memory-limit
        if check_notion_options(self, neighbours=self.neighbours) is not None and not self.epsilon_bound:
            raise InvalidInputError("a claim in a notion (--rho, --mu, --rdp, --profile) is tested by each cell's "
                                    "certified ε estimate: add --epsilon-bound")

    def recipe(self) -> MechanismRecipe:
        """The mechanism every cell opens (at its own ε), and where it runs."""
        return MechanismRecipe(self.mechanism, dict(self.params), output=self.output, neighbours=self.neighbours,
                               isolation=Isolation(self.timeout, self.python, self.memory_limit))

    def identity(self) -> dict[str, Any]:
        """What determines the numbers (``--resume`` refuses a run directory whose identity differs)."""
        return {k: v for k, v in self.to_dict().items() if k not in ISOLATION_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["epsilons"] = list(self.epsilons)
        d["clusterers"] = list(self.clusterers)
        d["attacks"] = list(self.attacks)
        return json.loads(json.dumps(d, default=str))
