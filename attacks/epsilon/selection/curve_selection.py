"""Choosing the event for a claim stated in a notion: the one whose certified point lies furthest below the curve.

A claim in a notion (ρ-zCDP, μ-GDP, Rényi DP, a privacy profile; :mod:`dpaudit.mechanisms.notions`) is violated
when the certified point (FPR_hi, FNR_hi) of the selected event lies below the claim's trade-off curve f
(:mod:`dpaudit.attacks.epsilon.certification.tradeoff`; Dong, Roth & Su 2022, Def. 2.1).  The event best for ε at the
claim's one δ is not that event: a frequent event whose rates sit where f bends (a Gaussian's μ, a zCDP claim's
middle of the curve) can lie far below f while its ln((p − δ)/q) stays under the point's ε.  So for such a
claim, candidates are ranked by the gap f(FPR_hi) − FNR_hi they are expected to certify, **relative** to the
advantage the claim allows at that false-positive rate:

    relative gap = (f(FPR_hi) − FNR_hi) / (1 − FPR_hi − f(FPR_hi)),

which has the gap's sign (> 0: a violation predicted) and is about −1 or less for the trivial tests (an event
never or always seen, near where f meets 1 − x).  The plain gap tends to 0 there too, so where nothing is violated — a
correct claim, or a first round on a small sample — it would rank the trivial events first (a certified μ of 0);
the relative gap ranks by how much of the allowed advantage an event uses, so an informative event wins.  The
rates arepredicted as :func:`~dpaudit.attacks.epsilon.selection.events.predicted_bound` predicts p_lo and q_hi: the selection sample's own one-sided Clopper–Pearson limits (FNR upper, FPR upper at ``level`` — lower
for the optimistic prediction) carried to ``n_cert`` releases per side and put through the certification's own
limits (:func:`~dpaudit.attacks.epsilon.certification.tradeoff.certify_rates`, split ``q_share``).  Weak candidates still
rank among themselves (the relative gap is signed).

**Soundness.**  Only the *ranking* changes: every number here comes from selection releases, and the chosen
pair, event, favoured dataset, q share and statement (always the two-limit one, whose limits the curve verdict
reads) are fixed before any certification release is drawn.  Certification, the one statement per run and its
split of α (:func:`~dpaudit.attacks.epsilon.certification.curve_verdict.split_alpha`) are unchanged, so the curve verdict
keeps its level (:mod:`dpaudit.attacks.epsilon.certification.curve_verdict`).  A claim stated as (ε, δ) is ranked by its ε
bound exactly as before; nothing here is called for it.

**The Rényi statement.**  For binned releases the Rényi bound (:mod:`dpaudit.attacks.epsilon.certification.renyi`) is the
largest binary Rényi divergence over coarsenings of the event's cells into an event and its complement.  For a
binary coarsening, the Rényi constraints at every order and the claim's curve say the same thing: the zCDP and
Rényi curves are the optimal conversion of those constraints to a trade-off curve (Zhu, Dong & Wang 2022,
App. F.1, as ``riskcal`` computes them), so the coarsening that most exceeds ρ·α (or ε(α)) is, up to the limits'
widths, the event furthest below f.  Ranking by the curve gap therefore also picks the statistic whose cells
carry the Rényi statement; no second ranking is made.

**The curve in the ranking.**  Some curves are slow to evaluate (``riskcal``'s zCDP curve takes ~2 ms a
point), and selection scores hundreds of cuts per round, so the ranking reads f off a table
(:func:`curve_table`, computed once per notion on :data:`TABLE_GRID`, linear in log FPR between its points).
The certified verdict always evaluates f itself.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dpaudit.mechanisms.notions import Notion

from ...bounds import clopper_pearson
from .events import SELECTION_ALPHA, CutCandidate, selection_rates

__all__ = ["CURVE_TIER", "TABLE_GRID", "curve_cut", "curve_table", "gap_predictions", "gap_statement", "predicted_gap",
           "scaled_rank"]

# The false-positive rates the ranking's table of f is computed at: dense in log scale near 0, where curves bend.
TABLE_GRID: tuple[float, ...] = tuple(float(x) for x in np.unique(np.concatenate([
    np.geomspace(1e-9, 0.02, 120), np.linspace(0.02, 1.0, 100)])))
ALLOWED_FLOOR = 1e-9  # the least advantage 1 − x − f(x) a relative gap is divided by (f meets 1 − x at its ends)
CURVE_TIER = 4  # the tier (after the frequency tiers of events.cut_candidates) of each order's best cut by gap


@functools.lru_cache(maxsize=16)
def _table(notion: Notion) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(TABLE_GRID)
    return np.log(x), np.asarray(notion.tradeoff(x), dtype=float)


def curve_table(notion: Notion, fpr: Any) -> np.ndarray:
    """f(``fpr``) read off the notion's table (module doc): for ranking only, never for a verdict."""
    log_x, f = _table(notion)
    x = np.clip(np.asarray(fpr, dtype=float), np.exp(log_x[0]), 1.0)
    return np.interp(np.log(x), log_x, f)


def predicted_gap(k_fav: Any, k_other: Any, m: Any, n_cert: int, notion: Notion, *, alpha: float,
                  q_share: Any = 0.5, level: Any = SELECTION_ALPHA, conservative: bool = True,
                  optimistic: bool = False, m_other: Any = None) -> np.ndarray:
    """The relative gap (module doc) an event seen ``k_fav``/``k_other`` times in ``m``/``m_other`` releases of its
    favoured/other dataset is expected to certify with ``n_cert`` fresh releases per side (module doc).

    The frequencies are replaced by their selection limits at ``level`` (FPR upper and FNR upper; with
    ``optimistic``, the other ends; with ``conservative`` false, the frequencies themselves), carried to
    ``n_cert`` and limited as certification limits them (FPR_hi at α·``q_share``, FNR_hi at α·(1 − ``q_share``);
    :func:`~dpaudit.attacks.epsilon.certification.tradeoff.certify_rates`).  Only a ranking: nothing here is certified."""
    k_fav, k_other = np.asarray(k_fav, dtype=float), np.asarray(k_other, dtype=float)
    m_fav = np.asarray(m, dtype=float)
    m_oth = m_fav if m_other is None else np.asarray(m_other, dtype=float)
    p_sel, q_sel = selection_rates(k_fav, m_fav, k_other, m_oth, level=level, conservative=conservative,
                                   optimistic=optimistic)
    q_share = np.asarray(q_share, dtype=float)
    _, fpr_hi = clopper_pearson(np.asarray(q_sel) * n_cert, n_cert, alpha * q_share, side="upper")
    _, fnr_hi = clopper_pearson((1.0 - np.asarray(p_sel)) * n_cert, n_cert, alpha * (1.0 - q_share), side="upper")
    fpr_hi, f = np.asarray(fpr_hi, dtype=float), curve_table(notion, fpr_hi)
    allowed = np.maximum(1.0 - fpr_hi - f, ALLOWED_FLOOR)
    return (f - np.asarray(fnr_hi, dtype=float)) / allowed


def gap_predictions(k_fav: np.ndarray, k_oth: np.ndarray, m_fav: np.ndarray, m_oth: np.ndarray, n_cert: int,
                    notion: Notion, *, alpha: float, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every candidate's (conservative, optimistic, plain-level) predicted gap: at the selection limits at
    ``level``, at their other ends, and at :data:`~dpaudit.attacks.epsilon.selection.events.SELECTION_ALPHA`."""
    common: dict[str, Any] = dict(alpha=alpha, m_other=m_oth)
    return (predicted_gap(k_fav, k_oth, m_fav, n_cert, notion, level=level, **common),
            predicted_gap(k_fav, k_oth, m_fav, n_cert, notion, level=level, optimistic=True, **common),
            predicted_gap(k_fav, k_oth, m_fav, n_cert, notion, **common))


def gap_statement(k_fav: int, k_oth: int, m_fav: int, m_oth: int, n_cert: int, notion: Notion, *, alpha: float,
                  level: float, shares: Any) -> tuple[float, float, float]:
    """(q share, conservative gap, optimistic gap) of the chosen event under the two-limit statement: the split of
    α between FPR_hi and FNR_hi (one of ``shares``) that the selection's frequencies predict the largest gap for,
    and the predictions at ``level`` under it."""
    shares = np.asarray(shares, dtype=float)
    gaps = predicted_gap(k_fav, k_oth, m_fav, n_cert, notion, alpha=alpha, q_share=shares, conservative=False,
                         m_other=m_oth)
    q_share = float(shares[int(np.argmax(gaps))]) if np.all(np.isfinite(gaps)) else 0.5
    common: dict[str, Any] = dict(alpha=alpha, q_share=q_share, level=level, m_other=m_oth)
    return (q_share, float(predicted_gap(k_fav, k_oth, m_fav, n_cert, notion, **common)),
            float(predicted_gap(k_fav, k_oth, m_fav, n_cert, notion, optimistic=True, **common)))


def curve_cut(c_D: np.ndarray, c_Dp: np.ndarray, notion: Notion, *, n_cert: int, alpha: float,
              min_count: int = 5) -> CutCandidate | None:
    """The cut of one order of bins (counts of D and D′ bin by bin, on the choosing part) with the largest
    predicted gap, in any of the four orientations of :func:`~dpaudit.attacks.epsilon.selection.events.cut_candidates`,
    as a candidate of tier :data:`CURVE_TIER`; None when the order has fewer than two bins or a side is empty."""
    c_D, c_Dp = np.asarray(c_D, dtype=float), np.asarray(c_Dp, dtype=float)
    n_D, n_Dp = float(c_D.sum()), float(c_Dp.sum())
    if c_D.size < 2 or n_D <= 0 or n_Dp <= 0:
        return None
    below_D, below_Dp = np.cumsum(c_D)[:-1], np.cumsum(c_Dp)[:-1]
    combos = [(n_D - below_D, n_Dp - below_Dp, True, "D", n_D, n_Dp),
              (n_Dp - below_Dp, n_D - below_D, True, "D'", n_Dp, n_D),
              (below_D, below_Dp, False, "D", n_D, n_Dp), (below_Dp, below_D, False, "D'", n_Dp, n_D)]
    kp, kq = np.concatenate([c[0] for c in combos]), np.concatenate([c[1] for c in combos])
    n_p = np.repeat([c[4] for c in combos], below_D.size)
    n_q = np.repeat([c[5] for c in combos], below_D.size)
    ok = kp >= min_count
    if not np.any(ok):
        ok = np.ones_like(ok)
    gaps = np.where(ok, predicted_gap(kp, kq, n_p, n_cert, notion, alpha=alpha, m_other=n_q), -np.inf)
    j = int(np.argmax(gaps))
    c, i = divmod(j, below_D.size)
    _, _, above, favours, _, _ = combos[c]
    return CutCandidate(float(gaps[j]), i + 1, above, favours, int(kp[j]), int(kq[j]), CURVE_TIER)


def scaled_rank(value: float, scale: float) -> float:
    """A predicted relative gap as the pair search ranks it: as it is on an unscaled pair; on a scaled one (a
    replace pair under an add-remove claim), whose curve is a one-step statement that is not made
    (:func:`~dpaudit.attacks.epsilon.result.curve_result.curve_report`), below 0 and below every unscaled pair's that
    is above −1 (the score of an event as weak as the whole space)."""
    return value if scale == 1.0 else min(value, 0.0) - 1.0 - abs(value)
