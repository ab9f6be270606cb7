"""The membership attacks of one ``dpaudit attack`` repeat: fit on public data, score the candidates,
guess at a threshold chosen on the attacker's own runs, evaluate against the coins.

* ``shokri``, ``yeom``, ``label-only`` query the release as a classifier
  (:mod:`dpaudit.attacks.targets`) and calibrate on shadow targets; a vector release is no
  classifier, so for it they are not applicable.
* ``lira``, ``rmia`` score each candidate against reference runs of the mechanism
  with and without it (:mod:`dpaudit.attacks.membership.reference_runs`); both attacks of a repeat share
  one set of runs (drawn from the repeat's own reference seed, so the numbers do not
  depend on which of the two runs), and calibrate on the runs themselves
  (:mod:`dpaudit.attacks.membership.per_record`).  Every release kind.
* ``tracing`` scores vector releases against shadow runs (:mod:`dpaudit.attacks.membership.tracing`).

Each attack's one-run ε bound is certified from the guesses at its calibrated threshold
(:func:`dpaudit.attacks.membership.metrics.evaluate`); nothing is chosen on the target's coins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.attacks.attack import NotApplicable, Progress
from dpaudit.attacks.membership.metrics import MembershipMetrics, MembershipScores, evaluate
from dpaudit.attacks.membership.record_scores import SCORE_WORDS
from dpaudit.mechanisms.base import InvalidInputError

from .config import AttackConfig

__all__ = ["CLASSIFIER_ATTACKS", "applies_to", "label_only_subset", "membership"]

CLASSIFIER_ATTACKS = ("shokri", "yeom", "label-only")


def applies_to(attack: str, release_kind: str) -> str | None:
    """Why membership ``attack`` scores nothing on a ``release_kind`` release, or None when it applies — known
    before any release is drawn: the classifier attacks query what the release becomes, which a vector is not;
    tracing scores vector releases only; LiRA and RMIA score every kind."""
    if attack in CLASSIFIER_ATTACKS and release_kind == "vector":
        return "not applicable to a vector release (it queries a classifier; a vector is not one)"
    if attack == "tracing" and release_kind != "vector":
        return f"not applicable to a {release_kind} release (tracing scores vector releases)"
    return None


def label_only_subset(n_candidates: int, config: AttackConfig) -> np.ndarray:
    """Indices of the candidates label-only queries: the first 2q of the seeded shuffle.

    Depends on the candidate count and the config only, never on the coins.
    """
    return np.arange(min(n_candidates, 2 * config.label_only_queries))


def _classifier(attack: str, trial: Any, rng: np.random.Generator, config: AttackConfig,
                common: dict[str, Any], progress: Progress | None) -> tuple[MembershipMetrics, dict[str, Any]]:
    knowledge, target = trial.knowledge, trial.target
    cand, coins, ids = trial.candidates, trial.membership, trial.candidate_ids
    if attack == "yeom":
        from dpaudit.attacks.membership.yeom import YeomAttack
        yeom = YeomAttack(n_shadow=config.n_shadow).fit(knowledge, rng, progress=progress)
        scored = MembershipScores(yeom.infer(target, cand), coins, ids)
        return (evaluate(scored, calibration=yeom.calibration_, abstain=True, **common),
                {"variant": yeom.variant_, "mechanism_calls": config.n_shadow})
    if attack == "shokri":
        from dpaudit.attacks.membership.shokri import ShokriAttack
        shokri = ShokriAttack(n_shadow=config.n_shadow).fit(knowledge, rng, progress=progress)
        scored = MembershipScores(shokri.infer(target, cand), coins, ids)
        return (evaluate(scored, threshold=shokri.threshold, **common),
                {"variant": f"ART shadow models ({config.n_shadow}), attack model {shokri.attack_model_type}",
                 "mechanism_calls": config.n_shadow + 1})
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack
    lo = LabelOnlyAttack(n_queries=config.label_only_queries).fit(knowledge, rng, progress=progress)
    idx = label_only_subset(len(cand), config)
    scored = MembershipScores(lo.infer(target, cand[idx], rng, progress=progress), coins[idx], ids[idx])
    return (evaluate(scored, calibration=lo.calibration_, threshold=lo.threshold_,
                     abstain=lo.calibration_ is not None, **common),
            {"variant": lo.method_, "mechanism_calls": 1})


def _references(trial: Any, config: AttackConfig, progress: Progress | None) -> Any:
    """The repeat's reference runs on its candidates, drawn once and shared by LiRA and RMIA."""
    if "references" not in trial.cache:
        from dpaudit.attacks.membership.reference_runs import prepare
        knowledge = trial.knowledge
        trial.cache["references"] = prepare(knowledge.mechanism, knowledge.shadow_X, trial.candidates,
                                            knowledge.n_members, config.reference_runs, trial.reference_seed,
                                            n_jobs=config.n_jobs, progress=progress)
    return trial.cache["references"]


def _per_record(attack: str, trial: Any, rng: np.random.Generator, config: AttackConfig,
                common: dict[str, Any], progress: Progress | None) -> tuple[MembershipMetrics, dict[str, Any]]:
    from dpaudit.attacks.membership.lira import LiRAAttack
    from dpaudit.attacks.membership.rmia import RMIAAttack

    runs = _references(trial, config, progress)
    model = (LiRAAttack if attack == "lira" else RMIAAttack)(n_reference=runs.n_runs)
    model.fit(trial.knowledge, rng, trial.candidates, references=runs)
    scored = MembershipScores(model.infer(trial.target, trial.candidates), trial.membership, trial.candidate_ids)
    view = f", {model.view_name_}" if runs.n_views > 1 else ""
    details = {"variant": f"{model.mode}, {runs.n_runs} reference runs{view}", "mechanism_calls": runs.calls, "score": SCORE_WORDS.get(runs.kind, runs.kind),
        "score_unit": "log-likelihood ratio" if attack == "lira" and model.online else
        ("standard score vs runs without the record" if attack == "lira" else
         "share of population records dominated")}
    return (evaluate(scored, calibration=model.calibration_, abstain=True, score_bins=model.score_bins_, **common),
            details)


def membership(attack: str, trial: Any, rng: np.random.Generator, config: AttackConfig, claim: Any,
               progress: Progress | None = None) -> tuple[MembershipMetrics, dict[str, Any]]:
    """Fit ``attack`` on public data, score the candidates, guess at the threshold chosen on own runs.

    Scores name the candidates by their dataset rows (``record_ids``), so the risk table does too.
    Raises :class:`~dpaudit.attacks.attack.NotApplicable` when the attack does not score this release kind.
    """
    common = {"claimed_epsilon": claim.epsilon, "alpha": config.alpha, "delta": claim.delta,
              "candidates": len(trial.candidates)}
    if attack in CLASSIFIER_ATTACKS:
        if not trial.target.is_classifier:
            raise NotApplicable(f"they query a classifier; a {trial.target.release_.kind} release is not one")
        return _classifier(attack, trial, rng, config, common, progress)
    if attack in ("lira", "rmia"):
        return _per_record(attack, trial, rng, config, common, progress)
    if attack == "tracing":
        from dpaudit.attacks.membership.tracing import TracingAttack
        if trial.target.is_classifier:
            raise NotApplicable(f"vector releases only (this one: {trial.target.release_.kind})")
        tracing = TracingAttack(n_shadow=max(3, config.n_shadow)).fit(trial.knowledge, rng, progress=progress)
        scored = MembershipScores(tracing.infer(trial.target, trial.candidates), trial.membership,
                                  trial.candidate_ids)
        return (evaluate(scored, calibration=tracing.calibration_, abstain=True, score_bins=tracing.score_bins_,
                         **common),
                {"variant": "learned direction" if tracing.map_.learned else "⟨x − μ, v − v̄⟩",
                 "mechanism_calls": tracing.n_shadow})
    raise InvalidInputError(f"unknown membership attack {attack!r}")
