"""The rounds of the pair search: successive halving with racing, and how its rounds are sized.

**Successive halving with racing** (Jamieson & Talwalkar 2016;
:func:`successive_halving`): every surviving candidate gets fresh releases
of D and D′ (round r: s₀·ηʳ per dataset, added to what it has), its event
is chosen and validated on everything it has
(:func:`dpaudit.attacks.epsilon.selection.selection.select_event`), and the best ⌈1/η⌉ by validated
expected bound (per unit of the claim: divided by the pair's scale) go on
— with up to as many *contenders* (:func:`_race`): candidates whose
optimistic prediction still reaches the leader's conservative one, which
a rare event's wide limits would otherwise drop in round one.  A
contender gets a cheaper look (1/η of the round's size), so the search
costs at most 1/η more than planned; the best after the last round wins.  Each round costs about the
same, so the budget is spent where the expected bound is highest
(:func:`plan_rounds` sets s₀ so the rounds spend the budget exactly).

Stable: ties keep the candidates' priority order.  :class:`~dpaudit.attacks.epsilon.search.search.PairSearch` runs it.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

from ..sampling.budget import MIN_JUDGE
from ..selection.candidate import Candidate, Sampler, evaluate
from ..selection.selection import EventSelector

__all__ = ["ETA", "plan_rounds", "planned_survivors", "successive_halving"]

ETA = 3                    # successive halving keeps the best 1/ETA each round


def planned_survivors(n_candidates: int) -> list[int]:
    """Candidates in each round of successive halving: P, ⌈P/η⌉, ⌈⌈P/η⌉/η⌉, ..., 1."""
    counts = [max(1, int(n_candidates))]
    while counts[-1] > 1:
        counts.append(int(math.ceil(counts[-1] / ETA)))
    return counts


def plan_rounds(n_candidates: int, budget: int, *, min_size: int, first_size: int | None = None,
                guaranteed: int = 0) -> tuple[int, list[int]]:
    """(candidates kept, per-round releases per dataset per survivor) for successive halving.

    Round r keeps the best ⌈·/η⌉ of the previous round and gives each
    s₀·ηʳ fresh releases per dataset, so every round costs about the same;
    the rounds together cost 2·s₀·Σ_r Pᵣ·ηʳ releases, which must fit in
    ``budget``.  With ``first_size`` s₀ is given (and the budget follows);
    otherwise candidates are dropped from the end of the list — the screened
    candidates in :func:`~.screening.screening_pool`'s order — until s₀ ≥
    ``min_size``, but never the first ``guaranteed`` (and never below two)
    while s₀ ≥ :data:`~dpaudit.attacks.epsilon.sampling.budget.MIN_JUDGE`: for them the
    first round is made smaller instead.
    """
    P = max(1, int(n_candidates))
    keep = min(P, max(2, int(guaranteed)))
    while True:
        counts = planned_survivors(P)
        cost = sum(c * ETA ** r for r, c in enumerate(counts))
        s0 = int(first_size) if first_size else int(max(0, budget) // (2 * cost))
        if first_size or s0 >= min_size or P == 1 or (P <= keep and s0 >= MIN_JUDGE):
            break
        P -= 1
    s0 = max(s0, 1)
    return P, [s0 * ETA ** r for r in range(len(counts))]


def _order(candidates: list[Candidate], claim: float | None) -> list[Candidate]:
    """Best first by validated expected bound; where the claim is given, a candidate expected to exceed it
    on evidence other than a refusal goes before one whose evidence is that the code refused a dataset
    (both show a violation; the first says more about the code).  Stable: ties keep the priority order."""
    if claim is None or not math.isfinite(claim):
        return sorted(candidates, key=lambda c: c.rank, reverse=True)
    return sorted(candidates, key=lambda c: (c.rank[0] > claim and not c.refused, c.rank), reverse=True)


def _race(ranked: list[Candidate], keep: int, claim: float | None = None) -> tuple[list[Candidate], list[Candidate]]:
    """(leaders, contenders) after a round: the ``keep`` most promising (successive halving's ⌈P/η⌉, by
    :attr:`Candidate.promise`; where the claim is given, those expected to exceed it on evidence other than a
    refusal first), and up to ``keep`` *contenders* beyond them whose optimistic prediction (the most their
    validation counts allow) still reaches the best conservative one — they cannot be ruled out yet, and a
    rare event's wide limits would otherwise lose them in round one.  The most promising first.

    Promise, not the conservative prediction, decides who goes on: the conservative one discounts every
    candidate for the many it was compared with, which in round one buries a weak but real leak under the
    noise of a small validation part; the final choice (:func:`_order`) is still made on it."""
    leader = ranked[0].rank[0]
    exceeds = (lambda c: c.rank[0] > claim and not c.refused) if claim is not None and math.isfinite(claim) \
        else (lambda c: False)
    by_promise = sorted(ranked, key=lambda c: (exceeds(c), c.promise, c.rank), reverse=True)
    leaders = by_promise[:keep]
    contenders = [c for c in by_promise[keep:] if c.optimistic >= leader > -math.inf]
    return leaders, contenders[:keep]


def successive_halving(candidates: list[Candidate], sampler: Sampler, kind: str, sizes: list[int],
                       select: EventSelector, *, claim: float | None = None,
                       out_of_time: Callable[[], bool] | None = None,
                       enough: Callable[[Candidate], bool] | None = None,
                       sizer: Callable[[Candidate, int], int] | None = None,
                       after_first: Callable[[list[Candidate], list[int], list[int]], None] | None = None
                       ) -> list[Candidate]:
    """Run the rounds of :func:`plan_rounds`; returns the last round's candidates, best first (the winner
    first; empty if every candidate failed).

    Candidates that already hold samples (from screening or the model-based search) are
    topped up to round 0's size.  A candidate naming another in ``fallback_for`` is skipped
    when that one already separates D from D′ perfectly.  ``claim`` (per unit,
    None: nothing claimed) orders candidates expected to exceed it
    (:func:`_order`).  ``out_of_time()`` true: no further candidate is drawn
    (the rounds end with what they have; it is asked only where its answer
    would cut a planned draw, so a true answer means one was cut); ``enough(leader)`` true after a
    round: the leader is certain enough of a violation that more rounds would
    only delay it, and the search stops.  ``sizer(candidate, size)``: the draw a
    candidate actually gets (a timed search gives a pair whose datasets run slower
    than planned the time, not the releases, of its round: :meth:`PairSearch.draw_size`).
    ``after_first(ok, sizes, planned)``, after the first round: may
    shrink the later rounds' ``sizes`` in place and move the deadline (:meth:`PairSearch.after_first_round`).
    """
    active = list(candidates)
    contenders: set[int] = set()  # ids of this round's contenders: a cheaper look (1/η of the round's size)
    by_name = {c.pair.name: c for c in candidates}
    planned = planned_survivors(len(candidates))  # survivors planned per round; the sizes assume them
    ranked: list[Candidate] = []
    for r, size in enumerate(sizes):
        for i, c in enumerate(active):
            if out_of_time is not None and (r > 0 or i > 0) and out_of_time():  # the best screened pair is judged
                break
            other = by_name.get(c.pair.fallback_for or "")
            if other is not None and other.separates:
                c.status, c.note = "skipped", f"{other.pair.name} already separates D from D′ perfectly"
                continue
            draw = max(1, size // ETA) if c.id in contenders else size
            if r == 0 and c.status == "ok":  # screened, or from the model-based search: top up to the round's size
                draw = size - c.drawn
                if draw <= 0:
                    if c.selected is None:
                        c.select(select, len(active))
                    continue
            evaluate(c, sampler, kind, draw, (1, c.id, r), select, competitors=len(active),
                     sizer=None if sizer is None else functools.partial(sizer, c))
        ok = [c for c in active if c.status == "ok"]
        ranked = _order(ok, claim)
        if r == 0 and after_first is not None:  # fixed costs paid, every pair timed: the rest re-planned
            after_first(ok, sizes, planned)
        if not ranked or (out_of_time is not None and r + 1 < len(sizes) and out_of_time()) or (
                enough is not None and enough(ranked[0])):
            break
        if r + 1 < len(sizes):
            leaders, racing = _race(ranked, planned[min(r + 1, len(planned) - 1)], claim)
            active, contenders = leaders + racing, {c.id for c in racing}
            retain = getattr(sampler, "retain", None)
            if callable(retain):  # the dropped candidates' worker processes are not needed any more
                retain([c.pair for c in active])
    return ranked
