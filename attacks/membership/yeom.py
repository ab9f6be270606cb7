"""Yeom et al. (CSF 2018) threshold attacks: loss and confidence.

Yeom et al. §3 ("Membership inference", Alg. 1 and the threshold variant):
a record is a member when the target's loss on it is below a threshold.  A
clustering release has no training loss, so the loss is a distance
(the nD-Laplace thesis §4.1):

* ``Centroids`` — distance from the record to the nearest released centre;
* ``Points`` — distance from the record to the nearest released point (a
  member's own perturbed copy lies about d/ε away);
* ``Spans`` / ``Labels`` — no geometry is released: 1 − confidence is used (as for a release of
  no centre or no point at all).

The confidence variant scores the target's probability of the record's
reference class (Yeom's "confidence" form, Salem et al. 2019).  Scores are
oriented so that higher = more likely a member (1 = member).  The threshold
is chosen on shadow targets trained through the mechanism (:meth:`fit`),
never on the target's records; the variant (loss or confidence) is picked on
shadow data too.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from dpaudit.mechanisms.base import Centroids, InvalidInputError, Points

from ..attack import Attack, Progress, check_count
from ..targets import MechanismPipeline
from .exposure import histogram_edges
from .metrics import MembershipScores, best_threshold, rates_at
from .shadow import AttackerKnowledge, iter_shadow_targets

__all__ = ["YeomAttack", "loss_scores", "confidence_scores"]

VARIANTS = ("auto", "loss", "confidence")


def loss_scores(model: MechanismPipeline, X: np.ndarray) -> np.ndarray:
    """−loss for each record: minus the distance to the nearest released centre/point (any number of
    them; with none, the confidence score − 1, on the same side of 0 as every loss score)."""
    release = model.release_
    if isinstance(release, Centroids):
        ref = release.centers
    elif isinstance(release, Points):
        ref = release.points
    else:
        return confidence_scores(model, X) - 1.0
    if len(ref) == 0:  # nothing released to be near: no geometry either, the confidence form stands in
        return confidence_scores(model, X) - 1.0
    dist, _ = cKDTree(ref).query(np.asarray(X, dtype=np.float64), k=1)
    return -dist


def confidence_scores(model: MechanismPipeline, X: np.ndarray) -> np.ndarray:
    """Target's probability of each record's reference class."""
    y = model.reference.predict(X)
    p = model.predict_proba(X)
    return p[np.arange(len(y)), y]


_SCORERS = {"loss": loss_scores, "confidence": confidence_scores}


class YeomAttack(Attack):
    """Loss / confidence threshold membership attack, calibrated on shadow targets.

    Parameters
    ----------
    variant : {"auto", "loss", "confidence"}
        ``auto`` picks the variant with the larger advantage on shadow data.
    n_shadow : int
        Shadow targets trained through the mechanism for calibration.

    After :meth:`fit`: ``variant_``, ``threshold_``, ``calibration_`` (the shadow scores)
    and ``score_bins_`` (histogram bins fixed on the shadow scores).  Shadow targets are
    trained and scored one at a time, so one shadow model is held in memory at once.
    """

    attack_params = ("variant", "n_shadow")

    def __init__(self, variant: str = "auto", n_shadow: int = 3) -> None:
        self.variant = variant
        self.n_shadow = n_shadow
        self._check_params()

    def _check_params(self) -> None:
        if self.variant not in VARIANTS:
            raise InvalidInputError(f"variant must be one of {', '.join(VARIANTS)}; got {self.variant!r}")
        check_count(self.n_shadow, "n_shadow")

    def fit(self, knowledge: AttackerKnowledge, rng: np.random.Generator, *,
            progress: Progress | None = None) -> "YeomAttack":
        """Train shadow targets and choose variant and threshold on their records."""
        variants = ("loss", "confidence") if self.variant == "auto" else (self.variant,)
        parts: dict[str, list[MembershipScores]] = {name: [] for name in variants}
        for run in iter_shadow_targets(knowledge, self.n_shadow, rng, progress=progress):
            for name in variants:
                parts[name].append(MembershipScores.from_groups(_SCORERS[name](run.model, run.members),
                                                                _SCORERS[name](run.model, run.non_members)))
        best = None
        for name in variants:
            cal = MembershipScores.concatenate(parts[name])
            t = best_threshold(cal)
            tp, n_pos, fp, n_neg = rates_at(cal, t)
            adv = tp / n_pos - fp / n_neg
            if best is None or adv > best[0]:
                best = (adv, name, t, cal)
        if best is None:
            raise RuntimeError("no score variant was scored")
        self.shadow_advantage_, self.variant_, self.threshold_, self.calibration_ = best
        self.score_bins_ = histogram_edges(self.calibration_.scores)
        return self

    def infer(self, target: MechanismPipeline, X: np.ndarray) -> np.ndarray:
        """Membership scores for X against the fitted target (higher = member, 1 = member)."""
        if not hasattr(self, "variant_"):
            raise InvalidInputError("call fit() before infer()")
        return _SCORERS[self.variant_](target, X)
