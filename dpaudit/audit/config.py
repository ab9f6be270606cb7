"""What ``dpaudit audit`` is asked to do: :class:`AuditConfig`, the workflow's parts and its own two fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpaudit.claims import NOTIONS
from dpaudit.options import AttackingWorkflow, OptionError, whole_number

__all__ = ["PARTS", "RECORD_KEYS", "AuditConfig"]

PARTS: tuple[str, ...] = ("smoke", "epsilon", "attacks", "utility")

# The parameters an audit's provenance has always shown, in their order.
RECORD_KEYS = ("mechanism", "epsilon", "output", "neighbours", "delta", "params", "python", "timeout", "memory_limit",
               "scheduler", "n_jobs", "samples", "time_budget", "min_records", "releases", "bounds", "confidence",
               "attacks", "repeats", "utility_repeats", "seed", "parts", "dataset", "supervision", "own_randomness",
               *(n.name for n in NOTIONS))


@dataclass(frozen=True, kw_only=True)
class AuditConfig(AttackingWorkflow):
    """What ``dpaudit audit`` was asked to do: the parts of :class:`~dpaudit.options.AttackingWorkflow`
    (``claim.epsilon`` required; ``claim.delta`` a plug-in's δ, None: 0; the budget's confidence the audit's
    overall level, split over the tests that can decide; ``run``: the processes or Dask scheduler of the ε
    estimation's chunks and the attack repeats), which ``parts`` of the audit run (the attacks part only with an
    attack named) and the ``utility_repeats``."""

    parts: tuple[str, ...] = PARTS
    utility_repeats: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.claim.epsilon is None:
            raise OptionError("epsilon", "epsilon is required: the code is asked to honour it")
        bad = [p for p in self.parts if p not in PARTS]
        if bad:
            raise OptionError("parts", f"unknown audit part(s) {', '.join(bad)}; choose from {', '.join(PARTS)}")
        object.__setattr__(self, "parts", tuple(p for p in self.parts if p != "attacks" or self.attack.attacks))
        object.__setattr__(self, "utility_repeats", whole_number(self.utility_repeats, "utility_repeats", 1))

    @property
    def epsilon(self) -> float:
        """The ε the code is asked to honour."""
        epsilon = self.claim.epsilon
        if epsilon is None:  # refused on construction
            raise OptionError("epsilon", "epsilon is required: the code is asked to honour it")
        return epsilon

    def to_dict(self) -> dict[str, Any]:
        """The audit's parameters as its provenance shows them (:data:`RECORD_KEYS`)."""
        supervision = self.target.supervision
        flat = {**self.flat(), "delta": self.claim.delta or 0.0, "attacks": list(self.attack.attacks),
                "parts": list(self.parts), "utility_repeats": self.utility_repeats,
                "dataset": self.data.selection(),
                "supervision": None if supervision is None else supervision.to_dict()}
        return {key: flat[key] for key in RECORD_KEYS}
