"""Empirical ε estimation with a certified lower bound: :func:`estimate_epsilon`, the stages composed.

Pipeline (generator → mechanism → tester → result, as in dp_auditorium), one
stage object each, composed here in a few lines:

1. **Pairs** — :class:`~dpaudit.attacks.epsilon.pairs.pairs.PairSource`: candidate
   neighbouring pairs (D, D′) for the claim's relation, in priority order.
2. **Search and selection** — :class:`~dpaudit.attacks.epsilon.search.search.PairSearch`: an
   adaptive search over the pairs within a *selection budget* (probe,
   model-based search over small datasets, successive halving); each pair's
   releases are featurised and its event chosen and validated on disjoint
   parts of its selection sample by the
   :class:`~dpaudit.attacks.epsilon.selection.selection.EventSelector`.  The result is one
   pair, one event with the dataset it favours, one split of α between the
   two confidence limits, and the certification sample size.
3. **Certification** (:class:`~dpaudit.attacks.epsilon.certification.certification.Certifier`) — ``n`` *fresh* releases of each of D and D′ of the
   chosen pair.  With k₁ of the favoured dataset's releases in the event S
   and k₂ of the other's, one of two statements (:mod:`dpaudit.attacks.bounds`),
   chosen at selection: *two limits* — Clopper–Pearson limits give p_lo
   (level α_p) and q_hi (level α_q) and ε ≥ ln((p_lo − δ)/q_hi); or, for
   δ = 0, the *rate ratio* — the sample sizes are drawn from Poisson(n), so
   given k₁ + k₂ = k, k₁ ~ Bin(k, p/(p + q)), and one lower limit θ_lo at
   level α gives ε ≥ ln(θ_lo/(1 − θ_lo)).  If a release is dropped (timeout,
   crash) the two-limit statement is certified on what was drawn.
4. **Result** — that bound in the claim's unit (divided by the pair's
   distance for metric claims, by 2 for a replace pair under an add-remove
   claim), the verdict, and the evidence.

The guarantee (:data:`GUARANTEE`): let α = 1 − confidence.  Every selection
sample is independent of the certification sample, so conditionally on
everything selection chose — pair, event, favoured dataset, statement,
α_p + α_q = α, certification size n — the statement "P[M(A) ∈ S] ≥ p_lo and
P[M(B) ∈ S] ≤ q_hi" fails with probability ≤ α_p + α_q = α (Clopper–Pearson,
union bound over its two limits), or "p/(p + q) ≥ θ_lo" with probability
≤ α (conditional binomial test of two Poisson rates).  When it holds, any
(ε, δ)-DP mechanism has p ≤ e^ε·q + δ, so ε ≥ ln((p_lo − δ)/q_hi)
(resp. ln(θ_lo/(1 − θ_lo)) with δ = 0).  The fallback on dropped releases
keeps the level: the rate ratio is stated only on the event "nothing
dropped", the two-limit statement (valid given the drawn sizes) on its
complement.  The number of candidate pairs,
events and splits compared on selection samples does not matter: they take
no share of α.

Budget (deterministic: the same seed gives the same numbers on any machine).
Unless ``samples`` is given, a total release budget is set from the problem
alone (:func:`default_budget`): mechanisms with a vectorised
``release_many`` that release vectors or points get up to
:data:`FAST_BUDGET` releases (fewer for large releases), others
:data:`SLOW_BUDGET` (clustering mechanisms run 10²–10³ releases/s).
:data:`SELECTION_SHARE` of it goes to selection; certification gets what
selection left, split evenly between D and D′.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import warnings
from typing import Any

import numpy as np

from dpaudit.execution import (
    Findings,
    MechanismBroken,
    NoUsableRelease,
    check_unstated_output,
    map_seeds,
    progress_bar,
    replay_findings,
    warm_lanes,
)
from dpaudit.execution.seeds import Stream, as_seed_sequence, seed_record
from dpaudit.mechanisms.base import (
    Failed,
    InvalidInputError,
    Mechanism,
    PrivacyClaim,
    Release,
    check_data,
)
from dpaudit.mechanisms.registry import as_mechanism

from .certification.certification import Certifier
from .certification.certified_pairs import Certified, certify_pairs, leading
from .pairs.constructions import worst_case_pairs
from .pairs.neighbours import NeighbourPair, pair_box
from .pairs.pair import NO_PUBLIC_BOX, NoPublicBoxWarning
from .pairs.pairs import GivenPairs, PairSource, WorstCasePairs
from .result.guarantee import GUARANTEE, guarantee_text
from .result.leak_sites import where_it_leaks
from .result.result import EpsilonEstimate, RunFacts, certified_result, inconclusive_result
from .sampling.budget import (
    DEFAULT_TIME_BUDGET,
    FAST_BUDGET,
    SELECTION_SHARE,
    SLOW_BUDGET,
    Plan,
    default_budget,
    is_fast,
    make_plan,
    plan_chunk_size,
)
from .sampling.calibration import CALIBRATION_SECONDS, measure_rate
from .sampling.sampling import PROBE_CALLS, PROBE_LANE, Sampler, probe_releases
from .search.search import PairSearch, SearchOutcome
from .selection.candidate import Candidate
from .selection.features import FeatureMap
from .selection.selection import EventSelector
from .selection.transcripts import TranscriptView
from .settings import Budget, RunSettings, SearchSpace

__all__ = ["DEFAULT_TIME_BUDGET", "FAST_BUDGET", "GUARANTEE", "SELECTION_SHARE", "SLOW_BUDGET",
           "EpsilonEstimate", "default_budget", "estimate_epsilon", "estimate_transcript_epsilon",
           "guarantee_text"]


def _resolve_claim(mechanism: Mechanism, claim: PrivacyClaim | None) -> PrivacyClaim:
    if claim is not None:
        if not isinstance(claim, PrivacyClaim):
            raise InvalidInputError(f"claim must be a PrivacyClaim, got {type(claim).__name__}")
        return claim
    base = getattr(mechanism, "claim", None)
    if not isinstance(base, PrivacyClaim):
        raise InvalidInputError("the mechanism states no claim; pass claim=PrivacyClaim(...)")
    return base


def _settings(value: Any, kind: type, name: str) -> Any:
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise InvalidInputError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _pair_source(space: SearchSpace, claim: PrivacyClaim, box: object | None,
                 seed: np.random.SeedSequence) -> PairSource:
    """Where the candidate pairs come from: the worst-case constructions and generic pairs (default), the
    caller's own :class:`~dpaudit.attacks.epsilon.pairs.pairs.PairSource`, or a fixed list."""
    pairs = space.pairs
    if pairs is None:
        return WorstCasePairs(claim, box, space.distance, seed, space.max_pairs)
    return pairs if callable(pairs) else GivenPairs(tuple(pairs))


def estimate_epsilon(mechanism: Mechanism | object, X: object, claim: PrivacyClaim | None = None, *,
                     budget: Budget | None = None, search: SearchSpace | None = None,
                     run: RunSettings | None = None, seed: int | np.random.SeedSequence = 0) -> EpsilonEstimate:
    """Certified lower bound on the mechanism's ε, and a verdict against its claim (see the module doc).

    ``mechanism`` and ``X``: the black box and the data the pairs start from.  The black box is a mechanism
    or anything ``--mechanism`` names on the command line — a plain function, an estimator or mechanism class,
    a spec — as :func:`dpaudit.plugin` builds it (which takes the command line's output, neighbours and public
    box; a function given here with only ``claim`` is read as releasing points).  ``claim``: what is tested
    (default: the mechanism's own ``claim``; ``dataclasses.replace(mechanism.claim, delta=…)`` changes one
    part).  Without a public box (``search.bounds`` or the mechanism's ``bounds``) the canaries go in the
    data's range, which can cost much of the bound: a :class:`~dpaudit.attacks.epsilon.pairs.pair.NoPublicBoxWarning`
    says so, and ``notes`` in the result.  ``budget``: how much evidence (:class:`~dpaudit.attacks.epsilon.settings.Budget`: releases, time,
    confidence; default: a timed run of :data:`DEFAULT_TIME_BUDGET` seconds at 95 %).  A timed run records
    its total in ``search["plan"]["releases"]``, which reproduces it as ``Budget(releases=…)`` unless a
    deadline cut it (``search["search_cut_at_deadline"]`` or ``search["stopped"] == "deadline"``).
    ``search``: where to look (:class:`~dpaudit.attacks.epsilon.settings.SearchSpace`: pairs, bounds,
    distance, classifier).  ``run``: how releases are drawn
    (:class:`~dpaudit.attacks.epsilon.settings.RunSettings`: processes or a Dask scheduler, progress) —
    never what they are.  ``seed``: everything random flows from it — an int ``s`` is ``SeedSequence(s)``; a
    ``SeedSequence`` (a stream of the caller's) is used as it is, and the result states it as the expression
    that rebuilds it (:func:`~dpaudit.execution.seeds.seed_record`).
    """
    t_start = time.perf_counter()
    budget = _settings(budget, Budget, "budget")
    space = _settings(search, SearchSpace, "search")
    settings = _settings(run, RunSettings, "run")
    mechanism = as_mechanism(mechanism, claim, takes_claim=True)
    claim = _resolve_claim(mechanism, claim)
    X = check_data(X)
    root, findings = as_seed_sequence(seed), Findings()
    box = space.bounds if space.bounds is not None else getattr(mechanism, "bounds", None)
    notes = [NO_PUBLIC_BOX] if box is None and space.pairs is None else []
    facts = RunFacts(mechanism, claim, budget.confidence, seed_record(root), t_start, findings)
    first, broken, leaks = probe_releases(mechanism, X, Stream.PROBE.of(root))
    facts.leaks.extend(leaks)
    check_unstated_output(mechanism, first.findings if first is not None else broken.findings if broken else ())
    if notes:  # after the first calls: a caller's mistake there is said alone
        warnings.warn(NO_PUBLIC_BOX, NoPublicBoxWarning, stacklevel=2)
    if first is None:
        if broken is None:  # no release: the draw raised
            raise RuntimeError("the probe returned neither a release nor why not")
        return dataclasses.replace(inconclusive_result(facts, broken), notes=notes)
    probe = _usable_release(mechanism, first, findings)
    source = _pair_source(space, claim, box, Stream.PAIRS.of(root))
    candidates = source(mechanism, X, probe)
    if not candidates:
        raise InvalidInputError("no neighbouring pairs to test")
    lo, hi, _ = pair_box(X, box)
    warm_lanes(mechanism, warm_up_dataset(lo, hi, len(X), Stream.WARM_UP.of(root)))  # before any pair's lanes
    fmap = FeatureMap(candidates[0], probe.kind).fit_layout([probe])
    seconds = budget.time_budget
    plan = make_plan(mechanism, probe, len(fmap.names), alpha=budget.alpha, samples=budget.samples,
                     releases=budget.releases, time_budget=seconds, claim_private=claim.is_private, t_start=t_start,
                     calibrate=lambda: measure_rate(mechanism, X, fmap, root, seconds=min(
                         CALIBRATION_SECONDS, 0.01 * (seconds or 60.0))))
    briefing = plan.briefing(claim.epsilon if claim.is_private else None, claim.delta)
    if briefing and settings.notify is not None:
        settings.notify(briefing)
    search_stage = PairSearch(plan, claim, budget.alpha, is_fast(mechanism, probe.kind), pair_box(X, box)[:2],
                              space.distance, root, budget.selection_samples,
                              space.model_search and source.searchable, space.min_records, len(X))
    select = EventSelector(plan.certification, plan.looks[-1][1], claim.delta, space.classifier, notion=claim.notion)
    certify = Certifier(budget.alpha, claim, len(plan.looks) > 1, root, plan.deadlines.get("final"))
    chunk = settings.chunk_size or plan_chunk_size(mechanism, max(max(len(p.D), len(p.D_prime)) for p in candidates),
                                                   X.shape[1], plan.total)
    with _progress(settings.progress, plan, chunk, mechanism) as bar:
        draw = functools.partial(map_seeds, n_jobs=settings.n_jobs, scheduler=settings.scheduler, progress=bar)
        sampler = Sampler(mechanism, draw, root, chunk)
        sampler.overhead = plan.chunk_overhead
        grown = getattr(source, "grown", None)  # a caller's own pair source need not grow
        grow = functools.partial(grown, mechanism, X, probe) if callable(grown) else None
        outcome, certified, sites, broken = _search_and_certify(search_stage, select, certify, sampler, candidates,
                                                                probe.kind, budget.samples, plan, findings, grow)
    if broken is None:
        findings.merge(replay_findings(mechanism, X, Stream.PROBE.of(root), first, lane=PROBE_LANE))  # state changed
    return dataclasses.replace(_finish(facts, plan, is_fast(mechanism, probe.kind), outcome, certified, sites, broken),
                               notes=notes)


def warm_up_dataset(lo: np.ndarray, hi: np.ndarray, n: int, seed: np.random.SeedSequence) -> np.ndarray:
    """The public dataset a worker template is warmed up on (:func:`dpaudit.execution.warm_lanes`): as many
    records as the audited data, uniform in the box canaries are placed in — no record of the user's."""
    return np.random.default_rng(seed).uniform(lo, hi, size=(max(int(n), 2), len(lo)))


def _usable_release(mechanism: Mechanism, first: Any, findings: Findings) -> Release:
    """The first probe release that is not a failure; none at all: the code does not run on this data."""
    findings.merge(first.findings)
    usable = [r for r in first.releases if not isinstance(r, Failed)]
    if not usable:
        worst = next(iter(findings.blocking), None) or next(iter(findings))
        raise NoUsableRelease(f"{getattr(mechanism, 'name', 'the mechanism')} produced no usable release in "
                              f"{PROBE_CALLS} calls on the data ({worst.kind}: {worst.error})", findings)
    return usable[0]


class _progress:
    """The estimate's progress bar (its own, closed at the end, unless the caller passed one)."""

    def __init__(self, progress: Any, plan: Plan, chunk: int, mechanism: Mechanism) -> None:
        self.owned = not hasattr(progress, "update")
        self.bar = progress_bar(max(1, plan.total // chunk), f"estimate-eps {getattr(mechanism, 'name', 'mechanism')}",
                                enabled=progress if isinstance(progress, bool) else None) if self.owned else progress

    def __enter__(self) -> Any:
        return self.bar

    def __exit__(self, *exc: Any) -> None:
        if self.owned:
            self.bar.close()


def _search_and_certify(search: PairSearch, select: EventSelector, certify: Certifier, sampler: Sampler,
                        candidates: list[NeighbourPair], kind: str, samples: int | None, plan: Plan,
                        findings: Findings, grow: Any = None
                        ) -> tuple[SearchOutcome | None, list[Certified], list[dict[str, Any]], MechanismBroken | None]:
    """Stages 2 to 4 on the sampler: the pair search, then certification of its winner (and, where the winner's
    evidence is a refusal, of the best pair both sides answer: :mod:`.certification.certified_pairs`) on fresh releases
    (``samples`` per dataset, or what the plan leaves), and where a violation is certified the leak sites of the
    pair it rests on (coupled, traced calls: :func:`~.result.leak_sites.where_it_leaks`).  A :class:`MechanismBroken`
    from the audited code ends them; it is returned, with what was done so far.  The code answered on the
    audited data (its probe did), so a search in which no pair could be tested is an inconclusive result that
    says what the code did on each pair — never the user's mistake."""
    outcome = None
    try:
        outcome = search(candidates, sampler, kind, select, grow)
        if outcome.winner is None:
            findings.merge(sampler.settle())
            raise MechanismBroken(f"no neighbouring pair could be tested ({outcome.failures()})", Findings())
        dual = outcome.on_releases is not None and outcome.on_releases.selected is not None

        def size(candidate: Candidate, share: float) -> int:  # each certified pair sized by its own speed
            if samples is not None:  # fixed: the caller's size, halved between two certified pairs
                return max(1, samples // 2) if dual else samples
            return plan.certification_for(sampler.rate(candidate.pair), sampler.used, share)

        certified = certify_pairs(certify, sampler, outcome.winner, outcome.on_releases, size)
        findings.merge(sampler.settle())
        lead, _ = leading(certified, certify.claim)
        sites: list[dict[str, Any]] = []
        if lead.exceeds(certify.claim):
            try:  # where the code leaks, for a maintainer: never part of any statement
                sites = where_it_leaks(sampler, lead.candidate.pair)
            except (MechanismBroken, InvalidInputError, ValueError, RuntimeError):
                sites = []
        return outcome, certified, sites, None
    except MechanismBroken as exc:
        findings.merge(sampler.settle())
        return outcome, [], [], exc


def _finish(facts: RunFacts, plan: Plan, fast: bool, outcome: SearchOutcome | None, certified: list[Certified],
            sites: list[dict[str, Any]], broken: MechanismBroken | None) -> EpsilonEstimate:
    """The stage 5 result: certified (with its guarantee) — led by the certified pair :func:`leading` picks,
    the other beside it — or inconclusive with the reason."""
    summaries = outcome.summaries() if outcome is not None else []
    if broken is not None:
        return inconclusive_result(facts, broken, candidates=summaries)
    if not certified or outcome is None:  # _search returns a certified pair or the MechanismBroken that stopped it
        raise RuntimeError("the search ended with neither a certified pair nor a reason")
    lead, others = leading(certified, facts.claim)
    best = lead.certification.best
    if best is None:  # the deadline came before the first look was drawn
        return inconclusive_result(facts, MechanismBroken(
            "the time budget ran out before a certification look was drawn "
            "(the code ran much slower than when it was timed)", Findings()), candidates=summaries)
    result = certified_result(facts, plan, fast, outcome, lead.certification, best, lead.candidate)
    extra: dict[str, Any] = {"leak_sites": sites}
    timings = dict(result.timings)
    if outcome.screening is not None:
        extra["screening"] = outcome.screening.to_dict()
        timings["screening_seconds"] = outcome.screening.seconds
    if others:
        extra["also_certified"] = [c.summary(facts.claim) for c in others]
        extra["certified_alpha_each"] = lead.alpha
    return dataclasses.replace(result, search={**result.search, **extra}, timings=timings)


def estimate_transcript_epsilon(mechanism: Mechanism, X: object, claim: PrivacyClaim | None = None, *,
                                budget: Budget | None = None, search: SearchSpace | None = None,
                                run: RunSettings | None = None,
                                seed: int | np.random.SeedSequence = 0) -> EpsilonEstimate:
    """Certified lower bound on ε for the mechanism's transcript (``estimate-eps --access transcript``).

    The pairs (``search.pairs``) default to :func:`dpaudit.attacks.epsilon.pairs.constructions.worst_case_pairs`
    for the mechanism's own release kind (they are neighbours whatever is released); everything else is
    :func:`dpaudit.attacks.epsilon.estimate_epsilon`'s, whose guarantee applies unchanged: the transcript
    is the release.
    """
    view = TranscriptView(mechanism)
    space = _settings(search, SearchSpace, "search")
    if space.pairs is None:
        space = dataclasses.replace(space, pairs=worst_case_pairs(mechanism, X))
    return estimate_epsilon(view, X, claim, budget=budget, search=space, run=run, seed=seed)
