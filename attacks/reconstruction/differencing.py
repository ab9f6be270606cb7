"""Centroid differencing: the record added between two ``Centroids`` releases.

The attacker (DP's strong adversary: knows D) obtains releases of D and of
D ∪ {x}, matches centres permutation-invariantly (Hungarian on distances) and
inverts the change of the centre that moved most: with n_j records of D in
that cluster, x̂ = c′_j + n_j (c′_j − c_j) (the mean update
c′ = (n_j c + x)/(n_j + 1)).  n_j comes from the released noisy counts when
present, else from assigning D to the released centres.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from execution import release_once
from mechanisms.base import Centroids, InvalidInputError, Mechanism

from ..attack import Progress
from ..targets import check_release
from .result import ReconstructionResult, scored

__all__ = ["difference_centroids", "reconstruct_centroids"]


def difference_centroids(before: Centroids, after: Centroids, D: np.ndarray) -> np.ndarray:
    """Estimate the added record x from releases of D and D ∪ {x} (mean-update inversion)."""
    c, c2 = before.centers, after.centers
    if c.shape != c2.shape:
        raise InvalidInputError("differencing needs releases with the same number of centres")
    cost = np.linalg.norm(c[:, None, :] - c2[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(cost)
    shift = np.linalg.norm(c2[cols] - c[rows], axis=1)
    j = int(np.argmax(shift))
    cj, cj2 = c[rows[j]], c2[cols[j]]
    if before.counts is not None:
        n_j = max(float(before.counts[rows[j]]), 1.0)
    else:
        n_j = float(np.sum(before.predict(D) == rows[j]))
    return cj2 + n_j * (cj2 - cj)


def reconstruct_centroids(mechanism: Mechanism, members: np.ndarray, targets: np.ndarray, prior: np.ndarray,
                          radius: float, rng: np.random.Generator, *,
                          progress: Progress | None = None) -> ReconstructionResult:
    """Differencing attack for each record in ``targets`` added to ``members``."""
    before = check_release(release_once(mechanism, members, rng), members)
    if not isinstance(before, Centroids):
        raise InvalidInputError("differencing needs a centroids release")
    X_hat = np.empty_like(targets)
    for i, x in enumerate(targets):  # one mechanism run per target record
        D1 = np.vstack([members, x[None, :]])
        after = check_release(release_once(mechanism, D1, rng), D1)
        assert isinstance(after, Centroids)
        X_hat[i] = difference_centroids(before, after, members)
        if progress is not None:
            progress("differencing", i + 1, len(targets))
    return scored("differencing", targets, X_hat, prior, radius, rng)
