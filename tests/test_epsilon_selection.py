"""The one certified statement and the selection that feeds it.

Bounds are checked exactly (against scipy's beta quantiles) and by a
Monte-Carlo of the statement itself; selection is checked on synthetic
feature matrices with planted effects, fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.attacks.bounds import ALPHA_Q_SHARES, best_ceiling, epsilon_ceiling, epsilon_one_statement
from dpaudit.attacks.epsilon.selection.binning import ColumnBins
from dpaudit.attacks.epsilon.selection.cells import RowAtomBins
from dpaudit.attacks.epsilon.selection.selection import select_event


def test_one_statement_is_clopper_pearson_at_the_split_levels():
    got = float(epsilon_one_statement(300, 1000, 100, 1000, alpha=0.05, q_share=0.7, delta=1e-3))
    p_lo = stats.beta.ppf(0.05 * 0.3, 300, 701)
    q_hi = stats.beta.ppf(1 - 0.05 * 0.7, 101, 900)
    assert got == pytest.approx(math.log((p_lo - 1e-3) / q_hi), rel=1e-10)
    assert float(epsilon_one_statement(10, 1000, 100, 1000, alpha=0.05)) == 0.0  # nothing certified


def test_one_statement_covers_at_level_alpha():
    """The statement's miscoverage: k_p ~ Bin(n, p), k_q ~ Bin(n, q) with p = e^ε·q (the DP limit).

    With 40,000 simulated audits the share above ε has sd ≤ sqrt(0.05·0.95/40,000) ≈ 0.0011, so
    α + 0.004 is a ≥ 3.5 sd margin.  Clopper–Pearson is conservative, so the share is well below α.
    """
    rng = np.random.default_rng(0)
    eps, q, n, alpha = 1.0, 0.1, 2_000, 0.05
    p = math.exp(eps) * q
    for share in (0.2, 0.5, 0.9):
        k_p = rng.binomial(n, p, size=40_000)
        k_q = rng.binomial(n, q, size=40_000)
        bound = epsilon_one_statement(k_p, n, k_q, n, alpha=alpha, q_share=share)
        assert np.mean(bound > eps) <= alpha + 0.004


def test_best_ceiling_gives_q_most_of_alpha():
    ceiling, share = best_ceiling(1_000, alpha=0.05)
    assert share == max(ALPHA_Q_SHARES)
    assert ceiling > epsilon_ceiling(1_000, alpha=0.05) > epsilon_ceiling(1_000, alpha=0.025)


def _laplace_columns(rng, n, shifts):
    return np.column_stack([rng.laplace(size=n) + s for s in shifts])


def test_a_lucky_rare_event_does_not_beat_a_solid_one():
    """Column 1 carries a real effect (ratio e^0.5 in the upper tail); column 0 none, but on the
    part of the sample that chooses thresholds D′ shows 12 extreme values D never shows — the
    10-vs-0 fluke that used to win.  Validation on the held-out part rejects it."""
    rng = np.random.default_rng(3)
    n = 30_000
    F_D = _laplace_columns(rng, n, [0.0, 0.5])
    F_Dp = _laplace_columns(rng, n, [0.0, 0.0])
    t = n // 3
    F_Dp[t:t + 12, 0] = 40.0  # the fluke, in the choosing part only
    sel = select_event(F_D, F_Dp, ["a", "b"], n_cert=10 ** 6, alpha=0.05, delta=0.0, classifier=None)
    assert "b" in sel.event.statistic, sel.event.describe()
    assert sel.predicted > 0.3
    assert sel.per_statistic["a"] < 0.05  # the fluke's validated prediction is about nothing


def test_a_point_mass_is_isolated_by_cells():
    """D releases 0 exactly in 1 % of runs, inside the Laplace bulk; no threshold on the value
    separates that, the cell around the point mass does (ratio ≈ 1 + 0.01·∞ → large)."""
    rng = np.random.default_rng(4)
    n = 60_000
    F_D = rng.laplace(size=(n, 1))
    F_D[rng.random(n) < 0.01, 0] = 0.0
    F_Dp = rng.laplace(size=(n, 1))
    sel = select_event(F_D, F_Dp, ["v[0]"], n_cert=10 ** 6, alpha=0.05, delta=0.0)
    assert sel.event.kind == "cell ratio" and sel.event.favours == "D"
    assert sel.predicted > 3.0
    text = sel.event.describe()["text"]
    assert "point mass" in text and "0.0" not in text and "withheld" in text
    # the event is the point mass's own bin (and cells like it), never the bulk around it
    assert sel.event(np.array([[0.0]]))[0] and not sel.event(np.array([[0.5]]))[0]


def test_repeated_whole_releases_are_cells():
    rng = np.random.default_rng(5)
    A = rng.integers(0, 2, size=(3_000, 3)).astype(float)
    B = rng.integers(0, 2, size=(3_000, 3)).astype(float)
    B[rng.random(3_000) < 0.3] = [1.0, 1.0, 1.0]
    stat = RowAtomBins.fit(A, B, name="repeated releases", what="whole releases")
    assert stat is not None and len(stat.atoms) == 8 and stat.n_bins == 9
    bins = stat.bins(np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0]]))
    assert np.array_equal(stat.atoms[bins[0]], [1.0, 1.0, 1.0]) and np.array_equal(stat.atoms[bins[1]], [0, 0, 0])
    assert bins[2] == stat.n_bins - 1  # an unseen release is "the rest"
    # the same rows in a subset of the columns: the pattern of columns 0 and 2
    sub = RowAtomBins.fit(A, B, np.array([0, 2]), name="pattern", what="columns 0 and 2")
    assert sub is not None and len(sub.atoms) == 4 and sub.needs == frozenset({0, 2})


def test_cells_find_a_blurred_mode():
    """A point mass blurred by 1e-9 noise (a mode): its ends are points of the column's bins, so the mode is
    bins of its own — the cells hold the mode's 200 values of D and none of D′'s bulk."""
    rng = np.random.default_rng(6)
    a = np.r_[rng.laplace(size=5_000), 0.3 + 1e-9 * rng.normal(size=200)]
    b = rng.laplace(size=5_200)
    stat = ColumnBins.fit(0, "x", a, b)
    assert stat.lumpy
    inside = (a > 0.3 - 1e-6) & (a < 0.3 + 1e-6)
    mode_bins = np.unique(stat.bins(a[inside][:, None]))
    in_D = np.isin(stat.bins(a[:, None]), mode_bins).sum()
    in_Dp = np.isin(stat.bins(b[:, None]), mode_bins).sum()
    assert in_D >= 200 and in_Dp <= 3  # the bulk's mass in 2e-6 around 0.3 is ~1e-6 × 5,200


def test_perfect_separation_gives_q_most_of_alpha():
    F_D = np.zeros((600, 1))
    F_Dp = np.ones((600, 1))
    sel = select_event(F_D, F_Dp, ["v[0]"], n_cert=1_000, alpha=0.05, delta=0.0)
    assert sel.selection_counts[:2] == (200, 0) and sel.q_share == max(ALPHA_Q_SHARES)


def test_the_default_classifier_is_scored_as_its_linear_function():
    """The fast path (weights on the raw columns) gives sklearn's decision function, on either layout."""
    from dpaudit.attacks.epsilon.selection.binning import ClassifierBins, classifier_score, default_classifier

    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(2000, 6)), rng.normal(size=(2000, 6)) + 0.2
    stat = ClassifierBins.fit(default_classifier(), A, B, np.array([0, 2, 5]))
    F = rng.normal(size=(500, 6))
    want = classifier_score(stat.model, F[:, [0, 2, 5]])
    assert np.allclose(stat.score(F), want, rtol=0, atol=1e-12)
    assert np.allclose(stat.score(np.asfortranarray(F)), want, rtol=0, atol=1e-12)
    assert stat.needs == frozenset({0, 2, 5})


def test_selection_samples_grow_column_major_without_changing_rows():
    """Round after round, a candidate's sample is the rows drawn, in order, stored column by column."""
    from dpaudit.attacks.epsilon.selection.cells import row_hash
    from dpaudit.attacks.epsilon.selection.evidence import append_rows

    rng = np.random.default_rng(1)
    blocks = [rng.normal(size=(n, 4)) for n in (5, 7, 3, 20, 1)]
    sample = np.asfortranarray(blocks[0])
    for i in range(1, len(blocks), 2):
        sample = append_rows(sample, blocks[i:i + 2])
        assert sample.shape[1] == 4 and sample[:, 0].flags.c_contiguous  # columns contiguous
    assert np.array_equal(sample, np.vstack(blocks))
    # a row hash reads the same rows whatever the layout
    assert np.array_equal(row_hash(sample), row_hash(np.ascontiguousarray(sample)))


def test_sign_counts_find_many_small_moves():
    """Twenty coordinates each moved by 1 under Lap(20) noise (LaplaceParallel in small): the count of
    coordinates above their medians is the likelihood-ratio statistic, and selection picks it."""
    from dpaudit.attacks.epsilon.selection.binning import SignCountBins

    rng = np.random.default_rng(3)
    n, k, b = 60_000, 20, 20.0
    F_D, F_Dp = rng.laplace(0.0, b, (n, k)), rng.laplace(1.0, b, (n, k))
    names = [f"v[{j}]" for j in range(k)]
    sel = select_event(F_D, F_Dp, names, n_cert=10 * n, alpha=0.05, delta=0.0, classifier=None, cells=True)
    assert sel.event.kind == "sign count", sel.event.describe()["text"]
    stat = SignCountBins.fit("sign count(v)", "v[j]", list(range(k)), F_D[:5000], F_Dp[:5000], signed=False,
                             sign_se=3.0, clear_se=3.0)
    assert set(np.unique(stat.score(F_D[:100]))) <= set(np.arange(k + 1, dtype=float))


def test_signed_sign_counts_follow_each_coordinates_direction_and_handle_bits():
    """Bits that flip with probability 0.45 vs 0.55 on some positions and not others (RAPPOR-like): the
    signed count keeps the moved positions with their direction and drops the rest."""
    from dpaudit.attacks.epsilon.selection.binning import SignCountBins

    rng = np.random.default_rng(4)
    n = 40_000
    p_D = np.array([0.45, 0.55, 0.5, 0.5, 0.45, 0.5])
    p_Dp = np.array([0.55, 0.45, 0.5, 0.5, 0.55, 0.5])
    T_D = (rng.random((n, 6)) < p_D).astype(float)
    T_Dp = (rng.random((n, 6)) < p_Dp).astype(float)
    stat = SignCountBins.fit("sign count(v, signed)", "v[j]", list(range(6)), T_D, T_Dp, signed=True, sign_se=3.0,
                             clear_se=3.0)
    assert list(stat.signs) == [-1.0, 1.0, 0.0, 0.0, -1.0, 0.0]
    assert stat.needs == frozenset({0, 1, 4})
    s_D, s_Dp = stat.score(T_D), stat.score(T_Dp)
    assert s_Dp.mean() < s_D.mean()


def test_lenient_signed_count_keeps_weak_consistent_moves():
    """Ten bits, five moved up and five down by 0.0125 between D and D′ (a sparse vector without cut-off
    at ε = 0.1): on 25 000 training releases each move is t ≈ 2.8 s.e. (s.e. √(2·¼/25 000)), so the clear
    rule (3 s.e.) keeps only some of them and the lenient rule (1 s.e.) keeps all with the right direction
    — P(|t̂| ≤ 1) ≈ 0.04 each, P(wrong sign) ≈ 0.003, and this seed has none of either."""
    from dpaudit.attacks.epsilon.selection.binning import SignCountBins
    from dpaudit.attacks.epsilon.selection.evidence import SIGN_SE_CLEAR, SIGN_SE_LENIENT

    rng = np.random.default_rng(21)
    n = 25_000
    p_D = np.array([0.5 + 0.00625] * 5 + [0.5 - 0.00625] * 5)
    p_Dp = 1.0 - p_D
    T_D = (rng.random((n, 10)) < p_D).astype(float)
    T_Dp = (rng.random((n, 10)) < p_Dp).astype(float)
    clear = SignCountBins.fit("clear", "v[j]", list(range(10)), T_D, T_Dp, signed=True, sign_se=SIGN_SE_CLEAR,
                              clear_se=SIGN_SE_CLEAR)
    lenient = SignCountBins.fit("lenient", "v[j]", list(range(10)), T_D, T_Dp, signed=True, sign_se=SIGN_SE_LENIENT,
                                clear_se=SIGN_SE_CLEAR)
    assert list(lenient.signs) == [1.0] * 5 + [-1.0] * 5
    assert clear is None or np.count_nonzero(clear.signs) < 10
    assert "1 s.e." in lenient.label
