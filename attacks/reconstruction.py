"""Distance-based reconstruction of records from releases (DESIGN §4).

``Points`` releases (perturbed records, e.g. nD-Laplace, thesis seed 000 §3):

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
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial import cKDTree
from scipy.special import logsumexp

from mechanisms.base import Centroids, InvalidInputError, Mechanism, Points, Release

from .execution import release_once
from .targets import _sq_dist, check_release

__all__ = ["ReconstructionResult", "denoise_points", "difference_centroids", "reconstruct",
           "prior_baseline", "estimate_noise_epsilon"]


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
                   chunk: int = 512) -> np.ndarray:
    """Posterior mean E[x | z] under p(z|x) ∝ exp(−ε‖z − x‖) and the empirical prior."""
    Z = np.asarray(Z, dtype=np.float64)
    if not np.isfinite(noise_epsilon):
        return Z.copy()
    out = np.empty_like(Z)
    for s in range(0, len(Z), chunk):  # chunks bound memory at chunk × |prior|
        z = Z[s:s + chunk]
        d = np.sqrt(_sq_dist(z, prior))
        logw = -noise_epsilon * d
        w = np.exp(logw - logsumexp(logw, axis=1, keepdims=True))
        out[s:s + chunk] = w @ prior
    return out


def prior_baseline(X: np.ndarray, prior: np.ndarray, radius: float) -> tuple[float, float]:
    """(P[a random prior record is within radius of x], median distance), averaged over x."""
    counts = cKDTree(prior).query_ball_point(X, r=radius, return_length=True)
    # Median error of a random prior guess: distances of every x to every prior record.
    dist = np.sqrt(_sq_dist(X, prior))
    return float(np.mean(counts / len(prior))), float(np.median(dist))


def _result(method: str, X: np.ndarray, X_hat: np.ndarray, prior: np.ndarray, radius: float,
            **extra: Any) -> ReconstructionResult:
    err = np.linalg.norm(X_hat - X, axis=1)
    base_rate, base_median = prior_baseline(X, prior, radius)
    return ReconstructionResult(method, float(np.mean(err <= radius)), float(np.median(err)),
                                base_rate, base_median, float(radius), int(len(X)), **extra)


def reconstruct_points(release: Points, members: np.ndarray, non_members: np.ndarray, prior: np.ndarray,
                       noise_epsilon: float, radius: float) -> ReconstructionResult:
    """Denoise each released point; link it to its nearest candidate record."""
    X_hat = denoise_points(release.points, prior, noise_epsilon)
    candidates = np.vstack([members, non_members])
    _, idx = cKDTree(candidates).query(release.points, k=1)
    linked = float(np.mean(idx == np.arange(len(members))))
    return _result("posterior-mean", members, X_hat, prior, radius,
                   linkage_success_rate=linked, noise_epsilon=float(noise_epsilon))


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
                          radius: float, rng: np.random.Generator) -> ReconstructionResult:
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
    return _result("differencing", targets, X_hat, prior, radius)


def reconstruct(mechanism: Mechanism, release: Release, members: np.ndarray, non_members: np.ndarray,
                prior: np.ndarray, radius: float, rng: np.random.Generator, *,
                max_targets: int = 50) -> ReconstructionResult:
    """Run the reconstruction that fits the release kind (points or centroids)."""
    if not radius > 0:
        raise InvalidInputError(f"radius must be > 0, got {radius!r}")
    if isinstance(release, Points):
        noise = estimate_noise_epsilon(mechanism, prior, rng)
        return reconstruct_points(release, members, non_members, prior, noise, radius)
    if isinstance(release, Centroids):
        targets = non_members[:max_targets]
        return reconstruct_centroids(mechanism, members, targets, prior, radius, rng)
    raise InvalidInputError(f"no reconstruction attack for a {release.kind} release")


def default_radius(prior: np.ndarray, rng: np.random.Generator, n_pairs: int = 2000) -> float:
    """A tenth of the median distance between public prior records (data scale, not private)."""
    i = rng.integers(len(prior), size=n_pairs)
    j = rng.integers(len(prior), size=n_pairs)
    return max(0.1 * float(np.median(np.linalg.norm(prior[i] - prior[j], axis=1))), 1e-9)
