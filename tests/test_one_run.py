"""One-run ε lower bound (Steinke, Nasr & Jagielski 2023) and the fair-coin attack experiment."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.attack.config import AttackConfig
from dpaudit.attack.repeat import draw_split, prepare_trial, run_repeat
from dpaudit.attack.run import run_attack
from dpaudit.attacks.bounds import epsilon_one_run, one_run_p_value
from dpaudit.attacks.membership.metrics import one_run_comparison
from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions


def _kmeans_yeom() -> AttackConfig:
    """Yeom on non-private k-means with k = 20 on 400 records, two repeats."""
    return AttackConfig(target=TargetOptions(mechanism="kmeans", params={"n_clusters": 20}),
                        claim=ClaimOptions(epsilon=1.0), data=DataOptions(records=400),
                        attack=AttackOptions(attacks=("yeom",), repeats=2), seed=1)


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


# ---- the bound -------------------------------------------------------------------------
def test_known_values() -> None:
    # All r guesses right: the one-sided Clopper–Pearson lower limit is α^(1/r).
    assert epsilon_one_run(100, 100, alpha=0.05) == pytest.approx(_logit(0.05 ** (1 / 100)))
    # 600 of 1000: at ε_lb, P[Bin(1000, e^ε/(1+e^ε)) ≥ 600] = α exactly (continuous in ε).
    eps = epsilon_one_run(600, 1000, alpha=0.05)
    q = 1 / (1 + math.exp(-eps))
    assert stats.binom.sf(599, 1000, q) == pytest.approx(0.05, rel=1e-6)
    assert 0.29 < eps < 0.31  # p̂ = 0.6 → logit 0.405, less the one-sided 95 % margin


def test_zero_without_a_majority_and_monotone() -> None:
    r = 200
    values = [epsilon_one_run(v, r, alpha=0.05) for v in range(r + 1)]
    assert all(v == 0.0 for v in values[: r // 2 + 1])  # correct ≤ guesses/2
    assert all(a <= b for a, b in zip(values, values[1:]))
    assert values[-1] > values[150] > 0.0
    assert epsilon_one_run(0, 0, alpha=0.05) == 0.0
    with pytest.raises(ValueError):
        epsilon_one_run(5, 4, alpha=0.05)


def test_delta_term() -> None:
    """δ > 0 (Thm. 3.1's extra term) can only lower the bound; the bound is where the p-value crosses α."""
    base = epsilon_one_run(600, 1000, alpha=0.05)
    tiny = epsilon_one_run(600, 1000, alpha=0.05, delta=1e-15, candidates=1000)
    # δ = 1e-15 adds ≤ 2·m·δ = 2e-12 to the p-value, and 50 bisection steps resolve ε to ~1e-15,
    # so the two bounds agree far inside 1e-6.
    assert tiny == pytest.approx(base, abs=1e-6)
    eps = epsilon_one_run(600, 1000, alpha=0.05, delta=1e-4, candidates=2000)
    assert 0.0 < eps < base
    assert one_run_p_value(600, 1000, 2000, eps, 1e-4) <= 0.05 < one_run_p_value(600, 1000, 2000, eps + 1e-6, 1e-4)
    with pytest.raises(ValueError):
        epsilon_one_run(600, 1000, alpha=0.05, delta=1e-4)  # m is needed for δ > 0


def _rr_exceedances(eps: float, m: int, runs: int, seed: int) -> tuple[float, float]:
    """Share of runs whose bound exceeds ε, and the median bound, for an ε-DP randomised-response toy.

    m candidates with fair coins S_i; the "release" is one ε-randomised-response bit per candidate
    (bit i = S_i with probability e^ε/(1+e^ε)), which is ε-DP for adding/removing candidate i;
    the attacker guesses bit i.
    """
    rng = np.random.default_rng(seed)
    coins = rng.integers(0, 2, size=(runs, m))
    keep = rng.random((runs, m)) < 1 / (1 + math.exp(-eps))
    bits = np.where(keep, coins, 1 - coins)
    correct = (bits == coins).sum(axis=1)
    bounds = np.array([epsilon_one_run(int(c), m, alpha=0.05) for c in correct])
    return float(np.mean(bounds > eps)), float(np.median(bounds))


def test_randomised_response_rarely_exceeds_true_epsilon() -> None:
    """2000 seeded runs at ε = 1, m = 200: the bound exceeds ε in ≤ α of runs (+ 3 binomial sd).

    sd of an exceedance share at rate 0.05 over 2000 runs: √(0.05·0.95/2000) ≈ 0.0049.  The bound
    must also have power: with 200 guesses at accuracy 0.73 the median bound is ≈ 0.7.
    """
    share, median = _rr_exceedances(1.0, 200, 2000, seed=0)
    assert share <= 0.05 + 3 * 0.0049
    assert median > 0.5


@pytest.mark.slow
@pytest.mark.parametrize("eps,m", [(0.25, 1000), (1.0, 50), (3.0, 400)])
def test_randomised_response_coverage_slow(eps: float, m: int) -> None:
    """20,000 runs each: sd of the share ≈ 0.0015, so ≤ 0.05 + 0.005 (3.3 sd)."""
    share, _ = _rr_exceedances(eps, m, 20000, seed=int(eps * 100) + m)
    assert share <= 0.055


def test_comparison_with_claims() -> None:
    assert one_run_comparison({"epsilon": 1.0, "neighbours": "add-remove"}, "centroids")[0]
    assert not one_run_comparison({"epsilon": 1.0, "neighbours": "metric"}, "points")[0]
    assert not one_run_comparison({"epsilon": 1.0, "neighbours": "replace"}, "labels")[0]
    assert not one_run_comparison({"epsilon": 1.0, "neighbours": "add-remove"}, "labels")[0]


# ---- the experiment ---------------------------------------------------------------------
def test_split_coins_are_fair_and_drawn_after_the_shuffle() -> None:
    """300 seeds, m = 100 candidates: member counts ~ Bin(100, 1/2) (mean 50, variance 25).

    Mean of 300 counts: sd √(25/300) ≈ 0.29, allow 4 sd; sample variance of 300 draws has sd
    ≈ 25·√(2/299) ≈ 2.0, allow [15, 35].  The shuffle is the plain permutation of the seed: it
    is drawn before, and without, the coins.
    """
    counts, first = [], []
    for s in range(300):
        seed = np.random.SeedSequence(s)
        shadow, cand, coins = draw_split(AttackOptions(), 400, seed)
        order = np.random.default_rng(seed).permutation(400)
        assert np.array_equal(shadow, order[:300]) and np.array_equal(cand, order[300:400])
        counts.append(int(coins.sum()))
        first.append(int(coins[0]))
    assert abs(np.mean(counts) - 50) < 4 * 0.29
    assert 15 < np.var(counts, ddof=1) < 35
    assert abs(np.mean(first) - 0.5) < 4 * math.sqrt(0.25 / 300)


def test_label_only_queries_a_prefix_of_the_shuffle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Label-only scores the first 2q candidates whatever their coins (not q members + q non-members)."""
    from dpaudit.attack.run import build_mechanism
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack
    from dpaudit.data import datasets

    queried: list[np.ndarray] = []

    def fit(self, knowledge, rng, progress=None, **kw):  # the real fit runs HopSkipJump on a shadow target: not under test
        self.method_, self.calibration_, self.threshold_ = "stub", None, 0.5
        return self

    def infer(self, target, X, rng, progress=None, **kw):
        queried.append(np.array(X))
        return rng.random(len(X))

    monkeypatch.setattr(LabelOnlyAttack, "fit", fit)
    monkeypatch.setattr(LabelOnlyAttack, "infer", infer)
    cfg = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=1.0),
                       data=DataOptions(records=400), attack=AttackOptions(attacks=("label-only",), label_only_queries=15))
    ds = datasets.load("blobs-2d", records=400)
    seed = np.random.SeedSequence(8)  # a repeat's streams are named by index: the same seed gives the same trial
    trial = prepare_trial(cfg.attack, ds.X, 4, seed, lambda: build_mechanism(cfg, ds, 4))
    out = run_repeat(cfg.attack, ds.X, 4, seed, lambda: build_mechanism(cfg, ds, 4), alpha=cfg.alpha)
    assert np.array_equal(queried[0], trial.candidates[:30])
    m = out.results["label-only"]
    assert m.n_members == int(trial.membership[:30].sum()) and m.guesses == 30
    assert m.candidates == len(trial.candidates) == 100


def test_identity_yeom_bound_is_large() -> None:
    """Identity releases the members: Yeom's loss is 0 for every member, so every guess is right.

    100 candidates, one repeat: ε_lb = logit(0.05^(1/100)) ≈ 3.0.
    """
    res = run_attack(AttackConfig(target=TargetOptions(mechanism="identity"), claim=ClaimOptions(epsilon=1.0),
                                  data=DataOptions(records=400), attack=AttackOptions(attacks=("yeom",), repeats=1))
                     ).to_dict()
    yeom = res["attacks"][0]
    assert yeom["counts"]["correct"] == yeom["counts"]["guesses"] == 100
    assert yeom["epsilon_lower_bound"] == pytest.approx(_logit(0.05 ** (1 / 100)))
    assert yeom["epsilon_lower_bound_comparable"] and "Steinke" in yeom["epsilon_lower_bound_method"]


def test_kmeans_few_points_per_cluster_bound_is_positive() -> None:
    """Non-private k-means, k = 20 on ~50 members (2–3 per cluster): members sit near a centre.

    The existing fixed-split test sees advantage ≈ 0.5, i.e. accuracy ≈ 0.75; on 2 × 100 guesses the
    one-sided 95 % Clopper–Pearson limit is then ≈ 0.69, ε_lb ≈ 0.8, well clear of 0.
    """
    res = run_attack(_kmeans_yeom()).to_dict()
    yeom = res["attacks"][0]
    assert yeom["status"] == "ok" and yeom["epsilon_lower_bound"] > 0.0
    assert "epsilon_lower_bound_exceeds_claim" not in yeom  # claim ε = ∞: nothing to exceed


# ---- abstaining guesses -----------------------------------------------------------------
def test_rank_guesses_and_shares() -> None:
    from dpaudit.attacks.membership.abstain import choose_abstention, guess_counts, rank_guesses
    scores = np.array([0.5, 0.9, 0.1, 0.5, 0.7, 0.2, 0.5, 0.3, 0.8, 0.4])
    g = rank_guesses(scores, 0.2, 0.3)
    assert g.tolist() == [-1, 1, 0, -1, -1, 0, -1, 0, 1, -1]
    assert rank_guesses(np.zeros(10), 0.1, 0.0).tolist() == [-1] * 9 + [1]  # ties keep the given order
    assert guess_counts(g, np.array([0, 1, 0, 0, 0, 1, 0, 0, 0, 0])) == (3, 5)
    # Calibration whose 5 % highest scores are all members and the rest is noise: a small top share wins.
    rng = np.random.default_rng(0)
    member = rng.integers(0, 2, 2000)
    s = rng.normal(size=2000) + np.where((member == 1) & (rng.random(2000) < 0.1), 10.0, 0.0)
    top, bottom = choose_abstention(s, member, alpha=0.05)
    assert 0.0 < top <= 0.05 and bottom <= 0.05


def test_choose_abstention_counts_the_guesses_rank_guesses_makes() -> None:
    """The prefix-sum search picks the shares a direct search over rank_guesses picks (ties, odd n, overlaps)."""
    from dpaudit.attacks.membership.abstain import FRACTIONS, choose_abstention, guess_counts, rank_guesses

    def direct(scores: np.ndarray, member: np.ndarray) -> tuple[float, float]:
        best = None
        for top in FRACTIONS:
            for bottom in FRACTIONS:
                if top == bottom == 0.0:
                    continue
                eps = epsilon_one_run(*guess_counts(rank_guesses(scores, top, bottom), member), alpha=0.05)
                if best is None or eps > best[0]:
                    best = (eps, top, bottom)
        return best[1], best[2]

    rng = np.random.default_rng(3)
    for case in range(60):
        n = int(rng.integers(3, 300))
        member = rng.integers(0, 2, n)
        scores = rng.normal(size=n) + rng.uniform(0, 3) * member
        if case % 3 == 0:
            scores = np.round(scores)  # ties
        assert choose_abstention(scores, member, alpha=0.05) == direct(scores, member)


def test_abstaining_guesses_on_null_scores_rarely_certify() -> None:
    """Scores independent of the coins (a 0-DP "release"): the abstaining bound is > 0 in ≤ α of runs.

    2000 runs, 400 candidates, top and bottom 5 % guessed; sd of the share at 0.05 is ≈ 0.0049.
    """
    from dpaudit.attacks.membership.abstain import guess_counts, rank_guesses
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(2000):
        coins = rng.integers(0, 2, 400)
        correct, guesses = guess_counts(rank_guesses(rng.normal(size=400), 0.05, 0.05), coins)
        hits += epsilon_one_run(correct, guesses, alpha=0.05) > 0.0
    assert hits / 2000 <= 0.05 + 3 * 0.0049


def test_abstaining_bound_in_the_attack_results() -> None:
    from dpaudit.attacks.membership.metrics import MembershipScores, evaluate
    from dpaudit.mechanisms.base import InvalidInputError
    with pytest.raises(InvalidInputError):
        evaluate(MembershipScores([0.1, 0.9], [0, 1]), threshold=0.5, abstain=True)
    res = run_attack(_kmeans_yeom()).to_dict()
    yeom = res["attacks"][0]
    ab = yeom["abstaining"]
    assert 0 < ab["guesses"] < yeom["counts"]["guesses"] and len(ab["shares_per_repeat"]) == 2
    assert yeom["epsilon_lower_bound_abstaining"] == pytest.approx(epsilon_one_run(ab["correct"], ab["guesses"],
                                                                                   alpha=0.05))
