"""Empirical ε estimation with a certified lower bound (Clopper–Pearson limits on a selected event).

Pipeline (generator → mechanism → tester → result, as in dp_auditorium):

1. **Pairs** — candidate neighbouring pairs (D, D′) for the claim's relation
   (:mod:`attacks.epsilon.neighbours`), in priority order.
2. **Selection** — an adaptive search over the pairs within a *selection
   budget* (:mod:`attacks.epsilon.search`: probe, model-based search over small
   datasets, successive halving).  Each pair's releases are featurised
   (:mod:`attacks.epsilon.features`) and its event chosen and validated on disjoint
   parts of its selection sample (:mod:`attacks.epsilon.selection`).  The result is
   one pair, one event with the dataset it favours, one split of α between
   the two confidence limits, and the certification sample size.
3. **Certification** — ``n`` *fresh* releases of each of D and D′ of the
   chosen pair.  With k₁ of the favoured dataset's releases in the event S
   and k₂ of the other's, one of two statements (:mod:`attacks.bounds`),
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
import itertools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from mechanisms.base import (
    Failed,
    InvalidInputError,
    Mechanism,
    PrivacyClaim,
    PrivacyLeakWarning,
    Release,
    check_data,
    check_positive,
)

from ..bounds import TWO_LIMITS
from .budget import (
    CALIBRATION_SECONDS,
    DEFAULT_TIME_BUDGET,
    FAST_BUDGET,
    MIN_ROUND_FAST,
    MIN_ROUND_PLANNED_SLOW,
    MIN_ROUND_SLOW,
    PROBE,
    SEARCH_SHARE,
    SEARCH_TRIAL_SIZE,
    SEARCH_TRIALS,
    SELECTION_SHARE,
    SLOW_BUDGET,
    default_budget,
    is_fast,
    Plan,
    look_plan,
    make_plan,
    measure_rate,
    plan_chunk_size,
)
from .certification import Certification, LookResult, certify_in_looks
from .constructions import construction_pairs, release_k, worst_case_pairs
from .events import BinEvent, ThresholdEvent, predicted_bound
from execution import (
    INCONCLUSIVE,
    Findings,
    MechanismBroken,
    NoUsableRelease,
    child_seed,
    draw_releases,
    map_seeds,
    progress_bar,
    replay_findings,
    settle_verdict,
)
from .features import FeatureMap
from .guarantee import GUARANTEE, guarantee_text
from .neighbours import NeighbourPair, candidate_pairs, pair_box
from .search import Candidate, model_search, plan_rounds, successive_halving
from .sampling import Sampler
from .transcripts import TranscriptView
from .selection import EventSelector, certification_statement

__all__ = ["DEFAULT_TIME_BUDGET", "FAST_BUDGET", "GUARANTEE", "SELECTION_SHARE", "SLOW_BUDGET", "EpsilonEstimate",
           "default_budget", "estimate_epsilon", "estimate_transcript_epsilon", "guarantee_text"]

VIOLATION = "violation"
NO_VIOLATION = "no violation found"

PROBE_CALLS = 3             # single releases on X drawn first (the release kind) and replayed last (same seed ⇒ same release)
PROBE_LANE = "probe"        # the lane of those calls (the pairs' sides each have their own: attacks.epsilon.sampling)

@dataclass(frozen=True)
class EpsilonEstimate:
    """Result of :func:`estimate_epsilon` (JSON via :meth:`to_dict`)."""

    mechanism: str
    claim: PrivacyClaim
    epsilon_lower_bound: float
    verdict: str
    confidence: float
    samples: int                 # certification releases per dataset
    selection_samples: int       # first-round selection releases per dataset per candidate pair
    selection_samples_total: int  # all selection releases (both datasets, every pair, every round)
    ceiling: float               # largest ε these samples could certify (claim's unit)
    pair: dict[str, Any]
    event: dict[str, Any]
    counts: dict[str, Any]
    raw_bound: float             # certified ε on the pair itself, before scaling
    point_estimate: float        # ln(p̂/q̂) on the certification sample (not certified)
    candidates: list[dict[str, Any]]
    elapsed_seconds: float
    seed: int
    guarantee: str
    timings: dict[str, float] = field(default_factory=dict)
    leak_warnings: list[str] = field(default_factory=list)  # PrivacyLeakWarnings the mechanism raised
    search: dict[str, Any] = field(default_factory=dict)    # budget, rounds, what was searched
    findings: list[dict[str, Any]] = field(default_factory=list)  # misbehaviour of the audited code (execution layer)
    selected_event: BinEvent | ThresholdEvent | None = field(default=None, repr=False, compare=False)  # not serialised

    @property
    def is_violation(self) -> bool:
        return self.verdict == VIOLATION

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(dataclasses.replace(self, selected_event=None))
        out.pop("selected_event", None)
        out["claim"] = self.claim.to_dict()
        return out


# --------------------------------------------------------------------------- #
# The estimator
# --------------------------------------------------------------------------- #
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


def estimate_epsilon(mechanism: Mechanism, X: object, *, samples: int | None = None,
                     selection_samples: int | None = None, budget: int | None = None,
                     time_budget: float | None = DEFAULT_TIME_BUDGET, confidence: float = 0.95,
                     pairs: Sequence[NeighbourPair] | None = None, neighbours: str | None = None,
                     distance: float = 1.0, delta: float | None = None, claim: PrivacyClaim | None = None,
                     bounds: object | None = None, seed: int = 0, n_jobs: int = 1, scheduler: Any = None,
                     progress: Any = None, classifier: Any = "logistic", chunk_size: int | None = None,
                     max_pairs: int | None = None, search: bool = True) -> EpsilonEstimate:
    """Certified lower bound on the mechanism's ε, and a verdict against its claim.

    Parameters
    ----------
    mechanism, X
        The black box and the dataset the neighbouring pairs start from.
    samples
        Certification releases per dataset (D and D′ each), certified in one
        look at the full α.  Default: what the plan leaves after selection,
        certified in looks (see :mod:`attacks.epsilon.budget`).
    selection_samples
        First-round selection releases per dataset per candidate pair
        (successive halving multiplies it by 3 each round for the survivors);
        default: the selection budget spread over the rounds.
    budget
        Total releases, selection and certification: fixes the plan, so the
        numbers are the same on any machine (a timed run records the total it
        used as ``search["plan"]["total_releases"]``).  With ``samples``:
        2·``samples`` plus the selection budget.
    time_budget
        Seconds to spend when neither ``samples`` nor ``budget`` is given
        (default :data:`~attacks.epsilon.budget.DEFAULT_TIME_BUDGET`): the code is
        timed and the releases that fit are planned; the run stops early once
        a violation is certified.  ``None``: :func:`~attacks.epsilon.budget.default_budget`
        releases.
    confidence
        1 − α for the certified bound (see :data:`GUARANTEE`).
    pairs
        Explicit candidate pairs (e.g. :func:`~attacks.epsilon.neighbours.pair_from_datasets`);
        default: the worst-case constructions (:mod:`attacks.epsilon.constructions`),
        :func:`~attacks.epsilon.neighbours.candidate_pairs` and the model-based search.
    neighbours, delta, claim
        Override the relation / δ of the mechanism's claim, or the whole claim.
    distance
        Metric claims: how far the changed record moves (bound reported per unit).
    bounds
        The public box the code works in (``--bounds``): where canaries and the
        degenerate datasets are placed.  Default: the mechanism's ``bounds``,
        else the data's range ± 10 %.
    seed
        Everything random flows from ``numpy.random.SeedSequence(seed)``.
    n_jobs, scheduler
        Local processes (joblib) or a Dask scheduler address / Client.  They
        draw the same releases sooner: the plan is timed on one process.
    progress
        True/False, None (auto: on when stderr is a terminal) or a tqdm-like bar.
    classifier
        ``"logistic"`` (default), ``None``/"none" (no classifier statistic) or any
        scikit-learn classifier with ``decision_function`` or ``predict_proba``
        (e.g. ``MLPClassifier``), cloned and fitted per candidate pair.
    max_pairs
        Keep only the first ``max_pairs`` candidate pairs (and no model-based search).
    search
        Run the model-based search over small datasets when the budget allows it.
    """
    t_start = time.perf_counter()
    samples = _check_count(samples, "samples", 1)
    selection_samples = _check_count(selection_samples, "selection_samples", 10)
    budget = _check_count(budget, "budget", 100)
    max_pairs = _check_count(max_pairs, "max_pairs", 1)
    if time_budget is not None:
        time_budget = float(check_positive(time_budget, name="time_budget"))
    if scheduler is None and n_jobs is not None and (not isinstance(n_jobs, (int, np.integer))
                                                     or not (n_jobs == -1 or n_jobs >= 1)):
        raise InvalidInputError(f"n_jobs must be a whole number ≥ 1, or -1 for every core; got {n_jobs!r}")
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise InvalidInputError(f"confidence must be in (0, 1), got {confidence!r}")
    alpha = 1.0 - confidence
    claim = _resolve_claim(mechanism, neighbours, delta, claim)
    X = check_data(X)
    root = np.random.SeedSequence(int(seed))
    findings: Findings = Findings()
    stopped = functools.partial(_inconclusive_estimate, mechanism, claim, findings, confidence, int(seed), t_start)
    probe_seed = child_seed(root, 2)
    first, broken, leaks = _probe(mechanism, X, probe_seed)
    if first is None:
        return stopped(leaks, broken)
    findings.merge(first.findings)
    usable = [r for r in first.releases if not isinstance(r, Failed)]
    if not usable:  # nothing to audit: the code does not run on this data at all
        worst = next(iter(findings.blocking), None) or next(iter(findings))
        raise NoUsableRelease(f"{getattr(mechanism, 'name', 'the mechanism')} produced no usable release in "
                              f"{PROBE_CALLS} calls on the data ({worst.kind}: {worst.error})", findings)
    probe = usable[0]
    kind = probe.kind
    box = bounds if bounds is not None else getattr(mechanism, "bounds", None)
    user_pairs = pairs is not None
    if pairs is None:
        pairs = _default_pairs(mechanism, X, claim, kind, probe, box, distance, root, max_pairs)
    pairs = list(pairs)
    if not pairs:
        raise InvalidInputError("no neighbouring pairs to test")

    # ---- the plan: releases for selection and for each certification look ----
    fmap0 = FeatureMap(pairs[0], kind).fit_layout([probe])
    width = len(fmap0.names)
    plan = make_plan(mechanism, probe, width, alpha=alpha, samples=samples, budget=budget,
                     time_budget=time_budget, claim_private=claim.is_private, t_start=t_start,
                     calibrate=lambda: measure_rate(mechanism, X, fmap0, root,
                                                    seconds=min(CALIBRATION_SECONDS, 0.01 * (time_budget or 60.0))))
    fast = is_fast(mechanism, kind)
    min_round = MIN_ROUND_FAST if fast else (MIN_ROUND_SLOW if plan.fixed_samples else MIN_ROUND_PLANNED_SLOW)
    searching = bool(search) and fast and not user_pairs and max_pairs is None
    search_budget = int(SEARCH_SHARE * plan.selection) if searching else 0
    n_keep, sizes = plan_rounds(len(pairs), plan.selection - search_budget, min_size=min_round,
                                first_size=selection_samples)
    trials = min(SEARCH_TRIALS, search_budget // (2 * (SEARCH_TRIAL_SIZE + PROBE))) if searching else 0
    if trials < 8:
        trials = 0

    n_rec = max(max(len(p.D), len(p.D_prime)) for p in pairs)
    chunk = int(chunk_size or plan_chunk_size(mechanism, max(n_rec, len(X)), X.shape[1], plan.total))
    owned_bar = not hasattr(progress, "update")
    bar = progress_bar(max(1, plan.total // chunk), f"estimate-eps {getattr(mechanism, 'name', 'mechanism')}",
                       enabled=progress if isinstance(progress, bool) else None) if owned_bar else progress
    run = functools.partial(map_seeds, n_jobs=n_jobs, scheduler=scheduler, progress=bar)
    alpha_select = plan.looks[-1][1]  # the level of the look that decides if the run goes to the end
    select = EventSelector(plan.certification, alpha_select, claim.delta, classifier)
    sampler = Sampler(mechanism, run, root, chunk)
    pool = [Candidate(i, p) for i, p in enumerate(pairs[:n_keep])]
    searched: list[Candidate] = []
    cert: Certification | None = None
    try:
        t_sel = time.perf_counter()
        if trials:
            lo, hi, _ = pair_box(X, box)
            # Trials rank datasets on the feature statistics alone (no classifier fit per trial).
            searched = model_search(sampler, kind, claim.neighbours, lo, hi, distance, trials=trials,
                                    size=SEARCH_TRIAL_SIZE, seed=int(child_seed(root, 4).generate_state(1)[0]),
                                    first_id=len(pairs), select=select.but(classifier=None))
        sel_deadline = plan.deadlines.get("selection")
        winner = successive_halving(
            pool + searched, sampler, kind, sizes, select,
            claim=claim.epsilon if claim.is_private else None,
            out_of_time=(lambda: time.perf_counter() > sel_deadline) if sel_deadline else None,
            enough=_enough(plan, claim, alpha) if len(plan.looks) > 1 else None)
        t_sel = time.perf_counter() - t_sel
        used_selection = sampler.used
        if winner is None:
            findings.merge(sampler.settle())
            reasons = "; ".join(dict.fromkeys(c.note for c in pool if c.status in ("error", "outside-domain")
                                              and c.note))
            if findings.blocking:  # the audited code could not run: a finding, not the user's mistake
                raise MechanismBroken(f"no neighbouring pair could be tested: {reasons}", Findings())
            raise InvalidInputError("the mechanism failed on every neighbouring pair: " + reasons)
        n = samples if samples is not None else max(1, (plan.total - sampler.used) // 2)
        looks = look_plan(n, alpha, looks=len(plan.looks) > 1)
        sel = winner.selected
        pair, event, fmap = winner.pair, sel.event, winner.fmap
        sampler.retain([pair])  # the other candidates' worker processes are not needed any more
        # ---- certification on fresh samples, independent of every selection sample, in looks ----
        # The statement (the rate ratio gives way to two limits where the verdict is at stake); the rate
        # ratio needs Poisson sample sizes, drawn before the releases of each look.
        planned = certification_statement(sel, n, alpha=looks[-1][1], claim_raw=(claim.epsilon * pair.scale
                                                                                  if claim.is_private else None))
        sampler.certifying = (pair, fmap, event)
        cert = certify_in_looks(sampler, looks, favours=event.favours, statement=planned, q_share=sel.q_share,
                                delta=claim.delta, claim_raw=claim.epsilon * pair.scale if claim.is_private else None,
                                sizes_rng=np.random.default_rng(child_seed(root, 6)),
                                deadline=plan.deadlines.get("final"))
        findings.merge(sampler.settle())
        findings.merge(replay_findings(mechanism, X, probe_seed, first, lane=PROBE_LANE))  # late: state has changed
    except MechanismBroken as exc:
        broken = exc
    finally:
        if owned_bar:
            bar.close()
    summaries = [c.summary() for c in pool + searched]
    if broken is not None:
        findings.merge(sampler.settle())
        return stopped(leaks, broken, candidates=summaries)
    assert cert is not None
    best = cert.best
    if best is None:  # the deadline came before the first look was drawn
        return stopped(leaks, MechanismBroken("the time budget ran out before a certification look was drawn "
                                              "(the code ran much slower than when it was timed)", Findings()),
                       candidates=summaries)
    return _result(mechanism, claim, confidence, int(seed), t_start, leaks, findings, plan, used_selection, fast,
                   winner, cert, best, summaries, sizes, trials, len(pairs), len(pool) + len(searched),
                   {"selection_seconds": t_sel, "certification_seconds": cert.seconds,
                    "expected_bound_at_selection": float(winner.rank[0])})


def _probe(mechanism: Mechanism, X: np.ndarray, probe_seed: np.random.SeedSequence
           ) -> tuple[Any, MechanismBroken | None, list[str]]:
    """A few single releases on X (the release kind now, a replay at the end); PrivacyLeakWarnings once."""
    first, broken = None, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        try:
            first = draw_releases(mechanism, X, probe_seed, PROBE_CALLS, per_release=True, lane=PROBE_LANE)
        except MechanismBroken as exc:
            broken = exc
    leaks = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)))
    for w in caught:  # anything else is passed on unchanged
        if not issubclass(w.category, PrivacyLeakWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for message in leaks:  # once, not once per release
        warnings.warn(message, PrivacyLeakWarning, stacklevel=3)
    return first, broken, leaks


def _default_pairs(mechanism: Mechanism, X: np.ndarray, claim: PrivacyClaim, kind: str, probe: Release,
                   box: object | None, distance: float, root: np.random.SeedSequence, max_pairs: int | None
                   ) -> list[NeighbourPair]:
    """The worst-case constructions for the release kind (in the public box, or the data's) and the generic
    candidate pairs, taken in turn (a construction first): the search keeps the head of the list when its
    budget is short, and neither family is the strongest for every release (degenerate datasets for sums,
    means and clusterings; pairs built from the data for releases whose queries depend on it).  k is read off
    the probe release when the mechanism does not state it."""
    generic = candidate_pairs(X, claim.neighbours, kind=kind, bounds=box, distance=distance, delta=claim.delta,
                              rng=np.random.default_rng(child_seed(root, 3)), max_pairs=max_pairs)
    if max_pairs is not None:
        return list(generic)
    lo, hi, _ = pair_box(X, box)
    constructed = construction_pairs(mechanism, X.shape[1], kind, claim.neighbours, bounds=(lo, hi),
                                     k=None if _states_k(mechanism) else release_k(probe))
    taken = itertools.zip_longest(constructed, generic)
    return [p for both in taken for p in both if p is not None]


def _states_k(mechanism: Mechanism) -> bool:
    return any(getattr(mechanism, attr, None) is not None for attr in ("k", "n_clusters", "c"))


def _enough(plan: Plan, claim: PrivacyClaim, alpha: float) -> Any:
    """After a round of the search: does the leader's conservative prediction at the *first* look already exceed
    the claim?  Then more rounds would only delay a violation the first look is expected to certify.  A leader
    whose evidence is a refusal (the code raises on one dataset only) is not enough: the search goes on for
    evidence about what the code releases."""
    n_1, alpha_1 = look_plan(plan.certification, alpha)[0]

    def enough(leader: Candidate) -> bool:
        if not claim.is_private or leader.selected is None or leader.refused:
            return False
        k_fav, k_oth, m = leader.selected.selection_counts
        if m <= 0:
            return False
        pred = float(predicted_bound(k_fav, k_oth, m, n_1, alpha=alpha_1, delta=claim.delta))
        return pred / leader.pair.scale > claim.epsilon

    return enough


def _result(mechanism: Mechanism, claim: PrivacyClaim, confidence: float, seed: int, t_start: float,
            leaks: list[str], findings: Findings, plan: Plan, used_selection: int, fast: bool, winner: Candidate,
            cert: Certification, best: LookResult, summaries: list[dict[str, Any]], sizes: list[int], trials: int,
            built: int, tried: int, timings: dict[str, float]) -> EpsilonEstimate:
    """The :class:`EpsilonEstimate` of a certified run: the best look's bound, in the claim's unit."""
    pair, sel = winner.pair, winner.selected
    event = sel.event
    (k_fav, n_fav), (k_oth, n_oth) = best.favoured, best.other
    bound = best.bound / pair.scale
    ceiling = best.ceiling(claim.delta) / pair.scale
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat, q_hat = k_fav / max(n_fav, 1), k_oth / max(n_oth, 1)
        point = math.log(p_hat / q_hat) if q_hat > 0 and p_hat > 0 else (math.inf if p_hat > 0 else 0.0)
    verdict = settle_verdict(VIOLATION if claim.is_private and bound > claim.epsilon else NO_VIOLATION, findings)
    alpha_q = best.alpha * sel.q_share if best.statement == TWO_LIMITS else 0.0
    n = int(max(best.requested))
    return EpsilonEstimate(
        mechanism=str(getattr(mechanism, "name", type(mechanism).__name__)),
        claim=claim, epsilon_lower_bound=bound, verdict=verdict, confidence=confidence, samples=n,
        selection_samples=sizes[0], selection_samples_total=used_selection,
        ceiling=ceiling, pair=pair.summary(), event=event.describe(),
        counts={"favoured_in_event": k_fav, "other_in_event": k_oth, "n_per_dataset": n,
                "n_favoured": n_fav, "n_other": n_oth,
                "requested": [int(r) for r in best.requested],  # releases asked of D, D' (Poisson for the ratio)
                "favoured_dataset": event.favours, "statement": best.statement,
                "alpha_p": best.alpha - alpha_q, "alpha_q": alpha_q, "alpha_look": best.alpha,
                "looks": cert.summary()},
        raw_bound=best.bound, point_estimate=point / pair.scale if math.isfinite(point) else point,
        candidates=summaries, elapsed_seconds=time.perf_counter() - t_start, seed=seed,
        guarantee=guarantee_text(confidence, bound, tried, claim.neighbours == "metric", sel.q_share,
                                 best.statement, looks=(len(cert.looks), cert.planned, best.alpha)),
        leak_warnings=leaks, findings=findings.to_list(), selected_event=event,
        search={"budget": int(plan.total), "selection_budget": int(plan.selection),
                "fast": fast, "candidates_built": built,
                "candidates_tried": tried, "model_search_trials": trials, "round_sizes": list(sizes),
                "rounds": len(sizes), "plan": plan.to_dict(), "stopped": cert.stopped},
        timings=timings)


def _inconclusive_estimate(mechanism: Mechanism, claim: PrivacyClaim, findings: Findings, confidence: float,
                           seed: int, t_start: float, leaks: list[str], broken: MechanismBroken, *,
                           candidates: list[dict[str, Any]] | None = None) -> EpsilonEstimate:
    """The result when the audited code stopped the run (every release failing, timing out or crashing)."""
    findings.merge(broken.findings)
    for result in sorted(getattr(broken, "partial_results", {}).items()):  # chunks that finished elsewhere
        part = result[1]
        if isinstance(part, tuple) and part and isinstance(part[-1], Findings):
            findings.merge(part[-1])
    reason = str(broken)
    return EpsilonEstimate(
        mechanism=str(getattr(mechanism, "name", type(mechanism).__name__)), claim=claim, epsilon_lower_bound=0.0,
        verdict=INCONCLUSIVE, confidence=confidence, samples=0, selection_samples=0,
        selection_samples_total=0, ceiling=0.0, pair={"name": "none", "description": "no pair was certified"},
        event={"text": "none (nothing was certified)"}, counts={"stopped": reason}, raw_bound=0.0,
        point_estimate=0.0, candidates=list(candidates or []), elapsed_seconds=time.perf_counter() - t_start,
        seed=seed, guarantee=f"No bound was certified: {reason}. The findings say why; the verdict is "
                             "inconclusive, not 'no violation found'.",
        leak_warnings=leaks, findings=findings.to_list())


def estimate_transcript_epsilon(mechanism: Mechanism, X: object, *, pairs: Sequence[NeighbourPair] | None = None,
                                **kwargs: Any) -> Any:
    """Certified lower bound on ε for the mechanism's transcript (``estimate-eps --release transcript``).

    ``pairs`` default to :func:`attacks.epsilon.constructions.worst_case_pairs` for the
    mechanism's own release kind (they are neighbours whatever is released);
    every other keyword goes to :func:`attacks.epsilon.estimate_epsilon`, whose
    guarantee applies unchanged: the transcript is the release.
    """
    view = TranscriptView(mechanism)
    if pairs is None:
        pairs = worst_case_pairs(mechanism, X)
    return estimate_epsilon(view, X, pairs=pairs, **kwargs)
