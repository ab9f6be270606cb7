"""Selection for a claim in a notion (attacks/epsilon/selection/curve_selection.py and its use in selection, search).

* the relative gap has the gap's sign, and the trivial events score below every informative one;
* the table the ranking reads f from is close to f, and the certified verdict never reads it;
* on a selection sample of a release whose curve is broken in its middle (report-noisy-max with exponential
  noise under ε²/8-zCDP), the event chosen for the notion lies below the claimed curve where the ε ranking's
  does not, and the estimate flags it from a small budget;
* a claim stated as (ε, δ) is selected exactly as before (no curve tier, ranked by ε).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.attacks.epsilon.estimator import estimate_epsilon
from dpaudit.attacks.epsilon.selection.curve_selection import (
    CURVE_TIER,
    curve_cut,
    curve_table,
    predicted_gap,
    scaled_rank,
)
from dpaudit.attacks.epsilon.selection.selection import select_event
from dpaudit.attacks.epsilon.settings import Budget, RunSettings, SearchSpace
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import PrivacyClaim, Vector
from dpaudit.mechanisms.notions import GaussianDP, ZeroCDP

ALPHA = 0.05


def test_the_table_is_close_to_the_curve() -> None:
    x = np.array([1e-6, 1e-3, 0.05, 0.3, 0.8])
    for notion in (ZeroCDP(0.125), GaussianDP(1.0)):
        assert np.allclose(curve_table(notion, x), notion.tradeoff(x), atol=2e-3)


def test_the_relative_gap_has_the_gaps_sign_and_trivial_events_score_low() -> None:
    notion = GaussianDP(1.0)
    m, n = 20_000, 100_000
    # an event below the μ = 1 curve (μ = 2: FPR 0.16, FNR 0.16), one on it, and the empty event
    below = float(predicted_gap(0.84 * m, 0.16 * m, m, n, notion, alpha=ALPHA))
    fpr = 0.16
    on = float(predicted_gap((1 - float(notion.tradeoff(fpr))) * m, fpr * m, m, n, notion, alpha=ALPHA))
    empty = float(predicted_gap(0, 0, m, n, notion, alpha=ALPHA))
    whole = float(predicted_gap(m, m, m, n, notion, alpha=ALPHA))
    assert below > 0 > on > -1.0 >= max(empty, whole)


def test_a_scaled_pair_ranks_below_every_informative_unscaled_one() -> None:
    for value in (0.5, 0.0, -0.3, -0.99):
        assert scaled_rank(value, 2.0) < -0.99 <= scaled_rank(-0.99, 1.0)
    assert scaled_rank(0.4, 1.0) == 0.4


def _rnm_exponential(n: int, rng: np.random.Generator, raised: bool) -> np.ndarray:
    """Report-noisy-max, exponential noise of scale 1 on two tied counts (one raised by one on D)."""
    counts = np.array([1.0 + raised, 1.0])
    return np.argmax(counts + rng.exponential(1.0, (n, 2)), axis=1).astype(float)[:, None]


def test_the_curve_cut_finds_the_event_below_a_zcdp_claim() -> None:
    rng = np.random.default_rng(1)
    a, b = _rnm_exponential(20_000, rng, True), _rnm_exponential(20_000, rng, False)
    c_D, c_Dp = np.bincount(a[:, 0].astype(int), minlength=2), np.bincount(b[:, 0].astype(int), minlength=2)
    cut = curve_cut(c_D, c_Dp, ZeroCDP(0.125), n_cert=50_000, alpha=ALPHA)
    assert cut is not None and cut.tier == CURVE_TIER and cut.approx > 0


def test_selection_for_a_notion_ranks_by_the_gap_and_an_epsilon_claim_as_before() -> None:
    rng = np.random.default_rng(2)
    F_D, F_Dp = _rnm_exponential(6000, rng, True), _rnm_exponential(6000, rng, False)
    common = dict(n_cert=50_000, alpha=ALPHA, delta=1e-5, classifier=None)
    by_gap = select_event(F_D, F_Dp, ["index"], notion=ZeroCDP(0.125), **common)
    by_eps = select_event(F_D, F_Dp, ["index"], **common)
    assert by_gap.ranked_by == "curve gap" and by_gap.predicted > 0 and by_gap.statement == "two limits"
    assert by_eps.ranked_by == "epsilon"
    again = select_event(F_D, F_Dp, ["index"], notion=None, **common)
    assert (again.predicted, again.q_share, again.selection_counts) == (
        by_eps.predicted, by_eps.q_share, by_eps.selection_counts)


class _NoisyMax:
    name = "rnm-exponential"

    def __init__(self, claim: PrivacyClaim) -> None:
        self.claim = claim

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        counts = np.bincount(np.clip((np.asarray(X)[:, 0] * 2).astype(int), 0, 1), minlength=2).astype(float)
        return Vector(np.array([float(np.argmax(counts + rng.exponential(1.0, 2)))]))


@pytest.mark.parametrize("seed", [0, 1])
def test_report_noisy_max_with_exponential_noise_breaks_its_zcdp_figure(seed: int) -> None:
    claim = PrivacyClaim.stated(ZeroCDP(0.125))  # ε²/8 at ε = 1: the exponential mechanism's figure, not this one's
    res = estimate_epsilon(_NoisyMax(claim), np.array([[0.2], [0.7]]), claim, budget=Budget(releases=40_000),
                           search=SearchSpace(max_pairs=4), run=RunSettings(progress=False), seed=seed)
    assert res.verdict == Verdict.VIOLATION
    assert res.epsilon_lower_bound <= claim.epsilon  # the (ε, δ) point alone is not broken: the curve is
    assert res.to_dict()["curve"]["conclusion"].startswith("VIOLATION of ρ = 0.125 (zCDP)")


class _FixedRates:
    """A certification sampler whose event holds on 60 % of the favoured side's releases and 10 % of the other's."""

    certifying = None

    def retain(self, pairs) -> None:
        pass

    def count(self, side: int, look: int, size: int, deadline) -> tuple[int, int]:
        return (int(round((0.6 if side == 0 else 0.1) * size)), size)


def test_a_curve_violation_stops_the_looks_like_a_bound_above_the_claim() -> None:
    """A claim in a notion: the first look whose own statement lies below the claimed curve ends the run
    (each look holds at its level α_j, all together at α), as a bound above the claim's ε does; without the
    curve check the same counts (whose ε bound is no violation of this point) go on to the last look."""
    from dpaudit.attacks.bounds import TWO_LIMITS
    from dpaudit.attacks.epsilon.certification.certification import certify_in_looks, judge_look
    from dpaudit.mechanisms.base import PrivacyClaim
    from dpaudit.mechanisms.notions import GaussianDP

    claim = PrivacyClaim.stated(GaussianDP(0.2))
    plan = [(500, 0.0125), (2_000, 0.0125), (8_000, 0.025)]
    kwargs = dict(favours="D", statement=TWO_LIMITS, q_share=0.5, delta=claim.delta, claim_raw=None,
                  sizes_rng=np.random.default_rng(0))
    stopped = certify_in_looks(_FixedRates(), plan, **kwargs,
                               curve_violated=lambda look: judge_look(claim, look, 0.5).verdict == "violation")
    assert stopped.stopped == "violation" and len(stopped.looks) == 1
    assert judge_look(claim, stopped.looks[0], 0.5).curve_violated
    whole = certify_in_looks(_FixedRates(), plan, **kwargs)
    assert whole.stopped == "planned" and len(whole.looks) == 3
