"""What audited code refuses: its domain (a size threshold) or a leak channel, in both directions.

A correct function that raises on datasets below a size must not be convicted on a pair that straddles
that size; a function whose refusals depend on the values (or on one side of a same-size pair) leaks
through them, and the conclusion says so in words.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.attacks.epsilon.pairs.refusals import Domain, Refusal, classify, domain_checks
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.plugins import FunctionMechanism
from dpaudit.verdicts.estimate_conclusion import conclude

X30 = np.random.default_rng(0).uniform(-1.0, 1.0, size=(30, 2))
BOX = (-1.0, 1.0)


# ---------------------------------------------------------------- classification
def test_a_size_threshold_is_a_domain():
    seen = [Refusal((0, 1), (0,), "raises ValueError"), Refusal((1, 2), ()), Refusal((2, 3), ()),
            Refusal((0, 1), (0,), "raises ValueError")]
    assert classify(seen) == Domain(1, "observed")
    assert classify([Refusal((2, 3), (0,)), Refusal((1, 2), (0, 1)), Refusal((3, 4), ())]) == Domain(3, "observed")


def test_refusals_that_a_size_cannot_explain_are_no_domain():
    # size 1 refused at one place, answered at another: the values decide, not the size
    assert classify([Refusal((1, 2), (0,)), Refusal((1, 2), ()), Refusal((0, 1), ())]) == Domain()
    # a same-size (replace) pair refused on one side only
    assert classify([Refusal((5, 5), (1,)), Refusal((4, 5), ())]) == Domain()
    # refusing only above a size is never a domain
    assert classify([Refusal((10, 11), (1,)), Refusal((2, 3), ())]) == Domain()
    assert classify([Refusal((2, 3), ())]) == Domain()


def test_a_stated_domain_is_taken_as_it_is():
    assert classify([Refusal((0, 1), ())], stated=4) == Domain(4, "stated")
    assert Domain(4, "stated").excludes([3, 4]) and not Domain(4, "stated").excludes([4, 5])
    assert "--min-records" in Domain(4, "stated").describe()
    assert Domain(1, "observed").describe() == "refuses datasets of fewer than 1 record (an empty dataset)"


def test_the_channel_names_the_refused_side():
    r = Refusal((0, 1), (0,), "raises ValueError")
    assert r.channel == "raises ValueError on D (0 records) in every call, releases on D′"
    assert Refusal((3, 3), (1,), "raises KeyError").channel.startswith("raises KeyError on D′ (3 records)")
    assert Refusal((1, 2), ()).channel == "" and Refusal((1, 2), (0, 1)).channel == ""


def test_domain_checks_cover_every_small_size_below_the_threshold_and_the_threshold():
    checks = domain_checks(3, np.array([-1.0, -1.0]), np.array([1.0, 1.0]))
    sizes = sorted({len(c.D) for c in checks} | {len(c.D_prime) for c in checks})
    assert sizes == [0, 1, 2, 3]
    assert {c.name.rsplit("-", 1)[1] for c in checks} == {"centre", "corner"}  # two places per size
    big = domain_checks(12, np.array([0.0]), np.array([1.0]))
    assert sorted({len(c.D) for c in big}) == [0, 1, 2, 3, 11]
    for c in checks:
        np.testing.assert_array_equal(c.D_prime[:-1], c.D)


# ---------------------------------------------------------------- end to end
def _empty_raises(X, epsilon, rng):
    """Correct: a noisy clipped sum and count (L1 sensitivity ≤ 2(d + 1)/2 each), ValueError on no records."""
    X = np.clip(np.asarray(X, dtype=float), -1.0, 1.0)
    if len(X) == 0:
        raise ValueError("empty dataset")
    d = X.shape[1]
    scale = 2.0 * (d + 1) / epsilon
    return np.concatenate([X.sum(axis=0) + rng.laplace(scale=scale, size=d), [len(X) + rng.laplace(scale=scale)]])


def _refuses_a_corner_record(X, epsilon, rng):
    """Leaks: raises when a record sits at the upper corner of the box, whatever the size."""
    X = np.asarray(X, dtype=float)
    if len(X) and np.any(np.all(X >= 0.99, axis=1)):
        raise ValueError("a record at the corner")
    return np.array([len(X) + rng.laplace(scale=1.0 / epsilon)])


def test_a_correct_function_that_refuses_empty_data_is_not_convicted():
    mech = FunctionMechanism(_empty_raises, epsilon=1.0, output="vector")
    # a budget that reaches the generic "0 records vs 1" pair (the search keeps the head of the list)
    res = estimate_epsilon(mech, X30, budget=Budget(releases=200_000), search=SearchSpace(bounds=BOX),
                           run=RunSettings(progress=False), seed=0)
    assert any(c["pair"] == "small0-canary-corner" and c.get("refused") == ["D"] for c in res.candidates)
    assert res.verdict != Verdict.VIOLATION
    assert res.search["domain"]["min_records"] == 1 and res.search["domain"]["source"] == "observed"
    assert "refusal" not in res.event
    empty = [c for c in res.candidates if c["pair"].startswith("small0") or c["pair"].startswith("domain-check-0")]
    assert all(c["status"] == "outside-domain" for c in empty)
    assert not [f for f in res.findings if f["blocking"]]


def test_a_stated_domain_skips_pairs_below_it_without_running_them():
    mech = FunctionMechanism(_empty_raises, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X30, budget=Budget(releases=40_000), search=SearchSpace(bounds=BOX, min_records=3),
                           run=RunSettings(progress=False), seed=0)
    assert res.search["domain"] == {"min_records": 3, "source": "stated",
                                    "text": "datasets of fewer than 3 records are outside the stated domain "
                                            "(--min-records)"}
    skipped = [c for c in res.candidates if c["status"] == "outside-domain"]
    assert skipped and all("stated domain" in c["note"] for c in skipped)
    assert not any(f["kind"] == "refuses-input" for f in res.findings)  # nothing below 3 records was run
    assert res.verdict != Verdict.VIOLATION


def test_refusals_that_depend_on_the_values_are_a_named_leak_channel():
    mech = FunctionMechanism(_refuses_a_corner_record, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X30, budget=Budget(releases=40_000), search=SearchSpace(bounds=BOX),
                           run=RunSettings(progress=False), seed=0)
    assert res.verdict == Verdict.VIOLATION
    assert res.search["domain"]["min_records"] == 0
    assert res.event["refusal"].startswith("raises ValueError on ") and "in every call" in res.event["refusal"]
    assert res.event["text"].startswith("the code's refusal: ")
    text = conclude(res.to_dict())["text"]
    assert text.startswith("VIOLATION through refusals: raises ValueError on "), text


@pytest.mark.parametrize("threshold", [2, 4])
def test_a_refusal_below_a_size_never_decides_at_any_threshold(threshold):
    def refuses_small(X, epsilon, rng):
        if len(X) < threshold:
            raise ValueError(f"need {threshold} records")
        return np.array([len(X) + rng.laplace(scale=1.0 / epsilon)])

    mech = FunctionMechanism(refuses_small, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X30, budget=Budget(releases=40_000), search=SearchSpace(bounds=BOX),
                           run=RunSettings(progress=False), seed=1)
    assert res.search["domain"]["min_records"] == threshold
    assert min(res.pair.get("records_D", threshold), res.pair.get("records_D_prime", threshold)) >= threshold \
        or "refusal" not in res.event
    assert res.verdict != Verdict.VIOLATION and "refusal" not in res.event
