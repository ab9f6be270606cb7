"""Attacks against known answers: identity, non-private centroids, tiny ε; targets and ART wiring."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression

import dpaudit.mechanisms
from dpaudit.attacks.flat_forest import FlatForest
from dpaudit.attacks.membership.metrics import MembershipScores, evaluate
from dpaudit.attacks.membership.shadow import AttackerKnowledge
from dpaudit.attacks.membership.yeom import YeomAttack
from dpaudit.attacks.reconstruction import default_radius, reconstruct
from dpaudit.attacks.targets import MechanismPipeline, Reference
from dpaudit.execution import MechanismFailure
from dpaudit.mechanisms.base import Centroids, Labels, PrivacyClaim
from dpaudit.mechanisms.plugins import FunctionMechanism


class LocalKMeans:
    """Non-private k-means releasing centroids (claim ε = ∞), for tests only."""

    name = "local-kmeans"
    claim = PrivacyClaim(float("inf"))

    def __init__(self, k: int) -> None:
        self.k = k

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Centroids:
        km = KMeans(self.k, n_init=1, random_state=int(rng.integers(2**31 - 1))).fit(X)
        return Centroids(km.cluster_centers_)


class LocalKMeansLabels(LocalKMeans):
    def release(self, X: np.ndarray, rng: np.random.Generator) -> Labels:  # type: ignore[override]
        return Labels(KMeans(self.k, n_init=1, random_state=int(rng.integers(2**31 - 1))).fit(X).labels_)




def _split(X: np.ndarray, n_shadow: int, n_members: int, seed: int = 0):
    order = np.random.default_rng(seed).permutation(len(X))
    return (X[order[:n_shadow]], X[order[n_shadow:n_shadow + n_members]],
            X[order[n_shadow + n_members:n_shadow + 2 * n_members]])


@pytest.fixture(scope="module")
def blobs() -> np.ndarray:
    X, _ = make_blobs(n_samples=800, centers=4, cluster_std=0.6, random_state=0)
    return X


def test_reconstruction_recovers_every_record_from_identity(blobs: np.ndarray) -> None:
    shadow, members, non_members = _split(blobs, 600, 100)
    mech = dpaudit.mechanisms.get("identity")
    release = mech.release(members, np.random.default_rng(0))
    res = reconstruct(mech, release, members, non_members, shadow, 1e-6, np.random.default_rng(1))
    assert res.success_rate == 1.0 and res.linkage_success_rate == 1.0 and res.median_error == 0.0
    assert res.baseline_success_rate < 0.01  # a random prior record almost never lands within 1e-6


def test_reconstruction_beats_prior_on_ndlaplace(blobs: np.ndarray) -> None:
    shadow, members, non_members = _split(blobs, 600, 100)
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=5.0)
    rng = np.random.default_rng(2)
    release = mech.release(members, rng)
    radius = default_radius(shadow, rng)
    res = reconstruct(mech, release, members, non_members, shadow, radius, rng)
    assert res.noise_epsilon == 5.0
    # Mean displacement 2/ε = 0.4 vs radius ≈ 0.8: most records are recovered; the prior gives ≈ 2 %.
    assert res.success_rate > 0.5 > 5 * res.baseline_success_rate


def test_centroid_differencing_recovers_added_record() -> None:
    """Non-private k-means: D vs D ∪ {x} reveals x (same start so Lloyd converges alike)."""
    X, _ = make_blobs(n_samples=300, centers=3, cluster_std=0.4, random_state=1)
    shadow, members, targets = X[:200], X[200:260], X[260:270]

    start = KMeans(3, n_init=4, random_state=0).fit(members).cluster_centers_

    class FixedStartKMeans(LocalKMeans):
        def release(self, D, rng):  # deterministic: Lloyd from the same start for D and D ∪ {x}
            return Centroids(KMeans(3, init=start, n_init=1).fit(D).cluster_centers_)

    from dpaudit.attacks.reconstruction import reconstruct_centroids
    res = reconstruct_centroids(FixedStartKMeans(3), members, targets, shadow, 0.05, np.random.default_rng(0))
    assert res.success_rate >= 0.9 and res.median_error < 1e-6


def test_yeom_and_cli_on_identity(tmp_path) -> None:
    """Identity releases the records: the loss attack separates perfectly, reconstruction is exact."""
    from dpaudit.attack.config import AttackConfig
    from dpaudit.attack.run import run_attack
    from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions
    res = run_attack(AttackConfig(target=TargetOptions(mechanism="identity"), claim=ClaimOptions(epsilon=1.0),
                                  data=DataOptions(records=400),
                                  attack=AttackOptions(attacks=("yeom", "reconstruction"), repeats=1))).to_dict()
    by = {a["name"]: a for a in res["attacks"]}
    assert by["yeom"]["advantage"] == 1.0 and by["yeom"]["advantage_ceiling"] == 1.0
    assert by["reconstruction"]["success_rate"] == 1.0


def test_yeom_finds_signal_on_nonprivate_centroids() -> None:
    """k-means with 2 points per cluster: members sit near released centres, non-members do not.

    40 members / 40 non-members per shadow and target; a real signal gives advantage ≈ 0.5;
    under no signal its sd is ≈ √(2·0.25/40) ≈ 0.11, so > 0.3 (~3 sd) is a clear detection.
    """
    X, _ = make_blobs(n_samples=400, centers=4, cluster_std=0.6, random_state=0)
    shadow, members, non_members = _split(X, 300, 40, seed=3)
    mech = dpaudit.mechanisms.get("kmeans", n_clusters=20)
    knowledge = AttackerKnowledge(mech, shadow, Reference.fit(shadow, 4, 0), n_members=40)
    target = knowledge.pipeline(7).fit(members)
    yeom = YeomAttack(variant="loss", n_shadow=3).fit(knowledge, np.random.default_rng(4))
    scored = MembershipScores.from_groups(yeom.infer(target, members), yeom.infer(target, non_members))
    m = evaluate(scored, calibration=yeom.calibration_, claimed_epsilon=mech.claim.epsilon)
    assert m.advantage > 0.3 and m.auc > 0.7
    assert m.advantage_ceiling == 1.0


def test_flat_forest_matches_sklearn(blobs: np.ndarray) -> None:
    shadow, members, _ = _split(blobs, 600, 100)
    ref = Reference.fit(shadow, 4, 0)
    pipe = MechanismPipeline(dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), ref, seed=3).fit(members)
    Q = np.random.default_rng(0).uniform(-15, 15, (2000, 2))
    forest = pipe.target_.forest_
    np.testing.assert_allclose(FlatForest(forest).predict_proba(Q), forest.predict_proba(Q), atol=1e-12)


def test_pipeline_is_reproducible_and_clonable(blobs: np.ndarray) -> None:
    shadow, members, non_members = _split(blobs, 600, 100)
    ref = Reference.fit(shadow, 4, 0)
    pipe = MechanismPipeline(dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), ref, seed=3)
    a, b = clone(pipe).fit(members), clone(pipe).fit(members)
    np.testing.assert_array_equal(a.release_.points, b.release_.points)
    c = clone(pipe).fit(non_members)  # other data: other noise
    assert not np.allclose(a.release_.points - members, c.release_.points - non_members)
    p = a.predict_proba(non_members)
    assert p.shape == (100, 4) and np.allclose(p.sum(axis=1), 1.0)
    assert set(a.classes_) == {0, 1, 2, 3}


def test_art_wraps_pipeline(blobs: np.ndarray) -> None:
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ART warns at import when PyTorch is absent
        from art.estimators.classification.scikitlearn import ScikitlearnClassifier
    shadow, members, _ = _split(blobs, 600, 100)
    pipe = MechanismPipeline(dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), Reference.fit(shadow, 4, 0), seed=1)
    clf = ScikitlearnClassifier(pipe.fit(members[:20]), clip_values=(-15.0, 15.0))
    again = clf.clone_for_refitting()  # a known ART pitfall: works because the template is fitted
    again.fit(members, np.eye(4)[np.zeros(len(members), dtype=int)])
    assert again.nb_classes == 4 and again.predict(members).shape == (100, 4)


def test_malformed_release_is_reported(blobs: np.ndarray) -> None:
    shadow, members, _ = _split(blobs, 600, 100)
    bad = FunctionMechanism(lambda X, eps, rng: np.full_like(X, np.nan), epsilon=1.0, output="points")
    with pytest.raises(MechanismFailure) as failure:
        MechanismPipeline(bad, Reference.fit(shadow, 4, 0)).fit(members)
    assert failure.value.finding["kind"] == "nan"


def test_label_only_consistency_on_labels_release(blobs: np.ndarray) -> None:
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack
    shadow, members, non_members = _split(blobs, 600, 100)
    knowledge = AttackerKnowledge(LocalKMeansLabels(4), shadow, Reference.fit(shadow, 4, 0), n_members=100)
    target = knowledge.pipeline(1).fit(members)
    lo = LabelOnlyAttack(n_queries=30).fit(knowledge, np.random.default_rng(0))
    assert lo.method_ == "consistency" and lo.threshold_ is None
    s = lo.infer(target, non_members[:30], np.random.default_rng(1))
    assert s.shape == (30,) and np.all((s >= 0) & (s <= 1))


def test_attack_parameters_checked_up_front() -> None:
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack
    from dpaudit.attacks.membership.shokri import ShokriAttack
    from dpaudit.mechanisms.base import InvalidInputError
    with pytest.raises(InvalidInputError):
        YeomAttack(variant="nope")
    with pytest.raises(InvalidInputError):
        ShokriAttack(n_shadow=0)
    with pytest.raises(InvalidInputError):
        LabelOnlyAttack(method="x")
    with pytest.raises(InvalidInputError):
        YeomAttack().set_params(unknown=1)


def test_label_only_boundary_reproducible_and_leaves_global_state(blobs: np.ndarray) -> None:
    """The boundary search draws from the attack's generator only: the same seed, the same scores, and NumPy's
    global state untouched."""
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack
    shadow, members, _ = _split(blobs, 600, 100)
    knowledge = AttackerKnowledge(dpaudit.mechanisms.get("ndlaplace", epsilon=2.0), shadow, Reference.fit(shadow, 4, 0),
                                  n_members=100, bounds=(np.full(2, -15.0), np.full(2, 15.0)))
    target = knowledge.pipeline(2).fit(members)
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    runs = []
    for _ in range(2):
        lo = LabelOnlyAttack(n_queries=6).fit(knowledge, np.random.default_rng(9))
        assert lo.method_ == "boundary" and lo.threshold_ == 0.5
        runs.append((lo.tau_, lo.infer(target, members[:6], np.random.default_rng(10))))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(np.random.get_state()[1], before)


def test_spans_release_becomes_a_classifier_and_is_attacked(blobs: np.ndarray) -> None:
    """DP-DBSCAN spans: containing-span classifier (outside every span → uniform), label-only by consistency."""
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack
    from dpaudit.mechanisms.base import Spans
    shadow, members, non_members = _split(blobs, 600, 100)
    mech = dpaudit.mechanisms.get("dpdbscan", epsilon=1.0, alpha=2.0, min_pts=5, bounds=(-15.0, 15.0))
    knowledge = AttackerKnowledge(mech, shadow, Reference.fit(shadow, 4, 0), n_members=100)
    target = knowledge.pipeline(4).fit(members)
    assert isinstance(target.release_, Spans)
    p = target.predict_proba(non_members)
    assert p.shape == (100, 4) and np.allclose(p.sum(axis=1), 1.0)
    outside = target.release_.predict(non_members) == -1
    assert 0 < outside.mean() < 1  # some records in a span, some not (seeded)
    assert np.allclose(p[outside], 0.25) and np.allclose(p[~outside].max(axis=1), 1.0)
    lo = LabelOnlyAttack(n_queries=30).fit(knowledge, np.random.default_rng(0))
    assert lo.method_ == "consistency"
    s = lo.infer(target, members[:30], np.random.default_rng(1))
    assert s.shape == (30,) and np.all((s >= 0) & (s <= 1))


class _HalfPlane(LogisticRegression):
    """A classifier of known boundary: class 1 where x₀ > 0, else 0 (one-hot; a scikit-learn classifier, so that
    ART can query it too)."""

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        one = (np.asarray(X)[:, 0] > 0).astype(float)
        return np.stack([1 - one, one], axis=1)


class _Chaotic:
    """A classifier whose label flips at every 10⁻⁶ of x₀: no step off its boundary stays adversarial for long."""

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        one = (np.floor(np.asarray(X)[:, 0] * 1e6) % 2).astype(float)
        return np.stack([1 - one, one], axis=1)


def test_the_batched_boundary_search_is_arts_search() -> None:
    """HopSkipJump in lockstep over the records finds what ART's record-by-record search finds on a half-plane,
    whose boundary is known: records at x₀ = −a are a from it.  Every point found is adversarial, so no distance
    is below a; more rounds come closer (ART's own rate); a record the model already mislabels scores 0."""
    import warnings

    from dpaudit.attacks.membership.boundary_search import HopSkipJump, boundary_distances

    a = np.array([0.5, 1.0, 2.0, 3.0])
    X = np.stack([-a, np.linspace(-2, 2, len(a))], axis=1)
    model = _HalfPlane().fit(np.array([[-1.0, 0.0], [1.0, 0.0]]), [0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from art.attacks.evasion import HopSkipJump as ArtHopSkipJump
        from art.estimators.classification.scikitlearn import ScikitlearnClassifier

        art = ArtHopSkipJump(ScikitlearnClassifier(model=model, clip_values=(-10.0, 10.0)), targeted=False,
                             max_iter=20, max_eval=200, init_eval=20, init_size=50, verbose=False)
        np.random.seed(0)
        art_d = np.linalg.norm(art.generate(X.astype(np.float32)) - X, axis=1)
    ours = {it: boundary_distances(model, X, np.zeros(4, dtype=int), (-10.0, 10.0), np.random.default_rng(0),
                                   HopSkipJump(max_iter=it)) for it in (5, 20, 50)}
    np.testing.assert_allclose(ours[20], art_d, rtol=0.05)
    assert np.all(ours[5] >= a * (1 - 1e-6)) and np.all(ours[5] <= 1.6 * a)
    assert np.all(ours[50] < ours[5]) and np.all(ours[50] <= 1.2 * a)
    mislabelled = boundary_distances(model, X, np.array([0, 0, 0, 1]), (-10.0, 10.0), np.random.default_rng(0))
    assert mislabelled[3] == 0.0 and np.all(mislabelled[:3] > 0)


def test_the_boundary_search_ends_on_a_boundary_it_cannot_step_off() -> None:
    """ART's step search halves its step until the point is adversarial, forever on a boundary like this one; the
    batched search gives up after MAX_STEP_HALVINGS and keeps its boundary point."""
    from dpaudit.attacks.membership.boundary_search import boundary_distances

    X = np.random.default_rng(0).uniform(-1, 1, size=(20, 2))
    y = _Chaotic().predict_proba(X).argmax(axis=1)
    d = boundary_distances(_Chaotic(), X, y, (-2.0, 2.0), np.random.default_rng(1))
    assert d.shape == (20,) and np.all(np.isfinite(d)) and np.all(d >= 0)


# ---- scale: bounded memory, the denoising approximation, capped models -------------------------
@pytest.fixture(scope="module")
def many_blobs() -> np.ndarray:
    X, _ = make_blobs(n_samples=140_000, centers=4, cluster_std=0.6, random_state=0)
    return X


def _laplace(members: np.ndarray, eps: float, seed: int) -> np.ndarray:
    return dpaudit.mechanisms.get("ndlaplace", epsilon=eps).release(members, np.random.default_rng(seed)).points


@pytest.mark.parametrize("eps", [1.0, 2000.0])
def test_denoising_from_nearest_and_subsample_matches_the_exact_posterior(many_blobs: np.ndarray, monkeypatch,
                                                                          eps: float) -> None:
    """ε = 1: the posterior spreads over ~10⁴ prior records, so the subsample carries it; the
    approximation's error has the size of its stated Monte-Carlo standard error (median |error|
    ≤ 2 × median SE; in 2-D E‖error‖² = SE², so |error| rarely exceeds 2 SE).  ε = 2000: the
    64 nearest records carry all the weight, every point is summed exactly within its stated
    truncation bound."""
    import dpaudit.attacks.reconstruction as rec
    from dpaudit.attacks.reconstruction import denoising
    monkeypatch.setattr(denoising, "EXACT_CELLS", 0)  # force the large-prior method on a testable size
    prior, members = many_blobs[:40_000], many_blobs[40_000:40_300]
    Z = _laplace(members, eps, 0)
    approx, how = rec.denoise_points(Z, prior, eps, rng=np.random.default_rng(1))
    exact = denoising.denoise_exact(Z, prior, eps, None)
    err = np.linalg.norm(approx - exact, axis=1)
    assert how["prior_records"] == 40_000 and how["public_subsample"] == denoising.PRIOR_SUBSAMPLE
    if eps == 1.0:
        assert how["share_truncated_exactly"] == 0.0
        again, _ = rec.denoise_points(Z, prior, eps, rng=np.random.default_rng(1))
        np.testing.assert_array_equal(again, approx)  # the public subsample comes from the seed
        assert np.median(err) <= 2 * how["monte_carlo_se_median"] < 0.05 * (2 / eps)  # ≪ the noise scale 2/ε
    else:
        assert how["share_truncated_exactly"] == 1.0 and how["monte_carlo_se_median"] is None
        assert err.max() <= how["truncation_error_bound"] + 1e-9


def test_reconstruction_memory_is_bounded(many_blobs: np.ndarray) -> None:
    """2·10⁴ released points against a prior of 6·10⁴: the old members × prior matrix alone was
    9.6 GB; every allocation is now bounded by chunks (≤ 150 MB traced)."""
    import tracemalloc
    prior, members, non_members = many_blobs[:60_000], many_blobs[60_000:80_000], many_blobs[80_000:100_000]
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    release = mech.release(members, np.random.default_rng(0))
    seen: list[tuple[str, int, int]] = []
    tracemalloc.start()
    try:
        res = reconstruct(mech, release, members, non_members, prior, 0.38, np.random.default_rng(1),
                          progress=lambda phase, done, total: seen.append((phase, done, total)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 150 * 2**20, peak
    assert res.success_rate > 3 * res.baseline_success_rate  # the ε = 1 blobs figure: ≈ 0.10 vs ≈ 0.024
    assert res.denoising["share_truncated_exactly"] == 0.0 and "Monte Carlo" in res.baseline["method"]
    done = [d for phase, d, _ in seen if phase == "denoising"]
    assert done == sorted(done) and done[-1] == 20_000 == seen[-1][2]


def test_prior_baseline_monte_carlo_agrees_with_the_exact_one(many_blobs: np.ndarray) -> None:
    """3000 × 3000 pairs (above the exact limit): the estimate is within 4 of its standard errors
    of the exact rate, and the exact median lies in the stated 95 % interval (fixed seed)."""
    from dpaudit.attacks.reconstruction import BASELINE_EXACT_PAIRS, prior_baseline
    from dpaudit.attacks.targets import sq_dist
    X, prior = many_blobs[:3000], many_blobs[3000:6000]
    assert len(X) * len(prior) > BASELINE_EXACT_PAIRS
    mc = prior_baseline(X, prior, 0.4, np.random.default_rng(2))
    d = np.sqrt(sq_dist(X, prior))
    assert abs(mc["success_rate"] - np.mean(d <= 0.4)) <= 4 * mc["success_rate_se"]
    lo, hi = mc["median_error_ci95"]
    assert lo <= np.median(d) <= hi and hi - lo < 0.01 * np.median(d)


def test_forest_cap_and_large_queries_give_the_forest_probabilities(blobs: np.ndarray, monkeypatch) -> None:
    import dpaudit.attacks.targets as targets
    monkeypatch.setattr(targets, "FOREST_MAX_SAMPLES", 50)
    shadow, members, _ = _split(blobs, 600, 100)
    pipe = MechanismPipeline(dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), Reference.fit(shadow, 4, 0), seed=3)
    forest = pipe.fit(members).target_.forest_
    assert forest.max_samples == 50 and max(t.tree_.node_count for t in forest.estimators_) <= 2 * 50 - 1
    Q = np.random.default_rng(0).uniform(-15, 15, (3 * targets.FLAT_FOREST_MAX_ROWS, 2))
    monkeypatch.setattr(targets, "QUERY_CHUNK", 70)  # several chunks
    np.testing.assert_allclose(pipe.predict_proba(Q), pipe.target_.flat_forest_.predict_proba(Q), atol=1e-12)


def test_shokri_attack_model_rows_are_capped_uniformly(monkeypatch) -> None:
    import dpaudit.attacks.membership.shokri as shokri
    monkeypatch.setattr(shokri, "ATTACK_MODEL_MAX_ROWS", 5)
    group = (np.arange(12.0)[:, None], np.arange(12) % 3, np.arange(24.0).reshape(12, 2))
    a, b = shokri.cap_rows(group, np.random.default_rng(0)), shokri.cap_rows(group, np.random.default_rng(0))
    assert len(a[0]) == 5 and np.all(np.diff(a[0][:, 0]) > 0)  # kept rows stay aligned and in order
    np.testing.assert_array_equal(a[2][:, 0], 2 * a[0][:, 0])
    np.testing.assert_array_equal(a[0], b[0])  # seeded
    small = (group[0][:5], group[1][:5], group[2][:5])
    assert shokri.cap_rows(small, np.random.default_rng(0)) is small


def test_progress_bars_follow_the_hook() -> None:
    import io

    from dpaudit.attacks.attack import progress_bars
    sink = io.StringIO()
    with progress_bars(file=sink, mininterval=0) as report:
        for done in (10, 20, 30):
            report("denoising", done, 30)
        report("shadow targets", 1, 3)
    text = sink.getvalue()
    assert "denoising" in text and "30/30" in text and "shadow targets" in text


