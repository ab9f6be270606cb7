"""Deterministic replay of IBM diffprivlib's KMeans from its instrumented draws
(:mod:`dpaudit.mechanisms.diffprivlib_adapter`).

Auditor-side code written against the library's documented algorithm (DPLloyd after
Su et al., CODASPY 2016; diffprivlib 0.6): the iteration count it computes from n, the
folded-geometric noisy counts and the bounded-Laplace noisy sums of every iteration.
Needs no diffprivlib: only the recorded draws.  Looked up through
:func:`dpaudit.mechanisms.replays.replay_for`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from .likelihood import Batch, box_of, laplace_llr, stack

__all__ = ["DiffprivlibKMeansReplay"]


def _folded_geometric_logpmf(y: np.ndarray, a: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """ln P[y] for diffprivlib's GeometricFolded(sensitivity 1, lower ½): y = fold(a + K),
    K two-sided geometric P[K = k] ∝ e^(−ε|k|), values below ½ reflected (v ↦ 1 − v)."""
    log_p = -epsilon
    log_norm = np.log1p(-np.exp(log_p)) - np.log1p(np.exp(log_p))
    return np.logaddexp(log_norm + log_p * np.abs(y - a), log_norm + log_p * np.abs(1.0 - y - a))


def _bounded_laplace_log_mass(x: np.ndarray, scale: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """ln ∫_lo^hi e^(−|y − x|/b) dy: the normaliser of diffprivlib's LaplaceBoundedDomain
    (Laplace(x, b) restricted to [lo, hi]), for x in [lo, hi]."""
    return np.log(scale * (2.0 - np.exp(-(x - lo) / scale) - np.exp(-(hi - x) / scale)))


class DiffprivlibKMeansReplay:
    """diffprivlib's KMeans from its recorded draws: the iteration count it computes from n
    (``_calc_iters``), labels from the previous centres, which clusters draw (the empty ones
    do not), the folded-geometric count and bounded-Laplace sums with the recorded ε and
    scales.  A transcript whose iteration count or draw pattern the dataset cannot produce
    is impossible under it (ratio ±∞).  Exact for the draws.  Groups: ``iteration`` (7)."""

    exact = True

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def _iterations(self, n: int, d: int) -> int:
        """diffprivlib 0.6 ``KMeans._calc_iters`` (ρ = 0.225), from the public k, ε and d and the dataset's n."""
        k, eps, rho = int(self.config["n_clusters"]), float(self.config["epsilon"]), 0.225
        eps_m = math.sqrt(500.0 * k ** 3 / n ** 2 * (d + (4.0 * d * rho ** 2) ** (1.0 / 3.0)) ** 3)
        return int(max(min(eps / eps_m, 7), 2))

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        st = {k: np.asarray(v, dtype=np.float64) for k, v in stack(batch).statistics.items()}
        counts, sums = st["counts"], st["sums"]
        R, I, k = counts.shape
        d = sums.shape[-1]
        lo, hi = box_of(self.config, d)
        Xs = [np.clip(np.asarray(X, dtype=np.float64), lo, hi) for X in (D, D_prime)]
        iters = st["iterations"].reshape(R).astype(np.int64)
        # ln f(T | D) − ln f(T | D′) per iteration, with −∞/+∞ when D/D′ cannot produce the transcript.
        possible = [iters == self._iterations(len(X), d) for X in Xs]
        ratio = np.zeros((R, I))
        centres = np.array(st["initial"], dtype=np.float64)
        for it in range(I):
            live = iters > it
            drawn = ~np.isnan(counts[:, it])
            c_obs = np.where(drawn, counts[:, it], 1.0)
            y = np.where(drawn[..., None], sums[:, it], 0.0)
            exact = []
            for h, Xc in enumerate(Xs):
                d2 = ((Xc[None, :, None, :] - centres[:, None, :, :]) ** 2).sum(axis=-1)    # (R, n, k)
                onehot = (np.argmin(d2, axis=-1)[..., None] == np.arange(k)).astype(np.float64)
                true_n = onehot.sum(axis=1)
                possible[h] = possible[h] & ~(live & ~np.all(drawn == (true_n > 0), axis=1))
                # diffprivlib clips the sum into the domain [c̃·lo, c̃·hi] before adding noise
                exact.append((true_n, np.clip(np.swapaxes(onehot, 1, 2) @ Xc, c_obs[..., None] * lo,
                                              c_obs[..., None] * hi)))
            eps_n = np.where(drawn, st["epsilon_counts"][:, it], 1.0)
            count_ratio = (_folded_geometric_logpmf(c_obs, exact[0][0], eps_n)
                           - _folded_geometric_logpmf(c_obs, exact[1][0], eps_n))   # integers: exact
            scale = np.where(drawn[..., None], st["scale_sums"][:, it], 1.0)
            # Computed jointly, as laplace_llr, so the ratio is exactly flat where y is beyond both means.
            sum_ratio = (laplace_llr(y, exact[0][1], exact[1][1], scale)
                         + _bounded_laplace_log_mass(exact[1][1], scale, c_obs[..., None] * lo, c_obs[..., None] * hi)
                         - _bounded_laplace_log_mass(exact[0][1], scale, c_obs[..., None] * lo, c_obs[..., None] * hi))
            step = np.where(drawn, count_ratio, 0.0).sum(axis=1) + np.where(drawn[..., None], sum_ratio, 0.0).sum(
                axis=(1, 2))
            ratio[:, it] = np.where(live, step, 0.0)
            centres = np.where((live[:, None] & drawn)[..., None], y / c_obs[..., None], centres)
        with np.errstate(invalid="ignore"):
            impossible = np.where(possible[0], 0.0, -np.inf) - np.where(possible[1], 0.0, -np.inf)
        impossible = np.where(np.isnan(impossible), 0.0, impossible)   # impossible under both: no evidence
        ratio[:, 0] += impossible
        return {"iteration": ratio}
