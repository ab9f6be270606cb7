"""Per-draw privacy budgets of a neighbouring pair in a built-in mechanism's transcript.

Input of the ceilings (:mod:`dpaudit.attacks.epsilon.certification.ceilings`): for a pair (D, D′) and a
mechanism, the ε_i = |shift_i|/scale_i of every draw the changed record moves,
and how they may be used:

``exact``
    the transcript's privacy loss *is* the sum of independent Laplace losses
    with these ε_i (the shifts' sizes do not depend on earlier draws), so
    :func:`~dpaudit.attacks.epsilon.certification.ceilings.laplace_composition` is its PLD;
``laplace-upper``
    the transcript is post-processing of such Laplace draws (DP-DBSCAN's
    sparse histogram drops cells below T), so their composition's ceiling is
    an upper bound;
``dominated``
    each ε_i bounds a draw (or a whole iteration) whose shift depends on
    earlier draws; only the randomised-response bound
    :func:`~dpaudit.attacks.epsilon.certification.ceilings.dominating_ceiling` applies.

Add-remove pairs only (a replace moves a record between clusters, which
splits its effect adaptively); ``None`` where no budget is stated (DP-FCM as
published claims ε per iteration without composing, so it has no budget to
compare with).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.mechanisms.base import check_bounds

from ..pairs.neighbours import NeighbourPair

__all__ = ["DrawBudgets", "draw_budgets"]


@dataclass(frozen=True)
class DrawBudgets:
    """ε_i of the draws a pair's changed record moves, their ``kind`` (see the module) and a note."""

    epsilons: tuple[float, ...]
    kind: str
    note: str

    @property
    def total(self) -> float:
        return float(sum(self.epsilons))


def draw_budgets(mechanism: Any, pair: NeighbourPair) -> DrawBudgets | None:
    """The per-draw budgets of ``pair`` in ``mechanism``'s transcript, or None when not stated."""
    if pair.relation != "add-remove":
        return None
    name = getattr(mechanism, "name", "")
    d = int(pair.D.shape[1])
    x = np.asarray(pair.new, dtype=np.float64)
    if name == "dpkccm":
        lo, hi = check_bounds(mechanism.bounds, d)
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        shift = np.abs(np.clip(x, lo, hi) - mid)
        delta = float(np.sum(half)) + 1.0
        eps = [e * s / delta for e in mechanism.shares() for s in (*shift, 1.0)]
        return DrawBudgets(tuple(e for e in eps if e > 0), "exact",
                           "per iteration: one sum per coordinate (shift |x_i − mid_i|) and one count, "
                           "scale Δ/ε_it, in whichever cluster the record joins")
    if name in ("dpdbscan", "dpdbscan-labels"):
        cfg = mechanism.transcript_config(d)
        eps = [float(cfg["epsilon_histogram"])]
        if cfg["histogram"] == "sparse" and cfg["epsilon_n"] > 0:
            eps.append(float(cfg["epsilon_n"]))
        kind = "exact" if cfg["histogram"] == "naive" else "laplace-upper"
        return DrawBudgets(tuple(eps), kind, "the record's cell count (and the noisy n)")
    if name == "dpfcm-corrected":
        eps = [mechanism.epsilon / mechanism.iterations] * mechanism.iterations
        return DrawBudgets(tuple(eps), "dominated",
                           "per iteration ε/T, spread over the c clusters' sums and weights by the memberships")
    if name == "diffprivlib-kmeans":
        t = mechanism.release_transcript(pair.D_prime, np.random.default_rng(0))
        iters = int(t["iterations"][0])
        # The changed record is in one cluster per iteration: its count and each coordinate's sum.
        # Declared ε of each draw (the library's own mechanism objects), per iteration the largest cluster's.
        eps = []
        for it in range(iters):
            counts, sums = t["epsilon_counts"][it], t["epsilon_sums"][it]
            j = int(np.nanargmax(np.where(np.isnan(counts), -np.inf, counts + np.nansum(sums, axis=-1))))
            eps += [float(counts[j])] + [float(v) for v in sums[j]]
        return DrawBudgets(tuple(eps), "dominated",
                           "declared ε of the library's GeometricFolded count and LaplaceBoundedDomain sums, "
                           "per iteration (instrumented transcript)")
    return None
