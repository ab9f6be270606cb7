"""Release → feature vector, per release kind (the input of event selection).

A :class:`FeatureMap` is fixed by the neighbouring pair (and, for vectors, by
a small probe sample drawn before selection) before any selection or
certification sample is featurised, and the same function is applied to
releases on D and on D′ — it never knows which dataset a release came from —
so a threshold on a feature (or on any statistic of the features) is a fixed
measurable event on the release space, which is what the DP inequality
P[M(D) ∈ S] ≤ e^ε·P[M(D′) ∈ S] + δ talks about.

Per kind (all vectorised over a :class:`~dpaudit.mechanisms.base.ReleaseBatch`;
releases of different shapes are grouped by shape and featurised group by group):

``vector``    per position j (all positions of short vectors; for long ones the
              first :data:`MAX_POSITIONS` // 2, the ones around the changed
              record's index and the last :data:`TAIL`): the value ``v[j]``,
              its successive difference ``dv[j] = v[j] − v[j−1]`` (prefix sums,
              cumulative histograms) and, when the probe saw "no answer" entries
              or ragged lengths, a status ``na[j]`` (0 a number, 1 NaN/None,
              2 −∞, 3 +∞, 4 absent: the release is shorter); always the
              ``length``, the number of non-finite entries ``n_na``, and for
              vectors longer than one the sum, minimum and maximum of the finite
              entries.  Non-finite and absent values read 0 in ``v``/``dv``.
``points``    replace/metric pairs: the changed record's output z, its
              projection on the displacement (z − x)·u, the log-likelihood-
              ratio statistic of isotropic Laplace noise ‖z − x′‖ − ‖z − x‖ and
              ‖z − x‖; always: the mean released point, the distance from the
              focus (canary / new location) to the nearest released point and
              the number of released points.
``centroids`` permutation-invariant (a centre with a NaN or infinite coordinate
              left out of the geometry, counted in ``n_na`` when the probe saw one;
              an empty set of centres reads 0 everywhere but ``n_centres``): number of centres, distances from the
              focus (and the old location) to the nearest and second-nearest
              centre, the L∞ distance to the nearest and the smallest gap in
              any coordinate, the nearest centre itself, the centres' mean,
              their bounding box (per-coordinate min and max) and spread,
              the extreme projections on the displacement, and (when released)
              the noisy total count and the count of the focus's centre.
``labels``    on the shared records only: number of clusters, noise share,
              share of co-clustered pairs; for the changed record (or the
              shared record nearest the canary) whether it is noise, the share
              of records with its label and of its 5 nearest neighbours with
              its label; and the number of labels released.
``spans``     number of spans, covered cells, whether the focus (and the old
              location) is covered, covered cells within 2 cells of each.
``transcript`` replayed log-likelihood ratios per draw group and summaries
              (:class:`dpaudit.attacks.epsilon.selection.transcripts.TranscriptFeatureMap`, which
              ``FeatureMap(pair, "transcript")`` returns).

Every kind ends with ``failed``: 0 for a release of the expected kind, 1 for a
:class:`~dpaudit.mechanisms.base.Failed` stand-in (the audited code raised or returned
garbage for this input and seed), 2 for a release of another kind; the other
columns of such a row are 0.  A failure is an outcome like any other: a
failure rate that depends on the data is a leak, and counting it keeps the
certification sound.

**Sizes and shapes are features.**  A release whose size depends on n reveals
whether a record was added — under an add-remove claim that *is* a violation,
and the auditor reports it (a per-record output audited against an
add-remove claim is flagged at the sample-size ceiling).  Replace and metric
pairs keep n fixed, so sizes only matter there when the mechanism's output
size is itself random.
"""

from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np

from dpaudit.mechanisms.base import (
    Centroids,
    InvalidInputError,
    Labels,
    Points,
    Release,
    ReleaseBatch,
    TranscriptBatch,
    Vector,
)

from ..pairs.neighbours import NeighbourPair
from .geometry_features import KINDS, norm

__all__ = ["MAX_POSITIONS", "TAIL", "FeatureMap", "as_batch", "compact", "fill_rows", "position_groups", "sample_dtype"]

MAX_POSITIONS = 64   # vectors up to this long get every position as a feature
TAIL = 8             # positions counted from the end, for longer (or ragged) vectors
_CLIP = 1e12         # features are clipped to ±_CLIP so standardisation never overflows

_STATUS_NAN, _STATUS_NEGINF, _STATUS_POSINF, _STATUS_ABSENT = 1.0, 2.0, 3.0, 4.0


def as_batch(releases: ReleaseBatch | Sequence[Release]) -> ReleaseBatch | TranscriptBatch | list[Release]:
    """A ReleaseBatch when the releases stack (same kind and shape), else the list."""
    if isinstance(releases, ReleaseBatch):
        return releases
    return ReleaseBatch.stack(list(releases))


_BLOCK_ROWS = 8192   # rows per block when copying between row- and column-major layouts


def fill_rows(out: np.ndarray, start: int, rows: np.ndarray) -> None:
    """``out[start:start + len(rows)] = rows``, in blocks of rows: between a row-major and a
    column-major array a blocked copy stays in cache and is ~8× faster than one strided copy."""
    for i in range(0, len(rows), _BLOCK_ROWS):
        block = rows[i:i + _BLOCK_ROWS]
        out[start + i:start + i + len(block)] = block


def compact(features: np.ndarray) -> np.ndarray:
    """``features`` as float32 when that is exact (discrete outputs: flags, counts, small integers), else as is."""
    small = features.astype(np.float32)
    head = min(len(features), 1024)  # continuous features fail at once, before the full comparison
    exact = bool(np.all(small[:head] == features[:head])) and bool(np.all(small == features))
    return small if exact else features  # (NaN never compares equal: such a matrix stays as it is)


def sample_dtype(*groups: Sequence[np.ndarray]) -> type[np.floating]:
    """float32 when every block is float32 (its values exact there: :func:`dpaudit.attacks.epsilon.sampling.sampling.features_chunk`
    sends them so only then), else float64 — half the memory and copying for discrete releases."""
    blocks = [b for group in groups for b in group]
    return np.float32 if blocks and all(b.dtype == np.float32 for b in blocks) else np.float64


def position_groups(names: Sequence[str]) -> dict[str, list[int]]:
    """Columns of a vector layout's position groups, read from the names :class:`FeatureMap` writes:
    ``"v"`` the values v[j], ``"dv"`` the increments with v[0] first (v[0], dv[1], dv[2], …).
    Empty lists for layouts of other kinds."""
    values = [i for i, name in enumerate(names) if name.startswith("v[")]
    steps = [i for i, name in enumerate(names) if name.startswith("dv[")]
    first = [i for i, name in enumerate(names) if name == "v[0]"]
    return {"v": values, "dv": first + steps if steps else []}


def _shape_key(release: Release) -> tuple:
    """Releases with the same key stack into one batch."""
    kind = release.kind
    if kind == "points":
        return (kind, cast(Points, release).points.shape)
    if kind == "centroids":
        return (kind, cast(Centroids, release).centers.shape, cast(Centroids, release).counts is None)
    if kind == "labels":
        return (kind, cast(Labels, release).labels.shape)
    if kind == "vector":
        return (kind, cast(Vector, release).values.size)
    return (kind,)


class FeatureMap:
    """Features of releases for one neighbouring pair (picklable; no sample-dependent state
    apart from the vector layout fixed by :meth:`fit_layout` before selection).

    >>> import numpy as np
    >>> from dpaudit.attacks.epsilon.pairs.neighbours import candidate_pairs
    >>> from dpaudit.mechanisms.base import ReleaseBatch
    >>> pair = candidate_pairs(np.arange(8.0).reshape(4, 2), "metric")[0]
    >>> fmap = FeatureMap(pair, "points")
    >>> fmap(ReleaseBatch("points", np.zeros((3, 4, 2)))).shape == (3, len(fmap.names))
    True
    """

    def __new__(cls, pair: NeighbourPair | None = None, kind: str | None = None) -> Any:  # or a TranscriptFeatureMap
        if kind == "transcript":   # transcripts are featurised by replaying them (attacks/epsilon/selection/transcripts.py)
            from .transcripts import TranscriptFeatureMap
            if pair is None:
                raise ValueError("a transcript feature map needs the neighbouring pair it replays")
            return TranscriptFeatureMap(pair, kind)
        return super().__new__(cls)

    def __init__(self, pair: NeighbourPair, kind: str) -> None:
        if kind not in ("vector", "points", "centroids", "labels", "spans"):
            raise InvalidInputError(f"cannot featurise {kind!r} releases")
        self.pair = pair
        self.kind = kind
        self.d = int(pair.D.shape[1])
        self.n_shared = pair.n_shared
        self.larger = int(max(len(pair.D), len(pair.D_prime)))
        self.focus = np.asarray(pair.focus, float)
        self.old = None if pair.old is None else np.asarray(pair.old, float)
        self.u = pair.direction
        shared = pair.shared_records
        # The shared record the change is about: the changed one, or the one nearest the canary.
        self.anchor: int | None = None
        self.anchor_nn = np.empty(0, dtype=np.int64)
        if len(shared):
            self.anchor = int(np.argmin(norm(shared - self.focus))) if pair.relation == "add-remove" \
                else int(pair.index)
            order = np.argsort(norm(shared - shared[self.anchor]), kind="stable")
            self.anchor_nn = order[order != self.anchor][:5]
        # Vector layout (fit_layout): positions featurised one by one, status columns, tail.
        self.positions: np.ndarray | None = None
        self.status = False
        self.tail = 0
        self.summaries = False
        self.names = [] if kind == "vector" else self._names()

    # ------------------------------------------------------------------ layout
    def fit_layout(self, releases: Sequence[Release]) -> "FeatureMap":
        """Fix the vector layout from a probe sample (releases on D and D′, before selection).

        The probe only decides *which* columns exist (how many positions, whether
        status columns are needed); any such choice is a fixed function of a
        release afterwards, so selection and certification stay sound.  Centroid
        releases get an ``n_na`` column (centres with a NaN or infinite coordinate) when the probe saw one;
        the other kinds have a fixed layout and ignore the probe.
        """
        if self.kind == "centroids":
            self.status = any(r.kind == "centroids" and not np.isfinite(cast(Centroids, r).centers).all()
                              for r in releases)
            self.names = self._names()
            return self
        if self.kind != "vector":
            return self
        vectors = [np.asarray(cast(Vector, r).values, dtype=np.float64).ravel()
                   for r in releases if r.kind == "vector"]
        lengths = {v.size for v in vectors} or {1}
        longest = max(lengths)
        if longest <= MAX_POSITIONS:
            positions = np.arange(longest)
            self.tail = TAIL if len(lengths) > 1 else 0
        else:
            around = np.arange(self.pair.index - 1, self.pair.index + 2)
            positions = np.unique(np.concatenate([np.arange(MAX_POSITIONS // 2), around[around >= 0]]))
            self.tail = TAIL
        self.positions = positions.astype(np.int64)
        self.status = len(lengths) > 1 or any(not np.all(np.isfinite(v)) for v in vectors)
        self.summaries = longest > 1
        self.names = self._names()
        return self

    # ------------------------------------------------------------------ names
    def _names(self) -> list[str]:
        d, k = self.d, self.kind
        coords = lambda p: [f"{p}[{j}]" for j in range(d)]  # noqa: E731
        if k == "vector":
            if self.positions is None:  # set by fit_layout, before the vector names
                raise RuntimeError("the vector layout is used before fit_layout")
            pos = [int(j) for j in self.positions]
            names = [f"v[{j}]" for j in pos] + [f"dv[{j}]" for j in pos if j > 0]
            if self.status:
                names += [f"na[{j}]" for j in pos]
            names += [f"tail[{j}]" for j in range(self.tail)]
            names += ["length", "n_na"] + (["sum", "min", "max"] if self.summaries else [])
        elif k == "points":
            names = []
            if self.old is not None:
                names += coords("z") + ["proj", "llr", "dist_old"]
            names += coords("mean") + ["min_dist_focus", "n_points"]
        elif k == "centroids":
            names = ["n_centres", "d1_focus", "d2_focus", "d1_inf_focus", "coord_gap_focus"] + coords("nearest")
            if self.old is not None:
                names += ["d1_old", "d1_diff", "proj_max", "proj_min"]
            names += coords("centre_mean") + coords("centre_min") + coords("centre_max")
            names += ["spread", "count_total", "count_focus"] + (["n_na"] if self.status else [])
        elif k == "labels":
            names = ["n_clusters", "noise_share", "pair_share", "anchor_noise", "anchor_share", "anchor_nn_share",
                     "n_labels"]
        else:  # spans
            names = ["n_spans", "cells", "focus_covered", "focus_near"]
            if self.old is not None:
                names += ["old_covered", "old_near"]
        return names + ["failed"]

    # ------------------------------------------------------------------ call
    def __call__(self, releases: ReleaseBatch | Sequence[Release], needs: frozenset[int] | None = None
                 ) -> np.ndarray:
        """(m, f) float matrix (column-major), finite; one row per release, in order.

        ``needs``: the only columns the caller reads (a certified event's, the statistics still being
        counted).  Vector releases then compute just those column groups and leave the rest 0 — the same
        numbers in the columns read, at a fraction of the cost; other kinds compute every column.
        """
        if self.kind == "vector" and self.positions is None:
            self.fit_layout(list(releases))  # a map used on its own learns its layout from its first call
        f = len(self.names)
        # Column-major: features are written and read a column at a time (statistics, bins, hashes).
        if isinstance(releases, ReleaseBatch) and releases.kind == self.kind:
            F = np.zeros((len(releases), f), order="F")
            self._fill(F, releases, needs)
        else:
            items = list(releases)
            F = np.zeros((len(items), f), order="F")
            groups: dict[tuple, list[int]] = {}
            for i, r in enumerate(items):
                groups.setdefault(_shape_key(r) if r.kind == self.kind else ("other", r.kind), []).append(i)
            for key, idx in groups.items():
                rows = np.asarray(idx)
                if key[0] == "other":  # a Failed stand-in, or a release of another kind
                    F[rows, -1] = 1.0 if key[1] == "failed" else 2.0
                    continue
                group = [items[i] for i in idx]
                batch = ReleaseBatch.stack(group) if self.kind != "spans" else group
                block = np.zeros((len(rows), f), order="F")
                self._fill(block, batch, needs)
                F[rows, :-1] = block[:, :-1]
        # In place (F is this call's own array): NaN → 0, ±inf and beyond → ±_CLIP, −0.0 → 0.0 (so equal
        # values compare and hash equal); only the columns computed.
        for block in ([F] if needs is None else [F[:, j] for j in sorted(needs) if 0 <= j < f]):
            if not np.isfinite(block).all():
                np.nan_to_num(block, copy=False, nan=0.0, posinf=_CLIP, neginf=-_CLIP)
            np.clip(block, -_CLIP, _CLIP, out=block)
            block += 0.0
        return F

    def _fill(self, out: np.ndarray, rel: ReleaseBatch | Sequence[Release], needs: frozenset[int] | None) -> None:
        """Write the features (all but ``failed``) of same-kind, same-shape releases into ``out``."""
        if self.kind == "vector":
            self._vector(rel, out, needs)
        else:
            out[:, :-1] = np.asarray(KINDS[self.kind](self, rel), dtype=np.float64)

    # ------------------------------------------------------------------ vector
    def _vector_groups(self) -> dict[str, slice]:
        """The vector layout's column groups, as slices of the names (see :meth:`_names`)."""
        pos = self.positions
        if pos is None:
            raise RuntimeError("the vector layout is used before fit_layout")
        n_v, n_dv = pos.size, int(np.count_nonzero(pos > 0))
        out, start = {}, 0
        for group, size in (("v", n_v), ("dv", n_dv), ("na", n_v if self.status else 0), ("tail", self.tail),
                            ("length", 1), ("n_na", 1), ("summary", 3 if self.summaries else 0)):
            out[group] = slice(start, start + size)
            start += size
        return out

    def _vector(self, rel: ReleaseBatch | Sequence[Release], out: np.ndarray, needs: frozenset[int] | None) -> None:
        if isinstance(rel, ReleaseBatch):
            V = np.asarray(rel.array, dtype=np.float64).reshape(len(rel), -1)
        else:
            V = np.stack([np.asarray(cast(Vector, r).values, dtype=np.float64).ravel() for r in rel])
        V = np.asfortranarray(V)  # one transposing copy: every step below reads and writes whole columns
        m, length = V.shape
        if self.positions is None:
            raise RuntimeError("the vector layout is used before fit_layout")
        pos = [int(j) for j in self.positions]
        at = self._vector_groups()
        want = {g: needs is None or any(j in needs for j in range(s.start, s.stop)) for g, s in at.items()}
        later = [j for j in pos if j > 0]
        finite = np.isfinite(V)
        dense = bool(finite.all())  # the common case: every entry finite (its values are V, its statuses 0)
        values: dict[int, np.ndarray] = {}   # raw position -> its value (non-finite and absent entries read 0)
        status: dict[int, np.ndarray] = {}   # raw position -> its status code

        def value(j: int) -> np.ndarray:
            if j not in values:
                if j >= length:
                    values[j] = np.zeros(m)
                else:
                    values[j] = V[:, j] if dense else np.where(finite[:, j], V[:, j], 0.0)
            return values[j]

        def state(j: int) -> np.ndarray:
            if j not in status:
                if dense and j < length:
                    status[j] = np.zeros(m)
                elif j >= length:
                    status[j] = np.full(m, _STATUS_ABSENT)
                else:
                    x = V[:, j]
                    code = np.isnan(x) * _STATUS_NAN
                    code += (x == -np.inf) * _STATUS_NEGINF
                    code += (x == np.inf) * _STATUS_POSINF
                    status[j] = code
            return status[j]

        if want["v"]:
            for k, j in enumerate(pos):
                out[:, at["v"].start + k] = value(j)
        if want["dv"]:
            for k, j in enumerate(later):
                step = value(j) - value(j - 1)
                out[:, at["dv"].start + k] = np.where((state(j) == 0) & (state(j - 1) == 0), step, 0.0)
        if want["na"] and self.status:
            for k, j in enumerate(pos):
                out[:, at["na"].start + k] = state(j)
        if want["tail"] and self.tail:
            for k in range(self.tail):
                back = length - 1 - k
                out[:, at["tail"].start + k] = value(back) if back >= 0 else 0.0
        out[:, at["length"]] = float(length)
        if want["n_na"] and not dense:
            out[:, at["n_na"].start] = length - finite.sum(axis=1)
        if want["summary"] and self.summaries:
            k = at["summary"].start
            if dense and length:  # no entry is missing or non-finite: the summaries read V as it is
                V.sum(axis=1, out=out[:, k])
                V.min(axis=1, out=out[:, k + 1])
                V.max(axis=1, out=out[:, k + 2])
            else:
                big = np.finfo(np.float64).max
                any_finite = finite.any(axis=1)
                out[:, k] = np.where(finite, V, 0.0).sum(axis=1)
                out[:, k + 1] = np.where(any_finite, np.where(finite, V, big).min(axis=1, initial=big), 0.0)
                out[:, k + 2] = np.where(any_finite, np.where(finite, V, -big).max(axis=1, initial=-big), 0.0)
