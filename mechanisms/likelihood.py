"""Laplace log-likelihood ratios and the transcript helpers every replay shares.

The leaf of the replays (:mod:`dpaudit.mechanisms.replays`): each replay module imports
its pieces from here, and the registry re-exports them, so no replay imports
the registry that names it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .releases import Transcript, TranscriptBatch
from .validation import InvalidInputError

__all__ = ["Batch", "laplace_llr"]

Batch = TranscriptBatch


def laplace_llr(y: np.ndarray | float, mean_D: np.ndarray | float, mean_Dp: np.ndarray | float,
                scale: float | np.ndarray) -> np.ndarray:
    """ln f(y | mean_D) − ln f(y | mean_D′) for Laplace noise of ``scale``, elementwise.

    Computed as clip(2s(μ − y), −Δ, Δ)/b with Δ = |mean_D′ − mean_D|, μ their
    midpoint and s the sign of mean_D′ − mean_D — the same value as
    (|y − mean_D′| − |y − mean_D|)/b, but on the two plateaus (y beyond both
    means) it is ±Δ/b exactly, whatever y.  The direct form rounds differently
    for different y there, and those rounding patterns differ between releases
    of D and of D′ (a Laplace draw added to different means has different
    low-order bits): an event "the ratio equals its maximum to the last bit"
    would then separate D from D′ through floating-point artefacts — a
    floating-point attack (Mironov, CCS 2012), outside what an ε audit tests.
    """
    mean_D = np.asarray(mean_D, dtype=np.float64)
    mean_Dp = np.asarray(mean_Dp, dtype=np.float64)
    gap = np.abs(mean_Dp - mean_D)
    sign = np.sign(mean_Dp - mean_D)
    return np.clip(sign * (mean_D + mean_Dp - 2.0 * np.asarray(y, dtype=np.float64)), -gap, gap) / scale


def laplace_log_below(x: np.ndarray | float) -> np.ndarray:
    """ln P[Lap(1) < x], stable in both tails."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x < 0, x - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(x))))


def box_of(config: Mapping[str, Any], d: int) -> tuple[np.ndarray, np.ndarray]:
    """The public box ``(lo, hi)`` of a transcript's configuration, broadcast to ``d`` features."""
    lo = np.broadcast_to(np.asarray(config["lo"], dtype=np.float64), (d,))
    hi = np.broadcast_to(np.asarray(config["hi"], dtype=np.float64), (d,))
    return lo, hi


def stack(batch: Batch | Sequence[Transcript]) -> Batch:
    """Transcripts as one :class:`TranscriptBatch` (a batch is returned as it is)."""
    if isinstance(batch, TranscriptBatch):
        return batch
    stacked = TranscriptBatch.stack(list(batch))
    if not isinstance(stacked, TranscriptBatch):
        raise InvalidInputError("these transcripts do not stack (different shapes); replay them one at a time")
    return stacked
