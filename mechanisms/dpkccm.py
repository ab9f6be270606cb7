"""DP-KCCM family: differentially private Lloyd k-means with adaptive budget and
cluster merging.

Seed 001 (Ni, Qiao, Chen, Zhang, Zhong, "Utility-efficient differentially
private k-means clustering based on cluster merging"), Algorithm 1 and §3.1–3.3;
the initial centroids follow Su et al. (CODASPY 2016), as restated in the DP-KCCM paper
§2.2.1.  Four variants (the DP-KCCM paper §4.1):

=================  ==================  ====================  ================
variant            start centroids     budget per iteration  final step
=================  ==================  ====================  ================
``average_k``      k                   ε/12 each             —   (= DPLloyd-Impr)
``allocation_k``   k                   ε/24 ×4, ε/12 ×4,     —
                                       ε/8 ×4 (§3.1)
``average_nk``     n·k                 ε/12 each             merge to k
``allocation_nk``  n·k                 as allocation_k       merge to k (= DP-KCCM)
=================  ==================  ====================  ================

Each of the 12 iterations assigns every record to its nearest centroid and, for
every cluster j, releases ``sum'_j = sum_j + Lap(Δ/ε_it)^d`` and
``num'_j = num_j + Lap(Δ/ε_it)`` (eqs. 9–11) with Δ = d·r + 1 (§3.3.2).  A record
touches one cluster per iteration, so by parallel composition an iteration is
ε_it-DP and the 12 iterations compose to Σ ε_it = ε (Theorem 1; add-remove
neighbours).  Merging (eq. 12) only uses released values: post-processing.

Choices the paper leaves open, made here and documented:

* **Public box.**  The paper normalises data into [−r, r]^d.  Here the box
  ``bounds=(lo, hi)`` (default [−1, 1]) is public; sums are taken of the
  records *centred* on the box's midpoint, so every coordinate has
  |x_i − mid_i| ≤ r_i (r_i the box's half-width) and the L1 sensitivity of
  (sum, count) is Δ = Σ_i r_i + 1 — exactly d·r + 1 for a cube.  **Records
  outside the box are clipped to it** before anything else: bounded sensitivity
  needs every record inside, and clipping a record depends on that record only.
* **Initial centroids** (Su et al.): candidates uniform in the box (in units of
  the half-width, i.e. the box mapped to [−1, 1]^d), kept only if ≥ a from the
  boundary and ≥ 2a from every kept centroid; a starts at 0.5 and is multiplied
  by 0.8 after ``_ATTEMPTS`` failed attempts.  Only the dimension and the rng
  are read — never the records (:func:`initial_centroids`).
* **Noisy count ≤ 0.**  The centroid of that cluster keeps its previous value
  (a function of released values only, so post-processing).  Every centroid is
  then clipped into the box (a tiny positive count can otherwise fling it out).
* **Merging** (eq. 12, ``nk`` variants): repeatedly merge the two centroids
  nearest each other (Euclidean); per dimension the merged coordinate is
  min + |diff| · num'_max/(num'_p + num'_q), which is the noisy-count-weighted
  mean.  Noisy counts can be ≤ 0, where eq. 12 is undefined; the weights used are
  max(num', 0), and two clusters with both weights 0 merge at their midpoint.
  Released counts are the noisy counts added up (they may be negative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from .base import (
    Centroids,
    InvalidInputError,
    PrivacyClaim,
    check_bounds,
    check_clusters,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
)

__all__ = ["DPKCCM", "DPKCCMTrace", "VARIANTS", "budget_shares", "initial_centroids", "merge_clusters"]

Variant = Literal["average_k", "allocation_k", "average_nk", "allocation_nk"]
VARIANTS: tuple[str, ...] = ("average_k", "allocation_k", "average_nk", "allocation_nk")
ITERATIONS = 12  # the DP-KCCM paper §4.1: max_clustering = 12
_A0 = 0.5        # the DP-KCCM paper §2.2.1: initial a for data in [−1, 1]
_SHRINK = 0.8    # factor applied to a after _ATTEMPTS failed attempts
_ATTEMPTS = 5
_CANDIDATES_PER_CENTROID = 50


def _check_variant(variant: str) -> Variant:
    if variant not in VARIANTS:
        raise InvalidInputError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    return cast(Variant, variant)


def budget_shares(variant: str, epsilon: float) -> np.ndarray:
    """The 12 per-iteration budgets ε_it (the DP-KCCM paper §3.1); they sum to ε."""
    if _check_variant(variant).startswith("average"):
        return np.full(ITERATIONS, epsilon / ITERATIONS)
    return np.repeat(np.array([epsilon / 24, epsilon / 12, epsilon / 8]), 4)


def initial_centroids(m: int, d: int, rng: np.random.Generator, *, a0: float = _A0,
                      return_a: bool = False) -> np.ndarray | tuple[np.ndarray, float]:
    """Su et al. data-independent initial centroids in the unit box [−1, 1]^d.

    Seed 001 §2.2.1: a candidate drawn uniformly in the box is kept only if it
    is at least ``a`` from the boundary and at least ``2a`` from every kept
    centroid; after repeated failure ``a`` shrinks.  Drawing uniformly in the
    inner box [−1 + a, 1 − a]^d is the same as rejecting candidates closer than
    ``a`` to the boundary.  Reads nothing but ``m``, ``d`` and ``rng``.
    With ``return_a`` the separation ``a`` finally used is returned as well.
    """
    a = a0
    budget = _CANDIDATES_PER_CENTROID * m
    while True:
        for _ in range(_ATTEMPTS):
            cand = rng.uniform(-1.0 + a, 1.0 - a, size=(budget, d))
            # Sequential first-fit over the candidates in draw order: a candidate is kept iff
            # no earlier kept one is closer than 2a.  Loop over the kept ones only (≤ m steps).
            alive = np.ones(budget, dtype=bool)
            kept: list[int] = []
            start = 0
            while len(kept) < m:
                rest = np.flatnonzero(alive[start:])
                if rest.size == 0:
                    break
                i = start + int(rest[0])
                kept.append(i)
                diff = cand - cand[i]
                alive &= np.einsum("ij,ij->i", diff, diff) >= (2.0 * a) ** 2
                start = i + 1
            if len(kept) == m:
                out = cand[kept]
                return (out, a) if return_a else out
        a *= _SHRINK


def merge_clusters(centers: np.ndarray, counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Merge noisy clusters down to ``k`` (the DP-KCCM paper §3.3.3, eq. 12).

    Repeatedly merges the two centroids nearest each other; the merged centroid
    is the noisy-count-weighted mean (eq. 12's min + |diff|·share form, with
    weights max(num', 0); midpoint when both are 0) and the noisy counts add.
    """
    centers = np.array(centers, dtype=np.float64)
    counts = np.array(counts, dtype=np.float64)
    dead = np.zeros(len(centers), dtype=bool)
    diff = centers[:, None, :] - centers[None, :, :]
    dist = np.einsum("ijk,ijk->ij", diff, diff)
    np.fill_diagonal(dist, np.inf)
    while int((~dead).sum()) > k:
        flat = int(np.argmin(dist))
        p, q = divmod(flat, dist.shape[1])
        wp, wq = max(counts[p], 0.0), max(counts[q], 0.0)
        if wp + wq > 0:
            merged = (wp * centers[p] + wq * centers[q]) / (wp + wq)
        else:
            merged = 0.5 * (centers[p] + centers[q])
        centers[p] = merged
        counts[p] = counts[p] + counts[q]
        dead[q] = True
        dist[q, :] = np.inf
        dist[:, q] = np.inf
        dp = centers - merged
        row = np.einsum("ij,ij->i", dp, dp)
        row[p] = np.inf
        row[dead] = np.inf
        dist[p, :] = row
        dist[:, p] = row
    return centers[~dead], counts[~dead]


@dataclass(frozen=True)
class DPKCCMTrace:
    """Everything one run computed, for tests and diagnostics (not a release).

    ``initial`` (m×d) the data-independent starting centroids; ``centers``
    (12×m×d) the centroids after each iteration; ``counts`` (12×m) the noisy
    counts; ``shares`` the ε_it; ``final``/``final_counts`` what is released.
    """

    initial: np.ndarray
    centers: np.ndarray
    counts: np.ndarray
    shares: np.ndarray
    final: np.ndarray
    final_counts: np.ndarray


class DPKCCM:
    """DP-KCCM and its three sibling variants (the DP-KCCM paper, Algorithm 1).

    Parameters
    ----------
    epsilon : float
        Total budget ε (add-remove neighbours), split over 12 iterations.
    k : int
        Number of centroids released.
    variant : {"allocation_nk", "average_nk", "allocation_k", "average_k"}
        ``allocation_nk`` is DP-KCCM; ``average_k`` is DPLloyd-Impr.
    n : int
        Merge factor: the ``nk`` variants run with n·k clusters (paper: 3).
    bounds : (lo, hi)
        Public box (scalars or per-feature vectors); records outside are
        clipped into it.  Default [−1, 1], the paper's normalised domain.
    noise : bool
        ``False`` switches the Laplace noise off (exact Lloyd from the same
        start, then the same merging) for testing; the claim becomes ε = ∞.
    """

    name = "dpkccm"

    def __init__(self, epsilon: float = 1.0, k: int = 4, *, variant: Variant = "allocation_nk", n: int = 3,
                 bounds: tuple[object, object] | None = (-1.0, 1.0), noise: bool = True) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.k = int(check_positive(k, name="k", integer=True, minimum=1, inclusive=True))
        self.variant = _check_variant(variant)
        self.n = int(check_positive(n, name="n (merge factor)", integer=True, minimum=1, inclusive=True))
        check_bounds(bounds)  # fail early; broadcast to the data's width at release time
        self.bounds = bounds
        self.noise = bool(noise)
        self.claim = PrivacyClaim(self.epsilon if self.noise else math.inf, 0.0, "add-remove")

    def __repr__(self) -> str:
        return (f"DPKCCM(epsilon={self.epsilon:g}, k={self.k}, variant={self.variant!r}, n={self.n}, "
                f"bounds={self.bounds!r}, noise={self.noise})")

    @property
    def n_clusters_run(self) -> int:
        """Clusters during the iterations: n·k for the ``nk`` variants, else k."""
        return self.n * self.k if self.variant.endswith("_nk") else self.k

    def shares(self) -> np.ndarray:
        """Per-iteration budgets ε_it (sum to ε)."""
        return budget_shares(self.variant, self.epsilon)

    def initial_centroids(self, d: int, rng: np.random.Generator) -> np.ndarray:
        """The m starting centroids in the public box; needs only d and the rng."""
        lo, hi = check_bounds(self.bounds, d)
        unit = cast(np.ndarray, initial_centroids(self.n_clusters_run, d, rng))
        return (lo + hi) / 2.0 + unit * (hi - lo) / 2.0

    def run(self, X: np.ndarray, rng: np.random.Generator) -> DPKCCMTrace:
        """Run the algorithm and keep every intermediate result."""
        X = check_data(X)
        rng = check_rng(rng)
        nrec, d = X.shape
        check_clusters(self.k, X)
        lo, hi = check_bounds(self.bounds, d)
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        sensitivity = float(np.sum(half)) + 1.0  # Δ = d·r + 1 (the DP-KCCM paper §3.3.2)
        m = self.n_clusters_run
        init = self.initial_centroids(d, rng)
        Xc = np.clip(X, lo, hi) - mid          # clip into the public box, centre it
        C = init - mid
        shares = self.shares()
        hist_c = np.empty((ITERATIONS, m, d))
        hist_n = np.empty((ITERATIONS, m))
        rows = np.arange(nrec)
        onehot = np.zeros((nrec, m))
        for it, eps_it in enumerate(shares):
            # nearest centroid: argmin ‖x‖² − 2x·c + ‖c‖² (‖x‖² is constant per row)
            score = np.einsum("ij,ij->i", C, C)[None, :] - 2.0 * (Xc @ C.T)
            labels = np.argmin(score, axis=1)
            onehot[rows, labels] = 1.0
            sums = onehot.T @ Xc                 # (m, d) per-cluster sums
            counts = onehot.sum(axis=0)          # (m,)
            onehot[rows, labels] = 0.0
            if self.noise:
                scale = sensitivity / eps_it
                sums = sums + rng.laplace(0.0, scale, size=(m, d))
                counts = counts + rng.laplace(0.0, scale, size=m)
            ok = counts > 0
            C = C.copy()
            C[ok] = sums[ok] / counts[ok, None]   # count ≤ 0: keep the previous centroid
            C = np.clip(C, -half, half)           # keep centroids in the box
            hist_c[it] = C + mid
            hist_n[it] = counts
        final, final_n = hist_c[-1], hist_n[-1]
        if m > self.k:
            final, final_n = merge_clusters(final, final_n, self.k)
        return DPKCCMTrace(init, hist_c, hist_n, shares, final, final_n)

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Centroids:
        """k noisy centroids with their noisy counts (the DP-KCCM paper Algorithm 1 output)."""
        trace = self.run(X, rng)
        return Centroids(trace.final, trace.final_counts)
