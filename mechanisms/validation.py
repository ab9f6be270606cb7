"""Validation at the boundary, scikit-learn style, and the privacy-leak warning.

Every check raises :class:`InvalidInputError` (a ``ValueError``) with a message
that says what is wrong and how to fix it; the CLI prints it as one line with
exit code 2.  Parameters derived from the private data are announced with
:class:`PrivacyLeakWarning` (diffprivlib's convention) through
:func:`warn_privacy_leak`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

__all__ = [
    "InvalidInputError",
    "PrivacyLeakWarning",
    "check_bounds",
    "check_clusters",
    "check_data",
    "check_epsilon",
    "check_positive",
    "check_rng",
    "random_state_from",
    "warn_privacy_leak",
]


class InvalidInputError(ValueError):
    """A user mistake: bad data, a bad parameter or an unknown name."""


class PrivacyLeakWarning(UserWarning):
    """A parameter was derived from the private data (bounds, n, scale).

    Same convention as diffprivlib: the mechanism still runs, but its privacy
    claim no longer covers the data-derived parameter, and reports say so.
    """


def warn_privacy_leak(message: str, stacklevel: int = 3) -> None:
    """Emit a :class:`PrivacyLeakWarning` (one place, one wording)."""
    warnings.warn(message, PrivacyLeakWarning, stacklevel=stacklevel)


# --------------------------------------------------------------------------- #
# Validation
# --------------------------------------------------------------------------- #
def check_epsilon(epsilon: Any, *, name: str = "epsilon", allow_inf: bool = False) -> float:
    """Return ``epsilon`` as a float after checking ε > 0 and finite."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number, got {epsilon!r}") from None
    if math.isnan(value):
        raise InvalidInputError(f"{name} must be a number, got NaN")
    if value <= 0:
        raise InvalidInputError(f"{name} must be > 0, got {value:g}")
    if math.isinf(value) and not allow_inf:
        raise InvalidInputError(f"{name} must be finite, got {value:g}")
    return value


def check_positive(value: Any, *, name: str, integer: bool = False, minimum: float = 0.0,
                   inclusive: bool = False) -> float | int:
    """Check a numeric hyper-parameter is finite and above ``minimum``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InvalidInputError(f"{name} must be finite, got {value!r}")
    if integer and number != int(number):
        raise InvalidInputError(f"{name} must be a whole number, got {value!r}")
    ok = number >= minimum if inclusive else number > minimum
    if not ok:
        op = "≥" if inclusive else ">"
        raise InvalidInputError(f"{name} must be {op} {minimum:g}, got {number:g}")
    return int(number) if integer else number


def check_data(X: object, *, min_rows: int = 2, name: str = "X", n_features: int | None = None
               ) -> np.ndarray:
    """Validate a data matrix at the boundary, scikit-learn style.

    Returns a C-contiguous float64 array of shape (n, d).  Rejects non-numeric
    input, NaN/inf, anything not 2-D, fewer than ``min_rows`` rows, and a
    feature count different from ``n_features`` when given.
    """
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be numeric; it contains values that are not numbers") from None
    if arr.ndim == 1:
        raise InvalidInputError(
            f"{name} must be 2-D (n records × d features), got a 1-D array of length {arr.shape[0]}; "
            "use X.reshape(-1, 1) for a single feature")
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-D (n records × d features), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise InvalidInputError(f"{name} has no features (shape {arr.shape})")
    if arr.shape[0] < min_rows:
        what = "is empty" if arr.shape[0] == 0 else f"has {arr.shape[0]} row(s)"
        raise InvalidInputError(f"{name} {what}; at least {min_rows} records are needed")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInputError(
            f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]}); "
            "remove or impute those values first")
    if n_features is not None and arr.shape[1] != n_features:
        raise InvalidInputError(f"{name} has {arr.shape[1]} features, expected {n_features}")
    return np.ascontiguousarray(arr)


def check_bounds(bounds: Any, n_features: int | None = None, *, name: str = "bounds"
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Normalise a public box ``(lo, hi)`` (scalars or per-feature vectors).

    Returns two float arrays (broadcast to ``n_features`` when given) with
    ``lo < hi`` everywhere.
    """
    if bounds is None:
        raise InvalidInputError(f"{name} are required: give a public box (lo, hi) that does not come from the data")
    try:
        lo, hi = bounds
        lo_arr = np.atleast_1d(np.asarray(lo, dtype=np.float64))
        hi_arr = np.atleast_1d(np.asarray(hi, dtype=np.float64))
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a pair (lo, hi) of numbers or vectors, got {bounds!r}") from None
    if lo_arr.ndim != 1 or hi_arr.ndim != 1:
        raise InvalidInputError(f"{name} must be scalars or 1-D vectors")
    if n_features is not None:
        try:
            lo_arr = np.broadcast_to(lo_arr, (n_features,)).copy()
            hi_arr = np.broadcast_to(hi_arr, (n_features,)).copy()
        except ValueError:
            raise InvalidInputError(
                f"{name} have {max(lo_arr.size, hi_arr.size)} entries but the data has {n_features} features") from None
    if not (np.all(np.isfinite(lo_arr)) and np.all(np.isfinite(hi_arr))):
        raise InvalidInputError(f"{name} must be finite")
    if np.any(lo_arr >= hi_arr):
        raise InvalidInputError(f"{name} must satisfy lo < hi in every dimension, got {bounds!r}")
    return lo_arr, hi_arr


def check_clusters(count: int, X: np.ndarray, *, name: str = "n_clusters") -> None:
    """Reject asking for more clusters than ``X`` (already checked) has records."""
    if count > X.shape[0]:
        raise InvalidInputError(f"{name} = {count} is larger than the number of records ({X.shape[0]})")


def check_rng(rng: object) -> np.random.Generator:
    """Accept a Generator, a SeedSequence or an int seed; never global state."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (np.random.SeedSequence, int, np.integer)):
        return np.random.default_rng(rng)
    raise InvalidInputError(
        f"rng must be a numpy.random.Generator, SeedSequence or int seed, got {type(rng).__name__}")


def random_state_from(rng: np.random.Generator) -> int:
    """An int ``random_state`` for a library estimator, drawn from ``rng`` (never global state)."""
    return int(rng.integers(2**31 - 1))
