"""The attack on ``Points`` releases: denoise every released point, and link it to a candidate record.

**Nearest-neighbour linkage** links each released point to the nearest
candidate record (members ∪ non-members, the population the attacker must
pick from; a kd-tree query); success = linked to the true record.  The
denoised points (posterior means, :mod:`.denoising`) are scored against the
members and the prior baseline.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from dpaudit.mechanisms.base import Points

from ..attack import NotApplicable, Progress
from .denoising import denoise_points
from .result import ReconstructionResult, scored

__all__ = ["reconstruct_points"]


def reconstruct_points(release: Points, members: np.ndarray, non_members: np.ndarray, prior: np.ndarray,
                       noise_epsilon: float, radius: float, rng: np.random.Generator | None = None, *,
                       progress: Progress | None = None) -> ReconstructionResult:
    """Denoise each released point; link it to its nearest candidate record.

    The release must hold one point per member, in the members' order (a perturbation); a release
    of another size raises :class:`~dpaudit.attacks.attack.NotApplicable`.
    """
    if len(release.points) != len(members):
        raise NotApplicable(f"the release holds {len(release.points)} points for {len(members)} records: "
                            "linkage pairs each released point with its record")
    X_hat, how = denoise_points(release.points, prior, noise_epsilon, rng=rng, progress=progress)
    candidates = np.vstack([members, non_members])
    _, idx = cKDTree(candidates).query(release.points, k=1)
    linked = float(np.mean(idx == np.arange(len(members))))
    return scored("posterior-mean", members, X_hat, prior, radius, rng,
                  linkage_success_rate=linked, noise_epsilon=float(noise_epsilon), denoising=how)
