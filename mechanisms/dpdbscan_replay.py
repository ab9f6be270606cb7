"""Deterministic replay of a DP-DBSCAN transcript (:mod:`dpaudit.mechanisms.dpdbscan`; the DP-DBSCAN paper).

Auditor-side code written against the documented algorithm: the cell counts of the
noisy histogram (``naive``: Lap(1/ε) on every cell, Theorem 2.8; ``sparse``: §6 /
Algorithm 2, released above the threshold T) and, when n is not public, the noisy n.
Serves ``dpdbscan`` and ``dpdbscan-labels``; looked up through
:func:`dpaudit.mechanisms.replays.replay_for`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .grid import Grid, cell_ids, tau0
from .likelihood import Batch, laplace_llr, laplace_log_below, stack
from .releases import Transcript

__all__ = ["DPDBSCANReplay"]


class DPDBSCANReplay:
    """Cell counts under each dataset; Lap(1/ε_h) per cell.  ``naive``: every cell's
    density.  ``sparse``: for the cells whose counts differ, the density of the released
    value or the probability of staying below T; plus the noisy n.  Exact.
    Groups: ``histogram`` (1 column) and, when n is a draw, ``n``."""

    exact = True

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        cfg = self.config
        self.grid = Grid(np.asarray(cfg["origin"], dtype=np.float64), float(cfg["width"]),
                         tuple(int(s) for s in cfg["shape"]))
        self.scale = 1.0 / float(cfg["epsilon_histogram"])

    def _counts(self, X: np.ndarray) -> np.ndarray:
        return np.bincount(cell_ids(np.asarray(X, dtype=np.float64), self.grid),
                           minlength=self.grid.n_cells).astype(np.float64)

    def llr(self, batch: Batch | Sequence[Transcript], D: np.ndarray, D_prime: np.ndarray
            ) -> dict[str, np.ndarray]:
        cD, cDp = self._counts(D), self._counts(D_prime)
        diff = np.flatnonzero(cD != cDp)
        if self.config["histogram"] == "naive":
            h = stack(batch).statistics["histogram"]
            llr = laplace_llr(np.asarray(h[:, diff], dtype=np.float64), cD[diff], cDp[diff], self.scale).sum(axis=1)
            return {"histogram": llr[:, None]}
        return self._sparse(list(batch), cD[diff], cDp[diff], diff, len(D), len(D_prime))

    def _sparse(self, items: list[Transcript], aD: np.ndarray, aDp: np.ndarray, diff: np.ndarray,
                nD: int, nDp: int) -> dict[str, np.ndarray]:
        cfg = self.config
        eps_h = float(cfg["epsilon_histogram"])
        kappa, n_cells = int(cfg["kappa"]), self.grid.n_cells
        hist = np.zeros(len(items))
        n_llr = np.zeros(len(items))
        has_n = bool(items) and "n_noisy" in items[0].statistics
        for r, t in enumerate(items):              # ragged releases: one at a time
            if has_n:
                n_used = float(t["n_noisy"][0])
                scale_n = 1.0 / float(cfg["epsilon_n"])
                if n_used <= 1.0:                  # the mechanism reports max(ñ, 1)
                    n_llr[r] = (laplace_log_below((1.0 - nD) / scale_n)
                                - laplace_log_below((1.0 - nDp) / scale_n))
                else:
                    n_llr[r] = laplace_llr(n_used, nD, nDp, scale_n)
            else:
                n_used = float(cfg["n_used"]) if cfg.get("n_used") is not None else float("nan")
            T = (math.log(n_cells / n_used) / eps_h if n_cells > 2.0 * n_used
                 else tau0(kappa, n_cells, eps_h, float(cfg["beta"])) / kappa)
            cells, values = np.asarray(t["cells"]), np.asarray(t["values"], dtype=np.float64)
            pos = np.minimum(np.searchsorted(cells, diff), max(cells.size - 1, 0))
            released = (cells.size > 0) & (cells[pos] == diff) if cells.size else np.zeros(diff.size, bool)
            y = values[pos] if cells.size else np.zeros(diff.size)
            below = (laplace_log_below((T - aD) / self.scale) - laplace_log_below((T - aDp) / self.scale))
            hist[r] = float(np.where(released, laplace_llr(y, aD, aDp, self.scale), below).sum())
        out = {"histogram": hist[:, None]}
        if has_n:
            out["n"] = n_llr[:, None]
        return out
