"""The ε estimator as a pipeline of swappable stages (dpaudit.attacks.epsilon): each stage on its own, with stubs.

Stage 1 (a pair source) is swapped through ``estimate_epsilon(pairs=...)``; stage 2's round plan and its
early stop are plain functions of the plan; stage 4 is run on a stub sampler whose counts are fixed, so
its bound must be exactly the Clopper–Pearson statement on those counts.  Fixed seeds throughout.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.attacks.bounds import TWO_LIMITS, certified_bound
from dpaudit.attacks.epsilon import Budget, SearchSpace, estimate_epsilon
from dpaudit.attacks.epsilon.certification.certification import Certifier
from dpaudit.attacks.epsilon.pairs.neighbours import NeighbourPair
from dpaudit.attacks.epsilon.pairs.pairs import FIRST_TRIES, GivenPairs, WorstCasePairs
from dpaudit.attacks.epsilon.sampling.budget import Plan, look_plan
from dpaudit.attacks.epsilon.search.search import PairSearch
from dpaudit.attacks.epsilon.selection.candidate import Candidate
from dpaudit.attacks.epsilon.selection.events import ThresholdEvent
from dpaudit.attacks.epsilon.selection.selection import SelectedEvent
from dpaudit.mechanisms.base import PrivacyClaim

X4 = np.array([[0.1, 0.2], [-0.5, 0.3], [0.4, -0.6], [0.9, 0.8]])
CLAIM = PrivacyClaim(1.0, 0.0, "add-remove")


class OnePair:
    """A stub pair source: one fixed pair, no model-based search; records the probe it was shown."""

    searchable = False

    def __init__(self, pair: NeighbourPair) -> None:
        self.pair, self.seen = pair, []

    def __call__(self, mechanism, X, probe):
        self.seen.append(probe.kind)
        return [self.pair]


def test_a_pair_source_of_ones_own_replaces_stage_one():
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    D = np.array([[0.0], [0.0]])
    pair = NeighbourPair("mine", D, np.vstack([D, [[1.0]]]), "add-remove", 2, np.array([1.0]), None)
    source = OnePair(pair)
    res = estimate_epsilon(mech, D, budget=Budget(samples=4_000), search=SearchSpace(pairs=source), seed=0)
    assert source.seen == ["vector"] and res.pair["name"] == "mine"
    assert res.search["candidates_built"] == 1 and res.search["model_search_trials"] == 0
    assert 0.0 < res.epsilon_lower_bound <= 1.0


def test_the_default_pair_source_puts_first_tries_first_then_alternates():
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    probe = mech.release(X4, np.random.default_rng(0))
    pairs = WorstCasePairs(CLAIM, (-1.0, 1.0), 1.0, np.random.SeedSequence(3))(mech, X4, probe)
    head = pairs[:FIRST_TRIES]
    assert all(p.family in ("degenerate", "outlier", "construction") for p in head)
    assert head[0].name == "point-lo-10-far"
    families = [p.family for p in pairs[FIRST_TRIES:]]
    assert len(families) > 4 and families[0] != families[1]  # then a construction, a generic pair, …
    assert WorstCasePairs(CLAIM, None, 1.0, np.random.SeedSequence(3)).searchable
    assert not WorstCasePairs(CLAIM, None, 1.0, np.random.SeedSequence(3), max_pairs=2).searchable
    assert GivenPairs(tuple(pairs[:2]))(mech, X4, probe) == pairs[:2] and not GivenPairs(()).searchable


def test_the_first_tries_include_every_record_at_one_point_at_the_audited_size():
    """Noise that shrinks with n (a "sensitivity of the mean" of Δ/n) leaks most on the largest dataset: the
    head of the list holds the audited data's size, every record at one corner and the canary at the far one."""
    X = np.random.default_rng(0).uniform(-1.0, 1.0, size=(30, X4.shape[1]))
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    probe = mech.release(X, np.random.default_rng(0))
    head = WorstCasePairs(CLAIM, (-1.0, 1.0), 1.0, np.random.SeedSequence(3))(mech, X, probe)[:FIRST_TRIES]
    big = next(p for p in head if p.name == "point-lo-30-far")
    assert len(big.D) == 30 and len(big.D_prime) == 31 and np.all(big.D == big.D[0])


def _plan(selection: int, certification: int, looks: int = 1) -> Plan:
    return Plan(selection + 2 * certification, selection, certification,
                look_plan(certification, 0.05, looks=looks > 1), "releases")


def test_the_search_plans_rounds_that_spend_its_budget():
    search = PairSearch(_plan(120_000, 50_000), CLAIM, 0.05, True, (np.zeros(1), np.ones(1)), 1.0,
                        np.random.SeedSequence(0), model_based=False)
    keep, sizes, trials = search.rounds(9)
    assert trials == 0 and keep == 9 and sizes == [sizes[0] * 3 ** r for r in range(len(sizes))]
    survivors = [9, 3, 1]
    assert sum(2 * s * n for s, n in zip(sizes, survivors)) <= 120_000


def test_the_search_stops_early_only_on_a_leader_past_the_claim():
    search = PairSearch(_plan(10_000, 100_000, looks=4), CLAIM, 0.05, True, (np.zeros(1), np.ones(1)), 1.0,
                        np.random.SeedSequence(0))
    D = np.zeros((1, 1))
    leader = Candidate(0, NeighbourPair("p", D, np.vstack([D, D]), "add-remove", 1, np.zeros(1), None))
    event = ThresholdEvent("v[0]", 0.0, True, "D", column=0)
    leader.selected = SelectedEvent(event, 0.0, (5_000, 50, 5_000))   # separates: ln(100) ≫ 1
    assert search.enough(leader)
    leader.selected = SelectedEvent(event, 0.0, (5_000, 4_000, 10_000))  # ratio 1.25: ε ≈ 0.22
    assert not search.enough(leader)
    # Perfect on 300 releases: past the claim, but it only bounds the other side's rate by ~1/100 — another
    # round would sharpen the last look's prediction by far more than 5 %, so the search goes on (a rival that
    # is perfect on ten times the sample certifies more).
    leader.selected = SelectedEvent(event, 0.0, (300, 0, 300))
    assert not search.enough(leader)
    leader.refused = (1,)
    leader.selected = SelectedEvent(event, 0.0, (5_000, 50, 5_000))
    assert not search.enough(leader)  # a refusal is not evidence about what the code releases


class FixedCounts:
    """A stub certification sampler: every look's releases hit the event at fixed rates."""

    def __init__(self, rates: tuple[float, float]) -> None:
        self.rates, self.certifying, self.kept = rates, None, []

    def retain(self, pairs):
        self.kept = list(pairs)

    def count(self, side, look, size, deadline):
        return int(round(self.rates[side] * size)), size


def test_the_certifier_states_the_two_limit_bound_on_its_counts():
    D = np.zeros((1, 1))
    winner = Candidate(0, NeighbourPair("p", D, np.vstack([D, D]), "add-remove", 1, np.zeros(1), None))
    event = ThresholdEvent("v[0]", 0.0, True, "D", column=0)
    winner.selected = SelectedEvent(event, 0.5, (300, 100, 1_000), q_share=0.5, statement=TWO_LIMITS)
    sampler = FixedCounts((0.3, 0.1))
    cert = Certifier(0.05, CLAIM, False, np.random.SeedSequence(0))(sampler, winner, 10_000)
    assert sampler.kept == [winner.pair] and sampler.certifying[2] is event
    best = cert.best
    assert best is not None and best.hits == (3_000, 1_000) and best.statement == TWO_LIMITS
    assert best.bound == pytest.approx(certified_bound(TWO_LIMITS, 3_000, 10_000, 1_000, 10_000, alpha=0.05,
                                                       q_share=0.5))
