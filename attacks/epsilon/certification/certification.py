"""Certification of the selected event on fresh releases, in looks, with α spent over the looks.

The plan (:func:`dpaudit.attacks.epsilon.sampling.budget.look_plan`) fixes, before any certification
release is drawn, the cumulative number of releases per dataset at each look,
n₁ < n₂ < …, and the level α_j of each look's statement, Σ α_j = α.  Look j
draws the releases that bring each dataset to n_j (fresh: independent of every
selection sample and of nothing else), counts how many fall in the event, and
certifies the selection's statement on all of look j's releases at level α_j.
The run stops at the first look whose bound exceeds the claim — unless the
last look is expected, at the rates seen so far, to certify :data:`STOP_GAIN`
times more (5 %: a flagrant leak's bound grows with the sample, and the budget
buys the strongest bound, not just the verdict) — or at the deadline (a timed run
whose code slowed down), and reports the largest bound of the looks it
completed.

Why that is valid under optional stopping: let E_j be the event "look j's
statement fails".  Each statement, on the first n_j releases of each side, is
a fixed-sample statement at level α_j (the n_j were fixed in advance; whether
look j is ever reached does not change what its first n_j releases are), so
P[E_j] ≤ α_j, and P[∪ E_j] ≤ Σ α_j = α.  Outside ∪ E_j *every* look's bound is
at most the true ε, so the largest of any looks completed — whenever and
why the run stopped — is too.

For the rate-ratio statement (δ = 0) the sample sizes are Poisson: each look's
increments are drawn from Poisson(n_j − n_{j−1}) before its releases, so the
cumulative sizes are Poisson(n_j), as the statement needs.  A dropped release
(timeout, crash) falls back to the two-limit statement on what was drawn, as
in a single-look certification.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from dpaudit.execution.seeds import Stream
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import PrivacyClaim

from ...bounds import RATE_RATIO, TWO_LIMITS, certified_bound, statement_ceiling
from ..sampling.budget import look_plan
from ..selection.candidate import Candidate
from ..selection.events import BinEvent, predicted_bound
from ..selection.selection import certification_statement
from .curve_verdict import CurveVerdict, judge_curve, split_alpha
from .renyi import RENYI_ORDERS

# A violation stops the looks only when the last look is not expected to certify this much more.  The
# prediction (the look's frequencies carried to the last look's size) is rough and errs low — a flagrant
# leak's bound grows with the sample faster than it says — so the threshold is small: the budget the user
# granted buys the strongest bound it can, and a run stops early only where more looks would add nothing.
STOP_GAIN = 1.05

__all__ = ["Certification", "Certifier", "CountSampler", "LookResult", "certify_in_looks", "judge_look",
           "worth_going_on"]


class CountSampler(Protocol):
    """Draws fresh certification releases of one side of the pair and counts them in the event
    (:class:`dpaudit.attacks.epsilon.sampling.sampling.Sampler`): ``certifying`` names the pair, its feature map and the event;
    ``retain`` ends the worker processes of every other pair; ``cert_key`` keys the streams of a second
    certification in the same run apart from the first's (``()`` for the first)."""

    certifying: Any
    cert_key: tuple[int, ...]

    def retain(self, pairs: list[Any]) -> None: ...

    def count(self, side: int, look: int, size: int, deadline: float | None) -> tuple[int, int] | None:
        """(releases in the event, releases drawn) for ``size`` fresh releases of ``side`` in look ``look``
        (the sampler keeps their findings); None when the deadline passed before they were all drawn."""
        ...


@dataclass(frozen=True)
class LookResult:
    """One completed look: cumulative counts per dataset (D, D′) and the raw bound it certified."""

    requested: tuple[int, int]
    drawn: tuple[int, int]
    hits: tuple[int, int]
    alpha: float
    statement: str
    bound: float
    favours: str
    # Releases of D and D′ per bin of a binned event's statistic, cumulative over the looks (None: a threshold event)
    cells: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False)
    renyi_alpha: float = 0.0  # the level of this look's Rényi statement (0: none; dpaudit.attacks.epsilon.certification.curve_verdict)

    @property
    def favoured(self) -> tuple[int, int]:
        """(releases in the event, releases drawn) of the favoured dataset."""
        i = 0 if self.favours == "D" else 1
        return self.hits[i], self.drawn[i]

    @property
    def other(self) -> tuple[int, int]:
        i = 1 if self.favours == "D" else 0
        return self.hits[i], self.drawn[i]

    def ceiling(self, delta: float) -> float:
        """The largest raw bound this look's sample sizes could have certified."""
        return statement_ceiling(self.statement, self.favoured[1], self.other[1], alpha=self.alpha, delta=delta)

    def to_dict(self) -> dict[str, Any]:
        return {"requested": list(self.requested), "drawn": list(self.drawn), "in_event": list(self.hits),
                "alpha_spent": self.alpha, "statement": self.statement, "raw_bound": self.bound}


@dataclass
class Certification:
    """Every look completed and why the looks stopped."""

    looks: list[LookResult] = field(default_factory=list)
    planned: int = 0
    stopped: str = "planned"    # planned | violation | deadline
    seconds: float = 0.0

    @property
    def best(self) -> LookResult | None:
        """The look with the largest bound (the last of equals): the one the estimate reports."""
        if not self.looks:
            return None
        return max(reversed(self.looks), key=lambda look: look.bound)

    def summary(self) -> dict[str, Any]:
        return {"planned": self.planned, "completed": len(self.looks), "stopped": self.stopped,
                "looks": [look.to_dict() for look in self.looks]}


def worth_going_on(plan: list[tuple[int, float]], hits: list[int], drawn: list[int], i_fav: int, bound: float,
                    statement: str, q_share: float, delta: float) -> bool:
    """After a look that certified a violation: would the last look, at the rates seen so far, certify more
    than :data:`STOP_GAIN` times this bound?  Then the run goes on — the budget was granted for the strongest
    bound it can buy, and a bound just above the claim understates a flagrant leak (perfect separation's bound
    grows with the sample); otherwise it stops here."""
    final_n, final_alpha = plan[-1]
    if drawn[i_fav] >= final_n:
        return False
    expected = float(predicted_bound(hits[i_fav], hits[1 - i_fav], drawn[i_fav], final_n, alpha=final_alpha,
                                     delta=delta, q_share=q_share, conservative=False, statement=statement,
                                     m_other=drawn[1 - i_fav]))
    return expected > STOP_GAIN * bound


def judge_look(claim: PrivacyClaim, look: LookResult, q_share: float, where: str = "the selected event"
               ) -> CurveVerdict:
    """The claim's curve (and, with the look's cells, its Rényi bounds) judged on one look's counts at that
    look's own levels (:func:`~dpaudit.attacks.epsilon.certification.curve_verdict.judge_curve`)."""
    notion = claim.curve
    if notion is None:
        raise ValueError(f"judge_look needs a claim in a notion (a trade-off curve); got {claim}")
    (k_fav, n_fav), (k_oth, n_oth) = look.favoured, look.other
    cells = look.cells if look.renyi_alpha > 0 and look.cells is not None else None
    # judge_curve splits its α when it makes a Rényi statement: give it the look's two levels' sum
    alpha = look.alpha + (look.renyi_alpha if cells is not None else 0.0)
    return judge_curve(notion, k_fav, n_fav, k_oth, n_oth, alpha=alpha, q_share=q_share, cells=cells, where=where)


def certify_in_looks(sampler: CountSampler, plan: list[tuple[int, float]], *, favours: str, statement: str,
                     q_share: float, delta: float, claim_raw: float | None, sizes_rng: np.random.Generator,
                     deadline: float | None = None, renyi_alpha: float = 0.0,
                     curve_violated: Callable[[LookResult], bool] | None = None) -> Certification:
    """Run the looks of ``plan`` (see the module doc) and return what they certified.

    ``statement`` is the selection's choice (:data:`~dpaudit.attacks.bounds.RATE_RATIO`
    draws Poisson increments from ``sizes_rng``); ``claim_raw`` the claim in
    the pair's raw unit (None: nothing is claimed, so nothing stops the run
    early); ``deadline`` a :func:`time.perf_counter` value past which no new
    look is begun and a look under way is abandoned; ``renyi_alpha`` the Rényi
    statement's level per unit of a look's α (look j's is ``renyi_alpha``·α_j,
    so they add up over the looks as the plan's do).  ``curve_violated(look)``: a claim in a notion — the
    run also stops at the first two-limit look whose own statements certify a violation of its curve (each
    look's hold at its level α_j, all of them together at α: stopping on one keeps the level).
    """
    t0 = time.perf_counter()
    out = Certification(planned=len(plan))
    requested, drawn, hits = [0, 0], [0, 0], [0, 0]
    previous = 0
    for j, (size, alpha_j) in enumerate(plan):
        if deadline is not None and time.perf_counter() > deadline:
            out.stopped = "deadline"
            break
        step = size - previous
        increments = ([int(sizes_rng.poisson(step)), int(sizes_rng.poisson(step))] if statement == RATE_RATIO
                      else [step, step])
        parts = []
        for side in (0, 1):
            part = sampler.count(side, j, increments[side], deadline)
            if part is None:
                break
            parts.append(part)
        if len(parts) < 2:
            out.stopped = "deadline"
            break
        for side, (k, m) in enumerate(parts):
            requested[side] += increments[side]
            hits[side] += k
            drawn[side] += m
        previous = size
        look_statement = statement if drawn == requested else TWO_LIMITS
        i_fav = 0 if favours == "D" else 1
        bound = certified_bound(look_statement, hits[i_fav], drawn[i_fav], hits[1 - i_fav], drawn[1 - i_fav],
                                alpha=alpha_j, q_share=q_share, delta=delta)
        counted = getattr(sampler, "cells", None)
        cells = ((counted[0].copy(), counted[1].copy()) if counted is not None and counted[0] is not None
                 and counted[1] is not None else None)
        out.looks.append(LookResult((requested[0], requested[1]), (drawn[0], drawn[1]), (hits[0], hits[1]), alpha_j,
                                    look_statement, float(bound), favours, cells, renyi_alpha * alpha_j))
        by_bound = (claim_raw is not None and math.isfinite(claim_raw) and bound > claim_raw and not worth_going_on(
            plan, hits, drawn, i_fav, float(bound), look_statement, q_share, delta))
        if by_bound or (curve_violated is not None and look_statement == TWO_LIMITS
                        and curve_violated(out.looks[-1])):
            out.stopped = "violation" if j + 1 < len(plan) else "planned"
            break
    out.seconds = time.perf_counter() - t0
    return out


@dataclass(frozen=True)
class Certifier:
    """Stage 4 of the estimator: the chosen pair's event certified on fresh releases, in looks.

    ``looks`` (a planned budget) spreads the certification over the looks of
    :func:`~dpaudit.attacks.epsilon.sampling.budget.look_plan` with α spent over them; without,
    one look at the full α.  The statement is the selection's, except where the
    verdict is at stake (:func:`~dpaudit.attacks.epsilon.selection.selection.certification_statement`);
    the rate ratio's Poisson sample sizes come from ``seed`` (the estimate's
    root seed); no look is begun past ``deadline`` (a :func:`time.perf_counter` value).
    """

    alpha: float
    claim: PrivacyClaim
    looks: bool
    seed: np.random.SeedSequence
    deadline: float | None = None

    def __call__(self, sampler: CountSampler, winner: Candidate, n: int) -> Certification:
        pair, selected = winner.pair, winner.selected
        if selected is None:
            raise RuntimeError(f"the pair {pair.name} is certified without a selected event")
        # A claim in a notion with a Rényi bound, on a binned event of an unscaled pair, also gets a Rényi statement
        # on the event's cells: it takes its share of α before the looks are planned (curve_verdict.split_alpha).
        notion = self.claim.notion
        renyi = (notion is not None and pair.scale == 1.0 and isinstance(selected.event, BinEvent)
                 and any(math.isfinite(notion.renyi(a)) for a in RENYI_ORDERS))
        alpha_looks, alpha_renyi = split_alpha(self.alpha, renyi)
        plan = look_plan(n, alpha_looks, looks=self.looks)
        claim_raw = self.claim.epsilon * pair.scale if self.claim.is_private else None
        statement = certification_statement(selected, n, alpha=plan[-1][1], claim_raw=claim_raw)
        sampler.retain([pair])  # the other candidates' worker processes are not needed any more
        sampler.certifying = (pair, winner.fmap, selected.event)
        if hasattr(sampler, "cells"):
            setattr(sampler, "cells", [None, None])  # noqa: B010 - the cells of this event only
        claim, q_share = self.claim, selected.q_share
        judged = notion is not None and pair.scale == 1.0 and claim.curve is not None  # as curve_result decides

        def curve_violated(look: LookResult) -> bool:
            return judge_look(claim, look, q_share).verdict == Verdict.VIOLATION

        return certify_in_looks(sampler, plan, favours=selected.event.favours, statement=statement,
                                q_share=q_share, delta=claim.delta, claim_raw=claim_raw,
                                sizes_rng=np.random.default_rng(Stream.CERTIFICATION_SIZES.of(self.seed)), deadline=self.deadline,
                                renyi_alpha=alpha_renyi / alpha_looks, curve_violated=curve_violated if judged else None)
