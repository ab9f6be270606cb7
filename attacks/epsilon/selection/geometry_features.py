"""Features of the geometric release kinds — points, centroids, labels, spans — for a :class:`FeatureMap`.

What each kind's columns are is said in :mod:`.features` (the layout and its
names live on the map); here are the functions that compute them, vectorised
over a batch of same-shape releases.  Centroid sets are read permutation-
invariantly (nearest and second-nearest centres, bounding boxes, spreads);
labels on the records the two datasets share.  ``fmap`` is the calling
:class:`~dpaudit.attacks.epsilon.selection.features.FeatureMap` (its pair, focus and anchors).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, cast

import numpy as np

from dpaudit.mechanisms.base import Centroids, Labels, Points, ReleaseBatch, Spans

__all__ = ["KINDS", "norm"]


def norm(a: np.ndarray) -> np.ndarray:
    """Euclidean norm over the last axis."""
    return np.sqrt(np.einsum("...i,...i->...", a, a))


# ---- points
def points(fmap: Any, rel: ReleaseBatch | Sequence[Points]) -> np.ndarray:
    P = rel.array if isinstance(rel, ReleaseBatch) else np.stack([r.points for r in rel])
    P = np.asarray(P, dtype=np.float64)
    m, n_out = P.shape[0], P.shape[1]
    cols = []
    if fmap.old is not None:
        z = P[:, fmap.pair.index, :] if fmap.pair.index < n_out else np.zeros((m, fmap.d))
        u = fmap.u if fmap.u is not None else np.zeros(fmap.d)
        d_old = norm(z - fmap.old)
        cols += [z, ((z - fmap.old) @ u)[:, None], (norm(z - fmap.focus) - d_old)[:, None], d_old[:, None]]
    if n_out:
        cols += [P.mean(axis=1), norm(P - fmap.focus).min(axis=1)[:, None]]
    else:
        cols += [np.zeros((m, fmap.d)), np.zeros((m, 1))]
    cols.append(np.full((m, 1), float(n_out)))
    return np.hstack(cols)

# ---- centroids
def centroids(fmap: Any, rel: ReleaseBatch | Sequence[Centroids]) -> np.ndarray:
    width = len(fmap.names) - 1
    if isinstance(rel, ReleaseBatch) and rel.array.shape[1] > 0:
        return centroid_block(fmap, np.asarray(rel.array, float), rel.counts)
    out = []
    for r in cast("Sequence[Centroids]", rel):  # no centres (an empty batch): a row of zeros, n_centres = 0
        centers = np.asarray(r.centers)
        if len(centers) == 0:
            out.append(np.zeros(width))
            continue
        counts = r.counts
        cnt = None if counts is None else np.asarray(counts)[None, :]
        out.append(centroid_block(fmap, centers[None, :, :], cnt)[0])
    return np.vstack(out) if out else np.zeros((0, width))

def centroid_block(fmap: Any, C: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
    """The centroid features of m releases of k centres each (see :mod:`.features`).

    A centre with a NaN or infinite coordinate (a division by a noisy count that reached 0) is part of the
    release but has no place: it is left out of every geometric column — as if absent — and counted in
    ``n_na`` when the layout has that column (:meth:`~.features.FeatureMap.fit_layout`); a release whose every
    centre is such reads as one with no centre in those columns."""
    m, k, _ = C.shape
    with np.errstate(invalid="ignore", over="ignore"):
        placed = np.isfinite(C).all(axis=2)                      # (m, k)
    dense = bool(placed.all())
    if not dense:
        C = np.where(placed[:, :, None], C, 0.0)
    dist = norm(C - fmap.focus) if dense else np.where(placed, norm(C - fmap.focus), np.inf)  # (m, k)
    order = np.argsort(dist, axis=1)
    rows = np.arange(m)
    d1 = dist[rows, order[:, 0]]
    d2 = dist[rows, order[:, 1]] if k > 1 else d1
    nearest = C[rows, order[:, 0], :]
    gap = np.abs(C - fmap.focus) if dense else np.where(placed[:, :, None], np.abs(C - fmap.focus), np.inf)
    d1_inf = gap.max(axis=2).min(axis=1)              # L∞ distance from the focus to the nearest centre
    coord_gap = gap.min(axis=(1, 2))                  # how near any centre comes to the focus in any coordinate
    cols = [np.full((m, 1), float(k)), d1[:, None], d2[:, None], d1_inf[:, None], coord_gap[:, None], nearest]
    if fmap.old is not None:
        d_old = (norm(C - fmap.old) if dense else np.where(placed, norm(C - fmap.old), np.inf)).min(axis=1)
        u = fmap.u if fmap.u is not None else np.zeros(fmap.d)
        proj = (C - fmap.old) @ u
        hi_proj = proj.max(axis=1) if dense else np.where(placed, proj, -np.inf).max(axis=1)
        lo_proj = proj.min(axis=1) if dense else np.where(placed, proj, np.inf).min(axis=1)
        cols += [d_old[:, None], (d1 - d_old)[:, None], hi_proj[:, None], lo_proj[:, None]]
    if dense:
        mean = C.mean(axis=1)
        spread = norm(C - mean[:, None, :]).mean(axis=1)
        c_min, c_max = C.min(axis=1), C.max(axis=1)
    else:
        n_placed = np.maximum(placed.sum(axis=1), 1)[:, None]
        mean = C.sum(axis=1) / n_placed                 # C is 0 where a centre has no place
        spread = (norm(C - mean[:, None, :]) * placed).sum(axis=1) / n_placed[:, 0]
        c_min = np.where(placed[:, :, None], C, np.inf).min(axis=1)
        c_max = np.where(placed[:, :, None], C, -np.inf).max(axis=1)
    # The centres' bounding box: "every centre below t" in a coordinate (an untouched start centre, a
    # cluster left empty) is a threshold on centre_max.
    cols += [mean, c_min, c_max, spread[:, None]]
    if counts is not None:
        counts = np.asarray(counts, float).reshape(m, k)
        cols += [counts.sum(axis=1)[:, None], counts[rows, order[:, 0]][:, None]]
    else:
        cols += [np.zeros((m, 1)), np.zeros((m, 1))]
    if fmap.status:
        cols.append((k - placed.sum(axis=1)).astype(float)[:, None])
    return np.hstack(cols)

# ---- labels
def shared_labels(fmap: Any, L: np.ndarray) -> np.ndarray:
    """The labels of the shared records, in the shared order, whatever the release's length.

    A release as long as the larger dataset of an add-remove pair drops the
    extra record's entry (its row ``pair.index``); shorter ones are padded
    as noise.  Which rule applies depends on the release's length only.
    """
    ns, n_out = fmap.n_shared, L.shape[1]
    if fmap.pair.relation == "add-remove" and n_out == fmap.larger and n_out == ns + 1:
        L = np.delete(L, fmap.pair.index, axis=1)
    if L.shape[1] >= ns:
        return L[:, :ns]
    return np.hstack([L, np.full((L.shape[0], ns - L.shape[1]), -1, dtype=L.dtype)])

def labels(fmap: Any, rel: ReleaseBatch | Sequence[Labels]) -> np.ndarray:
    raw = rel.array if isinstance(rel, ReleaseBatch) else np.stack([np.asarray(r.labels) for r in rel])
    raw = np.asarray(raw).astype(np.int64)
    m, n_out = raw.shape
    L = shared_labels(fmap, raw) if fmap.n_shared else raw
    ns = L.shape[1]
    if ns == 0:
        return np.column_stack([np.zeros((m, 6)), np.full(m, float(n_out))])
    noise = L < 0
    S = np.sort(np.where(noise, -1, L), axis=1)
    new_run = np.ones_like(S, dtype=bool)
    new_run[:, 1:] = S[:, 1:] != S[:, :-1]
    n_clusters = (new_run & (S >= 0)).sum(axis=1)
    # Share of co-clustered (non-noise) ordered pairs: Σ size² / n² over clusters.
    run_id = np.cumsum(new_run, axis=1) - 1
    flat = (run_id + np.arange(m)[:, None] * ns).ravel()
    sizes = np.bincount(flat, weights=(S >= 0).ravel().astype(float), minlength=m * ns).reshape(m, ns)
    pair_share = (sizes ** 2).sum(axis=1) / float(ns * ns)
    if fmap.anchor is None or not fmap.n_shared:
        anchor_cols = np.zeros((m, 3))
    else:
        a = L[:, fmap.anchor]
        a_ok = a >= 0
        same = (L == a[:, None]) & a_ok[:, None]
        anchor_share = (same.sum(axis=1) - a_ok) / max(ns - 1, 1)
        nn = fmap.anchor_nn
        anchor_nn = same[:, nn].mean(axis=1) if nn.size else np.zeros(m)
        anchor_cols = np.column_stack([(~a_ok).astype(float), anchor_share, anchor_nn])
    return np.column_stack([n_clusters, noise.mean(axis=1), pair_share, anchor_cols, np.full(m, float(n_out))])

# ---- spans
def spans(fmap: Any, rel: Sequence[Spans]) -> np.ndarray:
    rows = []
    targets = [fmap.focus] if fmap.old is None else [fmap.focus, fmap.old]
    T = np.vstack(targets)
    for r in rel:
        row = [float(r.n_clusters), 0.0]
        cells = [np.asarray(c) for c in r.cells]
        allc = np.vstack(cells) if cells else np.empty((0, fmap.d), dtype=np.int64)
        row[1] = float(len(allc))
        covered = r.predict(T) >= 0
        tc = r.cell_of(T)
        for j in range(len(T)):
            near = 0.0
            if len(allc):
                near = float(np.sum(np.max(np.abs(allc - tc[j]), axis=1) <= 2))
            row += [float(covered[j]), near]
        rows.append(row)
    return np.asarray(rows, dtype=float).reshape(len(rows), len(fmap.names) - 1)


KINDS: dict[str, Callable[..., np.ndarray]] = {  # kind -> its features
    "points": points, "centroids": centroids, "labels": labels, "spans": spans}
