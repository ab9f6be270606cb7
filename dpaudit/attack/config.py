"""What ``dpaudit attack`` is asked to do: :class:`AttackConfig`, validated on construction.

CLI input becomes an :class:`AttackConfig` at once; :func:`dpaudit.attack.run.run_attack`
takes it.  :meth:`AttackConfig.split_sizes` states the one-run split
(:mod:`dpaudit.attack.repeat`) and refuses data too small for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpaudit.attacks.epsilon.sampling.budget import DEFAULT_TIME_BUDGET
from dpaudit.claims import check_notion_options
from dpaudit.data.limits import check_budget, check_epsilon_floor
from dpaudit.execution import DEFAULT_TIMEOUT, Isolation
from dpaudit.mechanisms.base import NEIGHBOURS, InvalidInputError, check_epsilon

__all__ = ["ATTACKS", "DEFAULT_REFERENCE_RUNS", "MEMBERSHIP_ATTACKS", "MIN_MEMBERS", "PER_RECORD_ATTACKS",
           "AttackConfig"]

# New attacks go at the end: a repeat's child seeds follow this order, so earlier attacks keep their numbers.
ATTACKS: tuple[str, ...] = ("shokri", "yeom", "label-only", "reconstruction", "lira", "rmia", "tracing")
MEMBERSHIP_ATTACKS = ("shokri", "yeom", "label-only", "lira", "rmia", "tracing")
PER_RECORD_ATTACKS = ("lira", "rmia")  # share one set of reference runs per repeat
MIN_MEMBERS = 10
MIN_SHADOW = 20       # public records a repeat keeps at least (shadow models, the score's scale, RMIA's population)
DEFAULT_REFERENCE_RUNS = 16


@dataclass(frozen=True)
class AttackConfig:
    """Everything ``dpaudit attack`` was asked to do (validated on construction)."""

    mechanism: str
    epsilon: float
    attacks: tuple[str, ...] = ATTACKS
    dataset: str | None = "blobs-2d"
    data: str | None = None
    label_column: str | None = None
    records: int | None = None
    repeats: int = 3
    seed: int = 0
    output: str | None = None
    neighbours: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    shadow_fraction: float = 0.75
    n_shadow: int = 3
    n_estimators: int = 100
    label_only_queries: int = 125  # 2 × 125 candidates scored: ≥ 100 non-members, so TPR at 1 % FPR resolves
    candidates: int | None = None  # --candidates: records per repeat whose membership is a coin (None: 25 %)
    reference_runs: int = DEFAULT_REFERENCE_RUNS  # --reference-runs: mechanism calls of LiRA/RMIA per repeat
    n_jobs: int = 1                  # --n-n_jobs: local processes for the reference runs (same numbers for any value)
    confidence: float = 0.95  # of every certified statement, as elsewhere (α = 1 − confidence)
    timeout: float = DEFAULT_TIMEOUT  # seconds per call into third-party code (in a worker)
    python: str | None = None         # the worker's interpreter (None: this one)
    memory_limit: int | None = None   # bytes the worker may allocate (None: no limit)
    epsilon_estimate: str = "on"    # certified ε estimate beside the attacks (dpaudit.attack.certify)
    samples: int | None = None   # --samples: a fixed certification size (one look at the full α)
    time_budget: float | None = DEFAULT_TIME_BUDGET  # --time-budget (seconds)
    releases: int | None = None  # --releases: the estimate's plan fixed, instead of timed
    bounds: tuple[list[float], list[float]] | None = None  # --bounds: the box the code works in
    classes: tuple[float, ...] | None = None  # supervised plug-ins: the classes (else the data's labels)
    label_range: tuple[float, float] | None = None  # ... or a regression target's public range
    label_anchors: bool = True  # ... one public record per class in every dataset
    own_randomness: bool = False  # the code draws its own randomness (stated): no replay probe
    rho: float | None = None      # --rho: the claim is ρ-zCDP (dpaudit.claims; docs/notions.md)
    mu: float | None = None       # --mu: μ-GDP
    rdp: str | None = None        # --rdp "A:E,A:E": Rényi DP at orders
    profile: str | None = None    # --profile FILE: a privacy profile, epsilon,delta rows

    @property
    def alpha(self) -> float:
        """The level the certified statements share: 1 − :attr:`confidence`."""
        return 1.0 - self.confidence

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon_floor(check_epsilon(self.epsilon, name="--eps")))
        self.isolation()  # validates --timeout, --python, --memory-limit
        attacks = tuple(dict.fromkeys(self.attacks))
        unknown = [a for a in attacks if a not in ATTACKS]
        if unknown or not attacks:
            raise InvalidInputError(
                f"unknown attack {', '.join(unknown) or '(none)'}; choose from {', '.join(ATTACKS)} or all")
        object.__setattr__(self, "attacks", attacks)
        if int(self.repeats) != self.repeats or self.repeats < 1:
            raise InvalidInputError(f"--repeats must be a whole number ≥ 1, got {self.repeats!r}")
        if self.records is not None and (int(self.records) != self.records or self.records < 2):
            raise InvalidInputError(f"--records must be a whole number ≥ 2, got {self.records!r}")
        if not 0.0 < self.shadow_fraction < 1.0:
            raise InvalidInputError(f"shadow fraction must be in (0, 1), got {self.shadow_fraction!r}")
        if (self.dataset is None) == (self.data is None):
            raise InvalidInputError("give either --dataset NAME or --data FILE.csv")
        if self.label_column is not None and self.data is None:
            raise InvalidInputError("--label-column names a column of a --data CSV; built-in datasets carry their own labels")
        if self.output is not None:
            from dpaudit.mechanisms.plugins import check_output
            check_output(self.output)
        if self.neighbours is not None and self.neighbours not in NEIGHBOURS:
            raise InvalidInputError(f"--neighbours must be one of {', '.join(NEIGHBOURS)}; got {self.neighbours!r}")
        if self.n_shadow < 1:
            raise InvalidInputError(f"need at least one shadow model, got {self.n_shadow}")
        if self.candidates is not None and (int(self.candidates) != self.candidates
                                            or self.candidates < 2 * MIN_MEMBERS):
            raise InvalidInputError(f"--candidates must be a whole number ≥ {2 * MIN_MEMBERS}, got {self.candidates!r}")
        if int(self.reference_runs) != self.reference_runs or self.reference_runs < 2:
            raise InvalidInputError(f"--reference-runs must be a whole number ≥ 2 (runs with and without each "
                                    f"record), got {self.reference_runs!r}")
        if isinstance(self.n_jobs, bool) or int(self.n_jobs) != self.n_jobs or not (self.n_jobs >= 1 or self.n_jobs == -1):
            raise InvalidInputError(f"--n-jobs must be a whole number ≥ 1, or -1 for every core; got {self.n_jobs!r}")
        if self.epsilon_estimate not in ("auto", "on", "off"):
            raise InvalidInputError(f"--epsilon-estimate must be auto, on or off; got {self.epsilon_estimate!r}")
        if self.samples is not None and (int(self.samples) != self.samples
                                                  or self.samples < 100):
            raise InvalidInputError(f"--samples must be a whole number ≥ 100, got {self.samples!r}")
        check_budget(self.time_budget, self.releases, None)
        check_notion_options(self, neighbours=self.neighbours)

    def isolation(self) -> Isolation:
        """Where and under which limits the audited code runs (:mod:`dpaudit.execution.engine`)."""
        return Isolation(self.timeout, self.python, self.memory_limit)

    @staticmethod
    def parse_attacks(text: str) -> tuple[str, ...]:
        names = tuple(a.strip() for a in text.split(",") if a.strip())
        return ATTACKS if names in ((), ("all",)) else names

    def split_sizes(self, n_records: int) -> tuple[int, int]:
        """(shadow records, m/2) for m candidates: the expected number of members (and of non-members).

        Without ``candidates`` a ``shadow_fraction`` of the records is shadow data and the rest (an
        even number) candidates; ``candidates`` fixes m (rounded down to even) and leaves the rest
        to the shadow data.
        """
        if self.candidates is not None:
            half = int(self.candidates) // 2
            n_shadow = n_records - 2 * half
            if n_shadow < max(MIN_SHADOW, 4 * self.n_shadow):
                raise InvalidInputError(
                    f"--candidates {self.candidates} leaves {max(n_shadow, 0)} of the {n_records} records as the "
                    f"attacker's public data; keep at least {max(MIN_SHADOW, 4 * self.n_shadow)} (--candidates ≤ "
                    f"{n_records - max(MIN_SHADOW, 4 * self.n_shadow)})")
            return n_shadow, half
        n_shadow = int(round(self.shadow_fraction * n_records))
        members = (n_records - n_shadow) // 2
        if members < MIN_MEMBERS or n_shadow < 2 * self.n_shadow:
            need = math.ceil(2 * MIN_MEMBERS / (1 - self.shadow_fraction))
            raise InvalidInputError(
                f"{n_records} records are too few for the attack split ({self.shadow_fraction:.0%} shadow data, "
                f"the rest ≥ {2 * MIN_MEMBERS} candidates, each a member by a fair coin); give at least {need}")
        return n_shadow, members
