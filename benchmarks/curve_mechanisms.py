"""The mechanisms of ``bench_curves``: correct and wrong releases under claims in zCDP, GDP and a privacy profile.

Each is a plain release function of the records (``release(X, rng)``) with the claim it is audited against
set by the bench (:func:`benchmarks.bench_curves.rows`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpaudit.mechanisms.base import PrivacyClaim, Vector
from dpaudit.mechanisms.notions import PrivacyProfile

BINS = 4  # the selection mechanisms choose one of 4 equal bins of [0, 1]


class GaussianSum:
    """Σ clip(x, 0, 1) + N(0, σ²): sensitivity 1 (add-remove), exactly (1/σ)-GDP and 1/(2σ²)-zCDP."""

    def __init__(self, name: str, sigma: float, claim: PrivacyClaim) -> None:
        self.name, self.sigma, self.claim = name, sigma, claim

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector(np.array([np.clip(X, 0.0, 1.0).sum() + rng.normal(0.0, self.sigma)]))


def _counts(X: np.ndarray) -> np.ndarray:
    return np.bincount(np.clip((np.asarray(X)[:, 0] * BINS).astype(int), 0, BINS - 1), minlength=BINS).astype(float)


class ExponentialMechanism:
    """Selects one of 4 bins of [0, 1] with probability ∝ exp(ε·``scale``·count).  At ``scale`` ½ it is ε-DP and
    ε-bounded-range, so ε²/8-zCDP (Cesar & Rogers 2021).  At ``scale`` 1 it is still ε-bounded-range under
    add-remove — a count is monotone (adding a record raises one count by one, so the privacy loss ranges
    over [−c, ε − c]) — and so still ε²/8-zCDP: its worst ρ over all count vectors is 0.1233 < 0.125
    (computed exactly, max over orders of D_α/α); under replace it would be 2ε-bounded-range (ρ = ε²/2)."""

    def __init__(self, name: str, epsilon: float, claim: PrivacyClaim, scale: float = 0.5) -> None:
        self.name, self.epsilon, self.claim, self.scale = name, epsilon, claim, scale

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        counts = _counts(X)
        w = np.exp(self.epsilon * self.scale * (counts - counts.max()))
        return Vector(np.array([float(rng.choice(BINS, p=w / w.sum()))]))


class ReportNoisyMax:
    """The bin of the largest noisy count, noise Laplace(1/ε) or one-sided exponential(1/ε) on each count:
    ε-DP for monotone counts (Dwork & Roth 2014, Claim 3.9; permute-and-flip, McKenna & Sheldon 2020), but not
    ε²/8-zCDP — that figure holds for the Gumbel noise (the exponential mechanism), not these.  Computed exactly
    at ε = 1 (max over orders of D_α/α over count vectors): ρ = 0.147 (Laplace: 4 tied counts, one raised) and
    0.260 (exponential: two tied counts), the best event's gap below the ρ = 1/8 curve 0.021 and 0.110."""

    def __init__(self, name: str, epsilon: float, claim: PrivacyClaim, noise: str) -> None:
        self.name, self.epsilon, self.claim, self.noise = name, epsilon, claim, noise

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        scale = 1.0 / self.epsilon
        noise = rng.laplace(0.0, scale, BINS) if self.noise == "laplace" else rng.exponential(scale, BINS)
        return Vector(np.array([float(np.argmax(_counts(X) + noise))]))


# --- a clustering step with Gaussian noise, calibrated with dp-accounting ------------------------------------
CENTRES = np.array([[0.25, 0.25], [0.75, 0.75]])  # the public initial centres of the one Lloyd step
SENSITIVITY = math.sqrt(3.0)  # one record in [0, 1]² moves one cluster's (sum, count) by at most √(2 + 1) in L2
PROFILE_EPSILONS = tuple(float(e) for e in np.linspace(0.0, 8.0, 33))


@functools.lru_cache(maxsize=8)
def gaussian_sigma(epsilon: float, delta: float = 1e-5) -> float:
    """The smallest σ (to 0.1 %) whose Gaussian mechanism of :data:`SENSITIVITY` is (ε, δ)-DP, by dp-accounting's
    exact Gaussian privacy loss (Balle & Wang 2018)."""
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss
    lo, hi = 1e-3, 1e3
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        ok = GaussianPrivacyLoss(mid, sensitivity=SENSITIVITY).get_delta_for_epsilon(epsilon) <= delta
        lo, hi = (lo, mid) if ok else (mid, hi)
    return hi


@functools.lru_cache(maxsize=8)
def gaussian_profile(sigma: float) -> PrivacyProfile:
    """The privacy profile dp-accounting states for that Gaussian mechanism, at :data:`PROFILE_EPSILONS`."""
    from dp_accounting.pld import privacy_loss_distribution
    pld = privacy_loss_distribution.from_gaussian_mechanism(sigma, sensitivity=SENSITIVITY)
    return PrivacyProfile.from_pld(pld, PROFILE_EPSILONS)


class NoisyLloydStep:
    """One step of k-means (Lloyd) on records in [0, 1]² from public centres, each cluster's sum and count with
    N(0, σ²) noise, the new centres released (noisy sum / max(noisy count, 1)).  With σ =
    :func:`gaussian_sigma` (ε) it meets its dp-accounting profile; with σ for 10·ε it does not."""

    def __init__(self, name: str, sigma: float, claim: PrivacyClaim) -> None:
        self.name, self.sigma, self.claim = name, sigma, claim

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        X = np.clip(np.asarray(X, dtype=float)[:, :2], 0.0, 1.0)
        near = np.argmin(((X[:, None, :] - CENTRES[None]) ** 2).sum(axis=2), axis=1)
        out = []
        for j in range(len(CENTRES)):
            members = X[near == j]
            total = members.sum(axis=0) + rng.normal(0.0, self.sigma, 2)
            count = len(members) + rng.normal(0.0, self.sigma)
            out.append(total / max(count, 1.0))
        return Vector(np.concatenate(out))
