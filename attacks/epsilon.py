"""Empirical ε estimation with a certified lower bound (DESIGN §4).

Pipeline (generator → mechanism → tester → result, as in dp_auditorium):

1. **Pairs** — candidate neighbouring pairs (D, D′) for the claim's relation
   (:mod:`attacks.neighbours`).
2. **Selection** — on a *selection sample* (``selection_samples`` releases of
   each of D and D′ per candidate pair) every pair is featurised
   (:mod:`attacks.features`) and scored with threshold events on each
   feature and on a classifier's score (:mod:`attacks.events`).  The single
   (pair, event) with the best expected certified bound is chosen.
3. **Certification** — ``samples`` *fresh* releases of each of D and D′ of the
   chosen pair.  With k₁ of them on the favoured side in S and k₂ on the
   other, Clopper–Pearson limits (:mod:`attacks.bounds`) give
   ε ≥ ln((p_lo − δ)/q_hi) for S, and, in the other direction, for the
   complement S^c with the roles of D and D′ swapped.
4. **Result** — the larger of the two, in the claim's unit (divided by the
   pair's distance for metric claims, by 2 for a replace pair under an
   add-remove claim), the verdict, and the evidence.

The guarantee (:data:`GUARANTEE`): let α = 1 − confidence.  The selection
sample is independent of the certification sample, so, conditionally on
whatever was selected, the chosen pair and event are fixed before the
certification sample is drawn.  Certification makes exactly two statements
(the event in one direction, its complement in the other), each at level
α/2 (each Clopper–Pearson limit at α/4), so by a union bound both hold with
probability ≥ 1 − α, whatever the number of candidate pairs and events that
were compared on the selection sample; those comparisons need no share of α.
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
    check_data,
    check_positive,
)

from .bounds import epsilon_both_directions, epsilon_ceiling
from .events import ThresholdEvent, select_event
from .execution import (
    INCONCLUSIVE,
    Findings,
    MechanismBroken,
    NoUsableRelease,
    SchedulerError,
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
from .neighbours import NeighbourPair, candidate_pairs

__all__ = ["GUARANTEE", "EpsilonEstimate", "estimate_epsilon", "guarantee_text"]

VIOLATION = "violation"
NO_VIOLATION = "no violation found"
PROBE_CALLS = 3  # single releases drawn first (the release kind) and replayed last (same seed ⇒ same release)

GUARANTEE = (
    "With probability at least {confidence} (α = {alpha:.3g}) the mechanism's true ε{unit} is at least "
    "ε_lb = {bound:.4g}, for the stated neighbour relation. α is union-bounded over the 2 statements "
    "certified on fresh samples: the selected event for (D, D′) and its complement for (D′, D), each at α/2. "
    "The {pairs} candidate pair(s) and their candidate events were compared on a separate, independent "
    "selection sample and only the chosen one was certified, so they take no share of α. "
    "Not promised: this is a black-box test of the released values only — no side channels (timing, memory) "
    "or floating-point attacks; rare events can be missed, so 'no violation found' is not a proof of "
    "privacy; and ε_lb is never an upper bound on ε."
)


def guarantee_text(confidence: float, bound: float, n_pairs: int, metric: bool) -> str:
    return GUARANTEE.format(confidence=confidence, alpha=1.0 - confidence, bound=bound, pairs=n_pairs,
                            unit=" (per unit distance)" if metric else "")


@dataclass(frozen=True)
class EpsilonEstimate:
    """Result of :func:`estimate_epsilon` (JSON via :meth:`to_dict`)."""

    mechanism: str
    claim: PrivacyClaim
    epsilon_lower_bound: float
    verdict: str
    confidence: float
    samples: int                 # certification releases per dataset
    selection_samples: int       # selection releases per dataset per candidate pair
    selection_samples_total: int  # all selection releases (both datasets, every pair)
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
def _features_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                    fmap: FeatureMap) -> tuple[np.ndarray, Findings]:
    """Features of one chunk's isolated releases (dropped ones left out), and the chunk's findings."""
    seed, size = task
    draw = _quiet(draw_releases, mechanism, data, seed, size)
    features = _quiet(fmap, draw.releases) if draw.n else np.empty((0, len(fmap.names)))
    return features, draw.findings


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


def default_chunk_size(mechanism: Mechanism, n_records: int, d: int) -> int:
    """Releases per chunk: a function of the problem only, never of the worker count."""
    if callable(getattr(mechanism, "release_many", None)):
        return int(max(64, min(65_536, 2 ** 21 // max(1, n_records * d))))
    return 64


def _select(mechanism: Mechanism, pairs: list[NeighbourPair], kind: str, run: Any,
            root: np.random.SeedSequence, n_sel: int, chunk: int, n_cert: int, alpha_dir: float,
            delta: float, classifier: Any, findings: Findings, candidates: list[dict[str, Any]]
            ) -> list[tuple[float, int, Any, FeatureMap]]:
    """Score every candidate pair's best event on its own selection sample (findings merged as they come)."""
    scored: list[tuple[float, int, Any, FeatureMap]] = []
    separated: set[str] = set()  # pairs whose selected event split D from D′ perfectly
    for i, pair in enumerate(pairs):
        if pair.fallback_for is not None and pair.fallback_for in separated:
            candidates.append({"pair": pair.name,
                               "skipped": f"{pair.fallback_for} already separates D from D′ perfectly"})
            continue
        fmap = FeatureMap(pair, kind)
        sides = []
        try:
            for side, data in enumerate((pair.D, pair.D_prime)):
                fn = functools.partial(_features_chunk, mechanism=mechanism, data=data, fmap=fmap)
                parts = run(fn, _tasks(child_seed(root, 0, i, side), n_sel, chunk))
                findings.merge(Findings.merged(f for _, f in parts))
                sides.append(np.vstack([features for features, _ in parts]))
        except SchedulerError:  # not the mechanism's fault: stop at once
            raise
        except (InvalidInputError, ValueError, RuntimeError) as exc:  # the mechanism refused this pair
            candidates.append({"pair": pair.name, "error": f"{type(exc).__name__}: {exc}"})
            continue
        if min(len(s) for s in sides) < 2:  # (nearly) every release was dropped: timeouts or crashes
            candidates.append({"pair": pair.name, "error": "too few releases drawn (timeouts or crashes)"})
            continue
        if not fmap.names:  # vector maps learn their width from the first call
            draw = _quiet(draw_releases, mechanism, pair.D, child_seed(root, 4, i), 1)
            findings.merge(draw.findings)
            _quiet(fmap, draw.releases)
        sel = select_event(sides[0], sides[1], fmap.names, n_cert=n_cert, alpha=alpha_dir, delta=delta,
                           classifier=classifier)
        score = sel.predicted / pair.scale
        k_fav, k_other, n_side = sel.selection_counts
        if k_fav == n_side and k_other == 0:
            separated.add(pair.name)
        scored.append((score, i, sel, fmap))
        candidates.append({"pair": pair.name, "expected_bound": score, "event": sel.event.describe()["text"],
                           "selection_counts": list(sel.selection_counts),
                           "statistics_scored": sel.candidates_scored})
    if not scored:
        reasons = "; ".join(dict.fromkeys(c["error"] for c in candidates if "error" in c))
        if findings.blocking:  # the audited code could not run: a finding, not the user's mistake
            raise MechanismBroken(f"no neighbouring pair could be tested: {reasons}", Findings())
        raise InvalidInputError("the mechanism failed on every neighbouring pair: " + reasons)
    return scored


def _quiet(fn: Any, *args: Any) -> Any:
    """Call ``fn`` with PrivacyLeakWarnings silenced (reported once per audit, not per release)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return fn(*args)


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


def estimate_epsilon(mechanism: Mechanism, X: object, *, samples: int = 10_000,
                     selection_samples: int | None = None, confidence: float = 0.95,
                     pairs: Sequence[NeighbourPair] | None = None, neighbours: str | None = None,
                     distance: float = 1.0, delta: float | None = None, claim: PrivacyClaim | None = None,
                     bounds: object | None = None, seed: int = 0, n_jobs: int = 1, scheduler: Any = None,
                     progress: Any = None, classifier: Any = "logistic", chunk_size: int | None = None,
                     max_pairs: int | None = None) -> EpsilonEstimate:
    """Certified lower bound on the mechanism's ε, and a verdict against its claim.

    Parameters
    ----------
    mechanism, X
        The black box and the dataset the neighbouring pairs start from.
    samples
        Certification releases per dataset (D and D′ each).
    selection_samples
        Selection releases per dataset per candidate pair; default
        max(200, samples // 10), at most ``samples``.
    confidence
        1 − α for the certified bound (see :data:`GUARANTEE`).
    pairs
        Explicit candidate pairs; default :func:`~attacks.neighbours.candidate_pairs`.
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
        ``"logistic"`` (default), ``None``/"none" (direct statistics only) or any
        scikit-learn classifier with ``decision_function`` or ``predict_proba``
        (e.g. ``MLPClassifier``), cloned and fitted per candidate pair.
    """
    t_start = time.perf_counter()
    samples = int(check_positive(samples, name="samples", integer=True, minimum=1, inclusive=True))
    if selection_samples is None:
        selection_samples = min(samples, max(200, samples // 10))
    selection_samples = int(check_positive(selection_samples, name="selection_samples", integer=True,
                                           minimum=10, inclusive=True))
    if max_pairs is not None:
        max_pairs = int(check_positive(max_pairs, name="max_pairs", integer=True, minimum=1, inclusive=True))
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
    findings, candidates = Findings(), []
    stopped = functools.partial(_inconclusive_estimate, mechanism, claim, findings, candidates, confidence,
                                samples, selection_samples, int(seed), t_start)
    probe_seed = child_seed(root, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        try:  # a few single releases: the release kind now, and a replay at the end
            probe = draw_releases(mechanism, X, probe_seed, PROBE_CALLS, per_release=True)
        except MechanismBroken as exc:
            probe, broken = None, exc
    leaks = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)))
    for w in caught:  # anything else is passed on unchanged
        if not issubclass(w.category, PrivacyLeakWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for message in leaks:  # once, not once per release
        warnings.warn(message, PrivacyLeakWarning, stacklevel=2)
    if probe is None:
        return stopped(leaks, broken)
    findings.merge(probe.findings)
    usable = [r for r in probe.releases if not isinstance(r, Failed)]
    if not usable:  # nothing to audit: the code does not run on this data at all
        first = next(iter(findings.blocking), None) or next(iter(findings))
        raise NoUsableRelease(f"{getattr(mechanism, 'name', 'the mechanism')} produced no usable release in "
                              f"{PROBE_CALLS} calls on the data ({first.kind}: {first.error})", findings)
    kind = usable[0].kind
    if pairs is None:
        box = bounds if bounds is not None else getattr(mechanism, "bounds", None)
        pairs = candidate_pairs(X, claim.neighbours, kind=kind, bounds=box, distance=distance,
                                delta=claim.delta, rng=np.random.default_rng(child_seed(root, 3)),
                                max_pairs=max_pairs)
    pairs = list(pairs)
    if not pairs:
        raise InvalidInputError("no neighbouring pairs to test")
    n_rec = max(max(len(p.D), len(p.D_prime)) for p in pairs)
    chunk = int(chunk_size or default_chunk_size(mechanism, n_rec, X.shape[1]))
    n_chunks = 2 * len(pairs) * len(chunk_sizes(selection_samples, chunk)) + 2 * len(chunk_sizes(samples, chunk))
    owned_bar = not hasattr(progress, "update")
    bar = progress_bar(n_chunks, f"estimate-eps {getattr(mechanism, 'name', 'mechanism')}",
                       enabled=progress if isinstance(progress, bool) else None) if owned_bar else progress
    run = functools.partial(map_seeds, n_jobs=n_jobs, scheduler=scheduler, progress=bar)
    alpha_dir = alpha / 2.0  # two certified statements (union bound)
    broken = None
    try:
        t_sel = time.perf_counter()
        scored = _select(mechanism, pairs, kind, run, root, selection_samples, chunk, samples,
                         alpha_dir, claim.delta, classifier, findings, candidates)
        score, best_i, sel, fmap = max(scored, key=lambda s: (s[0], -s[1]))
        pair, event = pairs[best_i], sel.event
        t_sel = time.perf_counter() - t_sel
        # ---- certification on fresh samples, independent of the selection sample ----
        t_cert = time.perf_counter()
        hits, drawn = [], []
        for side, data in enumerate((pair.D, pair.D_prime)):
            fn = functools.partial(_count_chunk, mechanism=mechanism, data=data, fmap=fmap, event=event)
            parts = run(fn, _tasks(child_seed(root, 1, side), samples, chunk))
            hits.append(sum(h for h, _, _ in parts))
            drawn.append(sum(n for _, n, _ in parts))  # timeouts and crashes drop releases: certify on what is there
            findings.merge(Findings.merged(f for _, _, f in parts))
        t_cert = time.perf_counter() - t_cert
        findings.merge(replay_findings(mechanism, X, probe_seed, probe))  # late: state has had time to change
    except MechanismBroken as exc:
        broken = exc
    finally:
        if owned_bar:
            bar.close()
    if broken is not None:
        return stopped(leaks, broken)
    (k_fav, n_fav), (k_oth, n_oth) = ((hits[0], drawn[0]), (hits[1], drawn[1])) if event.favours == "D" else \
        ((hits[1], drawn[1]), (hits[0], drawn[0]))
    forward, backward = (epsilon_both_directions(k_fav, n_fav, k_oth, n_oth, alpha=alpha, delta=claim.delta)
                         if min(n_fav, n_oth) > 0 else (0.0, 0.0))
    raw = max(forward, backward)
    bound = raw / pair.scale
    ceiling = epsilon_ceiling(min(n_fav, n_oth), alpha=alpha_dir, delta=claim.delta) / pair.scale
    with np.errstate(divide="ignore"):
        p_hat, q_hat = k_fav / max(n_fav, 1), k_oth / max(n_oth, 1)
        point = math.log(p_hat / q_hat) if q_hat > 0 and p_hat > 0 else (math.inf if p_hat > 0 else 0.0)
    verdict = settle_verdict(VIOLATION if claim.is_private and bound > claim.epsilon else NO_VIOLATION, findings)
    total_sel = 2 * selection_samples * sum(1 for c in candidates if "expected_bound" in c)
    return EpsilonEstimate(
        mechanism=str(getattr(mechanism, "name", type(mechanism).__name__)),
        claim=claim, epsilon_lower_bound=bound, verdict=verdict, confidence=confidence, samples=samples,
        selection_samples=selection_samples, selection_samples_total=total_sel, ceiling=ceiling,
        pair=pair.summary(), event=event.describe(),
        counts={"favoured_in_event": k_fav, "other_in_event": k_oth, "n_per_dataset": samples,
                "n_favoured": n_fav, "n_other": n_oth,
                "forward_bound": forward / pair.scale, "complement_bound": backward / pair.scale,
                "direction": "event" if forward >= backward else "complement"},
        raw_bound=raw, point_estimate=point / pair.scale if math.isfinite(point) else point,
        candidates=candidates, elapsed_seconds=time.perf_counter() - t_start, seed=int(seed),
        guarantee=guarantee_text(confidence, bound, len(pairs), claim.neighbours == "metric"),
        leak_warnings=leaks, findings=findings.to_list(), selected_event=event,
        timings={"selection_seconds": t_sel, "certification_seconds": t_cert,
                 "expected_bound_at_selection": score})


def _inconclusive_estimate(mechanism: Mechanism, claim: PrivacyClaim, findings: Findings,
                           candidates: list[dict[str, Any]], confidence: float, samples: int, selection_samples: int,
                           seed: int, t_start: float, leaks: list[str], broken: MechanismBroken) -> EpsilonEstimate:
    """The result when the audited code stopped the run (every release failing, timing out or crashing)."""
    findings.merge(broken.findings)
    for result in sorted(getattr(broken, "partial_results", {}).items()):  # chunks that finished elsewhere
        findings.merge(result[1][-1])
    reason = str(broken)
    return EpsilonEstimate(
        mechanism=str(getattr(mechanism, "name", type(mechanism).__name__)), claim=claim, epsilon_lower_bound=0.0,
        verdict=INCONCLUSIVE, confidence=confidence, samples=samples, selection_samples=selection_samples,
        selection_samples_total=0, ceiling=0.0, pair={"name": "none", "description": "no pair was certified"},
        event={"text": "none (nothing was certified)"}, counts={"stopped": reason}, raw_bound=0.0,
        point_estimate=0.0, candidates=candidates, elapsed_seconds=time.perf_counter() - t_start, seed=seed,
        guarantee=f"No bound was certified: {reason}. The findings say why; the verdict is inconclusive, "
                  "not 'no violation found'.",
        leak_warnings=leaks, findings=findings.to_list())
