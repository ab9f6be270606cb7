"""Distinguishing events and how they are scored before certification.

An event S is a set of releases, defined on their features F: a threshold
{s(F) ≥ t} / {s(F) ≤ t} on a statistic (:class:`ThresholdEvent`), or a set
of bins of a binned statistic (:class:`BinEvent`, :mod:`dpaudit.attacks.epsilon.selection.binning`) —
a threshold in the bins' value order, or the cells with the highest (or
lowest) likelihood ratio.  The event also says which dataset it favours: p is
P[M(favoured) ∈ S], q the other one.  Orientation covers the complement: the
complement of {s ≥ t} favouring D is {s < t} favouring D′, one of the four
orientations scored for every cut (:func:`cut_candidates`).

Candidates are scored by the bound they are *expected* to certify with
``n_cert`` fresh samples (:func:`predicted_bound`): the observed frequencies
are replaced by their one-sided Clopper–Pearson limits at level
:data:`SELECTION_ALPHA` (lower for p, upper for q — a guard against a rare
event whose ratio is high by chance), scaled to ``n_cert`` and passed through
the same Clopper–Pearson bound certification uses.  Choosing among candidates
never touches the certification sample, so it costs no confidence (see
:mod:`dpaudit.attacks.epsilon`); which part of the *selection* sample chooses and
which validates is :mod:`dpaudit.attacks.epsilon.selection.selection`'s business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...bounds import RATE_RATIO, TWO_LIMITS, clopper_pearson, epsilon_rate_ratio
from .binning import Binning, ColumnBins, ScoreBins, classifier_score

__all__ = ["SELECTION_ALPHA", "BinEvent", "CutCandidate", "ThresholdEvent", "cut_candidates", "predicted_bound",
           "ratio_event", "selection_rates", "value_event"]

# One-sided level of the selection-sample limits that stand in for p and q when
# scoring candidates: conservative enough that a candidate's score is not
# driven by selection noise in rare events (the winner's curse of picking the
# best of many noisy ratios), loose enough to keep frequent events' scores close.
SELECTION_ALPHA = 0.1

# Frequency tiers (share of the favoured side's sample in the event): the best
# threshold of *each* tier goes on to validation, so a frequent, solid event is
# never crowded out by a rare one that looked better on the choosing sample.
_TIERS = (0.1, 0.01, 0.001, 0.0)
_RECORD_SPACE = re.compile(r"^(z|mean|nearest|centre_mean|centre_min|centre_max|v|dv|tail)\[|^(sum|min|max)$")


@dataclass(frozen=True, eq=False)
class ThresholdEvent:
    """S = {statistic ≥ threshold} (``above``) or {statistic ≤ threshold}; favours D or D′.

    The statistic is feature column ``column`` or, when ``model`` is set, a
    fitted statistic (anything with ``scores(F)``; a bare scikit-learn
    classifier is scored by :func:`classifier_score`).
    """

    statistic: str
    threshold: float
    above: bool
    favours: str  # "D" or "D'"
    column: int | None = None
    model: Any = None

    def scores(self, F: np.ndarray) -> np.ndarray:
        if self.model is None:
            return F[:, self.column]
        if hasattr(self.model, "scores"):
            return self.model.scores(F)
        return classifier_score(self.model, F)

    def __call__(self, F: np.ndarray) -> np.ndarray:
        s = self.scores(F)
        return s >= self.threshold if self.above else s <= self.threshold

    @property
    def needs(self) -> frozenset[int] | None:
        """The feature columns the event reads (None: all)."""
        return frozenset({self.column}) if self.model is None and self.column is not None else None

    @property
    def kind(self) -> str:
        if self.model is None:
            return "feature"
        return getattr(self.model, "kind", "classifier score")

    @property
    def in_record_space(self) -> bool:
        """Is the threshold in the release's own value space (z[j], mean[j], nearest[j], v[j], a vector's
        sum/min/max, ...)?

        Thresholds on such statistics can equal a record's value when the
        mechanism adds no noise, so reports withhold them.  Fitted statistics
        are thresholded on a score (a log-odds or log-ratio), never on a value
        of the release; the cells and atoms they are built from are never shown.
        """
        return self.model is None and _RECORD_SPACE.match(self.statistic) is not None

    def describe(self, reveal: bool = False) -> dict[str, object]:
        """Evidence for reports; record-space thresholds are withheld unless ``reveal``."""
        op = "≥" if self.above else "≤"
        hidden = self.in_record_space and not reveal
        shown = "<withheld: a value in the release's own space>" if hidden else f"{self.threshold:.6g}"
        what = self.statistic if self.model is None else getattr(self.model, "label", self.statistic)
        return {"statistic": self.statistic, "kind": self.kind, "threshold": None if hidden else float(self.threshold),
                "direction": op, "favours": self.favours,
                "text": f"{what} {op} {shown} (more likely on {self.favours})"}


# --------------------------------------------------------------------------- #
# Scoring
# --------------------------------------------------------------------------- #
def _signed_log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((num > 0) & (den > 0), np.log(np.maximum(num, 1e-300) / np.maximum(den, 1e-300)), -np.inf)


def selection_rates(k_fav: Any, m_fav: Any, k_other: Any, m_other: Any, *, level: Any, conservative: bool = True,
                    optimistic: bool = False) -> tuple[Any, Any]:
    """(p, q) a prediction starts from: the favoured and other frequencies' Clopper–Pearson limits at ``level``
    on the selection sample — p's lower and q's upper (``conservative``), the other ends (``optimistic``: what
    the event might do at most), or the frequencies themselves."""
    if optimistic:
        _, p_sel = clopper_pearson(k_fav, m_fav, level, side="upper")
        q_sel, _ = clopper_pearson(k_other, m_other, level, side="lower")
    elif conservative:
        p_sel, _ = clopper_pearson(k_fav, m_fav, level, side="lower")
        _, q_sel = clopper_pearson(k_other, m_other, level, side="upper")
    else:
        p_sel, q_sel = k_fav / m_fav, k_other / m_other
    return p_sel, q_sel


def predicted_bound(k_fav: np.ndarray | float, k_other: np.ndarray | float, m: np.ndarray | int, n_cert: int, *,
                    alpha: float, delta: float, q_share: float | np.ndarray = 0.5, conservative: bool = True,
                    level: float | np.ndarray = SELECTION_ALPHA, statement: str = TWO_LIMITS,
                    optimistic: bool = False, m_other: np.ndarray | int | None = None) -> np.ndarray:
    """The bound an event seen ``k_fav`` / ``k_other`` times in ``m`` releases per side is
    expected to certify with ``n_cert`` fresh releases per side.

    p and q are replaced by their one-sided Clopper–Pearson limits at
    ``level`` (default :data:`SELECTION_ALPHA`; callers comparing K candidates
    pass SELECTION_ALPHA/K, so the limits hold for all of them at once and the
    best of many rare events is not flattered) on this sample (lower for p,
    upper for q), scaled to
    ``n_cert`` releases, and put through certification's own bound
    (:func:`~dpaudit.attacks.bounds.epsilon_one_statement`, split ``q_share``), but
    *signed*: ln((p_lo − δ)/q_hi) may be negative (or −∞), so weak candidates
    still rank among themselves.  Only a ranking: nothing here is certified.
    ``conservative=False`` uses the frequencies themselves (for choosing the
    split of α, a trade-off of certification alone).  ``statement=RATE_RATIO``
    predicts :func:`~dpaudit.attacks.bounds.epsilon_rate_ratio` instead (δ = 0 only;
    ``q_share`` unused), and guards the selection sample the same way: one
    Clopper–Pearson limit at ``level`` on the favoured side's share
    k_fav/(k_fav + k_other) (the conditional binomial of two Poisson rates)
    instead of one limit on each frequency — the same guard against a lucky
    ratio, without paying for it twice on rare events.  ``optimistic=True`` takes the other ends of the
    selection limits (p's upper, q's lower): what the event might certify at
    most.  ``m`` is the favoured side's sample size, ``m_other`` the other's (default ``m``).
    """
    k_fav = np.asarray(k_fav, dtype=float)
    k_other = np.asarray(k_other, dtype=float)
    m_fav = np.asarray(m, dtype=float)
    m_oth = m_fav if m_other is None else np.asarray(m_other, dtype=float)
    if statement == RATE_RATIO:
        return _rate_ratio_prediction(k_fav, k_other, m_fav, m_oth, n_cert, alpha=alpha, level=level,
                                      conservative=conservative, optimistic=optimistic)
    p_sel, q_sel = selection_rates(k_fav, m_fav, k_other, m_oth, level=level, conservative=conservative,
                                   optimistic=optimistic)
    q_share = np.asarray(q_share, dtype=float)
    p_lo, _ = clopper_pearson(p_sel * n_cert, n_cert, alpha * (1.0 - q_share), side="lower")
    _, q_hi = clopper_pearson(q_sel * n_cert, n_cert, alpha * q_share, side="upper")
    return _signed_log_ratio(p_lo - delta, q_hi)


def _rate_ratio_prediction(k_fav: np.ndarray, k_other: np.ndarray, m_fav: np.ndarray, m_oth: np.ndarray,
                           n_cert: int, *, alpha: float, level: float | np.ndarray, conservative: bool,
                           optimistic: bool) -> np.ndarray:
    """:func:`predicted_bound` for the rate-ratio statement (see there)."""
    # Rates per release on each side; the favoured share θ = p/(p + q) of their sum.
    rate_fav, rate_oth = k_fav / m_fav, k_other / m_oth
    total = rate_fav + rate_oth
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(total > 0, rate_fav / np.where(total > 0, total, 1.0), 0.0)
    if optimistic or conservative:
        k = k_fav + k_other
        lo, hi = clopper_pearson(k_fav, np.maximum(k, 1.0), level, side="upper" if optimistic else "lower")
        # the limit on the share of the counts, moved to the share of the rates (unequal sample sizes)
        bound = hi if optimistic else lo
        with np.errstate(divide="ignore", invalid="ignore"):
            odds = bound / np.maximum(1.0 - bound, 1e-300) * (m_oth / m_fav)
            theta = np.where(k > 0, odds / (1.0 + odds), theta)
    expected = total * n_cert  # events expected in both certification samples together
    return epsilon_rate_ratio(theta * expected, (1.0 - theta) * expected, alpha=alpha, signed=True)


def _wilson(k: np.ndarray, n: np.ndarray | float, z: float, upper: bool) -> np.ndarray:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre + half if upper else np.maximum(centre - half, 0.0)


def _approx_score(kp: np.ndarray, kq: np.ndarray, n_p: np.ndarray, n_q: np.ndarray, n_cert: int, alpha: float,
                  delta: float) -> np.ndarray:
    """Cheap stand-in for :func:`predicted_bound` (Wilson limits at both stages), to rank many cuts."""
    from scipy.special import ndtri

    z_sel, z_cert = float(ndtri(1 - SELECTION_ALPHA)), float(ndtri(1 - alpha / 2))
    p = _wilson(kp, n_p, z_sel, upper=False)
    q = _wilson(kq, n_q, z_sel, upper=True)
    p = _wilson(p * n_cert, n_cert, z_cert, upper=False) - delta
    q = _wilson(q * n_cert, n_cert, z_cert, upper=True)
    return _signed_log_ratio(p, q)


@dataclass(frozen=True)
class CutCandidate:
    """One cut of an order of bins: the bins from ``cut`` on (``above``) or before it, favouring ``favours``,
    with its approximate score and counts on the sample that chose it."""

    approx: float
    cut: int
    above: bool
    favours: str
    k_fav: int
    k_other: int
    tier: int = 0     # index into the frequency tiers (:data:`_TIERS`)


def cut_candidates(c_D: np.ndarray, c_Dp: np.ndarray, *, n_cert: int, alpha: float, delta: float,
                   min_count: int = 5) -> list[CutCandidate]:
    """The best cut per frequency tier of one order of bins, best first, from the choosing counts.

    ``c_D`` and ``c_Dp`` hold, bin by bin in the order, how many releases of
    D and of D′ fell there.  Every cut (the first c bins, or the rest) is
    scored in four orientations (the bins after the cut or before it,
    favouring D or D′) by a Wilson-interval approximation of
    :func:`predicted_bound`; events seen fewer than ``min_count`` times on the
    favoured side are skipped (when any other is left).  For each tier of the
    favoured side's frequency (:data:`_TIERS`) the best is returned, so a
    frequent, solid event reaches validation as well as a rare one.
    """
    c_D = np.asarray(c_D, dtype=float)
    c_Dp = np.asarray(c_Dp, dtype=float)
    n_D, n_Dp = float(c_D.sum()), float(c_Dp.sum())
    if c_D.size < 2 or n_D <= 0 or n_Dp <= 0:
        return []
    below_D, below_Dp = np.cumsum(c_D)[:-1], np.cumsum(c_Dp)[:-1]  # the first c bins, c = 1 … n_bins − 1
    above_D, above_Dp = n_D - below_D, n_Dp - below_Dp
    combos = [(above_D, above_Dp, True, "D", n_D, n_Dp), (above_Dp, above_D, True, "D'", n_Dp, n_D),
              (below_D, below_Dp, False, "D", n_D, n_Dp), (below_Dp, below_D, False, "D'", n_Dp, n_D)]
    kp = np.concatenate([c[0] for c in combos])
    kq = np.concatenate([c[1] for c in combos])
    n_p = np.repeat([c[4] for c in combos], below_D.size)
    n_q = np.repeat([c[5] for c in combos], below_D.size)
    ok = kp >= min_count
    if not np.any(ok):
        ok = np.ones_like(ok)
    approx = np.where(ok, _approx_score(kp, kq, n_p, n_q, n_cert, alpha, delta), -np.inf)
    share = kp / n_p
    out: list[CutCandidate] = []
    upper = np.inf
    for tier, lower in enumerate(_TIERS):
        in_tier = np.flatnonzero(ok & (share >= lower) & (share < upper))
        upper = lower
        if in_tier.size:
            j = int(in_tier[np.argmax(approx[in_tier])])  # the first of equals: the earliest cut
            c, i = divmod(j, below_D.size)
            _, _, above, favours, _, _ = combos[c]
            out.append(CutCandidate(float(approx[j]), i + 1, above, favours, int(kp[j]), int(kq[j]), tier))
    out.sort(key=lambda c: -c.approx)
    return out


@dataclass(frozen=True, eq=False)
class BinEvent:
    """A set of bins of one binned statistic (:mod:`dpaudit.attacks.epsilon.selection.binning`), favouring D or D′.

    ``order`` is ``"value"`` (a threshold: ``op`` and ``threshold`` say
    which, ``members`` are the bins beyond it) or ``"ratio"`` (the cells whose
    fitted log-likelihood ratio is at least, or at most, ``threshold``).
    """

    binning: Binning
    members: np.ndarray   # bool, one per bin
    favours: str          # "D" or "D'"
    order: str            # "value" | "ratio"
    threshold: float
    op: str               # ≥, >, ≤, <
    ranking: np.ndarray | None = None  # ratio order: the bins by fitted log ratio, highest first

    def __call__(self, F: np.ndarray) -> np.ndarray:
        return self.members[self.binning.bins(F)]

    def curve_order(self) -> np.ndarray:
        """The bins in the order, fixed at selection, whose cuts are this event's family of thresholds, arranged so
        that the event is a run of bins at the high end (the trade-off curve's thresholds, :mod:`..certification.tradeoff`)."""
        order = np.arange(self.binning.n_bins) if self.order == "value" or self.ranking is None else self.ranking
        return order if self.members[order[-1]] else order[::-1]

    @property
    def needs(self) -> frozenset[int] | None:
        """The feature columns the event reads (None: all)."""
        return self.binning.needs

    @property
    def above(self) -> bool:
        return self.op in ("≥", ">")

    @property
    def statistic(self) -> str:
        return self.binning.name if self.order == "value" else self.binning.ratio_name

    @property
    def column(self) -> int | None:
        return self.binning.column if self.order == "value" else None

    @property
    def model(self) -> Binning:
        return self.binning

    @property
    def kind(self) -> str:
        return self.binning.value_kind if self.order == "value" else self.binning.ratio_kind

    @property
    def in_record_space(self) -> bool:
        """A threshold in the release's own value space (see :attr:`ThresholdEvent.in_record_space`)."""
        return (self.order == "value" and isinstance(self.binning, ColumnBins)
                and _RECORD_SPACE.match(self.binning.name) is not None)

    def describe(self, reveal: bool = False) -> dict[str, object]:
        """Evidence for reports; record-space thresholds are withheld unless ``reveal``."""
        hidden = self.in_record_space and not reveal
        shown = "<withheld: a value in the release's own space>" if hidden else f"{self.threshold:.6g}"
        what = self.binning.label if self.order == "value" else self.binning.ratio_label()
        return {"statistic": self.statistic, "kind": self.kind, "threshold": None if hidden else float(self.threshold),
                "direction": self.op, "favours": self.favours,
                "text": f"{what} {self.op} {shown} (more likely on {self.favours})"}


def value_event(binning: ScoreBins, cut: int, above: bool, favours: str) -> BinEvent:
    """The threshold event of a cut in ``binning``'s value order."""
    members = np.zeros(binning.n_bins, dtype=bool)
    members[cut:] = True
    if not above:
        members = ~members
    threshold, op = binning.cut(cut, above)
    return BinEvent(binning, members, favours, "value", threshold, op)


def ratio_event(binning: Binning, log_ratio: np.ndarray, order: np.ndarray, cut: int, above: bool,
                favours: str) -> BinEvent:
    """The cell event of a cut in the ratio order ``order`` (bins sorted by ``log_ratio``, highest first):
    the cells after the cut (``above``: the lowest ratios) or before it (the highest)."""
    members = np.zeros(binning.n_bins, dtype=bool)
    chosen = order[cut:] if above else order[:cut]
    members[chosen] = True
    if above:
        return BinEvent(binning, members, favours, "ratio", float(log_ratio[order[cut]]), "≤", order)
    return BinEvent(binning, members, favours, "ratio", float(log_ratio[order[cut - 1]]), "≥", order)
