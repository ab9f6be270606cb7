"""Joint events over structured releases (dpaudit.attacks.epsilon.selection.binning): where a sparse vector answers, and what.

Synthetic feature matrices in the vector layout (v[j] values, na[j] status), fixed seeds; the planted
effects are large enough that the checks hold with margins of many standard errors at these sizes.
"""

from __future__ import annotations

import numpy as np

from dpaudit.attacks.epsilon.selection.cells import AnswerBins, answer_groups
from dpaudit.attacks.epsilon.selection.selection import select_event

M = 4  # queries


def _cell_scores(stat, T_D: np.ndarray, T_Dp: np.ndarray):
    """The cells' smoothed log likelihood ratios counted on (T_D, T_Dp), as a score of rows."""
    c_D = np.bincount(stat.bins(T_D), minlength=stat.n_bins)
    c_Dp = np.bincount(stat.bins(T_Dp), minlength=stat.n_bins)
    log_ratio = np.log((c_D + 0.5) / (c_Dp + 0.5))
    return lambda F: log_ratio[stat.bins(F)]


def _names(m: int = M) -> list[str]:
    return [f"v[{j}]" for j in range(m)] + [f"na[{j}]" for j in range(m)]


def _releases(rng: np.random.Generator, n: int, late_shift: float) -> np.ndarray:
    """A c = 1 numerical sparse vector: the first answer at a uniform position, NaN (v 0, na 1) elsewhere;
    its value Laplace(0, 1) at positions 0–1 and Laplace(late_shift, 1) at positions 2–3."""
    pos = rng.integers(0, M, n)
    value = rng.laplace(0.0, 1.0, n) + np.where(pos >= 2, late_shift, 0.0)
    F = np.zeros((n, 2 * M))
    F[:, M:] = 1.0
    F[np.arange(n), pos] = value
    F[np.arange(n), M + pos] = 0.0
    return F


def test_answer_groups_pair_each_value_column_with_its_status():
    names = ["v[0]", "v[1]", "dv[1]", "na[0]", "na[1]", "sum"]
    assert answer_groups(names) == ([0, 1], [3, 4])
    assert answer_groups(["v[0]", "v[1]", "sum"]) == ([], [])  # never a missing entry: no status columns


def test_first_answer_cells_see_the_value_at_its_position():
    """D and D′ differ only in the value released at the late positions (+2 vs −2): the cells of the
    (position, value) pair put the late high values on D's side and the late low ones on D′'s, and leave
    the early positions (same law under both) near zero."""
    rng = np.random.default_rng(11)
    F_D, F_Dp = _releases(rng, 40_000, 2.0), _releases(rng, 40_000, -2.0)
    values, status = answer_groups(_names())
    stat = AnswerBins.fit(values, status, "first", F_D, F_Dp)
    assert stat is not None and stat.needs == frozenset(values + status)
    scores = _cell_scores(stat, F_D, F_Dp)
    test_D, test_Dp = _releases(rng, 20_000, 2.0), _releases(rng, 20_000, -2.0)
    s_D, s_Dp = scores(test_D), scores(test_Dp)
    late_D = test_D[:, M + 2] == 0
    early_D = (test_D[:, M] == 0) | (test_D[:, M + 1] == 0)
    assert s_D[late_D].mean() > 0.5 > -0.5 > s_Dp[test_Dp[:, M + 3] == 0].mean()
    assert abs(s_D[early_D].mean()) < 0.1  # the early positions carry no signal: their cells stay near 0
    # rows answering nothing fall in the position-0 ("none") cells
    none = np.zeros((3, 2 * M))
    none[:, M:] = 1.0
    assert np.all(np.isfinite(scores(none))) and np.all(stat.bins(none) < stat.offsets[1])


def test_scores_do_not_depend_on_row_order():
    rng = np.random.default_rng(12)
    F_D, F_Dp = _releases(rng, 10_000, 1.0), _releases(rng, 10_000, -1.0)
    values, status = answer_groups(_names())
    stat = AnswerBins.fit(values, status, "last", F_D, F_Dp)
    perm = rng.permutation(len(F_D))
    assert np.array_equal(stat.bins(F_D)[perm], stat.bins(F_D[perm]))


def test_cells_of_a_discrete_score_take_the_extremes_together():
    """A statistic with 5 values whose likelihood ratio is not monotone (D favours the extremes): in ratio
    order its bins are the values sorted by their ratio, so the chosen cell event is the union of the two
    extremes — which no threshold on the value is."""
    rng = np.random.default_rng(13)
    p_D, p_Dp = np.array([0.3, 0.1, 0.2, 0.1, 0.3]), np.array([0.1, 0.25, 0.3, 0.25, 0.1])
    F_D = rng.choice(5, size=(60_000, 1), p=p_D).astype(float)
    F_Dp = rng.choice(5, size=(60_000, 1), p=p_Dp).astype(float)
    sel = select_event(F_D, F_Dp, ["s"], n_cert=10 ** 6, alpha=0.05, delta=0.0, classifier=None)
    assert sel.event.kind == "cell ratio", sel.event.describe()["text"]
    taken = sel.event(np.arange(5.0)[:, None])
    if sel.event.favours == "D":
        assert taken[0] and taken[4] and not taken[2]
    else:
        assert taken[2] and not taken[0] and not taken[4]
    # the bound the extremes allow: ln(0.6/0.2) ≈ 1.1 (their joint ratio), far above any threshold's
    assert sel.predicted > 0.9


def test_selection_considers_the_joint_statistics_on_a_sparse_vector():
    rng = np.random.default_rng(14)
    F_D, F_Dp = _releases(rng, 30_000, 1.5), _releases(rng, 30_000, -1.5)
    sel = select_event(F_D, F_Dp, _names(), n_cert=300_000, alpha=0.05, delta=0.0, classifier=None)
    assert {"first answer", "last answer"} <= set(sel.per_statistic)
    assert sel.predicted > 0.5 and sel.optimistic >= sel.predicted
