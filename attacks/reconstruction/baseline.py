"""The prior baseline: how well guessing a random public prior record does, and the default radius.

A reconstruction succeeds when its estimate lies within ``radius`` of the
record; the baseline is the chance that a random prior record does, and the
median distance from a record to one.  It is exact for small inputs and a
Monte-Carlo estimate with its standard error otherwise (:func:`prior_baseline`).
The default ``radius`` is a tenth of the median distance between prior records
(:func:`default_radius`): a data scale, public, never the members'.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats
from scipy.spatial import cKDTree

from dpaudit.mechanisms.base import InvalidInputError

from ..targets import sq_dist

__all__ = ["BASELINE_EXACT_PAIRS", "BASELINE_PAIRS", "default_radius", "prior_baseline"]

# Prior baseline (prior_baseline): exact up to this many (record, prior record) pairs, else
# a Monte-Carlo estimate from BASELINE_PAIRS pairs (rate standard error ≤ 0.0005).
BASELINE_EXACT_PAIRS = 4_000_000
BASELINE_PAIRS = 1_000_000


def prior_baseline(X: np.ndarray, prior: np.ndarray, radius: float,
                   rng: np.random.Generator | None = None) -> dict[str, Any]:
    """Guessing a random prior record: P[within radius of x] and the median distance, over x and the prior.

    Exact (every pair) when |X|·|prior| ≤ :data:`BASELINE_EXACT_PAIRS`; otherwise a Monte-Carlo
    estimate from :data:`BASELINE_PAIRS` independent uniform pairs (x, s) drawn from ``rng``,
    with the binomial standard error of the rate and a distribution-free 95 % interval for
    the median (order statistics of the sampled distances).
    """
    X = np.asarray(X, dtype=np.float64)
    prior = np.asarray(prior, dtype=np.float64)
    if len(X) * len(prior) <= BASELINE_EXACT_PAIRS:
        counts = cKDTree(prior).query_ball_point(X, r=radius, return_length=True)
        dist = np.sqrt(sq_dist(X, prior))
        return {"success_rate": float(np.mean(counts / len(prior))), "median_error": float(np.median(dist)),
                "method": "exact over every (record, prior record) pair"}
    if rng is None:
        raise InvalidInputError("a Monte-Carlo prior baseline needs a generator")
    m = BASELINE_PAIRS
    d = np.linalg.norm(X[rng.integers(len(X), size=m)] - prior[rng.integers(len(prior), size=m)], axis=1)
    p = float(np.mean(d <= radius))
    d.sort()
    lo, hi = (int(v) for v in stats.binom.ppf([0.025, 0.975], m, 0.5))
    return {"success_rate": p, "median_error": float(np.median(d)),
            "success_rate_se": math.sqrt(p * (1 - p) / m),
            "median_error_ci95": [float(d[max(lo - 1, 0)]), float(d[min(hi, m - 1)])],
            "method": f"Monte Carlo over {m:,} uniform (record, prior record) pairs"}


def default_radius(prior: np.ndarray, rng: np.random.Generator, n_pairs: int = 2000) -> float:
    """A tenth of the median distance between public prior records (data scale, not private)."""
    i = rng.integers(len(prior), size=n_pairs)
    j = rng.integers(len(prior), size=n_pairs)
    return max(0.1 * float(np.median(np.linalg.norm(prior[i] - prior[j], axis=1))), 1e-9)
