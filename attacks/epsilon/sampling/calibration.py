"""Calibration: how fast the audited code runs, measured before a timed plan is made.

A few draws through the execution layer on the audited data, thrown away: they time the code (and the
feature map) and take no part in any statement.  :func:`measure_rate` gives the plan
(:func:`dpaudit.attacks.epsilon.sampling.budget.make_plan`) the releases per second, a fresh worker lane's start and each draw's
fixed cost (:func:`chunk_overhead`), which the pair search uses to time each pair on its own datasets
(:meth:`dpaudit.attacks.epsilon.sampling.sampling.Sampler.rate`).
"""

from __future__ import annotations

import functools
import time

import numpy as np

from dpaudit.execution import draw_releases, quiet
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import Mechanism

from ..selection.features import FeatureMap

__all__ = ["CALIBRATION_MAX", "CALIBRATION_SECONDS", "chunk_overhead", "measure_rate"]

CALIBRATION_SECONDS = 0.5   # calibration draws stop once one has taken this long (or 1 % of the budget) ...
CALIBRATION_MAX = 131_072   # ... or drawn this many releases at once


def measure_rate(mechanism: Mechanism, X: np.ndarray, fmap: FeatureMap, root: np.random.SeedSequence, *,
                 seconds: float) -> tuple[float, float, float]:
    """(releases per second of draws through the execution layer, features included, in this process; seconds
    a fresh lane takes to its first release beyond one call's time — its start; seconds a draw costs whatever
    its size, :func:`chunk_overhead`).

    Draws of 2, 8, 32, … releases (each ×4) until one takes ``seconds`` or
    :data:`CALIBRATION_MAX` releases: the rate of the last one.  An untimed
    call first pays for the worker's start and the code's own lazy imports.
    """
    # One call first, timed apart: a new lane's process pays its start and the code's own lazy imports (and
    # whatever the code caches) on its first call — what every side of every candidate pair pays once.
    t0 = time.perf_counter()
    quiet(functools.partial(draw_releases, lane="calibration"), mechanism, X, Stream.CALIBRATION_START.of(root), 1)
    start = time.perf_counter() - t0
    size, i = 2, 0
    sizes: list[int] = []
    times: list[float] = []
    while True:
        t0 = time.perf_counter()
        draw = quiet(functools.partial(draw_releases, lane="calibration"), mechanism, X, Stream.CALIBRATION.of(root, i), size)
        if draw.n:
            quiet(fmap, draw.releases)
        took = time.perf_counter() - t0
        sizes.append(size)
        times.append(took)
        if took >= seconds or size >= CALIBRATION_MAX:
            rate = size / max(took, 1e-9)
            return rate, max(0.0, start - 1.0 / rate), chunk_overhead(sizes, times)
        size, i = min(CALIBRATION_MAX, size * 4), i + 1


def chunk_overhead(sizes: list[int], times: list[float]) -> float:
    """Seconds a draw costs whatever its size (a round trip to the worker, the features' set-up): the intercept
    of time = a + b·size fitted on the calibration draws (0 with fewer than two, never negative) — what a small
    draw's time must lose before it says how fast the code is (:meth:`dpaudit.attacks.epsilon.sampling.sampling.Sampler.rate`)."""
    if len(sizes) < 2:
        return 0.0
    b, a = np.polyfit(np.asarray(sizes, dtype=float), np.asarray(times, dtype=float), 1)
    smallest = float(min(times))
    return float(min(max(a, 0.0), smallest)) if b > 0 else smallest
