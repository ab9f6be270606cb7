"""Empirical ε estimation with a certified lower bound: :func:`estimate_epsilon`, the stages composed.

Pipeline (generator → mechanism → tester → result, as in dp_auditorium), one
stage object each, composed here in a few lines:

1. **Pairs** — :class:`~dpaudit.attacks.epsilon.pairs.PairSource`: candidate
   neighbouring pairs (D, D′) for the claim's relation, in priority order.
2. **Search and selection** — :class:`~dpaudit.attacks.epsilon.search.PairSearch`: an
   adaptive search over the pairs within a *selection budget* (probe,
   model-based search over small datasets, successive halving); each pair's
   releases are featurised and its event chosen and validated on disjoint
   parts of its selection sample by the
   :class:`~dpaudit.attacks.epsilon.selection.EventSelector`.  The result is one
   pair, one event with the dataset it favours, one split of α between the
   two confidence limits, and the certification sample size.
3. **Certification** (:class:`~dpaudit.attacks.epsilon.certification.Certifier`) — ``n`` *fresh* releases of each of D and D′ of the
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

import functools
import time
from typing import Any, Callable, Sequence

import numpy as np

from dpaudit.execution import (
    Findings,
    MechanismBroken,
    NoUsableRelease,
    child_seed,
    map_seeds,
    progress_bar,
    replay_findings,
)
from dpaudit.mechanisms.base import (
    Failed,
    InvalidInputError,
    Mechanism,
    PrivacyClaim,
    Release,
    check_data,
    check_positive,
)

from .budget import (
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
from .calibration import CALIBRATION_SECONDS, measure_rate
from .certification import Certification, Certifier
from .constructions import worst_case_pairs
from .features import FeatureMap
from .guarantee import GUARANTEE, guarantee_text
from .neighbours import NeighbourPair, pair_box
from .pairs import GivenPairs, PairSource, WorstCasePairs
from .result import EpsilonEstimate, certified_result, inconclusive_result
from .sampling import PROBE_CALLS, PROBE_LANE, Sampler, probe_releases
from .search import PairSearch, SearchOutcome
from .selection import EventSelector
from .transcripts import TranscriptView

__all__ = ["DEFAULT_TIME_BUDGET", "FAST_BUDGET", "GUARANTEE", "SELECTION_SHARE", "SLOW_BUDGET",
           "EpsilonEstimate", "default_budget", "estimate_epsilon", "estimate_transcript_epsilon",
           "guarantee_text"]


def _resolve_claim(mechanism: Mechanism, neighbours: str | None, delta: float | None,
                   claim: PrivacyClaim | None) -> PrivacyClaim:
    if claim is not None:
        return claim
    base = getattr(mechanism, "claim", None)
    if base is None:
        raise InvalidInputError("the mechanism states no claim; pass claim=PrivacyClaim(...)")
    return PrivacyClaim(base.epsilon, base.delta if delta is None else delta,
                        base.neighbours if neighbours is None else neighbours)


def _check_count(value: Any, name: str, minimum: int) -> int | None:
    if value is None:
        return None
    return int(check_positive(value, name=name, integer=True, minimum=minimum, inclusive=True))


def _check_run(confidence: float, n_jobs: Any, scheduler: Any, time_budget: float | None) -> tuple[float, float | None]:
    """(confidence, time budget), checked; ``n_jobs`` must be ≥ 1 or −1 when no scheduler is given."""
    if scheduler is None and n_jobs is not None and (not isinstance(n_jobs, (int, np.integer))
                                                     or not (n_jobs == -1 or n_jobs >= 1)):
        raise InvalidInputError(f"n_jobs must be a whole number ≥ 1, or -1 for every core; got {n_jobs!r}")
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise InvalidInputError(f"confidence must be in (0, 1), got {confidence!r}")
    return confidence, None if time_budget is None else float(check_positive(time_budget, name="time_budget"))


def _pair_source(pairs: Sequence[NeighbourPair] | PairSource | None, claim: PrivacyClaim, box: object | None,
                 distance: float, seed: np.random.SeedSequence, max_pairs: int | None) -> PairSource:
    """Where the candidate pairs come from: the worst-case constructions and generic pairs (default), the
    caller's own :class:`~dpaudit.attacks.epsilon.pairs.PairSource`, or a fixed list."""
    if pairs is None:
        return WorstCasePairs(claim, box, distance, seed, max_pairs)
    return pairs if callable(pairs) else GivenPairs(tuple(pairs))


def estimate_epsilon(mechanism: Mechanism, X: object, *, samples: int | None = None,
                     selection_samples: int | None = None, releases: int | None = None,
                     time_budget: float | None = DEFAULT_TIME_BUDGET, confidence: float = 0.95,
                     pairs: Sequence[NeighbourPair] | PairSource | None = None, neighbours: str | None = None,
                     distance: float = 1.0, delta: float | None = None, claim: PrivacyClaim | None = None,
                     bounds: object | None = None, seed: int = 0, n_jobs: int = 1, scheduler: Any = None,
                     progress: Any = None, classifier: Any = "logistic", chunk_size: int | None = None,
                     max_pairs: int | None = None, search: bool = True, min_records: int | None = None,
                     notify: Callable[[str], None] | None = None) -> EpsilonEstimate:
    """Certified lower bound on the mechanism's ε, and a verdict against its claim (see the module doc).

    ``mechanism`` and ``X``: the black box and the data the pairs start from.  ``samples``: certification
    releases per dataset, one look at the full α (default: what the plan leaves after selection, in looks;
    :mod:`dpaudit.attacks.epsilon.budget`).  ``selection_samples``: first-round selection releases per dataset per
    pair (default: the selection budget spread over the rounds).  ``releases``: total releases, selection and
    certification — the same numbers on any machine (a timed run records its total in
    ``search["plan"]["releases"]``, which reproduces it unless a deadline cut it: the code ran slower
    than when it was timed, ``search["search_cut_at_deadline"]`` or ``search["stopped"] == "deadline"``).  ``time_budget``: seconds when neither is given (the code is timed
    and what fits is planned; the run stops once a violation is certified; ``None``: the default budget).
    ``confidence``: 1 − α of the bound (:data:`GUARANTEE`).  ``pairs``: explicit candidate pairs, or a
    :class:`~dpaudit.attacks.epsilon.pairs.PairSource` of your own (default: the worst-case constructions, the
    generic candidates and the model-based search; ``max_pairs`` keeps the first few generic ones only;
    ``search=False`` turns the model-based search off).  ``neighbours``,
    ``delta``, ``claim``: override the claim's relation, its δ, or the whole claim; ``distance``: how far a
    record moves under a metric claim (the bound is per unit).  ``bounds``: the public box the code works in
    (where canaries and degenerate datasets go; default: the mechanism's, else the data's range ± 10 %).
    ``seed``: everything random flows from ``SeedSequence(seed)``.  ``n_jobs``/``scheduler``: joblib
    processes or a Dask scheduler — the same releases, sooner.  ``progress``: True/False, None (a bar when
    stderr is a terminal) or a tqdm-like bar.  ``classifier``: ``"logistic"``, ``None``/``"none"`` or any
    scikit-learn classifier, cloned per pair.  ``chunk_size``: releases per chunk of work.
    ``min_records``: the code's stated domain — pairs with a dataset of fewer records are not tried (default:
    read off what the code refuses, :mod:`dpaudit.attacks.epsilon.refusals`).  ``notify(text)``: told, at the start
    of a timed run, what the budget buys (:meth:`~dpaudit.attacks.epsilon.budget.Plan.briefing`).
    """
    t_start = time.perf_counter()
    samples = _check_count(samples, "samples", 1)
    selection_samples = _check_count(selection_samples, "selection_samples", 10)
    releases = _check_count(releases, "releases", 100)
    max_pairs = _check_count(max_pairs, "max_pairs", 1)
    confidence, time_budget = _check_run(confidence, n_jobs, scheduler, time_budget)
    claim = _resolve_claim(mechanism, neighbours, delta, claim)
    X = check_data(X)
    root, findings = np.random.SeedSequence(int(seed)), Findings()
    stopped = functools.partial(inconclusive_result, mechanism, claim, findings, confidence, int(seed), t_start)
    first, broken, leaks = probe_releases(mechanism, X, child_seed(root, 2))
    if first is None:
        assert broken is not None  # no release: the draw raised
        return stopped(leaks, broken)
    probe = _usable_release(mechanism, first, findings)
    box = bounds if bounds is not None else getattr(mechanism, "bounds", None)
    source = _pair_source(pairs, claim, box, distance, child_seed(root, 3), max_pairs)
    candidates = source(mechanism, X, probe)
    if not candidates:
        raise InvalidInputError("no neighbouring pairs to test")
    fmap = FeatureMap(candidates[0], probe.kind).fit_layout([probe])
    plan = make_plan(mechanism, probe, len(fmap.names), alpha=1.0 - confidence, samples=samples, releases=releases,
                     time_budget=time_budget, claim_private=claim.is_private, t_start=t_start,
                     calibrate=lambda: measure_rate(mechanism, X, fmap, root, seconds=min(
                         CALIBRATION_SECONDS, 0.01 * (time_budget or 60.0))))
    briefing = plan.briefing(claim.epsilon if claim.is_private else None, claim.delta)
    if briefing and notify is not None:
        notify(briefing)
    search_stage = PairSearch(plan, claim, 1.0 - confidence, is_fast(mechanism, probe.kind), pair_box(X, box)[:2],
                              distance, root, selection_samples, bool(search) and source.searchable,
                              _check_count(min_records, "min_records", 0))
    select = EventSelector(plan.certification, plan.looks[-1][1], claim.delta, classifier)
    certify = Certifier(1.0 - confidence, claim, len(plan.looks) > 1, root, plan.deadlines.get("final"))
    chunk = int(chunk_size or plan_chunk_size(mechanism, max(max(len(p.D), len(p.D_prime)) for p in candidates),
                                              X.shape[1], plan.total))
    with _progress(progress, plan, chunk, mechanism) as bar:
        sampler = Sampler(mechanism, functools.partial(map_seeds, n_jobs=n_jobs, scheduler=scheduler, progress=bar),
                          root, chunk)
        sampler.overhead = plan.chunk_overhead
        outcome, cert, broken = _search_and_certify(search_stage, select, certify, sampler, candidates, probe.kind,
                                                    samples, plan, findings)
    if broken is None:
        findings.merge(replay_findings(mechanism, X, child_seed(root, 2), first, lane=PROBE_LANE))  # state changed
    return _finish(mechanism, claim, confidence, int(seed), t_start, leaks, findings, plan, probe, outcome, cert,
                   broken, stopped)


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
                        findings: Findings
                        ) -> tuple[SearchOutcome | None, Certification | None, MechanismBroken | None]:
    """Stages 2 to 4 on the sampler: the pair search, then certification of its winner on fresh releases
    (``samples`` per dataset, or what the plan leaves).  A :class:`MechanismBroken` from the audited code
    ends them; it is returned, with what was done so far."""
    outcome = None
    try:
        outcome = search(candidates, sampler, kind, select)
        if outcome.winner is None:
            findings.merge(sampler.settle())
            if findings.blocking:  # the audited code could not run: a finding, not the user's mistake
                raise MechanismBroken(f"no neighbouring pair could be tested: {outcome.failures()}", Findings())
            raise InvalidInputError("the mechanism failed on every neighbouring pair: " + outcome.failures())
        n = samples if samples is not None else plan.certification_for(sampler.rate(outcome.winner.pair),
                                                                        sampler.used)
        cert = certify(sampler, outcome.winner, n)
        findings.merge(sampler.settle())
        return outcome, cert, None
    except MechanismBroken as exc:
        findings.merge(sampler.settle())
        return outcome, None, exc


def _finish(mechanism: Mechanism, claim: PrivacyClaim, confidence: float, seed: int, t_start: float,
            leaks: list[str], findings: Findings, plan: Plan, probe: Release, outcome: SearchOutcome | None,
            cert: Certification | None, broken: MechanismBroken | None, stopped: Any) -> EpsilonEstimate:
    """The stage 5 result: certified (with its guarantee), or inconclusive with the reason."""
    summaries = outcome.summaries() if outcome is not None else []
    if broken is not None:
        return stopped(leaks, broken, candidates=summaries)
    assert cert is not None and outcome is not None
    best = cert.best
    if best is None:  # the deadline came before the first look was drawn
        return stopped(leaks, MechanismBroken("the time budget ran out before a certification look was drawn "
                                              "(the code ran much slower than when it was timed)", Findings()),
                       candidates=summaries)
    return certified_result(mechanism, claim, confidence, seed, t_start, leaks, findings, plan,
                            is_fast(mechanism, probe.kind), outcome, cert, best)


def estimate_transcript_epsilon(mechanism: Mechanism, X: object, *, pairs: Sequence[NeighbourPair] | None = None,
                                **kwargs: Any) -> Any:
    """Certified lower bound on ε for the mechanism's transcript (``estimate-eps --access transcript``).

    ``pairs`` default to :func:`dpaudit.attacks.epsilon.constructions.worst_case_pairs` for the
    mechanism's own release kind (they are neighbours whatever is released);
    every other keyword goes to :func:`dpaudit.attacks.epsilon.estimate_epsilon`, whose
    guarantee applies unchanged: the transcript is the release.
    """
    view = TranscriptView(mechanism)
    if pairs is None:
        pairs = worst_case_pairs(mechanism, X)
    return estimate_epsilon(view, X, pairs=pairs, **kwargs)
