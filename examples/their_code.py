"""Someone else's "differentially private" k-means, as a plug-in function for the README's examples.

``their_kmeans(X, epsilon, rng)`` returns k = 4 centroids: a few Lloyd steps from centres
drawn out of the records, then Laplace noise of scale 1/ε on each coordinate of the result.
It claims ε-DP (add/remove), and it is not: the start centres are records, the
iterations are not noised, and 1/ε is far too little noise for a centroid whose
sensitivity is the data's diameter over the cluster size.  ``dpaudit audit`` should
say so; ``their_kmeans_honest`` (no data-dependent start, noisy sums and counts
with the right sensitivity in a public box) should not be flagged.  ``noisy_count`` is a
vector release (a count with too little noise) for ``dpaudit estimate-eps --output vector``.

    dpaudit audit --mechanism examples/their_code.py:their_kmeans --eps 1 --output centroids
"""

import numpy as np

K = 4
BOX = (-15.0, 15.0)  # a public box for the README's blobs-2d data


def their_kmeans(X, epsilon, rng):
    X = np.asarray(X, dtype=float)
    centres = X[rng.choice(len(X), size=K, replace=False)]
    for _ in range(5):
        labels = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        centres = np.array([X[labels == j].mean(axis=0) if np.any(labels == j) else centres[j] for j in range(K)])
    return centres + rng.laplace(scale=1.0 / epsilon, size=centres.shape)


def their_kmeans_honest(X, epsilon, rng):
    X = np.clip(np.asarray(X, dtype=float), *BOX)
    lo, hi = BOX
    centres = rng.uniform(lo, hi, size=(K, X.shape[1]))
    steps = 3
    eps_step = epsilon / steps
    sensitivity = X.shape[1] * max(abs(lo), abs(hi)) + 1.0  # one record: |x|_1 in the sums plus 1 in the count
    for _ in range(steps):
        labels = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        for j in range(K):
            members = X[labels == j]
            total = members.sum(axis=0) + rng.laplace(scale=sensitivity / eps_step, size=X.shape[1])
            count = len(members) + rng.laplace(scale=sensitivity / eps_step)
            if count > 1:
                centres[j] = np.clip(total / count, lo, hi)
    return centres


def noisy_count(X, epsilon, rng):
    """A record count with Laplace noise 30 % too small for its sensitivity of 1: not ε-DP."""
    return np.array([len(X) + rng.laplace(scale=0.7 / epsilon)])
