"""Shokri et al. (S&P 2017) shadow-model membership inference, through ART.

The thesis set-up (the nD-Laplace thesis §5.3.2, Fig. 5.1): the target is what the release
becomes (:mod:`dpaudit.attacks.targets`); ``num_shadow`` shadow models (3) are
trained *through the mechanism* (:class:`~dpaudit.attacks.targets.MechanismPipeline`)
with ART's ``ShadowModels`` on disjoint slices of the attacker's shadow data;
ART's ``MembershipInferenceBlackBox`` with a RandomForest attack model learns
member vs non-member from the shadow models' prediction vectors and the
records' (reference) labels; the target's candidate records (members and
non-members) are then classified.  The decision is the attack model's hard prediction
(membership probability ≥ 0.5), fixed by training on shadow data only.

Corrected against the thesis's public experiment code: members
and non-members are both queried with their *plain* records.  The thesis
code queried members with their perturbed copies and non-members with plain
ones, so part of its "advantage" told perturbed from plain records apart.

Scale: the attack model is trained on at most :data:`ATTACK_MODEL_MAX_ROWS`
shadow members and as many shadow non-members, a seeded uniform subsample of
ART's shadow dataset (shadow membership is the attacker's own, so the
subsample reveals nothing about the target).  Shadow and target forests are
bounded by :data:`dpaudit.attacks.targets.FOREST_MAX_SAMPLES`.

ART pitfalls handled: ``ShadowModels`` clones its template with
``clone_for_refitting()``, which needs a *fitted* ``SklearnClassifier``, so
the template is fitted once on a little shadow data; ART's default attack
model is an unseeded RandomForest, so a seed is set on it before fitting;
ART's import-time warnings are silenced.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError, random_state_from

from ..attack import Attack, Progress, check_count
from ..targets import MechanismPipeline
from .exposure import PROBABILITY_BINS
from .shadow import AttackerKnowledge

__all__ = ["ShokriAttack"]

# Rows of each group (shadow members, shadow non-members) the attack model learns from.  Its
# input is 2k numbers (prediction vector and one-hot label); a RandomForest on 2·10⁴ such rows
# fits in ~3 s with ~10⁶ nodes (~100 MB), and more rows buy little: the per-row signal
# against a DP target is weak and the forest's variance is already averaged over 100 trees.
# Below the cap (every default-sized run) ART's whole shadow dataset is used, as before.
ATTACK_MODEL_MAX_ROWS = 10_000
# The attack model's inputs are the target's class probabilities, which ART casts to float32 and
# standardises on the shadow rows.  A class that keeps probabilities near 0 in every shadow row
# (a release with fewer centres than classes, a far centre: e^(−d²) underflows to a float32
# denormal) gets a standard deviation near 10⁻⁴⁰, and any larger value at inference becomes ±inf.
# Probabilities are floored at PROBABILITY_FLOOR (shadow rows and queries alike), so a feature's
# spread is either 0 (ART then leaves it unscaled) or at least about the floor.
PROBABILITY_FLOOR = 1e-12


def _art() -> tuple[Any, Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from art.attacks.inference.membership_inference import MembershipInferenceBlackBox, ShadowModels

        # The generic wrapper: ART's SklearnClassifier() factory refuses estimators
        # defined outside the sklearn package.
        from art.estimators.classification.scikitlearn import ScikitlearnClassifier
    return ScikitlearnClassifier, ShadowModels, MembershipInferenceBlackBox


def cap_rows(group: tuple[np.ndarray, ...], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """At most ATTACK_MODEL_MAX_ROWS rows of a (records, labels, predictions) group, uniformly, in order."""
    n = len(group[0])
    if n <= ATTACK_MODEL_MAX_ROWS:
        return group
    keep = np.sort(rng.choice(n, size=ATTACK_MODEL_MAX_ROWS, replace=False))
    return tuple(a[keep] for a in group)


def _floored(pred: np.ndarray) -> np.ndarray:
    """Class probabilities floored at :data:`PROBABILITY_FLOOR` (finite once ART standardises them)."""
    return np.maximum(np.asarray(pred, dtype=np.float64), PROBABILITY_FLOOR)


def _one_hot(y: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(y), k))
    out[np.arange(len(y)), y] = 1.0
    return out


class ShokriAttack(Attack):
    """Shadow-model membership inference (ART ``ShadowModels`` + ``MembershipInferenceBlackBox``).

    Parameters
    ----------
    n_shadow : int
        Number of shadow models (thesis: 3).
    attack_model_type : str
        ART's attack model ("rf" = RandomForest, the thesis's choice).
    threshold : float
        Decision on the attack model's membership probability (0.5 = its hard prediction).

    ``infer`` returns the attack model's membership probability per record
    (higher = member; 1 = member); its histogram bins are ``score_bins_``
    (20 equal bins on [0, 1]).
    """

    attack_params = ("n_shadow", "attack_model_type", "threshold")

    def __init__(self, n_shadow: int = 3, attack_model_type: str = "rf", threshold: float = 0.5) -> None:
        self.n_shadow = n_shadow
        self.attack_model_type = attack_model_type
        self.threshold = threshold
        self._check_params()

    def _check_params(self) -> None:
        check_count(self.n_shadow, "n_shadow")
        if self.attack_model_type not in ("rf", "gb", "lr", "dt", "knn", "svm"):
            raise InvalidInputError(f"attack_model_type must be one of rf, gb, lr, dt, knn, svm; "
                                    f"got {self.attack_model_type!r}")
        if not 0.0 < float(self.threshold) < 1.0:
            raise InvalidInputError(f"threshold must be in (0, 1), got {self.threshold!r}")

    def fit(self, knowledge: AttackerKnowledge, rng: np.random.Generator, *,
            progress: Progress | None = None) -> "ShokriAttack":
        """Train shadow models through the mechanism, then the attack model on their outputs."""
        SklearnClassifier, ShadowModels, MembershipInferenceBlackBox = _art()
        k = knowledge.reference.n_classes
        per_model = 2 * knowledge.n_members
        X = knowledge.shadow_X
        need = self.n_shadow * per_model
        if len(X) < self.n_shadow * 4:
            raise InvalidInputError(f"{len(X)} shadow records are too few for {self.n_shadow} shadow models")
        X = X[rng.permutation(len(X))[:min(need, len(X))]]
        y = _one_hot(knowledge.reference.predict(X), k)
        # a known ART pitfall: clone_for_refitting() needs a fitted template (nb_classes ≥ 2).
        template = knowledge.pipeline(random_state_from(rng)).fit(X[: max(2 * k, 20)])
        self.clip_values_ = knowledge.clip_values
        classifier = SklearnClassifier(model=template, clip_values=self.clip_values_)
        shadow = ShadowModels(classifier, num_shadow_models=self.n_shadow, disjoint_datasets=True,
                              random_state=random_state_from(rng))
        # Each clone is a MechanismPipeline with the template's seed; its noise differs per
        # slice because the pipeline derives its generator from the seed and the data.
        if progress is not None:
            progress("shokri: shadow models", 0, 2)
        members, non_members = shadow.generate_shadow_dataset(X, y, member_ratio=0.5)
        del shadow  # the fitted shadow models: only their predictions are needed
        (mx, my, mp), (nx, ny, npred) = cap_rows(members, rng), cap_rows(non_members, rng)
        if progress is not None:
            progress("shokri: attack model", 1, 2)
        attack = MembershipInferenceBlackBox(classifier, input_type="prediction",
                                             attack_model_type=self.attack_model_type)
        if hasattr(attack.attack_model, "random_state"):
            attack.attack_model.set_params(random_state=random_state_from(rng))
        attack.fit(x=mx, y=my, test_x=nx, test_y=ny, pred=_floored(mp), test_pred=_floored(npred))
        if progress is not None:
            progress("shokri: attack model", 2, 2)
        self.attack_ = attack
        self.n_classes_ = k
        self.score_bins_ = PROBABILITY_BINS
        return self

    def infer(self, target: MechanismPipeline, X: np.ndarray) -> np.ndarray:
        """Membership probability for each record of X (plain records; 1 = member)."""
        if not hasattr(self, "attack_"):
            raise InvalidInputError("call fit() before infer()")
        X = np.asarray(X, dtype=np.float64)
        y = _one_hot(target.reference.predict(X), self.n_classes_)
        pred = _floored(target.predict_proba(X))
        return np.asarray(self.attack_.infer(X, y, pred=pred, probabilities=True), dtype=float).ravel()
