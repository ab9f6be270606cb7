"""Choosing one event for one neighbouring pair on its selection sample,
without chasing chance.

The selection sample (m releases of each of D and D′, independent of the
certification sample) is cut into three parts — T and A a third each, at
most :data:`FIT_CAP` and :data:`CHOOSE_CAP` releases per dataset, B the rest:

* **T** fits the statistics that need fitting
  (:mod:`attacks.statistics`: a classifier on the :data:`CLASSIFIER_INPUTS`
  most promising features; likelihood-ratio cells of every feature with
  point masses or modes and of the :data:`CELL_TOP` most promising ones;
  cells of repeated whole releases);
* **A** chooses, for every statistic, its best threshold in
  each frequency tier (:func:`attacks.events.threshold_candidates`); feature
  columns need no fitting and choose on T and A together;
* **B** *validates*: each such candidate is counted again on B,
  and ranked by the bound its B counts predict
  (:func:`attacks.events.predicted_bound`, lower/upper selection limits for
  p/q).  The best validated candidate wins.

Why: with thousands of candidate thresholds, the best one on the sample that
chose it is biased upwards — an event seen 10 vs 0 times in 10⁵ releases of a
correct mechanism looks like a strong leak and splits evenly on fresh
samples.  B's counts of a fixed finalist are unbiased, and the winner's
curse is confined to the max over the finalists (at most 4 per statistic),
which the lower/upper limits damp: they are taken at level
SELECTION_ALPHA/(K·competitors), simultaneous over the K distinct events
validated (:func:`distinct_events`: one threshold seen through several
statistics counts once) and the pairs the result competes with, so a rare event's score
is discounted by exactly the noise a max over that many could have found.
The tiers keep a frequent, solid event in the final even when a rare one
looked better on A; B's share of the sample grows with it, so a rare *real*
event (a point mass seen 10³ times in 10⁶) is validated on enough data to win.

Finally the split of α between the two Clopper–Pearson limits of
certification is chosen on B's counts too (:data:`attacks.bounds.ALPHA_Q_SHARES`).
Samples smaller than :data:`MIN_THREE_WAY` per side use two halves (choose,
validate) and feature columns only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .answers import AnswerCellStatistic, ScoreCellStatistic, answer_groups
from .bounds import ALPHA_Q_SHARES, RATE_RATIO, TWO_LIMITS
from .events import SELECTION_ALPHA, ThresholdEvent, default_classifier, predicted_bound, threshold_candidates
from .features import position_groups
from .statistics import (SIGN_SE_CLEAR, SIGN_SE_LENIENT, CellRatioStatistic, ClassifierStatistic, RowAtomStatistic,
                         SignCountStatistic)

__all__ = ["MIN_THREE_WAY", "SelectedEvent", "certification_statement", "no_event", "select_event"]

MIN_THREE_WAY = 150  # releases per side below which the sample is only halved
FIT_CAP = 25_000     # releases per side, at most, to fit statistics on (T)
CHOOSE_CAP = 25_000  # ... and to choose thresholds on (A); B, the validation part, takes the rest
CELL_TOP = 8         # cell statistics for the features whose best threshold looked best ...
CELL_MAX = 24        # ... plus every feature with point masses or modes, up to this many in all
# The sign counts fitted per group: unsigned, signed by clear moves, signed by every move beyond one s.e.
SIGN_VARIANTS = ((False, SIGN_SE_CLEAR, ""), (True, SIGN_SE_CLEAR, ", signed"),
                 (True, SIGN_SE_LENIENT, ", signed ≥ 1 s.e."))
CLASSIFIER_INPUTS = 64  # the classifier sees at most this many features (the most promising ones)


@dataclass(frozen=True)
class SelectedEvent:
    """The chosen event of one pair, with the evidence it was chosen on."""

    event: ThresholdEvent
    predicted: float          # bound B's counts predict at n_cert (raw, before the pair's scale); may be < 0
    selection_counts: tuple[int, int, int]  # (k favoured, k other, n per side) on the validation part B
    q_share: float = 0.5      # share of α for q's upper limit at certification (two-limit statement)
    candidates_scored: int = 0  # statistics scored
    per_statistic: dict[str, float] = field(default_factory=dict)  # best validated prediction per statistic
    point_estimate: float = 0.0  # smoothed ln(p̂/q̂) on B: breaks ties between candidates predicting the same
    statement: str = TWO_LIMITS  # what certification states (attacks.bounds): two limits, or the rate ratio
    optimistic: float = -np.inf  # the bound B's counts allow at most (other ends of the same limits): racing

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
    under a tenth of that.  So when B's counts can rule out neither side of
    the claim — the optimistic prediction (other ends of B's limits) reaches
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


def distinct_events(k_fav: np.ndarray, k_other: np.ndarray) -> int:
    """How many different events the candidates are, counted by their validation counts: one threshold
    seen through several statistics (v[j], its cells, dv[j] where v[j−1] is constant) is one event, and
    must not widen every candidate's limits as if it were several."""
    return max(1, len({(int(a), int(b)) for a, b in zip(k_fav, k_other)}))


def _point(k_fav: np.ndarray, k_other: np.ndarray) -> np.ndarray:
    return np.log((np.asarray(k_fav, float) + 0.5) / (np.asarray(k_other, float) + 0.5))


def select_event(F_D: np.ndarray, F_Dp: np.ndarray, names: list[str], *, n_cert: int, alpha: float,
                 delta: float, classifier: Any = "logistic", max_train: int = 25_000,
                 cells: bool = True, competitors: int = 1) -> SelectedEvent:
    """The validated best event for one pair (see the module doc).

    ``alpha`` is the total level of the one certified statement; ``classifier``
    is ``"logistic"`` (default), ``None``/``"none"``, or a scikit-learn
    classifier (cloned); ``cells`` turns the likelihood-ratio cell statistics on.
    ``competitors`` is how many pairs the result will be compared with: the
    validation limits are taken at SELECTION_ALPHA/(K·competitors) for K
    distinct validated events, simultaneous over everything the choice is made from.
    """
    n = min(len(F_D), len(F_Dp))
    F_D, F_Dp = F_D[:n], F_Dp[:n]
    if n < 4:
        return no_event(names, n)
    three_way = n >= MIN_THREE_WAY
    if three_way:  # T | A | B; T and A capped (thresholds need no more), B takes the rest
        t = min(n // 3, FIT_CAP)
        a = min(n // 3, CHOOSE_CAP)
        fit_part, choose_part, valid_part = slice(0, t), slice(t, t + a), slice(t + a, n)
        direct_part = slice(0, min(t + a, CHOOSE_CAP))
    else:
        h = n // 2
        fit_part, choose_part, direct_part, valid_part = slice(0, 0), slice(0, h), slice(0, h), slice(h, n)
    m_valid = n - valid_part.start
    varying = [j for j in range(F_D.shape[1])
               if not (np.ptp(F_D[:, j]) == 0 and np.ptp(F_Dp[:, j]) == 0 and F_D[0, j] == F_Dp[0, j])]
    if not varying:
        return no_event(names, n)

    found: list[tuple[str, int | None, Any, Any, int, int]] = []  # (name, column, model, candidate, k_fav, k_other)

    def consider(name: str, score: Any, column: int | None, model: Any, part: slice,
                 shape: dict[str, bool] | None = None) -> float:
        """Threshold candidates of one statistic on ``part``, counted on B; returns the best choosing score."""
        cands = threshold_candidates(score(F_D[part]), score(F_Dp[part]), n_cert=n_cert, alpha=alpha, delta=delta,
                                     shape=shape)
        v_D, v_Dp = score(F_D[valid_part]), score(F_Dp[valid_part])
        for c in cands:
            k_D = int(np.count_nonzero(v_D >= c.threshold if c.above else v_D <= c.threshold))
            k_Dp = int(np.count_nonzero(v_Dp >= c.threshold if c.above else v_Dp <= c.threshold))
            found.append((name, column, model, c) + ((k_D, k_Dp) if c.favours == "D" else (k_Dp, k_D)))
        return max((c.predicted for c in cands), default=-np.inf)

    # Direct statistics first: every varying feature column.
    direct: dict[int, float] = {}
    lumpy: list[int] = []  # columns with point masses or modes
    for j in varying:
        shape: dict[str, bool] = {}
        direct[j] = consider(names[j], lambda F, j=j: F[:, j], j, None, direct_part, shape)
        if shape.get("ties") or shape.get("modes"):
            lumpy.append(j)
    n_stats = len(varying)
    if three_way:
        for name, stat in _fitted_statistics(F_D[fit_part], F_Dp[fit_part], names, varying, direct, lumpy,
                                             cells=cells, classifier=classifier, max_train=max_train):
            consider(name, stat.scores, None, stat, choose_part)
            n_stats += 1

    best: SelectedEvent | None = None
    per_stat: dict[str, float] = {}
    if found:
        k_fav = np.array([f[4] for f in found], dtype=float)
        k_oth = np.array([f[5] for f in found], dtype=float)
        level = SELECTION_ALPHA / (distinct_events(k_fav, k_oth) * max(1, int(competitors)))
        preds = predicted_bound(k_fav, k_oth, m_valid, n_cert, alpha=alpha, delta=delta, level=level)
        points = _point(k_fav, k_oth)
        for (name, *_), pred in zip(found, preds):
            per_stat[name] = max(per_stat.get(name, -np.inf), float(pred))
        i = max(range(len(found)), key=lambda j: (preds[j], points[j], -j))  # ties: the earlier statistic
        name, column, model, c, kf, ko = found[i]
        best = SelectedEvent(ThresholdEvent(name, c.threshold, c.above, c.favours, column=column, model=model),
                             float(preds[i]), (kf, ko, m_valid), point_estimate=float(points[i]))
    if best is None:
        return no_event(names, n)
    return _with_statement(best, m_valid, n_cert, alpha=alpha, delta=delta, level=level, n_stats=n_stats,
                           per_stat=per_stat)


def _fitted_statistics(T_D: np.ndarray, T_Dp: np.ndarray, names: list[str], varying: list[int],
                       direct: dict[int, float], lumpy: list[int], *, cells: bool, classifier: Any,
                       max_train: int) -> Iterator[tuple[str, Any]]:
    """(name, statistic) for every statistic fitted on the training part T (see the module doc): cells
    of lumpy and promising features, sign counts, cells of repeated releases and of a structured release's
    answers, the classifier and the cells of its score — each to be thresholded on A and validated on B."""
    t = len(T_D)
    if cells:
        # Likelihood-ratio cells where they can beat a threshold: features with point masses or
        # modes, and the most promising ones by their best threshold.
        ranked = sorted(varying, key=lambda j: -direct[j])
        for j in list(dict.fromkeys(lumpy + ranked[:CELL_TOP]))[:CELL_MAX]:
            stat = CellRatioStatistic.fit(j, names[j], T_D[:, j], T_Dp[:, j])
            if stat is not None:
                yield f"cells({names[j]})", stat
        # Sign tests across a vector's positions.
        groups, moving = position_groups(names), set(varying)
        for group, label in (("v", "v[j]"), ("dv", "increments (v[0], dv[j])")):
            columns = [j for j in groups[group] if j in moving]
            for signed, sign_se, tag in SIGN_VARIANTS:
                signs = SignCountStatistic.fit(label, columns, T_D, T_Dp, signed, sign_se)
                if signs is not None:
                    yield f"sign count({group}{tag})", signs
        rows = RowAtomStatistic.fit(T_D, T_Dp) if len(varying) > 1 else None
        if rows is not None:
            yield "repeated releases", rows
        # Where a structured release answers, and what it answers there, jointly (attacks.answers).
        answer_values, answer_status = answer_groups(names)
        if any(j in moving for j in answer_status):
            for which in ("first", "last"):
                answers = AnswerCellStatistic.fit(answer_values, answer_status, which, T_D, T_Dp)
                if answers is not None:
                    yield f"{which} answer", answers
    if classifier is not None and classifier != "none" and len(varying) > 1 and t >= 20:
        from sklearn.base import clone

        model = default_classifier() if classifier == "logistic" else clone(classifier)
        m = min(t, max_train)
        inputs = np.asarray(sorted(varying, key=lambda j: -direct[j])[:CLASSIFIER_INPUTS])
        fitted = ClassifierStatistic.fit(model, T_D[:m], T_Dp[:m], inputs)
        if fitted is not None:
            yield "classifier", fitted
            if cells:  # the classifier's score in likelihood-ratio cells: non-monotone ratios too
                score_cells = ScoreCellStatistic.fit(fitted, "classifier score", T_D[:m], T_Dp[:m])
                if score_cells is not None:
                    yield "cells(classifier)", score_cells


def _with_statement(best: SelectedEvent, m_valid: int, n_cert: int, *, alpha: float, delta: float, level: float,
                    n_stats: int, per_stat: dict[str, float]) -> SelectedEvent:
    """The chosen event with the statement certification makes, its split of α, and its conservative and
    optimistic predictions at the certification size."""
    # The statement certification makes, and the split of α between its two limits: the best for
    # B's frequencies themselves.  The rate ratio (Poisson sample sizes) needs δ = 0.
    k_fav, k_oth, _ = best.selection_counts
    shares = np.asarray(ALPHA_Q_SHARES)
    preds = predicted_bound(k_fav, k_oth, m_valid, n_cert, alpha=alpha, delta=delta, q_share=shares,
                            conservative=False)
    q_share = float(shares[int(np.argmax(preds))]) if np.isfinite(np.max(preds)) else 0.5
    statement = TWO_LIMITS
    if delta == 0.0:
        ratio = predicted_bound(k_fav, k_oth, m_valid, n_cert, alpha=alpha, delta=0.0, conservative=False,
                                statement=RATE_RATIO)
        statement = RATE_RATIO if float(ratio) > float(np.max(preds)) else TWO_LIMITS
    predicted = float(predicted_bound(k_fav, k_oth, m_valid, n_cert, alpha=alpha, delta=delta, q_share=q_share,
                                      level=level, statement=statement))
    optimistic = float(predicted_bound(k_fav, k_oth, m_valid, n_cert, alpha=alpha, delta=delta, q_share=q_share,
                                       level=level, statement=statement, optimistic=True))
    return SelectedEvent(best.event, max(predicted, best.predicted), best.selection_counts, q_share, n_stats,
                         per_stat, best.point_estimate, statement, max(optimistic, predicted, best.predicted))
