"""Textbook controls: the Laplace and Gaussian mechanisms on a count or sum query.

They exist to calibrate the auditor: their true ε is known exactly, so an
estimator that reports a *violation* for them is unsound, and one that cannot
flag a mis-calibrated copy (``sensitivity`` stated too small) has no power.

Queries (on data X, n × d):

* ``count`` — the number of records, n.  Sensitivity 1 under add-remove
  (under ``replace`` the count never changes; the default sensitivity 1 is then
  an over-estimate, which keeps the claim true).
* ``sum`` — the per-feature sum of the records clipped to a *public* box
  ``bounds = (lo, hi)``.  Under add-remove one record contributes at most
  m_j = max(|lo_j|, |hi_j|) to feature j, so Δ₁ = Σ_j m_j and Δ₂ = ‖m‖₂; under
  replace it moves feature j by at most hi_j − lo_j, so Δ₁ = Σ_j (hi_j − lo_j)
  and Δ₂ = ‖hi − lo‖₂.

``sensitivity`` states the sensitivity explicitly (e.g. to build a flawed
control whose noise is too small: the claim then holds only if the stated
value is at least the true one).

* :class:`LaplaceControl` (``laplace``): adds Lap(Δ₁/ε) to every coordinate —
  ε-DP (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Thm 3.6).
* :class:`GaussianControl` (``gaussian``): adds N(0, σ²) to every coordinate,
  (ε, δ)-DP with σ from

  - ``calibration="analytic"`` (default): the smallest σ with
    Φ(Δ₂/(2σ) − εσ/Δ₂) − e^ε·Φ(−Δ₂/(2σ) − εσ/Δ₂) ≤ δ (Balle & Wang 2018,
    "Improving the Gaussian mechanism", Thm 8) — exact, any ε > 0;
  - ``calibration="classic"``: σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014,
    Thm A.1), proved only for ε < 1, so larger ε is rejected.

Both release a :class:`~dpaudit.mechanisms.base.Vector` and have a vectorised
``release_many``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from scipy import optimize, special

from .base import (
    InvalidInputError,
    PrivacyClaim,
    ReleaseBatch,
    Vector,
    check_bounds,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
)

__all__ = ["GaussianControl", "LaplaceControl", "analytic_gaussian_sigma", "classic_gaussian_sigma"]

Query = Literal["count", "sum"]


def _phi(x: float) -> float:
    return float(special.ndtr(x))


def _check_delta(delta: Any) -> float:
    """The Gaussian mechanism's δ as a float in (0, 1)."""
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InvalidInputError(f"delta must be a number, got {delta!r}") from None
    if not 0.0 < value < 1.0:
        raise InvalidInputError(f"delta must be in (0, 1) for the Gaussian mechanism, got {delta!r}")
    return value


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ for which N(0, σ²) noise is (ε, δ)-DP at L2 sensitivity Δ (Balle & Wang 2018, Thm 8)."""
    eps = check_epsilon(epsilon)
    delta = _check_delta(delta)
    sens = float(check_positive(sensitivity, name="sensitivity"))

    def excess(log_sigma: float) -> float:
        s = math.exp(log_sigma) / sens  # σ in units of Δ
        a, b = 1.0 / (2.0 * s), eps * s
        # Φ(a − b) − e^ε Φ(−a − b) − δ, with the second term in log space for large ε.
        second = math.exp(eps + float(special.log_ndtr(-a - b)))
        return _phi(a - b) - second - delta

    lo, hi = math.log(sens) - 20.0, math.log(sens) + 20.0
    return float(math.exp(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12)))


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; valid for ε < 1)."""
    eps = check_epsilon(epsilon)
    if eps >= 1.0:
        raise InvalidInputError(
            f"the classic Gaussian calibration is proved only for epsilon < 1 (got {eps:g}); "
            "use calibration='analytic'")
    delta = _check_delta(delta)
    return float(sensitivity) * math.sqrt(2.0 * math.log(1.25 / delta)) / eps


class _QueryControl:
    """Shared query evaluation and sensitivity for the controls."""

    name = "control"
    _norm = 1  # which Lp sensitivity the noise needs

    def __init__(self, epsilon: float, *, query: Query = "count", bounds: tuple[object, object] | None = None,
                 sensitivity: float | None = None, neighbours: str = "add-remove", delta: float = 0.0) -> None:
        self.epsilon = check_epsilon(epsilon)
        if query not in ("count", "sum"):
            raise InvalidInputError(f"query must be 'count' or 'sum', got {query!r}")
        if neighbours not in ("add-remove", "replace"):
            raise InvalidInputError(f"the controls support add-remove or replace neighbours, got {neighbours!r}")
        if query == "sum" and bounds is None:
            raise InvalidInputError("query='sum' needs public bounds (lo, hi) to clip the records to")
        self.query = query
        self.bounds = bounds
        if bounds is not None:
            check_bounds(bounds)
        self.neighbours = neighbours
        self.sensitivity = None if sensitivity is None else float(check_positive(sensitivity, name="sensitivity"))
        self.claim = PrivacyClaim(self.epsilon, delta, neighbours)

    def query_sensitivity(self, d: int) -> float:
        """The stated sensitivity, or the query's true one (see the module doc)."""
        if self.sensitivity is not None:
            return self.sensitivity
        if self.query == "count":
            return 1.0
        lo, hi = check_bounds(self.bounds, d)
        per = (hi - lo) if self.neighbours == "replace" else np.maximum(np.abs(lo), np.abs(hi))
        return float(np.sum(per) if self._norm == 1 else np.sqrt(np.sum(per ** 2)))

    def answer(self, X: np.ndarray) -> np.ndarray:
        """The exact query answer (a length-1 vector for count, length d for sum)."""
        if self.query == "count":
            return np.array([float(X.shape[0])])
        lo, hi = check_bounds(self.bounds, X.shape[1])
        return np.clip(X, lo, hi).sum(axis=0)

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
        raise NotImplementedError

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        X = check_data(X, min_rows=1)
        exact = self.answer(X)
        return Vector(exact + self._noise(check_rng(rng), exact.shape, X.shape[1]))

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        """``n`` independent releases in one draw, shape (n, len(answer))."""
        X = check_data(X, min_rows=1)
        exact = self.answer(X)
        noise = self._noise(check_rng(rng), (int(n), exact.size), X.shape[1])
        return ReleaseBatch("vector", exact[None, :] + noise)


class LaplaceControl(_QueryControl):
    """The Laplace mechanism: query + Lap(Δ₁/ε) per coordinate; ε-DP (Dwork & Roth 2014, Thm 3.6).

    Examples
    --------
    >>> import numpy as np
    >>> m = LaplaceControl(epsilon=1.0)
    >>> m.release(np.zeros((5, 2)), np.random.default_rng(0)).values.shape
    (1,)
    """

    name = "laplace"
    _norm = 1

    def __init__(self, epsilon: float, *, query: Query = "count", bounds: tuple[object, object] | None = None,
                 sensitivity: float | None = None, neighbours: str = "add-remove") -> None:
        super().__init__(epsilon, query=query, bounds=bounds, sensitivity=sensitivity, neighbours=neighbours)

    def scale(self, d: int) -> float:
        return self.query_sensitivity(d) / self.epsilon

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
        return rng.laplace(0.0, self.scale(d), size=shape)

    def __repr__(self) -> str:
        return f"LaplaceControl(epsilon={self.epsilon:g}, query={self.query!r})"


class GaussianControl(_QueryControl):
    """The Gaussian mechanism: query + N(0, σ²) per coordinate; (ε, δ)-DP (see the module doc)."""

    name = "gaussian"
    _norm = 2

    def __init__(self, epsilon: float, delta: float = 1e-5, *, query: Query = "count",
                 bounds: tuple[object, object] | None = None, sensitivity: float | None = None,
                 neighbours: str = "add-remove",
                 calibration: Literal["analytic", "classic"] = "analytic") -> None:
        delta = _check_delta(delta)
        if calibration not in ("analytic", "classic"):
            raise InvalidInputError(f"calibration must be 'analytic' or 'classic', got {calibration!r}")
        super().__init__(epsilon, query=query, bounds=bounds, sensitivity=sensitivity,
                         neighbours=neighbours, delta=delta)
        self.delta = delta
        self.calibration = calibration
        if calibration == "classic":
            classic_gaussian_sigma(self.epsilon, delta)  # validate ε < 1 at construction
        self._sigma_cache: dict[int, float] = {}

    def sigma(self, d: int) -> float:
        if d not in self._sigma_cache:
            fn = analytic_gaussian_sigma if self.calibration == "analytic" else classic_gaussian_sigma
            self._sigma_cache[d] = fn(self.epsilon, self.delta, self.query_sensitivity(d))
        return self._sigma_cache[d]

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
        return rng.normal(0.0, self.sigma(d), size=shape)

    def __repr__(self) -> str:
        return (f"GaussianControl(epsilon={self.epsilon:g}, delta={self.delta:g}, query={self.query!r}, "
                f"calibration={self.calibration!r})")
