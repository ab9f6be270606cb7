"""Su et al.'s data-independent initial centroids (CODASPY 2016), as DP-KCCM starts from them.

The DP-KCCM paper §2.2.1: candidates uniform in the box (in units of the
half-width, i.e. the box mapped to [−1, 1]^d), kept only if ≥ a from the
boundary and ≥ 2a from every kept centroid; a starts at 0.5 and is multiplied
by 0.8 after ``ATTEMPTS`` failed attempts.  Only the dimension and the rng are
read — never the records, so the start is not private.  :func:`initial_centroids`
draws one start; :func:`initial_centroids_many` many, vectorised, each with the
law of one scalar call.  Re-exported by :mod:`dpaudit.mechanisms.dpkccm`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["initial_centroids", "initial_centroids_many"]

A0 = 0.5        # the DP-KCCM paper §2.2.1: initial a for data in [−1, 1]
SHRINK = 0.8    # factor applied to a after ATTEMPTS failed attempts
ATTEMPTS = 5
CANDIDATES_PER_CENTROID = 50


def initial_centroids(m: int, d: int, rng: np.random.Generator, *, a0: float = A0,
                      return_a: bool = False) -> np.ndarray | tuple[np.ndarray, float]:
    """Su et al. data-independent initial centroids in the unit box [−1, 1]^d.

    Seed 001 §2.2.1: a candidate drawn uniformly in the box is kept only if it
    is at least ``a`` from the boundary and at least ``2a`` from every kept
    centroid; after repeated failure ``a`` shrinks.  Drawing uniformly in the
    inner box [−1 + a, 1 − a]^d is the same as rejecting candidates closer than
    ``a`` to the boundary.  Reads nothing but ``m``, ``d`` and ``rng``.
    With ``return_a`` the separation ``a`` finally used is returned as well.
    """
    a = a0
    budget = CANDIDATES_PER_CENTROID * m
    while True:
        for _ in range(ATTEMPTS):
            cand = rng.uniform(-1.0 + a, 1.0 - a, size=(budget, d))
            # Sequential first-fit over the candidates in draw order: a candidate is kept iff
            # no earlier kept one is closer than 2a.  Loop over the kept ones only (≤ m steps).
            alive = np.ones(budget, dtype=bool)
            kept: list[int] = []
            start = 0
            while len(kept) < m:
                rest = np.flatnonzero(alive[start:])
                if rest.size == 0:
                    break
                i = start + int(rest[0])
                kept.append(i)
                diff = cand - cand[i]
                alive &= np.einsum("ij,ij->i", diff, diff) >= (2.0 * a) ** 2
                start = i + 1
            if len(kept) == m:
                out = cand[kept]
                return (out, a) if return_a else out
        a *= SHRINK


def initial_centroids_many(runs: int, m: int, d: int, rng: np.random.Generator, *, a0: float = A0,
                           block: int = 16) -> np.ndarray:
    """``runs`` independent draws of :func:`initial_centroids`, vectorised: (runs, m, d).

    Each run follows the same procedure: per attempt a stream of at most 50·m
    uniform candidates in the inner box, first-fit (a candidate is kept iff no
    kept one is closer than 2a), ``ATTEMPTS`` attempts per value of a, then a
    shrinks.  The stream is drawn ``block`` candidates at a time and only as
    far as needed: candidates after the one kept are discarded rather than
    examined next — fresh independent uniforms in their place have the same
    law, and the budget counts stream positions exactly — so every run has the
    law of one scalar call (not its generator order).
    """
    out = np.empty((runs, m, d))
    todo = np.arange(runs)
    a = a0
    budget = CANDIDATES_PER_CENTROID * m
    steps = np.arange(block)
    ball = math.pi ** (d / 2.0) / math.gamma(d / 2.0 + 1.0)       # volume of the unit ball in R^d
    while todo.size:
        # m disjoint balls of radius a inside [−1, 1]^d need m·V_d·a^d ≤ 2^d: below that every
        # attempt fails for sure, so skipping them leaves each run's law unchanged.
        if m > 1 and m * ball * a ** d > 2.0 ** d * (1.0 + 1e-12):
            a *= SHRINK
            continue
        for _ in range(ATTEMPTS):
            if not todo.size:
                break
            kept = np.empty((todo.size, m, d))
            pos = np.zeros(todo.size, dtype=np.int64)     # stream positions consumed
            live = np.arange(todo.size)                   # runs whose attempt has not failed yet
            for j in range(m):
                found = np.zeros(todo.size, dtype=bool)
                need = live
                while need.size:
                    cand = rng.uniform(-1.0 + a, 1.0 - a, size=(need.size, block, d))
                    ok = pos[need, None] + steps[None, :] < budget
                    if j:
                        diff = cand[:, :, None, :] - kept[need, None, :j, :]
                        ok &= np.einsum("rbkd,rbkd->rbk", diff, diff).min(axis=2) >= (2.0 * a) ** 2
                    hit = ok.any(axis=1)
                    first = np.argmax(ok, axis=1)
                    kept[need[hit], j] = cand[hit, first[hit]]
                    found[need[hit]] = True
                    pos[need] += np.where(hit, first + 1, block)
                    need = need[~hit & (pos[need] < budget)]
                live = live[found[live]]                  # no candidate left in the budget: failed
            out[todo[live]] = kept[live]
            done = np.zeros(todo.size, dtype=bool)
            done[live] = True
            todo = todo[~done]
        a *= SHRINK
    return out
