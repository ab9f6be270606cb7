"""Label-only membership inference: only the target's predicted label is used.

Two scores (higher = member; 1 = member):

* ``boundary`` — Choquette-Choo et al. (ICML 2021) §4 / Li & Zhang (CCS 2021)
  "boundary attack": members sit farther from the decision boundary.  The
  distance is found by HopSkipJump within the public box, every record's search
  in lockstep so that each step is one query of the target on all of them
  (:mod:`.boundary_search`: ART's ``HopSkipJump`` and ``LabelOnlyDecisionBoundary``
  step for step, batched); ART's ``calibrate_distance_threshold`` rule chooses
  the threshold τ on a *shadow* target's members and non-members, and the score
  is ART's membership probability sigmoid(distance − τ), monotone in the
  distance.  Every draw comes from the attack's own generator.
* ``consistency`` — Choquette-Choo et al. §4 "data augmentation" attack,
  for label releases and spans where a boundary search is moot (the label is
  piecewise constant on grid cells): the share of ``n_augment`` Gaussian
  perturbations x + σ·N(0, I) whose label equals the record's reference label
  (noise = −1 counts as a miss).  σ is public (a scale of the shadow data).
  Its threshold is chosen on shadow targets.

``auto`` uses ``boundary`` for points and centroid releases, ``consistency``
for spans and labels.
"""

from __future__ import annotations

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError, Labels, Spans

from ..attack import Attack, Progress, check_count
from ..targets import MechanismPipeline
from .boundary_search import HopSkipJump, boundary_distances, distance_threshold
from .exposure import PROBABILITY_BINS
from .metrics import MembershipScores
from .shadow import AttackerKnowledge, train_shadow_targets

__all__ = ["LabelOnlyAttack"]

METHODS = ("auto", "boundary", "consistency")


def hard_labels(model: MechanismPipeline, X: np.ndarray) -> np.ndarray:
    """The label a label-only attacker sees: argmax, or −1 where the target abstains (uniform)."""
    p = model.predict_proba(X)
    lab = np.argmax(p, axis=1)
    lab[np.ptp(p, axis=1) <= 1e-12] = -1
    return lab


class LabelOnlyAttack(Attack):
    """Label-only membership inference (decision-boundary distance or augmentation consistency).

    Parameters
    ----------
    method : {"auto", "boundary", "consistency"}
    n_queries : int
        Shadow members and non-members used to calibrate (each).
    n_augment : int
        Perturbations per record for ``consistency``.
    max_iter, max_eval, init_eval : int
        HopSkipJump budget per record for ``boundary`` (kept small: it is
        the expensive part).

    Cost is linear in the queried records (2 × ``n_queries`` to calibrate plus
    the scored ones) and independent of the data size beyond training the
    shadow target.  Scores lie in [0, 1]; ``score_bins_`` are 20 equal bins.
    """

    attack_params = ("method", "n_queries", "n_augment", "max_iter", "max_eval", "init_eval")

    def __init__(self, method: str = "auto", n_queries: int = 40, n_augment: int = 64, max_iter: int = 5,
                 max_eval: int = 200, init_eval: int = 20) -> None:
        self.method = method
        self.n_queries = n_queries
        self.n_augment = n_augment
        self.max_iter = max_iter
        self.max_eval = max_eval
        self.init_eval = init_eval
        self._check_params()

    def _check_params(self) -> None:
        if self.method not in METHODS:
            raise InvalidInputError(f"method must be one of {', '.join(METHODS)}; got {self.method!r}")
        for name in ("n_queries", "n_augment", "max_iter", "max_eval", "init_eval"):
            check_count(getattr(self, name), name)

    # ---- scores -------------------------------------------------------------------
    def _resolve(self, model: MechanismPipeline) -> str:
        if self.method != "auto":
            return self.method
        return "consistency" if isinstance(model.release_, (Spans, Labels)) else "boundary"

    def _consistency(self, model: MechanismPipeline, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        y = model.reference.predict(X)
        n, d = X.shape
        noisy = X[:, None, :] + self.sigma_ * rng.standard_normal((n, self.n_augment, d))
        lab = hard_labels(model, noisy.reshape(-1, d)).reshape(n, self.n_augment)
        return np.mean(lab == y[:, None], axis=1)

    def _search(self) -> HopSkipJump:
        return HopSkipJump(max_iter=self.max_iter, max_eval=self.max_eval, init_eval=self.init_eval, init_size=50)

    def _boundary(self, model: MechanismPipeline, X: np.ndarray, rng: np.random.Generator,
                  progress: Progress | None = None) -> np.ndarray:
        """ART's membership probability sigmoid(distance − τ) of each record, its distance to the boundary found
        by HopSkipJump (:func:`~.boundary_search.boundary_distances`)."""
        report = None if progress is None else (lambda done, total: progress("label-only: boundary distances",
                                                                              done, total))
        distance = boundary_distances(model, X, model.reference.predict(X), self.clip_values_, rng,
                                      self._search(), report)
        return np.asarray(1.0 / (1.0 + np.exp(-(distance - self.tau_))))

    # ---- API ----------------------------------------------------------------------
    def fit(self, knowledge: AttackerKnowledge, rng: np.random.Generator, *,
            progress: Progress | None = None) -> "LabelOnlyAttack":
        """Calibrate on one shadow target trained through the mechanism."""
        from ..reconstruction import default_radius

        run = train_shadow_targets(knowledge, 1, rng)[0]
        if progress is not None:
            progress("label-only: calibrating on a shadow target", 0, 1)
        q = self.n_queries
        members, non_members = run.members[:q], run.non_members[:q]
        self.sigma_ = default_radius(knowledge.shadow_X, rng)
        self.clip_values_ = knowledge.clip_values
        self.method_ = self._resolve(run.model)
        if self.method_ == "boundary":
            both = np.vstack([members, non_members])
            distance = boundary_distances(run.model, both, knowledge.reference.predict(both), self.clip_values_, rng,
                                          self._search())
            self.tau_ = max(distance_threshold(distance[:len(members)], distance[len(members):]), 1e-12)
            # τ was chosen on the shadow target: score ≥ 0.5 ⇔ distance ≥ τ.
            self.calibration_ = None
            self.threshold_: float | None = 0.5
        else:
            member_s = self._consistency(run.model, members, rng)
            non_s = self._consistency(run.model, non_members, rng)
            self.calibration_, self.threshold_ = MembershipScores.from_groups(member_s, non_s), None
        self.score_bins_ = PROBABILITY_BINS
        if progress is not None:
            progress("label-only: calibrating on a shadow target", 1, 1)
        return self

    def infer(self, target: MechanismPipeline, X: np.ndarray, rng: np.random.Generator, *,
              progress: Progress | None = None) -> np.ndarray:
        """Label-only membership scores for X (higher = member; 1 = member)."""
        if not hasattr(self, "method_"):
            raise InvalidInputError("call fit() before infer()")
        X = np.asarray(X, dtype=np.float64)
        if self.method_ == "boundary":
            return self._boundary(target, X, rng, progress)
        return self._consistency(target, X, rng)
