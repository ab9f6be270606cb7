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
  by 0.8 after ``ATTEMPTS`` failed attempts.  Only the dimension and the rng
  are read — never the records (:func:`initial_centroids`, in
  :mod:`dpaudit.mechanisms.dpkccm_init`).
* **Noisy count ≤ 0.**  The centroid of that cluster keeps its previous value
  (a function of released values only, so post-processing).  Every centroid is
  then clipped into the box (a tiny positive count can otherwise fling it out).
* **Transcript** (:meth:`DPKCCM.release_transcript`): the data-independent
  initial centroids and, for each of the 12 iterations, every cluster's noisy
  sum (of the records centred on the box midpoint) and noisy count — exactly
  the draws :meth:`DPKCCM.release` makes for the same seed.  The release is a
  function of them (:meth:`DPKCCM.release_from_transcript`).
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
    ReleaseBatch,
    Transcript,
    TranscriptBatch,
    check_bounds,
    check_clusters,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
)
from .dpkccm_init import (  # noqa: F401 - re-exported (they were defined here)
    A0,
    ATTEMPTS,
    CANDIDATES_PER_CENTROID,
    SHRINK,
    initial_centroids,
    initial_centroids_many,
)

__all__ = ["DPKCCM", "DPKCCMTrace", "VARIANTS", "budget_shares", "initial_centroids", "initial_centroids_many",
           "merge_clusters", "nearest_centroid", "update_centroids"]

Variant = Literal["average_k", "allocation_k", "average_nk", "allocation_nk"]
VARIANTS: tuple[str, ...] = ("average_k", "allocation_k", "average_nk", "allocation_nk")
ITERATIONS = 12  # the DP-KCCM paper §4.1: max_clustering = 12


def _check_variant(variant: str) -> Variant:
    if variant not in VARIANTS:
        raise InvalidInputError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    return cast(Variant, variant)


def budget_shares(variant: str, epsilon: float) -> np.ndarray:
    """The 12 per-iteration budgets ε_it (the DP-KCCM paper §3.1); they sum to ε."""
    if _check_variant(variant).startswith("average"):
        return np.full(ITERATIONS, epsilon / ITERATIONS)
    return np.repeat(np.array([epsilon / 24, epsilon / 12, epsilon / 8]), 4)


def nearest_centroid(Xc: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Index of the nearest centroid of each record; ``C`` (…, m, d) may carry batch axes → (…, n)."""
    score = np.einsum("...ij,...ij->...i", C, C)[..., None, :] - 2.0 * (Xc @ np.swapaxes(C, -1, -2))
    return np.argmin(score, axis=-1)


def update_centroids(C: np.ndarray, sums: np.ndarray, counts: np.ndarray, half: np.ndarray) -> np.ndarray:
    """One iteration's post-processing: noisy sum / noisy count, kept where the count is ≤ 0, clipped.

    Works on centred coordinates and on any leading batch axes (C, sums: (…, m, d); counts: (…, m)).
    """
    ok = counts > 0
    safe = np.where(ok, counts, 1.0)
    C = np.where(ok[..., None], sums / safe[..., None], C)   # count ≤ 0: keep the previous centroid
    return np.clip(C, -half, half)                           # keep centroids in the box


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
    counts; ``shares`` the ε_it; ``final``/``final_counts`` what is released;
    ``sums`` (12×m×d) the noisy sums of the records centred on the box midpoint.
    """

    initial: np.ndarray
    centers: np.ndarray
    counts: np.ndarray
    shares: np.ndarray
    final: np.ndarray
    final_counts: np.ndarray
    sums: np.ndarray


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

    def __init__(self, epsilon: float = 1.0, n_clusters: int = 4, *, variant: Variant = "allocation_nk", n: int = 3,
                 bounds: tuple[object, object] | None = (-1.0, 1.0), noise: bool = True) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_clusters = int(check_positive(n_clusters, name="n_clusters", integer=True, minimum=1, inclusive=True))
        self.variant = _check_variant(variant)
        self.n = int(check_positive(n, name="n (merge factor)", integer=True, minimum=1, inclusive=True))
        check_bounds(bounds)  # fail early; broadcast to the data's width at release time
        self.bounds = bounds
        self.noise = bool(noise)
        self.claim = PrivacyClaim(self.epsilon if self.noise else math.inf, 0.0, "add-remove")

    def __repr__(self) -> str:
        return (f"DPKCCM(epsilon={self.epsilon:g}, n_clusters={self.n_clusters}, variant={self.variant!r}, n={self.n}, "
                f"bounds={self.bounds!r}, noise={self.noise})")

    @property
    def n_clusters_run(self) -> int:
        """Clusters during the iterations: n·k for the ``nk`` variants, else k."""
        return self.n * self.n_clusters if self.variant.endswith("_nk") else self.n_clusters

    def shares(self) -> np.ndarray:
        """Per-iteration budgets ε_it (sum to ε)."""
        return budget_shares(self.variant, self.epsilon)

    def initial_centroids(self, d: int, rng: np.random.Generator) -> np.ndarray:
        """The m starting centroids in the public box; needs only d and the rng."""
        lo, hi = check_bounds(self.bounds, d)
        unit = cast(np.ndarray, initial_centroids(self.n_clusters_run, d, rng))
        return (lo + hi) / 2.0 + unit * (hi - lo) / 2.0

    def sensitivity(self, d: int) -> float:
        """Δ = Σ_i r_i + 1 (= d·r + 1 for a cube; the DP-KCCM paper §3.3.2) for d-dimensional data."""
        lo, hi = check_bounds(self.bounds, d)
        return float(np.sum((hi - lo) / 2.0)) + 1.0

    def _setup(self, X: np.ndarray, rng: object) -> tuple[np.ndarray, np.random.Generator, np.ndarray, np.ndarray]:
        """Checked data clipped into the box and centred on its midpoint; the generator; (mid, half)."""
        X = check_data(X)
        gen = check_rng(rng)
        check_clusters(self.n_clusters, X)
        lo, hi = check_bounds(self.bounds, X.shape[1])
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        return np.clip(X, lo, hi) - mid, gen, mid, half

    def run(self, X: np.ndarray, rng: np.random.Generator) -> DPKCCMTrace:
        """Run the algorithm and keep every intermediate result."""
        Xc, rng, mid, half = self._setup(X, rng)
        nrec, d = Xc.shape
        sensitivity = self.sensitivity(d)      # Δ = d·r + 1 (the DP-KCCM paper §3.3.2)
        m = self.n_clusters_run
        init = self.initial_centroids(d, rng)
        C = init - mid
        shares = self.shares()
        hist_c = np.empty((ITERATIONS, m, d))
        hist_n = np.empty((ITERATIONS, m))
        hist_s = np.empty((ITERATIONS, m, d))
        rows = np.arange(nrec)
        onehot = np.zeros((nrec, m))
        for it, eps_it in enumerate(shares):
            labels = nearest_centroid(Xc, C)
            onehot[rows, labels] = 1.0
            sums = onehot.T @ Xc                 # (m, d) per-cluster sums
            counts = onehot.sum(axis=0)          # (m,)
            onehot[rows, labels] = 0.0
            if self.noise:
                scale = sensitivity / eps_it
                sums = sums + rng.laplace(0.0, scale, size=(m, d))
                counts = counts + rng.laplace(0.0, scale, size=m)
            C = update_centroids(C, sums, counts, half)
            hist_c[it] = C + mid
            hist_n[it] = counts
            hist_s[it] = sums
        final, final_n = hist_c[-1], hist_n[-1]
        if m > self.n_clusters:
            final, final_n = merge_clusters(final, final_n, self.n_clusters)
        return DPKCCMTrace(init, hist_c, hist_n, shares, final, final_n, hist_s)

    # ------------------------------------------------------------------ transcript
    transcript_covers_release = True

    def transcript_config(self, d: int) -> dict[str, object]:
        """The public parameters a replay of the transcript needs (d-dimensional data)."""
        lo, hi = check_bounds(self.bounds, d)
        return {"variant": self.variant, "n_clusters": self.n_clusters, "merge_factor": self.n, "clusters": self.n_clusters_run,
                "epsilon": self.epsilon, "shares": tuple(float(e) for e in self.shares()),
                "sensitivity": self.sensitivity(d), "lo": tuple(lo.tolist()), "hi": tuple(hi.tolist()),
                "noise": self.noise}

    def release_transcript(self, X: np.ndarray, rng: np.random.Generator) -> Transcript:
        """The run's draws: ``initial`` (m×d, box coordinates), ``sums`` (12×m×d, centred on the box
        midpoint) and ``counts`` (12×m) — the same draws :meth:`release` makes for the same seed."""
        trace = self.run(X, rng)
        return Transcript({"initial": trace.initial, "sums": trace.sums, "counts": trace.counts}, self.name,
                          self.transcript_config(trace.initial.shape[1]))

    def release_transcript_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> TranscriptBatch:
        """``n`` independent transcripts, vectorised over runs (same seed ⇒ same batch)."""
        Xc, rng, mid, half = self._setup(X, rng)
        nrec, d = Xc.shape
        m = self.n_clusters_run
        runs = int(n)
        lo, hi = check_bounds(self.bounds, d)
        init = mid + initial_centroids_many(runs, m, d, rng) * half
        C = init - mid
        sensitivity = self.sensitivity(d)
        all_s = np.empty((runs, ITERATIONS, m, d))
        all_n = np.empty((runs, ITERATIONS, m))
        for it, eps_it in enumerate(self.shares()):
            onehot = (nearest_centroid(Xc, C)[..., None] == np.arange(m)).astype(np.float64)   # (runs, n, m)
            sums = np.swapaxes(onehot, -1, -2) @ Xc
            counts = onehot.sum(axis=-2)
            if self.noise:
                scale = sensitivity / eps_it
                sums = sums + rng.laplace(0.0, scale, size=(runs, m, d))
                counts = counts + rng.laplace(0.0, scale, size=(runs, m))
            C = update_centroids(C, sums, counts, half)
            all_s[:, it], all_n[:, it] = sums, counts
        return TranscriptBatch({"initial": init, "sums": all_s, "counts": all_n}, self.name,
                               self.transcript_config(d))

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        """``n`` releases: :meth:`release_transcript_many` and its post-processing, vectorised over runs
        (the merge of the ``nk`` variants runs per release)."""
        batch = self.release_transcript_many(X, rng, n)
        init = batch.statistics["initial"]
        lo, hi = check_bounds(self.bounds, init.shape[-1])
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        C = init - mid
        sums, counts = batch.statistics["sums"], batch.statistics["counts"]
        for it in range(sums.shape[1]):
            C = update_centroids(C, sums[:, it], counts[:, it], half)
        final, final_n = C + mid, counts[:, -1]
        if final.shape[1] > self.n_clusters:
            merged = [merge_clusters(c, w, self.n_clusters) for c, w in zip(final, final_n)]
            final = np.stack([c for c, _ in merged]) if merged else np.empty((0, self.n_clusters, init.shape[-1]))
            final_n = np.stack([w for _, w in merged]) if merged else np.empty((0, self.n_clusters))
        return ReleaseBatch("centroids", final, final_n)

    def release_from_transcript(self, transcript: Transcript, X: np.ndarray | None = None) -> Centroids:
        """The release a run with this transcript makes (post-processing only; ``X`` is ignored)."""
        init = np.asarray(transcript["initial"], dtype=np.float64)
        lo, hi = check_bounds(self.bounds, init.shape[1])
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        C = init - mid
        sums, counts = transcript["sums"], transcript["counts"]
        for it in range(sums.shape[0]):
            C = update_centroids(C, sums[it], counts[it], half)
        final, final_n = C + mid, np.asarray(counts[-1], dtype=np.float64)
        if len(final) > self.n_clusters:
            final, final_n = merge_clusters(final, final_n, self.n_clusters)
        return Centroids(final, final_n)

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Centroids:
        """k noisy centroids with their noisy counts (the DP-KCCM paper Algorithm 1 output)."""
        trace = self.run(X, rng)
        return Centroids(trace.final, trace.final_counts)
