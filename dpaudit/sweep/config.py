"""What a sweep is asked to do (:class:`SweepConfig`, stored as ``config.json`` for ``--resume``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dpaudit.attack.registry import MEMBERSHIP_ATTACKS
from dpaudit.claims import NOTIONS
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.options import AttackingWorkflow, OptionError, epsilon_value, whole_number
from dpaudit.utility import clusterers as cl

__all__ = ["ISOLATION_FIELDS", "RECORD_KEYS", "SweepConfig"]

# Where the audited code runs, not what the sweep measures: a sweep may be resumed with other values.
ISOLATION_FIELDS = ("timeout", "python", "memory_limit")

# What config.json has always held, in its order.
RECORD_KEYS = ("mechanism", "epsilons", "repeats", "params", "clusterers", "n_clusters", "attacks", "epsilon_bound",
               "samples", "seed", "dataset", "output", "neighbours", "timeout", "python", "memory_limit",
               *(n.name for n in NOTIONS))


@dataclass(frozen=True, kw_only=True)
class SweepConfig(AttackingWorkflow):
    """Everything that determines a sweep's numbers (stored as ``config.json`` for --resume): the parts of
    :class:`~dpaudit.options.AttackingWorkflow` — its ``attack`` options name the membership attacks each cell
    runs (one repeat), ``budget.samples`` is each cell's certification size for ``epsilon_bound``, the
    budget's confidence the level of both — and the sweep's own: the ``epsilons`` the mechanism runs at
    (``claim.epsilon`` is not used), ``repeats`` per ε, the ``clusterers`` run on each release and their
    ``n_clusters`` (None: the data's class count, else 4), and whether each cell certifies an ε lower bound."""

    epsilons: tuple[float, ...]
    repeats: int = 10
    clusterers: tuple[str, ...] = cl.CLUSTERERS
    n_clusters: int | None = None
    epsilon_bound: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        eps = tuple(epsilon_value(e, "epsilons", "each ε") for e in self.epsilons)
        if not eps:
            raise OptionError("epsilons", "the ε list is empty")
        if len(set(eps)) != len(eps):
            raise OptionError("epsilons", "the ε list has duplicates")
        object.__setattr__(self, "epsilons", eps)
        object.__setattr__(self, "repeats", whole_number(self.repeats, "repeats", 1))
        object.__setattr__(self, "clusterers", cl.parse_clusterers(",".join(self.clusterers)))
        if self.n_clusters is not None:
            object.__setattr__(self, "n_clusters", whole_number(self.n_clusters, "n_clusters", 2))
        others = [a for a in self.attack.attacks if a not in MEMBERSHIP_ATTACKS]
        if others:
            raise OptionError("attacks", f"a sweep cell runs membership attacks; {', '.join(others)} is not one "
                              f"(choose from {', '.join(MEMBERSHIP_ATTACKS)})")
        if self.epsilon_bound and self.budget.samples is None:
            raise OptionError("samples", "samples must be given: each cell's ε bound is certified on a fixed "
                              "number of releases")
        if self.claim.notion() is not None and not self.epsilon_bound:
            raise InvalidInputError(f"a claim in a notion ({', '.join(n.flag for n in NOTIONS)}) is tested by each "
                                    "cell's certified ε estimate: add --epsilon-bound")

    def identity(self) -> dict[str, Any]:
        """What determines the numbers (``--resume`` refuses a run directory whose identity differs)."""
        return {k: v for k, v in self.to_dict().items() if k not in ISOLATION_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        """config.json (:data:`RECORD_KEYS`)."""
        flat = {**self.flat(), "epsilons": list(self.epsilons), "repeats": self.repeats,
                "clusterers": list(self.clusterers), "n_clusters": self.n_clusters, "attacks": list(self.attack.attacks),
                "epsilon_bound": self.epsilon_bound, "dataset": self.data.selection()}
        return json.loads(json.dumps({key: flat[key] for key in RECORD_KEYS}, default=str))

