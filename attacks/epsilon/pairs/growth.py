"""Larger datasets for code that releases nothing at small sizes.

Some DP code answers only on enough data: a k-means whose noisy count must
exceed a threshold releases an empty set of centres below about a hundred
records; a clustering refuses fewer records than it has clusters.  The
constructions of :mod:`.constructions` are small, and the audited data may be
small too (30 records by default), so a screening on which no pair releases
anything on both sides says nothing — and a leak that shows only where the
code answers is never drawn.  :func:`grown_pairs` builds the strongest
constructions again at a given size, for the screen's growth steps
(:class:`~dpaudit.attacks.epsilon.search.screening.Screen`): every record at one corner
or at the centre with the canary at the far corner, records on two opposite
corners with the canary at the centre, a lone canary in its own cluster beside
k − 1 large groups, and the audited records tiled to the size with the canary
at the box corner farthest from them.  Like every construction they lie in the
public box (the tiled records are the user's own, repeated: a test input, never
reported) and are valid neighbours under the claim's relation.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .constructions import degenerate_pairs, lone_corner_pair, to_replace
from .neighbours import NeighbourPair

__all__ = ["grown_pairs"]


def _tiled_pair(X: np.ndarray, size: int, lo: np.ndarray, hi: np.ndarray) -> NeighbourPair:
    """The audited records repeated to ``size`` rows; the canary at the box corner farthest from their mean."""
    D = np.asarray(X, dtype=np.float64)[np.arange(int(size)) % len(X)]
    centre = D.mean(axis=0)
    canary = np.where(np.abs(hi - centre) >= np.abs(centre - lo), hi, lo)
    return NeighbourPair(f"tiled-{size}-far", D, np.vstack([D, canary[None, :]]), "add-remove", len(D), canary.copy(),
                         description=f"the audited records repeated to {size} records; canary added at the box "
                         "corner farthest from them", family="grown")


def grown_pairs(bounds: tuple[np.ndarray, np.ndarray], X: np.ndarray, k: int, size: int, relation: str
                ) -> list[NeighbourPair]:
    """The constructions of one growth step: datasets of ``size`` records (see the module doc), under
    ``relation`` (add-remove, or replace: a record moves to the canary's place); none for metric claims, whose
    pairs move one record of the audited data by a distance."""
    if relation not in ("add-remove", "replace") or size < 1:
        return []
    lo, hi = (np.asarray(b, dtype=np.float64) for b in bounds)
    d = len(lo)
    k = max(1, int(k))
    pairs = [p for p in degenerate_pairs((lo, hi), d, k, sizes=[int(size)]) if p.name.endswith(("-far", "-mid"))]
    if k > 1:
        lone = lone_corner_pair((lo, hi), d, k, group_size=max(1, int(size) // (k - 1)))
        pairs.append(dataclasses.replace(lone, name=f"{lone.name}-{len(lone.D)}"))
    if len(X):
        pairs.append(_tiled_pair(X, int(size), lo, hi))
    pairs = [dataclasses.replace(p, family="grown") for p in pairs]
    return [to_replace(p) for p in pairs] if relation == "replace" else pairs
