"""Documented limits on what a run accepts: values, ε, dimension, the estimator's release size.

Each limit exists because past it the numbers stop meaning anything (float64
overflows into inf/NaN and a "no violation" would rest on garbage) or the run
cannot finish in memory; a value past a limit is refused in one line, never
clamped.  The README's command reference lists them.

=======================  =================  ==========================================================
limit                    value              why
=======================  =================  ==========================================================
:data:`MAX_ABS_VALUE`    1e150              distances square differences of records and sum them over
                                            the features: (2·1e150)² · 10⁷ features < 1.8e308, the
                                            float64 maximum; 1e308 overflows to inf at the first square
:data:`EPSILON_FLOOR`    1e-6               noise scales go as 1/ε; at ε = 1e-300 a Laplace or Gamma
                                            draw overflows, and below 1e-6 no finite sample certifies
                                            anything (the estimator's ceiling is far above ε)
:data:`MAX_FEATURES`     1,000              the mechanisms here are low-dimensional clusterings; the
                                            estimator's release features and the attacks' reference
                                            clustering grow with the dimension
:data:`MAX_RELEASE_...`  200,000 values     ε estimation draws thousands of releases of the whole
                                            dataset (records × features values each): 50 × 10,000
                                            took 494 s and 1.8 GB at 200 samples; use ``--records``
=======================  =================  ==========================================================
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

__all__ = ["EPSILON_FLOOR", "MAX_ABS_VALUE", "MAX_FEATURES", "MAX_RELEASE_VALUES", "MAX_TIME_BUDGET",
           "check_epsilon_floor", "check_estimation_size", "check_records_values"]

MAX_ABS_VALUE = 1e150
EPSILON_FLOOR = 1e-6
MAX_FEATURES = 1_000
MAX_RELEASE_VALUES = 200_000
MAX_TIME_BUDGET = 7 * 24 * 3600.0  # a week: a longer --time-budget is a typo, not a plan


def check_records_values(X: np.ndarray, name: str) -> None:
    """Refuse records whose squared distances would overflow, and more than :data:`MAX_FEATURES` columns."""
    if X.ndim == 2 and X.shape[1] > MAX_FEATURES:
        raise InvalidInputError(f"{name} has {X.shape[1]:,} features; dpaudit handles at most {MAX_FEATURES:,} "
                                "(drop or project columns first)")
    if X.size:
        largest = float(np.max(np.abs(X)))
        if largest > MAX_ABS_VALUE:
            raise InvalidInputError(f"{name} holds a value of magnitude {largest:.3g}; dpaudit accepts |value| ≤ "
                                    f"{MAX_ABS_VALUE:g} (squared distances would overflow): rescale the data, "
                                    "e.g. to other units")


def check_epsilon_floor(epsilon: float, name: str = "--eps") -> float:
    """Refuse a (finite, positive) ε below :data:`EPSILON_FLOOR`; ε = ∞ (a non-private baseline) passes."""
    eps = float(epsilon)
    if not math.isinf(eps) and eps < EPSILON_FLOOR:
        raise InvalidInputError(f"{name} = {eps:g} is below the smallest ε dpaudit audits, {EPSILON_FLOOR:g} "
                                "(noise of scale 1/ε overflows, and no sample could certify such an ε)")
    return eps


def check_estimation_size(n_records: int, n_features: int, what: str = "ε estimation") -> None:
    """Refuse data whose every release is more than :data:`MAX_RELEASE_VALUES` numbers (records × features)."""
    values = int(n_records) * int(n_features)
    if values > MAX_RELEASE_VALUES:
        raise InvalidInputError(f"{what} draws thousands of releases of the whole dataset, and {n_records:,} records "
                                f"× {n_features:,} features = {values:,} values each is more than the "
                                f"{MAX_RELEASE_VALUES:,} it handles; use --records (a seeded subset) or fewer "
                                "columns")
