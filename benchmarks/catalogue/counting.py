"""Scalar and summing mechanisms of DP-Sniper's catalogue: the Laplace mechanism,
twenty Laplace mechanisms in parallel, PrefixSum, and the truncated geometric
mechanism.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

from .base import CatalogueMechanism, LaplaceOnAnswers, laplace
from .queries import ClippedSums, IntegerSum, StreamSums

__all__ = ["LaplaceMechanism", "LaplaceParallel", "PrefixSum", "PrefixSumStream", "TruncatedGeometric"]


class LaplaceMechanism(LaplaceOnAnswers):
    """The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006) on q = Σ clip(x, −1, 1):
    q + Lap(1/ε).  Sensitivity 1; claimed ε; true ε = ε."""

    name = "LaplaceMechanism"
    source = "Dwork et al. 2006; DP-Sniper's LaplaceMechanism"

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__(epsilon)
        self.query = ClippedSums(1)

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (self.epsilon, self.epsilon)


class LaplaceParallel(CatalogueMechanism):
    """DP-Sniper's ``LaplaceParallel``: ``n_parallel`` independent Laplace mechanisms on the
    same sensitivity-1 answer, each at ε/n_parallel (DP-Sniper: 20 × 0.005).
    Claimed ε (sequential composition); true ε = ε (the n_parallel log-likelihood
    ratios add up to n_parallel·(ε/n_parallel) in the tails)."""

    name = "LaplaceParallel"
    source = "DP-Sniper (Bichsel et al. S&P 2021), LaplaceParallel"

    def __init__(self, epsilon: float = 0.1, n_parallel: int = 20) -> None:
        super().__init__(epsilon)
        self.n_parallel = int(n_parallel)
        if self.n_parallel < 1:
            raise InvalidInputError("n_parallel must be ≥ 1")
        self.query = ClippedSums(1)

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (self.epsilon, self.epsilon)

    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        scale = self.n_parallel / self.epsilon
        return answers[0] + laplace(rng, scale, (n, self.n_parallel))


class PrefixSum(LaplaceOnAnswers):
    """PrefixSum (Wang et al. PLDI 2019): noisy answers q_i + Lap(1/ε), released as their
    prefix sums — run as DP-Sniper ran it, on component-wise neighbours.

    Claimed ε.  The paper's claim is for streams where one record changes one
    answer (:class:`PrefixSumStream`); when one record may move every answer by
    1 (the inputs DP-Sniper and StatDP gave it), the noisy answers have L1
    sensitivity m and the prefix sums are an invertible map of them, so the
    true ε = m·ε (1.0 for m = 10, ε = 0.1), attained by shifting every answer.
    """

    name = "PrefixSum"
    source = "Wang et al. PLDI 2019 (ShadowDP), run on DP-Sniper's component-wise inputs"

    def __init__(self, epsilon: float = 0.1, queries: int = 10) -> None:
        super().__init__(epsilon)
        self.query = ClippedSums(int(queries))

    @property
    def true_epsilon(self) -> tuple[float, float]:
        value = self.query.size * self.epsilon
        return (value, value)

    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.cumsum(super().respond(answers, rng, n), axis=1)


class PrefixSumStream(PrefixSum):
    """PrefixSum on the stream its paper assumes: a record adds to one answer
    (:class:`~benchmarks.catalogue.queries.StreamSums`, ‖Δq‖₁ ≤ 1).  Claimed ε;
    true ε = ε (Laplace mechanism with L1 sensitivity 1, then post-processing)."""

    name = "PrefixSum-stream"
    source = "Wang et al. PLDI 2019 (ShadowDP), single-entry stream"

    def __init__(self, epsilon: float = 0.1, queries: int = 10) -> None:
        super().__init__(epsilon, queries)
        self.query = StreamSums(int(queries))

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (self.epsilon, self.epsilon)


class TruncatedGeometric(CatalogueMechanism):
    """GeoSample (Balcer & Vadhan, "Differential Privacy on Finite Computers", ITCS 2018,
    Alg. 4.8), as ported by DP-Sniper: a count c ∈ {0, …, n} is released as z with
    P[z] ∝ (2^k/(2^k + 1))^{|z − c|} (mass beyond 0 and n folded onto them),
    sampled exactly with integers: u uniform on {1, …, D}, z = min{z : F(z) ≥ u}.

    k = ⌈ln(2/ε)⌉ as in DP-Sniper's port (natural log).  The paper's Thm 4.7
    states GeoSample is ln(1 + 2^{−k})-DP; that is the claim (0.1178 at
    ε = 0.1, n = 5), and the true ε — the largest |ln P_c[z] − ln P_{c±1}[z]|,
    computed exactly from the integer CDF in :meth:`true_epsilon` — equals it.
    Query: records contribute round(x₀) ∈ {0, 1}; c = min(count, n).
    """

    name = "TruncatedGeometric"
    source = "Balcer & Vadhan ITCS 2018, Alg. 4.8 (GeoSample)"

    def __init__(self, epsilon: float = 0.1, n: int = 5) -> None:
        super().__init__(epsilon)
        self.n = int(n)
        self.k = int(math.ceil(math.log(2.0 / self.epsilon)))
        self.d = (2 ** (self.k + 1) + 1) * (2 ** self.k + 1) ** (self.n - 1)
        if self.d >= 2 ** 62:
            raise InvalidInputError("epsilon too small or n too large: the integer sampler would overflow")
        self.query = IntegerSum(lo=0, hi=1, total_lo=0, total_hi=self.n)

    @property
    def claimed_epsilon(self) -> float:
        return math.log1p(2.0 ** -self.k)

    def cdf(self, c: int) -> np.ndarray:
        """F(z) for z = 0..n (integers, F(n) = D): DP-Sniper's ``_compute_f`` (Alg. 4.8 step 2)."""
        k, n, d = self.k, self.n, self.d
        f = [2 ** (k * (c - z)) * (2 ** k + 1) ** (n - (c - z)) for z in range(c)]
        f += [d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (n - 1 - (z - c)) for z in range(c, n)]
        return np.array(f + [d], dtype=np.int64)

    def pmf(self, c: int) -> np.ndarray:
        f = self.cdf(c)
        return np.diff(np.concatenate([[0], f])) / float(self.d)

    @property
    def true_epsilon(self) -> tuple[float, float]:
        worst = max(float(np.max(np.abs(np.log(self.pmf(c)) - np.log(self.pmf(c + 1)))))
                    for c in range(self.n))
        return (worst, worst)

    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        c = int(answers[0])
        u = rng.integers(1, self.d + 1, size=n, dtype=np.int64)
        return np.searchsorted(self.cdf(c), u, side="left").astype(float)[:, None]
