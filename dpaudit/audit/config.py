"""What ``dpaudit audit`` is asked to do: :class:`AuditConfig`, validated on construction."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from dpaudit.attack.config import ATTACKS
from dpaudit.attacks.epsilon.sampling.budget import DEFAULT_TIME_BUDGET
from dpaudit.claims import check_notion_options
from dpaudit.data.limits import check_budget, check_epsilon_floor
from dpaudit.execution import DEFAULT_TIMEOUT, Isolation, MechanismRecipe
from dpaudit.mechanisms.base import NEIGHBOURS, InvalidInputError, PrivacyClaim, check_epsilon
from dpaudit.mechanisms.plugins import check_output

__all__ = ["PARTS", "AuditConfig", "parse_attacks"]

PARTS: tuple[str, ...] = ("smoke", "epsilon", "attacks", "utility")


@dataclass(frozen=True)
class AuditConfig:
    """What ``dpaudit audit`` was asked to do."""

    mechanism: str
    epsilon: float
    output: str | None = None  # --output; None: not stated (a plug-in function is then read as points)
    neighbours: str = "add-remove"
    delta: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    python: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    memory_limit: int | None = None
    scheduler: str | None = None  # a Dask scheduler for the ε estimation's chunks and the attack repeats
    n_jobs: int = 1  # local worker processes for the same (joblib; -1: every core); same numbers for any value
    samples: int | None = None          # ε estimation: a fixed certification size (one look at the full α)
    time_budget: float | None = DEFAULT_TIME_BUDGET  # ... else the time it spends (seconds)
    min_records: int | None = None  # --min-records: the code's stated domain (the ε estimate's pairs below it skipped)
    releases: int | None = None         # ... or its whole plan, in releases
    bounds: tuple[list[float], list[float]] | None = None  # --bounds: the public box the code works in
    confidence: float = 0.95
    attacks: tuple[str, ...] = ("shokri", "yeom", "label-only", "reconstruction")
    repeats: int = 2
    utility_repeats: int = 3
    seed: int = 0
    parts: tuple[str, ...] = PARTS
    dataset: dict[str, Any] = field(default_factory=dict)
    supervision: Any = None  # supervised plug-ins: how labels are fed (dpaudit.data.labels.supervision_for)
    own_randomness: bool = False  # the code draws its own randomness (stated): no replay probe
    rho: float | None = None      # --rho: the claim is ρ-zCDP (dpaudit.claims; docs/notions.md)
    mu: float | None = None       # --mu: μ-GDP
    rdp: str | None = None        # --rdp "A:E,A:E": Rényi DP at orders
    profile: str | None = None    # --profile FILE: a privacy profile, epsilon,delta rows

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon_floor(check_epsilon(self.epsilon, name="--eps")))
        Isolation(self.timeout, self.python, self.memory_limit)  # validates --timeout, --python, --memory-limit
        if not 0.0 < self.confidence < 1.0:
            raise InvalidInputError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if self.samples is not None and (int(self.samples) != self.samples or self.samples < 100):
            raise InvalidInputError(f"--samples must be a whole number ≥ 100, got {self.samples!r}")
        check_budget(self.time_budget, self.releases, None)
        if self.min_records is not None and self.min_records < 0:
            raise InvalidInputError(f"--min-records must be a whole number ≥ 0; got {self.min_records}")
        if isinstance(self.n_jobs, bool) or int(self.n_jobs) != self.n_jobs or not (self.n_jobs >= 1
                                                                                    or self.n_jobs == -1):
            raise InvalidInputError(f"--n-jobs must be a whole number ≥ 1, or -1 for every core; got {self.n_jobs!r}")
        if self.output is not None:
            check_output(self.output)
        if self.neighbours not in NEIGHBOURS:
            raise InvalidInputError(f"--neighbours must be one of {', '.join(NEIGHBOURS)}; got {self.neighbours!r}")
        PrivacyClaim(self.epsilon, self.delta, self.neighbours)  # δ in [0, 1)
        unknown = [a for a in self.attacks if a not in ATTACKS]
        if unknown:
            raise InvalidInputError(f"unknown attack {', '.join(unknown)}; choose from {', '.join(ATTACKS)}, "
                                    "all or none")
        if self.attacks and (int(self.repeats) != self.repeats or self.repeats < 1):
            raise InvalidInputError(f"--repeats must be a whole number ≥ 1, got {self.repeats!r}")
        bad = [p for p in self.parts if p not in PARTS]
        if bad:
            raise InvalidInputError(f"unknown audit part(s) {', '.join(bad)}; choose from {', '.join(PARTS)}")
        check_notion_options(self, delta=self.delta or None, neighbours=self.neighbours)

    def recipe(self) -> MechanismRecipe:
        """The audited mechanism and where it runs (built-ins in this process unless --python)."""
        return MechanismRecipe(self.mechanism, dict(self.params), output=self.output, neighbours=self.neighbours,
                               delta=self.delta, isolation=Isolation(self.timeout, self.python, self.memory_limit),
                               supervision=self.supervision, own_randomness=self.own_randomness)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["attacks"], d["parts"] = list(self.attacks), list(self.parts)
        if self.supervision is not None:
            d["supervision"] = self.supervision.to_dict()
        return d


def parse_attacks(text: str) -> tuple[str, ...]:
    """``--attack``: comma-separated names, ``all`` (every attack, the default) or ``none``."""
    names = tuple(a.strip() for a in text.split(",") if a.strip())
    if names in ((), ("all",)):
        return ATTACKS
    return () if names == ("none",) else names
