"""Membership-attack metrics: ROC, AUC, TPR at low FPR, advantage, certified ε.

Every membership attack produces one score per queried record (higher = more
likely a member) and the membership truth (1 = member, 0 = non-member); see
:class:`MembershipScores`.  :func:`evaluate` turns scores into the numbers a
report shows:

* ROC, AUC and TPR at 1 %, 0.1 % and 0.01 % FPR (Carlini et al. 2022, "Membership
  inference attacks from first principles": report the low-FPR regime), only
  where the non-members resolve them: curves are cut at FPR 1/n_non-members
  and a TPR at FPR f needs ≥ ⌈1/f⌉ non-members, else it is ``None`` with a
  reason (:mod:`dpaudit.attacks.membership.roc`, which also gives Clopper–Pearson bands);
* member vs non-member score histograms and the most exposed members, by
  index only (:mod:`dpaudit.attacks.membership.exposure`);
* the membership advantage TPR − FPR (Yeom et al. 2018, Def. 4) **at a
  threshold chosen on other data** (shadow models / held-out calibration
  scores) and applied to the scored data.  The optimistic figure
  max_t (TPR − FPR) on the scored data itself is also returned, labelled
  ``advantage_same_data``; it is biased upwards and never the headline;
* the ε lower bound certified by *one release* (Steinke, Nasr & Jagielski,
  NeurIPS 2023, "Privacy Auditing with One (1) Training Run", Thm. 3.1):
  :func:`dpaudit.attacks.bounds.epsilon_one_run` of the number of correct
  member/non-member guesses at that threshold;
* the advantage ceiling (e^ε − 1)/(e^ε + 1) = tanh(ε/2) an ε-DP mechanism
  allows (Yeom et al. 2018, Thm. 1 tightened by Humphries et al. 2020).

The ε bound is a certificate only when the experiment is the one-run game:
each scored record's membership was an independent fair coin, the decision
threshold and the set of scored records were fixed without looking at those
coins (``dpaudit attack`` does both), and the claim is add/remove ε-DP with
the attacker seeing nothing but the release (:func:`one_run_comparison` says
when a bound may be compared with a claim).  Advantage, AUC and TPR at low
FPR are descriptive statistics of that one release.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

from dpaudit.mechanisms.base import InvalidInputError

from ..bounds import epsilon_one_run
from .abstain import choose_abstention, guess_counts, rank_guesses
from .exposure import ExposedRecord, ScoreHistogram, histogram_edges, most_exposed, score_histogram, summarise_exposure
from .roc import ROC_FPR_GRID, RocCounts, low_fpr_bands, pool_curves, resolves, roc_counts, unresolved_reason

__all__ = ["MembershipMetrics", "MembershipScores", "ROC_FPR_GRID", "aggregate", "best_threshold", "evaluate",
           "EPSILON_METHOD", "epsilon_method", "one_run_comparison", "rates_at", "tpr_at_fpr"]

DEFAULT_ALPHA = 0.05
# The low FPRs every membership attack reports a TPR at (field name, FPR).
LOW_FPRS: tuple[tuple[str, float], ...] = (("tpr_at_1pct_fpr", 0.01), ("tpr_at_0_1pct_fpr", 0.001),
                                           ("tpr_at_0_01pct_fpr", 0.0001))
EXPOSED_TOP = 10


@dataclass(frozen=True, eq=False)
class MembershipScores:
    """Per-record attack scores and membership truth.

    ``scores``: higher means "more likely a member".  ``membership``: 1 = member
    (the record was in the data the target was built from), 0 = non-member.
    ``record_ids`` (optional): an integer id per record (e.g. its row in the
    dataset) that the per-record risk table shows instead of the position.
    """

    scores: np.ndarray
    membership: np.ndarray
    record_ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        scores = np.asarray(self.scores, dtype=np.float64).ravel()
        membership = np.asarray(self.membership).ravel()
        if scores.shape != membership.shape:
            raise InvalidInputError(
                f"{scores.size} scores but {membership.size} membership labels")
        if not np.all(np.isin(membership, (0, 1))):
            raise InvalidInputError("membership must be 0 (non-member) or 1 (member)")
        if np.any(np.isnan(scores)):
            raise InvalidInputError("attack scores contain NaN")
        n_pos = int(membership.sum())
        if n_pos == 0 or n_pos == membership.size:
            raise InvalidInputError("need both members and non-members to score an attack")
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "membership", membership.astype(np.int64))
        if self.record_ids is not None:
            ids = np.asarray(self.record_ids).ravel()
            if ids.shape != scores.shape or not np.issubdtype(ids.dtype, np.integer):
                raise InvalidInputError(f"need one integer record id per score ({scores.size}), got {ids.shape}")
            object.__setattr__(self, "record_ids", ids)

    @property
    def n_members(self) -> int:
        return int(self.membership.sum())

    @property
    def n_non_members(self) -> int:
        return int(self.membership.size - self.membership.sum())

    @classmethod
    def from_groups(cls, member_scores: np.ndarray, non_member_scores: np.ndarray) -> "MembershipScores":
        m = np.asarray(member_scores, dtype=np.float64).ravel()
        n = np.asarray(non_member_scores, dtype=np.float64).ravel()
        return cls(np.concatenate([m, n]), np.concatenate([np.ones(m.size), np.zeros(n.size)]))

    @classmethod
    def concatenate(cls, parts: Sequence["MembershipScores"]) -> "MembershipScores":
        ids = None
        if all(p.record_ids is not None for p in parts):
            ids = np.concatenate([p.record_ids for p in parts])
        return cls(np.concatenate([p.scores for p in parts]),
                   np.concatenate([p.membership for p in parts]), ids)


def roc(data: MembershipScores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, tpr, thresholds) of ``score ≥ threshold`` (sklearn.metrics.roc_curve)."""
    return roc_curve(data.membership, data.scores, drop_intermediate=False)


def tpr_at_fpr(fpr: np.ndarray, tpr: np.ndarray, target: float) -> float:
    """Largest TPR among ROC points whose FPR ≤ ``target`` (no interpolation).

    Says nothing about whether the sample resolves ``target``; the reported numbers come
    from :func:`dpaudit.attacks.membership.roc.roc_counts`, which does.
    """
    ok = fpr <= target + 1e-12
    return float(tpr[ok].max()) if np.any(ok) else 0.0


def rates_at(data: MembershipScores, threshold: float) -> tuple[int, int, int, int]:
    """(tp, n_members, fp, n_non_members) of the decision ``score ≥ threshold``."""
    flagged = data.scores >= threshold
    tp = int(np.sum(flagged & (data.membership == 1)))
    fp = int(np.sum(flagged & (data.membership == 0)))
    return tp, data.n_members, fp, data.n_non_members


def best_threshold(data: MembershipScores) -> float:
    """Threshold t maximising TPR − FPR of ``score ≥ t`` on ``data``.

    Use it on *calibration* data only (shadow models, held-out records); the
    threshold is then applied to other scores by :func:`evaluate`.
    """
    fpr, tpr, thresholds = roc(data)
    i = int(np.argmax(tpr - fpr))
    t = float(thresholds[i])
    if math.isinf(t):  # sklearn's first point: nothing flagged
        t = float(np.nextafter(data.scores.max(), np.inf))
    return t


@dataclass(frozen=True)
class MembershipMetrics:
    """What one membership attack achieved on one scored set (all plain numbers)."""

    advantage: float              # TPR − FPR at the calibrated threshold
    advantage_same_data: float    # max_t (TPR − FPR) on the scored data: optimistic
    auc: float
    tpr_at_1pct_fpr: float | None     # None: too few non-members to resolve 1 % (see the reason)
    tpr_at_0_1pct_fpr: float | None
    epsilon_lower_bound: float    # one-run bound (Steinke et al. 2023) at confidence 1 − alpha
    advantage_ceiling: float      # tanh(ε/2) for the claimed ε
    threshold: float
    tp: int
    n_members: int
    fp: int
    n_non_members: int
    alpha: float
    correct: int = 0              # right member/non-member guesses at the threshold
    guesses: int = 0              # non-abstained guesses (every scored record)
    candidates: int = 0           # records whose membership was a coin (scored or not)
    delta: float = 0.0
    abstain_top: float | None = None       # abstaining variant (dpaudit.attacks.membership.abstain): shares fixed on shadow data
    abstain_bottom: float | None = None
    abstain_correct: int = 0
    abstain_guesses: int = 0
    epsilon_lower_bound_abstaining: float | None = None
    tpr_at_1pct_fpr_reason: str | None = None     # "n/a (needs ≥ N non-members, has n)" when None
    tpr_at_0_1pct_fpr_reason: str | None = None
    tpr_at_0_01pct_fpr: float | None = None
    tpr_at_0_01pct_fpr_reason: str | None = None
    roc: RocCounts | None = None                  # operating points on the resolved ROC grid
    histogram: ScoreHistogram | None = None       # member vs non-member scores, fixed bins
    most_exposed: tuple[ExposedRecord, ...] = ()  # top-scored true members, by index only
    exposed_by_row: bool = False                  # their index is a dataset row (record ids given), else a position

    @property
    def tpr(self) -> float:
        return self.tp / self.n_members

    @property
    def fpr(self) -> float:
        return self.fp / self.n_non_members

    def to_dict(self) -> dict[str, object]:
        """The numbers of this run, its cut ROC curve with bands, histogram and exposed records (plain data)."""
        out = asdict(self)
        out["roc"] = None if self.roc is None else self.roc.to_dict(self.alpha)
        return out


def _same_data(a: MembershipScores, b: MembershipScores) -> bool:
    """The same scores object or views of one buffer (equal values alone can be a coincidence)."""
    return a is b or bool(np.shares_memory(a.scores, b.scores))


def evaluate(scored: MembershipScores, *, calibration: MembershipScores | None = None,
             threshold: float | None = None, claimed_epsilon: float = math.inf,
             alpha: float = DEFAULT_ALPHA, delta: float = 0.0, candidates: int | None = None,
             abstain: bool = False, score_bins: Sequence[float] | None = None,
             exposed_top: int = EXPOSED_TOP) -> MembershipMetrics:
    """Metrics of an attack on ``scored``, with its decision threshold fixed elsewhere.

    Give exactly one of ``calibration`` (scores from shadow/held-out data: the
    advantage-maximising threshold is chosen there) or ``threshold`` (a
    decision rule fixed in advance, e.g. 0.5 on an attack model's
    membership probability).  Calibration scores that are the scored data (the
    same object or a view of its buffer) are refused: a threshold is never
    chosen on the data it scores.  :func:`dpaudit.attacks.membership.shadow.train_shadow_targets`
    keeps shadow records disjoint from the target's.

    Every scored record is a guess (no abstention): "member" when its score is
    ≥ the threshold.  ``candidates`` (default: the scored records) is the
    number m of coin-flipped records, scored or not, which only the δ > 0
    bound uses.  ``abstain`` (needs ``calibration``) adds the abstaining
    variant of :mod:`dpaudit.attacks.membership.abstain`: shares of top/bottom-ranked guesses
    chosen on the calibration scores, its own one-run bound beside the main one.

    TPR at 1 % / 0.1 % FPR is ``None`` with a reason when the non-members do not
    resolve it (:mod:`dpaudit.attacks.membership.roc`).  ``score_bins``: the attack's fixed histogram
    bins (default: :func:`dpaudit.attacks.membership.exposure.histogram_edges` of the calibration
    scores, else of the scored ones); ``exposed_top``: rows of the per-record
    risk table.
    """
    if abstain and calibration is None:
        raise InvalidInputError("the abstaining variant chooses its shares on calibration scores")
    if (calibration is None) == (threshold is None):
        raise InvalidInputError("give exactly one of calibration scores or a fixed threshold")
    if calibration is not None:
        if _same_data(calibration, scored):
            raise InvalidInputError(
                "calibration scores are the scored data; choose the threshold on shadow or held-out data")
        threshold = best_threshold(calibration)
    if threshold is None:  # one of the two is given (checked above)
        raise RuntimeError("no threshold and no calibration scores passed the check above")
    fpr, tpr, _ = roc(scored)
    curve = roc_counts(scored.scores, scored.membership)
    low_fpr: dict[str, Any] = {}
    for name, f in LOW_FPRS:
        low_fpr[name] = curve.tpr_at(f)
        low_fpr[f"{name}_reason"] = None if resolves(curve.n_non_members, f) else unresolved_reason(
            f, curve.n_non_members)
    edges = score_bins if score_bins is not None else histogram_edges(
        (calibration if calibration is not None else scored).scores)
    tp, n_pos, fp, n_neg = rates_at(scored, threshold)
    ceiling = math.tanh(claimed_epsilon / 2.0) if math.isfinite(claimed_epsilon) else 1.0
    guesses = n_pos + n_neg
    correct = tp + (n_neg - fp)
    m = guesses if candidates is None else int(candidates)
    if m < guesses:
        raise InvalidInputError(f"{guesses} scored records but only {m} candidates")
    extra: dict[str, Any] = {}
    if abstain:
        if calibration is None:  # checked at the start
            raise RuntimeError("abstaining without calibration scores passed the check above")
        top, bottom = choose_abstention(calibration.scores, calibration.membership, alpha=alpha)
        a_correct, a_guesses = guess_counts(rank_guesses(scored.scores, top, bottom), scored.membership)
        extra = {"abstain_top": top, "abstain_bottom": bottom, "abstain_correct": a_correct,
                 "abstain_guesses": a_guesses,
                 "epsilon_lower_bound_abstaining": epsilon_one_run(a_correct, a_guesses, alpha=alpha, delta=delta,
                                                                   candidates=m)}
    return MembershipMetrics(
        advantage=tp / n_pos - fp / n_neg,
        advantage_same_data=float(np.max(tpr - fpr)),
        auc=float(roc_auc_score(scored.membership, scored.scores)),
        epsilon_lower_bound=epsilon_one_run(correct, guesses, alpha=alpha, delta=delta, candidates=m),
        advantage_ceiling=ceiling,
        threshold=float(threshold),
        tp=tp, n_members=n_pos, fp=fp, n_non_members=n_neg, alpha=alpha,
        correct=correct, guesses=guesses, candidates=m, delta=float(delta),
        roc=curve, histogram=score_histogram(scored.scores, scored.membership, edges),
        most_exposed=most_exposed(scored.scores, scored.membership, exposed_top, scored.record_ids),
        exposed_by_row=scored.record_ids is not None,
        **low_fpr, **extra,
    )


_MEAN_FIELDS = ("advantage", "advantage_same_data", "auc")


def aggregate(runs: Iterable[MembershipMetrics], *, alpha: float = DEFAULT_ALPHA,
              delta: float | None = None) -> dict[str, Any]:
    """Mean ± std over repeats; the one-run ε bound from the pooled guesses.

    Repeats draw fresh coins and a fresh release, so together they are one
    mechanism on Σm independent coins, each coin acting on one release:
    summing correct guesses, guesses and candidates over repeats is the
    one-run game again, with more guesses than any single repeat.
    """
    runs = list(runs)
    if not runs:
        raise InvalidInputError("no runs to aggregate")
    if delta is None:  # the δ the repeats were certified at
        delta = max(r.delta for r in runs)
    out: dict[str, Any] = {}
    for name in _MEAN_FIELDS:
        _mean_std(out, name, [getattr(r, name) for r in runs])
    fewest = min(r.n_non_members for r in runs)
    for name, f in LOW_FPRS:  # averaged only where every repeat resolves the FPR
        if all(getattr(r, name) is not None for r in runs):
            _mean_std(out, name, [getattr(r, name) for r in runs])
            out[f"{name}_reason"] = None
        else:
            out[name] = out[f"{name}_std"] = None
            out[f"{name}_reason"] = unresolved_reason(f, fewest, over_repeats=True)
    tp = sum(r.tp for r in runs)
    fp = sum(r.fp for r in runs)
    n_pos = sum(r.n_members for r in runs)
    n_neg = sum(r.n_non_members for r in runs)
    correct = sum(r.correct for r in runs)
    guesses = sum(r.guesses for r in runs)
    candidates = sum(r.candidates for r in runs)
    out["epsilon_lower_bound"] = epsilon_one_run(correct, guesses, alpha=alpha, delta=delta,
                                                 candidates=candidates)
    out["epsilon_lower_bound_method"] = epsilon_method(delta)
    out["epsilon_lower_bound_per_repeat"] = [r.epsilon_lower_bound for r in runs]
    if all(r.epsilon_lower_bound_abstaining is not None for r in runs):
        a_correct, a_guesses = sum(r.abstain_correct for r in runs), sum(r.abstain_guesses for r in runs)
        out["epsilon_lower_bound_abstaining"] = epsilon_one_run(a_correct, a_guesses, alpha=alpha, delta=delta,
                                                                candidates=candidates)  # 0 when no guesses
        out["abstaining"] = {"correct": a_correct, "guesses": a_guesses,
                             "shares_per_repeat": [[r.abstain_top, r.abstain_bottom] for r in runs],
                             "per_repeat": [r.epsilon_lower_bound_abstaining for r in runs],
                             "rule": "guess member for the top share of scores, non-member for the bottom "
                                     "share, abstain otherwise; shares chosen on the attacker's own runs"}
    out["advantage_ceiling"] = runs[0].advantage_ceiling
    out["tpr"] = tp / n_pos
    out["fpr"] = fp / n_neg
    out["counts"] = {"tp": tp, "n_members": n_pos, "fp": fp, "n_non_members": n_neg,
                     "correct": correct, "guesses": guesses, "candidates": candidates}
    out["confidence"] = 1.0 - alpha
    out["repeats"] = len(runs)
    curves = [r.roc for r in runs if r.roc is not None]
    if len(curves) == len(runs):
        out["roc"] = pool_curves(curves, alpha)
        out.update(low_fpr_bands(out["roc"], LOW_FPRS))
    out.update(summarise_exposure([r.histogram for r in runs], [r.most_exposed for r in runs],
                                  by_row=all(r.exposed_by_row for r in runs)))
    return out


def _mean_std(out: dict[str, object], name: str, values: Sequence[float]) -> None:
    v = np.asarray(values, dtype=float)
    out[name] = float(v.mean())
    out[f"{name}_std"] = float(v.std(ddof=1)) if len(v) > 1 else 0.0


EPSILON_METHOD = "one-run (Steinke et al. 2023), add-remove, δ = 0"


def epsilon_method(delta: float = 0.0) -> str:
    """How ``epsilon_lower_bound`` was obtained (stated beside every bound)."""
    return EPSILON_METHOD if delta == 0.0 else EPSILON_METHOD.replace("δ = 0", f"δ = {delta:g}")


def one_run_comparison(claim: Mapping[str, Any], release_kind: str | None = None) -> tuple[bool, str]:
    """Whether the one-run ε bound may be compared with ``claim``, and why (not).

    The bound is about add/remove membership of one record in a release the
    attacker sees and nothing more.  ``replace`` claims: add/remove ε-DP
    implies replace 2ε-DP, but replace-ε-DP implies no add/remove guarantee
    at all (a mechanism may release the record count exactly), so no
    verdict.  ``metric`` (d_x) claims bound each record's own perturbation,
    not whether a record is in the data, so no verdict.  A ``labels`` release
    is a label per input record: the attacker's classifier looks labels up by
    the members' own records, so the guesses are not a function of the
    release alone and the bound does not certify the mechanism.
    """
    eps = float(claim.get("epsilon", math.inf))
    neighbours = claim.get("neighbours", "add-remove")
    if neighbours == "metric":
        return False, ("not comparable with a metric (d_x) claim: it bounds each record's own "
                       "perturbation, not add/remove membership")
    if neighbours == "replace":
        return False, ("not comparable with a replace claim: replace-ε-DP implies no add/remove bound "
                       "(add/remove ε-DP implies replace 2ε-DP, not the converse)")
    if release_kind == "labels":
        return False, ("not a certificate for this mechanism: a labels release is looked up by the members' "
                       "own records, so the attack sees more than the release")
    if not math.isfinite(eps):
        return True, "no privacy claim (ε = ∞): nothing to violate"
    return True, f"compared with the claimed add/remove ε = {eps:g}"
