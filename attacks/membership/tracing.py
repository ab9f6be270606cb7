"""Tracing: membership inference on released statistics (vector releases).

Homer et al. (PLoS Genetics 2008) and Dwork, Smith, Steinke, Ullman & Vadhan
(FOCS 2015, "Robust traceability from trace amounts") score a record x against a
released statistic v by the inner product of (x − population mean) with
(v − population statistic): members pull the release towards themselves.  Here the
population statistic is what the mechanism releases on public data — the attacker
runs it on ``n_shadow`` disjoint halves of its shadow data
(:mod:`dpaudit.attacks.membership.shadow`'s split: per slice, one half the input, the other half
non-members) — so the attack works for a noisy mean and a noisy sum alike; the
statistic and the record's direction are :mod:`dpaudit.attacks.membership.vector_map`'s (a learned
direction when the release does not have one value per feature).

The decision threshold is chosen on the shadow runs' own members and non-members,
each scored against a vector map fitted on the *other* shadow runs, never on the
target.  Only vector releases are traced; other kinds are not applicable (LiRA and
RMIA score every kind, vectors included).  Scores: higher = member (1 = member).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.execution import release_once
from dpaudit.mechanisms.base import InvalidInputError, Vector

from ..attack import Attack, NotApplicable, Progress, check_count
from .exposure import histogram_edges
from .metrics import MembershipScores
from .per_record import release_and_inputs
from .shadow import AttackerKnowledge
from .vector_map import VectorMap, pad_vectors, release_values

__all__ = ["TracingAttack"]


def _shadow_runs(knowledge: AttackerKnowledge, n_shadow: int, rng: np.random.Generator,
                 progress: Progress | None) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(members, non-members, release values) of ``n_shadow`` mechanism runs on disjoint shadow slices."""
    X = knowledge.shadow_X
    per = min(2 * knowledge.n_members, len(X) // n_shadow)
    if per < 4:
        raise InvalidInputError(f"{len(X)} shadow records are too few for {n_shadow} shadow runs; give more records")
    order = rng.permutation(len(X))
    runs = []
    for i in range(n_shadow):
        part = X[order[i * per:(i + 1) * per]]
        members, non_members = part[:per // 2], part[per // 2:]
        release = release_once(knowledge.mechanism, members, rng, call="tracing shadow run")
        if not isinstance(release, Vector):
            raise NotApplicable(f"tracing scores vector releases; the mechanism released {release.kind}")
        runs.append((members, non_members, release_values(release)))
        if progress is not None:
            progress("tracing: shadow runs", i + 1, n_shadow)
    return runs


def _map(runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]], centre: np.ndarray,
         public: np.ndarray) -> VectorMap:
    # vectors of differing lengths (a sparse histogram): padded with "no answer" to the longest
    return VectorMap.fit(centre, [m for m, _, _ in runs], pad_vectors([v for _, _, v in runs]), scale_records=public)


class TracingAttack(Attack):
    """Tracing attack on a vector release, calibrated on shadow runs of the mechanism.

    Parameters
    ----------
    n_shadow : int
        Mechanism runs on disjoint halves of the shadow data (at least 3: each is scored for
        calibration against a map fitted on the others, which needs two runs).

    After :meth:`fit`: ``map_`` (:class:`~dpaudit.attacks.membership.vector_map.VectorMap` of every shadow
    run), ``calibration_`` and ``score_bins_``.
    """

    attack_params = ("n_shadow",)

    def __init__(self, n_shadow: int = 3) -> None:
        self.n_shadow = n_shadow
        self._check_params()

    def _check_params(self) -> None:
        check_count(self.n_shadow, "n_shadow")
        if self.n_shadow < 3:
            raise InvalidInputError(f"n_shadow must be ≥ 3 for tracing, got {self.n_shadow}")

    def fit(self, knowledge: AttackerKnowledge, rng: np.random.Generator, *,
            progress: Progress | None = None) -> "TracingAttack":
        """Shadow runs, the vector map, and calibration scores (each run against the others' map)."""
        runs = _shadow_runs(knowledge, self.n_shadow, rng, progress)
        centre = knowledge.shadow_X.mean(axis=0)
        parts = []
        for j, (members, non_members, values) in enumerate(runs):
            held_out = _map(runs[:j] + runs[j + 1:], centre, knowledge.shadow_X)
            parts.append(MembershipScores.from_groups(held_out.statistic(members, values),
                                                      held_out.statistic(non_members, values)))
        self.map_ = _map(runs, centre, knowledge.shadow_X)
        self.calibration_ = MembershipScores.concatenate(parts)
        self.score_bins_ = histogram_edges(self.calibration_.scores)
        return self

    def infer(self, target: Any, X: np.ndarray) -> np.ndarray:
        """Tracing statistic of each row of X against the target's vector release (higher = member)."""
        if not hasattr(self, "map_"):
            raise InvalidInputError("call fit() before infer()")
        release, _ = release_and_inputs(target)
        if not isinstance(release, Vector):
            raise NotApplicable(f"tracing scores vector releases, not {release.kind}")
        return self.map_.statistic(np.asarray(X, dtype=np.float64), release_values(release))
