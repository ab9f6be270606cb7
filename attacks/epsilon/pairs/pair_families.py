"""The generic candidate pairs of each neighbour relation, built from the data (see :mod:`.neighbours`).

Add-remove: a canary added at box corners, axis extremes and the emptiest
point, an isolated and a central record removed, small and duplicated
datasets; replace: an isolated or a central record moved to a corner or the
emptiest point, and the DP-DBSCAN paper's Lemma 3.1 construction
(:func:`lemma_pair`); metric: a record moved by ``distance`` along the
diagonal and the axes.  :func:`~.neighbours.candidate_pairs` takes them in
priority order.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .pair import NeighbourPair

__all__ = ["DUPLICATES", "MAX_AXIS_EXTREMES", "MAX_CORNERS", "SMALL_SIZES", "lemma_pair"]

MAX_CORNERS = 16          # box corners tried (all of them when 2^d ≤ this, else a seeded sample)
MAX_AXIS_EXTREMES = 16    # axis-extreme placements tried
SMALL_SIZES = (0, 1, 2, 5, 9)  # records in the small datasets (0–10)
DUPLICATES = (2, 4, 8)    # copies of one record


def nn_distances(X: np.ndarray, k: int) -> np.ndarray:
    """Distance from each record to its k-th nearest other record."""
    from scipy.spatial import cKDTree

    k = max(1, min(k, len(X) - 1))
    dist, _ = cKDTree(X).query(X, k=k + 1)
    return dist[:, k]


def _farthest_corner(point: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The box corner farthest from ``point``."""
    return np.where(np.abs(point - lo) > np.abs(hi - point), lo, hi).astype(float)


def _corners(lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every box corner when there are at most :data:`MAX_CORNERS`, else a seeded sample of them."""
    d = len(lo)
    if 2 ** d <= MAX_CORNERS:
        bits = ((np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
    else:
        bits = rng.random((MAX_CORNERS, d)) < 0.5
    return np.where(bits, hi, lo).astype(float)


def _axis_extremes(centre: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """``centre`` pushed to the low and the high end of each axis (at most :data:`MAX_AXIS_EXTREMES`)."""
    out = []
    for j in range(len(lo)):
        for label, value in (("lo", lo[j]), ("hi", hi[j])):
            point = centre.astype(float).copy()
            point[j] = value
            out.append((f"{label}{j}", point))
    return out[:MAX_AXIS_EXTREMES]


def _emptiest_point(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A point of the box far from every record (corners, centre and 512 random points tried)."""
    from scipy.spatial import cKDTree

    d = X.shape[1]
    cands = [rng.uniform(lo, hi, size=(512, d)), ((lo + hi) / 2.0)[None, :]]
    if d <= 10:
        bits = ((np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
        cands.append(np.where(bits, hi, lo))
    C = np.vstack(cands)
    dist, _ = cKDTree(X).query(C, k=1)
    return C[int(np.argmax(dist))]


def _add(name: str, X: np.ndarray, canary: np.ndarray, description: str, family: str = "construction"
         ) -> NeighbourPair:
    return NeighbourPair(name, X, np.vstack([X, canary[None, :]]), "add-remove", len(X), canary.astype(float),
                         None, 1.0, 1.0, description, family=family)


def _replace(name: str, X: np.ndarray, i: int, new: np.ndarray, relation: str, description: str,
             distance: float = 1.0, scale: float = 1.0, family: str = "construction") -> NeighbourPair:
    Xp = X.copy()
    Xp[i] = new
    return NeighbourPair(name, X, Xp, relation, int(i), np.asarray(new, float), X[i].copy(), distance, scale,
                         description, family=family)


def lemma_pair(n: int, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator, *, scale: float = 1.0,
               fallback_for: str | None = None) -> NeighbourPair:
    """DP-DBSCAN Lemma 3.1 (the DP-DBSCAN paper, "Approximate DBSCAN under Differential Privacy"): n records in one tight spot; D′ moves one to a far corner.

    The records sit within 0.5 % of the box width of the box centre (a public,
    data-independent placement; the tiny spread avoids degenerate zero-range
    inputs in mechanisms that rescale).  Record 0 moves to the corner ``hi``.
    """
    centre = (lo + hi) / 2.0
    spread = 0.005 * (hi - lo)
    D = centre + rng.uniform(-spread, spread, size=(n, len(lo)))
    pair = _replace(f"lemma3.1-n{n}", D, 0, hi.astype(float), "replace",
                    f"DP-DBSCAN Lemma 3.1: {n} records in one tight cluster at the box centre; "
                    "one record moved to a far box corner" + (" (replace pair, bound halved for add-remove)"
                                                             if scale == 2.0 else ""),
                    scale=scale, family="lemma")
    return dataclasses.replace(pair, fallback_for=fallback_for)


# --------------------------------------------------------------------------- #
# Constructions per relation
# --------------------------------------------------------------------------- #
def add_remove_pairs(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, public: bool, isolated: int, central: int,
                      by_centrality: np.ndarray, rng: np.random.Generator) -> list[NeighbourPair]:
    mean = X.mean(axis=0)
    far = _farthest_corner(mean, lo, hi)
    pairs = [_add("canary-corner", X, far, "canary added at the box corner farthest from the data"),
             _add("canary-isolated", X, _emptiest_point(X, lo, hi, rng),
                  "canary added alone in the emptiest part of the box (its own cluster)")]
    if not public:
        pairs.append(_add("canary-outlier", X, mean + 10.0 * (far - mean),
                          "canary added as a far outlier (10× the data's extent)"))
    pairs.append(_add("canary-dense", X, X[central].copy(), "canary added on the record with the densest neighbourhood"))
    pairs.append(_add("remove-isolated", np.delete(X, isolated, axis=0), X[isolated].copy(),
                      "the most isolated record removed"))
    for m in SMALL_SIZES:
        D = X[by_centrality[:m]]
        corner = _farthest_corner(D.mean(axis=0) if m else (lo + hi) / 2.0, lo, hi)
        pairs.append(_add(f"small{m}-canary-corner", D, corner,
                          f"a dataset of {m} record(s) (the most central ones) and a canary at the far box corner",
                          family="small"))
    for k in DUPLICATES:
        D = np.vstack([X, np.repeat(X[isolated][None, :], k - 1, axis=0)])
        pairs.append(_add(f"dup{k}-isolated", D, X[isolated].copy(),
                          f"the most isolated record present {k - 1} extra time(s), plus one more copy",
                          family="duplicates"))
    for c in _corners(lo, hi, rng):
        if np.array_equal(c, far):
            continue
        pairs.append(_add("canary-at-" + _corner_name(c, lo), X, c, "canary added at a box corner", family="corner"))
    for label, point in _axis_extremes((lo + hi) / 2.0, lo, hi):
        pairs.append(_add(f"canary-axis-{label}", X, point, "canary added at an axis extreme of the box",
                          family="axis"))
    return pairs


def replace_pairs(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, isolated: int, central: int,
                   by_centrality: np.ndarray, rng: np.random.Generator) -> list[NeighbourPair]:
    pairs = [_replace(f"replace-{label}", X, i, _farthest_corner(X[i], lo, hi), "replace",
                      f"the most {label} record moved to the farthest box corner")
             for label, i in (("isolated", isolated), ("central", central))]
    for m in SMALL_SIZES[1:]:
        D = X[by_centrality[:m]]
        pairs.append(_replace(f"small{m}-to-corner", D, 0, _farthest_corner(D[0], lo, hi), "replace",
                              f"a dataset of {m} record(s); one moved to the far box corner", family="small"))
    pairs.append(_replace("corner-to-opposite", lo[None, :].astype(float), 0, hi.astype(float), "replace",
                          "one record at a box corner moved to the opposite corner", family="small"))
    for k in DUPLICATES:
        D = np.vstack([X, np.repeat(X[isolated][None, :], k, axis=0)])
        pairs.append(_replace(f"dup{k}-to-corner", D, len(D) - 1, _farthest_corner(X[isolated], lo, hi), "replace",
                              f"the most isolated record present {k} extra time(s); one copy moved to the far corner",
                              family="duplicates"))
    seen = {tuple(p.new) for p in pairs}
    for c in _corners(lo, hi, rng):
        if tuple(c) not in seen:
            pairs.append(_replace("isolated-to-" + _corner_name(c, lo), X, isolated, c, "replace",
                                  "the most isolated record moved to a box corner", family="corner"))
    for label, point in _axis_extremes(X[isolated], lo, hi):
        pairs.append(_replace(f"isolated-axis-{label}", X, isolated, point, "replace",
                              "the most isolated record moved to an axis extreme", family="axis"))
    return pairs


def metric_pairs(X: np.ndarray, distance: float, isolated: int, central: int, by_centrality: np.ndarray
                  ) -> list[NeighbourPair]:
    d = X.shape[1]
    dirs = [("+e1", np.eye(d)[0]), ("-e1", -np.eye(d)[0])]
    if d > 1:
        diag = np.ones(d) / np.sqrt(d)
        dirs += [("+diag", diag), ("-diag", -diag)]
    pairs = []
    for label, i in (("isolated", isolated), ("central", central)):
        for dname, u in dirs:
            pairs.append(_replace(f"move-{label}{dname}", X, i, X[i] + distance * u, "metric",
                                  f"the most {label} record moved by {distance:g} along {dname}",
                                  distance=float(distance), scale=float(distance)))
    for m in SMALL_SIZES[1:]:
        D = X[by_centrality[:m]]
        pairs.append(_replace(f"small{m}-move+e1", D, 0, D[0] + distance * np.eye(d)[0], "metric",
                              f"a dataset of {m} record(s); one moved by {distance:g} along +e1",
                              distance=float(distance), scale=float(distance), family="small"))
    for k in DUPLICATES:
        D = np.vstack([X, np.repeat(X[isolated][None, :], k, axis=0)])
        pairs.append(_replace(f"dup{k}-move+e1", D, len(D) - 1, X[isolated] + distance * np.eye(d)[0], "metric",
                              f"the most isolated record present {k} extra time(s); one copy moved by {distance:g}",
                              distance=float(distance), scale=float(distance), family="duplicates"))
    for j in range(1, min(d, MAX_AXIS_EXTREMES // 2)):
        for sign in (1.0, -1.0):
            pairs.append(_replace(f"move-isolated{'+' if sign > 0 else '-'}e{j + 1}", X, isolated,
                                  X[isolated] + sign * distance * np.eye(d)[j], "metric",
                                  f"the most isolated record moved by {distance:g} along an axis",
                                  distance=float(distance), scale=float(distance), family="axis"))
    return pairs


def _corner_name(corner: np.ndarray, lo: np.ndarray) -> str:
    return "corner-" + "".join("0" if c == l else "1" for c, l in zip(corner, lo))
