"""The estimator's default budget: a time budget, certification in looks with α spent over them,
degenerate worst-case datasets for code that exposes nothing, and refusals that do not block a verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.attacks.epsilon.certification.certification import certify_in_looks, worth_going_on
from dpaudit.attacks.epsilon.pairs.constructions import (
    construction_pairs,
    degenerate_pairs,
    degenerate_sizes,
    release_k,
)
from dpaudit.attacks.epsilon.sampling.budget import (
    DEFAULT_TIME_BUDGET,
    LOOK_ALPHA_SHARES,
    MIN_LOOK,
    look_plan,
    releases_for_time,
)
from dpaudit.attacks.epsilon.selection.candidate import refusal
from dpaudit.estimate.output import budget_line
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import Centroids, Failed, Labels, Vector
from dpaudit.mechanisms.plugins import FunctionMechanism

X30 = np.random.default_rng(0).uniform(-1.0, 1.0, size=(30, 2))


# ---------------------------------------------------------------- the plan
def test_look_levels_sum_to_alpha_and_sizes_grow():
    for n in (1, 50, 199, 200, 1_000, 12_800, 10**6):
        plan = look_plan(n, 0.05)
        assert math.isclose(sum(a for _, a in plan), 0.05)
        sizes = [s for s, _ in plan]
        assert sizes == sorted(set(sizes)) and sizes[-1] == n
        assert all(s >= MIN_LOOK for s in sizes[:-1])
    assert look_plan(10**6, 0.05)[-1][1] == pytest.approx(0.05 * LOOK_ALPHA_SHARES[-1])
    assert look_plan(5_000, 0.1, looks=False) == [(5_000, 0.1)]


def test_time_budget_rounds_down_to_a_coarse_series():
    """Timing jitter of a few per cent rarely changes the plan: totals are R10 levels, at most 20 % low."""
    for rate in (3.0, 250.0, 1_234.0, 20_000.0):
        total = releases_for_time(rate, 60.0)
        assert total <= max(rate * 60.0, 400) and total >= min(0.8 * rate * 60.0, 400)
    assert releases_for_time(20_000.0, 60.0) == releases_for_time(20_500.0, 60.0)
    assert releases_for_time(1e9, 60.0, cap=2_000_000) == 2_000_000


# ---------------------------------------------------------------- looks: α spent over them
class _Counts:
    """A certification sampler with known event probabilities per side."""

    def __init__(self, p: float, q: float, seed: int) -> None:
        self.p, self.q = p, q
        self.rng = np.random.default_rng(seed)
        self.calls: list[tuple[int, int, int]] = []

    def count(self, side, look, size, deadline):
        self.calls.append((side, look, size))
        return int(self.rng.binomial(size, self.p if side == 0 else self.q)), int(size)


def test_looks_stop_at_a_violation_only_where_more_looks_would_add_nothing():
    plan = look_plan(64_000, 0.05)
    # the first look is within 5 % of what the last is expected to certify: it stops there
    assert not worth_going_on(plan, [30_000, 1_500], [60_000, 60_000], 0, 2.9, "two limits", 0.5, 0.0)
    assert worth_going_on(plan, [500, 50], [1_000, 1_000], 0, 1.9, "two limits", 0.5, 0.0)
    cert = certify_in_looks(_Counts(0.5, 0.05, 0), plan, favours="D", statement="two limits", q_share=0.5,
                            delta=0.0, claim_raw=1.0, sizes_rng=np.random.default_rng(0))
    assert cert.looks[0].bound > 1.0 and len(cert.looks) > 1  # a violation at look 1, but more to gain
    assert cert.best.bound == max(look.bound for look in cert.looks) > cert.looks[0].bound
    # a flagrant leak goes on: its bound grows with the sample (ln 10 above, ≈ ln 100 here)
    far = certify_in_looks(_Counts(0.5, 0.005, 0), plan, favours="D", statement="two limits", q_share=0.5,
                           delta=0.0, claim_raw=1.0, sizes_rng=np.random.default_rng(0))
    assert len(far.looks) > 1 and far.best.bound >= far.looks[0].bound
    perfect = certify_in_looks(_Counts(1.0, 0.0, 0), plan, favours="D", statement="two limits", q_share=0.5,
                               delta=0.0, claim_raw=1.0, sizes_rng=np.random.default_rng(0))
    assert len(perfect.looks) >= 3  # goes on until the last look would add less than a quarter
    cert = certify_in_looks(_Counts(0.3, 0.2, 1), plan, favours="D", statement="two limits", q_share=0.5,
                            delta=0.0, claim_raw=1.0, sizes_rng=np.random.default_rng(0))
    assert cert.stopped == "planned" and len(cert.looks) == len(plan)
    assert cert.best.bound == max(look.bound for look in cert.looks)
    assert [look.requested[0] for look in cert.looks] == [n for n, _ in plan]  # cumulative, as planned


def test_rate_ratio_looks_draw_poisson_increments():
    plan = look_plan(64_000, 0.05)
    sampler = _Counts(0.3, 0.2, 2)
    cert = certify_in_looks(sampler, plan, favours="D", statement="rate ratio", q_share=0.5, delta=0.0,
                            claim_raw=None, sizes_rng=np.random.default_rng(3))
    sizes = [look.requested for look in cert.looks]
    assert all(a != b for a, b in sizes)  # two independent Poisson draws per look
    assert all(look.statement == "rate ratio" for look in cert.looks)


def test_optional_stopping_keeps_the_level():
    """A tight event (p/q = e^ε exactly): the share of runs whose reported bound exceeds ε, stopping at the
    first look above it, stays within α (here 2,000 runs at α = 0.1: the binomial 99.9 % limit)."""
    from scipy import stats

    eps, alpha = 1.0, 0.1
    q = 0.05
    p = q * math.e
    plan = look_plan(20_000, alpha)
    over = 0
    for seed in range(2_000):
        cert = certify_in_looks(_Counts(p, q, seed), plan, favours="D", statement="two limits", q_share=0.5,
                                delta=0.0, claim_raw=eps, sizes_rng=np.random.default_rng(seed))
        over += cert.best.bound > eps
    assert over <= stats.binom.ppf(0.999, 2_000, alpha)


# ---------------------------------------------------------------- degenerate datasets
@pytest.mark.parametrize("relation", ["add-remove", "replace"])
@pytest.mark.parametrize("kind", ["centroids", "vector", "labels"])
def test_degenerate_pairs_are_neighbours_in_the_box(relation, kind):
    box = (np.array([-2.0, 0.0]), np.array([2.0, 5.0]))
    pairs = construction_pairs(None, 2, kind, relation, bounds=box, k=3)
    assert pairs
    for pair in pairs:
        inside = (pair.D, pair.D_prime) if pair.family != "outlier" else (pair.D, pair.D_prime[:-1])
        for data in inside:
            assert np.all(data >= box[0]) and np.all(data <= box[1])
        if pair.family == "outlier":  # the lone far record, beyond the far corner
            assert np.all(pair.D_prime[-1 if relation == "add-remove" else pair.index] > box[1])
        if relation == "add-remove":
            assert len(pair.D_prime) == len(pair.D) + 1
            np.testing.assert_array_equal(pair.D_prime[:-1], pair.D)
        else:
            assert len(pair.D) == len(pair.D_prime)
            assert int(np.sum(np.any(pair.D != pair.D_prime, axis=1))) == 1


def test_degenerate_families_cover_sizes_around_k():
    assert degenerate_sizes(4) == [4, 10, 3, 5, 8, 0, 1, 2]
    assert degenerate_sizes(4, n_records=30) == [4, 10, 3, 5, 8, 0, 1, 2, 30]  # noise shrinking with n: most at n
    assert degenerate_sizes(2, n_records=10) == [2, 10, 1, 3, 4, 0]  # 0: the canary alone in D′
    names = [p.name for p in degenerate_pairs((0.0, 1.0), 2, 2)]
    assert "point-lo-10-far" in names and "point-mid-2-far" in names and "two-points-2-mid" in names
    assert "point-lo-2-side" in names and "point-lo-0-far" in names
    # In one dimension the opposite side is the far corner, and an empty D is the same at the corner and the
    # centre: each such pair is built once.
    names_1d = [p.name for p in degenerate_pairs((0.0, 1.0), 1, 2)]
    assert "point-lo-2-side" not in names_1d and "point-mid-0-far" not in names_1d and len(set(names_1d)) == len(names_1d)
    one = next(p for p in degenerate_pairs((0.0, 1.0), 1, 2) if p.name == "point-lo-10-far")
    np.testing.assert_array_equal(one.D, np.zeros((10, 1)))  # exact copies: no jitter
    np.testing.assert_array_equal(one.new, [1.0])


def test_k_is_read_off_the_release():
    assert release_k(Centroids(np.zeros((3, 2)))) == 3
    assert release_k(Labels(np.array([0, 0, 1, -1, 2]))) == 3
    assert release_k(Vector(np.zeros(4))) is None


def test_no_box_means_no_box_constructions():
    assert construction_pairs(None, 2, "centroids", "add-remove") == []
    assert construction_pairs(None, 2, "centroids", "metric", bounds=(-1.0, 1.0)) == []


# ---------------------------------------------------------------- refusals
def test_a_refusal_of_a_record_beyond_the_box_is_a_domain_check():
    ok = [Vector(np.zeros(1))] * 3
    bad = [Failed("raises", "ValueError: data outside [-1, 1] (at fn.py:3)")] * 3
    sides, note = refusal(ok, bad, beyond_box=True)
    assert sides == (0, 1) and "domain" in note
    assert refusal(bad, ok, beyond_box=True)[0] == (0,)  # D (no far record) refused: output as usual


def test_refusal_on_both_sides_is_outside_the_domain_and_on_one_side_is_output():
    ok = [Vector(np.zeros(1))] * 3
    bad = [Failed("raises", "ValueError: n_samples=1 should be >= n_clusters=2 (at k_means.py:1)")] * 3
    worse = [Failed("raises", "ValueError: Found array with 0 sample(s) (at validation.py:1)")] * 3
    sides, note = refusal(bad, worse)
    assert sides == (0, 1) and "outside" in note and "ValueError" in note
    sides, note = refusal(bad, ok)
    assert sides == (0,) and "observable output" in note
    assert refusal(ok, ok) == ((), "")
    assert refusal(ok, [ok[0], bad[0]])[0] == ()  # one failure among answers is not a refusal


def _refuses_few(X, epsilon, rng):
    """A correct noisy count that refuses datasets of fewer than 3 records (both sides when both are small)."""
    if len(X) < 3:
        raise ValueError(f"need at least 3 records, got {len(X)}")
    return np.array([len(X) + rng.laplace(scale=1.0 / epsilon)])


def test_refusals_do_not_make_a_correct_function_inconclusive():
    mech = FunctionMechanism(_refuses_few, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X30, budget=Budget(releases=60_000), search=SearchSpace(bounds=(-1.0, 1.0)),
                           run=RunSettings(progress=False), seed=0)
    assert not [f for f in res.findings if f["blocking"]], res.findings
    assert any(f["kind"] == "refuses-input" for f in res.findings)
    outside = [c for c in res.candidates if c["status"] == "outside-domain"]
    assert outside and all("refused on both sides" in c["note"] or "fewer than 3 records" in c["note"]
                           for c in outside)
    assert res.search["domain"] == {"min_records": 3, "source": "observed",
                                    "text": "refuses datasets of fewer than 3 records"}
    assert res.verdict != Verdict.VIOLATION and "refusal" not in res.event


def _raises_on_tiny(X, epsilon, rng):
    """Leaks by refusing: raises on exactly one record, answers (with correct noise) otherwise."""
    if len(X) == 1:
        raise ValueError("one record is not enough")
    return np.array([len(X) + rng.laplace(scale=1.0 / epsilon)])


def test_a_refusal_on_one_side_is_observable_output():
    mech = FunctionMechanism(_raises_on_tiny, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X30, budget=Budget(releases=40_000), search=SearchSpace(bounds=(-1.0, 1.0)),
                           run=RunSettings(progress=False), seed=0)
    assert res.verdict == Verdict.VIOLATION
    refused = [c for c in res.candidates if c.get("refused") and c["status"] != "outside-domain"]
    assert refused and "observable output" in refused[0]["note"]


# ---------------------------------------------------------------- the time budget
def _clipped_sum_noise_for_one(X, epsilon, rng):
    """A sum clipped to ±2 per coordinate with Laplace noise for sensitivity 1: true ε is 4× the claim (d = 2)."""
    s = np.clip(np.asarray(X, float), -2.0, 2.0).sum(axis=0)
    return s + rng.laplace(scale=1.0 / epsilon, size=s.shape)


def test_default_is_a_time_budget_that_stops_at_a_violation(monkeypatch):
    assert DEFAULT_TIME_BUDGET == 60.0
    # The deadlines guard against code that turns slower than it was timed (next test); on a loaded test
    # machine they could fire here too, and this test is about the recorded total, so they are put far off.
    monkeypatch.setattr("dpaudit.attacks.epsilon.sampling.budget.DEADLINE_FACTOR", 1e3)
    # Likewise the certification is sized by the plan's share, not by the time a loaded machine left over.
    monkeypatch.setattr("dpaudit.attacks.epsilon.sampling.budget.Plan.certification_for",
                        lambda self, rate, used, share=1.0: max(1, int(share * (self.total - int(used))) // 2))
    mech = FunctionMechanism(_clipped_sum_noise_for_one, epsilon=0.1, output="vector")
    res = estimate_epsilon(mech, X30, budget=Budget(time_budget=8.0), search=SearchSpace(bounds=(-3.0, 3.0)),
                           run=RunSettings(progress=False), seed=0)
    plan = res.search["plan"]
    assert plan["source"] == "time" and plan["time_budget_seconds"] == 8.0 and plan["releases_per_second"] > 0
    assert res.verdict == Verdict.VIOLATION and res.epsilon_lower_bound > 0.1
    assert res.search["stopped"] in ("violation", "planned") and res.search["search_cut_at_deadline"] is False
    # The recorded total reproduces the numbers without a clock — where the plan was not remade on the way
    # (the output says which; the re-plans themselves are tested in test_epsilon_replan.py).
    if plan.get("replanned"):
        assert "not its rounds" in budget_line(res.to_dict())
        return
    again = estimate_epsilon(mech, X30, budget=Budget(releases=plan["releases"]),
                             search=SearchSpace(bounds=(-3.0, 3.0)), run=RunSettings(progress=False), seed=0)
    assert again.epsilon_lower_bound == res.epsilon_lower_bound and again.counts == res.counts


def _count(X, epsilon, rng):
    return np.array([len(X) + rng.laplace(scale=1.0 / epsilon)])


def test_a_search_cut_by_its_deadline_is_recorded(monkeypatch):
    """Code timed far faster than it runs (as if it slowed down once timed): the plan does not fit, the
    selection deadline cuts the search, and the result says so (its recorded total would not reproduce it)."""
    monkeypatch.setattr("dpaudit.attacks.epsilon.estimator.measure_rate", lambda *args, **kwargs: 1e6)
    mech = FunctionMechanism(_count, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X30, budget=Budget(time_budget=2.0), search=SearchSpace(bounds=(-1.0, 1.0)),
                           run=RunSettings(progress=False), seed=0)
    assert res.search["plan"]["source"] == "time" and res.search["plan"]["releases_per_second"] == 1e6
    assert res.search["search_cut_at_deadline"] is True


def test_a_correct_function_spends_its_looks_and_is_not_flagged():
    def honest_sum(X, epsilon, rng):
        s = np.clip(np.asarray(X, float), -1.0, 1.0).sum(axis=0)
        return s + rng.laplace(scale=2.0 / epsilon, size=s.shape)  # L1 sensitivity 2 in two dimensions

    res = estimate_epsilon(FunctionMechanism(honest_sum, epsilon=0.5, output="vector"), X30,
                           budget=Budget(releases=200_000), search=SearchSpace(bounds=(-1.0, 1.0)),
                           run=RunSettings(progress=False), seed=1)
    assert res.verdict == Verdict.NO_VIOLATION and 0.2 < res.epsilon_lower_bound <= 0.5
    looks = res.counts["looks"]
    assert looks["stopped"] == "planned" and looks["completed"] == looks["planned"] > 1
