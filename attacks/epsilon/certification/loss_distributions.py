"""Privacy-loss distributions (PLDs) of Laplace and randomised-response draws, and their composition.

The loss L = ln(dP/dQ) of each draw is cut into bins of width ``step`` whose
masses under P (the release on D) and Q (on D′) are exact integrals, so every
threshold on the sum of bin indices of composed draws is an exact, achievable
event.  The perfect-test ceilings of :mod:`.ceilings` are computed from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import signal

from dpaudit.mechanisms.base import InvalidInputError

__all__ = ["LossDistribution", "compose", "laplace_composition", "laplace_loss", "randomized_response_loss"]

_MAX_BINS = 50_000_000


@dataclass(frozen=True, eq=False)
class LossDistribution:
    """A privacy-loss distribution on the grid ``step``·j, j = ``offset``, ``offset`` + 1, …

    ``p[i]`` and ``q[i]`` are the exact probabilities, under the release on D
    (P) and on D′ (Q), of the event "the loss falls in bin ``offset`` + i".
    """

    step: float
    offset: int
    p: np.ndarray
    q: np.ndarray

    @property
    def losses(self) -> np.ndarray:
        """The bin centres ``step``·j."""
        return self.step * (self.offset + np.arange(self.p.size))

    def compose(self, other: "LossDistribution") -> "LossDistribution":
        """The loss of the two releases together (independent draws): a convolution of bin masses."""
        if not math.isclose(self.step, other.step, rel_tol=1e-12):
            raise InvalidInputError("loss distributions composed on different grids")
        if self.p.size + other.p.size > _MAX_BINS:
            raise InvalidInputError("the composed loss distribution needs too many bins; use a coarser step")
        p = np.clip(signal.fftconvolve(self.p, other.p), 0.0, None)
        q = np.clip(signal.fftconvolve(self.q, other.q), 0.0, None)
        return LossDistribution(self.step, self.offset + other.offset, p, q)

    def swapped(self) -> "LossDistribution":
        """The same pair with D and D′ exchanged (loss negated)."""
        return LossDistribution(self.step, -(self.offset + self.p.size - 1), self.q[::-1].copy(),
                                self.p[::-1].copy())


def _grid(epsilon: float, step: float) -> tuple[int, np.ndarray]:
    J = int(math.ceil(epsilon / step - 1e-9))
    return J, np.arange(-J, J + 1)


def laplace_loss(epsilon: float, step: float) -> LossDistribution:
    """One Laplace draw whose mean moves by Δ with scale Δ/ε: loss (|y − Δ| − |y|)/b ∈ [−ε, ε].

    Under P (mean 0) the loss is ε with probability ½ (y ≤ 0), −ε with
    probability ½e^−ε (y ≥ Δ), and in between has density ¼e^−(ε−L)/2; under Q
    the density is e^−L times that.
    """
    eps = float(epsilon)
    if not eps > 0:
        raise InvalidInputError(f"epsilon must be > 0, got {epsilon!r}")
    J, j = _grid(eps, step)
    lo = np.clip((j - 0.5) * step, -eps, eps)
    hi = np.clip((j + 0.5) * step, -eps, eps)
    p = 0.5 * (np.exp(-(eps - hi) / 2.0) - np.exp(-(eps - lo) / 2.0))
    q = 0.5 * (np.exp(-(eps + lo) / 2.0) - np.exp(-(eps + hi) / 2.0))
    top, bottom = J + int(round(eps / step)), J - int(round(eps / step))
    p[top] += 0.5
    q[top] += 0.5 * math.exp(-eps)
    p[bottom] += 0.5 * math.exp(-eps)
    q[bottom] += 0.5
    return LossDistribution(step, -J, p, q)


def randomized_response_loss(epsilon: float, step: float) -> LossDistribution:
    """Randomised response RR(ε): loss ±ε with probabilities e^ε/(1 + e^ε) and 1/(1 + e^ε) under P.

    It is also the loss of a two-sided geometric (discrete Laplace) draw whose
    mean moves by one unit, and it dominates every ε-DP pair.
    """
    eps = float(epsilon)
    J, j = _grid(eps, step)
    p = np.zeros(j.size)
    q = np.zeros(j.size)
    hi = 1.0 / (1.0 + math.exp(-eps))
    top, bottom = J + int(round(eps / step)), J - int(round(eps / step))
    p[top], p[bottom] = hi, 1.0 - hi
    q[top], q[bottom] = 1.0 - hi, hi
    return LossDistribution(step, -J, p, q)


def compose(parts: Iterable[LossDistribution]) -> LossDistribution:
    """The loss of independent draws released together (balanced pairwise convolutions)."""
    items = list(parts)
    if not items:
        raise InvalidInputError("nothing to compose")
    while len(items) > 1:
        items = [items[i].compose(items[i + 1]) if i + 1 < len(items) else items[i]
                 for i in range(0, len(items), 2)]
    return items[0]


def laplace_composition(epsilons: Sequence[float], step: float | None = None) -> LossDistribution:
    """Exact (binned) loss of independent Laplace draws with per-draw ε_i = |shift_i|/scale_i.

    Draws whose shift is 0 carry no loss and are skipped.  ``step`` defaults to
    min ε_i / 200, at most Σε_i / 20,000.
    """
    eps = [float(e) for e in epsilons if e > 0]
    if not eps:
        raise InvalidInputError("no draw carries any privacy loss")
    if step is None:
        step = min(min(eps) / 200.0, sum(eps) / 20_000.0)
    # Draws with the same ε share one binned distribution (composed by repeated squaring).
    parts = []
    for e, k in sorted(_count(eps).items()):
        base = laplace_loss(e, step)
        parts.append(_power(base, k))
    return compose(parts)


def _count(values: Iterable[float]) -> dict[float, int]:
    out: dict[float, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _power(dist: LossDistribution, k: int) -> LossDistribution:
    result: LossDistribution | None = None
    base = dist
    while k:
        if k & 1:
            result = base if result is None else result.compose(base)
        k >>= 1
        if k:
            base = base.compose(base)
    if result is None:
        raise ValueError(f"a loss distribution's power must be at least 1, got {k}")
    return result
