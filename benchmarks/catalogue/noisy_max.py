"""Report-noisy-max variants (StatDP: Ding et al., CCS 2018, Alg. 5–8; DP-Sniper's
``ReportNoisyMax1``–``4``).

Query: :class:`~benchmarks.catalogue.queries.ClippedSums` over 5 queries
(component-wise neighbours: one record moves every answer by at most 1, in
either direction).  Noise of scale 2/ε, as in both papers' code: with changes
of either sign the argmax needs twice the noise of the monotone case
(Dwork & Roth 2014, Claim 3.9).  Release: the index of the noisy maximum
(RNM1/2, as a float) or its value (RNM3/4), a length-1 vector.
"""

from __future__ import annotations

import numpy as np

from .base import CatalogueMechanism, laplace
from .queries import ClippedSums

__all__ = ["ReportNoisyMax1", "ReportNoisyMax2", "ReportNoisyMax3", "ReportNoisyMax4"]


class _NoisyMax(CatalogueMechanism):
    returns_value = False

    def __init__(self, epsilon: float = 0.1, queries: int = 5) -> None:
        super().__init__(epsilon)
        self.query = ClippedSums(int(queries))

    def noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return laplace(rng, 2.0 / self.epsilon, shape)

    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        noisy = answers[None, :] + self.noise(rng, (n, answers.size))
        out = noisy.max(axis=1) if self.returns_value else np.argmax(noisy, axis=1).astype(float)
        return out[:, None]


class ReportNoisyMax1(_NoisyMax):
    """Alg. 5: argmax of answers + Lap(2/ε).  Claimed ε; true ε ≤ ε (report noisy max,
    Dwork & Roth 2014 Claim 3.9 with the factor 2 for non-monotone changes)."""

    name = "ReportNoisyMax1"
    source = "Ding et al. CCS 2018, Alg. 5"

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (0.0, self.epsilon)


class ReportNoisyMax2(_NoisyMax):
    """Alg. 6: argmax of answers + Exp(scale 2/ε).  Claimed ε; true ε ≤ ε (report noisy
    max with exponential noise is the exponential mechanism's "permute-and-flip"
    relative; ε-DP at scale 2Δ/ε — Ding et al. 2018 §6)."""

    name = "ReportNoisyMax2"
    source = "Ding et al. CCS 2018, Alg. 6"

    def noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.exponential(2.0 / self.epsilon, size=shape)

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (0.0, self.epsilon)


class ReportNoisyMax3(_NoisyMax):
    """Alg. 7 (deliberately wrong): releases the noisy maximum *value* with Lap(2/ε).

    Claimed ε; true ε = m·ε/2 (0.25 for m = 5 at ε = 0.1).  The density of
    the maximum is Σ_i f_i(x) Π_{j≠i} F_j(x); every Laplace density and CDF
    factor changes by at most e^{ε/2} when its answer moves by 1, so the
    ratio is at most e^{mε/2}; in the left tail f and F are both ∝ e^{x/b},
    so shifting every answer by 1 attains it.
    """

    name = "ReportNoisyMax3"
    source = "Ding et al. CCS 2018, Alg. 7"
    returns_value = True

    @property
    def true_epsilon(self) -> tuple[float, float]:
        value = self.query.size * self.epsilon / 2.0
        return (value, value)


class ReportNoisyMax4(_NoisyMax):
    """Alg. 8 (deliberately wrong): releases the noisy maximum *value* with Exp(2/ε).

    Claimed ε; true ε = ∞: exponential noise is one-sided, so the release is
    never below max_i q_i, and shifting every answer up by 1 makes the
    interval [max q, max q + 1) impossible on one input and possible on the
    other (with probability (1 − e^{−ε/2})^m ≈ 3·10⁻⁷ for m = 5, ε = 0.1, too
    rare to certify; the tail ratio below is what an auditor can reach).
    """

    name = "ReportNoisyMax4"
    source = "Ding et al. CCS 2018, Alg. 8"
    returns_value = True

    def noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.exponential(2.0 / self.epsilon, size=shape)

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (float("inf"), float("inf"))
