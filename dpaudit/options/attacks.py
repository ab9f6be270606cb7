"""Which attacks a run runs and how each repeat is set up: :class:`AttackOptions`.

``dpaudit attack`` runs them over its repeats, ``dpaudit audit`` as one of its parts, a sweep once per cell
(one repeat each): every one of them holds these options and passes its own level of confidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpaudit.attack.registry import ATTACKS
from dpaudit.mechanisms.base import InvalidInputError

from .checks import OptionError, fraction, whole_number

__all__ = ["DEFAULT_REFERENCE_RUNS", "MIN_MEMBERS", "MIN_SHADOW", "AttackOptions"]

MIN_MEMBERS = 10
MIN_SHADOW = 20       # public records a repeat keeps at least (shadow models, the score's scale, RMIA's population)
DEFAULT_REFERENCE_RUNS = 16


@dataclass(frozen=True, kw_only=True)
class AttackOptions:
    """The attacks (names of :data:`dpaudit.attack.registry.REGISTRY`, each once; none unless named —
    :data:`~dpaudit.attack.registry.ATTACKS` is every one) and a repeat's
    set-up: ``repeats`` independent splits and releases; the share of the records that is the attacker's public
    (shadow) data, or the number of ``candidates`` (records whose membership is a fair coin; None: the rest);
    ``n_shadow`` shadow models; the ``n_estimators`` of the target's forest; the candidates label-only queries
    (``2 × label_only_queries``: ≥ 100 non-members, so TPR at 1 % FPR resolves); the ``reference_runs`` of
    LiRA and RMIA (mechanism runs with and without each candidate)."""

    attacks: tuple[str, ...] = ()
    repeats: int = 3
    shadow_fraction: float = 0.75
    n_shadow: int = 3
    n_estimators: int = 100
    label_only_queries: int = 125
    candidates: int | None = None
    reference_runs: int = DEFAULT_REFERENCE_RUNS

    def __post_init__(self) -> None:
        attacks = tuple(dict.fromkeys(self.attacks))
        unknown = [a for a in attacks if a not in ATTACKS]
        if unknown:
            raise OptionError("attacks", f"unknown attack {', '.join(unknown)}; choose from {', '.join(ATTACKS)}")
        object.__setattr__(self, "attacks", attacks)
        object.__setattr__(self, "repeats", whole_number(self.repeats, "repeats", 1))
        object.__setattr__(self, "shadow_fraction", fraction(self.shadow_fraction, "shadow_fraction"))
        object.__setattr__(self, "n_shadow", whole_number(self.n_shadow, "n_shadow", 1))
        object.__setattr__(self, "n_estimators", whole_number(self.n_estimators, "n_estimators", 1))
        object.__setattr__(self, "label_only_queries", whole_number(self.label_only_queries, "label_only_queries", 1))
        if self.candidates is not None:
            object.__setattr__(self, "candidates", whole_number(self.candidates, "candidates", 2 * MIN_MEMBERS))
        object.__setattr__(self, "reference_runs", whole_number(
            self.reference_runs, "reference_runs", 2, why=" (runs with and without each record)"))

    def split_sizes(self, n_records: int) -> tuple[int, int]:
        """(shadow records, m/2) for m candidates: the expected number of members (and of non-members).

        Without ``candidates`` a ``shadow_fraction`` of the records is shadow data and the rest (an
        even number) candidates; ``candidates`` fixes m (rounded down to even) and leaves the rest
        to the shadow data.  Data too small for the split is refused.
        """
        if self.candidates is not None:
            half = int(self.candidates) // 2
            n_shadow = n_records - 2 * half
            keep = max(MIN_SHADOW, 4 * self.n_shadow)
            if n_shadow < keep:
                raise OptionError("candidates", f"candidates {self.candidates} leaves {max(n_shadow, 0)} of the "
                                  f"{n_records} records as the attacker's public data; keep at least {keep} "
                                  f"(candidates ≤ {n_records - keep})")
            return n_shadow, half
        n_shadow = int(round(self.shadow_fraction * n_records))
        members = (n_records - n_shadow) // 2
        if members < MIN_MEMBERS or n_shadow < 2 * self.n_shadow:
            need = math.ceil(2 * MIN_MEMBERS / (1 - self.shadow_fraction))
            raise InvalidInputError(f"{n_records} records are too few for the attack split "
                                    f"({self.shadow_fraction:.0%} shadow data, the rest ≥ {2 * MIN_MEMBERS} "
                                    f"candidates, each a member by a fair coin); give at least {need}")
        return n_shadow, members
