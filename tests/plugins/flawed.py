"""Mechanisms with a known flaw that the auditor must flag (plug-ins for its tests), and
correct counterparts with the same release shape that it must not flag.

``RawWithProbability``   the exact answer (count and clipped sum) with probability ``p``, else
                         the Laplace mechanism; claims (ε, δ) with δ < p — the δ part of the
                         claim is false: the event {v = exact answer on D} has probability p on
                         D and 0 on D′.
``RawPointsWithProbability`` the records themselves with probability ``p``, else nD-Laplace
                         noise (metric claim).
``ExactBelowTen``        a count that is exact when fewer than 10 records are present (a
                         "small data is not worth protecting" shortcut); Laplace otherwise.
``SensitivityTwoAsOne``  the sum of records clipped to [−1, 1] under replace neighbours (true
                         sensitivity 2) with noise for sensitivity 1: true ε = 2ε.
``PerRecordVector``      an output of length n: each record's first feature plus Laplace noise
                         for the box [−1, 1] (ε-DP under replace; under add-remove its length
                         reveals n).
``ExactInACorner``       a count that is exact only for datasets of 3–4 records with a high mean.
``SyntheticPoints``      n̂ synthetic points drawn uniformly from the public box, n̂ = n (flawed
                         under add-remove) or n̂ = max(0, round(n + Lap(1/ε))) (``noisy=True``:
                         ε-DP, post-processing of a noisy count) — a ragged release.
"""

from __future__ import annotations

import numpy as np

import dpaudit.mechanisms
from dpaudit.mechanisms.base import Points, PrivacyClaim, ReleaseBatch, Vector


class _VectorPlugin:
    """A vector mechanism with a stated claim; ``release`` is one row of ``release_many``."""

    neighbours = "add-remove"

    def __init__(self, epsilon: float = 1.0, delta: float = 0.0) -> None:
        self.epsilon = float(epsilon)
        self.claim = PrivacyClaim(self.epsilon, float(delta), self.neighbours)

    def release(self, X, rng):
        return Vector(self.release_many(X, rng, 1).array[0])



class RawWithProbability(_VectorPlugin):
    name = "raw-with-probability"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, p: float = 1e-3) -> None:
        super().__init__(epsilon, delta)
        self.p = float(p)

    def release_many(self, X, rng, n):
        exact = np.array([float(len(X)), np.clip(np.asarray(X)[:, 0], -1.0, 1.0).sum()])  # count, clipped sum
        noisy = exact[None, :] + rng.laplace(0.0, 2.0 / self.epsilon, size=(n, 2))  # ℓ1 sensitivity 2
        raw = rng.random(n) < self.p
        noisy[raw] = exact
        return ReleaseBatch("vector", noisy)


class RawPointsWithProbability:
    name = "raw-points-with-probability"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, p: float = 1e-3) -> None:
        self.inner = dpaudit.mechanisms.get("ndlaplace", epsilon=epsilon)
        self.p = float(p)
        self.claim = PrivacyClaim(float(epsilon), float(delta), "metric")

    def release(self, X, rng):
        return Points(self.release_many(X, rng, 1).array[0])

    def release_many(self, X, rng, n):
        P = np.array(self.inner.release_many(X, rng, n).array)
        raw = rng.random(n) < self.p
        P[raw] = X
        return ReleaseBatch("points", P)


class ExactBelowTen(_VectorPlugin):
    name = "exact-below-ten"

    def release_many(self, X, rng, n):
        noise = rng.laplace(0.0, 1.0 / self.epsilon, size=(n, 1))
        return ReleaseBatch("vector", len(X) + (noise if len(X) >= 10 else 0.0 * noise))


class SensitivityTwoAsOne(_VectorPlugin):
    name = "sensitivity-two-as-one"
    neighbours = "replace"

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__(epsilon)

    def release_many(self, X, rng, n):
        total = np.clip(np.asarray(X)[:, 0], -1.0, 1.0).sum()
        return ReleaseBatch("vector", total + rng.laplace(0.0, 1.0 / self.epsilon, size=(n, 1)))


class PerRecordVector(_VectorPlugin):
    name = "per-record-vector"

    def __init__(self, epsilon: float = 1.0, neighbours: str = "replace") -> None:
        self.neighbours = neighbours
        super().__init__(epsilon)

    def release_many(self, X, rng, n):
        x = np.clip(np.asarray(X)[:, 0], -1.0, 1.0)
        return ReleaseBatch("vector", x[None, :] + rng.laplace(0.0, 2.0 / self.epsilon, size=(n, x.size)))


class SyntheticPoints:
    name = "synthetic-points"

    def __init__(self, epsilon: float = 1.0, noisy: bool = True) -> None:
        self.epsilon = float(epsilon)
        self.noisy = bool(noisy)
        self.claim = PrivacyClaim(self.epsilon, 0.0, "add-remove")

    def release(self, X, rng):
        size = len(X)
        if self.noisy:
            size = max(0, int(round(size + rng.laplace(0.0, 1.0 / self.epsilon))))
        return Points(rng.uniform(-1.0, 1.0, size=(size, np.asarray(X).shape[1])))


class ExactInACorner(_VectorPlugin):
    """A count that is exact when the data set has 3 or 4 records whose mean lies in the upper
    part of [−1, 1]^d (first coordinate > 0.4): a leak only a search over whole small datasets
    finds — no construction from the user's data lands there."""

    name = "exact-in-a-corner"
    bounds = (-1.0, 1.0)

    def release_many(self, X, rng, n):
        X = np.asarray(X)
        exact = 3 <= len(X) <= 4 and X[:, 0].mean() > 0.4
        noise = rng.laplace(0.0, 1.0 / self.epsilon, size=(n, 1))
        return ReleaseBatch("vector", len(X) + (0.0 * noise if exact else noise))
