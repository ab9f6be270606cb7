"""Aggregate releases (a statistic of the whole dataset, ``--output vector``) for the membership attacks' tests.

``honest_sum``  the per-feature sum of the records clipped to the box [−15, 15]ᵈ plus Laplace noise for
                its add/remove sensitivity Δ₁ = 15·d: ε-DP.
``leaky_sum``   the same sum with noise a thousand times too small: the claim is false.
"""

import numpy as np

BOX = 15.0


def honest_sum(X, epsilon, rng):
    X = np.clip(np.asarray(X, dtype=float), -BOX, BOX)
    return X.sum(axis=0) + rng.laplace(scale=BOX * X.shape[1] / epsilon, size=X.shape[1])


def leaky_sum(X, epsilon, rng):
    X = np.clip(np.asarray(X, dtype=float), -BOX, BOX)
    return X.sum(axis=0) + rng.laplace(scale=1e-3 * BOX * X.shape[1] / epsilon, size=X.shape[1])
