"""Deterministic replays of DP-FCM transcripts (:mod:`dpaudit.mechanisms.dpfcm`; the DP-FCM paper).

Auditor-side code written against the documented algorithm (§4.1 steps 1–8):
:class:`DPFCMCorrectedReplay` for ``dpfcm-corrected`` (noisy weighted sums and weights
per iteration) and :class:`DPFCMReplay` for ``dpfcm`` as published (noisy centres of
every iteration and the stopping rule).  The random initial memberships are not in the
transcript, so the first iteration of each is scored at their mean (approximate).
Looked up through :func:`dpaudit.mechanisms.replays.replay_for`.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .dpfcm import corrected_centres, fcm_centres, fcm_memberships
from .likelihood import Batch, box_of, laplace_llr, stack

__all__ = ["DPFCMCorrectedReplay", "DPFCMReplay"]

_MEAN_POWER_DRAWS = 200_000


def _mean_membership_power(c: int, m: float) -> float:
    """E[u^m] for one entry of a row of c uniforms normalised to sum 1 (the random start).

    Estimated once from a fixed seed (a constant of the replay, chosen before any
    release is seen); standard error below 10⁻³.
    """
    U = np.random.default_rng(20240610).random((_MEAN_POWER_DRAWS, c)) + 1e-12
    U /= U.sum(axis=1, keepdims=True)
    return float(np.mean(U ** m))


class DPFCMCorrectedReplay:
    """Iterations ≥ 2: memberships from the previous noisy centres (recomputed from the
    transcript), exact Σu^m(x − ½) and Σu^m, Laplace(scale).  Iteration 1 uses random
    memberships that are not released: it is scored at their mean, E[u^m] per entry
    (approximate).  Groups: ``iteration`` (T columns)."""

    exact = False

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        self.mean_power = _mean_membership_power(int(config["n_clusters"]), float(config["m"]))

    def _normalised(self, X: np.ndarray, d: int) -> np.ndarray:
        lo, hi = box_of(self.config, d)
        return (np.clip(np.asarray(X, dtype=np.float64), lo, hi) - lo) / (hi - lo) - 0.5

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        batch = stack(batch)
        S = np.asarray(batch.statistics["sums"], dtype=np.float64)
        W = np.asarray(batch.statistics["weights"], dtype=np.float64)
        R, T, c, d = S.shape
        m, scale = float(self.config["m"]), float(self.config["scale"])
        Zs = [self._normalised(X, d) for X in (D, D_prime)]
        out = np.zeros((R, T))
        V = np.zeros((R, c, d))
        for t in range(T):
            exact = []
            for Z in Zs:
                if t == 0:
                    w = np.full((len(Z), c), self.mean_power)
                    exact.append((np.broadcast_to(w.T @ Z, (R, c, d)), np.broadcast_to(w.sum(axis=0), (R, c))))
                else:
                    Wt = fcm_memberships(Z, V, m) ** m
                    exact.append((np.swapaxes(Wt, -1, -2) @ Z, Wt.sum(axis=-2)))
            out[:, t] = (laplace_llr(S[:, t], exact[0][0], exact[1][0], scale).sum(axis=(1, 2))
                         + laplace_llr(W[:, t], exact[0][1], exact[1][1], scale).sum(axis=1))
            V = corrected_centres(V, S[:, t], W[:, t])
        return {"iteration": out}


class DPFCMReplay:
    """DP-FCM as published: noisy centres of every iteration (Lap(scale) per coordinate).
    Iterations ≥ 2 are replayed from the previous noisy centres on the records normalised
    as the mechanism does (public box, or each dataset's own min/max as published); the
    first, from random memberships, is scored at the records' mean (approximate).  The
    stopping rule is deterministic given the transcript from iteration 2 on: a run that
    the hypothesised dataset would have stopped earlier, or not stopped, is impossible
    under it (ratio ±∞).  Groups: ``centres`` (1 column), ``stop`` (1 column)."""

    exact = False

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def _normalised(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if self.config.get("lo") is None:
            lo, hi = X.min(axis=0), X.max(axis=0)
            return (X - lo) / np.where(hi > lo, hi - lo, 1.0)
        lo, hi = box_of(self.config, X.shape[1])
        return (np.clip(X, lo, hi) - lo) / (hi - lo)

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        batch = stack(batch)
        V = np.asarray(batch.statistics["centres"], dtype=np.float64)       # (R, max_iter, c, d)
        iters = np.asarray(batch.statistics["iterations"], dtype=np.float64).reshape(-1).astype(np.int64)
        R, max_iter, c, d = V.shape
        m, scale, tol = float(self.config["m"]), float(self.config["scale"]), float(self.config["tol"])
        Zs = [self._normalised(X) for X in (D, D_prime)]
        centres = np.zeros(R)
        log_stop = np.zeros((2, R))                  # 0, or −inf where the run is impossible under H
        previous: list[np.ndarray | None] = [None, None]   # memberships from the previous noisy centres
        for it in range(int(iters.max()) if R else 0):
            live = iters > it
            Vt = np.where(live[:, None, None], V[:, it], 0.0)
            exact = []
            for h, Z in enumerate(Zs):
                if it == 0:                          # random memberships: scored at their mean
                    exact.append(np.broadcast_to(Z.mean(axis=0), (R, c, d)))
                else:
                    before = previous[h]
                    if before is None:
                        raise RuntimeError("memberships missing after the first iteration")
                    exact.append(fcm_centres(Z, before, m))
                current = fcm_memberships(Z, Vt, m)
                if it >= 1:                          # the stop rule, deterministic from iteration 2 on
                    change = np.abs(current - previous[h]).reshape(R, -1).max(axis=1)
                    went_on = it < iters - 1
                    stopped = (it == iters - 1) & (iters < max_iter)
                    bad = live & ((went_on & (change < tol)) | (stopped & (change >= tol)))
                    log_stop[h] = np.where(bad, -np.inf, log_stop[h])
                previous[h] = current
            centres += np.where(live, laplace_llr(Vt, exact[0], exact[1], scale).sum(axis=(1, 2)), 0.0)
        with np.errstate(invalid="ignore"):
            stop = log_stop[0] - log_stop[1]
        stop = np.where(np.isnan(stop), 0.0, stop)                # both impossible: no evidence
        return {"centres": centres[:, None], "stop": stop[:, None]}
