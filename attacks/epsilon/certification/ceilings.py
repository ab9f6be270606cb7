"""Ceilings: the best ε bound a *perfect* test could certify with a given sample size.

An audit certifies ε ≥ ln((p_lo − δ)/q_hi) for one event S, with p_lo and q_hi
Clopper–Pearson limits of P[M(D) ∈ S] and P[M(D′) ∈ S] from n releases of
each dataset (:mod:`dpaudit.attacks.bounds`).  Even an auditor who knows the output
distributions exactly is limited by n: a pure ε-DP claim over K composed
draws of ε/K each only reaches its full ratio on events of probability
≈ 2^−K.  The *ceiling* of a pair (D, D′) at n is

    max over events S of  ln((p_lo(n·P(S)) − δ) / q_hi(n·Q(S))),

with P = law of the release on D, Q on D′ and the counts set to their
expectations (so it is the typical, not a guaranteed, value).  By the
Neyman–Pearson lemma the maximising events are thresholds on the privacy loss
L = ln(dP/dQ), so the ceiling is a function of the *privacy-loss distribution*
(PLD) of the pair, computed here

* **exactly** for compositions of Laplace and randomised-response /
  geometric draws (:func:`laplace_loss`, :func:`randomized_response_loss`,
  :func:`compose`): the loss of each draw is cut into bins of width ``step``
  whose masses under P and Q are exact integrals, so every threshold on the
  sum of bin indices is an exact, achievable event; the value converges to the
  optimum as ``step`` → 0 (the discretisation moves the loss threshold by at
  most K·step/2 for K draws);
* **as an upper bound** for any composition of K pure ε_i-DP draws
  (:func:`dominating_ceiling`): every ε_i-DP pair is a garbling of randomised
  response RR(ε_i) (Kairouz, Oh & Viswanath 2015), and adaptive composition of
  such pairs is dominated by the product of the RR(ε_i) (Dong, Roth & Su 2022,
  Theorem 4 on tensor products of trade-off functions), so no test on such a
  transcript certifies more than a perfect test on the RR product — computed
  with exact atoms and randomised events (fractions of an atom);
* **by simulation** (:func:`simulated_ceiling`) from sampled values of the
  privacy loss (or of any statistic) under D and D′.

These numbers are diagnostics ("how close did the audit come"), never
certified statements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from dpaudit.mechanisms.base import InvalidInputError

from ...bounds import clopper_pearson
from .loss_distributions import LossDistribution, compose, laplace_composition, laplace_loss, randomized_response_loss

__all__ = ["Ceiling", "LossDistribution", "compose", "dominating_ceiling", "laplace_composition", "laplace_loss",
           "perfect_test_ceiling", "randomized_response_loss", "simulated_ceiling", "SIMULATION_ALPHA"]

# One-sided level of the limits that stand in for simulated frequencies (as the
# estimator's selection does): a threshold that separates a finite simulation
# by chance is not credited with an infinite ratio.
SIMULATION_ALPHA = 0.1
_MAX_ATOMS = 20_000_000
_LEVELS = 4000   # coarse search grid of event probabilities in _best_over_roc


@dataclass(frozen=True)
class Ceiling:
    """The best bound a perfect test certifies at ``n`` releases per dataset (expected counts).

    ``p``/``q`` are the probabilities of the best event on the favoured
    dataset and on the other, ``threshold`` its loss threshold and
    ``favours`` which dataset it favours.
    """

    bound: float
    n: int
    alpha: float
    p: float
    q: float
    threshold: float
    favours: str

    def to_dict(self) -> dict[str, object]:
        return {"bound": self.bound, "n": self.n, "alpha": self.alpha, "p": self.p, "q": self.q,
                "threshold": self.threshold, "favours": self.favours}


def _bound(p_tail: np.ndarray, q_tail: np.ndarray, n: int, alpha: float, delta: float) -> np.ndarray:
    """ln((p_lo − δ)/q_hi) at expected counts n·p, n·q (each limit one-sided at α/2), 0 where nothing."""
    p_tail = np.clip(p_tail, 0.0, 1.0)
    q_tail = np.clip(q_tail, 0.0, 1.0)
    p_lo, _ = clopper_pearson(n * p_tail, n, alpha / 2.0, side="lower")
    _, q_hi = clopper_pearson(n * q_tail, n, alpha / 2.0, side="upper")
    num = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((num > 0) & (q_hi > 0), np.log(num / q_hi), 0.0)
    return np.maximum(out, 0.0)


def _check_n_alpha(n: int, alpha: float) -> tuple[int, float]:
    n = int(n)
    if n < 1:
        raise InvalidInputError(f"n must be ≥ 1, got {n}")
    if not 0.0 < alpha < 1.0:
        raise InvalidInputError(f"alpha must be in (0, 1), got {alpha}")
    return n, float(alpha)


def _best_over_roc(losses: np.ndarray, p: np.ndarray, q: np.ndarray, n: int, alpha: float, delta: float,
                   favours: str, fractions: int) -> Ceiling:
    """Best certified bound over the events {loss ≥ t} (optionally plus a fraction of the boundary atom).

    The bound is evaluated exactly at the events whose probability under P is
    nearest to :data:`_LEVELS` log-spaced levels between 1/n and 1, then at
    every event between the two levels around the best one (the bound varies
    slowly with the threshold), so the maximum is found without computing
    Clopper–Pearson limits for every bin.
    """
    order = np.argsort(-losses, kind="stable")
    losses, p, q = losses[order], p[order], q[order]
    keep = (p > 0) | (q > 0)
    losses, p, q = losses[keep], p[keep], q[keep]
    p_cum, q_cum = np.cumsum(p), np.cumsum(q)
    p_before, q_before = p_cum - p, q_cum - q
    frac = np.linspace(0.0, 1.0, fractions + 1)[1:] if fractions > 0 else np.array([1.0])

    def evaluate(rows: np.ndarray) -> np.ndarray:
        P = p_before[rows, None] + frac[None, :] * p[rows, None]
        Q = q_before[rows, None] + frac[None, :] * q[rows, None]
        out = np.zeros_like(P)
        useful = P * n >= 1.0                        # an event seen less than once is no use
        out[useful] = _bound(P[useful], Q[useful], n, alpha, delta)
        return out

    levels = np.geomspace(min(1.0 / n, 1.0), 1.0, _LEVELS)
    coarse = np.unique(np.minimum(np.searchsorted(p_cum, levels), p.size - 1))
    values = evaluate(coarse)
    best = int(np.argmax(values.max(axis=1)))
    lo_row = coarse[best - 1] if best > 0 else 0
    hi_row = coarse[best + 1] if best + 1 < coarse.size else p.size - 1
    rows = np.arange(lo_row, hi_row + 1)
    values = evaluate(rows)
    i, f = np.unravel_index(int(np.argmax(values)), values.shape)
    r = rows[i]
    return Ceiling(float(values[i, f]), n, alpha, float(p_before[r] + frac[f] * p[r]),
                   float(q_before[r] + frac[f] * q[r]), float(losses[r]), favours)


def perfect_test_ceiling(dist: LossDistribution, n: int, *, alpha: float, delta: float = 0.0,
                         both_directions: bool = True) -> Ceiling:
    """Best bound a perfect test certifies from ``n`` releases of each dataset, at expected counts.

    ``alpha`` is the level of the one certified statement (each
    Clopper–Pearson limit at α/2, as :func:`dpaudit.attacks.bounds.epsilon_from_counts`).
    Threshold events on the loss favour D; with ``both_directions`` the
    events favouring D′ (thresholds on −loss) are tried too.
    """
    n, alpha = _check_n_alpha(n, alpha)
    best = _best_over_roc(dist.losses, dist.p, dist.q, n, alpha, delta, "D", 0)
    if both_directions:
        sw = dist.swapped()
        other = _best_over_roc(sw.losses, sw.p, sw.q, n, alpha, delta, "D'", 0)
        if other.bound > best.bound:
            best = other
    return best


def _rr_atoms(epsilons: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact atoms (loss, P, Q) of the product of RR(ε_i), grouping equal ε."""
    groups: dict[float, int] = {}
    for e in epsilons:
        e = float(e)
        if not e > 0:
            raise InvalidInputError(f"every epsilon must be > 0, got {e!r}")
        groups[e] = groups.get(e, 0) + 1
    size = math.prod(k + 1 for k in groups.values())
    if size > _MAX_ATOMS:
        raise InvalidInputError(f"the randomised-response product has {size:.3g} atoms; group the draws "
                                "into fewer distinct ε values")
    loss, P, Q = np.zeros(1), np.ones(1), np.ones(1)
    for e, k in groups.items():
        a = np.arange(k + 1)
        hi = 1.0 / (1.0 + math.exp(-e))
        lp, lq = stats.binom.pmf(a, k, hi), stats.binom.pmf(a, k, 1.0 - hi)
        loss = (loss[:, None] + e * (2 * a - k)[None, :]).ravel()
        P = (P[:, None] * lp[None, :]).ravel()
        Q = (Q[:, None] * lq[None, :]).ravel()
    return loss, P, Q


def dominating_ceiling(epsilons: Sequence[float], n: int, *, alpha: float, delta: float = 0.0,
                       fractions: int = 32) -> Ceiling:
    """Upper bound on what any test certifies for a composition of pure ε_i-DP draws.

    The product of randomised responses RR(ε_i) dominates every (adaptive)
    composition of ε_i-DP mechanisms, so its perfect-test ceiling — computed
    with exact atoms and events that may take a fraction (``fractions`` steps)
    of the boundary atom (randomised tests) — bounds the ceiling of every such
    transcript, and of anything computed from it.  The RR product is symmetric
    under swapping D and D′, so one direction suffices.
    """
    n, alpha = _check_n_alpha(n, alpha)
    loss, P, Q = _rr_atoms(epsilons)
    return _best_over_roc(loss, P, Q, n, alpha, delta, "D", fractions)


def simulated_ceiling(stat_D: np.ndarray, stat_Dp: np.ndarray | None, n: int, *, alpha: float,
                      delta: float = 0.0, exact_loss: bool = False, thresholds: int = 2000) -> Ceiling:
    """Ceiling of threshold events on a statistic from simulated values under D and D′.

    ``stat_D``/``stat_Dp`` are the statistic's values on simulated releases of
    D and of D′ (higher = more like D).  P and Q of each threshold event are
    estimated from the simulation, so the result is the best threshold on
    *this* statistic at ``n`` (a perfect test when the statistic is the
    privacy loss), up to simulation error.  Counted frequencies are replaced
    by their one-sided Clopper–Pearson limits at level :data:`SIMULATION_ALPHA`
    (lower for the favoured side, upper for the other), so a threshold that
    happens to separate a finite simulation perfectly does not report an
    infinite ratio.  With ``exact_loss`` the statistic must be the exact
    privacy loss ln(dP/dQ): then Q(L ≥ t) = E_P[e^−L; L ≥ t] (and the mirror
    identity) replace the counts on the other side, which resolves tails far
    rarer than the simulation size; ``stat_Dp`` may then be None.
    """
    n, alpha = _check_n_alpha(n, alpha)
    if stat_Dp is None and not exact_loss:
        raise InvalidInputError("simulated_ceiling needs samples under D′ unless the statistic is the exact loss")
    raw_D = np.asarray(stat_D, dtype=np.float64)
    raw_Dp = None if stat_Dp is None else np.asarray(stat_Dp, dtype=np.float64)
    # Values closer than 1e-9 of the pooled range are one value: floating-point noise in a
    # computed statistic (1 − y + y ≠ 1) must not create events.
    pooled_raw = raw_D if raw_Dp is None else np.concatenate([raw_D, raw_Dp])
    finite = pooled_raw[np.isfinite(pooled_raw)]
    quantum = 1e-9 * (max(float(np.ptp(finite)), float(np.max(np.abs(finite)))) if finite.size else 1.0 or 1.0)
    sD = np.sort(np.round(raw_D / quantum) * quantum)
    sDp = None if raw_Dp is None else np.sort(np.round(raw_Dp / quantum) * quantum)
    pooled = sD if sDp is None else np.concatenate([sD, sDp])
    levels = np.unique(np.concatenate([np.linspace(0.0, 1.0, thresholds // 2),
                                       1.0 - np.geomspace(1e-9, 0.5, thresholds // 2),
                                       np.geomspace(1e-9, 0.5, thresholds // 2)]))
    ts = np.unique(np.quantile(pooled, levels))
    m = sD.size

    def tail(sorted_vals: np.ndarray, t: np.ndarray, above: bool, limit: str) -> np.ndarray:
        idx = np.searchsorted(sorted_vals, t, side="left" if above else "right")
        k = sorted_vals.size - idx if above else idx
        lo, hi = clopper_pearson(k, sorted_vals.size, SIMULATION_ALPHA, side=limit)
        return lo if limit == "lower" else hi

    if exact_loss:
        w = np.exp(-sD)                                  # dQ/dP at the D samples
        cw = np.concatenate((np.cumsum(w[::-1])[::-1], [0.0])) / m
        idx = np.searchsorted(sD, ts, side="left")
        p_fwd, q_fwd = tail(sD, ts, True, "lower"), cw[idx]
    else:
        if sDp is None:  # checked above: only the exact loss goes without D′
            raise RuntimeError("the simulated ceiling needs D′'s losses unless the loss is exact")
        p_fwd, q_fwd = tail(sD, ts, True, "lower"), tail(sDp, ts, True, "upper")
    fwd = _bound(p_fwd, q_fwd, n, alpha, delta)
    fwd[p_fwd * n < 1] = 0.0
    best = Ceiling(0.0, n, alpha, 0.0, 0.0, float("nan"), "D")
    if fwd.size and fwd.max() > 0:
        i = int(np.argmax(fwd))
        best = Ceiling(float(fwd[i]), n, alpha, float(p_fwd[i]), float(q_fwd[i]), float(ts[i]), "D")
    if sDp is not None:                                  # events {stat ≤ t}, favouring D′
        if exact_loss:
            k = sDp.size
            w = np.exp(sDp)                              # dP/dQ at the D′ samples
            cw = np.concatenate(([0.0], np.cumsum(w))) / k
            idx = np.searchsorted(sDp, ts, side="right")
            p_bwd, q_bwd = tail(sDp, ts, False, "lower"), cw[idx]
        else:
            p_bwd, q_bwd = tail(sDp, ts, False, "lower"), tail(sD, ts, False, "upper")
        bwd = _bound(p_bwd, q_bwd, n, alpha, delta)
        bwd[p_bwd * n < 1] = 0.0
        if bwd.size and bwd.max() > best.bound:
            i = int(np.argmax(bwd))
            best = Ceiling(float(bwd[i]), n, alpha, float(p_bwd[i]), float(q_bwd[i]), float(ts[i]), "D'")
    return best
