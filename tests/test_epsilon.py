"""Testing the tester: soundness on correct mechanisms, power on broken ones,
determinism, evidence and the guarantee statement.

All tests here use fixed seeds (deterministic).  Statistical safety margins:
a correct mechanism is flagged only if the certified bound (confidence 0.95)
exceeds its true ε, which by construction happens with probability ≤ α = 0.05
per audit — and for the tight references (a Laplace count: the event
{v ≥ q + 1} has ratio exactly e^ε) it does happen, about once in 20–50
audits.  So the "never flagged" checks over 20 seeds allow up to the 99.9 %
quantile of Bin(20, 0.05) = 4 flagged seeds (:func:`_flag_limit`); the
seeds are fixed, so the outcome is reproducible, and the coverage of the
bound itself is checked over 300+ fresh audits in the slow suite
(tests/test_epsilon_coverage.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import dpaudit.mechanisms
from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.attacks.epsilon.pairs.neighbours import NeighbourPair, candidate_pairs
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import InvalidInputError, PrivacyClaim, ReleaseBatch
from dpaudit.mechanisms.plugins import FunctionMechanism

X4 = np.array([[0.1, 0.2], [-0.5, 0.3], [0.4, -0.6], [0.9, 0.8]])


class _Scaled:
    """A Laplace count calibrated to ``true_eps`` that claims ``claim_eps`` (power tests)."""

    name = "scaled-laplace"

    def __init__(self, true_eps: float, claim_eps: float) -> None:
        self.inner = dpaudit.mechanisms.get("laplace", epsilon=true_eps)
        self.claim = PrivacyClaim(claim_eps, 0.0, "add-remove")

    def release(self, X, rng):
        return self.inner.release(X, rng)

    def release_many(self, X, rng, n):
        return self.inner.release_many(X, rng, n)


def _noiseless_count(X, epsilon, rng):
    return np.array([float(len(X))])


def _flag_limit(audits: int, alpha: float = 0.05) -> int:
    """Flagged audits of a correct mechanism allowed: the 99.9 % quantile of Bin(audits, α)."""
    return int(stats.binom.ppf(0.999, audits, alpha))


# ---------------------------------------------------------------- soundness
@pytest.mark.parametrize("spec, params", [
    ("laplace", dict(epsilon=1.0)),
    ("laplace", dict(epsilon=0.3, query="sum", bounds=(-1.0, 1.0))),
    ("gaussian", dict(epsilon=1.0, delta=1e-5)),
])
def test_vector_controls_never_flagged(spec, params):
    mech = dpaudit.mechanisms.get(spec, **params)
    flagged = []
    for seed in range(20):
        res = estimate_epsilon(mech, X4, budget=Budget(samples=5_000), seed=seed)
        assert 0.0 <= res.epsilon_lower_bound <= res.ceiling
        if res.verdict != Verdict.NO_VIOLATION:
            flagged.append((seed, res.epsilon_lower_bound))
    assert len(flagged) <= _flag_limit(20), flagged
    # A flagged seed of a correct mechanism exceeds the truth by chance, never by far.
    assert all(bound < 1.1 * mech.epsilon for _, bound in flagged), flagged


@pytest.mark.parametrize("domain", ["none", "clip"])
def test_ndlaplace_never_flagged(domain):
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0, domain=domain,
                          bounds=(-2.0, 2.0) if domain == "clip" else None)
    flagged = []
    for seed in range(20):
        res = estimate_epsilon(mech, X4, budget=Budget(samples=2_000), search=SearchSpace(max_pairs=2), seed=seed)
        assert res.claim.neighbours == "metric"
        if res.verdict != Verdict.NO_VIOLATION:
            flagged.append((seed, res.epsilon_lower_bound))
    assert len(flagged) <= _flag_limit(20), flagged


# ---------------------------------------------------------------- power
def test_noiseless_is_flagged_at_the_ceiling():
    mech = FunctionMechanism(_noiseless_count, epsilon=1.0, output="vector")
    res = estimate_epsilon(mech, X4, budget=Budget(samples=1_000), seed=0)
    assert res.verdict == Verdict.VIOLATION
    assert res.epsilon_lower_bound == pytest.approx(res.ceiling)


def test_claiming_half_the_epsilon_is_flagged():
    res = estimate_epsilon(_Scaled(true_eps=1.0, claim_eps=0.5), X4, budget=Budget(samples=20_000), seed=0)
    assert res.verdict == Verdict.VIOLATION and res.epsilon_lower_bound > 0.5


def test_noise_thirty_percent_too_small_is_flagged():
    # Stated sensitivity 0.7 for a count (true 1): true ε = 1/0.7 ≈ 1.43 against a claim of 1.
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0, sensitivity=0.7)
    res = estimate_epsilon(mech, X4, budget=Budget(samples=20_000), seed=0)
    assert res.verdict == Verdict.VIOLATION
    assert 1.0 < res.epsilon_lower_bound <= 1.0 / 0.7


def test_ndlaplace_thesis_is_flagged():
    mech = dpaudit.mechanisms.get("ndlaplace-thesis", epsilon=1.0)
    with pytest.warns(dpaudit.mechanisms.PrivacyLeakWarning):
        res = estimate_epsilon(mech, X4, budget=Budget(samples=2_000), search=SearchSpace(max_pairs=4), seed=0)
    assert res.verdict == Verdict.VIOLATION


# ---------------------------------------------------------------- tightness
def test_laplace_bound_is_close_to_true_epsilon():
    # 0 vs 1 pair at ε = 1 with 10^5 samples: the threshold event certifies
    # within ~0.03 of 1 (CP half-widths ≈ 2.2·sqrt(1/(p·n)) ≈ 0.01 each at p ≈ 0.5).
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    res = estimate_epsilon(mech, X4, budget=Budget(samples=100_000), seed=3)
    assert 0.95 < res.epsilon_lower_bound <= 1.0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_swappable_classifier_mlp():
    from sklearn.neural_network import MLPClassifier

    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    clf = MLPClassifier(hidden_layer_sizes=(16,), max_iter=200, random_state=0)
    res = estimate_epsilon(mech, X4, budget=Budget(samples=5_000), search=SearchSpace(max_pairs=1, classifier=clf),
                           seed=0)
    assert res.verdict == Verdict.NO_VIOLATION and 0.0 < res.epsilon_lower_bound <= 1.0
    # The MLP is scored through predict_proba's log-odds (it has no decision_function).
    from dpaudit.attacks.epsilon.selection.selection import select_event
    rng = np.random.default_rng(0)
    F_D, F_Dp = rng.normal(size=(400, 2)), rng.normal(size=(400, 2)) + [1.0, 0.0]
    sel = select_event(F_D, F_Dp, ["a", "b"], n_cert=1000, alpha=0.05, delta=0.0, classifier=clf)
    assert "classifier" in sel.per_statistic and np.isfinite(sel.per_statistic["classifier"])
    assert sel.per_statistic["a"] > 0  # the shifted feature


def test_metric_bound_is_per_unit_distance():
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=0.5)
    res = estimate_epsilon(mech, X4, budget=Budget(samples=20_000), search=SearchSpace(distance=2.0, max_pairs=2),
                           seed=0)
    assert res.pair["distance"] == 2.0
    assert res.raw_bound == pytest.approx(2.0 * res.epsilon_lower_bound)
    assert res.epsilon_lower_bound <= 0.5 and res.verdict == Verdict.NO_VIOLATION
    assert res.epsilon_lower_bound > 0.25  # per unit: the pair at distance 2 leaks up to ε·2


# ---------------------------------------------------------------- determinism and evidence
def test_same_seed_same_result_regardless_of_workers():
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    kw = dict(budget=Budget(samples=3_000, selection_samples=600), seed=11)
    a = estimate_epsilon(mech, X4, run=RunSettings(n_jobs=1, chunk_size=500), **kw)
    b = estimate_epsilon(mech, X4, run=RunSettings(n_jobs=2, chunk_size=500), **kw)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound
    assert a.counts == b.counts and a.event == b.event and a.pair == b.pair


def test_search_is_the_same_with_one_or_two_workers():
    """The whole search — model-based trials, successive halving, certification size — is a function
    of the seed only: a budget large enough for the model search, run in-process and on 2 processes."""
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    kw = dict(budget=Budget(releases=200_000), seed=5)
    a = estimate_epsilon(mech, X4, run=RunSettings(n_jobs=1), **kw)
    b = estimate_epsilon(mech, X4, run=RunSettings(n_jobs=2), **kw)
    assert a.search["model_search_trials"] >= 8
    assert a.to_dict() | {"elapsed_seconds": 0, "timings": {}} == b.to_dict() | {"elapsed_seconds": 0, "timings": {}}


def test_result_evidence_and_json():
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    res = estimate_epsilon(mech, X4, budget=Budget(samples=2_000, confidence=0.9), seed=0)
    d = res.to_dict()
    for key in ("mechanism", "claim", "epsilon_lower_bound", "verdict", "confidence", "samples", "ceiling",
                "pair", "event", "counts", "selection_samples", "selection_samples_total", "elapsed_seconds",
                "guarantee", "candidates"):
        assert key in d
    assert d["claim"] == {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}
    # Selection: every tried pair's probe and rounds, within the stated budget; certification: 2,000 per dataset.
    assert d["samples"] == 2_000 and d["search"]["plan"]["releases"] == 2 * 2_000 + d["search"]["selection_releases"]
    tried = [c for c in d["candidates"] if c["status"] == "ok"]
    assert d["selection_samples_total"] >= 2 * sum(c["samples_per_dataset"] for c in tried) > 0
    assert d["selection_samples_total"] <= d["search"]["selection_releases"] + 2 * 16 * len(d["candidates"])
    assert "probability at least 0.9" in d["guarantee"] and "not" in d["guarantee"].lower()
    # One statement at the full α: split between two limits, or one limit on the rate ratio, as the guarantee states.
    assert d["counts"]["alpha_p"] + d["counts"]["alpha_q"] == pytest.approx(0.1)
    if d["counts"]["statement"] == "two limits":
        assert f"α_q = {d['counts']['alpha_q']:.3g}" in d["guarantee"]
    else:
        assert d["counts"]["statement"] == "rate ratio" and d["counts"]["alpha_q"] == 0.0
        assert "Poisson(n)" in d["guarantee"] and "p/q ≥ θ_lo/(1 − θ_lo)" in d["guarantee"]
    assert "D" not in d["pair"] and "new" not in d["pair"]  # no record values in the evidence


def test_explicit_pair_and_claim_override():
    pair = NeighbourPair("zero-one", np.zeros((2, 1)), np.array([[0.0], [1.0]]), "replace", 1,
                         np.array([1.0]), np.array([0.0]))
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0, query="sum", bounds=(0.0, 1.0), neighbours="replace")
    res = estimate_epsilon(mech, np.zeros((2, 1)), budget=Budget(samples=20_000), search=SearchSpace(pairs=[pair]),
                           seed=0)
    assert res.pair["name"] == "zero-one" and res.verdict == Verdict.NO_VIOLATION
    res = estimate_epsilon(mech, np.zeros((2, 1)), claim=PrivacyClaim(0.5, 0.0, "replace"),
                           budget=Budget(samples=20_000), search=SearchSpace(pairs=[pair]), seed=0)
    assert res.verdict == Verdict.VIOLATION


def test_candidate_pairs_per_relation():
    X = np.random.default_rng(0).normal(size=(12, 3))
    add = candidate_pairs(X, "add-remove", bounds=(-5.0, 5.0))
    assert all(len(p.D_prime) == len(p.D) + 1 and p.index == len(p.D) for p in add)
    assert all(np.array_equal(p.D_prime[-1], p.new) for p in add)
    rep = candidate_pairs(X, "replace", bounds=(-5.0, 5.0))
    assert all(np.count_nonzero(np.any(p.D != p.D_prime, axis=1)) == 1 for p in rep)
    met = candidate_pairs(X, "metric", distance=0.5)
    assert all(np.linalg.norm(p.D_prime[p.index] - p.D[p.index]) == pytest.approx(0.5) for p in met)
    lab = candidate_pairs(X, "add-remove", kind="labels", bounds=(-5.0, 5.0))
    lemma = [p for p in lab if p.name.startswith("lemma")]
    assert lemma and all(p.scale == 2.0 and p.relation == "replace" for p in lemma)
    assert not [p for p in candidate_pairs(X, "add-remove", kind="labels", delta=1e-5) if p.name.startswith("lemma")]


def test_bad_input_is_rejected():
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    with pytest.raises(InvalidInputError, match="confidence"):
        estimate_epsilon(mech, X4, budget=Budget(confidence=1.5))
    with pytest.raises(InvalidInputError, match="samples"):
        estimate_epsilon(mech, X4, budget=Budget(samples=0))
    with pytest.raises(InvalidInputError, match="neighbours"):
        estimate_epsilon(mech, X4, PrivacyClaim(1.0, neighbours="swap"))
    with pytest.raises(InvalidInputError, match="budget must be a Budget"):
        estimate_epsilon(mech, X4, budget=20_000)
    with pytest.raises(InvalidInputError, match="n_jobs"):
        RunSettings(n_jobs=0)
    with pytest.raises(InvalidInputError, match="distance"):
        estimate_epsilon(dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), X4, search=SearchSpace(distance=0.0))


# ---------------------------------------------------------------- features
def test_centroid_features_are_permutation_invariant(rng):
    from dpaudit.attacks.epsilon.selection.features import FeatureMap

    X = rng.normal(size=(20, 3))
    for pair in (candidate_pairs(X, "add-remove")[0], candidate_pairs(X, "replace")[0]):
        fmap = FeatureMap(pair, "centroids")
        C = rng.normal(size=(50, 4, 3))
        counts = rng.uniform(1, 10, size=(50, 4))
        perm = rng.permutation(4)
        a = fmap(ReleaseBatch("centroids", C, counts))
        b = fmap(ReleaseBatch("centroids", C[:, perm], counts[:, perm]))
        np.testing.assert_allclose(a, b)
        assert a.shape == (50, len(fmap.names))
        # Releases with different numbers of centres are featurised one by one, same columns.
        from dpaudit.mechanisms.base import Centroids
        mixed = fmap([Centroids(C[0, :2]), Centroids(C[1]), Centroids(C[2, :3])])
        assert mixed.shape == (3, len(fmap.names))
        np.testing.assert_allclose(mixed[1], fmap(ReleaseBatch("centroids", C[1:2]))[0])


def test_label_features_ignore_label_names(rng):
    from dpaudit.attacks.epsilon.selection.features import FeatureMap

    X = rng.normal(size=(15, 2))
    pair = candidate_pairs(X, "replace")[0]
    fmap = FeatureMap(pair, "labels")
    L = rng.integers(-1, 3, size=(40, 15))
    renamed = np.where(L >= 0, (L + 1) % 3 + 5, -1)  # cluster ids renamed, noise kept
    np.testing.assert_allclose(fmap(ReleaseBatch("labels", L)), fmap(ReleaseBatch("labels", renamed)))
    # Lemma 3.1 shape: one cluster with the changed record vs the changed record as noise.
    same = fmap(ReleaseBatch("labels", np.zeros((1, 15), dtype=int)))[0]
    moved = np.zeros((1, 15), dtype=int)
    moved[0, pair.index] = -1
    apart = fmap(ReleaseBatch("labels", moved))[0]
    col = fmap.names.index("anchor_share")
    assert same[col] == 1.0 and apart[col] == 0.0


def test_record_space_thresholds_are_withheld():
    # identity releases the records: a threshold on z[0] could be a record's own value.
    X = X4 + np.array([0.0012345678, 0.0087654321])  # distinctive values to search for
    mech = dpaudit.mechanisms.get("identity", epsilon=1.0)
    res = estimate_epsilon(mech, X, PrivacyClaim(1.0, neighbours="replace"), budget=Budget(samples=200),
                           search=SearchSpace(max_pairs=1), seed=0)
    text = str(res.to_dict())
    for value in X.ravel():
        assert f"{value:.6g}" not in text and repr(float(value)) not in text
    assert res.selected_event.in_record_space  # seed 0 selects z[0]; its revealed threshold is a record value
    assert res.event["threshold"] is None and "withheld" in res.event["text"]
    assert res.selected_event.describe(reveal=True)["threshold"] == pytest.approx(X[3, 0])


def test_both_directions_split_alpha_between_event_and_complement() -> None:
    """Each direction is epsilon_from_counts at α/2 (union bound); the rate bound is the larger."""
    from dpaudit.attacks.bounds import epsilon_both_directions, epsilon_from_counts, epsilon_from_rates

    fwd, bwd = epsilon_both_directions(90, 100, 40, 100, alpha=0.05, delta=1e-3)
    assert fwd == float(epsilon_from_counts(90, 100, 40, 100, alpha=0.025, delta=1e-3))
    assert bwd == float(epsilon_from_counts(60, 100, 10, 100, alpha=0.025, delta=1e-3))
    assert bwd > fwd > 0.0  # the complement (60 vs 10 of 100) is the sharper statement here
    assert epsilon_from_rates(90, 100, 40, 100, alpha=0.05, delta=1e-3) == bwd
