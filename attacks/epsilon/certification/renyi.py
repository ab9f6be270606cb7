"""A certified lower bound on the Rényi divergence D_α(P‖Q) from the cell counts of a binned release.

P and Q are a release's distributions on neighbours D and D′, the cells a partition of its values fixed
before the counts are drawn (the selection's binning; a discrete release's own values).  Binning is
post-processing, so D_α of the cell distributions is at most the mechanism's (data processing; van Erven &
Harremoës 2014, Thm. 9), and so is D_α of any coarsening of the cells into an event S and its complement.

**The confidence region.**  For each side, every cell's probability gets a two-sided Clopper–Pearson interval
at level (α/2)/K, K the number of cells: by a union bound over the 2K intervals, *all* cell probabilities of
both sides lie in their intervals at once with probability ≥ 1 − α (a simultaneous multinomial region,
Bonferroni-CP; cf. Fitzpatrick & Scott 1987).  Inside it every event S has
P(S) ∈ [max(Σ_S lo, 1 − Σ_{S^c} hi), min(Σ_S hi, 1 − Σ_{S^c} lo)], and the same for Q.

**The bound.**  For Bernoulli distributions with p > q, d_α(p‖q) = ln(p^α q^(1−α) + (1−p)^α (1−q)^(1−α))/(α − 1)
grows as p moves up from q and as q moves down from p (it is convex in each with its minimum 0 at p = q), so on
a box with p_lo > q_hi its minimum is at the corner (p_lo, q_hi).  The certified bound at each order is the
largest such corner value over the events S — the prefixes of the cells sorted by their estimated likelihood
ratio, in both directions (P‖Q and Q‖P, which a symmetric neighbour relation bounds alike) — and every order
and event is a function of the one region: the bounds at all orders and events hold at once with probability
≥ 1 − α, with no further split of α.  Two cells that are each an event reach the exact binary divergence; a
finer partition's own D_α is larger, and this bound (a coarsening to two cells) does not claim it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ...bounds import clopper_pearson

__all__ = ["RENYI_ORDERS", "RenyiBound", "bernoulli_renyi", "cell_region", "renyi_lower_bound"]

RENYI_ORDERS: tuple[float, ...] = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 32.0, 64.0)


def bernoulli_renyi(p: float, q: float, order: float) -> float:
    """D_α(Bern(p)‖Bern(q)) for α > 1 (Rényi 1961; ∞ where q = 0 < p or q = 1 > p)."""
    if order <= 1.0:
        raise ValueError(f"the order must be > 1, got {order}")
    terms = []
    for a, b in ((p, q), (1.0 - p, 1.0 - q)):
        if a <= 0.0:
            continue
        if b <= 0.0:
            return math.inf
        terms.append(order * math.log(a) + (1.0 - order) * math.log(b))
    return max(float(logsumexp(terms)) / (order - 1.0), 0.0)


def cell_region(counts: Any, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell (lo, hi) limits holding for every cell at once with probability ≥ 1 − ``alpha`` (module doc)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    if n <= 0:
        raise ValueError("no releases counted")
    lo, hi = clopper_pearson(counts, n, alpha / len(counts))
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def _event_limits(lo: np.ndarray, hi: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Limits of P(S) for S = the first j cells of ``order``, j = 1 … K − 1."""
    lo_in, hi_in = np.cumsum(lo[order])[:-1], np.cumsum(hi[order])[:-1]
    lo_out, hi_out = np.cumsum(lo[order][::-1])[::-1][1:], np.cumsum(hi[order][::-1])[::-1][1:]
    return np.clip(np.maximum(lo_in, 1.0 - hi_out), 0, 1), np.clip(np.minimum(hi_in, 1.0 - lo_out), 0, 1)


@dataclass(frozen=True)
class RenyiBound:
    """Certified lower bounds on max(D_α(P‖Q), D_α(Q‖P)) at each order, jointly at 1 − ``alpha``."""

    orders: tuple[float, ...]
    lower: tuple[float, ...]
    alpha: float
    cells: int
    releases: tuple[int, int]

    def at(self, order: float) -> float:
        return self.lower[self.orders.index(order)]

    def exceeding(self, claimed: Any) -> list[tuple[float, float, float]]:
        """(order, certified, claimed) wherever the certified bound exceeds ``claimed(order)``."""
        out = []
        for a, d in zip(self.orders, self.lower):
            c = float(claimed(a))
            if d > c:
                out.append((a, d, c))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"orders": list(self.orders), "lower_bound": list(self.lower), "confidence": 1.0 - self.alpha,
                "cells": self.cells, "releases": list(self.releases),
                "region": "simultaneous Clopper–Pearson over cells (Bonferroni), both datasets"}


def renyi_lower_bound(counts_p: Any, counts_q: Any, *, alpha: float,
                      orders: tuple[float, ...] = RENYI_ORDERS) -> RenyiBound:
    """Certified lower bounds on the Rényi divergence between the two datasets' releases at ``orders``.

    ``counts_p[j]``/``counts_q[j]``: releases of D/D′ in cell j of a partition fixed beforehand.  Each side's
    region is at level α/2 (:func:`cell_region`), so the bounds hold at all orders at once with probability
    ≥ 1 − ``alpha`` (module doc).
    """
    counts_p = np.asarray(counts_p, dtype=float)
    counts_q = np.asarray(counts_q, dtype=float)
    if counts_p.shape != counts_q.shape or counts_p.ndim != 1 or len(counts_p) < 2:
        raise ValueError("need two count vectors over the same ≥ 2 cells")
    p_lo, p_hi = cell_region(counts_p, alpha / 2.0)
    q_lo, q_hi = cell_region(counts_q, alpha / 2.0)
    ratio = np.log((counts_p / counts_p.sum() + 0.5 / counts_p.sum()) / (counts_q / counts_q.sum() + 0.5 / counts_q.sum()))
    order_cells = np.argsort(-ratio, kind="stable")
    events = []
    for perm in (order_cells, order_cells[::-1]):   # events favouring P (P‖Q), then favouring Q (Q‖P)
        a_lo, a_hi = _event_limits(p_lo, p_hi, perm)
        b_lo, b_hi = _event_limits(q_lo, q_hi, perm)
        events += [(pl, qh) for pl, qh in zip(a_lo, b_hi) if pl > qh]       # D(P‖Q) ≥ d(p_lo‖q_hi)
        events += [(qh_, pl_) for qh_, pl_ in zip(b_lo, a_hi) if qh_ > pl_]  # D(Q‖P) ≥ d(q_lo‖p_hi)
    lower = tuple(max([bernoulli_renyi(x, y, a) for x, y in events], default=0.0) for a in orders)
    return RenyiBound(tuple(orders), lower, alpha, len(counts_p), (int(counts_p.sum()), int(counts_q.sum())))
