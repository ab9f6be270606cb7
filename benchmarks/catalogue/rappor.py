"""RAPPOR (Erlingsson, Pihur & Korolova, "RAPPOR: Randomized Aggregatable
Privacy-Preserving Ordinal Response", CCS 2014), as DP-Sniper ported it.

The value v(X) (an :class:`~benchmarks.catalogue.queries.IntegerSum`: each
record contributes round(x₀) ∈ {−1, 0, 1}) is hashed into a Bloom filter B
of k = 20 bits with h = 4 MurmurHash3 hashes of ``str(v)`` (seeds 0..h−1,
the signed 32-bit value modulo k, exactly as DP-Sniper's ``mmh3.hash``).
Step 2, the permanent randomised response: each bit becomes 1 with
probability f/2, 0 with probability f/2, and stays B_i otherwise.  Step 3
(full RAPPOR only), the instantaneous randomised response: report 1 with
probability q if the permanent bit is 1, p if it is 0.  Both are drawn fresh
for every release (each release is a new client), as in DP-Sniper's port.

RAPPOR's privacy holds for *any* two values, hence for every pair of
neighbouring datasets.  Bits are independent given B, so for two values
whose filters differ in d bits the exact ε is d·ln(r), r the per-bit ratio;
the worst case d = 2h gives the paper's figures (§3.1): one-time RAPPOR
ε∞ = 2h·ln((1 − f/2)/(f/2)), full RAPPOR ε₁ = h·ln(q*(1 − p*)/(p*(1 − q*)))
with q* = (1 − f/2)q + (f/2)p, p* = (f/2)q + (1 − f/2)p.  Those are the claims
and the true ε.
"""

from __future__ import annotations

import math

import numpy as np

from .base import CatalogueMechanism
from .queries import IntegerSum

__all__ = ["OneTimeRappor", "Rappor", "murmur3_32"]


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit (Appleby's reference), as an unsigned int."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & mask
    n_blocks = len(data) // 4
    for i in range(n_blocks):
        k = int.from_bytes(data[4 * i: 4 * i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[4 * n_blocks:]
    k = 0
    for i, byte in enumerate(tail):
        k |= byte << (8 * i)
    if tail:
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h


def _signed(h: int) -> int:
    return h - (1 << 32) if h >= 1 << 31 else h


class Rappor(CatalogueMechanism):
    """Full RAPPOR (steps 1–3): Bloom filter, permanent and instantaneous randomised response.
    DP-Sniper's defaults h = 4, k = 20, f = 0.75, p = 0.45, q = 0.55: claimed and true
    ε = ε₁ = 0.4 (worst pair of values); 0.05 per differing bit."""

    name = "Rappor"
    source = "Erlingsson et al. CCS 2014, steps 1-3"

    def __init__(self, n_hashes: int = 4, filter_size: int = 20, f: float = 0.75, p: float = 0.45,
                 q: float = 0.55) -> None:
        self.n_hashes, self.filter_size = int(n_hashes), int(filter_size)
        self.f, self.p, self.q = float(f), float(p), float(q)
        self.query = IntegerSum(lo=-1, hi=1)
        super().__init__(self.claimed_epsilon)

    def bloom(self, value: float) -> np.ndarray:
        """Step 1: the Bloom filter of str(value) (an int value prints as DP-Sniper's ``a.item(0)``)."""
        text = str(int(value)).encode()
        bits = np.zeros(self.filter_size)
        for i in range(self.n_hashes):
            bits[_signed(murmur3_32(text, i)) % self.filter_size] = 1.0
        return bits

    def per_bit_log_ratio(self) -> float:
        f, p, q = self.f, self.p, self.q
        q_star = (1 - f / 2) * q + (f / 2) * p
        p_star = (f / 2) * q + (1 - f / 2) * p
        return math.log(q_star * (1 - p_star) / (p_star * (1 - q_star))) / 2.0

    @property
    def claimed_epsilon(self) -> float:
        return 2 * self.n_hashes * self.per_bit_log_ratio()

    def pair_epsilon(self, v1: float, v2: float) -> float:
        """Exact ε between two values: (number of differing filter bits) × per-bit ratio."""
        return float(np.sum(self.bloom(v1) != self.bloom(v2))) * self.per_bit_log_ratio()

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (self.claimed_epsilon, self.claimed_epsilon)

    def permanent(self, bits: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        u = rng.random((n, bits.size))
        return np.where(u < self.f / 2, 1.0, np.where(u < self.f, 0.0, bits[None, :]))

    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        prr = self.permanent(self.bloom(answers[0]), rng, n)
        u = rng.random(prr.shape)
        return np.where(prr == 1.0, u < self.q, u < self.p).astype(float)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(h={self.n_hashes}, k={self.filter_size}, f={self.f:g})"


class OneTimeRappor(Rappor):
    """One-time RAPPOR (steps 1–2 only), DP-Sniper's default f = 0.95: claimed and true
    ε = ε∞ = 2h·ln((1 − f/2)/(f/2)) = 0.8007; 0.1001 per differing bit."""

    name = "OneTimeRappor"
    source = "Erlingsson et al. CCS 2014, steps 1-2"

    def __init__(self, n_hashes: int = 4, filter_size: int = 20, f: float = 0.95) -> None:
        super().__init__(n_hashes, filter_size, f)

    def per_bit_log_ratio(self) -> float:
        return math.log((1 - self.f / 2) / (self.f / 2))

    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.permanent(self.bloom(answers[0]), rng, n)
