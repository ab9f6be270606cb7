"""Plug-ins whose release size changes with the data or at random, as real DP clustering code does.

Each claims ε-DP under add/remove neighbours (whether it keeps the claim is not what the tests
ask: they ask that every attack either measures it or says why it does not apply).

``coreset_kmeans``  k = min(4, the size of a noisy private coreset): fewer centres than k on
                    small data (the issue's case), more as the data grows.
``k_min_n``         k = min(2, n): one centre on a one-record dataset.
``random_k``        k drawn uniformly from 1..4 on every call.
``RaggedSpans``     a spans release with 0..3 clusters, some of them spanning no cell.
``ragged_labels``   labels with 1..3 clusters, sometimes every record noise (−1).
``RaggedPoints``    synthetic points, as many as a noisy count of the records (0 possible).
``RandomCentroids`` 0..3 centres, with or without noisy counts.
``ragged_histogram`` a vector of 1..4 noisy bin counts (``--output vector``): its length varies.

The last three are Mechanism objects (a bare function returns an array: one point per record).
"""

from __future__ import annotations

import numpy as np

from dpaudit.mechanisms.base import Centroids, Points, PrivacyClaim, Spans

BOX = (-15.0, 15.0)
K = 4


def _noisy_means(X: np.ndarray, k: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """k centres: the records split by a random public direction into k groups, each group's clipped
    mean with Laplace noise (a DP-looking release; its privacy is not under test)."""
    X = np.clip(np.asarray(X, dtype=np.float64), *BOX)
    d = X.shape[1]
    direction = rng.normal(size=d)
    order = np.argsort(X @ direction, kind="stable")
    groups = np.array_split(order, k)
    scale = 2.0 * d * BOX[1] / epsilon
    return np.array([np.clip((X[g].sum(axis=0) + rng.laplace(scale=scale, size=d))
                             / max(len(g) + rng.laplace(scale=2.0 / epsilon), 1.0), *BOX) for g in groups])


def coreset_kmeans(X, epsilon, rng):
    """k = min(4, |coreset|), the coreset's size a noisy eighth of the records (at least 1)."""
    coreset = max(1, int(round(len(X) / 8.0 + rng.laplace(scale=1.0 / epsilon))))
    return _noisy_means(X, min(K, coreset), epsilon, rng)


def k_min_n(X, epsilon, rng):
    """k = min(2, n)."""
    return _noisy_means(X, max(1, min(2, len(X))), epsilon, rng)


def random_k(X, epsilon, rng):
    """k uniform on 1..4, drawn on every call."""
    return _noisy_means(X, int(rng.integers(1, K + 1)), epsilon, rng)


class _Ragged:
    """A Mechanism object claiming ε-DP (add/remove) whose ``release`` is :meth:`draw`."""

    name = "ragged"

    def __init__(self, epsilon: float = 1.0) -> None:
        self.epsilon = float(epsilon)
        self.claim = PrivacyClaim(self.epsilon, 0.0, "add-remove")


class RaggedSpans(_Ragged):
    """A 10×…×10 grid over the box; 0..3 clusters, each spanning the cells of a few noisy records — or
    none (an empty span)."""

    name = "ragged-spans"

    def release(self, X, rng):
        X = np.clip(np.asarray(X, dtype=np.float64), *BOX)
        d = X.shape[1]
        width = (BOX[1] - BOX[0]) / 10.0
        cells = []
        for _ in range(int(rng.integers(0, 4))):
            take = int(rng.integers(0, 4))  # 0: a cluster that spans no cell
            if take == 0 or len(X) == 0:
                cells.append(np.empty((0, d), dtype=np.int64))
                continue
            rows = X[rng.integers(len(X), size=take)] + rng.laplace(scale=width / self.epsilon, size=(take, d))
            coords = np.clip(np.floor((rows - BOX[0]) / width).astype(np.int64), 0, 9)
            cells.append(np.unique(coords, axis=0))
        return Spans(np.full(d, BOX[0]), width, (10,) * d, tuple(cells))


def ragged_histogram(X, epsilon, rng):
    """Noisy counts of the records in 1..4 equal bins of the first coordinate over the box."""
    X = np.asarray(X, dtype=np.float64)
    bins = int(rng.integers(1, K + 1))
    counts, _ = np.histogram(np.clip(X[:, 0], *BOX), bins=bins, range=BOX)
    return counts + rng.laplace(scale=1.0 / epsilon, size=bins)


def ragged_labels(X, epsilon, rng):
    """1..3 clusters by a noisy random direction; with probability ¼ every record is noise (−1)."""
    X = np.asarray(X, dtype=np.float64)
    if rng.random() < 0.25:
        return np.full(len(X), -1, dtype=np.int64)
    k = int(rng.integers(1, 4))
    proj = X @ rng.normal(size=X.shape[1]) + rng.laplace(scale=1.0 / epsilon, size=len(X))
    edges = np.quantile(proj, np.linspace(0, 1, k + 1)[1:-1]) if len(X) else np.empty(0)
    return np.searchsorted(edges, proj).astype(np.int64)


class RaggedPoints(_Ragged):
    """max(0, round(n + Lap(1/ε))) synthetic points drawn from the box: their number is not n."""

    name = "ragged-points"

    def release(self, X, rng):
        X = np.asarray(X, dtype=np.float64)
        size = max(0, int(round(len(X) + rng.laplace(scale=1.0 / self.epsilon))))
        return Points(rng.uniform(*BOX, size=(size, X.shape[1])))


class RandomCentroids(_Ragged):
    """0..3 centres (noisy group means), with noisy counts when ``counts`` is true."""

    name = "random-centroids"

    def __init__(self, epsilon: float = 1.0, counts: bool = True) -> None:
        super().__init__(epsilon)
        self.counts = bool(counts)

    def release(self, X, rng):
        X = np.asarray(X, dtype=np.float64)
        k = int(rng.integers(0, 4))
        centres = (_noisy_means(X, k, self.epsilon, rng) if k and len(X) else np.empty((0, X.shape[1])))
        counts = np.maximum(len(X) / max(k, 1) + rng.laplace(scale=1.0 / self.epsilon, size=len(centres)), 0.0)
        return Centroids(centres, counts if self.counts else None)
