"""What ``dpaudit attack`` is asked to do: :class:`AttackConfig`, the workflow's parts and its own one field.

CLI input becomes an :class:`AttackConfig` at once; :func:`dpaudit.attack.run.run_attack` takes it.  The
parts check themselves (:mod:`dpaudit.options`); the attacks' split is
:meth:`~dpaudit.options.AttackOptions.split_sizes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpaudit.claims import NOTIONS
from dpaudit.options import AttackingWorkflow, OptionError, one_of

from .certify import ESTIMATE_MODES

__all__ = ["RECORD_KEYS", "AttackConfig"]

# The parameters an attack run's results.json has always shown, in their order.
RECORD_KEYS = ("mechanism", "epsilon", "attacks", "dataset", "data", "label_column", "records", "repeats", "seed",
               "output", "neighbours", "params", "shadow_fraction", "n_shadow", "n_estimators", "label_only_queries",
               "candidates", "reference_runs", "n_jobs", "confidence", "timeout", "python", "memory_limit",
               "epsilon_estimate", "samples", "time_budget", "releases", "bounds", "classes", "label_range",
               "label_anchors", "own_randomness", *(n.name for n in NOTIONS))


@dataclass(frozen=True, kw_only=True)
class AttackConfig(AttackingWorkflow):
    """Everything ``dpaudit attack`` was asked to do (validated on construction): the parts of
    :class:`~dpaudit.options.AttackingWorkflow` — ``claim.epsilon`` is required, the ``budget`` is the
    certified ε estimate's and its confidence every statement's, ``run.n_jobs`` the reference runs'
    processes — and ``epsilon_estimate``: whether the certified ε estimate runs beside the attacks
    (:mod:`dpaudit.attack.certify`)."""

    epsilon_estimate: str = "on"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.claim.epsilon is None:
            raise OptionError("epsilon", "epsilon is required: the mechanism runs at the ε it is given")
        if not self.attack.attacks:
            raise OptionError("attacks", "an attack run needs at least one attack (every one: "
                              "dpaudit.attack.registry.ATTACKS)")
        one_of(self.epsilon_estimate, "epsilon_estimate", ESTIMATE_MODES)

    @property
    def epsilon(self) -> float:
        """The ε the mechanism runs at (and claims)."""
        epsilon = self.claim.epsilon
        if epsilon is None:  # refused on construction
            raise OptionError("epsilon", "epsilon is required: the mechanism runs at the ε it is given")
        return epsilon

    def to_dict(self) -> dict[str, Any]:
        """The run's parameters as results.json shows them (:data:`RECORD_KEYS`)."""
        flat = {**self.flat(), "attacks": list(self.attack.attacks), "epsilon_estimate": self.epsilon_estimate}
        return {key: flat[key] for key in RECORD_KEYS}
