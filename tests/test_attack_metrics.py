"""dpaudit.attacks.membership.metrics: ROC numbers, calibrated advantage, certified ε; thresholds never fitted on scored data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.attacks.bounds import epsilon_one_run
from dpaudit.attacks.membership.metrics import (
    MembershipScores,
    aggregate,
    best_threshold,
    evaluate,
    rates_at,
    tpr_at_fpr,
)
from dpaudit.mechanisms.base import InvalidInputError


def _null(rng: np.random.Generator, n: int) -> MembershipScores:
    return MembershipScores.from_groups(rng.normal(size=n), rng.normal(size=n))


def test_perfect_separation() -> None:
    cal = MembershipScores.from_groups(np.arange(10, 20), np.arange(10))
    scored = MembershipScores.from_groups(np.linspace(10, 20, 100), np.linspace(0, 9.5, 100))
    m = evaluate(scored, calibration=cal, claimed_epsilon=1.0)
    assert m.auc == 1.0 and m.tpr_at_1pct_fpr == 1.0 and m.tpr_at_1pct_fpr_reason is None
    # 100 non-members cannot resolve 0.1 % FPR: no number, and the reason says what it needs.
    assert m.tpr_at_0_1pct_fpr is None
    assert m.tpr_at_0_1pct_fpr_reason == "n/a (needs ≥ 1,000 non-members, has 100)"
    assert m.advantage == 1.0 and m.tp == 100 and m.fp == 0
    # 200 of 200 guesses right: logit of the one-sided Clopper–Pearson limit 0.05^(1/200).
    assert m.correct == 200 and m.guesses == 200
    p_lo = 0.05 ** (1 / 200)
    assert m.epsilon_lower_bound == pytest.approx(math.log(p_lo / (1 - p_lo)))
    assert m.advantage_ceiling == pytest.approx((math.e - 1) / (math.e + 1))


def test_same_data_calibration_refused() -> None:
    data = _null(np.random.default_rng(0), 50)
    with pytest.raises(InvalidInputError, match="scored data"):
        evaluate(data, calibration=data)
    view = MembershipScores(data.scores[:], data.membership)  # MembershipScores keeps the buffer
    with pytest.raises(InvalidInputError, match="scored data"):
        evaluate(data, calibration=view)
    with pytest.raises(InvalidInputError):
        evaluate(data)  # neither calibration nor threshold


def test_threshold_depends_only_on_calibration() -> None:
    rng = np.random.default_rng(1)
    cal = _null(rng, 200)
    a = evaluate(_null(rng, 300), calibration=cal)
    b = evaluate(_null(rng, 300), calibration=cal)
    assert a.threshold == b.threshold == best_threshold(cal)


def test_calibrated_advantage_is_not_the_optimistic_one() -> None:
    """No signal: the same-data maximum is biased up, the calibrated advantage is not.

    With 500 + 500 null scores, TPR − FPR at a fixed threshold has sd ≤ √(2·0.25/500) ≈ 0.032,
    so |advantage| < 0.13 (4 sd) always; max_t over the scored data is ≈ 0.05–0.09 > 0.
    """
    rng = np.random.default_rng(2)
    advs, same = [], []
    for _ in range(20):
        m = evaluate(_null(rng, 500), calibration=_null(rng, 500))
        advs.append(m.advantage)
        same.append(m.advantage_same_data)
    assert abs(np.mean(advs)) < 4 * 0.032 / np.sqrt(20)  # mean of 20: sd ≤ 0.032/√20 ≈ 0.007, allow 4 sd ≈ 0.03
    assert np.mean(same) > np.mean(advs) + 0.03
    assert min(same) > 0


def test_rates_and_tpr_at_fpr() -> None:
    d = MembershipScores.from_groups([3, 2, 1], [2.5, 0, -1])
    assert rates_at(d, 2.0) == (2, 3, 1, 3)
    fpr = np.array([0.0, 0.0, 0.005, 0.02, 1.0])
    tpr = np.array([0.0, 0.1, 0.3, 0.5, 1.0])
    assert tpr_at_fpr(fpr, tpr, 0.01) == 0.3 and tpr_at_fpr(fpr, tpr, 0.001) == 0.1


def test_aggregate_pools_counts() -> None:
    rng = np.random.default_rng(3)
    runs = [evaluate(_null(rng, 100), threshold=0.0, claimed_epsilon=2.0) for _ in range(3)]
    agg = aggregate(runs)
    tp, fp = sum(r.tp for r in runs), sum(r.fp for r in runs)
    correct = tp + 300 - fp
    assert agg["counts"] == {"tp": tp, "n_members": 300, "fp": fp, "n_non_members": 300,
                             "correct": correct, "guesses": 600, "candidates": 600}
    assert agg["epsilon_lower_bound"] == epsilon_one_run(correct, 600, alpha=0.05)
    assert agg["epsilon_lower_bound_per_repeat"] == [r.epsilon_lower_bound for r in runs]
    assert "Steinke" in agg["epsilon_lower_bound_method"]
    assert agg["advantage"] == pytest.approx(np.mean([r.advantage for r in runs]))


def test_bad_scores_rejected() -> None:
    with pytest.raises(InvalidInputError):
        MembershipScores([0.1, float("nan")], [1, 0])
    with pytest.raises(InvalidInputError):
        MembershipScores([0.1, 0.2], [1, 1])
    with pytest.raises(InvalidInputError):
        MembershipScores([0.1, 0.2], [1, 2])


# ---- honest ROC: cut at 1/n_non-members, the n/a rule, bands -------------------------------
def test_roc_counts_match_sklearn_and_are_cut_at_one_over_n() -> None:
    from sklearn.metrics import roc_curve

    from dpaudit.attacks.membership.roc import ROC_FPR_GRID, roc_counts
    rng = np.random.default_rng(5)
    data = MembershipScores.from_groups(rng.normal(0.5, 1, 700), np.round(rng.normal(0, 1, 1300), 1))  # ties
    curve = roc_counts(data.scores, data.membership)
    assert curve.fpr_grid == tuple(f for f in ROC_FPR_GRID if f >= 1 / 1300)  # nothing below 1/n, all above
    fpr, tpr, _ = roc_curve(data.membership, data.scores, drop_intermediate=False)
    for f, tp, fp in zip(curve.fpr_grid, curve.tp, curve.fp):
        assert tp / 700 == tpr_at_fpr(fpr, tpr, f) and fp <= f * 1300 + 1e-9
    assert curve.tp[-1] == 700 and curve.fp[-1] == 1300


def test_tpr_at_low_fpr_needs_one_over_fpr_non_members() -> None:
    """TPR at FPR f is a number only with ≥ ⌈1/f⌉ non-members (one false positive possible)."""
    from dpaudit.attacks.membership.roc import non_members_needed
    assert non_members_needed(0.01) == 100 and non_members_needed(0.001) == 1000
    rng = np.random.default_rng(6)
    for n_neg, resolved in ((99, False), (100, True)):
        m = evaluate(MembershipScores.from_groups(rng.normal(1, 1, 200), rng.normal(0, 1, n_neg)), threshold=0.5)
        assert (m.tpr_at_1pct_fpr is not None) == resolved
        assert m.tpr_at_1pct_fpr_reason == (None if resolved else "n/a (needs ≥ 100 non-members, has 99)")
        assert m.tpr_at_0_1pct_fpr is None and m.roc is not None and min(m.roc.fpr_grid) >= 1 / n_neg


def test_roc_bands_are_clopper_pearson() -> None:
    from scipy.stats import binomtest
    rng = np.random.default_rng(7)
    m = evaluate(MembershipScores.from_groups(rng.normal(1, 1, 300), rng.normal(0, 1, 400)), threshold=0.5)
    d = m.to_dict()["roc"]
    assert d["confidence"] == 0.95 and d["fpr"][0] >= 1 / 400
    for i in (0, len(d["fpr"]) // 2, len(d["fpr"]) - 1):
        tp, fp = m.roc.tp[i], m.roc.fp[i]
        ci_t = binomtest(tp, 300).proportion_ci(0.95, method="exact")
        ci_f = binomtest(fp, 400).proportion_ci(0.95, method="exact")
        assert d["tpr"][i] == tp / 300 and d["fpr_observed"][i] == fp / 400
        assert d["tpr_low"][i] == pytest.approx(ci_t.low, abs=1e-12)
        assert d["tpr_high"][i] == pytest.approx(ci_t.high, abs=1e-12)
        assert d["fpr_low"][i] == pytest.approx(ci_f.low, abs=1e-12)
        assert d["fpr_high"][i] == pytest.approx(ci_f.high, abs=1e-12)


def test_aggregate_averages_low_fpr_only_where_every_repeat_resolves() -> None:
    rng = np.random.default_rng(8)
    small = evaluate(MembershipScores.from_groups(rng.normal(1, 1, 150), rng.normal(0, 1, 150)), threshold=0.5)
    large = evaluate(MembershipScores.from_groups(rng.normal(1, 1, 1500), rng.normal(0, 1, 1500)), threshold=0.5)
    assert large.tpr_at_0_1pct_fpr is not None and small.tpr_at_0_1pct_fpr is None
    agg = aggregate([small, large])
    assert agg["tpr_at_1pct_fpr"] == pytest.approx((small.tpr_at_1pct_fpr + large.tpr_at_1pct_fpr) / 2)
    assert agg["tpr_at_0_1pct_fpr"] is None and agg["tpr_at_0_1pct_fpr_std"] is None
    assert agg["tpr_at_0_1pct_fpr_reason"] == "n/a (needs ≥ 1,000 non-members in every repeat, the fewest had 150)"
    roc = agg["roc"]
    assert roc["fpr"] == [f for f in small.roc.fpr_grid]  # the grid both resolve
    i = roc["fpr"].index(0.01)
    j = large.roc.fpr_grid.index(0.01)
    pooled = (small.roc.tp[i] + large.roc.tp[j]) / 1650
    assert roc["tpr"][i] == pytest.approx(pooled) and roc["tpr_low"][i] <= pooled <= roc["tpr_high"][i]


# ---- score histograms and the per-record risk table --------------------------------------
def test_score_histograms_fixed_bins_and_pooled() -> None:
    from dpaudit.attacks.membership.exposure import PROBABILITY_BINS, histogram_edges
    rng = np.random.default_rng(9)
    runs = [evaluate(MembershipScores.from_groups(rng.beta(3, 2, 120), rng.beta(2, 3, 80)), threshold=0.5)
            for _ in range(2)]
    for r in runs:
        h = r.histogram
        assert h.edges == PROBABILITY_BINS and sum(h.members) == 120 and sum(h.non_members) == 80
    pooled = aggregate(runs)["score_histogram"]
    assert list(pooled["members"]) == [a + b for a, b in zip(runs[0].histogram.members, runs[1].histogram.members)]
    # Minus a distance: bins [−L, 0] with L rounded out; values beyond counted apart, not folded in.
    assert histogram_edges(np.array([-0.3, -1.7, 0.0]))[0] == -2.0
    m = evaluate(MembershipScores.from_groups([-0.1, -0.5], [-3.0, -1.0]), threshold=-0.6, score_bins=(-2, -1, 0))
    assert m.histogram.members == (0, 2) and m.histogram.non_members == (0, 1)  # bins [a, b), last [a, b]
    assert m.histogram.non_members_outside == (1, 0)
    other = evaluate(MembershipScores.from_groups([-0.1, -0.5], [-3.0, -1.0]), threshold=-0.6)
    agg = aggregate([m, other])  # different bins: kept per repeat, not summed
    assert "score_histogram" not in agg and len(agg["score_histogram_per_repeat"]) == 2


def test_most_exposed_members_by_index_only() -> None:
    scores = np.array([0.9, 0.2, 0.95, 0.7, 0.1, 0.8, 0.95])
    truth = np.array([1, 0, 1, 0, 1, 1, 0])
    m = evaluate(MembershipScores(scores, truth), threshold=0.5, exposed_top=3)
    rows = [dict(vars(e)) for e in m.most_exposed]
    # An index, a rank, the FPR that flags it and the attack's score (e.g. LiRA's likelihood ratio): no values.
    assert all(set(r) == {"index", "rank", "non_members_at_or_above", "fpr", "score"} for r in rows)
    assert [r["score"] for r in rows] == [0.95, 0.9, 0.8]
    # Members by score: #2 (0.95, tied with non-member #6), #0 (0.9), #5 (0.8).
    assert [r["index"] for r in rows] == [2, 0, 5]
    assert [r["rank"] for r in rows] == [1, 3, 4]
    assert [r["non_members_at_or_above"] for r in rows] == [1, 1, 1]
    assert rows[0]["fpr"] == pytest.approx(1 / 3)
    ids = np.array([70, 71, 72, 73, 74, 75, 76])
    with_ids = evaluate(MembershipScores(scores, truth, record_ids=ids), threshold=0.5, exposed_top=3)
    assert [e.index for e in with_ids.most_exposed] == [72, 70, 75]
    agg = aggregate([m, with_ids])
    assert len(agg["most_exposed"]) == 3 and {r["repeat"] for r in agg["most_exposed"]} <= {0, 1}
    with pytest.raises(InvalidInputError, match="record id"):
        MembershipScores(scores, truth, record_ids=np.arange(3))
