"""Release → feature vector, per release kind (the input of event selection).

A :class:`FeatureMap` is fixed by the neighbouring pair before any sample is
drawn, and the same function is applied to releases on D and on D′, so a
threshold on a feature (or on a classifier's score of the features) is a
fixed measurable event on the release space — what the DP inequality
P[M(D) ∈ S] ≤ e^ε·P[M(D′) ∈ S] + δ talks about.

Per kind (all vectorised over a :class:`~mechanisms.base.ReleaseBatch`):

``vector``    the values.
``points``    replace/metric pairs: the changed record's output z, its
              projection on the displacement (z − x)·u, the log-likelihood-
              ratio statistic of isotropic Laplace noise ‖z − x′‖ − ‖z − x‖ and
              ‖z − x‖; always: the mean released point and the distance from
              the focus (canary / new location) to the nearest released point.
``centroids`` permutation-invariant: number of centres, distances from the
              focus (and the old location) to the nearest and second-nearest
              centre, the nearest centre itself, the centres' mean and spread,
              the extreme projections on the displacement, and (when released)
              the noisy total count and the count of the focus's centre.
``labels``    on the shared records only: number of clusters, noise share,
              share of co-clustered pairs; for the changed record (or the
              shared record nearest the canary) whether it is noise, the share
              of records with its label and of its 5 nearest neighbours with
              its label.
``spans``     number of spans, covered cells, whether the focus (and the old
              location) is covered, covered cells within 2 cells of each.
``transcript`` replayed log-likelihood ratios per draw group and summaries
              (:class:`attacks.transcripts.TranscriptFeatureMap`, which
              ``FeatureMap(pair, "transcript")`` returns).

Release sizes (n points or labels) are never features: a per-record release
reveals n by construction, which the per-record-output convention treats as
public, and using it would "find" that trivially.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mechanisms.base import InvalidInputError, Release, ReleaseBatch

from .neighbours import NeighbourPair

__all__ = ["FeatureMap", "as_batch"]


def as_batch(releases: ReleaseBatch | Sequence[Release]) -> ReleaseBatch | list[Release]:
    """A ReleaseBatch when the releases stack (same kind and shape), else the list."""
    if isinstance(releases, ReleaseBatch):
        return releases
    return ReleaseBatch.stack(list(releases))


def _kind(releases: ReleaseBatch | Sequence[Release]) -> str:
    if isinstance(releases, ReleaseBatch):
        return releases.kind
    if not releases:
        raise InvalidInputError("no releases to featurise")
    return releases[0].kind


def _norm(a: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sqrt(np.einsum("...i,...i->...", a, a)) if axis == -1 else np.linalg.norm(a, axis=axis)


class FeatureMap:
    """Features of releases for one neighbouring pair (picklable; no sample-dependent state).

    >>> import numpy as np
    >>> from attacks.neighbours import candidate_pairs
    >>> from mechanisms.base import ReleaseBatch
    >>> pair = candidate_pairs(np.arange(8.0).reshape(4, 2), "metric")[0]
    >>> fmap = FeatureMap(pair, "points")
    >>> fmap(ReleaseBatch("points", np.zeros((3, 4, 2)))).shape == (3, len(fmap.names))
    True
    """

    def __new__(cls, pair: NeighbourPair | None = None, kind: str | None = None) -> "FeatureMap":
        if kind == "transcript":   # transcripts are featurised by replaying them (attacks/transcripts.py)
            from .transcripts import TranscriptFeatureMap
            return TranscriptFeatureMap(pair, kind)  # type: ignore[return-value,arg-type]
        return super().__new__(cls)

    def __init__(self, pair: NeighbourPair, kind: str) -> None:
        self.pair = pair
        self.kind = kind
        self.d = int(pair.D.shape[1])
        self.n_shared = pair.n_shared
        self.focus = np.asarray(pair.focus, float)
        self.old = None if pair.old is None else np.asarray(pair.old, float)
        self.u = pair.direction
        shared = pair.D[: self.n_shared]
        # The shared record the change is about: the changed one, or the one nearest the canary.
        if pair.relation == "add-remove":
            self.anchor = int(np.argmin(_norm(shared - self.focus)))
        else:
            self.anchor = int(pair.index)
        dists = _norm(shared - shared[self.anchor])
        order = np.argsort(dists, kind="stable")
        self.anchor_nn = order[order != self.anchor][:5]
        self.names = self._names()

    # ------------------------------------------------------------------ names
    def _names(self) -> list[str]:
        d, k = self.d, self.kind
        coords = lambda p: [f"{p}[{j}]" for j in range(d)]  # noqa: E731
        if k == "vector":
            return []  # fixed at first call (the vector's length)
        if k == "points":
            names = []
            if self.old is not None:
                names += coords("z") + ["proj", "llr", "dist_old"]
            return names + coords("mean") + ["min_dist_focus"]
        if k == "centroids":
            names = ["n_centres", "d1_focus", "d2_focus"] + coords("nearest")
            if self.old is not None:
                names += ["d1_old", "d1_diff", "proj_max", "proj_min"]
            return names + coords("centre_mean") + ["spread", "count_total", "count_focus"]
        if k == "labels":
            return ["n_clusters", "noise_share", "pair_share", "anchor_noise", "anchor_share", "anchor_nn_share"]
        if k == "spans":
            names = ["n_spans", "cells", "focus_covered", "focus_near"]
            if self.old is not None:
                names += ["old_covered", "old_near"]
            return names
        raise InvalidInputError(f"cannot featurise {k!r} releases")

    # ------------------------------------------------------------------ call
    def __call__(self, releases: ReleaseBatch | Sequence[Release]) -> np.ndarray:
        """(m, f) float matrix; NaN/inf replaced by finite values."""
        releases = as_batch(releases)
        kind = _kind(releases)
        if kind != self.kind:
            raise InvalidInputError(f"expected {self.kind} releases, got {kind}")
        F = getattr(self, f"_{kind}")(releases)
        return np.nan_to_num(np.asarray(F, dtype=np.float64), nan=0.0, posinf=1e300, neginf=-1e300)

    def _vector(self, rel: ReleaseBatch | list[Release]) -> np.ndarray:
        if isinstance(rel, ReleaseBatch):
            V = rel.array.reshape(len(rel), -1)
        else:
            sizes = {r.values.size for r in rel}  # type: ignore[attr-defined]
            if len(sizes) != 1:
                raise InvalidInputError("vector releases must have a fixed length to be compared")
            V = np.stack([r.values.ravel() for r in rel])  # type: ignore[attr-defined]
        if not self.names:
            self.names = [f"v[{j}]" for j in range(V.shape[1])]
        elif len(self.names) != V.shape[1]:
            raise InvalidInputError("vector releases on D and D′ differ in length; nothing to compare")
        return V

    def _points(self, rel: ReleaseBatch | list[Release]) -> np.ndarray:
        if isinstance(rel, ReleaseBatch):
            P = rel.array
        else:
            P = np.stack([r.points for r in rel])  # type: ignore[attr-defined]
        cols = []
        if self.old is not None:
            z = P[:, self.pair.index, :]
            u = self.u if self.u is not None else np.zeros(self.d)
            d_old = _norm(z - self.old)
            cols += [z, ((z - self.old) @ u)[:, None], (_norm(z - self.focus) - d_old)[:, None],
                     d_old[:, None]]
        cols.append(P.mean(axis=1))
        cols.append(_norm(P - self.focus).min(axis=1)[:, None])
        return np.hstack(cols)

    def _centroids(self, rel: ReleaseBatch | list[Release]) -> np.ndarray:
        if isinstance(rel, ReleaseBatch) and rel.array.shape[1] > 0:
            return self._centroid_block(rel.array, rel.counts)
        # Variable k (or an empty batch): one release at a time.
        rows = [(r.centers, r.counts) for r in rel]  # type: ignore[attr-defined]
        out = []
        for centers, counts in rows:
            if len(centers) == 0:
                out.append(np.zeros(len(self.names)))
                continue
            cnt = None if counts is None else np.asarray(counts)[None, :]
            out.append(self._centroid_block(np.asarray(centers)[None, :, :], cnt)[0])
        return np.vstack(out)

    def _centroid_block(self, C: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
        m, k, _ = C.shape
        dist = _norm(C - self.focus)  # (m, k)
        order = np.argsort(dist, axis=1)
        rows = np.arange(m)
        d1 = dist[rows, order[:, 0]]
        d2 = dist[rows, order[:, 1]] if k > 1 else d1
        nearest = C[rows, order[:, 0], :]
        cols = [np.full((m, 1), float(k)), d1[:, None], d2[:, None], nearest]
        if self.old is not None:
            d_old = _norm(C - self.old).min(axis=1)
            u = self.u if self.u is not None else np.zeros(self.d)
            proj = (C - self.old) @ u
            cols += [d_old[:, None], (d1 - d_old)[:, None], proj.max(axis=1)[:, None], proj.min(axis=1)[:, None]]
        mean = C.mean(axis=1)
        spread = _norm(C - mean[:, None, :]).mean(axis=1)
        cols += [mean, spread[:, None]]
        if counts is not None:
            counts = np.asarray(counts, float).reshape(m, k)
            cols += [counts.sum(axis=1)[:, None], counts[rows, order[:, 0]][:, None]]
        else:
            cols += [np.zeros((m, 1)), np.zeros((m, 1))]
        return np.hstack(cols)

    def _labels(self, rel: ReleaseBatch | list[Release]) -> np.ndarray:
        ns = self.n_shared
        if isinstance(rel, ReleaseBatch):
            L = rel.array[:, :ns]
        else:
            L = np.stack([np.asarray(r.labels)[:ns] for r in rel])  # type: ignore[attr-defined]
        L = L.astype(np.int64)
        m = L.shape[0]
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
        a = L[:, self.anchor]
        a_ok = a >= 0
        same = (L == a[:, None]) & a_ok[:, None]
        anchor_share = (same.sum(axis=1) - a_ok) / max(ns - 1, 1)
        nn = self.anchor_nn
        anchor_nn = same[:, nn].mean(axis=1) if nn.size else np.zeros(m)
        return np.column_stack([n_clusters, noise.mean(axis=1), pair_share, (~a_ok).astype(float),
                                anchor_share, anchor_nn])

    def _spans(self, rel: ReleaseBatch | list[Release]) -> np.ndarray:
        rows = []
        targets = [self.focus] if self.old is None else [self.focus, self.old]
        T = np.vstack(targets)
        for r in rel:
            row = [float(r.n_clusters), 0.0]  # type: ignore[attr-defined]
            cells = [np.asarray(c) for c in r.cells]  # type: ignore[attr-defined]
            allc = np.vstack(cells) if cells else np.empty((0, self.d), dtype=np.int64)
            row[1] = float(len(allc))
            covered = r.predict(T) >= 0
            tc = r.cell_of(T)  # type: ignore[attr-defined]
            for j in range(len(T)):
                near = 0.0
                if len(allc):
                    near = float(np.sum(np.max(np.abs(allc - tc[j]), axis=1) <= 2))
                row += [float(covered[j]), near]
            rows.append(row)
        return np.asarray(rows, dtype=float)
