"""One repeat of ``dpaudit attack``: split, release the members, run every attack on the candidates.

One repeat (:func:`run_repeat`) is the one-run auditing game of Steinke,
Nasr & Jagielski (NeurIPS 2023) on the thesis set-up (the nD-Laplace thesis §5.3.2 and its
public experiment code): shuffle the records; 75 % (all but ``--candidates``) become the
attacker's public shadow data; the rest (an even number m of them) are *candidates*,
each a member by an independent fair coin drawn from the split seed.  The
target is the mechanism run on the members (about m/2 of them; the attacker
knows only m), turned into a classifier (:mod:`dpaudit.attacks.targets`) unless it is a
vector release.  Every attack scores the candidates *the same way* (plain records;
the thesis code queried members with their perturbed copies, which rewards telling
perturbed from plain records apart rather than membership): all score every
candidate but label-only, which scores the first ``2 × label_only_queries`` in the
seeded shuffle, a subset chosen without looking at the coins
(:func:`dpaudit.attack.registry.label_only_subset`).  Thresholds come from the attacker's own runs
(shadow targets; LiRA's and RMIA's reference runs, drawn from the repeat's own
reference seed), so each guess depends on the release and public data only, and the
one-run ε bound (:func:`dpaudit.attacks.bounds.epsilon_one_run`) is certified per repeat.
Inside a repeat each attack gets its own child seed, keyed by its name (``Stream.ATTACK``,
:mod:`dpaudit.execution.seeds`), so the numbers do not depend on which attacks run; an attack that
does not score the release (its kind, or its size: a points release with another number of points
than records) is "not applicable", not an error.  An attack that fails is recorded with whose failure it was
(:mod:`dpaudit.attack.internal`): the audited code's, the set-up's, or dpaudit's own — an
internal error, whose traceback the repeat keeps for the run's log.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit.attacks.attack import NotApplicable, Progress
from dpaudit.attacks.membership.metrics import MembershipMetrics
from dpaudit.attacks.membership.shadow import AttackerKnowledge
from dpaudit.attacks.reconstruction import ReconstructionResult
from dpaudit.attacks.targets import Reference
from dpaudit.execution import Findings, recording
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import Mechanism, PrivacyLeakWarning
from dpaudit.options import AttackOptions
from dpaudit.result_shapes import InternalError

from .internal import INTERNAL, MECHANISM, classify, internal_error, internal_message
from .registry import REGISTRY, Call, entry, not_scored

__all__ = ["RepeatOutcome", "Trial", "draw_split", "prepare_trial", "run_repeat"]


@dataclass
class RepeatOutcome:
    """Per-attack results of one repeat: metrics, or the error the attack hit."""

    claim: dict[str, Any] = field(default_factory=dict)
    release_kind: str | None = None
    results: dict[str, MembershipMetrics | ReconstructionResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    findings: Findings = field(default_factory=Findings)  # the calls into the audited code in this repeat
    internal: list[InternalError] = field(default_factory=list)  # dpaudit's own errors, with tracebacks


@dataclass(frozen=True, eq=False)
class Trial:
    """One repeat's split, the attacker's knowledge and the target (built from the members).

    ``candidates`` in the seeded shuffle order, ``candidate_ids`` their rows in the dataset;
    ``membership[i]`` is candidate i's coin (1 = member); ``members``/``non_members`` are the
    candidates split by their coins.
    """

    shadow: np.ndarray
    candidates: np.ndarray
    candidate_ids: np.ndarray
    membership: np.ndarray
    members: np.ndarray
    non_members: np.ndarray
    knowledge: AttackerKnowledge
    target: Any  # a fitted dpaudit.attacks.targets.MechanismPipeline
    attack_seeds: dict[str, np.random.SeedSequence]
    reference_seed: np.random.SeedSequence | None = None  # LiRA/RMIA's shared reference runs
    cache: dict[str, Any] = field(default_factory=dict)    # the reference runs, once drawn


def draw_split(options: AttackOptions, n_records: int, split_seed: np.random.SeedSequence
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shadow indices, candidate indices in shuffle order, candidate coins) from the split seed.

    A uniform shuffle puts the first records into the shadow data and the next m into the
    candidates; then each candidate gets an independent fair coin (1 = member), drawn after
    the shuffle and used for nothing else.
    """
    n_shadow, half = options.split_sizes(n_records)
    gen = np.random.default_rng(split_seed)
    order = gen.permutation(n_records)
    candidates = order[n_shadow:n_shadow + 2 * half]
    return order[:n_shadow], candidates, gen.integers(0, 2, size=len(candidates))


def prepare_trial(options: AttackOptions, X: np.ndarray, k: int, seed: np.random.SeedSequence,
                  mechanism_factory: Callable[[], Mechanism],
                  bounds: tuple[np.ndarray, np.ndarray] | None = None) -> Trial:
    """Split the records, flip the candidates' membership coins, release the members.

    The shuffle and the coins come from the split seed only; the attacker's knowledge
    (shadow data, public reference, the expected member count m/2) does not depend on the coins.
    All m coins equal (probability 2^(1−m), m ≥ 20) leaves no members or no non-members;
    the attacks then record an error rather than redraw (a redraw would bias the coins).
    """
    shadow_idx, candidate_idx, membership = draw_split(options, len(X), Stream.SPLIT.of(seed))
    half = options.split_sizes(len(X))[1]
    shadow, candidates = X[shadow_idx], X[candidate_idx]
    members, non_members = candidates[membership == 1], candidates[membership == 0]
    mechanism = mechanism_factory()
    reference = Reference.fit(shadow, k, int(Stream.SHADOW_REFERENCE.of(seed).generate_state(1)[0] >> 1))
    knowledge = AttackerKnowledge(mechanism, shadow, reference, half, bounds=bounds,
                                  n_estimators=options.n_estimators)
    target = knowledge.pipeline(int(Stream.TARGET_PIPELINE.of(seed).generate_state(1)[0] >> 1)).fit(members)
    return Trial(shadow, candidates, np.asarray(candidate_idx, dtype=np.int64), membership, members, non_members,
                 knowledge, target, {e.name: Stream.ATTACK.of(seed, e.name) for e in REGISTRY},
                 Stream.REFERENCE_RUNS.of(seed))


def run_repeat(options: AttackOptions, X: np.ndarray, k: int, seed: np.random.SeedSequence,
               mechanism_factory: Callable[[], Mechanism],
               bounds: tuple[np.ndarray, np.ndarray] | None = None, *, alpha: float, n_jobs: int = 1,
               on_step: Callable[[str], None] | None = None, progress: Progress | None = None) -> RepeatOutcome:
    """One split, one target release, every requested attack (errors recorded per attack).

    ``alpha``: the level of every figure the attacks certify (the caller's: 1 − its confidence, or its share
    of it); ``n_jobs``: the local processes of the reference runs (the numbers do not depend on it).

    ``bounds`` is the public box (ART's clip values for the label-only attack); without one
    the attacker uses the range of its shadow data.  Every call into the mechanism goes
    through the execution layer; its findings come back in ``outcome.findings`` (the
    outcome pickles, so a repeat may run in another process).  ``on_step`` is told
    ``"target"`` and then each attack's name as it starts; ``progress`` is the attacks'
    ``(phase, done, total)`` hook.
    """
    out = RepeatOutcome()
    with recording(propagate=False) as calls:  # returned with the outcome: the caller merges them
        _run_repeat(out, options, X, k, seed, mechanism_factory, bounds, alpha, n_jobs, on_step, progress)
    out.findings = calls
    return out


def _run_repeat(out: RepeatOutcome, options: AttackOptions, X: np.ndarray, k: int, seed: np.random.SeedSequence,
                mechanism_factory: Callable[[], Mechanism], bounds: tuple[np.ndarray, np.ndarray] | None,
                alpha: float, n_jobs: int, on_step: Callable[[str], None] | None, progress: Progress | None) -> None:
    step = on_step or (lambda name: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        step("target")
        try:
            trial = prepare_trial(options, X, k, seed, mechanism_factory, bounds)
        except Exception as exc:  # the target could not be built: every attack records why, and whose fault
            kind = classify(exc)
            if kind == INTERNAL:
                msg = "building the target: " + internal_message(exc)
                out.internal.append(internal_error(exc, "attack repeats", step="target"))
            elif kind == MECHANISM:
                msg = f"the mechanism failed on the target's records: {type(exc).__name__}: {exc}"
            else:
                msg = f"the target could not be built: {type(exc).__name__}: {exc}"
            for name in options.attacks:
                out.errors[name] = msg
            out.warnings = sorted({str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)})
            return
        mechanism, target = trial.knowledge.mechanism, trial.target
        claim = mechanism.claim
        out.claim, out.release_kind = claim.to_dict(), target.release_.kind
        common = {"claimed_epsilon": claim.epsilon, "alpha": alpha, "delta": claim.delta,
                  "candidates": len(trial.candidates)}
        for name in options.attacks:
            step(name)
            rng = np.random.default_rng(trial.attack_seeds[name])
            start = time.perf_counter()
            try:
                found = entry(name)
                refused = not_scored(found, target)
                if refused is not None:
                    raise NotApplicable(refused)
                result, details = found.run(trial, Call(options, rng, common, n_jobs, progress))
                out.results[name] = result
                if details is not None:
                    out.details[name] = details
            except NotApplicable as exc:  # the attack does not score this release (kind or size)
                out.not_applicable[name] = str(exc)
            except Exception as exc:  # one attack failing never stops the others
                if classify(exc) == INTERNAL:  # dpaudit's bug: said so, with its traceback for the log
                    out.errors[name] = internal_message(exc)
                    out.internal.append(internal_error(exc, "attack repeats", attack=name))
                else:
                    out.errors[name] = f"{type(exc).__name__}: {exc}"
            out.seconds[name] = time.perf_counter() - start
    out.warnings = sorted({str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)})
