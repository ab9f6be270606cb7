"""What LiRA and RMIA share: reference runs, per-record scores of a target, calibration.

A per-record attack is fitted on the records it will score (the candidates): its
reference runs (:mod:`dpaudit.attacks.membership.reference_runs`) are the mechanism itself on halves
of those records, so every record has runs with and without it.  ``infer`` scores
a target release for any rows of those records, in any order: each record's
score depends on the release, the runs and that record alone.

The decision threshold (and the abstaining shares of the one-run bound) are chosen
on *calibration* scores from the attacker's own runs: each run in turn plays the
target, scored from the statistics of the other runs, its inclusion row the truth
(:func:`dpaudit.attacks.membership.reference_runs.leave_one_out`).  Where the score has several views
(:func:`dpaudit.attacks.membership.record_scores.view_names`: kernel bandwidths for points and
centroids) the view with the best calibration TPR at 1 % FPR (then AUC) is used.
The target's release and coins are never used to choose anything.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from dpaudit.execution.seeds import seed_from_rng
from dpaudit.mechanisms.base import InvalidInputError, Release

from ..attack import Attack, NotApplicable, Progress, check_count
from .exposure import histogram_edges
from .metrics import MembershipScores
from .record_scores import view_names
from .reference_runs import ReferenceRuns, leave_one_out, positions, prepare
from .roc import roc_counts
from .shadow import AttackerKnowledge

__all__ = ["CALIBRATION_RUNS", "PerRecordAttack", "release_and_inputs"]

CALIBRATION_RUNS = 16  # runs that take a turn as the pseudo-target (each scores every candidate)
SELECT_AT_FPR = 0.01   # the view (e.g. a kernel bandwidth) with the best calibration TPR here is used


def release_and_inputs(target: Any) -> tuple[Release, np.ndarray | None]:
    """The release of a target (a :class:`~dpaudit.attacks.targets.MechanismPipeline` or a release) and, for a
    labels release read through a lookup target, the input records it labels."""
    if isinstance(target, Release):
        return target, None
    release = getattr(target, "release_", None)
    if not isinstance(release, Release):
        raise InvalidInputError("score a release or a fitted MechanismPipeline")
    return release, getattr(getattr(target, "target_", None), "records", None)


class PerRecordAttack(Attack):
    """Base of LiRA and RMIA: ``fit`` draws (or takes) the reference runs; ``infer`` scores a target.

    Subclasses implement :meth:`_score` — the scores of the candidates of one release from the
    statistics of some reference runs.  After :meth:`fit`: ``references_``, ``view_`` and
    ``view_name_`` (the score's view in use), ``calibration_`` (leave-one-run-out scores with
    their truth) and ``score_bins_``.
    """

    n_reference: int

    def _check_params(self) -> None:
        check_count(self.n_reference, "n_reference")
        if self.n_reference < 2:
            raise InvalidInputError(f"n_reference must be ≥ 2 (runs with and without each record), "
                                    f"got {self.n_reference}")

    def fit(self, knowledge: AttackerKnowledge, rng: np.random.Generator, records: np.ndarray, *,
            references: ReferenceRuns | None = None, n_jobs: int | None = 1, scheduler: Any = None,
            progress: Progress | None = None) -> "PerRecordAttack":
        """Reference runs on ``records`` (the candidates to score), then calibration on them.

        ``references``: runs already drawn for these records (LiRA and RMIA share them); else
        ``n_reference`` runs are drawn from ``rng`` through the execution layer.
        """
        records = np.asarray(records, dtype=np.float64)
        if references is None:
            references = prepare(knowledge.mechanism, knowledge.shadow_X, records, knowledge.n_members,
                                 self.n_reference, seed_from_rng(rng), n_jobs=n_jobs, scheduler=scheduler, progress=progress)
        elif references.records.shape != records.shape or not np.array_equal(references.records, records):
            raise InvalidInputError("the reference runs were drawn for other records")
        if references.kind not in self.kinds:
            raise NotApplicable(f"{type(self).__name__} does not score {references.kind} releases")
        self.references_ = references
        best = None
        for j in range(references.n_views):  # the score's view (a kernel bandwidth), chosen on own runs
            scores, truth = leave_one_out(references.view(j), self._score, CALIBRATION_RUNS)
            calibration = MembershipScores(scores, truth)
            curve = roc_counts(calibration.scores, calibration.membership)
            key = (curve.tpr_at(SELECT_AT_FPR) or 0.0, roc_auc_score(truth, scores))
            if best is None or key > best[0]:
                best = (key, j, calibration)
        if best is None:
            raise RuntimeError(f"{references.kind} reference runs with no view to score")
        _, self.view_, self.calibration_ = best
        self.view_name_ = view_names(references.kind)[self.view_]
        self.score_bins_ = histogram_edges(self.calibration_.scores)
        return self

    kinds: tuple[str, ...] = ("points", "centroids", "spans", "labels", "vector")

    def infer(self, target: Any, X: np.ndarray) -> np.ndarray:
        """Scores of the rows of X (records the attack was fitted on) against ``target`` (1 = member)."""
        if not hasattr(self, "references_"):
            raise InvalidInputError("call fit() before infer()")
        runs = self.references_.view(self.view_)
        cols = positions(runs.records, X)
        release, inputs = release_and_inputs(target)
        candidate = runs.score(release, runs.records, inputs=inputs)[:, self.view_]
        population = runs.score(release, runs.population, inputs=inputs)[:, self.view_]
        return self._score(runs, candidate, population)[cols]

    def _score(self, runs: ReferenceRuns, candidate: np.ndarray, population: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - abstract
