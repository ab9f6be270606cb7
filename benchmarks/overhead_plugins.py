"""Plain plug-in functions ``fn(X, epsilon, rng) -> array`` of different costs, for
``bench_plugin_overhead.py`` (loaded by path, in this process and in a worker).

Each imports numpy only, so the worker loads them in a fraction of a second.
"""

import numpy as np

BOUND = 3.0  # public clipping bound of every record's coordinates


def clipped_sum(X, epsilon, rng):
    """The sum of each coordinate, records clipped to [-BOUND, BOUND], plus Laplace noise (a vector of d)."""
    sums = np.clip(X, -BOUND, BOUND).sum(axis=0)
    return sums + rng.laplace(scale=2.0 * BOUND / epsilon, size=sums.shape)


def noisy_points(X, epsilon, rng):
    """Every record clipped, plus Laplace noise on each coordinate (points, the input's shape)."""
    return np.clip(X, -BOUND, BOUND) + rng.laplace(scale=2.0 * BOUND / epsilon, size=X.shape)


def noisy_kmeans(X, epsilon, rng, k=3, iterations=10):
    """A few Lloyd iterations with noisy sums and counts (centroids, k×d): about a millisecond a call."""
    X = np.clip(X, -BOUND, BOUND)
    centres = rng.uniform(-BOUND, BOUND, size=(k, X.shape[1]))
    scale = iterations * (2.0 * BOUND + 1.0) / epsilon
    for _ in range(iterations):
        labels = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        for j in range(k):
            members = X[labels == j]
            count = len(members) + rng.laplace(scale=scale)
            total = members.sum(axis=0) + rng.laplace(scale=scale, size=X.shape[1])
            centres[j] = np.clip(total / max(count, 1.0), -BOUND, BOUND)
    return centres
