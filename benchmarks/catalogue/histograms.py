"""Noisy histograms (StatDP: Ding, Wang, Wang, Zhang & Kifer, "Detecting
Violations of Differential Privacy", CCS 2018, Alg. 9 and 10; DP-Sniper's
``NoisyHist1``/``NoisyHist2``).

Query: :class:`~benchmarks.catalogue.queries.Histogram` over 5 bins (a record
adds 1 to one bin; ‖Δq‖₁ ≤ 1 under add-remove).  Release: the 5 noisy counts.
"""

from __future__ import annotations

from .base import LaplaceOnAnswers
from .queries import Histogram

__all__ = ["NoisyHist1", "NoisyHist2"]


class NoisyHist1(LaplaceOnAnswers):
    """Alg. 9: every bin + Lap(1/ε).  Claimed ε; true ε = ε (L1 sensitivity 1, Laplace
    mechanism — Dwork & Roth 2014, Thm 3.6; tight on a one-bin change)."""

    name = "NoisyHist1"
    source = "Ding et al. CCS 2018, Alg. 9"

    def __init__(self, epsilon: float = 0.1, bins: int = 5) -> None:
        super().__init__(epsilon)
        self.query = Histogram(int(bins))

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (self.epsilon, self.epsilon)


class NoisyHist2(NoisyHist1):
    """Alg. 10 (deliberately wrong): every bin + Lap(ε) — the scale is ε instead of 1/ε.
    Claimed ε; true ε = Δ/scale = 1/ε (10 at ε = 0.1): a one-bin change of 1 against
    Laplace noise of scale ε."""

    name = "NoisyHist2"
    source = "Ding et al. CCS 2018, Alg. 10"

    @property
    def true_epsilon(self) -> tuple[float, float]:
        return (1.0 / self.epsilon, 1.0 / self.epsilon)

    @property
    def noise_scale(self) -> float:
        return self.epsilon
