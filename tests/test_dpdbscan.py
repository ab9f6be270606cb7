"""DP-DBSCAN with spans (Approximate DBSCAN under DP): grid geometry, τ, the sparse histogram's law,
exactness with noise off, parameter errors, reproducibility, the label releases."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

import dpaudit.mechanisms
from dpaudit.data import datasets
from dpaudit.mechanisms.base import InvalidInputError, PrivacyLeakWarning, Spans
from dpaudit.mechanisms.dpdbscan import AUTO_NAIVE_MAX_CELLS, DPDBSCAN
from dpaudit.mechanisms.grid import neighbour_offsets, sparse_histogram, tau0


# --------------------------------------------------------------------------- #
# Grid geometry
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("d, kappa", [(1, 3), (2, 21), (3, 117)])
def test_kappa(d: int, kappa: int) -> None:
    offs = neighbour_offsets(d)
    assert offs.shape == (kappa, d)
    # symmetric, unique, and every offset's cell gap is < √d (in cell widths)
    as_set = {tuple(c) for c in offs}
    assert len(as_set) == kappa and all(tuple(-c) in as_set for c in offs)
    gap = np.maximum(np.abs(offs) - 1, 0)
    assert np.all(np.sqrt((gap**2).sum(axis=1)) < math.sqrt(d))


def test_kappa_2d_is_5x5_without_corners() -> None:
    offs = {tuple(c) for c in neighbour_offsets(2)}
    box = {(i, j) for i in range(-2, 3) for j in range(-2, 3)}
    assert offs == box - {(2, 2), (2, -2), (-2, 2), (-2, -2)}


def test_cell_scale_changes_neighbourhood() -> None:
    assert len(neighbour_offsets(2, cell_scale=2.0)) == 9          # gap must be 0: the 3×3 block
    assert len(neighbour_offsets(2, cell_scale=0.5)) > 21


def test_grid_width_and_shape() -> None:
    mech = DPDBSCAN(1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0))
    grid, _ = mech.grid_for(2)
    assert grid.width == pytest.approx(0.2 / math.sqrt(2))
    assert grid.shape == (43, 43)                                   # ⌊6/0.1414⌋ + 1
    assert mech.histogram_kind(grid) == "naive"


# --------------------------------------------------------------------------- #
# Upward shift τ
# --------------------------------------------------------------------------- #
def _tau0_formula(kappa: int, X: int, eps: float, beta: float) -> float:
    b = 1 / eps
    a = [kappa * b * np.log(X / beta),
         np.sqrt(2 * kappa * np.log(4 * X / beta)) * b * np.log(2 * X / beta),
         max(2 * b * np.sqrt(2 * kappa * np.log(2 * X / beta)), 2 * np.sqrt(2) * b * np.log(2 * X / beta))]
    return min(a)


@pytest.mark.parametrize("kappa, X, eps, beta", [
    (21, 1849, 1.0, 0.5), (21, 10**5, 0.1, 0.5), (117, 10**7, 1.0, 0.05),
    (21, 50, 5.0, 0.9), (3, 10, 1.0, 0.5), (117, 125, 0.5, 0.1)])
def test_tau0_matches_formula(kappa: int, X: int, eps: float, beta: float) -> None:
    assert tau0(kappa, X, eps, beta) == pytest.approx(_tau0_formula(kappa, X, eps, beta), rel=1e-12)


def test_tau0_hand_value() -> None:
    # Table 2 grid: κ = 21, |X| = 43² = 1849, ε = 1, β = 0.5: the sub-exponential
    # bound 2·√(42·ln 7396) = 38.687 is the smallest of the three.
    assert tau0(21, 1849, 1.0, 0.5) == pytest.approx(2 * math.sqrt(42 * math.log(7396)), rel=1e-12)


@pytest.mark.parametrize("eps, beta, n_public", [(1.0, 0.5, 2000), (0.5, 0.1, 2000), (2.0, 0.5, 10**6)])
def test_tau_sparse_is_tau0_plus_kappa_T(moons: np.ndarray, eps: float, beta: float, n_public: int) -> None:
    mech = DPDBSCAN(eps, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0), beta=beta, histogram="sparse",
                    n_public=n_public)
    run = mech.run(moons, np.random.default_rng(0))
    t0 = _tau0_formula(21, 1849, eps, beta)
    # T = ln(|X|/n)/ε when |X| > 2n, else τ₀/κ (here |X| = 1849 < 2n)
    T = math.log(1849 / n_public) / eps if 1849 > 2 * n_public else t0 / 21
    assert run.threshold == pytest.approx(T) and run.tau == pytest.approx(t0 + 21 * T)
    naive = DPDBSCAN(eps, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0), beta=beta, histogram="naive").run(
        moons, np.random.default_rng(0))
    assert naive.tau == pytest.approx(t0) and naive.threshold is None


def test_threshold_uses_log_when_grid_is_large() -> None:
    X = np.random.default_rng(1).uniform(-1, 1, size=(500, 2))
    run = DPDBSCAN(1.0, alpha=0.01, min_pts=5, bounds=(-1.0, 1.0), histogram="sparse", n_public=500).run(
        X, np.random.default_rng(0))
    assert run.n_cells > 1000
    assert run.threshold == pytest.approx(math.log(run.n_cells / 500))


# --------------------------------------------------------------------------- #
# The sparse histogram's law (the DP-DBSCAN paper §6, Algorithm 2)
# --------------------------------------------------------------------------- #
_N_CELLS, _N_OCC, _EPS, _T = 10**6, 1000, 1.0, 2.0


def _sparse_runs(reps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ids = np.repeat(np.arange(_N_OCC), 3)                 # cells 0..999 occupied, 3 records each
    rng = np.random.default_rng(12345)
    ms, vals, chosen = [], [], []
    for _ in range(reps):
        h = sparse_histogram(ids, _N_CELLS, _EPS, _T, rng)
        empty = h.ids >= _N_OCC
        assert np.all(h.values >= _T) and np.all(np.diff(h.ids) > 0)
        ms.append(h.n_empty_released)
        assert empty.sum() == h.n_empty_released
        vals.append(h.values[empty])
        chosen.append(h.ids[empty])
    return np.array(ms), np.concatenate(vals), np.concatenate(chosen)


def test_sparse_empty_count_is_binomial() -> None:
    reps = 200
    ms, _, _ = _sparse_runs(reps)
    n_empty, p = _N_CELLS - _N_OCC, 0.5 * math.exp(-_EPS * _T)
    mean, var = n_empty * p, n_empty * p * (1 - p)
    # The mean of `reps` Binomial draws has sd √(var/reps); 4.5 sd is a two-sided
    # false-alarm rate below 1e-5, while a wrong p (e.g. e^(−εT) without the ½)
    # would move the mean by ~270 sd.
    assert abs(ms.mean() - mean) < 4.5 * math.sqrt(var / reps)
    # The sample variance: (reps−1)·s²/var ~ χ²(reps−1) (the Binomial is ~normal
    # here, mean 67,600); accept between the 1e-5 and 1 − 1e-5 quantiles.
    stat = (reps - 1) * ms.var(ddof=1) / var
    assert stats.chi2.ppf(1e-5, reps - 1) < stat < stats.chi2.ppf(1 - 1e-5, reps - 1)


def test_sparse_empty_values_are_T_plus_exponential() -> None:
    _, vals, chosen = _sparse_runs(5)
    assert vals.size > 300_000
    # ~3.4·10^5 samples: KS detects a scale error of 1 % or a shift of 0.01; seeded.
    assert stats.kstest(vals - _T, stats.expon(scale=1 / _EPS).cdf).pvalue > 1e-3
    # the chosen empty cells are uniform over the empty cells (ids 1000 … 10^6 − 1)
    u = (chosen - _N_OCC + 0.5) / (_N_CELLS - _N_OCC)
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_sparse_occupied_cells_survive_with_laplace_tail() -> None:
    # an occupied cell with count c survives iff c + Lap(1/ε) ≥ T: P = ½e^{−ε(T−c)} for c < T
    ids = np.repeat(np.arange(20_000), 1)
    h = sparse_histogram(ids, 10**6, 1.0, 2.0, np.random.default_rng(7))
    p = 0.5 * math.exp(-1.0)
    sd = math.sqrt(20_000 * p * (1 - p))
    assert abs(h.n_kept - 20_000 * p) < 4.5 * sd          # binomial, two-sided ~1e-5


def test_sparse_histogram_has_the_law_of_a_truncated_laplace_histogram() -> None:
    # Theorem 6.1: Algorithm 2's output is distributed as the naive Laplace
    # histogram with entries < T dropped.  Compare both on a 20,000-cell universe
    # with 500 occupied cells (counts 1–5), 120 runs each, seeded.
    n_cells, eps, T, reps = 20_000, 1.0, 1.5, 120
    ids = np.repeat(np.arange(500), np.tile(np.arange(1, 6), 100))
    counts = np.bincount(ids, minlength=n_cells).astype(float)
    rng = np.random.default_rng(99)
    sp_n, nv_n, sp_v, nv_v, sp_occ, nv_occ = [], [], [], [], [], []
    for _ in range(reps):
        h = sparse_histogram(ids, n_cells, eps, T, rng)
        sp_n.append(h.ids.size)
        sp_v.append(h.values)
        sp_occ.append(int((h.ids < 500).sum()))
        noisy = counts + rng.laplace(0.0, 1 / eps, n_cells)
        nv_n.append(int((noisy >= T).sum()))
        nv_v.append(noisy[noisy >= T])
        nv_occ.append(int((noisy[:500] >= T).sum()))
    sp_n, nv_n = np.array(sp_n), np.array(nv_n)
    # difference of two means of `reps` draws: sd √(s₁²/reps + s₂²/reps); 4.5 sd ≈ 1e-5 two-sided
    sd = math.sqrt(sp_n.var(ddof=1) / reps + nv_n.var(ddof=1) / reps)
    assert abs(sp_n.mean() - nv_n.mean()) < 4.5 * sd
    # pooled released values (~3·10^5 each): two-sample KS, seeded
    assert stats.ks_2samp(np.concatenate(sp_v), np.concatenate(nv_v)).pvalue > 1e-3
    # which cells: the number of occupied cells (ids < 500) released, same law
    sp_o, nv_o = np.array(sp_occ), np.array(nv_occ)
    sd = math.sqrt(sp_o.var(ddof=1) / reps + nv_o.var(ddof=1) / reps)
    assert abs(sp_o.mean() - nv_o.mean()) < 4.5 * sd


def test_sparse_never_allocates_the_grid() -> None:
    # 3-D grid of ~5·10^15 cells: a dense array would need petabytes.
    X = np.random.default_rng(3).normal(0, 1, size=(2000, 3))
    mech = DPDBSCAN(1.0, alpha=0.02, min_pts=5, bounds=(-1000.0, 1000.0))
    run = mech.run(X, np.random.default_rng(0))
    assert run.histogram == "sparse" and run.n_cells > 10**15
    assert run.n_released_cells < 10 * len(X)
    with pytest.raises(InvalidInputError, match="naive"):
        DPDBSCAN(1.0, alpha=0.02, min_pts=5, bounds=(-1000.0, 1000.0), histogram="naive").run(
            X, np.random.default_rng(0))


def test_auto_rule_depends_on_grid_only() -> None:
    small = DPDBSCAN(1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0))
    big = DPDBSCAN(1.0, alpha=0.002, min_pts=7, bounds=(-3.0, 3.0))
    assert small.histogram_kind(small.grid_for(2)[0]) == "naive"
    g = big.grid_for(2)[0]
    assert g.n_cells > AUTO_NAIVE_MAX_CELLS and big.histogram_kind(g) == "sparse"


# --------------------------------------------------------------------------- #
# Noise off ⇒ the exact grid clustering
# --------------------------------------------------------------------------- #
def _exact_grid_clustering(X: np.ndarray, lo: object, hi: object, alpha: float, min_pts: int,
                           cell_scale: float = 1.0) -> set[frozenset]:
    """Independent, loop-based: counts per cell, S(g) over N, core cells, BFS components."""
    d = X.shape[1]
    w = cell_scale * alpha / math.sqrt(d)
    los, his = np.broadcast_to(lo, (d,)), np.broadcast_to(hi, (d,))
    shape = [int(math.floor((h - l) / w)) + 1 for l, h in zip(los, his)]
    counts: dict[tuple, int] = defaultdict(int)
    for x in X:
        cell = tuple(min(max(int(math.floor((v - l) / w)), 0), s - 1) for v, l, s in zip(x, los, shape))
        counts[cell] += 1
    offs = [tuple(c) for c in neighbour_offsets(d, cell_scale)]
    sums: dict[tuple, int] = defaultdict(int)
    for cell, k in counts.items():
        for c in offs:
            g = tuple(a + b for a, b in zip(cell, c))
            if all(0 <= gi < s for gi, s in zip(g, shape)):
                sums[g] += k
    core = {g for g, s in sums.items() if s >= min_pts}
    clusters, seen = set(), set()
    for start in sorted(core):
        if start in seen:
            continue
        comp, stack = set(), [start]
        seen.add(start)
        while stack:
            g = stack.pop()
            comp.add(g)
            for c in offs:
                nb = tuple(a + b for a, b in zip(g, c))
                if nb in core and nb not in seen:
                    seen.add(nb)
                    stack.append(nb)
        clusters.add(frozenset(comp))
    return clusters


@pytest.mark.parametrize("histogram", ["naive", "sparse"])
@pytest.mark.parametrize("d, cell_scale", [(2, 1.0), (3, 1.0), (2, 0.5), (2, 2.0)])
def test_noise_off_equals_exact_grid_clustering(histogram: str, d: int, cell_scale: float) -> None:
    rng = np.random.default_rng(d)
    centres = np.array([[-1.5, -1.5, 1.0], [1.5, 1.5, -1.0], [-1.5, 1.5, 0.0], [1.5, -1.5, 1.5]])[:, :d]
    X = np.concatenate([c + 0.25 * rng.standard_normal((150, d)) for c in centres]
                       + [rng.uniform(-3.5, 3.5, size=(60, d))])          # some outside the box
    alpha, min_pts = (0.3, 6) if d == 2 else (0.4, 8)
    mech = DPDBSCAN(1.0, alpha=alpha, min_pts=min_pts, bounds=(-3.0, 3.0), histogram=histogram,
                    cell_scale=cell_scale, noise=False)
    assert not mech.claim.is_private
    spans = mech.release(X, np.random.default_rng(0))
    got = {frozenset(map(tuple, c.tolist())) for c in spans.cells}
    want = _exact_grid_clustering(X, -3.0, 3.0, alpha, min_pts, cell_scale)
    assert len(want) >= 2 and got == want


@pytest.mark.parametrize("histogram", ["naive", "sparse"])
def test_noise_off_exact_on_a_non_square_box(histogram: str) -> None:
    rng = np.random.default_rng(11)
    lo, hi = np.array([-3.0, -1.0]), np.array([3.0, 1.7])
    X = np.concatenate([[-2.0, 0.0] + 0.2 * rng.standard_normal((200, 2)),
                        [2.0, 1.0] + 0.2 * rng.standard_normal((200, 2))])
    spans = DPDBSCAN(1.0, alpha=0.3, min_pts=6, bounds=(lo, hi), histogram=histogram, noise=False).release(X, None)
    got = {frozenset(map(tuple, c.tolist())) for c in spans.cells}
    want = _exact_grid_clustering(X, lo, hi, 0.3, 6)
    assert spans.shape[0] != spans.shape[1] and len(want) >= 2 and got == want


def test_spans_classify_points() -> None:
    rng = np.random.default_rng(5)
    A = np.array([-1.5, -1.5]) + 0.1 * rng.standard_normal((300, 2))
    B = np.array([1.5, 1.5]) + 0.1 * rng.standard_normal((300, 2))
    X = np.concatenate([A, B])
    spans = DPDBSCAN(1.0, alpha=0.3, min_pts=5, bounds=(-3.0, 3.0)).release(X, np.random.default_rng(0))
    assert isinstance(spans, Spans) and spans.n_clusters == 2
    la, lb = spans.predict(A), spans.predict(B)
    assert np.all(la == la[0]) and np.all(lb == lb[0]) and la[0] != lb[0] and min(la[0], lb[0]) >= 0
    # a point far from both, and one outside the box, are noise
    assert spans.predict(np.array([[1.5, -1.5], [10.0, 10.0]])).tolist() == [-1, -1]
    # predict is the span containing the point's cell
    cell = spans.cell_of(A[:1])[0]
    assert any((c == cell).all(axis=1).any() for c in spans.cells)


def test_far_outside_points_are_clipped_into_the_box() -> None:
    # 300 records at +1e300 in both coordinates land in the top-right cell (not an int overflow)
    X = np.concatenate([np.full((300, 2), 1e300), np.zeros((2, 2))])
    spans = DPDBSCAN(1.0, alpha=0.3, min_pts=5, bounds=(-3.0, 3.0), noise=False).release(X, None)
    assert spans.n_clusters == 1
    assert tuple(spans.cells[0].max(axis=0)) == tuple(s - 1 for s in spans.shape)


def test_one_dimensional_data() -> None:
    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal(-2, 0.1, 300), rng.normal(2, 0.1, 300)])[:, None]
    spans = DPDBSCAN(1.0, alpha=0.2, min_pts=5, bounds=(-3.0, 3.0)).release(X, np.random.default_rng(0))
    labels = spans.predict(X)
    assert spans.n_clusters == 2 and labels[0] != labels[-1] and min(labels[0], labels[-1]) >= 0


# --------------------------------------------------------------------------- #
# n: public, noisy, or the exact n (a warned leak)
# --------------------------------------------------------------------------- #
def test_record_count_sources(moons: np.ndarray) -> None:
    kw = dict(alpha=0.2, min_pts=7, bounds=(-3.0, 3.0), histogram="sparse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        noisy = DPDBSCAN(1.0, **kw).run(moons, np.random.default_rng(0))
        public = DPDBSCAN(1.0, n_public=2000, **kw).run(moons, np.random.default_rng(0))
        naive = DPDBSCAN(1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0), histogram="naive").run(
            moons, np.random.default_rng(0))
    assert noisy.n_source == "noisy" and noisy.epsilon_histogram == pytest.approx(0.95)
    assert abs(noisy.n_used - 2000) < 20 * 20             # Lap(1/0.05): 20 scale units is P < 1e-8
    assert public.n_source == "public" and public.n_used == 2000 and public.epsilon_histogram == 1.0
    assert naive.n_source is None and naive.epsilon_histogram == 1.0
    with pytest.warns(PrivacyLeakWarning, match="exact record count"):
        leak = DPDBSCAN(1.0, n_public="data", **kw).run(moons, np.random.default_rng(0))
    assert leak.n_source == "data" and leak.n_used == 2000
    summary = public.summary()
    assert summary["n_source"] == "public" and summary["kappa"] == 21 and summary["n_spans"] >= 1


# --------------------------------------------------------------------------- #
# Parameters, reproducibility, registry
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("kwargs, match", [
    (dict(alpha=0.0), "alpha"), (dict(alpha=-1.0), "alpha"), (dict(alpha=None), "alpha"),
    (dict(min_pts=0), "min_pts"), (dict(min_pts=2.5), "min_pts"), (dict(min_pts=None), "min_pts"),
    (dict(bounds=None), "bounds"), (dict(bounds=(3.0, -3.0)), "lo < hi"),
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=-1.0), "epsilon"), (dict(epsilon=math.inf), "epsilon"),
    (dict(beta=1.0), "beta"), (dict(beta=0.0), "beta"), (dict(cell_scale=0.0), "cell_scale"),
    (dict(histogram="dense"), "histogram"), (dict(n_public=0), "n_public"), (dict(n_budget=1.0), "n_budget"),
])
def test_bad_parameters_rejected(kwargs: dict, match: str) -> None:
    params = dict(epsilon=1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0))
    params.update(kwargs)
    with pytest.raises(InvalidInputError, match=match):
        dpaudit.mechanisms.get("dpdbscan", **params)


def test_bad_data_rejected(moons: np.ndarray) -> None:
    mech = DPDBSCAN(1.0, alpha=0.2, min_pts=7, bounds=([-3.0, -3.0, -3.0], [3.0, 3.0, 3.0]))
    with pytest.raises(InvalidInputError, match="features"):
        mech.release(moons, np.random.default_rng(0))                 # 2-D data, 3-D box
    with pytest.raises(InvalidInputError, match="2-D"):
        mech.release(moons[:, 0], np.random.default_rng(0))
    bad = moons.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        DPDBSCAN(1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0)).release(bad, np.random.default_rng(0))


@pytest.mark.parametrize("histogram", ["naive", "sparse"])
def test_same_seed_same_release(moons: np.ndarray, histogram: str) -> None:
    mech = DPDBSCAN(1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0), histogram=histogram)
    a = mech.release(moons, np.random.default_rng(42))
    b = mech.release(moons, np.random.default_rng(42))
    assert a.n_clusters == b.n_clusters and all(np.array_equal(x, y) for x, y in zip(a.cells, b.cells))
    runs = [mech.run(moons, np.random.default_rng(s)) for s in range(6)]
    assert len({(r.n_core_cells, r.spans.n_clusters) for r in runs}) > 1   # the noise does vary


def test_registry_api(moons: np.ndarray) -> None:
    mech = dpaudit.mechanisms.get("dpdbscan", epsilon=1.0, alpha=0.2, min_pts=7, bounds=(-3.0, 3.0))
    assert mech.claim.epsilon == 1.0 and mech.claim.neighbours == "add-remove"
    labels = mech.release(moons, np.random.default_rng(0)).predict(moons)
    assert labels.shape == (2000,) and labels.min() >= -1
    for name in ("dpdbscan", "dpdbscan-labels", "dbscan-labels"):
        assert name in dpaudit.mechanisms.available()


@pytest.fixture
def moons() -> np.ndarray:
    return datasets.load("moons").X
