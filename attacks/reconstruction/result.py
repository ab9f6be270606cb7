"""What a reconstruction reports: success within ``radius``, median error, and the prior baseline."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .baseline import prior_baseline

__all__ = ["ReconstructionResult", "scored"]


@dataclass(frozen=True)
class ReconstructionResult:
    """Success within ``radius``, median error, and the prior-guessing baseline."""

    method: str
    success_rate: float
    median_error: float
    baseline_success_rate: float
    baseline_median_error: float
    radius: float
    n_records: int
    linkage_success_rate: float | None = None
    noise_epsilon: float | None = None
    denoising: dict[str, Any] | None = None                    # how the posterior was computed
    baseline: dict[str, Any] = field(default_factory=dict)     # how the baseline was computed (± error)
    matching: dict[str, Any] | None = None                     # differencing: releases of differing sizes

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def scored(method: str, X: np.ndarray, X_hat: np.ndarray, prior: np.ndarray, radius: float,
           rng: np.random.Generator | None, **extra: Any) -> ReconstructionResult:
    """The result of estimating the records ``X`` by ``X_hat``, beside the prior baseline (:func:`prior_baseline`)."""
    err = np.linalg.norm(X_hat - X, axis=1)
    base = prior_baseline(X, prior, radius, rng)
    return ReconstructionResult(method, float(np.mean(err <= radius)), float(np.median(err)),
                                base.pop("success_rate"), base.pop("median_error"), float(radius), int(len(X)),
                                baseline=base, **extra)
