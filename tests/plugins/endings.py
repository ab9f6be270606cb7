"""Three plug-in functions for the endings test: one that keeps its claim, one that breaks it, one that crashes.

Each releases cluster centres (``--output centroids``) and claims ε-DP under add/remove neighbours.
"""

import os
import signal

import numpy as np

BOX = (-15.0, 15.0)


def passing(X, epsilon, rng):
    """A clipped mean with noisy sum and count (ε/2 each, sensitivities d·15 and 1): ε-DP add/remove."""
    X = np.clip(np.asarray(X, dtype=float), *BOX)
    d = X.shape[1]
    total = X.sum(axis=0) + rng.laplace(scale=2.0 * d * 15.0 / epsilon, size=d)
    count = len(X) + rng.laplace(scale=2.0 / epsilon)
    return np.clip(total / max(count, 1.0), *BOX)[None, :]


def violating(X, epsilon, rng):
    """The clipped mean with a hundredth of the noise it needs: not ε-DP."""
    X = np.clip(np.asarray(X, dtype=float), *BOX)
    return (X.mean(axis=0) + rng.laplace(scale=0.01 / epsilon, size=X.shape[1]))[None, :]


def crashing(X, epsilon, rng):
    """Segfaults on every call."""
    os.kill(os.getpid(), signal.SIGSEGV)
