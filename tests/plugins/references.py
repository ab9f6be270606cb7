"""Correct Laplace-type references whose true ε is known exactly (plug-ins for the auditor's tests).

Each is a Mechanism (``name``, ``claim``, ``release``, vectorised
``release_many``) on a dataset X (n × d); the queries are counts of records
per bin of the first feature over *public* bin edges (records outside the
edges count in the end bins), so adding or removing one record — what the
auditor's add-remove pairs do — moves exactly one count by 1 (ℓ1 sensitivity 1).

``LaplaceCount``            n + Lap(1/ε).  Exactly ε-DP: the event {v ≥ n + 1} has ratio e^ε.
``NoisyHistogram``          every bin count + Lap(1/ε) (parallel composition).  Exactly ε-DP: one
                            bin moves by 1, and {v_j ≥ q_j + 1} on that bin has ratio e^ε.
``PrefixSum``               the prefix sums of the noisy counts (Wang et al. PLDI 2019, as in
                            DP-Sniper's catalogue).  An invertible post-processing of the noisy
                            histogram, so exactly ε-DP, with the loss in the successive
                            difference v_j − v_{j−1} of the changed bin.
``NumericalSparseVector``   sparse vector with numerical answers and a public threshold T: scan
                            the noisy counts in order; a count below T is "no answer" (NaN); the
                            first one at or above T is released and the scan stops (the rest are
                            −∞, "stopped").  A post-processing of the noisy histogram, so ε-DP;
                            exactly ε when T ≥ q_j + 1 for the changed bin j: the event {answered
                            at j with a value ≥ T} has ratio e^ε.
``RandomisedResponse``      Warner's randomised response on the bit [record 0 > 0] (replace
                            neighbours).  Exactly ε-DP: {output = 1} has ratio e^ε.  Its claim
                            may be set apart from its true ε (``claim_epsilon``).
``LyuNumericalSVT``         the textbook numerical sparse vector as in DP-Sniper's catalogue
                            (NumericalSVT, from Wang et al. PLDI 2019; c = 1): threshold noise
                            Lap(3/ε), comparison noise Lap(6/ε), answers Lap(3/ε), over the
                            cumulative counts (ℓ∞ sensitivity 1, all moving the same way).  ε-DP, but its analysis is not tight on any pair of
                            datasets (the threshold and comparison terms never add up for one
                            event), so it serves soundness tests only, never tightness ones.
"""

from __future__ import annotations

import numpy as np

from dpaudit.mechanisms.base import PrivacyClaim, ReleaseBatch, Vector

DEFAULT_EDGES = np.linspace(-1.0, 1.0, 5)  # 4 bins over [-1, 1]


class RandomisedResponse:
    """Warner's randomised response on the bit [record 0 > 0]: exactly ``epsilon``-DP (replace), tight.

    ``claim_epsilon`` (default: the true ε) is what it claims."""

    name = "randomised-response"

    def __init__(self, epsilon: float, claim_epsilon: float | None = None) -> None:
        self.claim = PrivacyClaim(float(epsilon if claim_epsilon is None else claim_epsilon), 0.0, "replace")
        self.keep = float(np.exp(epsilon) / (1.0 + np.exp(epsilon)))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector(self.release_many(X, rng, 1).array[0])

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        bit = float(np.asarray(X)[0, 0] > 0)
        flip = rng.random(n) >= self.keep
        return ReleaseBatch("vector", np.where(flip, 1.0 - bit, bit)[:, None])


class _Counts:
    """Shared query: counts of records per bin of feature 0."""

    name = "reference"

    def __init__(self, epsilon: float, edges: object = DEFAULT_EDGES) -> None:
        self.epsilon = float(epsilon)
        self.edges = np.asarray(edges, dtype=float)
        self.claim = PrivacyClaim(self.epsilon, 0.0, "add-remove")

    def counts(self, X: np.ndarray) -> np.ndarray:
        bins = np.clip(np.searchsorted(self.edges, np.asarray(X)[:, 0], side="right") - 1, 0, len(self.edges) - 2)
        return np.bincount(bins, minlength=len(self.edges) - 1).astype(float)

    def noisy(self, X: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        q = self.counts(X)
        return q[None, :] + rng.laplace(0.0, 1.0 / self.epsilon, size=(n, q.size))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector(self.release_many(X, rng, 1).array[0])

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        return ReleaseBatch("vector", self.output(self.noisy(X, rng, n)))

    def output(self, noisy: np.ndarray) -> np.ndarray:
        return noisy


class LaplaceCount(_Counts):
    name = "laplace-count"

    def noisy(self, X: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return len(X) + rng.laplace(0.0, 1.0 / self.epsilon, size=(n, 1))


class NoisyHistogram(_Counts):
    name = "noisy-histogram"


class PrefixSum(_Counts):
    name = "prefix-sum"

    def output(self, noisy: np.ndarray) -> np.ndarray:
        return np.cumsum(noisy, axis=1)


class NumericalSparseVector(_Counts):
    name = "numerical-sparse-vector"

    def __init__(self, epsilon: float, edges: object = DEFAULT_EDGES, threshold: float = 10.0) -> None:
        super().__init__(epsilon, edges)
        self.threshold = float(threshold)

    def output(self, noisy: np.ndarray) -> np.ndarray:
        above = noisy >= self.threshold
        first = np.where(above.any(axis=1), above.argmax(axis=1), noisy.shape[1])
        col = np.arange(noisy.shape[1])[None, :]
        out = np.where(col < first[:, None], np.nan, -np.inf)      # below: no answer; after: stopped
        return np.where(col == first[:, None], noisy, out)


class LyuNumericalSVT(_Counts):
    name = "lyu-numerical-svt"

    def __init__(self, epsilon: float, edges: object = DEFAULT_EDGES, threshold: float = 10.0) -> None:
        super().__init__(epsilon, edges)
        self.threshold = float(threshold)

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        # Cumulative counts (records with feature 0 at or above each edge): ℓ∞ sensitivity 1, monotone.
        q = np.cumsum(self.counts(X)[::-1])[::-1]
        eps = self.epsilon
        rho = rng.laplace(0.0, 3.0 / eps, size=(n, 1))
        nu = rng.laplace(0.0, 6.0 / eps, size=(n, q.size))
        answer = q[None, :] + rng.laplace(0.0, 3.0 / eps, size=(n, q.size))
        above = q[None, :] + nu >= self.threshold + rho
        first = np.where(above.any(axis=1), above.argmax(axis=1), q.size)
        col = np.arange(q.size)[None, :]
        out = np.where(col < first[:, None], np.nan, -np.inf)
        return ReleaseBatch("vector", np.where(col == first[:, None], answer, out))
