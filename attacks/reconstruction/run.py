"""The reconstruction that fits a release's kind: linkage on points, differencing on centroids."""

from __future__ import annotations

import numpy as np

from dpaudit.mechanisms.base import Centroids, InvalidInputError, Mechanism, Points, Release

from ..attack import NotApplicable, Progress
from .denoising import estimate_noise_epsilon
from .differencing import reconstruct_centroids
from .linkage import reconstruct_points
from .result import ReconstructionResult

__all__ = ["reconstruct"]


def reconstruct(mechanism: Mechanism, release: Release, members: np.ndarray, non_members: np.ndarray,
                prior: np.ndarray, radius: float, rng: np.random.Generator, *,
                max_targets: int = 50, progress: Progress | None = None) -> ReconstructionResult:
    """Run the reconstruction that fits the release kind (points or centroids).

    ``progress(phase, done, total)`` is called as the long phases advance.  Raises
    :class:`~dpaudit.attacks.attack.NotApplicable` when the release cannot be read record by record (a
    points release with another number of points than records: synthetic data).
    """
    if not radius > 0:
        raise InvalidInputError(f"radius must be > 0, got {radius!r}")
    if isinstance(release, Points):
        if len(release.points) != len(members):
            raise NotApplicable(f"the release holds {len(release.points)} points for {len(members)} records: "
                                "denoising and linkage pair each released point with its record "
                                "(synthetic points are not perturbed records)")
        noise = estimate_noise_epsilon(mechanism, prior, rng)
        return reconstruct_points(release, members, non_members, prior, noise, radius, rng, progress=progress)
    if isinstance(release, Centroids):
        targets = non_members[:max_targets]
        return reconstruct_centroids(mechanism, members, targets, prior, radius, rng, progress=progress)
    raise InvalidInputError(f"no reconstruction attack for a {release.kind} release")
