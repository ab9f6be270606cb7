"""LiRA, RMIA and tracing: they recover a known per-record signal, their scores do not depend on the
order of the records, and their calibration and reference runs never touch the target."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans

from dpaudit.attacks.attack import NotApplicable
from dpaudit.attacks.membership.lira import LiRAAttack, gaussian_fits
from dpaudit.attacks.membership.metrics import MembershipScores, evaluate
from dpaudit.attacks.membership.reference_runs import balanced_inclusion, positions, prepare
from dpaudit.attacks.membership.rmia import RMIAAttack
from dpaudit.attacks.membership.shadow import AttackerKnowledge
from dpaudit.attacks.membership.tracing import TracingAttack
from dpaudit.attacks.membership.vector_map import VectorMap
from dpaudit.attacks.targets import MechanismPipeline, Reference
from dpaudit.mechanisms.base import Centroids, InvalidInputError, Points, PrivacyClaim, Spans, Vector


class LeakySubset:
    """Points release with a known per-record signal: records with x₀ > 0.8 are released as they are,
    the others with noise far larger than the data (claim ε = ∞, for tests only)."""

    name = "leaky-subset"
    claim = PrivacyClaim(float("inf"))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Points:
        noise = np.where(X[:, :1] > 0.8, 0.0, 50.0)
        return Points(X + noise * rng.standard_normal(X.shape))


class NoisySum:
    """The sum of the records, with tiny noise: a vector release that leaks (claim ε = 1, false)."""

    name = "noisy-sum"
    claim = PrivacyClaim(1.0)

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector(X.sum(axis=0) + rng.laplace(scale=1e-3, size=X.shape[1]))


class CountOnly(NoisySum):
    def release(self, X: np.ndarray, rng: np.random.Generator) -> Vector:
        return Vector([len(X) + rng.laplace(scale=1.0)])


class ExactKMeans:
    name = "exact-kmeans"
    claim = PrivacyClaim(float("inf"))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Centroids:
        return Centroids(KMeans(20, n_init=1, random_state=int(rng.integers(2**31 - 1))).fit(X).cluster_centers_)


def _setup(mech, X: np.ndarray, m: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    cand, shadow = X[order[:m]], X[order[m:]]
    coins = rng.integers(0, 2, m)
    knowledge = AttackerKnowledge(mech, shadow, Reference.fit(shadow, 3, 0), m // 2)
    target = MechanismPipeline(mech, knowledge.reference, seed=seed + 1).fit(cand[coins == 1])
    return knowledge, cand, coins, target


@pytest.fixture(scope="module")
def uniform() -> np.ndarray:
    return np.random.default_rng(5).random((1200, 2))


@pytest.mark.parametrize("attack", [LiRAAttack(8), LiRAAttack(8, online=False), RMIAAttack(8)],
                         ids=["lira-online", "lira-offline", "rmia"])
def test_recovers_a_known_per_record_signal(uniform: np.ndarray, attack) -> None:
    knowledge, cand, coins, target = _setup(LeakySubset(), uniform, 600)
    attack.fit(knowledge, np.random.default_rng(1), cand)
    scores = attack.infer(target, cand)
    exposed = cand[:, 0] > 0.8
    # Where the release leaks, members are told from non-members; elsewhere the scores are chance.
    inside = evaluate(MembershipScores(scores[exposed], coins[exposed]), threshold=0.0).auc
    outside = evaluate(MembershipScores(scores[~exposed], coins[~exposed]), threshold=0.0).auc
    assert inside > 0.93 and abs(outside - 0.5) < 0.06
    m = evaluate(MembershipScores(scores, coins), calibration=attack.calibration_, abstain=True)
    assert m.tpr_at_1pct_fpr > 0.09 and m.epsilon_lower_bound_abstaining > 1.0
    if attack.online and isinstance(attack, LiRAAttack):  # the exposed members lead the ranking
        top = np.argsort(-scores)[: int(np.sum(exposed & (coins == 1)))]
        assert np.mean(exposed[top] & (coins[top] == 1)) > 0.85


@pytest.mark.parametrize("cls", [LiRAAttack, RMIAAttack])
def test_scores_do_not_depend_on_record_order(uniform: np.ndarray, cls) -> None:
    knowledge, cand, coins, target = _setup(LeakySubset(), uniform, 200)
    perm = np.random.default_rng(9).permutation(len(cand))
    a = cls(6).fit(knowledge, np.random.default_rng(3), cand)
    b = cls(6).fit(knowledge, np.random.default_rng(3), cand[perm])
    np.testing.assert_allclose(b.infer(target, cand[perm]), a.infer(target, cand)[perm])
    np.testing.assert_allclose(a.infer(target, cand[perm]), a.infer(target, cand)[perm])
    with pytest.raises(InvalidInputError, match="records its reference runs"):
        a.infer(target, cand[:3] + 1e-3)


def test_reference_design_is_balanced_and_independent_of_order() -> None:
    X = np.random.default_rng(0).normal(size=(300, 3))
    inc = balanced_inclusion(X, 10, np.random.SeedSequence(4))
    assert inc.shape == (10, 300) and np.all(inc.sum(axis=0) == 5)
    perm = np.random.default_rng(1).permutation(300)
    assert np.array_equal(balanced_inclusion(X[perm], 10, np.random.SeedSequence(4)), inc[:, perm])
    assert not np.array_equal(balanced_inclusion(X, 10, np.random.SeedSequence(5)), inc)
    odd = balanced_inclusion(X, 5, np.random.SeedSequence(4)).sum(axis=0)
    assert set(odd.tolist()) == {2, 3}
    assert np.array_equal(positions(X, X[perm]), perm)


def test_gaussian_fits_recover_the_groups() -> None:
    rng = np.random.default_rng(0)
    inc = balanced_inclusion(rng.normal(size=(50, 2)), 64, np.random.SeedSequence(0))
    phi = np.where(inc, 2.0, -1.0) + rng.normal(scale=0.5, size=inc.shape)
    mu_in, sd_in, mu_out, sd_out = gaussian_fits(phi, inc, "auto")  # 32 runs per group: per-record
    assert np.allclose(mu_in, 2.0, atol=0.4) and np.allclose(mu_out, -1.0, atol=0.4)
    assert np.allclose(sd_in, 0.5, atol=0.2) and np.allclose(sd_out, 0.5, atol=0.2)
    _, sd_global, _, _ = gaussian_fits(phi, inc, "global")
    assert np.ptp(sd_global) == 0.0


def test_vector_release_traced_by_every_attack() -> None:
    X = np.random.default_rng(2).normal(size=(400, 60))
    knowledge, cand, coins, target = _setup(NoisySum(), X, 60)
    assert not target.is_classifier
    with pytest.raises(NotApplicable, match="not a classifier"):
        target.predict_proba(cand)
    tracing = TracingAttack(3).fit(knowledge, np.random.default_rng(0))
    assert not tracing.map_.learned
    for attack, scores in [("tracing", tracing.infer(target, cand)),
                           ("lira", LiRAAttack(8).fit(knowledge, np.random.default_rng(0), cand).infer(target, cand)),
                           ("rmia", RMIAAttack(8).fit(knowledge, np.random.default_rng(0), cand).infer(target, cand))]:
        auc = evaluate(MembershipScores(scores, coins), threshold=0.0).auc
        assert auc > 0.8, attack


def test_a_count_gives_every_record_one_direction() -> None:
    rng = np.random.default_rng(0)
    inputs = [rng.normal(size=(n, 4)) for n in rng.integers(40, 60, size=16)]  # runs of different sizes
    counts = np.array([[len(x) + rng.laplace(scale=0.01)] for x in inputs])
    vmap = VectorMap.fit(np.zeros(4), inputs, counts)
    assert vmap.learned
    d = vmap.directions(rng.normal(size=(100, 4)))
    assert np.ptp(d) < 0.05 * np.abs(d).mean()  # every record moves a count the same way: nothing to trace


def test_a_count_release_is_chance() -> None:
    X = np.random.default_rng(2).normal(size=(400, 4))
    knowledge, cand, coins, target = _setup(CountOnly(), X, 100)
    lira = LiRAAttack(8).fit(knowledge, np.random.default_rng(0), cand)
    assert abs(evaluate(MembershipScores(lira.infer(target, cand), coins), threshold=0.0).auc - 0.5) < 0.15


def test_vector_map_identity_is_scale_free() -> None:
    rng = np.random.default_rng(0)
    inputs = [rng.normal(size=(20, 3)) for _ in range(5)]
    for scale in (1.0, 1 / 20):  # a sum and a mean rank records the same way
        v = np.array([scale * x.sum(axis=0) for x in inputs])
        vmap = VectorMap.fit(np.zeros(3), inputs, v)
        assert vmap.matrix is None
        ranks = np.argsort(vmap.statistic(inputs[0], v[0]))
        if scale == 1.0:
            first = ranks
    assert np.array_equal(first, ranks)


def test_centroids_and_spans_are_scored(uniform: np.ndarray) -> None:
    knowledge, cand, coins, target = _setup(ExactKMeans(), uniform[:400], 100)
    lira = LiRAAttack(8).fit(knowledge, np.random.default_rng(0), cand)
    assert lira.references_.kind == "centroids" and lira.references_.n_views > 1
    assert evaluate(MembershipScores(lira.infer(target, cand), coins), threshold=0.0).auc > 0.6
    spans = Spans(np.zeros(2), 0.1, (10, 10), (np.array([[1, 1], [1, 2]]),))
    runs = prepare(ExactKMeans(), uniform[200:], cand, 50, 2, np.random.SeedSequence(0))
    from dpaudit.attacks.membership.record_scores import log_confidence
    near, far = log_confidence(spans, np.array([[0.15, 0.15], [0.95, 0.95]]), runs.context)[:, 0]
    assert near > far


def test_not_applicable_and_bad_parameters() -> None:
    with pytest.raises(InvalidInputError, match="n_reference"):
        LiRAAttack(1)
    with pytest.raises(InvalidInputError, match="variance"):
        LiRAAttack(4, variance="own")
    with pytest.raises(InvalidInputError, match="gamma"):
        RMIAAttack(4, gamma=0.5)
    with pytest.raises(InvalidInputError, match="n_shadow"):
        TracingAttack(2)
    with pytest.raises(InvalidInputError, match="fit"):
        LiRAAttack(4).infer(Points(np.zeros((2, 2))), np.zeros((2, 2)))
    X = np.random.default_rng(2).random((300, 2))
    knowledge, cand, coins, target = _setup(LeakySubset(), X, 60)
    with pytest.raises(NotApplicable, match="vector"):
        TracingAttack(3).fit(knowledge, np.random.default_rng(0))


class FailsOnOddSizes(LeakySubset):
    def release(self, X: np.ndarray, rng: np.random.Generator) -> Points:
        if len(X) % 2:
            raise RuntimeError("odd-sized input")
        return super().release(X, rng)


def test_reference_runs_are_seeded_parallel_and_failures_are_findings(uniform: np.ndarray) -> None:
    from dpaudit.execution import recording

    cand, public = uniform[:80], uniform[200:]
    one = prepare(LeakySubset(), public, cand, 40, 6, np.random.SeedSequence(3))
    two = prepare(LeakySubset(), public, cand, 40, 6, np.random.SeedSequence(3), n_jobs=2)
    assert np.array_equal(one.scores, two.scores) and np.array_equal(one.inclusion, two.inclusion)
    with recording() as found:
        runs = prepare(FailsOnOddSizes(), public, cand, 40, 8, np.random.SeedSequence(3))
    failed = 8 - runs.n_runs
    raised = sum(f.count for f in found if f.kind == "raises")
    assert runs.calls == 8 and failed > 0 and raised == failed
    assert np.all(runs.inclusion.sum(axis=1) % 2 == 0)  # only the even-sized runs are kept
