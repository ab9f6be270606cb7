"""The catalogue mechanism: a query vector from the dataset, then the paper's
randomised response to it, vectorised over releases.

Every catalogue mechanism is a :class:`~dpaudit.mechanisms.base.Mechanism` whose
release is a :class:`~dpaudit.mechanisms.base.Vector`: ``release_many(X, rng, n)``
draws n independent releases in one vectorised call (a loop over the handful
of *queries* is allowed, never over releases) and ``release`` is
``release_many(X, rng, 1)[0]``, so the same seed gives the same numbers on
either path.

Encoding of sparse-vector outputs (the papers write ⊤, ⊥ and "abort"):
⊤ = 1.0, ⊥ = 0.0, and NaN where the mechanism gives no answer (the queries
after it aborted, and in SVT3 the queries answered ⊥, which release no
number).  Numeric answers are released as numbers.  DP-Sniper's port uses the
sentinels −1 (aborted), −1000/−2000 (⊥/aborted in SVT3) instead of NaN.

``true_epsilon`` is (lo, hi): the mechanism's real privacy level for the
claim's neighbour relation, exact when lo == hi; the class docstrings say
where each number comes from.  ``is_correct`` says whether the claim holds.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.mechanisms.base import PrivacyClaim, ReleaseBatch, Vector, check_data, check_epsilon, check_rng

from .queries import Query

__all__ = ["CatalogueMechanism", "LaplaceOnAnswers", "laplace"]


def laplace(rng: np.random.Generator, scale: float, size: tuple[int, ...]) -> np.ndarray:
    """Lap(0, scale) draws (one place, so every family samples the same way)."""
    return rng.laplace(0.0, scale, size=size)


class CatalogueMechanism:
    """Base of the catalogue: ``query`` turns X into answers, ``respond`` randomises them."""

    name = "catalogue"
    #: the paper the mechanism is ported from (short citation)
    source = ""
    query: Query

    def __init__(self, epsilon: float) -> None:
        self.epsilon = check_epsilon(epsilon)

    # ---- privacy statement ------------------------------------------------
    @property
    def claim(self) -> PrivacyClaim:
        """What the paper promises, under add-remove of one record (see :mod:`.queries`)."""
        return PrivacyClaim(self.claimed_epsilon, 0.0, "add-remove")

    @property
    def claimed_epsilon(self) -> float:
        return self.epsilon

    @property
    def true_epsilon(self) -> tuple[float, float]:
        """(lo, hi) bounds on the real ε for the claim's relation; subclasses document theirs."""
        raise NotImplementedError

    @property
    def is_correct(self) -> bool:
        """Does the claim hold (the true ε is at most the claimed ε)?"""
        return self.true_epsilon[1] <= self.claimed_epsilon * (1 + 1e-12)

    @property
    def is_wrong(self) -> bool:
        """Is the claim provably violated (the true ε exceeds the claimed ε)?"""
        return self.true_epsilon[0] > self.claimed_epsilon * (1 + 1e-12)

    # ---- releases ---------------------------------------------------------
    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        """n randomised responses to the exact ``answers``: an (n, k) float array."""
        raise NotImplementedError

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        """``n`` independent releases on ``X`` in one vectorised draw, shape (n, k)."""
        X = check_data(X, min_rows=1)
        out = self.respond(self.query.answer(X), check_rng(rng), int(n))
        return ReleaseBatch("vector", np.asarray(out, dtype=np.float64))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector(self.release_many(X, rng, 1).array[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g})"


class LaplaceOnAnswers(CatalogueMechanism):
    """answers + Lap(``noise_scale``) on every coordinate (default scale Δ/ε with Δ = 1)."""

    @property
    def noise_scale(self) -> float:
        return 1.0 / self.epsilon

    def respond(self, answers: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return answers[None, :] + laplace(rng, self.noise_scale, (n, answers.size))


def fmt_eps(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.4g}"
