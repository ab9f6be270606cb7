"""The plan of one ε estimate: how many releases in all, for selection and for each certification look.

:func:`make_plan` turns what the caller asked for into a :class:`Plan`
(the rules are in :mod:`attacks.budget`):

``samples``      the certification size per dataset is fixed: one look at the full α;
``budget``       the total number of releases (selection + certification) is fixed:
                 looks, α spent over them — the same numbers on any machine;
``time_budget``  seconds: the code's speed is measured (:func:`measure_rate`) and the
                 total that fits becomes the plan, rounded down to the R10 series and
                 capped at :func:`~attacks.budget.default_budget` for vectorised
                 vector/point mechanisms; the plan records its total, which
                 reproduces the run as ``budget``;
none of these    :func:`~attacks.budget.default_budget` as ``budget``.

Calibration draws run in this process on the audited data and are thrown
away: they only time the code (and the feature map) and take no part in any
statement.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechanisms.base import InvalidInputError, Mechanism, Release

from .budget import (
    DEADLINE_FACTOR,
    MIN_SELECTION,
    SELECTION_SHARE,
    TIMED_CAP,
    default_budget,
    is_fast,
    look_plan,
    releases_for_time,
)
from .execution import child_seed, draw_releases
from .features import FeatureMap
from .sampling import quiet

__all__ = ["CALIBRATION_MAX", "CALIBRATION_SECONDS", "Plan", "make_plan", "measure_rate"]

CALIBRATION_SECONDS = 0.5   # calibration draws stop once one has taken this long (or 1 % of the budget) ...
CALIBRATION_MAX = 131_072   # ... or drawn this many releases at once


@dataclass
class Plan:
    """Releases in all (``total``), for the pair search (``selection``) and per certification look."""

    total: int
    selection: int
    certification: int                       # releases per dataset, last look
    looks: list[tuple[int, float]]           # (cumulative releases per dataset, α of the look)
    source: str                              # samples | releases | time | default
    time_budget: float | None = None
    rate: float | None = None                # releases per second measured (time budgets)
    deadlines: dict[str, float] = field(default_factory=dict)  # perf_counter values: selection, final
    note: str = ""

    @property
    def fixed_samples(self) -> bool:
        return self.source == "samples"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "total_releases": self.total,
                               "selection_releases": self.selection, "certification_per_dataset": self.certification,
                               "looks": [[n, a] for n, a in self.looks]}
        if self.time_budget is not None:
            out["time_budget_seconds"] = self.time_budget
        if self.rate is not None:
            out["releases_per_second"] = self.rate
        if self.note:
            out["note"] = self.note
        return out


def measure_rate(mechanism: Mechanism, X: np.ndarray, fmap: FeatureMap, root: np.random.SeedSequence, *,
                 seconds: float) -> float:
    """Releases per second of draws through the execution layer, features included, in this process.

    Draws of 2, 8, 32, … releases (each ×4) until one takes ``seconds`` or
    :data:`CALIBRATION_MAX` releases: the rate of the last one.  An untimed
    call first pays for the worker's start and the code's own lazy imports.
    """
    # One call first, untimed: a new lane's process pays the code's own lazy imports on its first call.
    quiet(functools.partial(draw_releases, lane="calibration"), mechanism, X, child_seed(root, 7, 99), 1)
    size, i = 2, 0
    while True:
        t0 = time.perf_counter()
        draw = quiet(functools.partial(draw_releases, lane="calibration"), mechanism, X, child_seed(root, 7, i), size)
        if draw.n:
            quiet(fmap, draw.releases)
        took = time.perf_counter() - t0
        if took >= seconds or size >= CALIBRATION_MAX:
            return size / max(took, 1e-9)
        size, i = min(CALIBRATION_MAX, size * 4), i + 1


def make_plan(mechanism: Mechanism, probe: Release, width: int, *, alpha: float, samples: int | None,
              budget: int | None, time_budget: float | None, claim_private: bool, t_start: float,
              calibrate: Any = None) -> Plan:
    """The :class:`Plan` (see the module doc).  ``width``: features per release; ``calibrate()`` returns the
    measured rate (called for time budgets only); ``claim_private``: looks stop early only against a claim."""
    fast = is_fast(mechanism, probe.kind)
    looks = claim_private
    if samples is not None:
        selection = (budget - 2 * samples) if budget else max(samples, MIN_SELECTION[0 if fast else 1])
        if selection < 2 * 10:
            raise InvalidInputError(f"budget {budget} leaves no selection releases after 2 × {samples} "
                                    "certification releases")
        return Plan(2 * samples + selection, selection, samples, look_plan(samples, alpha, looks=False), "samples")
    rate, note, source = None, "", "default"
    deadlines: dict[str, float] = {}
    if budget is not None:
        total, source = int(budget), "releases"
    elif time_budget is not None:
        rate = float(calibrate())
        left = max(0.0, float(time_budget) - (time.perf_counter() - t_start))
        cap = default_budget(mechanism, probe, width) if fast else TIMED_CAP
        total, source = releases_for_time(rate, left, cap=cap), "time"
        if total > rate * left * 1.05:
            note = (f"at {rate:.3g} releases/s the time budget allows about {int(rate * left)} releases; "
                    f"{total} were planned (the least an audit needs), which takes about {total / rate:.0f} s")
        now = time.perf_counter()
        expected = total / max(rate, 1e-9)
        deadlines = {"selection": now + DEADLINE_FACTOR * SELECTION_SHARE * max(expected, left),
                     "final": t_start + DEADLINE_FACTOR * max(float(time_budget), expected)}
    else:
        total = default_budget(mechanism, probe, width)
    selection = int(SELECTION_SHARE * total)
    n = max(1, (total - selection) // 2)
    return Plan(total, selection, n, look_plan(n, alpha, looks=looks), source, time_budget, rate, deadlines, note)
