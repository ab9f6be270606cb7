"""Deterministic replay of a DP-KCCM transcript (:mod:`dpaudit.mechanisms.dpkccm`; the DP-KCCM paper).

Auditor-side code written against the documented algorithm (Algorithm 1, eqs. 9–11):
12 iterations of noisy per-cluster sums and counts, Laplace(Δ/ε_it) each.  Looked up
through :func:`dpaudit.mechanisms.replays.replay_for`.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .dpkccm import nearest_centroid, update_centroids
from .likelihood import Batch, box_of, laplace_llr, stack

__all__ = ["DPKCCMReplay"]


class DPKCCMReplay:
    """Each iteration: assign the records to the previous centroids (computed from the
    transcript exactly as the mechanism does), sum them per cluster, Laplace(Δ/ε_it) on
    every sum coordinate and count.  Exact.  Groups: ``iteration`` (12 columns)."""

    exact = True

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        batch = stack(batch)
        init = np.asarray(batch.statistics["initial"], dtype=np.float64)
        sums = np.asarray(batch.statistics["sums"], dtype=np.float64)
        counts = np.asarray(batch.statistics["counts"], dtype=np.float64)
        R, iters, m, d = sums.shape
        lo, hi = box_of(self.config, d)
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        shares = np.asarray(self.config["shares"], dtype=np.float64)
        delta = float(self.config["sensitivity"])
        Xs = [np.clip(np.asarray(X, dtype=np.float64), lo, hi) - mid for X in (D, D_prime)]
        C = init - mid
        out = np.zeros((R, iters))
        for it in range(iters):
            exact = []
            for Xc in Xs:
                onehot = (nearest_centroid(Xc, C)[..., None] == np.arange(m)).astype(np.float64)
                exact.append((np.swapaxes(onehot, -1, -2) @ Xc, onehot.sum(axis=-2)))
            scale = delta / shares[it]
            out[:, it] = (laplace_llr(sums[:, it], exact[0][0], exact[1][0], scale).sum(axis=(1, 2))
                          + laplace_llr(counts[:, it], exact[0][1], exact[1][1], scale).sum(axis=1))
            C = update_centroids(C, sums[:, it], counts[:, it], half)
        return {"iteration": out}
