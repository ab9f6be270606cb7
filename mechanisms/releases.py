"""The release kinds a mechanism returns, and batches of them.

:class:`Points`, :class:`Centroids`, :class:`Spans`, :class:`Labels` and
:class:`Vector` are what a mechanism releases; :class:`Failed` stands in for a
release the audited code did not produce; :class:`Transcript` is every noisy
statistic one run drew (issue 10).  Their arrays are frozen copies.
:class:`ReleaseBatch` and :class:`TranscriptBatch` stack ``n`` releases of one
kind and shape on a leading axis and build each single release lazily.
Re-exported by :mod:`dpaudit.mechanisms.base`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence, TypeVar

import numpy as np
import numpy.typing as npt

from .validation import InvalidInputError

__all__ = ["RELEASE_KINDS", "RELEASE_TYPES", "Centroids", "Failed", "Labels", "Points", "Release", "ReleaseBatch",
           "Spans", "Transcript", "TranscriptBatch", "Vector"]

RELEASE_KINDS: tuple[str, ...] = ("points", "centroids", "spans", "labels", "vector")

_R = TypeVar("_R", bound="Release")


def _frozen(a: npt.ArrayLike, ndim: int | None, name: str, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
    """A read-only copy of ``a`` as ``dtype``, with ``ndim`` dimensions when that is given."""
    arr = np.array(a, dtype=dtype, copy=True)
    if ndim is not None and arr.ndim != ndim:
        raise InvalidInputError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    arr.setflags(write=False)
    return arr


class Release:
    """Base of all release kinds.  ``kind`` names the kind in reports."""

    kind: ClassVar[str] = "release"

    def predict(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"a {self.kind} release cannot classify new points")


@dataclass(frozen=True, eq=False)
class Points(Release):
    """n×d perturbed records, in the input's order."""

    points: np.ndarray
    kind: ClassVar[str] = "points"

    def __post_init__(self) -> None:
        object.__setattr__(self, "points", _frozen(self.points, 2, "points"))


@dataclass(frozen=True, eq=False)
class Centroids(Release):
    """k×d cluster centres, an unordered set; optional (noisy) cluster sizes."""

    centers: np.ndarray
    counts: np.ndarray | None = None
    kind: ClassVar[str] = "centroids"

    def __post_init__(self) -> None:
        object.__setattr__(self, "centers", _frozen(self.centers, 2, "centers"))
        if self.counts is not None:
            object.__setattr__(self, "counts", _frozen(self.counts, 1, "counts"))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Index of the nearest centre (Euclidean) for each row of ``X``."""
        X = np.asarray(X, dtype=np.float64)
        if len(self.centers) == 0:
            return np.full(len(X), -1, dtype=np.int64)
        d2 = (np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ self.centers.T
              + np.einsum("ij,ij->i", self.centers, self.centers)[None, :])
        return np.argmin(d2, axis=1).astype(np.int64)


@dataclass(frozen=True, eq=False)
class Spans(Release):
    """DP-DBSCAN cluster spans on a grid (the DP-DBSCAN paper).

    ``origin`` (d,) is the grid's lower corner, ``width`` the cell width,
    ``shape`` the number of cells per dimension, and ``cells`` a list with, for
    each cluster, an (m_j × d) integer array of the cell coordinates it spans.
    """

    origin: np.ndarray
    width: float
    shape: tuple[int, ...]
    cells: tuple[np.ndarray, ...] = field(default_factory=tuple)
    kind: ClassVar[str] = "spans"
    if TYPE_CHECKING:  # set by __post_init__; declared for the type checker only, so not dataclass fields
        _ids: np.ndarray = field(init=False)
        _labels: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "origin", _frozen(self.origin, 1, "origin"))
        object.__setattr__(self, "width", float(self.width))
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        cells = tuple(_frozen(np.asarray(c).reshape(-1, len(self.shape)), 2, "cells", np.int64)
                      for c in self.cells)
        object.__setattr__(self, "cells", cells)
        # Sorted linear cell ids with their cluster label, for vectorised lookup.
        if cells:
            ids = np.concatenate([self._linear(c) for c in cells])
            labels = np.concatenate([np.full(len(c), j, dtype=np.int64) for j, c in enumerate(cells)])
            order = np.argsort(ids, kind="stable")
            ids, labels = ids[order], labels[order]
        else:
            ids = np.empty(0, dtype=np.int64)
            labels = np.empty(0, dtype=np.int64)
        object.__setattr__(self, "_ids", ids)
        object.__setattr__(self, "_labels", labels)

    @property
    def n_clusters(self) -> int:
        return len(self.cells)

    def _linear(self, cell_coords: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(cell_coords.T), self.shape).astype(np.int64)

    def cell_of(self, X: np.ndarray) -> np.ndarray:
        """Integer cell coordinates of each point (may fall outside the grid)."""
        X = np.asarray(X, dtype=np.float64)
        return np.floor((X - self.origin) / self.width).astype(np.int64)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Label of the span containing each point's cell; −1 (noise) otherwise."""
        coords = self.cell_of(X)
        inside = np.all((coords >= 0) & (coords < np.asarray(self.shape)), axis=1)
        out = np.full(len(coords), -1, dtype=np.int64)
        if not np.any(inside) or self._ids.size == 0:
            return out
        ids = np.ravel_multi_index(tuple(coords[inside].T), self.shape)
        pos = np.searchsorted(self._ids, ids)
        pos = np.minimum(pos, self._ids.size - 1)
        hit = self._ids[pos] == ids
        sub = np.full(ids.size, -1, dtype=np.int64)
        sub[hit] = self._labels[pos[hit]]
        out[inside] = sub
        return out


@dataclass(frozen=True, eq=False)
class Labels(Release):
    """One cluster label per input record (−1 = noise), in the input's order."""

    labels: np.ndarray
    kind: ClassVar[str] = "labels"

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", _frozen(self.labels, 1, "labels", np.int64))


@dataclass(frozen=True, eq=False)
class Vector(Release):
    """Any fixed-shape numeric statistic (a noisy mean, a histogram, ...)."""

    values: np.ndarray
    kind: ClassVar[str] = "vector"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _frozen(np.atleast_1d(self.values), None, "values"))


@dataclass(frozen=True, eq=False)
class Failed(Release):
    """Stands in for a release the audited code did not produce: it raised, or
    returned NaN or a malformed value, for this input and this seed.

    The execution layer puts it where the release would have been, so a
    failure is an observable outcome of the mechanism like any other (a
    failure rate that depends on the data is itself a leak, and counting it
    keeps the certification sound), and it is also reported as a finding.
    ``reason`` is the finding's kind (``raises``, ``nan``, ``wrong-shape``),
    ``error`` its message.  Failures caused by the environment rather than
    by the code's input (timeouts, a killed process) are not outcomes and are
    never represented by this class.
    """

    reason: str
    error: str = ""
    kind: ClassVar[str] = "failed"


def _frozen_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of a public configuration with plain values (arrays become tuples)."""
    out: dict[str, Any] = {}
    for key, value in dict(config or {}).items():
        if isinstance(value, np.ndarray):
            value = tuple(value.tolist())
        elif isinstance(value, np.generic):
            value = value.item()
        out[str(key)] = value
    return out


@dataclass(frozen=True, eq=False)
class Transcript(Release):
    """Every noisy statistic one run of a mechanism drew (issue 10's transcript release).

    ``statistics`` maps a name to an array whose shape is fixed by the public
    configuration (per-iteration noisy sums and counts, a noisy histogram, …);
    a statistic that was not drawn in a run (an iteration after a stop, a
    cluster that drew no noise) is NaN.  It may also hold data-independent
    randomness the mechanism used (initial centroids), which is not private.
    ``source`` names the mechanism family and ``config`` holds its public
    parameters (ε shares, box, k, …): together they tell an auditor how to
    replay the exact statistics under a hypothesised dataset.  Everything here
    is part of the release, so any function of it is a valid event.
    """

    statistics: Mapping[str, np.ndarray]
    source: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "transcript"

    def __post_init__(self) -> None:
        stats = {str(k): _frozen(v, None, f"statistic {k!r}") for k, v in dict(self.statistics).items()}
        object.__setattr__(self, "statistics", stats)
        object.__setattr__(self, "source", str(self.source))
        object.__setattr__(self, "config", _frozen_config(self.config))

    def __getitem__(self, name: str) -> np.ndarray:
        return self.statistics[name]


class TranscriptBatch(Sequence[Transcript]):
    """``n`` transcripts of one mechanism and configuration, each statistic stacked on a leading axis.

    Indexing builds a single :class:`Transcript` lazily, like :class:`ReleaseBatch`.
    """

    kind = "transcript"

    def __init__(self, statistics: Mapping[str, np.ndarray], source: str = "",
                 config: Mapping[str, Any] | None = None) -> None:
        self.statistics = {str(k): np.asarray(v) for k, v in dict(statistics).items()}
        lengths = {v.shape[0] if v.ndim else -1 for v in self.statistics.values()}
        if len(lengths) > 1 or -1 in lengths:
            raise InvalidInputError("every statistic of a transcript batch needs the same leading length")
        self._n = lengths.pop() if lengths else 0
        self.source = str(source)
        self.config = _frozen_config(config)

    def __len__(self) -> int:
        return int(self._n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return TranscriptBatch({k: v[i] for k, v in self.statistics.items()}, self.source, self.config)
        return Transcript({k: v[i] for k, v in self.statistics.items()}, self.source, self.config)

    @classmethod
    def stack(cls, transcripts: Sequence[_R]) -> "TranscriptBatch | list[_R]":
        """Stack transcripts of one source, configuration and shape; return the list unchanged otherwise."""
        if isinstance(transcripts, TranscriptBatch):
            return transcripts
        items = list(transcripts)
        stacked = [t for t in items if isinstance(t, Transcript)]
        if not items or len(stacked) != len(items):
            return items
        first = stacked[0]
        names = list(first.statistics)
        for t in stacked[1:]:
            if (t.source != first.source or dict(t.config) != dict(first.config)
                    or list(t.statistics) != names
                    or any(t.statistics[k].shape != first.statistics[k].shape for k in names)):
                return items
        return cls({k: np.stack([t.statistics[k] for t in stacked]) for k in names},
                   first.source, first.config)


RELEASE_TYPES: dict[str, type[Release]] = {
    "points": Points, "centroids": Centroids, "spans": Spans, "labels": Labels, "vector": Vector,
}


class ReleaseBatch(Sequence[Release]):
    """``n`` releases of one fixed-shape kind stacked on a leading axis.

    ``array`` has shape (n, ...) — the ``points``/``centers``/``labels``/
    ``values`` of each release — and ``counts`` (n, k) for centroid releases
    that carry them.  Indexing builds the single :class:`Release` lazily, so
    vectorised mechanisms and feature maps never create n Python objects.
    """

    _FIELD: ClassVar[dict[str, str]] = {
        "points": "points", "centroids": "centers", "labels": "labels", "vector": "values"}

    def __init__(self, kind: str, array: np.ndarray, counts: np.ndarray | None = None) -> None:
        if kind not in self._FIELD:
            raise InvalidInputError(f"cannot batch {kind!r} releases")
        self.kind = kind
        self.array = np.asarray(array)
        self.counts = None if counts is None else np.asarray(counts)

    def __len__(self) -> int:
        return int(self.array.shape[0])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ReleaseBatch(self.kind, self.array[i], None if self.counts is None else self.counts[i])
        cls = RELEASE_TYPES[self.kind]
        if self.kind == "centroids":
            return cls(self.array[i], None if self.counts is None else self.counts[i])
        return cls(self.array[i])

    @classmethod
    def stack(cls, releases: Sequence[Release]) -> "ReleaseBatch | TranscriptBatch | list[Release]":
        """Stack same-kind, same-shape releases; return the list unchanged otherwise."""
        if isinstance(releases, ReleaseBatch):
            return releases
        releases = list(releases)
        if not releases:
            return releases
        kind = releases[0].kind
        if kind == "transcript":
            return TranscriptBatch.stack(releases)
        if kind not in cls._FIELD or any(r.kind != kind for r in releases):
            return releases
        attr = cls._FIELD[kind]
        arrays = [getattr(r, attr) for r in releases]
        if any(a.shape != arrays[0].shape for a in arrays):
            return releases
        counts = None
        if kind == "centroids":
            each = [c for r in releases if (c := getattr(r, "counts", None)) is not None]
            if len(each) == len(releases):
                counts = np.stack(each)
        return cls(kind, np.stack(arrays), counts)
