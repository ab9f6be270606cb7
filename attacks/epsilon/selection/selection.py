"""Choosing one event for one neighbouring pair on its selection sample,
without chasing chance.

The selection sample is a pair's :class:`~dpaudit.attacks.epsilon.selection.evidence.Evidence`:
statistics fitted on its part T, and for each statistic the counts of the
releases of D and D′ in each of its bins on three disjoint parts — FIT,
CHOOSE and VALID (:mod:`dpaudit.attacks.epsilon.selection.evidence` says which release goes where).
From counts alone:

* each statistic is cut in its *value order* (thresholds, chosen on FIT and
  CHOOSE together: the order needs no fitting) and, for cells, in its
  *ratio order* (bins sorted by their likelihood ratio on FIT, cuts chosen
  on CHOOSE) — :mod:`dpaudit.attacks.epsilon.selection.binning`;
* for every order the best cut of each frequency tier is chosen
  (:func:`dpaudit.attacks.epsilon.selection.events.cut_candidates`);
* every such candidate is counted again on **VALID**, and ranked by the
  bound its VALID counts predict at the certification size
  (:func:`dpaudit.attacks.epsilon.selection.events.predicted_bound`, lower/upper selection limits for
  p/q).  The best validated candidate wins.

Why: with thousands of candidate cuts, the best one on the sample that
chose it is biased upwards — an event seen 10 vs 0 times in 10⁵ releases of
a correct mechanism looks like a strong leak and splits evenly on fresh
samples.  VALID's counts of a fixed finalist are unbiased, and the winner's
curse is confined to the max over the finalists (at most 4 per order of a
statistic), which the lower/upper limits damp: they are taken at level
SELECTION_ALPHA/(K·competitors), simultaneous over the K distinct events
validated (:func:`distinct_events`: one cut seen through several statistics
counts once) and the pairs the result competes with, so a rare event's
score is discounted by exactly the noise a max over that many could have
found.  The tiers keep a frequent, solid event in the final even when a rare
one looked better on CHOOSE; VALID grows with the sample (every release the
pair search draws after the raw rows is counted there, a third of them), so a
rare *real* event is validated on enough data to win.

**Ties.**  Candidates whose predictions are within half a standard error of
the leader's (:data:`TIE_SE`) are statistically tied; among them the one
whose validated log-likelihood ratio is largest wins — the event further in
the tail of the ratio, which gains most from the certification sample.

A claim in a notion (ρ, μ, …) ranks by the predicted gap below its curve
instead, each order adding its best cut by that gap to the finalists
(:mod:`dpaudit.attacks.epsilon.selection.curve_selection`); the statement is two-limit.

Finally the statement certification makes and the split of α between the two
Clopper–Pearson limits are chosen on VALID's counts too
(:data:`dpaudit.attacks.bounds.ALPHA_Q_SHARES`), and the statistics that can still
win are named (``contenders``), so later releases are counted for them only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtri

from dpaudit.mechanisms.notions import Notion

from ...bounds import ALPHA_Q_SHARES, RATE_RATIO, TWO_LIMITS
from .binning import ScoreBins
from .curve_selection import curve_cut, gap_predictions, gap_statement
from .events import (
    SELECTION_ALPHA,
    BinEvent,
    CutCandidate,
    ThresholdEvent,
    cut_candidates,
    predicted_bound,
    ratio_event,
    value_event,
)
from .evidence import CHOOSE, FIT, FIT_CAP, RAW_LIMIT, VALID, Evidence

__all__ = ["MAX_CONTENDERS", "EventSelector", "SelectedEvent", "certification_statement", "distinct_events",
           "no_event", "select_event", "select_from_evidence"]

TIE_SE = 0.5         # candidates within this many standard errors of the leader's prediction are tied
RATIO_PRIOR = 2.0    # pseudo-count per side when a bin's log ratio is estimated on FIT (orders the cells)
MAX_CONTENDERS = 8   # statistics counted on new releases, at most (the ones that can still win)
FINALISTS_PER_TIER = 4  # candidates per frequency tier that go on to validation


@dataclass(frozen=True)
class SelectedEvent:
    """The chosen event of one pair, with the evidence it was chosen on."""

    event: BinEvent | ThresholdEvent
    predicted: float          # bound VALID's counts predict at n_cert (raw, before the pair's scale); may be < 0
    selection_counts: tuple[int, int, int]  # (k favoured, k other, n per side) on VALID
    q_share: float = 0.5      # share of α for q's upper limit at certification (two-limit statement)
    candidates_scored: int = 0  # statistics × orders scored
    per_statistic: dict[str, float] = field(default_factory=dict)  # best validated prediction per statistic
    point_estimate: float = 0.0  # smoothed ln(p̂/q̂) on VALID: breaks ties between candidates
    statement: str = TWO_LIMITS  # what certification states (dpaudit.attacks.bounds): two limits, or the rate ratio
    optimistic: float = -np.inf  # the bound VALID's counts allow at most (other ends of the same limits): racing
    contenders: tuple[int, ...] = ()  # statistics (indices into the evidence) that can still win
    likely: float = -np.inf   # the best candidate's prediction at the plain selection level: the pair's promise
    ranked_by: str = "epsilon"  # what the predictions are: "epsilon" (the bound) or "curve gap" (a notion's claim)

    @property
    def rank(self) -> tuple[float, float]:
        return (self.predicted, self.point_estimate)


def no_event(names: list[str], n: int) -> SelectedEvent:
    """Nothing distinguishes D from D′ (every feature constant and equal)."""
    ev = ThresholdEvent(names[0] if names else "none", 0.0, True, "D", column=0)
    return SelectedEvent(ev, -np.inf, (0, 0, n))


def certification_statement(selected: SelectedEvent, n_cert: int, *, alpha: float,
                            claim_raw: float | None) -> str:
    """The statement certification makes: the selection's choice, except where the verdict is at stake.

    Both statements hold at level α, but at the boundary they differ in how
    often they *reach* it: on an event whose ratio is exactly e^ε (a tight,
    correct mechanism) the rate ratio's bound exceeds ε in about α of audits,
    the two-limit bound (two limits sharing α, each conservative) in well
    under a tenth of that.  So when VALID's counts can rule out neither side of
    the claim — the optimistic prediction (other ends of VALID's limits) reaches
    ``claim_raw`` (the claimed ε in the pair's raw unit; None: nothing
    claimed) and the conservative one does not — the verdict is at stake and
    the two-limit statement is certified; elsewhere (bounds clearly below the
    claim, clear violations, no claim) the tighter rate ratio.  Decided on
    selection counts only: no share of α.
    """
    if selected.statement != RATE_RATIO or claim_raw is None:
        return selected.statement
    k_fav, k_oth, m = selected.selection_counts
    if m <= 0:
        return TWO_LIMITS
    upper, lower = (float(predicted_bound(k_fav, k_oth, m, n_cert, alpha=alpha, delta=0.0, statement=RATE_RATIO,
                                          optimistic=side)) for side in (True, False))
    return TWO_LIMITS if lower < claim_raw <= upper else RATE_RATIO


def distinct_events(k_fav: np.ndarray, k_other: np.ndarray, m: np.ndarray | None = None) -> int:
    """How many different events the candidates are, counted by their validation counts: one cut seen
    through several statistics (v[j], its cells, dv[j] where v[j−1] is constant) is one event, and must not
    widen every candidate's limits as if it were several."""
    m = np.zeros(len(k_fav)) if m is None else m
    return max(1, len({(int(a), int(b), int(c)) for a, b, c in zip(k_fav, k_other, m)}))


@dataclass
class _Candidate:
    """One validated cut: which statistic and order, the cut, and its VALID counts."""

    index: int       # the statistic, in the evidence
    order: str
    cut: int
    above: bool
    favours: str
    k_fav: int
    k_oth: int
    m_fav: int
    m_oth: int
    approx: float = -np.inf  # its score on the sample that chose it
    tier: int = 0


def _orders(ev: Evidence, i: int) -> list[tuple[str, np.ndarray | None, np.ndarray | None, np.ndarray]]:
    """(order, permutation or None, fitted log ratio or None, choose counts (2, bins)) for statistic ``i``."""
    c = ev.counts[i]
    out: list[tuple[str, np.ndarray | None, np.ndarray | None, np.ndarray]] = []
    for order in ev.orders[i]:
        if order == "value":
            out.append((order, None, None, c[FIT] + c[CHOOSE]))
        elif c[FIT].sum() > 0 and c[CHOOSE].sum() > 0:
            fit = c[FIT].astype(float)
            lr = np.log((fit[0] / max(fit[0].sum(), 1.0) * fit[1].sum() + RATIO_PRIOR) / (fit[1] + RATIO_PRIOR))
            perm = np.argsort(-lr, kind="stable")
            out.append((order, perm, lr, c[CHOOSE][:, perm]))
    return out


def _candidates(ev: Evidence, *, n_cert: int, alpha: float, delta: float, notion: Notion | None = None
                ) -> tuple[list[_Candidate], int, int]:
    """Every statistic's best cuts per tier and order (with ``notion``, also its best by the curve gap), with
    their VALID counts; and how many orders were scored."""
    found: list[_Candidate] = []
    scored = 0
    for i in range(len(ev.binnings)):
        valid = ev.counts[i][VALID]
        m_D, m_Dp = int(valid[0].sum()), int(valid[1].sum())
        if m_D == 0 or m_Dp == 0:
            continue
        seen = ev.counts[i].sum(axis=(0, 1)) > 0  # bins with any release in them, on any part
        for order, perm, _, choose in _orders(ev, i):
            scored += 1
            v = valid if perm is None else valid[:, perm]
            below = np.cumsum(v, axis=1)
            occupied = np.flatnonzero(seen if perm is None else seen[perm])
            cuts = cut_candidates(choose[0], choose[1], n_cert=n_cert, alpha=alpha, delta=delta)
            by_gap = None if notion is None else curve_cut(choose[0], choose[1], notion, n_cert=n_cert, alpha=alpha)
            for c in cuts + ([by_gap] if by_gap is not None else []):
                c = _canonical(c, occupied)
                k_D = int(m_D - below[0, c.cut - 1]) if c.above else int(below[0, c.cut - 1])
                k_Dp = int(m_Dp - below[1, c.cut - 1]) if c.above else int(below[1, c.cut - 1])
                fav = c.favours == "D"
                found.append(_Candidate(i, order, c.cut, c.above, c.favours, k_D if fav else k_Dp,
                                        k_Dp if fav else k_D, m_D if fav else m_Dp, m_Dp if fav else m_D,
                                        c.approx, c.tier))
    return _finalists(found), scored, len(found)


def _finalists(found: list[_Candidate]) -> list[_Candidate]:
    """The :data:`FINALISTS_PER_TIER` best candidates of each frequency tier by their score on the sample that
    chose them — the only ones validated.  Chosen without looking at VALID, so VALID's counts of them stay
    unbiased, and the validation limits are discounted for these few rather than for every statistic's cuts:
    dozens of feature columns that carry nothing do not bury a real leak under their multiplicity."""
    out: list[_Candidate] = []
    for tier in sorted({f.tier for f in found}):
        here = [f for f in found if f.tier == tier]
        here.sort(key=lambda f: -f.approx)  # stable: ties keep the statistics' order
        out += here[:FINALISTS_PER_TIER]
    return out


def _canonical(c: CutCandidate, occupied: np.ndarray) -> CutCandidate:
    """The same cut moved across bins no release fell in, to where it reads most naturally: the bins taken
    start (``above``) at an occupied bin, or end (below) at one — "≥ 1" rather than "> 0" for a 0/1 output.
    Every count is unchanged."""
    if occupied.size == 0:
        return c
    if c.above:
        j = np.searchsorted(occupied, c.cut)          # the first occupied bin at or after the cut
        cut = int(occupied[j]) if j < occupied.size else c.cut
    else:
        j = np.searchsorted(occupied, c.cut) - 1      # the last occupied bin before the cut
        cut = int(occupied[j]) + 1 if j >= 0 else c.cut
    return c if cut == c.cut else dataclasses.replace(c, cut=cut)


def _event(ev: Evidence, c: _Candidate) -> BinEvent:
    b = ev.binnings[c.index]
    if c.order == "value":
        if not isinstance(b, ScoreBins):
            raise RuntimeError(f"a value-ordered event on {type(b).__name__}, not score bins")
        return value_event(b, c.cut, c.above, c.favours)
    _, perm, lr, _ = next(o for o in _orders(ev, c.index) if o[0] == "ratio")
    if perm is None or lr is None:
        raise RuntimeError("the ratio order came without its permutation or likelihood ratios")
    return ratio_event(b, lr, perm, c.cut, c.above, c.favours)


def select_from_evidence(ev: Evidence, *, n_cert: int, alpha: float, delta: float,
                         competitors: int = 1, notion: Notion | None = None) -> SelectedEvent:
    """The validated best event for one pair's evidence (see the module doc).

    ``alpha`` is the total level of the one certified statement; ``competitors``
    is how many pairs the result will be compared with: the validation limits
    are taken at SELECTION_ALPHA/(K·competitors) for K distinct validated
    events, simultaneous over everything the choice is made from.  ``notion``:
    the claim's notion when it is not (ε, δ) — candidates are then ranked by
    their predicted gap below its curve (:mod:`.curve_selection`).
    """
    n = min(ev.drawn)
    if not ev.binnings:
        return no_event(ev.names, n)
    found, scored, n_all = _candidates(ev, n_cert=n_cert, alpha=alpha, delta=delta, notion=notion)
    if not found:
        return no_event(ev.names, n)
    k_fav = np.array([f.k_fav for f in found], dtype=float)
    k_oth = np.array([f.k_oth for f in found], dtype=float)
    m_fav = np.array([f.m_fav for f in found], dtype=float)
    m_oth = np.array([f.m_oth for f in found], dtype=float)
    level = SELECTION_ALPHA / (distinct_events(k_fav, k_oth, m_fav) * max(1, int(competitors)))
    preds, highs, likely = _predictions(k_fav, k_oth, m_fav, m_oth, n_cert, alpha=alpha, delta=delta, level=level,
                                        notion=notion)
    points = np.log((k_fav + 0.5) / m_fav) - np.log((k_oth + 0.5) / m_oth)
    best = _leader(preds, highs, k_fav + k_oth, level)
    per_stat: dict[str, float] = {}
    strongest: dict[int, float] = {}
    for f, pred, high in zip(found, preds, highs):
        b = ev.binnings[f.index]
        name = b.name if f.order == "value" else b.ratio_name
        per_stat[name] = max(per_stat.get(name, -np.inf), float(pred))
        strongest[f.index] = max(strongest.get(f.index, -np.inf), float(high))
    w = found[best]
    contenders = sorted((i for i, high in strongest.items() if high >= preds[best] or i == w.index),
                        key=lambda i: -strongest[i])[:MAX_CONTENDERS]
    chosen = SelectedEvent(_event(ev, w), float(preds[best]), (w.k_fav, w.k_oth, min(w.m_fav, w.m_oth)),
                           candidates_scored=scored, per_statistic=per_stat,
                           point_estimate=float(points[best]), optimistic=float(highs[best]),
                           contenders=tuple(sorted(set(contenders) | {w.index})), likely=float(np.max(likely)))
    if notion is not None:  # the two-limit statement (the curve verdict reads its limits), α split for the gap
        q, pred, high = gap_statement(w.k_fav, w.k_oth, w.m_fav, w.m_oth, n_cert, notion, alpha=alpha, level=level,
                                      shares=ALPHA_Q_SHARES)
        return dataclasses.replace(chosen, predicted=max(pred, chosen.predicted), q_share=q, statement=TWO_LIMITS,
                                   optimistic=max(high, pred, chosen.predicted, chosen.optimistic), ranked_by="curve gap")
    return _with_statement(chosen, (w.m_fav, w.m_oth), n_cert, alpha=alpha, delta=delta, level=level)


def _predictions(k_fav: np.ndarray, k_oth: np.ndarray, m_fav: np.ndarray, m_oth: np.ndarray, n_cert: int, *,
                 alpha: float, delta: float, level: float, notion: Notion | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(conservative, optimistic, plain-level) predictions of every candidate: the ε bound under the statement
    certification will most likely make (the rate ratio where δ = 0), or with ``notion`` the gap below its curve."""
    if notion is not None:
        return gap_predictions(k_fav, k_oth, m_fav, m_oth, n_cert, notion, alpha=alpha, level=level)
    statement = RATE_RATIO if delta == 0.0 else TWO_LIMITS
    common: dict[str, Any] = dict(alpha=alpha, delta=delta, level=level, m_other=m_oth, statement=statement)
    preds = predicted_bound(k_fav, k_oth, m_fav, n_cert, **common)
    highs = predicted_bound(k_fav, k_oth, m_fav, n_cert, optimistic=True, **common)
    likely = predicted_bound(k_fav, k_oth, m_fav, n_cert, alpha=alpha, delta=delta, m_other=m_oth,
                             statement=statement)
    return preds, highs, likely


def _leader(preds: np.ndarray, highs: np.ndarray, seen: np.ndarray, level: float) -> int:
    """The best candidate: the highest prediction, or among those tied with it (within :data:`TIE_SE`
    standard errors of its prediction, read off the width of its selection limits at ``level``) the one
    seen most often on VALID; the earlier candidate among equals."""
    top = int(np.argmax(preds))
    if not np.isfinite(preds[top]):
        return top
    z = float(ndtri(1.0 - level))
    se = max(0.0, float(highs[top] - preds[top])) / (2.0 * z) if np.isfinite(highs[top]) else 0.0
    tied = np.flatnonzero(preds >= preds[top] - TIE_SE * se)
    return int(tied[np.argmax(seen[tied])])


def _with_statement(best: SelectedEvent, m_valid: tuple[int, int], n_cert: int, *, alpha: float, delta: float,
                    level: float) -> SelectedEvent:
    """The chosen event with the statement certification makes, its split of α, and its conservative and
    optimistic predictions at the certification size under that statement."""
    # The statement certification makes, and the split of α between its two limits: the best for
    # VALID's frequencies themselves.  The rate ratio (Poisson sample sizes) needs δ = 0.
    k_fav, k_oth, _ = best.selection_counts
    m_fav, m_oth = m_valid
    shares = np.asarray(ALPHA_Q_SHARES)
    preds = predicted_bound(k_fav, k_oth, m_fav, n_cert, alpha=alpha, delta=delta, q_share=shares,
                            conservative=False, m_other=m_oth)
    q_share = float(shares[int(np.argmax(preds))]) if np.isfinite(np.max(preds)) else 0.5
    statement = TWO_LIMITS
    if delta == 0.0:
        ratio = predicted_bound(k_fav, k_oth, m_fav, n_cert, alpha=alpha, delta=0.0, conservative=False,
                                statement=RATE_RATIO, m_other=m_oth)
        statement = RATE_RATIO if float(ratio) > float(np.max(preds)) else TWO_LIMITS
    common: dict[str, Any] = dict(alpha=alpha, delta=delta, q_share=q_share, level=level, statement=statement,
                                  m_other=m_oth)
    predicted = float(predicted_bound(k_fav, k_oth, m_fav, n_cert, **common))
    optimistic = float(predicted_bound(k_fav, k_oth, m_fav, n_cert, optimistic=True, **common))
    return dataclasses.replace(best, predicted=max(predicted, best.predicted), q_share=q_share, statement=statement,
                               optimistic=max(optimistic, predicted, best.predicted, best.optimistic))


@dataclass(frozen=True)
class EventSelector:
    """The event-selection stage: the evidence a pair's sample is kept as, and the event chosen from it.

    ``n_cert`` and ``alpha`` are the certification size and level the
    predictions are made for; ``classifier`` and ``cells`` say which
    statistics are fitted (:class:`~dpaudit.attacks.epsilon.selection.evidence.Evidence`).
    """

    n_cert: int
    alpha: float
    delta: float = 0.0
    classifier: Any = "logistic"
    cells: bool = True
    max_train: int = FIT_CAP
    notion: Notion | None = None  # a claim's notion other than (ε, δ): rank by the gap below its curve

    def evidence(self, names: list[str], raw_limit: int = RAW_LIMIT) -> Evidence:
        return Evidence(names, classifier=self.classifier, cells=self.cells, max_train=self.max_train,
                        raw_limit=raw_limit, n_cert=self.n_cert, alpha=self.alpha, delta=self.delta)

    def __call__(self, ev: Evidence, competitors: int = 1) -> SelectedEvent:
        return select_from_evidence(ev, n_cert=self.n_cert, alpha=self.alpha, delta=self.delta,
                                    competitors=competitors, notion=self.notion)

    def but(self, **changes: Any) -> "EventSelector":
        """A copy with some settings changed (e.g. no classifier for the model-based search's trials)."""
        return dataclasses.replace(self, **changes)


def select_event(F_D: np.ndarray, F_Dp: np.ndarray, names: list[str], *, n_cert: int, alpha: float,
                 delta: float, classifier: Any = "logistic", max_train: int = FIT_CAP,
                 cells: bool = True, competitors: int = 1, notion: Notion | None = None) -> SelectedEvent:
    """The validated best event for one pair from raw feature rows of D and D′ (all kept as raw evidence:
    :class:`~dpaudit.attacks.epsilon.selection.evidence.Evidence` splits them into T, A and B by position); ``notion``:
    a claim's notion, ranked by the gap below its curve."""
    selector = EventSelector(n_cert, alpha, delta, classifier, cells, max_train, notion)
    n = min(len(F_D), len(F_Dp))
    ev = selector.evidence(names, raw_limit=max(n, 1))
    if n < 4:
        return no_event(names, n)
    ev.add_raw([np.asarray(F_D[:n])], [np.asarray(F_Dp[:n])])
    return selector(ev, competitors)
