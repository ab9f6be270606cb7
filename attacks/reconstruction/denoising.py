"""Posterior-mean denoising of ``Points`` releases (perturbed records, e.g. nD-Laplace, the nD-Laplace thesis §3).

With the noise density known, p(z | x) ∝ exp(−ε‖z − x‖₂), and a public prior
given by shadow records s_j, the Bayes estimate under squared loss is
x̂(z) = Σ_j w_j s_j,  w_j ∝ exp(−ε‖z − s_j‖₂).
The noise ε is the mechanism's sampling ε when it states one
(``sampling_epsilon``, e.g. ε/2 under ``resample``); otherwise it is
estimated from shadow releases by maximum likelihood for a Gamma(d, 1/ε)
radius, ε̂ = d / mean‖z − s‖ (the attacker can run the mechanism;
:func:`estimate_noise_epsilon`).  With no measurable noise (an identity
release) x̂ = z.

Scale: no distance matrix larger than a chunk of rows × a bounded number of
columns is ever built.  Each point's nearest prior records are summed exactly
and the rest through a fixed-size public subsample of the prior, with a stated
truncation bound and Monte-Carlo standard error (:func:`denoise_points`).  The
subsample is a seeded, public choice that never looks at membership.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import logsumexp

from dpaudit.execution import release_once
from dpaudit.mechanisms.base import InvalidInputError, Mechanism, Points

from ..attack import NotApplicable, Progress
from ..targets import check_release, sq_dist

__all__ = ["denoise_points", "estimate_noise_epsilon"]

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


def estimate_noise_epsilon(mechanism: Mechanism, prior: np.ndarray, rng: np.random.Generator) -> float:
    """ε of the noise: the mechanism's own sampling ε, else the Gamma(d, 1/ε) MLE on a shadow release.

    Raises :class:`~dpaudit.attacks.attack.NotApplicable` when that release does not hold one point per
    prior record (synthetic points: no point is a record's perturbed copy).
    """
    stated = getattr(mechanism, "sampling_epsilon", None)
    if isinstance(stated, (int, float)) and np.isfinite(stated) and stated > 0:
        return float(stated)
    release = check_release(release_once(mechanism, prior, rng), prior)
    if not isinstance(release, Points):
        raise InvalidInputError("noise can only be estimated for points releases")
    if release.points.shape != prior.shape:
        raise NotApplicable(f"a release of the {len(prior)} prior records held {len(release.points)} points: "
                            "the noise is measured on each record's own released point (synthetic points "
                            "are not perturbed records)")
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
        return denoise_exact(Z, prior, noise_epsilon, progress), {
            "method": "exact posterior over every prior record", "prior_records": N}
    if rng is None:
        raise InvalidInputError(f"a prior of {N} records needs a generator for its public subsample")
    tree = cKDTree(prior)
    sub = _public_subsample(prior, subsample, rng)
    diameter = float(np.linalg.norm(prior.max(axis=0) - prior.min(axis=0)))
    out = np.empty_like(Z)
    exact = np.zeros(n, dtype=bool)
    bound = np.zeros(n)
    se = np.full(n, np.nan)
    for s0 in range(0, n, ROWS_PER_CHUNK):
        rows = slice(s0, s0 + ROWS_PER_CHUNK)
        out[rows], exact[rows], bound[rows], se[rows] = _denoise_chunk(
            Z[rows], prior, tree, sub, noise_epsilon, nearest, diameter)
        if progress is not None:
            progress("denoising", min(s0 + ROWS_PER_CHUNK, n), n)
    return out, _subsample_report(N, nearest, subsample, exact, bound, se)


@dataclass(frozen=True)
class _Subsample:
    """The public uniform subsample of the prior that estimates the far part of every posterior."""

    records: np.ndarray     # (M, d)
    stats: np.ndarray       # (M, d + 2): ‖s‖², s and 1 per record
    position: np.ndarray    # (N,): each prior record's row in the subsample, −1 when it is not in it
    share: float            # π = M/N, every prior record's chance of being in it


def _public_subsample(prior: np.ndarray, size: int, rng: np.random.Generator) -> _Subsample:
    """``size`` prior records drawn uniformly without replacement from ``rng`` (never from the members)."""
    N = len(prior)
    sub_idx = np.sort(rng.choice(N, size=size, replace=False))
    sub = prior[sub_idx]
    sub_stats = np.column_stack([np.einsum("ij,ij->i", sub, sub), sub, np.ones(size)])
    pos_in_sub = np.full(N, -1, dtype=np.int64)
    pos_in_sub[sub_idx] = np.arange(size)
    return _Subsample(sub, sub_stats, pos_in_sub, size / N)


def _denoise_chunk(z: np.ndarray, prior: np.ndarray, tree: cKDTree, sub: _Subsample, noise_epsilon: float,
                   nearest: int, diameter: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One chunk of released points: the ``nearest`` prior records summed exactly, the rest dropped where
    the truncation share ρ ≤ :data:`TRUNCATION_TOL` and estimated from the subsample elsewhere.

    Returns the posterior means, which rows were truncated exactly, their error bounds ρ·D, and the
    Monte-Carlo standard errors (NaN where truncated).
    """
    N = len(prior)
    dist, idx = tree.query(z, k=nearest + 1)
    w = np.exp(-noise_epsilon * (dist[:, :nearest] - dist[:, :1]))  # ≤ 1, nearest record = 1
    w_near = w.sum(axis=1)
    num = np.einsum("ij,ijk->ik", w, prior[idx[:, :nearest]])
    dropped = (N - nearest) * np.exp(-noise_epsilon * (dist[:, nearest] - dist[:, 0]))
    rho = dropped / (w_near + dropped)
    ok = rho <= TRUNCATION_TOL
    out = num / w_near[:, None]
    se = np.full(len(z), np.nan)
    step = max(1, min(ROWS_PER_CHUNK, _CHUNK_CELLS // len(sub.records)))
    for r0 in range(0, len(z), step):  # the far part, from the subsample, where it can matter
        rows = np.flatnonzero(~ok[r0:r0 + step]) + r0
        if rows.size == 0:
            continue
        out[rows], se[rows] = _far_part(z[rows], dist[rows, 0], idx[rows, :nearest], num[rows], w_near[rows],
                                        sub, noise_epsilon)
    return out, ok, rho * diameter, se


def _far_part(z: np.ndarray, d_nearest: np.ndarray, near_idx: np.ndarray, num: np.ndarray, w_near: np.ndarray,
              sub: _Subsample, noise_epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Posterior means with the far records estimated from the subsample (Horvitz–Thompson), and their
    delta-method standard errors; ``num``/``w_near`` are the exact sums over the near records."""
    w_far = _far_weights(z, sub.records, sub.stats[:, 0], d_nearest, noise_epsilon)
    near_pos = sub.position[near_idx]
    hit = near_pos >= 0  # subsample records in a row's near set are already summed exactly
    w_far[np.repeat(np.arange(len(z)), near_idx.shape[1])[hit.ravel()], near_pos[hit]] = 0.0
    pi = sub.share
    far = (w_far @ sub.stats) / pi          # Σ w‖s‖², Σ w s, Σ w over far records, scaled up
    den = w_near + far[:, -1]
    x_hat = (num + far[:, 1:-1]) / den[:, None]
    sq = (np.square(w_far, out=w_far) @ sub.stats) * (1.0 - pi) / pi ** 2
    var = sq[:, 0] - 2.0 * np.einsum("ij,ij->i", x_hat, sq[:, 1:-1]) + sq[:, -1] * np.einsum(
        "ij,ij->i", x_hat, x_hat)
    return x_hat, np.sqrt(np.maximum(var, 0.0)) / den


def _subsample_report(N: int, nearest: int, subsample: int, exact: np.ndarray, bound: np.ndarray,
                      se: np.ndarray) -> dict[str, Any]:
    """How :func:`denoise_points` computed the posterior from the nearest records and the subsample."""
    estimated = se[~exact]
    return {
        "method": f"{nearest} nearest prior records exactly, the rest from a public uniform subsample of "
                  f"{subsample} prior records (Horvitz–Thompson)",
        "prior_records": N, "nearest_exact": nearest, "public_subsample": subsample,
        "truncation_tol": TRUNCATION_TOL, "share_truncated_exactly": float(exact.mean()),
        "truncation_error_bound": float(bound[exact].max()) if exact.any() else None,
        "monte_carlo_se_median": float(np.median(estimated)) if estimated.size else None,
        "monte_carlo_se_p95": float(np.quantile(estimated, 0.95)) if estimated.size else None,
    }


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


def denoise_exact(Z: np.ndarray, prior: np.ndarray, noise_epsilon: float,
                   progress: Progress | None) -> np.ndarray:
    """The posterior mean over every prior record, in chunks of rows (memory chunk × |prior|)."""
    out = np.empty_like(Z)
    chunk = max(1, _CHUNK_CELLS // max(len(prior), 1))
    for s in range(0, len(Z), chunk):
        z = Z[s:s + chunk]
        logw = -noise_epsilon * np.sqrt(sq_dist(z, prior))
        w = np.exp(logw - logsumexp(logw, axis=1, keepdims=True))
        out[s:s + chunk] = w @ prior
        if progress is not None:
            progress("denoising", min(s + chunk, len(Z)), len(Z))
    return out
