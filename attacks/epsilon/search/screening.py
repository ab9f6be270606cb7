"""Stage 2a of the estimator: screen every candidate pair before any is certified.

A search that cuts its list of pairs by a time plan before it has evidence
gives up on code that refuses the head of the list, and misses the leak that
sits where the list does not look first.  So every pair the pair source built —
the degenerate constructions, the canaries, the pairs built from the user's
own records — first gets a few releases of D and D′ (:class:`Screen`), and the
budget then flows to the pairs whose screening evidence is strongest
(:mod:`.halving`, on fresh selection releases; certification and its α are
unchanged).

* **Coupled.**  D and D′ are drawn on the *same* random streams
  (:meth:`~dpaudit.attacks.epsilon.sampling.sampling.Sampler.coupled`): where the code draws
  its noise from the generator it is given, the noise cancels in the
  difference of the two releases and the deterministic part of the difference
  shows in a few calls.  Whether that holds is checked (:class:`Coupling`: D
  twice on the same streams gives the same release) and reported; where it
  does not hold the same statistic is read uncoupled, with the noise of both
  sides in it.  Coupling chooses; it never certifies.
* **The score** (:func:`coupled_effect`): for every feature, the mean of the
  paired differences less two standard errors, against the feature's spread
  over streams — a standardised effect, infinite where the two sides differ
  deterministically and neither varies.  For additive noise of scale b it is
  about Δ/(√2·b): the ε a Laplace mechanism of that noise would spend on the
  difference, over √2.
* **Refusals.**  A pair refused on both sides in every screening call is
  outside the code's domain and drops out after its first calls; a pair on
  which the code crashes or hangs is set aside with the failure as *its*
  finding (:class:`~dpaudit.execution.MechanismBroken` of scope ``dataset``),
  never a block on the others.
* **Growth.**  Where no screened pair releases anything on both sides (code
  that releases an empty set of centres, or refuses, below some size), the
  search builds the constructions again at larger sizes
  (:func:`~dpaudit.attacks.epsilon.pairs.growth.grown_pairs`: three times the
  audited data's size, then nine times, up to :data:`MAX_GROWN_RECORDS`) and
  screens them too, before it concludes.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit.execution import MechanismBroken, SchedulerError
from dpaudit.mechanisms.base import Centroids, Failed, InvalidInputError, Labels, Points, Release, Spans, Vector

from ..pairs.neighbours import NeighbourPair
from ..pairs.refusals import Refusal
from ..sampling.sampling import aligned
from ..selection.candidate import Candidate, refusal, refusal_reason
from ..selection.features import FeatureMap, compact
from ..selection.selection import EventSelector

__all__ = ["COUPLING_STREAMS", "MAX_GROWN_RECORDS", "SCREEN_CALLS", "SCREEN_MIN_CALLS", "SCREEN_PROBE", "Coupling",
           "Screen", "Screening", "coupled_effect", "has_content", "screening_pool"]

SCREEN_PROBE = 2          # coupled calls per side a pair gets first: refused on both sides in all, it stops there
SCREEN_CALLS = 8          # coupled calls per side per pair, at most (the probe's included) ...
SCREEN_MIN_CALLS = 2      # ... at least (the probe alone): every pair is screened, however short the budget
COUPLING_STREAMS = 4      # streams D is drawn on twice to check the coupling (SCREEN_PROBE per pair)
EFFECT_Z = 2.0            # standard errors taken off the mean paired difference (a conservative effect)
MAX_GROWN_RECORDS = 2_000  # growth stops at datasets of this many records
GROWTH_FACTOR = 3         # each growth step multiplies the dataset size by this


@dataclass
class Coupling:
    """Whether D and D′ drawn on the same stream share their randomness: ``holds`` (D twice on one stream gave
    one release, on every stream checked), ``fails`` (it did not: the code draws from somewhere else — its
    own generator, the operating system's), or ``untested`` (no pair answered on both sides)."""

    status: str = "untested"
    streams: int = 0
    differed: int = 0

    @property
    def holds(self) -> bool:
        return self.status == "holds"

    @property
    def wants_more(self) -> bool:
        """Checked on fewer than :data:`COUPLING_STREAMS` streams yet, with nothing found against it."""
        return self.status != "fails" and self.streams < COUPLING_STREAMS

    def record(self, streams: int, differed: int) -> None:
        self.streams += int(streams)
        self.differed += int(differed)
        self.status = "fails" if self.differed else "holds"

    def describe(self) -> str:
        if self.status == "holds":
            return (f"coupled: D drawn twice on each of {self.streams} streams gave the same release; D and D′ "
                    "were screened on shared streams")
        if self.status == "fails":
            return (f"not coupled: D drawn twice on one stream gave different releases on {self.differed} of "
                    f"{self.streams} streams (the code does not draw only from the generator it is given), so "
                    "pairs were screened on independent releases")
        return "coupling not tested (no pair answered on both sides)"

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "streams": self.streams, "differed": self.differed, "text": self.describe()}


@dataclass
class Screening:
    """What screening found: every candidate (screened or not), the coupling, the releases it drew, the sizes
    the datasets were grown to, and the pairs the budget left unscreened (:meth:`to_dict`: what the result's
    ``search["screening"]`` says — the same on any machine but for ``unscreened`` in a timed run; its
    ``seconds`` go to the result's timings)."""

    candidates: list[Candidate]
    coupling: Coupling
    releases: int
    seconds: float
    calls_per_side: int
    grown: list[int] = field(default_factory=list)
    unscreened: int = 0

    def to_dict(self) -> dict[str, Any]:
        screened = [c for c in self.candidates if c.screen_calls]
        return {"pairs": len(self.candidates), "screened": len(screened), "unscreened": self.unscreened,
                "calls_per_side": self.calls_per_side, "releases": self.releases,
                "coupling": self.coupling.to_dict(), "grown_to_records": list(self.grown),
                "answered_both_sides": sum(1 for c in screened if c.answered)}  # (seconds: the result's timings)


def coupled_effect(F_D: np.ndarray, F_Dp: np.ndarray) -> float:
    """The screening score of a pair from aligned feature rows of D and D′ (row i of each on stream i).

    Per feature j: ``(|mean_i(F_D − F_Dp)| − EFFECT_Z · se) / spread``, the spread being the root mean of the
    two sides' variances over streams; 0 when the difference is within its noise, ∞ when the two sides differ
    deterministically and neither varies.  The score is the largest over the features (never negative)."""
    m = min(len(F_D), len(F_Dp))
    if m == 0:
        return 0.0
    A, B = np.asarray(F_D[:m], dtype=np.float64), np.asarray(F_Dp[:m], dtype=np.float64)
    diff = A - B
    mean = np.abs(diff.mean(axis=0))
    if m > 1:
        se = diff.std(axis=0, ddof=1) / math.sqrt(m)
        spread = np.sqrt((A.var(axis=0, ddof=1) + B.var(axis=0, ddof=1)) / 2.0)
    else:
        se = np.zeros(A.shape[1])
        spread = np.zeros(A.shape[1])
    lower = mean - EFFECT_Z * se
    scale = np.maximum(spread, 1e-12 * np.maximum(np.abs(A).max(axis=0), 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(lower > 0, np.where(spread > scale * 0.5, lower / scale, np.inf), 0.0)
    return float(np.max(effect)) if effect.size else 0.0


def has_content(release: Release) -> bool:
    """Whether a release says anything: a centre, a finite value, a point, a clustered record, a span — not a
    failure, nor an empty or all-NaN answer (code that "releases nothing" at a size)."""
    if isinstance(release, Failed):
        return False
    if isinstance(release, Centroids):
        return bool(len(release.centers)) and bool(np.isfinite(release.centers).all(axis=1).any())
    if isinstance(release, Vector):
        return bool(np.isfinite(np.asarray(release.values, dtype=np.float64)).any())
    if isinstance(release, Points):
        return bool(len(release.points))
    if isinstance(release, Labels):
        return bool((np.asarray(release.labels) >= 0).any())
    if isinstance(release, Spans):
        return bool(release.n_clusters)
    return True


def screening_pool(candidates: list[Candidate], n_keep: int) -> tuple[list[Candidate], int]:
    """(the screened candidates in the order they go on to the rounds, how many of its head the rounds keep
    however short the budget): the rounds keep the head, the rest while the budget lasts
    (:func:`~.halving.plan_rounds`).

    The head: the strongest evidence on what the code releases, the strongest refusal, and the careful
    auditor's first tries the code answered on — a mean shift is what eight coupled calls see, while a leak in
    the *support* of the release (a centre that is never noised, so never near a corner) needs a round's
    evidence.  Then the rest by score.  Refusals take at most a third of ``n_keep`` places: they are one
    channel however many pairs show it.  Ties keep the pair source's priority order."""
    ok = sorted((c for c in candidates if c.status == "ok"), key=lambda c: (-c.screen_score, c.id))
    answering = [c for c in ok if not c.refused]
    refusing = [c for c in ok if c.refused][:max(1, -(-max(1, int(n_keep)) // 3))]
    head = list(dict.fromkeys(answering[:1] + refusing[:1] + [c for c in answering if c.pair.first_try]))
    rest = [c for c in sorted(answering + refusing, key=lambda c: (-c.screen_score, c.id)) if c not in head]
    return head + rest, len(head)


class Screen:
    """Screen candidates on coupled releases (see the module doc).

    ``calls_for(n_pairs)`` gives the calls per side each pair gets (the plan's share for screening, between
    :data:`SCREEN_MIN_CALLS` and :data:`SCREEN_CALLS`); ``out_of_time()`` stops screening once at least one
    pair has answered on both sides (a timed plan's screening deadline); ``grow(size)`` builds the pairs of
    one growth step (none: no growth).
    """

    def __init__(self, kind: str, select: EventSelector, calls_for: Callable[[int], int], *,
                 out_of_time: Callable[[], bool] | None = None,
                 grow: Callable[[int], list[NeighbourPair]] | None = None, start_size: int = 10) -> None:
        self.kind, self.select, self.calls_for = kind, select, calls_for
        self.out_of_time, self.grow, self.start_size = out_of_time, grow, max(1, int(start_size))

    def __call__(self, candidates: list[Candidate], sampler: Any) -> Screening:
        t0, used0 = time.perf_counter(), sampler.used
        calls = self.calls_for(len(candidates))
        coupling = Coupling()
        unscreened = self._screen_all(candidates, sampler, calls, coupling)
        grown: list[int] = []
        size = self.start_size
        while self.grow is not None and not any(c.answered for c in candidates):
            size *= GROWTH_FACTOR
            if size > MAX_GROWN_RECORDS * GROWTH_FACTOR // 2 or (self.out_of_time is not None and self.out_of_time()):
                break
            size = min(size, MAX_GROWN_RECORDS)
            more = [Candidate(len(candidates) + i, p) for i, p in enumerate(self.grow(size))]
            if not more:
                break
            grown.append(size)
            candidates.extend(more)
            unscreened += self._screen_all(more, sampler, calls, coupling)
            if size >= MAX_GROWN_RECORDS:
                break
        return Screening(candidates, coupling, sampler.used - used0, time.perf_counter() - t0, calls, grown,
                         unscreened)

    def _screen_all(self, candidates: list[Candidate], sampler: Any, calls: int, coupling: Coupling) -> int:
        """Screen each candidate in turn; the number left unscreened by the deadline."""
        for i, c in enumerate(candidates):
            answered = any(o.answered for o in candidates[:i])
            if answered and self.out_of_time is not None and self.out_of_time():
                for rest in candidates[i:]:
                    rest.status, rest.note = "unscreened", "not screened: the screening time ran out"
                return len(candidates) - i
            self.screen(c, sampler, calls, coupling)
        return 0

    def screen(self, c: Candidate, sampler: Any, calls: int, coupling: Coupling) -> None:
        """``calls`` coupled releases per side for one candidate (the first :data:`SCREEN_PROBE` decide whether
        it is refused on both sides), its feature layout and selection evidence, and its score; the coupling
        checked on it while :class:`Coupling` wants more streams."""
        try:
            first = sampler.coupled(c.pair, (c.id, 0), SCREEN_PROBE)
            rel_D, rel_Dp = aligned(*first)
            if not rel_D:
                raise RuntimeError("no coupled release was drawn on both sides (timeouts or crashes)")
            c.refused, note = refusal(rel_D, rel_Dp, beyond_box=c.pair.family == "outlier")
            c.screen_calls = len(rel_D)
            if c.refused == (0, 1):
                self._refused(c, sampler, rel_D, rel_Dp, note)
                return
            if calls > SCREEN_PROBE:
                more_D, more_Dp = aligned(*sampler.coupled(c.pair, (c.id, 1), calls - SCREEN_PROBE))
                rel_D, rel_Dp = rel_D + more_D, rel_Dp + more_Dp
            c.refused, note = refusal(rel_D, rel_Dp, beyond_box=c.pair.family == "outlier")
            if c.refused:
                self._refused(c, sampler, rel_D, rel_Dp, note)
                if c.refused == (0, 1):
                    return
        except SchedulerError:  # not the mechanism's fault: stop at once
            raise
        except MechanismBroken as exc:
            if exc.scope != "dataset":
                raise
            c.status, c.note = "broken", f"the code could not run on this pair: {exc}"
            return
        except (InvalidInputError, ValueError, RuntimeError) as exc:  # the mechanism refused this pair
            c.status, c.note = "error", f"{type(exc).__name__}: {exc}"
            return
        c.probed = Refusal((len(c.pair.D), len(c.pair.D_prime)), c.refused,
                           refusal_reason(rel_D if 0 in c.refused else rel_Dp) if c.refused else "")
        c.note = note
        c.screen_calls = len(rel_D)
        c.answered = any(has_content(r) for r in rel_D) and any(has_content(r) for r in rel_Dp)
        c.fmap = FeatureMap(c.pair, self.kind).fit_layout(rel_D + rel_Dp)
        F_D, F_Dp = c.fmap(rel_D), c.fmap(rel_Dp)
        c.screen_score = coupled_effect(F_D, F_Dp) / c.pair.scale
        c.evidence = self.select.evidence(c.fmap.names)
        c.evidence.add_raw([compact(F_D)], [compact(F_Dp)])
        c.status = "ok"
        if c.answered and coupling.wants_more:
            self.check_coupling(c, sampler, first[0], coupling)

    @staticmethod
    def _refused(c: Candidate, sampler: Any, rel_D: list[Release], rel_Dp: list[Release], note: str) -> None:
        """Record what the code refused on this pair (both sides: outside its domain, the pair drops out)."""
        sampler.refused[id(c.pair)] = c.refused
        c.probed = Refusal((len(c.pair.D), len(c.pair.D_prime)), c.refused,
                           refusal_reason(rel_D if 0 in c.refused else rel_Dp))
        if c.refused == (0, 1):
            c.status, c.note = "outside-domain", note

    def check_coupling(self, c: Candidate, sampler: Any, first: tuple[list[Release], np.ndarray],
                       coupling: Coupling) -> None:
        """D once more on the streams of its first screening draw, in its own lane: the same releases, or not."""
        if c.fmap is None:
            raise RuntimeError(f"the pair {c.pair.name} is checked for coupling before its features are laid out")
        try:
            (again,) = sampler.coupled(c.pair, (c.id, 0), SCREEN_PROBE, sides=(0,))
        except (MechanismBroken, InvalidInputError, ValueError, RuntimeError):
            return
        before, after = aligned(first, again)
        if not before:
            return
        differed = int(np.count_nonzero(np.any(c.fmap(before) != c.fmap(after), axis=1)))
        coupling.record(len(before), differed)
