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

The package holds one module per technique: :mod:`.denoising` (posterior-mean
denoising, the noise ε), :mod:`.linkage` (the points attack: denoising and
nearest-neighbour linkage), :mod:`.differencing` (centroid differencing),
:mod:`.baseline` (the prior baseline, the default radius); :mod:`.result`
(what every attack reports) and :mod:`.run` (:func:`reconstruct`, the attack
that fits the release kind).  The public names are imported here.
"""

from __future__ import annotations

from .baseline import BASELINE_EXACT_PAIRS, BASELINE_PAIRS, default_radius, prior_baseline
from .denoising import denoise_points, estimate_noise_epsilon
from .differencing import difference_centroids, reconstruct_centroids
from .linkage import reconstruct_points
from .result import ReconstructionResult
from .run import reconstruct

__all__ = ["BASELINE_EXACT_PAIRS", "BASELINE_PAIRS", "ReconstructionResult", "default_radius", "denoise_points",
           "difference_centroids", "estimate_noise_epsilon", "prior_baseline", "reconstruct", "reconstruct_centroids",
           "reconstruct_points"]
