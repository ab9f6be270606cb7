"""Member vs non-member score histograms and the most exposed records, as plain data.

What ML Privacy Meter's reports and TensorFlow Privacy's membership-inference
plots show beside a ROC curve:

* :class:`ScoreHistogram` — counts of member and non-member scores in fixed
  bins (the attack's own bins where it has them, e.g. [0, 1] for
  probabilities; else :func:`histogram_edges` of public calibration scores),
  with the scores outside the bins counted apart rather than folded into the
  end bins.  Histograms of repeats with the same bins are summed
  (:func:`pool_histograms`).
* :func:`most_exposed` — the true members with the highest attack scores,
  each with its score (for LiRA its log-likelihood ratio), its rank among all
  scored candidates and the FPR an attacker must accept to flag it (the share
  of non-members scoring at least as high).  Records appear **by index only** — a position among the scored
  candidates or an id the caller supplies — never by their values.

Both describe the scored data; neither is a certificate.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

__all__ = ["ExposedRecord", "ScoreHistogram", "histogram_edges", "most_exposed", "pool_histograms",
           "score_histogram", "summarise_exposure", "PROBABILITY_BINS"]

N_BINS = 20
PROBABILITY_BINS: tuple[float, ...] = tuple(float(x) for x in np.linspace(0.0, 1.0, N_BINS + 1))


def _nice_ceil(x: float) -> float:
    """Smallest of 1, 2, 2.5, 5 × 10^k that is ≥ x (x > 0): bins that repeats tend to share."""
    k = math.floor(math.log10(x))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * 10.0 ** k >= x * (1 - 1e-12):
            return m * 10.0 ** k
    return 10.0 ** (k + 1)  # pragma: no cover - the loop ends at 10 × 10^k


def histogram_edges(scores: np.ndarray, bins: int = N_BINS) -> tuple[float, ...]:
    """Fixed-width bins for a score range: [0, 1] for probabilities, else rounded-out limits.

    Scores in [0, 1] get :data:`PROBABILITY_BINS`; scores ≤ 0 (minus a loss, e.g. Yeom's
    distance) get [−L, 0] with L rounded up to 1, 2, 2.5 or 5 × 10^k; anything else
    [−L, L] the same way.  Give it public scores (calibration / shadow), not the scored ones,
    when the bins should not depend on the target.
    """
    s = np.asarray(scores, dtype=np.float64)
    s = s[np.isfinite(s)]
    if s.size == 0 or (s.min() >= 0.0 and s.max() <= 1.0):
        return PROBABILITY_BINS if bins == N_BINS else tuple(np.linspace(0.0, 1.0, bins + 1).tolist())
    span = _nice_ceil(max(float(np.abs(s).max()), 1e-12))
    lo, hi = (-span, 0.0) if s.max() <= 0.0 else (-span, span)
    return tuple(float(x) for x in np.linspace(lo, hi, bins + 1))


@dataclass(frozen=True)
class ScoreHistogram:
    """Member and non-member counts per bin; scores outside [edges[0], edges[-1]] counted apart."""

    edges: tuple[float, ...]
    members: tuple[int, ...]
    non_members: tuple[int, ...]
    members_outside: tuple[int, int] = (0, 0)       # (below the first edge, above the last)
    non_members_outside: tuple[int, int] = (0, 0)


def _counts(x: np.ndarray, edges: np.ndarray) -> tuple[tuple[int, ...], tuple[int, int]]:
    inside = (x >= edges[0]) & (x <= edges[-1])
    counts, _ = np.histogram(x[inside], bins=edges)
    return tuple(int(c) for c in counts), (int(np.sum(x < edges[0])), int(np.sum(x > edges[-1])))


def score_histogram(scores: np.ndarray, membership: np.ndarray, edges: Sequence[float]) -> ScoreHistogram:
    """Histogram of member and non-member scores in the given bins (numpy's right-closed last bin)."""
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 2 or np.any(np.diff(e) <= 0):
        raise ValueError("histogram edges must be at least two increasing numbers")
    s = np.asarray(scores, dtype=np.float64)
    truth = np.asarray(membership) == 1
    m, m_out = _counts(s[truth], e)
    n, n_out = _counts(s[~truth], e)
    return ScoreHistogram(tuple(float(x) for x in e), m, n, m_out, n_out)


def pool_histograms(histograms: Sequence[ScoreHistogram]) -> ScoreHistogram | None:
    """Sum of the histograms when they share their bins, else ``None``."""
    if not histograms or any(h.edges != histograms[0].edges for h in histograms):
        return None

    def total(name: str) -> tuple[int, ...]:
        return tuple(int(v) for v in np.sum([getattr(h, name) for h in histograms], axis=0))

    def pair(name: str) -> tuple[int, int]:
        below, above = total(name)
        return below, above

    return ScoreHistogram(histograms[0].edges, total("members"), total("non_members"),
                          pair("members_outside"), pair("non_members_outside"))


@dataclass(frozen=True)
class ExposedRecord:
    """A true member the attack ranks high: where it stands, never what it is."""

    index: int                      # candidate position, or the caller's record id
    rank: int                       # 1 + candidates scoring strictly higher (1 = the top score)
    non_members_at_or_above: int    # non-members an attacker flags along with it
    fpr: float                      # non_members_at_or_above / non-members: the FPR that flags it
    score: float | None = None      # the attack's score of the record (LiRA: its log-likelihood ratio)


def most_exposed(scores: np.ndarray, membership: np.ndarray, top: int = 10,
                 record_ids: np.ndarray | None = None) -> tuple[ExposedRecord, ...]:
    """The ``top`` members with the highest scores (ties: lower position first), by index only."""
    s = np.asarray(scores, dtype=np.float64)
    truth = np.asarray(membership) == 1
    members = np.flatnonzero(truth)
    if top <= 0 or members.size == 0:
        return ()
    chosen = members[np.lexsort((members, -s[members]))[:top]]
    ranked = np.sort(s)
    non_member_sorted = np.sort(s[~truth])
    n_neg = int(non_member_sorted.size)
    higher = s.size - np.searchsorted(ranked, s[chosen], side="right")
    at_or_above = n_neg - np.searchsorted(non_member_sorted, s[chosen], side="left")
    ids = chosen if record_ids is None else np.asarray(record_ids)[chosen]
    return tuple(ExposedRecord(int(i), int(h) + 1, int(a), float(a) / n_neg if n_neg else float("nan"),
                               float(v)) for i, h, a, v in zip(ids, higher, at_or_above, s[chosen]))


def summarise_exposure(histograms: Sequence[ScoreHistogram | None],
                       exposed: Sequence[Sequence[ExposedRecord]], by_row: bool = False) -> dict[str, Any]:
    """Plain data over repeats: the pooled histogram (none when the bins differ), the one of each repeat, and the
    most exposed members of all repeats, least FPR first, each tagged with its repeat.  ``by_row``:
    the indices are the records' ids (their dataset rows), not positions among the candidates."""
    out: dict[str, Any] = {}
    hists = [h for h in histograms if h is not None]
    pooled = pool_histograms(hists) if len(hists) == len(histograms) else None
    if pooled is not None:
        out["score_histogram"] = asdict(pooled)
    if hists:  # also beside a pooled one: a report whose other attacks cannot pool shows every attack per repeat
        out["score_histogram_per_repeat"] = [asdict(h) for h in hists]
    rows = [{"repeat": i, **asdict(e)} for i, records in enumerate(exposed) for e in records]
    rows.sort(key=lambda row: (row["fpr"], row["rank"], row["repeat"], row["index"]))
    out["most_exposed"] = rows[:max((len(records) for records in exposed), default=0)]
    where = "row in the dataset" if by_row else "position among the repeat's candidates"
    out["most_exposed_rule"] = (f"true members with the highest attack scores, by index only (the record's {where}); "
                                "fpr = share of non-members scoring at least as high, the FPR an attacker accepts to "
                                "flag the record")
    return out
