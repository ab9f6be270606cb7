"""What a run is told about the claim it tests: :class:`ClaimOptions`, and the one place a claim is built.

The mechanism states its own claim (:attr:`~dpaudit.mechanisms.base.Mechanism.claim`: a built-in's, or a plug-in's
from the ε, δ and neighbour relation it was opened with); a claim stated in a notion (:mod:`dpaudit.claims`)
replaces it by the notion's (ε, δ) point.  ``estimate-eps`` also restates ε, δ and the neighbour relation of a
mechanism's own claim (:meth:`ClaimOptions.claim` with ``restate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dpaudit.claims import NOTIONS, notion_claim, notion_from_options
from dpaudit.mechanisms.base import NEIGHBOURS, PrivacyClaim

from .checks import OptionError, epsilon_value, one_of

if TYPE_CHECKING:
    from dpaudit.mechanisms.notions import Notion

__all__ = ["ClaimOptions"]


@dataclass(frozen=True, kw_only=True)
class ClaimOptions:
    """The claim as stated: ``epsilon`` (the ε the code runs at and claims), ``delta``, ``neighbours``
    (add-remove, replace or metric) — each None when not stated — and ``notions``, the value of each notion
    option given (:data:`dpaudit.claims.NOTIONS` by name, as given: ``{"rho": 0.5}``, a profile's file name)."""

    epsilon: float | None = None
    delta: float | None = None
    neighbours: str | None = None
    notions: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", epsilon_value(self.epsilon))
        if self.delta is not None:
            try:
                delta = float(self.delta)
            except (TypeError, ValueError):
                delta = math.nan
            if not 0.0 <= delta < 1.0:
                raise OptionError("delta", f"delta must be a number in [0, 1), got {self.delta!r}")
            object.__setattr__(self, "delta", delta)
        if self.neighbours is not None:
            one_of(self.neighbours, "neighbours", NEIGHBOURS)
        object.__setattr__(self, "notions", {k: v for k, v in self.notions.items() if v is not None})
        notion = self.notion()  # one notion at most, each value valid, a profile file that reads
        if notion is not None:  # ... and its claim made once: a δ its point has an ε at, not a metric claim
            notion_claim(notion, delta=self.delta, neighbours=self.neighbours)

    def notion(self) -> Notion | None:
        """The notion stated (None: the claim is (ε, δ))."""
        return notion_from_options(**self.notions)

    def stated(self) -> dict[str, Any]:
        """Every notion option with its value as given (None: not given), in :data:`dpaudit.claims.NOTIONS`'s
        order — what a run's provenance shows."""
        return {option.name: self.notions.get(option.name) for option in NOTIONS}

    def claim(self, own: PrivacyClaim, *, restate: bool = False) -> PrivacyClaim:
        """The claim a run tests, given the claim the mechanism states itself (``own``).

        A notion: its (ε, δ) point at ``delta`` (None: the default δ), for the stated neighbour relation when
        ``restate``, else the mechanism's.  Otherwise the mechanism's own claim — with ``restate``, with the
        stated ε, δ and neighbour relation in place of its own (``estimate-eps``'s ``--eps``, ``--delta``,
        ``--neighbours``).
        """
        neighbours = (self.neighbours or own.neighbours) if restate else own.neighbours
        notion = self.notion()
        if notion is not None:
            return notion_claim(notion, delta=self.delta, neighbours=neighbours)
        if not restate:
            return own
        return PrivacyClaim(own.epsilon if self.epsilon is None else float(self.epsilon),
                            own.delta if self.delta is None else self.delta, neighbours)
