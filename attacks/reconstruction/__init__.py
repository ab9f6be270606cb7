"""Distance-based reconstruction of records from releases.

``Points`` releases (perturbed records, e.g. nD-Laplace, the nD-Laplace thesis §3):

* **posterior-mean denoising** — with the noise density known,
  p(z | x) ∝ exp(−ε‖z − x‖₂), and a public prior given by shadow records s_j,
  the Bayes estimate under squared loss is
  x̂(z) = Σ_j w_j s_j,  w_j ∝ exp(−ε‖z − s_j‖₂).
  The noise ε is the mechanism's sampling ε when it states one
  (``sampling_epsilon``, e.g. ε/2 under ``resample``); otherwise it is
  estimated from shadow releases by maximum likelihood for a Gamma(d, 1/ε)
  radius, ε̂ = d / mean‖z − s‖ (the attacker can run the mechanism).  With
  no measurable noise (an identity release) x̂ = z.
* **nearest-neighbour linkage** — link each released point to the nearest
  candidate record (members ∪ non-members, the population the attacker must
  pick from); success = linked to the true record.

``Centroids`` releases: **differencing**.  The attacker (DP's strong adversary:
knows D) obtains releases of D and of D ∪ {x}, matches centres
permutation-invariantly (Hungarian on distances) and inverts the change of
the centre that moved most: with n_j records of D in that cluster,
x̂ = c′_j + n_j (c′_j − c_j) (the mean update c′ = (n_j c + x)/(n_j + 1)).
n_j comes from the released noisy counts when present, else from assigning D
to the released centres.

Both report the success rate within ``radius``, the median error, and the
baseline of guessing from the prior: the chance that a random prior record
lies within ``radius`` of the target record.

Scale (10⁶ records: 1.25·10⁵ released points against a prior of 7.5·10⁵):
no distance matrix larger than a chunk of rows × a bounded number of
columns is ever built.  Denoising sums each point's nearest prior records
exactly and the rest through a fixed-size public subsample of the prior, with
a stated truncation bound and Monte-Carlo standard error
(:func:`denoise_points`); the prior baseline is exact for small inputs and a
Monte-Carlo estimate with its standard error otherwise
(:func:`prior_baseline`); linkage is a kd-tree query.  Every subsample is a
seeded, public choice that never looks at membership.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from scipy.optimize import linear_sum_assignment
from scipy.spatial import cKDTree
from scipy.special import logsumexp

from mechanisms.base import Centroids, InvalidInputError, Mechanism, Points, Release

from ..attack import Progress
from execution import release_once
from ..targets import _sq_dist, check_release

__all__ = ["ReconstructionResult", "denoise_points", "difference_centroids", "reconstruct",
           "prior_baseline", "estimate_noise_epsilon"]

# Denoising (denoise_points): nearest prior records summed exactly per released point, and the
# size of the public prior subsample that estimates the rest.  With the 2-D thesis blobs at
# ε = 1 the posterior spreads over ~10⁵ of 7.5·10⁵ prior records, so no affordable k makes the
# truncation alone exact; a subsample of 4096 still puts ~10³ records under the posterior: the
# median Monte-Carlo standard error is 0.03 (1.5 % of the noise scale 2/ε, a twelfth of the
# default success radius 0.38; benchmarks/results/attack_scale.md), at ~8 s for 1.25·10⁵ points.
# At large ε the k nearest carry all the weight (truncation share ≤ TRUNCATION_TOL) and the
# subsample is skipped.
NEAREST_EXACT = 64
PRIOR_SUBSAMPLE = 4096
TRUNCATION_TOL = 1e-6
EXACT_CELLS = 1 << 26              # n·|prior| up to which the exact sum is cheap (~1 s)
ROWS_PER_CHUNK = 8192              # released points per kd-tree query
_CHUNK_CELLS = 1 << 21             # distance cells per chunk (16 MiB of float64)
# Prior baseline (prior_baseline): exact up to this many (record, prior record) pairs, else
# a Monte-Carlo estimate from BASELINE_PAIRS pairs (rate standard error ≤ 0.0005).
BASELINE_EXACT_PAIRS = 4_000_000
BASELINE_PAIRS = 1_000_000


@dataclass(frozen=True)
class ReconstructionResult:
    """Success within ``radius``, median error, and the prior-guessing baseline."""

    method: str
    success_rate: float
    median_error: float
    baseline_success_rate: float
    baseline_median_error: float
    radius: float
    n_records: int
    linkage_success_rate: float | None = None
    noise_epsilon: float | None = None
    denoising: dict[str, Any] | None = None                    # how the posterior was computed
    baseline: dict[str, Any] = field(default_factory=dict)     # how the baseline was computed (± error)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def estimate_noise_epsilon(mechanism: Mechanism, prior: np.ndarray, rng: np.random.Generator) -> float:
    """ε of the noise: the mechanism's own sampling ε, else the Gamma(d, 1/ε) MLE on a shadow release."""
    stated = getattr(mechanism, "sampling_epsilon", None)
    if isinstance(stated, (int, float)) and np.isfinite(stated) and stated > 0:
        return float(stated)
    release = check_release(release_once(mechanism, prior, rng), prior)
    if not isinstance(release, Points):
        raise InvalidInputError("noise can only be estimated for points releases")
    mean_r = float(np.linalg.norm(release.points - prior, axis=1).mean())
    return np.inf if mean_r <= 1e-12 else prior.shape[1] / mean_r


def denoise_points(Z: np.ndarray, prior: np.ndarray, noise_epsilon: float, *,
                   rng: np.random.Generator | None = None, nearest: int = NEAREST_EXACT,
                   subsample: int = PRIOR_SUBSAMPLE, progress: Progress | None = None
                   ) -> tuple[np.ndarray, dict[str, Any]]:
    """Posterior mean E[x | z] under p(z|x) ∝ exp(−ε‖z − x‖) and the empirical prior; and how it was computed.

    A prior of at most ``nearest + subsample`` records, or any prior when n·N ≤ :data:`EXACT_CELLS`,
    is summed exactly (in row chunks).  Otherwise the posterior of each released point z is
    split into its ``nearest`` nearest prior records
    (kd-tree, summed exactly) and the rest, whose weights are all ≤ e^(−ε d₍ₖ₊₁₎):

    * when the truncation share ρ(z) = R/(W_k + R) ≤ :data:`TRUNCATION_TOL`, with
      W_k = Σ_{j≤k} e^(−ε d₍ⱼ₎) and R = (N − k)·e^(−ε d₍ₖ₊₁₎) bounding the dropped weight,
      the rest is dropped: x̂ − x̂_k = W_F/(W_k + W_F)·(m_F − x̂_k) with both means in the
      prior's hull, so the error is ≤ ρ·D (D = the diagonal of the prior's bounding box);
    * otherwise the rest is estimated from a uniform public subsample of ``subsample`` prior
      records drawn from ``rng`` (never from the members): each far record is in it with
      probability π = M/N, so (1/π)·Σ over the subsample's far records is unbiased for the far
      sums (Horvitz–Thompson), and the ratio x̂ has delta-method standard error
      √(Σ (1 − π)/π² · w_j² ‖s_j − x̂‖²) / Σ w.

    Cost O(n·(k log N + M)) instead of O(n·N); memory O(chunk·M).  The report dict states
    the method, the share of points summed exactly, the largest truncation error bound, and
    the median and 95th percentile of the Monte-Carlo standard errors.
    """
    Z = np.asarray(Z, dtype=np.float64)
    prior = np.asarray(prior, dtype=np.float64)
    n, N = len(Z), len(prior)
    if not np.isfinite(noise_epsilon):
        return Z.copy(), {"method": "identity (no measurable noise)"}
    if N <= nearest + subsample or n * N <= EXACT_CELLS:
        return _denoise_exact(Z, prior, noise_epsilon, progress), {
            "method": "exact posterior over every prior record", "prior_records": N}
    if rng is None:
        raise InvalidInputError(f"a prior of {N} records needs a generator for its public subsample")
    tree = cKDTree(prior)
    sub_idx = np.sort(rng.choice(N, size=subsample, replace=False))
    sub = prior[sub_idx]
    sub_stats = np.column_stack([np.einsum("ij,ij->i", sub, sub), sub, np.ones(subsample)])
    pos_in_sub = np.full(N, -1, dtype=np.int64)
    pos_in_sub[sub_idx] = np.arange(subsample)
    pi = subsample / N
    diameter = float(np.linalg.norm(prior.max(axis=0) - prior.min(axis=0)))
    out = np.empty_like(Z)
    exact = np.zeros(n, dtype=bool)
    bound = np.zeros(n)
    se = np.full(n, np.nan)
    step = max(1, min(ROWS_PER_CHUNK, _CHUNK_CELLS // subsample))
    for s0 in range(0, n, ROWS_PER_CHUNK):
        z = Z[s0:s0 + ROWS_PER_CHUNK]
        dist, idx = tree.query(z, k=nearest + 1)
        w = np.exp(-noise_epsilon * (dist[:, :nearest] - dist[:, :1]))  # ≤ 1, nearest record = 1
        w_near = w.sum(axis=1)
        num = np.einsum("ij,ijk->ik", w, prior[idx[:, :nearest]])
        dropped = (N - nearest) * np.exp(-noise_epsilon * (dist[:, nearest] - dist[:, 0]))
        rho = dropped / (w_near + dropped)
        ok = rho <= TRUNCATION_TOL
        exact[s0:s0 + len(z)], bound[s0:s0 + len(z)] = ok, rho * diameter
        out[s0:s0 + len(z)] = num / w_near[:, None]
        for r0 in range(0, len(z), step):  # the far part, from the subsample, where it can matter
            rows = np.flatnonzero(~ok[r0:r0 + step]) + r0
            if rows.size == 0:
                continue
            w_far = _far_weights(z[rows], sub, sub_stats[:, 0], dist[rows, 0], noise_epsilon)
            near_pos = pos_in_sub[idx[rows, :nearest]]
            hit = near_pos >= 0  # subsample records in a row's near set are already summed exactly
            w_far[np.repeat(np.arange(rows.size), nearest)[hit.ravel()], near_pos[hit]] = 0.0
            far = (w_far @ sub_stats) / pi          # Σ w‖s‖², Σ w s, Σ w over far records, scaled up
            den = w_near[rows] + far[:, -1]
            x_hat = (num[rows] + far[:, 1:-1]) / den[:, None]
            sq = (np.square(w_far, out=w_far) @ sub_stats) * (1.0 - pi) / pi ** 2
            var = sq[:, 0] - 2.0 * np.einsum("ij,ij->i", x_hat, sq[:, 1:-1]) + sq[:, -1] * np.einsum(
                "ij,ij->i", x_hat, x_hat)
            out[s0 + rows] = x_hat
            se[s0 + rows] = np.sqrt(np.maximum(var, 0.0)) / den
        if progress is not None:
            progress("denoising", min(s0 + ROWS_PER_CHUNK, n), n)
    estimated = se[~exact]
    report: dict[str, Any] = {
        "method": f"{nearest} nearest prior records exactly, the rest from a public uniform subsample of "
                  f"{subsample} prior records (Horvitz–Thompson)",
        "prior_records": N, "nearest_exact": nearest, "public_subsample": subsample,
        "truncation_tol": TRUNCATION_TOL, "share_truncated_exactly": float(exact.mean()),
        "truncation_error_bound": float(bound[exact].max()) if exact.any() else None,
        "monte_carlo_se_median": float(np.median(estimated)) if estimated.size else None,
        "monte_carlo_se_p95": float(np.quantile(estimated, 0.95)) if estimated.size else None,
    }
    return out, report


def _far_weights(z: np.ndarray, sub: np.ndarray, sub_sq: np.ndarray, d_nearest: np.ndarray,
                 noise_epsilon: float) -> np.ndarray:
    """exp(−ε(‖z − s‖ − d_nearest)) for every (row, subsample record), in one buffer (≤ 1)."""
    w = z @ sub.T
    w *= -2.0
    w += np.einsum("ij,ij->i", z, z)[:, None]
    w += sub_sq[None, :]
    np.maximum(w, 0.0, out=w)
    np.sqrt(w, out=w)
    w -= d_nearest[:, None]
    w *= -noise_epsilon
    return np.exp(w, out=w)


def _denoise_exact(Z: np.ndarray, prior: np.ndarray, noise_epsilon: float,
                   progress: Progress | None) -> np.ndarray:
    """The posterior mean over every prior record, in chunks of rows (memory chunk × |prior|)."""
    out = np.empty_like(Z)
    chunk = max(1, _CHUNK_CELLS // max(len(prior), 1))
    for s in range(0, len(Z), chunk):
        z = Z[s:s + chunk]
        logw = -noise_epsilon * np.sqrt(_sq_dist(z, prior))
        w = np.exp(logw - logsumexp(logw, axis=1, keepdims=True))
        out[s:s + chunk] = w @ prior
        if progress is not None:
            progress("denoising", min(s + chunk, len(Z)), len(Z))
    return out


def prior_baseline(X: np.ndarray, prior: np.ndarray, radius: float,
                   rng: np.random.Generator | None = None) -> dict[str, Any]:
    """Guessing a random prior record: P[within radius of x] and the median distance, over x and the prior.

    Exact (every pair) when |X|·|prior| ≤ :data:`BASELINE_EXACT_PAIRS`; otherwise a Monte-Carlo
    estimate from :data:`BASELINE_PAIRS` independent uniform pairs (x, s) drawn from ``rng``,
    with the binomial standard error of the rate and a distribution-free 95 % interval for
    the median (order statistics of the sampled distances).
    """
    X = np.asarray(X, dtype=np.float64)
    prior = np.asarray(prior, dtype=np.float64)
    if len(X) * len(prior) <= BASELINE_EXACT_PAIRS:
        counts = cKDTree(prior).query_ball_point(X, r=radius, return_length=True)
        dist = np.sqrt(_sq_dist(X, prior))
        return {"success_rate": float(np.mean(counts / len(prior))), "median_error": float(np.median(dist)),
                "method": "exact over every (record, prior record) pair"}
    if rng is None:
        raise InvalidInputError("a Monte-Carlo prior baseline needs a generator")
    m = BASELINE_PAIRS
    d = np.linalg.norm(X[rng.integers(len(X), size=m)] - prior[rng.integers(len(prior), size=m)], axis=1)
    p = float(np.mean(d <= radius))
    d.sort()
    lo, hi = (int(v) for v in stats.binom.ppf([0.025, 0.975], m, 0.5))
    return {"success_rate": p, "median_error": float(np.median(d)),
            "success_rate_se": math.sqrt(p * (1 - p) / m),
            "median_error_ci95": [float(d[max(lo - 1, 0)]), float(d[min(hi, m - 1)])],
            "method": f"Monte Carlo over {m:,} uniform (record, prior record) pairs"}


def _result(method: str, X: np.ndarray, X_hat: np.ndarray, prior: np.ndarray, radius: float,
            rng: np.random.Generator | None, **extra: Any) -> ReconstructionResult:
    err = np.linalg.norm(X_hat - X, axis=1)
    base = prior_baseline(X, prior, radius, rng)
    return ReconstructionResult(method, float(np.mean(err <= radius)), float(np.median(err)),
                                base.pop("success_rate"), base.pop("median_error"), float(radius), int(len(X)),
                                baseline=base, **extra)


def reconstruct_points(release: Points, members: np.ndarray, non_members: np.ndarray, prior: np.ndarray,
                       noise_epsilon: float, radius: float, rng: np.random.Generator | None = None, *,
                       progress: Progress | None = None) -> ReconstructionResult:
    """Denoise each released point; link it to its nearest candidate record."""
    X_hat, how = denoise_points(release.points, prior, noise_epsilon, rng=rng, progress=progress)
    candidates = np.vstack([members, non_members])
    _, idx = cKDTree(candidates).query(release.points, k=1)
    linked = float(np.mean(idx == np.arange(len(members))))
    return _result("posterior-mean", members, X_hat, prior, radius, rng,
                   linkage_success_rate=linked, noise_epsilon=float(noise_epsilon), denoising=how)


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
    return _result("differencing", targets, X_hat, prior, radius, rng)


def reconstruct(mechanism: Mechanism, release: Release, members: np.ndarray, non_members: np.ndarray,
                prior: np.ndarray, radius: float, rng: np.random.Generator, *,
                max_targets: int = 50, progress: Progress | None = None) -> ReconstructionResult:
    """Run the reconstruction that fits the release kind (points or centroids).

    ``progress(phase, done, total)`` is called as the long phases advance.
    """
    if not radius > 0:
        raise InvalidInputError(f"radius must be > 0, got {radius!r}")
    if isinstance(release, Points):
        noise = estimate_noise_epsilon(mechanism, prior, rng)
        return reconstruct_points(release, members, non_members, prior, noise, radius, rng, progress=progress)
    if isinstance(release, Centroids):
        targets = non_members[:max_targets]
        return reconstruct_centroids(mechanism, members, targets, prior, radius, rng, progress=progress)
    raise InvalidInputError(f"no reconstruction attack for a {release.kind} release")


def default_radius(prior: np.ndarray, rng: np.random.Generator, n_pairs: int = 2000) -> float:
    """A tenth of the median distance between public prior records (data scale, not private)."""
    i = rng.integers(len(prior), size=n_pairs)
    j = rng.integers(len(prior), size=n_pairs)
    return max(0.1 * float(np.median(np.linalg.norm(prior[i] - prior[j], axis=1))), 1e-9)
