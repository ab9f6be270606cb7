"""nD-Laplace: planar Laplace (geo-indistinguishability) generalised to n dimensions.

Seed 000 (the thesis) §3.1 and Algorithm 1–2; Andrés et al., "Geo-
indistinguishability", CCS 2013.  Each record x is released as z = x + R·U with
density ∝ exp(−ε‖z − x‖₂):

* R ~ Gamma(shape = d, scale = 1/ε) — the radial law of that density in d
  dimensions (the surface of a d-sphere grows as r^(d−1));
* U uniform on the unit sphere S^(d−1) (a normalised standard normal vector).

For d = 2 the thesis draws R by inverting the CDF C_ε(r) = 1 − (1 + εr)e^(−εr)
(thesis eq. 3.2): r = −(1/ε)(W₋₁((p − 1)/e) + 1) with the −1 branch of Lambert
W; ``radius_sampler="lambertw"`` uses that path (it is the Gamma(2, 1/ε) law).

The claim is ε-d_x-privacy (``neighbours="metric"``): for records x, x' the
output densities differ by at most exp(ε‖x − x'‖₂).  Domain handling against a
*public* box:

* ``none`` — release z as is;
* ``clip`` — map z to the nearest point of the box (post-processing: keeps ε);
* ``resample`` — thesis Algorithm 1, redraw until z lies in the box.  The
  conditional density is renormalised by a constant that depends on x, which
  doubles the metric ε; a correct resample therefore draws at ε/2 so that the
  claim ε holds.

:class:`NDLaplaceThesis` is thesis Algorithm 2 *as printed*, a documented
flawed variant for the auditor to catch.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import special

from .base import (
    InvalidInputError,
    Points,
    PrivacyClaim,
    ReleaseBatch,
    check_bounds,
    check_data,
    check_epsilon,
    check_rng,
    warn_privacy_leak,
)

__all__ = ["NDLaplace", "NDLaplaceThesis", "lambertw_radius", "sample_noise"]

Domain = Literal["none", "clip", "resample"]
_MAX_RESAMPLE_ROUNDS = 10_000


def lambertw_radius(p: np.ndarray, epsilon: float) -> np.ndarray:
    """Thesis eq. 3.2 inverse CDF: r = −(1/ε)(W₋₁((p − 1)/e) + 1), p ∈ [0, 1)."""
    w = special.lambertw((np.asarray(p) - 1.0) / np.e, k=-1).real
    return -(w + 1.0) / epsilon


def _unit_directions(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n directions uniform on S^(d−1) (normalised Gaussian vectors), shape (n, d)."""
    return _directions_t(rng, n, d).T


def _directions_t(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Uniform directions laid out (d, n): each coordinate contiguous, so the
    normalisation is a few in-place passes (the hot path of ``release_many``)."""
    if d == 1:
        return np.where(rng.random((1, n)) < 0.5, -1.0, 1.0)
    g = rng.standard_normal((d, n))
    norm = g[0] * g[0]
    for j in range(1, d):  # d passes over n numbers, not a per-point loop
        norm += g[j] * g[j]
    np.sqrt(norm, out=norm)
    g /= norm
    return g


def _radii(rng: np.random.Generator, n: int, d: int, epsilon: float, sampler: str) -> np.ndarray:
    if sampler == "lambertw":
        return lambertw_radius(rng.random(n), epsilon)
    if d == 2:  # Gamma(2) = sum of two unit exponentials: cheaper than the gamma sampler
        e = rng.standard_exponential((2, n))
        r = e[0]
        r += e[1]
    else:
        r = rng.standard_gamma(d, n)
    r /= epsilon
    return r


def sample_noise(rng: np.random.Generator, n: int, d: int, epsilon: float,
                 sampler: str = "gamma") -> np.ndarray:
    """n noise vectors with density ∝ exp(−ε‖z‖₂) in d dimensions, shape (n, d).

    Returned as a transposed view of a (d, n) array; callers that need C order
    add it into a fresh array (see :meth:`NDLaplace._perturb`).
    """
    u = _directions_t(rng, n, d)
    u *= _radii(rng, n, d, epsilon, sampler)
    return u.T


def _truncated_radii(rng: np.random.Generator, r_max: np.ndarray, d: int, epsilon: float) -> np.ndarray:
    """Gamma(d, 1/ε) radii conditioned on R ≤ r_max (inverse CDF).

    Exact speed-up for ``resample``: a point farther than the farthest box
    corner is always rejected, so drawing R from the law truncated there
    leaves the accepted distribution unchanged and raises the acceptance rate.
    """
    cdf_max = special.gammainc(d, epsilon * r_max)
    u = rng.random(r_max.shape) * cdf_max
    return special.gammaincinv(d, u) / epsilon


def _resample_inside(X: np.ndarray, Z: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                     rng: np.random.Generator, epsilon: float) -> np.ndarray:
    """Redraw the rows of Z outside [lo, hi] until all are inside (vectorised)."""
    d = X.shape[1]
    corner_far = np.maximum(np.abs(X - lo), np.abs(hi - X))
    r_max = np.sqrt(np.einsum("ij,ij->i", corner_far, corner_far))
    outside = np.flatnonzero(np.any((Z < lo) | (Z > hi), axis=1))
    for _ in range(_MAX_RESAMPLE_ROUNDS):
        if outside.size == 0:
            return Z
        u = _unit_directions(rng, outside.size, d)
        r = _truncated_radii(rng, r_max[outside], d, epsilon)
        Z[outside] = X[outside] + u * r[:, None]
        still = np.any((Z[outside] < lo) | (Z[outside] > hi), axis=1)
        outside = outside[still]
    raise RuntimeError(
        f"resampling did not bring {outside.size} point(s) inside the box after "
        f"{_MAX_RESAMPLE_ROUNDS} rounds; the box is too small for this ε")


class NDLaplace:
    """nD-Laplace perturbation of every record (thesis §3.1).

    Parameters
    ----------
    epsilon : float, optional
        Metric privacy parameter (per unit of Euclidean distance).  Give
        either ``epsilon`` or both ``level`` and ``radius``.
    level, radius : float, optional
        The thesis's parameterisation: privacy level l within radius r,
        ε = l / r (thesis §3.1.3).
    domain : {"none", "clip", "resample"}
        What to do with perturbed points outside the public ``bounds``.
    bounds : (lo, hi), optional
        Public box (scalars or per-feature vectors); required by ``clip`` and
        ``resample``.  Never derived from the data.
    radius_sampler : {"gamma", "lambertw"}
        ``lambertw`` is the thesis's 2-D inverse-CDF path (d = 2 only).
    """

    name = "ndlaplace"

    def __init__(self, epsilon: float | None = None, *, level: float | None = None,
                 radius: float | None = None, domain: Domain = "none",
                 bounds: tuple[object, object] | None = None,
                 radius_sampler: Literal["gamma", "lambertw"] = "gamma") -> None:
        if epsilon is None:
            if level is None or radius is None:
                raise InvalidInputError("give epsilon, or both level and radius (ε = level / radius)")
            epsilon = check_epsilon(level, name="level") / check_epsilon(radius, name="radius")
        elif level is not None or radius is not None:
            raise InvalidInputError("give either epsilon or level and radius, not both")
        self.epsilon = check_epsilon(epsilon)
        self.level, self.radius = level, radius
        if domain not in ("none", "clip", "resample"):
            raise InvalidInputError(f"domain must be none, clip or resample; got {domain!r}")
        if domain != "none" and bounds is None:
            raise InvalidInputError(f"domain={domain!r} needs public bounds (lo, hi)")
        self.domain = domain
        self.bounds = bounds
        if bounds is not None:
            check_bounds(bounds)
        if radius_sampler not in ("gamma", "lambertw"):
            raise InvalidInputError(f"radius_sampler must be gamma or lambertw; got {radius_sampler!r}")
        self.radius_sampler = radius_sampler
        self.claim = PrivacyClaim(self.epsilon, 0.0, "metric")

    @property
    def sampling_epsilon(self) -> float:
        """The ε the noise is drawn at: ε/2 for ``resample`` (see module doc)."""
        return self.epsilon / 2.0 if self.domain == "resample" else self.epsilon

    def _perturb(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n, d = X.shape
        if self.radius_sampler == "lambertw" and d != 2:
            raise InvalidInputError("radius_sampler='lambertw' is the 2-D path; the data has d = %d" % d)
        eps = self.sampling_epsilon
        Z = np.add(X, sample_noise(rng, n, d, eps, self.radius_sampler), out=np.empty((n, d)))
        if self.domain == "none":
            return Z
        lo, hi = check_bounds(self.bounds, d)
        if self.domain == "clip":
            return np.clip(Z, lo, hi, out=Z)
        if np.any((X < lo) | (X > hi)):
            raise InvalidInputError("domain='resample' needs every record inside the public bounds")
        return _resample_inside(X, Z, lo, hi, rng, eps)

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Points:
        """Perturb every record of X independently."""
        X = check_data(X, min_rows=1)
        return Points(self._perturb(X, check_rng(rng)))

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        """``n`` independent releases in one vectorised draw, shape (n, N, d)."""
        X = check_data(X, min_rows=1)
        rng = check_rng(rng)
        N, d = X.shape
        tiled = np.broadcast_to(X, (n, N, d)).reshape(n * N, d)  # a view when N == 1
        Z = self._perturb(tiled, rng)
        return ReleaseBatch("points", Z.reshape(n, N, d))

    def __repr__(self) -> str:
        extra = "" if self.domain == "none" else f", domain={self.domain!r}, bounds={self.bounds!r}"
        return f"NDLaplace(epsilon={self.epsilon:g}{extra})"


class NDLaplaceThesis(NDLaplace):
    """FLAWED on purpose: thesis Algorithm 2 exactly as printed (the nD-Laplace thesis §5.3.4).

    What differs from :class:`NDLaplace`, and why each breaks the claim:

    1. the first draw's angle comes from [0, π/2] (in n dimensions: a
       direction in the positive orthant), so noise points one way — the
       output's location reveals x far beyond exp(ε·distance); Algorithm 1's
       redraws call LP(ε, x) of formula 3.3, whose angle spans [0, 2π);
    2. the box is the data's own min/max (``bounds=None``), a data-derived
       parameter (a :class:`PrivacyLeakWarning` is raised);
    3. resampling into that box (Algorithm 1) draws at ε, not ε/2,
    while still claiming ε-geo-indistinguishability.  The auditor must flag
    it; it is shipped as a real published algorithm to test against.
    """

    name = "ndlaplace-thesis"

    def __init__(self, epsilon: float | None = None, *, level: float | None = None,
                 radius: float | None = None, bounds: tuple[object, object] | None = None,
                 radius_sampler: Literal["gamma", "lambertw"] = "gamma") -> None:
        super().__init__(epsilon, level=level, radius=radius, domain="none", bounds=bounds,
                         radius_sampler=radius_sampler)
        self.domain = "resample"  # Algorithm 1, at the full ε (the flaw)

    @property
    def sampling_epsilon(self) -> float:
        return self.epsilon

    def _perturb(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n, d = X.shape
        if self.bounds is None:
            warn_privacy_leak("ndlaplace-thesis: the resampling box is the data's min/max "
                              "(thesis Algorithm 2); pass public bounds to avoid the leak")
            lo, hi = X.min(axis=0), X.max(axis=0)
            span = np.where(hi > lo, 0.0, 1.0)  # a degenerate box would never accept
            lo, hi = lo - span, hi + span
        else:
            lo, hi = check_bounds(self.bounds, d)
        if self.radius_sampler == "lambertw" and d == 2:
            r = lambertw_radius(rng.random(int(n)), self.epsilon)
        else:
            r = rng.standard_gamma(d, int(n)) / self.epsilon
        u = np.abs(_unit_directions(rng, n, d))  # θ ∈ [0, π/2]: positive orthant only
        Z = X + u * r[:, None]
        # Algorithm 1 redraws with LP(ε, x) — formula 3.3, θ ∈ [0, 2π) — until inside.
        return _resample_inside(np.clip(X, lo, hi), Z, lo, hi, rng, self.epsilon)

    def __repr__(self) -> str:
        return f"NDLaplaceThesis(epsilon={self.epsilon:g})"
