"""Distinguishing events and their selection on a *selection* sample — the
*tester*'s first half (the second, certification on fresh samples, is in
:mod:`attacks.epsilon`).

An event is a threshold on one statistic of the release features:
S = {s(F(release)) ≥ t} or {s ≤ t}, where s is either one feature column (a
"direct statistic": for a 1-D output whose likelihood ratio is monotone a
threshold on the output is optimal) or the score of a scikit-learn
classifier trained to tell releases on D from releases on D′ (DP-Sniper,
Bichsel et al., S&P 2021: the optimal event is a threshold on the likelihood
ratio, which a probabilistic classifier approximates).  The event also says
which dataset it favours: p is P[M(favoured) ∈ S], q the other one.

Selection scores every candidate by the bound it is *expected* to certify
with ``n_cert`` fresh samples: the selection frequencies are replaced by their
one-sided Clopper–Pearson limits at level :data:`SELECTION_ALPHA` (lower for
p, upper for q — a guard against picking a rare event whose ratio is high
by chance), scaled to ``n_cert`` and passed through the same
Clopper–Pearson bound certification uses.  This prefers frequent events with
a large ratio over rare flukes.  Selection never touches the certification
sample, so its many comparisons cost no confidence (see :mod:`attacks.epsilon`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from typing import Any

import numpy as np

from .bounds import clopper_pearson, epsilon_from_counts

# One-sided level of the selection-sample limits that stand in for p and q when
# scoring candidates: conservative enough that a candidate's score is not
# driven by selection noise in rare events (the winner's curse of picking the
# best of many noisy ratios), loose enough to keep frequent events' scores close.
SELECTION_ALPHA = 0.1

__all__ = ["SELECTION_ALPHA", "SelectedEvent", "classifier_score", "ThresholdEvent", "best_threshold", "default_classifier", "select_event"]


@dataclass(frozen=True, eq=False)
class ThresholdEvent:
    """S = {statistic ≥ threshold} (``above``) or {statistic ≤ threshold}; favours D or D′."""

    statistic: str
    threshold: float
    above: bool
    favours: str  # "D" or "D'"
    column: int | None = None
    model: Any = None

    def scores(self, F: np.ndarray) -> np.ndarray:
        if self.model is not None:
            return classifier_score(self.model, F)
        return F[:, self.column]

    def __call__(self, F: np.ndarray) -> np.ndarray:
        s = self.scores(F)
        return s >= self.threshold if self.above else s <= self.threshold

    @property
    def in_record_space(self) -> bool:
        """Is the statistic a raw coordinate of the release (z[j], mean[j], nearest[j], v[j], ...)?

        Thresholds on such statistics can equal a record's value when the
        mechanism adds no noise, so reports withhold them.
        """
        return self.model is None and _RECORD_SPACE.match(self.statistic) is not None

    def describe(self, reveal: bool = False) -> dict[str, object]:
        """Evidence for reports; record-space thresholds are withheld unless ``reveal``."""
        op = "≥" if self.above else "≤"
        kind = "classifier score" if self.model is not None else "feature"
        hidden = self.in_record_space and not reveal
        shown = "<withheld: a value in the release's own space>" if hidden else f"{self.threshold:.6g}"
        return {"statistic": self.statistic, "kind": kind, "threshold": None if hidden else float(self.threshold),
                "direction": op, "favours": self.favours,
                "text": f"{self.statistic} {op} {shown} (more likely on {self.favours})"}


@dataclass(frozen=True)
class SelectedEvent:
    event: ThresholdEvent
    predicted: float          # expected certified ε (raw, before the pair's scale)
    selection_counts: tuple[int, int, int]  # (k favoured, k other, n per side) on the selection sample
    candidates_scored: int = 0
    per_statistic: dict[str, float] = field(default_factory=dict)


def classifier_score(model: Any, F: np.ndarray) -> np.ndarray:
    """The classifier's score for "released on D": ``decision_function``, else the log-odds of
    ``predict_proba`` (e.g. an MLP, DP-Sniper's other model)."""
    if hasattr(model, "decision_function"):
        return np.asarray(model.decision_function(F), dtype=np.float64)
    proba = np.clip(np.asarray(model.predict_proba(F), dtype=np.float64)[:, 1], 1e-12, 1 - 1e-12)
    return np.log(proba) - np.log1p(-proba)


def default_classifier() -> Any:
    """Standardised logistic regression (DP-Sniper's default model family)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=500))


_EXACT_TOP = 48
_RECORD_SPACE = re.compile(r"^(z|mean|nearest|centre_mean|v)\[")


def _wilson(k: np.ndarray, n: float, z: float, upper: bool) -> np.ndarray:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre + half if upper else np.maximum(centre - half, 0.0)


def _approx_score(kp: np.ndarray, kq: np.ndarray, n: int, n_cert: int, alpha: float, delta: float) -> np.ndarray:
    """Cheap stand-in for the exact selection score (Wilson limits at both stages)."""
    from scipy.special import ndtri

    z_sel, z_cert = float(ndtri(1 - SELECTION_ALPHA)), float(ndtri(1 - alpha / 2))
    p = _wilson(kp, n, z_sel, upper=False)
    q = _wilson(kq, n, z_sel, upper=True)
    p = _wilson(p * n_cert, n_cert, z_cert, upper=False) - delta
    q = _wilson(q * n_cert, n_cert, z_cert, upper=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((p > 0) & (q > 0), np.log(p / q), -np.inf)


def _levels(n: int) -> np.ndarray:
    """Quantile levels: a uniform grid plus geometric tails down to ~5/n."""
    grid = np.linspace(0.0, 1.0, 129)
    tail = 5.0 * 2.0 ** np.arange(0, 40) / max(n, 1)
    tail = tail[tail < 0.02]
    return np.unique(np.concatenate([grid, tail, 1.0 - tail]))


def best_threshold(s_D: np.ndarray, s_Dp: np.ndarray, *, n_cert: int, alpha: float, delta: float,
                   min_count: int = 5) -> tuple[float, float, bool, str, int, int]:
    """Best threshold event on one statistic; returns (predicted ε, t, above, favours, k_fav, k_other).

    ``s_D`` and ``s_Dp`` hold the statistic on the same number n of releases
    of D and of D′.  Four orientations are scored for each threshold t taken
    from quantiles of the pooled sample.
    """
    n = len(s_D)
    sD, sDp = np.sort(s_D), np.sort(s_Dp)
    pooled = np.concatenate([sD, sDp])
    ts = np.unique(np.quantile(pooled, _levels(2 * n), method="inverted_cdf"))
    ge_D = n - np.searchsorted(sD, ts, side="left")
    ge_Dp = n - np.searchsorted(sDp, ts, side="left")
    le_D = np.searchsorted(sD, ts, side="right")
    le_Dp = np.searchsorted(sDp, ts, side="right")
    combos = [(ge_D, ge_Dp, True, "D"), (ge_Dp, ge_D, True, "D'"),
              (le_D, le_Dp, False, "D"), (le_Dp, le_D, False, "D'")]
    kp = np.concatenate([c[0] for c in combos]).astype(float)
    kq = np.concatenate([c[1] for c in combos]).astype(float)
    ok = np.flatnonzero(kp >= min_count)
    if ok.size == 0:
        ok = np.arange(kp.size)
    # Exact Clopper–Pearson is costly; rank with a Wilson-score approximation first
    # and score only the most promising thresholds exactly.
    if ok.size > _EXACT_TOP:
        approx = _approx_score(kp[ok], kq[ok], n, n_cert, alpha, delta)
        ok = ok[np.argsort(-approx, kind="stable")[:_EXACT_TOP]]
    p_sel, _ = clopper_pearson(kp[ok], n, SELECTION_ALPHA, side="lower")
    _, q_sel = clopper_pearson(kq[ok], n, SELECTION_ALPHA, side="upper")
    pred = epsilon_from_counts(p_sel * n_cert, n_cert, q_sel * n_cert, n_cert, alpha=alpha, delta=delta)
    pred = np.where(kp[ok] >= min_count, pred, -np.inf)
    j = int(ok[int(np.argmax(pred))])
    best_pred = float(np.max(pred))
    c, i = divmod(j, len(ts))
    _, _, above, favours = combos[c]
    return best_pred, float(ts[i]), above, favours, int(kp[j]), int(kq[j])


def select_event(F_D: np.ndarray, F_Dp: np.ndarray, names: list[str], *, n_cert: int, alpha: float,
                 delta: float, classifier: Any = "logistic", max_train: int = 100_000) -> SelectedEvent:
    """The event with the best expected certified bound, among direct statistics and a classifier score.

    ``alpha`` is the per-direction level certification will use.  The
    classifier is trained on the first half of each sample and its threshold
    chosen on the second half (DP-Sniper's split), so its predicted bound is
    not flattered by overfitting; direct statistics use the whole sample.
    """
    n = min(len(F_D), len(F_Dp))
    F_D, F_Dp = F_D[:n], F_Dp[:n]
    best: SelectedEvent | None = None
    per_stat: dict[str, float] = {}
    scored = 0
    for j, name in enumerate(names):
        if np.ptp(F_D[:, j]) == 0 and np.ptp(F_Dp[:, j]) == 0 and F_D[0, j] == F_Dp[0, j]:
            continue  # constant and equal on both sides: no event here
        pred, t, above, fav, kf, ko = best_threshold(F_D[:, j], F_Dp[:, j], n_cert=n_cert, alpha=alpha,
                                                     delta=delta)
        scored += 1
        per_stat[name] = pred
        if best is None or pred > best.predicted:
            best = SelectedEvent(ThresholdEvent(name, t, above, fav, column=j), pred, (kf, ko, n))
    if classifier is not None and classifier != "none" and n >= 40 and F_D.shape[1] > 1:
        from sklearn.base import clone

        model = default_classifier() if classifier == "logistic" else clone(classifier)
        half = n // 2
        m = min(half, max_train)
        Xtr = np.vstack([F_D[:m], F_Dp[:m]])
        ytr = np.concatenate([np.ones(m), np.zeros(m)])
        try:
            model.fit(Xtr, ytr)
            sD = classifier_score(model, F_D[half:])
            sDp = classifier_score(model, F_Dp[half:])
        except ValueError:  # e.g. a classifier that cannot fit these features
            model = None
        if model is not None:
            pred, t, above, fav, kf, ko = best_threshold(sD, sDp, n_cert=n_cert, alpha=alpha, delta=delta)
            scored += 1
            per_stat["classifier"] = pred
            if best is None or pred > best.predicted:
                best = SelectedEvent(ThresholdEvent("classifier", t, above, fav, model=model), pred,
                                     (kf, ko, len(sD)))
    if best is None:  # every feature constant and equal: nothing distinguishes D from D′
        ev = ThresholdEvent(names[0] if names else "none", 0.0, True, "D", column=0)
        best = SelectedEvent(ev, 0.0, (0, 0, n))
    return SelectedEvent(best.event, best.predicted, best.selection_counts, scored, per_stat)
