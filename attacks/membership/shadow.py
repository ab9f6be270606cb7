"""What a membership attacker knows, and shadow targets trained the target's way.

The attacker of every membership attack here (Shokri et al. 2017 §IV;
the nD-Laplace thesis §5.3.2) knows the mechanism and its parameters, the public
box, the size of the target's training set, and has *shadow data* from the
same distribution that is disjoint from the target's members and
non-members.  From the shadow data it fits a public :class:`Reference`
clustering (the labels it attaches to records) and trains shadow targets by
running the mechanism itself (:class:`~dpaudit.attacks.targets.MechanismPipeline`).
Decision thresholds are always chosen on shadow targets, never on the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError, Mechanism, check_bounds, random_state_from
from dpaudit.mechanisms.registry import as_mechanism

from ..attack import Progress
from ..targets import MechanismPipeline, Reference

__all__ = ["AttackerKnowledge", "ShadowRun", "iter_shadow_targets", "train_shadow_targets"]


@dataclass(frozen=True, eq=False)
class AttackerKnowledge:
    """The public side of an attack: mechanism, shadow data, reference classes, sizes.

    ``mechanism`` is a mechanism or anything :func:`dpaudit.plugin` wraps (a function, an estimator class, a
    spec): a plug-in that states no claim must be wrapped first, ``dpaudit.plugin(fn, epsilon=…, output=…,
    neighbours=…, bounds=…)`` (:func:`~dpaudit.mechanisms.registry.as_mechanism` says so).  ``bounds`` is the
    public box; not given, the mechanism's own ``bounds`` (a box stated to :func:`dpaudit.plugin`), else none.
    """

    mechanism: Mechanism
    shadow_X: np.ndarray
    reference: Reference
    n_members: int
    bounds: tuple[np.ndarray, np.ndarray] | None = None
    n_estimators: int = 100

    def __post_init__(self) -> None:
        object.__setattr__(self, "mechanism", as_mechanism(self.mechanism))
        box = getattr(self.mechanism, "bounds", None)
        if self.bounds is None and box is not None:
            lo, hi = check_bounds(box, np.asarray(self.shadow_X).shape[1], name="bounds")
            object.__setattr__(self, "bounds", (lo, hi))

    def pipeline(self, seed: int) -> MechanismPipeline:
        """An unfitted estimator that trains a target the way the real one was trained."""
        return MechanismPipeline(self.mechanism, self.reference, seed=seed, n_estimators=self.n_estimators)

    @property
    def clip_values(self) -> tuple[float, float]:
        """Scalar (min, max) of the public box, for ART estimators."""
        if self.bounds is None:
            lo, hi = self.shadow_X.min(), self.shadow_X.max()  # public shadow data, not the target's
            return float(lo), float(hi)
        return float(np.min(self.bounds[0])), float(np.max(self.bounds[1]))


@dataclass(frozen=True, eq=False)
class ShadowRun:
    """One shadow target with the records it was (members) and was not trained on."""

    model: MechanismPipeline
    members: np.ndarray
    non_members: np.ndarray


def train_shadow_targets(knowledge: AttackerKnowledge, n_shadow: int, rng: np.random.Generator
                         ) -> list[ShadowRun]:
    """Train ``n_shadow`` shadow targets on disjoint slices of the shadow data.

    Each slice holds up to ``n_members`` members and as many non-members, as
    ART's ``ShadowModels(disjoint_datasets=True)`` does.
    """
    return list(iter_shadow_targets(knowledge, n_shadow, rng))


def iter_shadow_targets(knowledge: AttackerKnowledge, n_shadow: int, rng: np.random.Generator, *,
                        progress: Progress | None = None) -> Iterator[ShadowRun]:
    """:func:`train_shadow_targets` one target at a time, so a caller holds one shadow model at once.

    The same runs from the same generator, provided the caller draws nothing from ``rng``
    between runs.
    """
    X = knowledge.shadow_X
    per = min(2 * knowledge.n_members, len(X) // n_shadow)
    if per < 4:
        raise InvalidInputError(
            f"{len(X)} shadow records are too few for {n_shadow} shadow models; give more records")
    order = rng.permutation(len(X))
    for i in range(n_shadow):
        part = X[order[i * per:(i + 1) * per]]
        half = per // 2
        model = knowledge.pipeline(random_state_from(rng)).fit(part[:half])
        if progress is not None:
            progress("shadow targets", i + 1, n_shadow)
        yield ShadowRun(model, part[:half], part[half:])
