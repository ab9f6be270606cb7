"""attacks.metrics: ROC numbers, calibrated advantage, certified ε; thresholds never fitted on scored data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attacks.bounds import epsilon_one_run
from attacks.metrics import (MembershipScores, aggregate, best_threshold, evaluate, rates_at, tpr_at_fpr)
from mechanisms.base import InvalidInputError


def _null(rng: np.random.Generator, n: int) -> MembershipScores:
    return MembershipScores.from_groups(rng.normal(size=n), rng.normal(size=n))


def test_perfect_separation() -> None:
    cal = MembershipScores.from_groups(np.arange(10, 20), np.arange(10))
    scored = MembershipScores.from_groups(np.linspace(10, 20, 100), np.linspace(0, 9.5, 100))
    m = evaluate(scored, calibration=cal, claimed_epsilon=1.0)
    assert m.auc == 1.0 and m.tpr_at_1pct_fpr == 1.0 and m.tpr_at_0_1pct_fpr == 1.0
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
