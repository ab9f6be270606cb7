"""The two statements certification can make (dpaudit.attacks.bounds): two Clopper–Pearson limits, or one limit
on the ratio of two Poisson rates (sample sizes drawn from Poisson(n)), and how the estimator chooses and
falls back between them.

Tolerances: the coverage check draws R = 40,000 independent replications of the rate-ratio bound at a
true ratio exactly on the boundary (ln(p/q) = ε); the failure rate must stay below α + 4·√(α(1−α)/R)
(4 standard errors: a false alarm about once in 30,000 runs of this test for a correct bound; the
Clopper–Pearson limit is conservative, so the observed rate sits well below α).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpaudit.attacks.bounds import (
    RATE_RATIO,
    TWO_LIMITS,
    certified_bound,
    epsilon_one_statement,
    epsilon_rate_ratio,
    poisson_sizes,
    statement_ceiling,
)
from dpaudit.attacks.epsilon import Budget, RunSettings, estimate_epsilon
from dpaudit.attacks.epsilon.selection.events import predicted_bound
from dpaudit.mechanisms.plugins import FunctionMechanism
from dpaudit.mechanisms.registry import load_object

X4 = np.array([[0.1, 0.2], [-0.5, 0.3], [0.4, -0.6], [0.9, 0.8]])


def test_rate_ratio_limit_is_the_one_sided_clopper_pearson_limit_of_the_conditional_binomial():
    for a, b, alpha in [(700, 500, 0.05), (12, 0, 0.1), (3, 9, 0.05)]:
        ci = stats.binomtest(a, a + b).proportion_ci(confidence_level=1 - 2 * alpha, method="exact")
        expected = math.log(ci.low / (1 - ci.low)) if ci.low > 0 else -math.inf
        got = float(epsilon_rate_ratio(a, b, alpha=alpha, signed=True))
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert float(epsilon_rate_ratio(a, b, alpha=alpha)) == pytest.approx(max(expected, 0.0), abs=1e-12)
    assert float(epsilon_rate_ratio(0, 40, alpha=0.05)) == 0.0


@pytest.mark.parametrize("rate, eps", [(30.0, 0.5), (400.0, 0.1), (3.0, 2.0)])
def test_rate_ratio_covers_at_level_alpha_on_poisson_counts(rate, eps):
    """On the boundary p = e^ε·q the bound exceeds ε with probability ≤ α (40,000 replications)."""
    rng = np.random.default_rng(7)
    alpha, reps = 0.05, 40_000
    k_p = rng.poisson(rate * math.exp(eps), reps)
    k_q = rng.poisson(rate, reps)
    above = np.mean(epsilon_rate_ratio(k_p, k_q, alpha=alpha) > eps)
    assert above <= alpha + 4 * math.sqrt(alpha * (1 - alpha) / reps)
    # Not vacuous either: Clopper–Pearson's discreteness keeps the rate below α at small counts (0.37α
    # at 22 and 3 expected events here, 0.75α at 49 and 30, 0.95α at 442 and 400), but not by a factor 5.
    assert above > 0.2 * alpha


def test_rate_ratio_beats_two_limits_on_rare_events_and_not_on_common_ones():
    n, alpha = 2_000_000, 0.05
    for p, eps, ratio_wins in [(1 / 32, 0.25, True), (0.02, 0.17, True), (0.85, 0.1, False)]:
        q = p * math.exp(-eps)
        two = max(float(epsilon_one_statement(p * n, n, q * n, n, alpha=alpha, q_share=s))
                  for s in (0.2, 0.5, 0.8))
        ratio = float(epsilon_rate_ratio(p * n, q * n, alpha=alpha))
        assert (ratio > two) == ratio_wins and max(ratio, two) < eps


def test_certified_bound_dispatches_and_guards_delta():
    assert certified_bound(RATE_RATIO, 700, 1000, 500, 1000, alpha=0.05) == pytest.approx(
        float(epsilon_rate_ratio(700, 500, alpha=0.05)))
    assert certified_bound(TWO_LIMITS, 700, 1000, 500, 1000, alpha=0.05, q_share=0.3) == pytest.approx(
        float(epsilon_one_statement(700, 1000, 500, 1000, alpha=0.05, q_share=0.3)))
    assert certified_bound(RATE_RATIO, 5, 0, 0, 10, alpha=0.05) == 0.0
    with pytest.raises(ValueError, match="pure ε"):
        certified_bound(RATE_RATIO, 700, 1000, 500, 1000, alpha=0.05, delta=1e-6)
    with pytest.raises(ValueError, match="unknown statement"):
        certified_bound("three limits", 1, 2, 1, 2, alpha=0.05)
    assert statement_ceiling(RATE_RATIO, 1000, 990, alpha=0.05) > statement_ceiling(TWO_LIMITS, 1000, 990,
                                                                                    alpha=0.05)


def test_poisson_sizes_are_seeded_and_independent():
    a = poisson_sizes(np.random.default_rng(3), 10_000)
    assert a == poisson_sizes(np.random.default_rng(3), 10_000) and a[0] != a[1]
    draws = np.array([poisson_sizes(np.random.default_rng(s), 400) for s in range(400)])
    # mean 400, sd 20 per size; the mean of 400 draws has sd 1: within 4 of 400
    assert abs(draws.mean() - 400) < 4 and abs(np.corrcoef(draws.T)[0, 1]) < 4 / math.sqrt(400)


def test_prediction_of_the_ratio_statement_is_signed_for_ranking():
    weak = predicted_bound(10.0, 60.0, 1000, 10_000, alpha=0.05, delta=0.0, statement=RATE_RATIO)
    assert float(weak) < 0  # a ranking value, not clipped at 0


# ---------------------------------------------------------------- the estimator
def _noiseless_count(X, epsilon, rng):
    return np.array([float(len(X))])


def _noiseless_count_failing(X, epsilon, rng):
    if rng.random() < 0.02:
        raise RuntimeError("one call in fifty fails")
    return np.array([float(len(X))])


def test_estimator_certifies_the_ratio_on_poisson_sizes_when_selection_prefers_it():
    """A claim far above anything 1,000 releases can certify (ε = 100): the verdict is not at stake."""
    res = estimate_epsilon(FunctionMechanism(_noiseless_count, epsilon=100.0, output="vector"), X4,
                           budget=Budget(samples=1_000), run=RunSettings(progress=False), seed=0)
    c = res.counts
    assert c["statement"] == RATE_RATIO and c["requested"] != [1_000, 1_000]
    assert [c["n_favoured"], c["n_other"]] in (c["requested"], c["requested"][::-1])
    assert res.epsilon_lower_bound == pytest.approx(res.ceiling) == pytest.approx(
        float(epsilon_rate_ratio(c["n_favoured"], 0, alpha=0.05)))
    again = estimate_epsilon(FunctionMechanism(_noiseless_count, epsilon=100.0, output="vector"), X4,
                             budget=Budget(samples=1_000), run=RunSettings(progress=False, n_jobs=2), seed=0)
    assert again.counts == c and again.epsilon_lower_bound == res.epsilon_lower_bound


def test_estimator_keeps_two_limits_under_a_delta_claim():
    mech = FunctionMechanism(_noiseless_count, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X4, dataclasses.replace(mech.claim, delta=1e-6), budget=Budget(samples=1_000),
                           run=RunSettings(progress=False), seed=0)
    assert res.counts["statement"] == TWO_LIMITS and res.counts["requested"] == [1_000, 1_000]


def test_failed_releases_are_outputs_outside_the_event_not_drops():
    """A raising call is a release ("failed", flagged): the Poisson sizes stand, the finding blocks a clean verdict."""
    mech = FunctionMechanism(_noiseless_count_failing, epsilon=100.0, output="vector")
    res = estimate_epsilon(mech, X4, budget=Budget(samples=1_000), run=RunSettings(progress=False), seed=0)
    c = res.counts
    assert c["statement"] == RATE_RATIO and c["n_favoured"] + c["n_other"] == sum(c["requested"])
    assert c["favoured_in_event"] < c["n_favoured"] and [f["kind"] for f in res.findings] == ["raises"]


def test_dropped_releases_fall_back_to_two_limits_on_what_was_drawn(monkeypatch):
    """Drops (timeouts, lost workers) thin one side at an unknown rate, which the rate ratio cannot absorb."""
    import dpaudit.attacks.epsilon.sampling.sampling as sampling_module

    real = sampling_module.count_chunk

    def dropping(task, **kw):  # every chunk loses one release (it was in the event if all were)
        hits, drawn, findings, _ = real(task, **kw)  # the per-bin cells are dropped with the release: not counted
        return (hits - (hits == drawn), drawn - 1, findings, None) if drawn else (hits, drawn, findings, None)

    monkeypatch.setattr(sampling_module, "count_chunk", dropping)
    res = estimate_epsilon(FunctionMechanism(_noiseless_count, epsilon=100.0, output="vector"), X4,
                           budget=Budget(samples=1_000), run=RunSettings(progress=False), seed=0)
    c = res.counts
    assert c["statement"] == TWO_LIMITS and c["n_favoured"] + c["n_other"] < sum(c["requested"])
    assert c["requested"] != [1_000, 1_000]  # selection had chosen the ratio: Poisson sizes were drawn
    assert "Poisson(n)" not in res.guarantee and "α_q" in res.guarantee
    assert res.epsilon_lower_bound == pytest.approx(certified_bound(
        TWO_LIMITS, c["favoured_in_event"], c["n_favoured"], c["other_in_event"], c["n_other"], alpha=0.05,
        q_share=c["alpha_q"] / 0.05))


RandomisedResponse = load_object(str(Path(__file__).parent / "plugins" / "references.py") + ":RandomisedResponse")


def test_where_the_verdict_is_at_stake_two_limits_are_certified():
    """A tight, correct mechanism (claim = true ε): selection can rule out neither side of the claim, so the
    statement with the rarer false alarm is certified; the same mechanism under a far larger or a far smaller
    claim gets the tighter rate ratio (selection decides all three: no share of α)."""
    tight = estimate_epsilon(RandomisedResponse(0.5, 0.5), X4, budget=Budget(samples=200_000),
                             run=RunSettings(progress=False), seed=1)
    assert tight.counts["statement"] == TWO_LIMITS and tight.epsilon_lower_bound < 0.5
    loose = estimate_epsilon(RandomisedResponse(0.5, 2.0), X4, budget=Budget(samples=200_000),
                             run=RunSettings(progress=False), seed=1)
    assert loose.counts["statement"] == RATE_RATIO and loose.epsilon_lower_bound > 0.45
    # A clear violation (true 0.5, claim 0.2): not at stake either — the tighter statement, flagged.
    clear = estimate_epsilon(RandomisedResponse(0.5, 0.2), X4, budget=Budget(samples=200_000),
                             run=RunSettings(progress=False), seed=1)
    assert clear.counts["statement"] == RATE_RATIO and clear.verdict == "violation"
