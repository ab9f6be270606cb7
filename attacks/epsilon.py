"""Empirical ε estimation with a certified lower bound (Clopper–Pearson limits on a selected event).

Pipeline (generator → mechanism → tester → result, as in dp_auditorium):

1. **Pairs** — candidate neighbouring pairs (D, D′) for the claim's relation
   (:mod:`attacks.neighbours`), in priority order.
2. **Selection** — an adaptive search over the pairs within a *selection
   budget* (:mod:`attacks.pair_search`: probe, model-based search over small
   datasets, successive halving).  Each pair's releases are featurised
   (:mod:`attacks.features`) and its event chosen and validated on disjoint
   parts of its selection sample (:mod:`attacks.selection`).  The result is
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

from .bounds import RATE_RATIO, TWO_LIMITS, certified_bound, poisson_sizes, statement_ceiling
from .budget import (
    FAST_BUDGET,
    MIN_ROUND_FAST,
    MIN_ROUND_SLOW,
    MIN_SELECTION,
    PROBE,
    SEARCH_SHARE,
    SEARCH_TRIAL_SIZE,
    SEARCH_TRIALS,
    SELECTION_SHARE,
    SLOW_BUDGET,
    default_budget,
    default_chunk_size,
    is_fast,
)
from .constructions import construction_pairs
from .events import ThresholdEvent
from .execution import (
    INCONCLUSIVE,
    Findings,
    MechanismBroken,
    NoUsableRelease,
    child_seed,
    chunk_seeds,
    chunk_sizes,
    draw_releases,
    map_seeds,
    progress_bar,
    replay_findings,
    settle_verdict,
)
from .features import FeatureMap
from .guarantee import GUARANTEE, guarantee_text
from .neighbours import NeighbourPair, candidate_pairs, pair_box
from .pair_search import Candidate, model_search, plan_rounds, successive_halving
from .selection import certification_statement, select_event

__all__ = ["FAST_BUDGET", "GUARANTEE", "SELECTION_SHARE", "SLOW_BUDGET", "EpsilonEstimate", "default_budget",
           "estimate_epsilon", "guarantee_text"]

VIOLATION = "violation"
NO_VIOLATION = "no violation found"

PROBE_CALLS = 3             # single releases on X drawn first (the release kind) and replayed last (same seed ⇒ same release)

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
    selected_event: ThresholdEvent | None = field(default=None, repr=False, compare=False)  # not serialised

    @property
    def is_violation(self) -> bool:
        return self.verdict == VIOLATION

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(dataclasses.replace(self, selected_event=None))
        out.pop("selected_event", None)
        out["claim"] = self.claim.to_dict()
        return out


# --------------------------------------------------------------------------- #
# Chunk workers (top-level: picklable for joblib and Dask)
# --------------------------------------------------------------------------- #
# Every release goes through the execution layer (:func:`~attacks.execution.draw_releases`): a private
# copy of the data per call, an opaque generator, failures as :class:`~mechanisms.base.Failed` outcomes
# (a feature like any other) and releases lost to timeouts or crashes left out and counted as findings.
def _probe_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray
                 ) -> tuple[list[Release], Findings]:
    seed, size = task
    draw = _quiet(draw_releases, mechanism, data, seed, size)
    return list(draw.releases), draw.findings


def _features_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                    fmap: FeatureMap) -> tuple[np.ndarray, Findings]:
    """Features of one chunk's isolated releases (dropped ones left out), and the chunk's findings.

    Sent back as float32 when that is exact (discrete outputs: flags, counts, small integers):
    half the bytes through the worker pipe, the same numbers on arrival.
    """
    seed, size = task
    draw = _quiet(draw_releases, mechanism, data, seed, size)
    features = _quiet(fmap, draw.releases) if draw.n else np.empty((0, len(fmap.names)))
    compact = features.astype(np.float32)
    return (compact if np.array_equal(compact, features) else features), draw.findings


def _count_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                 fmap: FeatureMap, event: ThresholdEvent) -> tuple[int, int, Findings]:
    """(releases in the event, releases drawn, findings) for one certification chunk."""
    seed, size = task
    draw = _quiet(draw_releases, mechanism, data, seed, size)
    hits = int(np.count_nonzero(event(fmap(draw.releases)))) if draw.n else 0
    return hits, draw.n, draw.findings


def _tasks(parent: np.random.SeedSequence, total: int, chunk: int) -> list[tuple[np.random.SeedSequence, int]]:
    sizes = chunk_sizes(total, chunk)
    return list(zip(chunk_seeds(parent, len(sizes)), sizes))


def _quiet(fn: Any, *args: Any) -> Any:
    """Call ``fn`` with PrivacyLeakWarnings silenced (reported once per audit, not per release)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return fn(*args)


class _Sampler:
    """Selection releases for :mod:`attacks.pair_search`, seeded by key, counted in ``used``."""

    def __init__(self, mechanism: Mechanism, run: Any, root: np.random.SeedSequence, chunk: int) -> None:
        self.mechanism, self.run, self.root, self.chunk = mechanism, run, root, chunk
        self.used = 0
        self.findings = Findings()

    def probe(self, pair: NeighbourPair, key: tuple[int, ...]) -> tuple[list[Release], list[Release]]:
        out = []
        for side, data in enumerate((pair.D, pair.D_prime)):
            fn = functools.partial(_probe_chunk, mechanism=self.mechanism, data=data)
            parts = self.run(fn, _tasks(child_seed(self.root, 5, *key, side), PROBE, PROBE))
            self.findings.merge(Findings.merged(f for _, f in parts))
            out.append([r for releases, _ in parts for r in releases])
            self.used += PROBE
        if min(len(o) for o in out) == 0:
            raise RuntimeError("no probe release was drawn (timeouts or crashes)")
        return out[0], out[1]

    def features(self, pair: NeighbourPair, fmap: FeatureMap, side: int, key: tuple[int, ...], size: int
                 ) -> list[np.ndarray]:
        data = pair.D if side == 0 else pair.D_prime
        fn = functools.partial(_features_chunk, mechanism=self.mechanism, data=data, fmap=fmap)
        parts = self.run(fn, _tasks(child_seed(self.root, 0, *key, side), size, self.chunk))
        self.used += size
        self.findings.merge(Findings.merged(f for _, f in parts))
        blocks = [features for features, _ in parts]
        if sum(len(b) for b in blocks) < min(2, size):  # (nearly) every release was dropped
            raise RuntimeError("too few releases drawn (timeouts or crashes)")
        return blocks


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
                     selection_samples: int | None = None, budget: int | None = None, confidence: float = 0.95,
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
        Certification releases per dataset (D and D′ each).  Default: what the
        release budget leaves after selection (see the module doc).
    selection_samples
        First-round selection releases per dataset per candidate pair
        (successive halving multiplies it by 3 each round for the survivors);
        default: the selection budget spread over the rounds.
    budget
        Total releases, selection and certification; default
        :func:`default_budget` (or, with ``samples``, 2·``samples`` plus a
        selection budget of max(``samples``, 6,000; 480 for slow mechanisms)).
    confidence
        1 − α for the certified bound (see :data:`GUARANTEE`).
    pairs
        Explicit candidate pairs (e.g. :func:`~attacks.neighbours.pair_from_datasets`);
        default :func:`~attacks.neighbours.candidate_pairs` plus the model-based search.
    neighbours, delta, claim
        Override the relation / δ of the mechanism's claim, or the whole claim.
    distance
        Metric claims: how far the changed record moves (bound reported per unit).
    bounds
        Public box for placing canaries (default: the mechanism's ``bounds``).
    seed
        Everything random flows from ``numpy.random.SeedSequence(seed)``.
    n_jobs, scheduler
        Local processes (joblib) or a Dask scheduler address / Client.
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
    broken: MechanismBroken | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        try:  # a few single releases: the release kind now, and a replay at the end
            first = draw_releases(mechanism, X, probe_seed, PROBE_CALLS, per_release=True)
        except MechanismBroken as exc:
            first, broken = None, exc
    leaks = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)))
    for w in caught:  # anything else is passed on unchanged
        if not issubclass(w.category, PrivacyLeakWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for message in leaks:  # once, not once per release
        warnings.warn(message, PrivacyLeakWarning, stacklevel=2)
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
        pairs = candidate_pairs(X, claim.neighbours, kind=kind, bounds=box, distance=distance,
                                delta=claim.delta, rng=np.random.default_rng(child_seed(root, 3)),
                                max_pairs=max_pairs)
        if max_pairs is None:  # worst-case datasets for clustering releases first (attacks.constructions)
            pairs = construction_pairs(mechanism, X.shape[1], kind, claim.neighbours) + list(pairs)
    pairs = list(pairs)
    if not pairs:
        raise InvalidInputError("no neighbouring pairs to test")

    # ---- budget (deterministic) ----
    fast = is_fast(mechanism, kind)
    if samples is None:
        width = len(FeatureMap(pairs[0], kind).fit_layout([probe]).names)
        total = budget or default_budget(mechanism, probe, width)
        sel_budget = int(SELECTION_SHARE * total)
        n_cert_plan = max(1, (total - sel_budget) // 2)
    else:
        n_cert_plan = samples
        sel_budget = (budget - 2 * samples) if budget else max(samples, MIN_SELECTION[0 if fast else 1])
        if sel_budget < 2 * 10:
            raise InvalidInputError(f"budget {budget} leaves no selection releases after 2 × {samples} "
                                    "certification releases")
        total = 2 * samples + sel_budget
    min_round = MIN_ROUND_FAST if fast else MIN_ROUND_SLOW
    searching = bool(search) and fast and not user_pairs and max_pairs is None
    search_budget = int(SEARCH_SHARE * sel_budget) if searching else 0
    n_keep, sizes = plan_rounds(len(pairs), sel_budget - search_budget, min_size=min_round,
                                first_size=selection_samples)
    trial_size = SEARCH_TRIAL_SIZE
    trials = min(SEARCH_TRIALS, search_budget // (2 * (trial_size + PROBE))) if searching else 0
    if trials < 8:
        trials = 0

    n_rec = max(max(len(p.D), len(p.D_prime)) for p in pairs)
    chunk = int(chunk_size or default_chunk_size(mechanism, max(n_rec, len(X)), X.shape[1]))
    owned_bar = not hasattr(progress, "update")
    bar = progress_bar(max(1, total // chunk), f"estimate-eps {getattr(mechanism, 'name', 'mechanism')}",
                       enabled=progress if isinstance(progress, bool) else None) if owned_bar else progress
    run = functools.partial(map_seeds, n_jobs=n_jobs, scheduler=scheduler, progress=bar)
    select = functools.partial(select_event, n_cert=n_cert_plan, alpha=alpha, delta=claim.delta,
                               classifier=classifier)
    sampler = _Sampler(mechanism, run, root, chunk)
    pool = [Candidate(i, p) for i, p in enumerate(pairs[:n_keep])]
    searched: list[Candidate] = []
    try:
        t_sel = time.perf_counter()
        if trials:
            lo, hi, _ = pair_box(X, box)
            # Trials rank datasets on the feature statistics alone (no classifier fit per trial).
            searched = model_search(sampler, kind, claim.neighbours, lo, hi, distance, trials=trials,
                                    size=trial_size, seed=int(child_seed(root, 4).generate_state(1)[0]),
                                    first_id=len(pairs), select=functools.partial(select, classifier=None))
        winner = successive_halving(pool + searched, sampler, kind, sizes, select)
        t_sel = time.perf_counter() - t_sel
        findings.merge(sampler.findings)
        summaries = [c.summary() for c in pool + searched]
        if winner is None:
            reasons = "; ".join(dict.fromkeys(c.note for c in pool if c.status in ("error", "refused") and c.note))
            if findings.blocking:  # the audited code could not run: a finding, not the user's mistake
                raise MechanismBroken(f"no neighbouring pair could be tested: {reasons}", Findings())
            raise InvalidInputError("the mechanism failed on every neighbouring pair: " + reasons)
        n = samples if samples is not None else max(1, (total - sampler.used) // 2)
        sel = winner.selected
        pair, event, fmap = winner.pair, sel.event, winner.fmap
        # ---- certification on fresh samples, independent of every selection sample ----
        t_cert = time.perf_counter()
        # The statement (the rate ratio gives way to two limits where the verdict is at stake); the rate
        # ratio needs Poisson(n) sample sizes, drawn before any release.
        planned = certification_statement(sel, n, alpha=alpha, claim_raw=(claim.epsilon * pair.scale
                                                                           if claim.is_private else None))
        requested = (poisson_sizes(np.random.default_rng(child_seed(root, 6)), n)
                     if planned == RATE_RATIO else (n, n))
        hits, drawn = [], []
        for side, data in enumerate((pair.D, pair.D_prime)):
            fn = functools.partial(_count_chunk, mechanism=mechanism, data=data, fmap=fmap, event=event)
            parts = run(fn, _tasks(child_seed(root, 1, side), requested[side], chunk))
            hits.append(sum(h for h, _, _ in parts))
            drawn.append(sum(m for _, m, _ in parts))  # timeouts and crashes drop releases: certify on what is there
            findings.merge(Findings.merged(f for _, _, f in parts))
        t_cert = time.perf_counter() - t_cert
        findings.merge(replay_findings(mechanism, X, probe_seed, first))  # late: state has had time to change
    except MechanismBroken as exc:
        broken = exc
    finally:
        if owned_bar:
            bar.close()
    if broken is not None:
        findings.merge(sampler.findings)
        return stopped(leaks, broken, candidates=[c.summary() for c in pool + searched])
    (k_fav, n_fav), (k_oth, n_oth) = ((hits[0], drawn[0]), (hits[1], drawn[1])) if event.favours == "D" else \
        ((hits[1], drawn[1]), (hits[0], drawn[0]))
    # A dropped release (timeout, crash) thins one side at a rate nobody knows, which the rate ratio
    # cannot absorb: then the two-limit statement, valid on the releases drawn, is certified instead.
    statement = planned if tuple(drawn) == tuple(requested) else TWO_LIMITS
    raw = certified_bound(statement, k_fav, n_fav, k_oth, n_oth, alpha=alpha, q_share=sel.q_share,
                          delta=claim.delta)
    bound = raw / pair.scale
    ceiling = statement_ceiling(statement, n_fav, n_oth, alpha=alpha, delta=claim.delta) / pair.scale
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat, q_hat = k_fav / max(n_fav, 1), k_oth / max(n_oth, 1)
        point = math.log(p_hat / q_hat) if q_hat > 0 and p_hat > 0 else (math.inf if p_hat > 0 else 0.0)
    verdict = settle_verdict(VIOLATION if claim.is_private and bound > claim.epsilon else NO_VIOLATION, findings)
    alpha_q = alpha * sel.q_share if statement == TWO_LIMITS else 0.0
    return EpsilonEstimate(
        mechanism=str(getattr(mechanism, "name", type(mechanism).__name__)),
        claim=claim, epsilon_lower_bound=bound, verdict=verdict, confidence=confidence, samples=n,
        selection_samples=sizes[0], selection_samples_total=sampler.used, ceiling=ceiling,
        pair=pair.summary(), event=event.describe(),
        counts={"favoured_in_event": k_fav, "other_in_event": k_oth, "n_per_dataset": n,
                "n_favoured": n_fav, "n_other": n_oth,
                "requested": [int(r) for r in requested],  # releases asked of D, D' (Poisson(n) for the ratio)
                "favoured_dataset": event.favours, "statement": statement,
                "alpha_p": alpha - alpha_q, "alpha_q": alpha_q},
        raw_bound=raw, point_estimate=point / pair.scale if math.isfinite(point) else point,
        candidates=summaries, elapsed_seconds=time.perf_counter() - t_start, seed=int(seed),
        guarantee=guarantee_text(confidence, bound, len(pool) + len(searched), claim.neighbours == "metric",
                                 sel.q_share, statement),
        leak_warnings=leaks, findings=findings.to_list(), selected_event=event,
        search={"budget": int(total), "selection_budget": int(sel_budget), "fast": fast,
                "candidates_built": len(pairs), "candidates_tried": len(pool), "model_search_trials": trials,
                "round_sizes": list(sizes), "rounds": len(sizes)},
        timings={"selection_seconds": t_sel, "certification_seconds": t_cert,
                 "expected_bound_at_selection": float(winner.rank[0])})


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
