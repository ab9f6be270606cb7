"""Adaptive search for the neighbouring pair to certify, within a stated
selection budget (all of it on selection samples: the search takes no share
of α, see :mod:`dpaudit.attacks.epsilon`).

1. **Screening** (:mod:`.screening`).  *Every* candidate pair the pair
   source built gets a few coupled releases of D and D′ before any is
   certified: they fix the feature layout
   (:meth:`dpaudit.attacks.epsilon.selection.features.FeatureMap.fit_layout`), show
   whether the mechanism refuses the pair (:func:`refusal`) — if it raises on
   every release of *both* datasets, the pair is outside the domain the code
   accepts (fewer records than clusters, say) and drops out after its first
   calls; if it refuses one dataset only, that refusal is observable output
   and the pair competes like any other — and score it.  The strongest go on
   (:func:`~.screening.screening_pool`), as many as the budget gives a
   useful first round; the screening releases join their selection samples.
   Where nothing answers, the datasets grow (:mod:`..pairs.growth`).
2. **Model-based search** (when the budget allows it, :func:`model_search`):
   a TPE optimiser (optuna, seeded) proposes small whole datasets — up to
   :data:`MAX_SEARCH_RECORDS` records around a centre anywhere in the box,
   with a spread from one point to the whole box, plus the canary
   (add-remove), the new place of record 0 (replace) or the direction it
   moves in (metric) — each scored by the bound its own selection sample
   predicts; the best few join the candidates with their samples.
3. **Successive halving with racing** over the screened pool (:mod:`dpaudit.attacks.epsilon.search.halving`): every
   surviving candidate gets fresh releases of D and D′ each round, its event chosen and validated on everything it
   has, the best 1/η go on, with cheaper looks for contenders a rare event's wide limits would drop.
   Where the winner's evidence is a refusal, the best pair on which the code answered on both sides is kept
   beside it (:attr:`SearchOutcome.on_releases`): it is certified too.

Everything is deterministic: release seeds are keyed by (stage, candidate,
round, dataset) — screening's by (candidate, step) alone, shared by D and D′ —,
the optimiser is seeded, ties keep the priority order, and which pairs are
screened does not depend on the machine's speed (only a timed screening
deadline, once a pair has answered, leaves the rest unscreened and says so).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit.execution.seeds import DOMAIN_CHECK_KEY, Stream
from dpaudit.mechanisms.base import InvalidInputError, PrivacyClaim

from ..certification.certification import STOP_GAIN
from ..pairs.neighbours import NeighbourPair
from ..pairs.refusals import Domain, Refusal, classify, domain_checks, domain_note
from ..sampling.budget import (
    DEADLINE_FACTOR,
    MIN_JUDGE,
    MIN_ROUND_FAST,
    MIN_ROUND_PLANNED_SLOW,
    MIN_ROUND_SLOW,
    PROBE,
    SEARCH_SHARE,
    SEARCH_TRIAL_SIZE,
    SEARCH_TRIALS,
    SELECTION_SHARE,
    SLOWER_PAIR,
    Plan,
    look_plan,
)
from ..selection.candidate import Candidate, Sampler, refusal
from ..selection.curve_selection import predicted_gap, scaled_rank
from ..selection.events import predicted_bound
from ..selection.selection import EventSelector
from .halving import ETA, plan_rounds, successive_halving
from .model_search import model_search
from .screening import SCREEN_CALLS, SCREEN_MIN_CALLS, Screen, Screening, screening_pool

__all__ = ["PairSearch", "SearchOutcome"]

MAX_GROWTH = 10.0          # a re-plan grows the later rounds at most this much (see PairSearch.after_first_round)
SCREEN_SHARE = 0.3         # of the selection budget, for screening every pair (at least SCREEN_MIN_CALLS a side each)
SCREEN_TIME_SHARE = 0.5    # of a timed plan's selection time, screening's (it then stops once a pair has answered)


@dataclass
class SearchOutcome:
    """What the pair search found: the winner (None: no pair could be tested) and every candidate tried."""

    winner: Candidate | None
    candidates: list[Candidate]
    sizes: list[int]          # releases per dataset per survivor in each round
    trials: int               # model-based search trials run
    built: int                # candidate pairs built (every one is screened, budget permitting)
    releases: int             # selection releases drawn, every pair and round (screening included)
    seconds: float
    cut: bool = False         # the selection deadline cut a planned draw (a timed run on a slower machine)
    domain: Domain = field(default_factory=Domain)  # the datasets the code accepts (dpaudit.attacks.epsilon.pairs.refusals)
    screening: Screening | None = None  # what screening found (dpaudit.attacks.epsilon.search.screening)
    on_releases: Candidate | None = None  # the winner's evidence is a refusal: the best pair both sides answer

    def summaries(self) -> list[dict[str, Any]]:
        return [c.summary() for c in self.candidates]

    def failures(self) -> str:
        """Why no pair could be tested: what the code did on the pairs it was screened on, in a few words."""
        notes = list(dict.fromkeys(c.note for c in self.candidates
                                   if c.status in ("error", "outside-domain", "broken") and c.note))
        screened = sum(1 for c in self.candidates if c.screen_calls or c.status in ("error", "broken"))
        head = f"{screened} of {len(self.candidates)} pairs screened, none answered usably on both sides"
        return head + (": " + "; ".join(notes[:3]) + (f"; … ({len(notes) - 3} more)" if len(notes) > 3 else "")
                       if notes else "")


class _Deadline:
    """``out_of_time()`` for :func:`successive_halving`: past a :func:`time.perf_counter` value ``at`` (which a
    re-plan may move); ``passed`` remembers a true answer (one that cut a planned draw)."""

    def __init__(self, at: float) -> None:
        self.at, self.passed = at, False

    def __call__(self) -> bool:
        late = time.perf_counter() > self.at
        self.passed = self.passed or late
        return late


@dataclass(frozen=True)
class PairSearch:
    """Stage 2 of the estimator: which pair to certify, and its event, on selection releases only.

    The plan's selection budget goes to a model-based search over small
    datasets (fast mechanisms, when ``model_based``: :mod:`.model_search`) and
    to successive halving over the candidates (:func:`successive_halving`),
    round sizes from :func:`plan_rounds` (``first_size``: the caller's first
    round).  ``seed`` is the estimate's root seed; ``box`` the public box the
    searched datasets live in.  The search stops early once the leader's
    conservative prediction at the first certification look exceeds the claim
    (:meth:`enough`) and at the plan's selection deadline.
    """

    plan: Plan
    claim: PrivacyClaim
    alpha: float
    fast: bool
    box: tuple[np.ndarray, np.ndarray]
    distance: float
    seed: np.random.SeedSequence
    first_size: int | None = None
    model_based: bool = True
    min_records: int | None = None   # the domain the user states (--min-records); None: read off refusals
    n_records: int = 0               # the audited data's size (where growth starts)
    domains: list[Domain] = field(default_factory=list, compare=False)  # what judge_refusals found, this search

    def rounds(self, n_pairs: int, spent: int = 0, guaranteed: int = 0) -> tuple[int, list[int], int]:
        """(candidates kept, releases per dataset per survivor in each round, model-based search trials) for
        the selection budget left once screening has spent ``spent`` releases (:func:`plan_rounds`; the first
        ``guaranteed`` kept however short the budget): the screened pairs' lanes are running, so keeping one
        costs its releases only."""
        plan = self.plan
        min_round = MIN_ROUND_FAST if self.fast else (MIN_ROUND_SLOW if plan.fixed_samples else MIN_ROUND_PLANNED_SLOW)
        searching = self.model_based and self.fast
        search_budget = int(SEARCH_SHARE * plan.selection) if searching else 0
        left = max(plan.selection - search_budget - int(spent), 2 * MIN_JUDGE)
        n_keep, sizes = plan_rounds(n_pairs, left, min_size=min_round, first_size=self.first_size,
                                    guaranteed=guaranteed)
        trials = min(SEARCH_TRIALS, search_budget // (2 * (SEARCH_TRIAL_SIZE + PROBE))) if searching else 0
        return n_keep, sizes, trials if trials >= 8 else 0

    def screening_calls(self, n_pairs: int) -> int:
        """Coupled screening calls per side for each of ``n_pairs`` pairs: :data:`SCREEN_SHARE` of the
        selection budget shared out, between :data:`~.screening.SCREEN_MIN_CALLS` and
        :data:`~.screening.SCREEN_CALLS` — every pair is screened, however short the budget."""
        per = int(SCREEN_SHARE * self.plan.selection) // max(1, 2 * int(n_pairs))
        return int(np.clip(per, SCREEN_MIN_CALLS, SCREEN_CALLS))

    def draw_size(self, sampler: Sampler, c: Candidate, size: int) -> int:
        """The draw a candidate gets in a timed search: ``size``, unless its own datasets run
        :data:`~dpaudit.attacks.epsilon.sampling.budget.SLOWER_PAIR` times slower than the calibration data (code can be 40×
        slower on a worst case) — then the time ``size`` releases were planned to take at the calibrated speed,
        at least :data:`~dpaudit.attacks.epsilon.sampling.budget.MIN_JUDGE`/2 releases.  A slow pair is neither cut from the
        search nor allowed to starve the pairs after it; the plan records the change."""
        planned, rate = self.plan.rate, sampler.rate(c.pair)
        if not planned or rate is None or rate * SLOWER_PAIR >= planned:
            return size
        c.slowdown = planned / rate
        fits = max(min(size, MIN_JUDGE // 2), int(size * rate / planned))
        if fits < size:
            self.plan.replanned.append(f"{c.pair.name}: {c.slowdown:.1f}× slower than the calibration data, "
                                       f"{fits:,} releases per dataset instead of {size:,}")
        return fits

    def judge_refusals(self, sampler: Sampler, candidates: list[Candidate]) -> Domain:
        """Classify what the code refused once every pair is probed (:func:`dpaudit.attacks.epsilon.pairs.refusals.classify`):
        pairs with a dataset below the code's domain are set aside (no verdict rests on them); a refusal at or
        above it stays, as the leak channel it is.  Returns the domain.

        A size threshold read off the pairs is checked before it is believed: datasets of every size below it
        down to the empty one, and of the threshold itself, at two places in the box, are probed
        (:func:`refusals.domain_checks`); one answered below the threshold, or refused at it, and the refusals
        are classified again with what the checks showed."""
        seen = [c.probed for c in candidates if c.probed is not None]
        found = classify(seen, self.min_records)
        if found.source == "observed":
            for i, check in enumerate(domain_checks(found.min_records, *self.box)):
                try:
                    rel_D, rel_Dp = sampler.probe(check, (DOMAIN_CHECK_KEY + i,))
                except (InvalidInputError, ValueError, RuntimeError):
                    continue
                refused, _ = refusal(rel_D, rel_Dp)
                if refused:  # a dataset refused as a whole: refusal notes, not faults (Sampler.settle)
                    sampler.refused[id(check)] = refused
                seen.append(Refusal((len(check.D), len(check.D_prime)), refused))
            found = classify(seen)
        for c in candidates:
            if c.status == "ok" and c.refused and found.excludes(len(d) for d in (c.pair.D, c.pair.D_prime)):
                c.status, c.note = "outside-domain", domain_note(found)
        self.domains.append(found)
        return found

    def after_first_round(self, deadline: _Deadline | None, sampler: Sampler, ok: list[Candidate],
                          sizes: list[int], planned: list[int]) -> None:
        """The plan remade once the first round is drawn (a timed search): every pair has paid its fixed costs
        (worker starts, probes, the first fits) and been timed on its own datasets, so the later rounds are
        sized for the time really left — at most :data:`~dpaudit.attacks.epsilon.sampling.budget.SELECTION_SHARE` of it, the
        rest is certification's — at the speed the pairs showed, and the selection deadline moved to match."""
        end = self.plan.deadlines.get("budget")
        if deadline is None or end is None or not self.plan.rate or len(sizes) < 2:
            return
        now = time.perf_counter()
        rates = [x for x in (sampler.rate(c.pair) for c in ok) if x]
        rate = float(np.median(rates)) if rates else float(self.plan.rate)
        rest = sum(planned[min(j, len(planned) - 1)] * 2 * sizes[j] for j in range(1, len(sizes)))
        need, share = rest / max(rate, 1e-9), SELECTION_SHARE * max(0.0, end - now)
        # Shrink the later rounds to the time left; grow them into it only where the plan charged the search for
        # worker starts (paid now): their releases were priced in time, and a larger final round chooses the
        # event on more evidence.
        scale = share / need if need > 0 else 1.0
        if self.plan.lane_releases <= 0:
            scale = min(scale, 1.0)
        scale = min(scale, MAX_GROWTH)
        if scale < 1.0 or scale >= 1.25:
            old = list(sizes)
            sizes[1:] = [max(MIN_JUDGE // 2, int(size * scale)) for size in sizes[1:]]
            self.plan.replanned.append(f"the search's later rounds sized for the time left after the first "
                                       f"({share:.0f} s): {old[1:]} → {sizes[1:]} releases per dataset")
            need *= scale
        deadline.at = max(deadline.at, now + DEADLINE_FACTOR * need)

    def threshold(self) -> float | None:
        """What a candidate's rank must exceed to predict a violation: the claimed ε (per unit of the claim), a
        notion's gap 0 (candidates are then ranked by their gap below its curve: :mod:`..selection.curve_selection`), or
        None where nothing is claimed."""
        if not self.claim.is_private:
            return None
        return 0.0 if self.claim.notion is not None else self.claim.epsilon

    def enough(self, leader: Candidate) -> bool:
        """Does the leader's conservative prediction at the *first* look already exceed the claim, and would more
        evidence not sharpen its last look's (:data:`~dpaudit.attacks.epsilon.certification.certification.STOP_GAIN`)?  Then more
        rounds would only delay a violation the first look is expected to certify.  A leader whose evidence
        is a refusal (the code raises on one dataset only) is not enough: the search goes on for evidence
        about what the code releases."""
        claim = self.claim
        if not claim.is_private or leader.selected is None or leader.refused:
            return False
        k_fav, k_oth, m = leader.selected.selection_counts
        if m <= 0:
            return False
        looks = look_plan(self.plan.certification, self.alpha)
        (n_1, alpha_1), (n_last, alpha_last) = looks[0], looks[-1]
        if claim.notion is not None:
            return self._enough_gap(leader, looks)
        pred = float(predicted_bound(k_fav, k_oth, m, n_1, alpha=alpha_1, delta=claim.delta))
        if pred / leader.pair.scale <= claim.epsilon:
            return False
        # Past the claim: stop only where another round (η× the evidence at the same rates) would not raise the
        # last look's prediction by STOP_GAIN — a perfect separation on a few hundred releases bounds the other
        # side's rate by only a few per hundred, and a rival pair or event that is perfect at ten times the
        # sample certifies far more than the leader that looked perfect first.
        now, later = (float(predicted_bound(f * k_fav, f * k_oth, f * m, n_last, alpha=alpha_last,
                                            delta=claim.delta)) for f in (1, ETA))
        return later <= STOP_GAIN * now

    def _enough_gap(self, leader: Candidate, looks: list[tuple[int, float]]) -> bool:
        """:meth:`enough` for a notion's claim: the leader's conservative gap below the claimed curve at the first
        look is positive (a scaled pair's never is: :func:`~..selection.curve_selection.scaled_rank`), and another round
        would not widen its last look's gap by :data:`~dpaudit.attacks.epsilon.certification.certification.STOP_GAIN`."""
        if leader.selected is None or self.claim.notion is None:
            raise RuntimeError("the curve gap is asked of a leader without an event or a claim without a notion")
        k_fav, k_oth, m = leader.selected.selection_counts
        notion, q = self.claim.notion, leader.selected.q_share
        (n_1, alpha_1), (n_last, alpha_last) = looks[0], looks[-1]
        if scaled_rank(float(predicted_gap(k_fav, k_oth, m, n_1, notion, alpha=alpha_1, q_share=q)),
                       leader.pair.scale) <= 0.0:
            return False
        now, later = (float(predicted_gap(f * k_fav, f * k_oth, f * m, n_last, notion, alpha=alpha_last, q_share=q))
                      for f in (1, ETA))
        return later <= STOP_GAIN * now

    def screen(self, candidates: list[Candidate], sampler: Sampler, kind: str, select: EventSelector,
               grow: Callable[[int], list[NeighbourPair]] | None) -> Screening:
        """Stage 2a: every candidate screened (:class:`~.screening.Screen`), with growth where nothing answers; a
        timed plan stops screening at half its selection time once a pair has answered."""
        deadline = self.plan.deadlines.get("selection")
        out_of_time = None
        if deadline is not None:
            now = time.perf_counter()
            out_of_time = _Deadline(now + SCREEN_TIME_SHARE * max(0.0, deadline - now))
        stage = Screen(kind, select, self.screening_calls, out_of_time=out_of_time, grow=grow,
                       start_size=max(10, self.n_records))  # growth starts from the audited data's size
        return stage(candidates, sampler)

    def pool(self, screened: Screening, spent: int) -> tuple[list[Candidate], list[int], int]:
        """The candidates that go on to the rounds (the strongest screening evidence first, as many as the budget
        gives a useful first round), the round sizes and the model-based trials."""
        ok = [c for c in screened.candidates if c.status == "ok"]
        ordered, head = screening_pool(ok, self.rounds(len(ok), spent)[0])
        n_keep, sizes, trials = self.rounds(len(ordered), spent, head)
        return ordered[:n_keep], sizes, trials

    def __call__(self, pairs: list[NeighbourPair], sampler: Sampler, kind: str, select: EventSelector,
                 grow: Callable[[int], list[NeighbourPair]] | None = None) -> SearchOutcome:
        t0, used0 = time.perf_counter(), sampler.used
        if self.min_records is not None:  # the stated domain: pairs below it are never drawn
            stated = Domain(int(self.min_records), "stated")
            outside = [p for p in pairs if stated.excludes((len(p.D), len(p.D_prime)))]
            pairs = [p for p in pairs if not stated.excludes((len(p.D), len(p.D_prime)))]
        else:
            outside = []
        candidates = [Candidate(i, p) for i, p in enumerate(pairs)]
        screened = self.screen(candidates, sampler, kind, select, grow)
        self.judge_refusals(sampler, screened.candidates)
        pool, sizes, trials = self.pool(screened, sampler.used - used0)
        searched: list[Candidate] = []
        if trials:
            lo, hi = self.box
            # Trials rank datasets on the feature statistics alone (no classifier fit per trial).
            searched = model_search(sampler, kind, self.claim.neighbours, lo, hi, self.distance, trials=trials,
                                    size=SEARCH_TRIAL_SIZE, seed=int(Stream.MODEL_SEARCH.of(self.seed).generate_state(1)[0]),
                                    first_id=len(screened.candidates), select=select.but(classifier=None))
        for c in screened.candidates:
            if c.status == "ok" and c not in pool:
                c.status = "screened"  # screened, not among the strongest: no selection releases of its own
        sampler.retain([c.pair for c in pool + searched])  # the screened pairs not kept: their lanes end
        deadline = self.plan.deadlines.get("selection")
        out_of_time = _Deadline(deadline) if deadline else None
        timed = self.plan.source == "time" and bool(self.plan.rate) and callable(getattr(sampler, "rate", None))
        ranked = successive_halving(
            pool + searched, sampler, kind, sizes, select, claim=self.threshold(),
            out_of_time=out_of_time, enough=self.enough if len(self.plan.looks) > 1 else None,
            sizer=functools.partial(self.draw_size, sampler) if timed else None,
            after_first=functools.partial(self.after_first_round, out_of_time, sampler) if timed else None)
        winner = ranked[0] if ranked else None
        on_releases = None
        if winner is not None and winner.refused:  # the best pair both sides answer, from every round
            answering = [c for c in pool + searched if c.status == "ok" and c.selected is not None and not c.refused]
            on_releases = max(answering, key=lambda c: c.rank, default=None)
        skipped = [Candidate(-1 - i, p, status="outside-domain", note=domain_note(Domain(int(self.min_records or 0),
                                                                                     "stated")))
                   for i, p in enumerate(outside)]
        return SearchOutcome(winner, screened.candidates + searched + skipped, sizes, trials,
                             len(screened.candidates) + len(outside), sampler.used - used0, time.perf_counter() - t0,
                             cut=out_of_time is not None and out_of_time.passed,
                             domain=self.domains[-1] if self.domains else Domain(), screening=screened,
                             on_releases=on_releases)
