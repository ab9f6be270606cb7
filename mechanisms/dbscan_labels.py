"""Label-release DP-DBSCAN: DBSCAN on a noisy pairwise distance matrix.

This is the approach the DP-DBSCAN paper argues against (§1.3, §3 Lemma 3.1: "labels are
not DP-friendly"; §8.1: the existing methods [42, 38, 43, 29] "privatize the
pairwise distance matrix" and score ARI ≈ AMI ≈ 0 on every dataset).  It is
shipped with the *correct* sensitivity, so that it is private — and the
auditor should find it useless.

Sensitivity.  The released statistic is the vector of the n(n−1)/2 pairwise
distances of the records, each record first clipped into the public box so
every distance lies in [0, diam], diam = ‖hi − lo‖₂.  Neighbouring datasets
*replace* one record (bounded DP; n is public, and the vector's length is n
choose 2 — under add/remove the length itself would differ, so add/remove is
not the right notion for this output).  Replacing record i changes the n − 1
distances in row/column i, each by at most diam, so the L1 sensitivity is
Δ₁ = (n − 1)·diam.  Each entry gets Lap(Δ₁/ε); the noisy distances are
clipped back to [0, diam] (post-processing) and DBSCAN(α, MinPts) runs on
them as a precomputed metric.  The labels are post-processing: ε-DP under
replace neighbours (the claim).

With n = 2000, diam = 6√2 and ε = 1 the noise scale is ≈ 1.7·10⁴ — about
10⁵ times α = 0.2 — so the labels carry essentially no information
(ARI ≈ 0).  That is the point: a DP label release cannot be accurate.

The paper's reference code scaled the noise by n/ε and forgot the diam
factor; a different (wrong) sensitivity, which we do not reproduce.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.distance import pdist, squareform
from sklearn.cluster import DBSCAN

from .base import (
    InvalidInputError,
    Labels,
    PrivacyClaim,
    check_bounds,
    check_data,
    check_epsilon,
    check_rng,
)
from .grid import check_dbscan_params

__all__ = ["DBSCANLabels", "MAX_RECORDS"]

MAX_RECORDS = 10_000  # the n×n matrix: 10,000² float64 = 0.8 GB (plus the condensed copy)


class DBSCANLabels:
    """Noisy pairwise distances (Laplace, Δ₁ = (n − 1)·diam) → DBSCAN → labels.

    Parameters: ``epsilon`` (replace neighbours), ``alpha`` (DBSCAN radius),
    ``min_pts`` (DBSCAN MinPts, ≥ 1), public ``bounds`` (required: they fix
    diam and hence the sensitivity).  ``noise=False`` switches the noise off
    (plain DBSCAN on clipped records; claim ε = ∞), for tests.
    """

    name = "dbscan-labels"

    def __init__(self, epsilon: float, *, alpha: float | None = None, min_pts: int | None = None,
                 bounds: tuple[object, object] | None = None, noise: bool = True) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.alpha, self.min_pts = check_dbscan_params(self.name, alpha, min_pts, bounds,
                                                       "they bound every distance and so the sensitivity")
        self.bounds = bounds
        self.noise = bool(noise)
        self.claim = PrivacyClaim(self.epsilon if self.noise else math.inf, 0.0, "replace")

    def sensitivity(self, n: int, d: int) -> float:
        """L1 sensitivity (n − 1)·diam of the distance vector under replace neighbours."""
        lo, hi = check_bounds(self.bounds, d)
        return (n - 1) * float(np.linalg.norm(hi - lo))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Labels:
        X = check_data(X)
        n, d = X.shape
        if n > MAX_RECORDS:
            raise InvalidInputError(
                f"{self.name} builds an n×n distance matrix; n = {n} exceeds {MAX_RECORDS} records")
        lo, hi = check_bounds(self.bounds, d)
        diam = float(np.linalg.norm(hi - lo))
        dist = pdist(np.clip(X, lo, hi))
        if self.noise:
            dist += check_rng(rng).laplace(0.0, self.sensitivity(n, d) / self.epsilon, size=dist.size)
            np.clip(dist, 0.0, diam, out=dist)
        model = DBSCAN(eps=self.alpha, min_samples=self.min_pts, metric="precomputed")
        return Labels(model.fit(squareform(dist)).labels_)

    def __repr__(self) -> str:
        return (f"DBSCANLabels(epsilon={self.epsilon:g}, alpha={self.alpha:g}, min_pts={self.min_pts}, "
                f"bounds={self.bounds!r})")
