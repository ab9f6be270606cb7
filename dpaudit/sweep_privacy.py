"""Privacy measurements of a sweep cell beyond displacement: membership attacks and a certified ε bound.

Membership attacks come from :mod:`attacks` (issue 4) and the ε lower bound
from :func:`attacks.epsilon.estimate_epsilon` (issue 6); this module only
adapts their results to flat per-cell metrics ``mia.<attack>.<metric>`` and
``epsilon_lower_bound``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechanisms.base import InvalidInputError

__all__ = ["MIA_ATTACKS", "parse_attacks", "privacy_metrics"]

MIA_ATTACKS: tuple[str, ...] = ("shokri", "yeom", "label-only")


def parse_attacks(text: str | None) -> tuple[str, ...]:
    """``"shokri,yeom"`` → ("shokri", "yeom"); ``"all"`` → every membership attack."""
    if text is None or not text.strip() or text.strip() == "none":
        return ()
    if text.strip() == "all":
        return MIA_ATTACKS
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    bad = [n for n in names if n not in MIA_ATTACKS]
    if bad:
        raise InvalidInputError(f"unknown attack(s) {', '.join(bad)} for a sweep; choose from {', '.join(MIA_ATTACKS)}")
    return names


def privacy_metrics(cfg: Any, mech: Any, data: Any, rng: np.random.Generator) -> dict[str, Any]:
    """Per-cell membership-attack and ε-bound metrics (needs the attacks package)."""
    raise InvalidInputError("membership attacks and ε bounds in sweeps need the attacks modules, "
                            "which this installation does not have yet")
