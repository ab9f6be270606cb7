"""Core types shared by every mechanism under test.

A mechanism is a black box: ``release(X, rng)`` returns one of a few release
kinds (:class:`Points`, :class:`Centroids`, :class:`Spans`, :class:`Labels`,
:class:`Vector`), and its authors' promise is a :class:`PrivacyClaim`.  All
randomness comes from the :class:`numpy.random.Generator` passed in, so the same
seed gives the same release.

Validation helpers (:func:`check_data`, :func:`check_epsilon`, ...) raise
:class:`InvalidInputError` (a ``ValueError``) with a message a user can act on;
the CLI turns it into one line and exit code 2.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = [
    "NEIGHBOURS",
    "RELEASE_KINDS",
    "Centroids",
    "InvalidInputError",
    "Labels",
    "Mechanism",
    "Points",
    "PrivacyClaim",
    "PrivacyLeakWarning",
    "Release",
    "Spans",
    "Vector",
    "check_bounds",
    "check_data",
    "check_epsilon",
    "check_positive",
    "check_rng",
    "ReleaseBatch",
    "release_many",
    "warn_privacy_leak",
]

Neighbours = Literal["add-remove", "replace", "metric"]
NEIGHBOURS: tuple[str, ...] = ("add-remove", "replace", "metric")
RELEASE_KINDS: tuple[str, ...] = ("points", "centroids", "spans", "labels", "vector")


class InvalidInputError(ValueError):
    """A user mistake: bad data, a bad parameter or an unknown name."""


class PrivacyLeakWarning(UserWarning):
    """A parameter was derived from the private data (bounds, n, scale).

    Same convention as diffprivlib: the mechanism still runs, but its privacy
    claim no longer covers the data-derived parameter, and reports say so.
    """


def warn_privacy_leak(message: str, stacklevel: int = 3) -> None:
    """Emit a :class:`PrivacyLeakWarning` (one place, one wording)."""
    warnings.warn(message, PrivacyLeakWarning, stacklevel=stacklevel)


# --------------------------------------------------------------------------- #
# Validation
# --------------------------------------------------------------------------- #
def check_epsilon(epsilon: object, *, name: str = "epsilon", allow_inf: bool = False) -> float:
    """Return ``epsilon`` as a float after checking ε > 0 and finite."""
    try:
        value = float(epsilon)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number, got {epsilon!r}") from None
    if math.isnan(value):
        raise InvalidInputError(f"{name} must be a number, got NaN")
    if value <= 0:
        raise InvalidInputError(f"{name} must be > 0, got {value:g}")
    if math.isinf(value) and not allow_inf:
        raise InvalidInputError(f"{name} must be finite, got {value:g}")
    return value


def check_positive(value: object, *, name: str, integer: bool = False, minimum: float = 0.0,
                   inclusive: bool = False) -> float | int:
    """Check a numeric hyper-parameter is finite and above ``minimum``."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InvalidInputError(f"{name} must be finite, got {value!r}")
    if integer and number != int(number):
        raise InvalidInputError(f"{name} must be a whole number, got {value!r}")
    ok = number >= minimum if inclusive else number > minimum
    if not ok:
        op = "≥" if inclusive else ">"
        raise InvalidInputError(f"{name} must be {op} {minimum:g}, got {number:g}")
    return int(number) if integer else number


def check_data(X: object, *, min_rows: int = 2, name: str = "X", n_features: int | None = None
               ) -> np.ndarray:
    """Validate a data matrix at the boundary, scikit-learn style.

    Returns a C-contiguous float64 array of shape (n, d).  Rejects non-numeric
    input, NaN/inf, anything not 2-D, fewer than ``min_rows`` rows, and a
    feature count different from ``n_features`` when given.
    """
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be numeric; it contains values that are not numbers") from None
    if arr.ndim == 1:
        raise InvalidInputError(
            f"{name} must be 2-D (n records × d features), got a 1-D array of length {arr.shape[0]}; "
            "use X.reshape(-1, 1) for a single feature")
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-D (n records × d features), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise InvalidInputError(f"{name} has no features (shape {arr.shape})")
    if arr.shape[0] < min_rows:
        what = "is empty" if arr.shape[0] == 0 else f"has {arr.shape[0]} row(s)"
        raise InvalidInputError(f"{name} {what}; at least {min_rows} records are needed")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInputError(
            f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]}); "
            "remove or impute those values first")
    if n_features is not None and arr.shape[1] != n_features:
        raise InvalidInputError(f"{name} has {arr.shape[1]} features, expected {n_features}")
    return np.ascontiguousarray(arr)


def check_bounds(bounds: object, n_features: int | None = None, *, name: str = "bounds"
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Normalise a public box ``(lo, hi)`` (scalars or per-feature vectors).

    Returns two float arrays (broadcast to ``n_features`` when given) with
    ``lo < hi`` everywhere.
    """
    if bounds is None:
        raise InvalidInputError(f"{name} are required: give a public box (lo, hi) that does not come from the data")
    try:
        lo, hi = bounds  # type: ignore[misc]
        lo_arr = np.atleast_1d(np.asarray(lo, dtype=np.float64))
        hi_arr = np.atleast_1d(np.asarray(hi, dtype=np.float64))
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a pair (lo, hi) of numbers or vectors, got {bounds!r}") from None
    if lo_arr.ndim != 1 or hi_arr.ndim != 1:
        raise InvalidInputError(f"{name} must be scalars or 1-D vectors")
    if n_features is not None:
        try:
            lo_arr = np.broadcast_to(lo_arr, (n_features,)).copy()
            hi_arr = np.broadcast_to(hi_arr, (n_features,)).copy()
        except ValueError:
            raise InvalidInputError(
                f"{name} have {max(lo_arr.size, hi_arr.size)} entries but the data has {n_features} features") from None
    if not (np.all(np.isfinite(lo_arr)) and np.all(np.isfinite(hi_arr))):
        raise InvalidInputError(f"{name} must be finite")
    if np.any(lo_arr >= hi_arr):
        raise InvalidInputError(f"{name} must satisfy lo < hi in every dimension, got {bounds!r}")
    return lo_arr, hi_arr


def check_rng(rng: object) -> np.random.Generator:
    """Accept a Generator, a SeedSequence or an int seed; never global state."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (np.random.SeedSequence, int, np.integer)):
        return np.random.default_rng(rng)
    raise InvalidInputError(
        f"rng must be a numpy.random.Generator, SeedSequence or int seed, got {type(rng).__name__}")


# --------------------------------------------------------------------------- #
# The claim
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class PrivacyClaim:
    """What a mechanism's authors promise.

    ``neighbours``: ``add-remove`` (one record added or removed), ``replace``
    (one record changed) or ``metric`` (d_x-privacy: outputs for x and x'
    differ by at most a factor exp(ε·‖x − x'‖₂)).  ``epsilon = inf`` marks a
    non-private baseline (no claim).
    """

    epsilon: float
    delta: float = 0.0
    neighbours: str = "add-remove"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, allow_inf=True))
        try:
            delta = float(self.delta)
        except (TypeError, ValueError):
            raise InvalidInputError(f"delta must be a number, got {self.delta!r}") from None
        if not (0.0 <= delta < 1.0):
            raise InvalidInputError(f"delta must be in [0, 1), got {self.delta!r}")
        object.__setattr__(self, "delta", delta)
        if self.neighbours not in NEIGHBOURS:
            raise InvalidInputError(
                f"neighbours must be one of {', '.join(NEIGHBOURS)}; got {self.neighbours!r}")

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.epsilon)

    def epsilon_at(self, distance: float = 1.0) -> float:
        """The ε the claim allows for a pair at ``distance`` (metric claims scale)."""
        return self.epsilon * distance if self.neighbours == "metric" else self.epsilon

    def advantage_ceiling(self) -> float:
        """Largest membership advantage TPR − FPR an ε-DP mechanism allows: (e^ε − 1)/(e^ε + 1)."""
        return math.tanh(self.epsilon / 2.0) if self.is_private else 1.0

    def to_dict(self) -> dict[str, object]:
        return {"epsilon": self.epsilon, "delta": self.delta, "neighbours": self.neighbours}


# --------------------------------------------------------------------------- #
# Releases
# --------------------------------------------------------------------------- #
def _frozen(a: object, ndim: int | None, name: str, dtype: object = np.float64) -> np.ndarray:
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
    """DP-DBSCAN cluster spans on a grid (seed 002).

    ``origin`` (d,) is the grid's lower corner, ``width`` the cell width,
    ``shape`` the number of cells per dimension, and ``cells`` a list with, for
    each cluster, an (m_j × d) integer array of the cell coordinates it spans.
    """

    origin: np.ndarray
    width: float
    shape: tuple[int, ...]
    cells: tuple[np.ndarray, ...] = field(default_factory=tuple)
    kind: ClassVar[str] = "spans"

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
        if not np.any(inside) or self._ids.size == 0:  # type: ignore[attr-defined]
            return out
        ids = np.ravel_multi_index(tuple(coords[inside].T), self.shape)
        pos = np.searchsorted(self._ids, ids)  # type: ignore[attr-defined]
        pos = np.minimum(pos, self._ids.size - 1)  # type: ignore[attr-defined]
        hit = self._ids[pos] == ids  # type: ignore[attr-defined]
        sub = np.full(ids.size, -1, dtype=np.int64)
        sub[hit] = self._labels[pos[hit]]  # type: ignore[attr-defined]
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


RELEASE_TYPES: dict[str, type[Release]] = {
    "points": Points, "centroids": Centroids, "spans": Spans, "labels": Labels, "vector": Vector,
}


# --------------------------------------------------------------------------- #
# The mechanism protocol
# --------------------------------------------------------------------------- #
@runtime_checkable
class Mechanism(Protocol):
    """A mechanism under test.

    ``release(X, rng)`` must draw all randomness from ``rng``.  Mechanisms may
    also define ``release_many(X, rng, n) -> ReleaseBatch`` for vectorised
    repeated runs; :func:`release_many` falls back to a loop.
    """

    name: str
    claim: PrivacyClaim

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release: ...


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

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return ReleaseBatch(self.kind, self.array[i], None if self.counts is None else self.counts[i])
        cls = RELEASE_TYPES[self.kind]
        if self.kind == "centroids":
            return cls(self.array[i], None if self.counts is None else self.counts[i])  # type: ignore[call-arg]
        return cls(self.array[i])  # type: ignore[call-arg]

    @classmethod
    def stack(cls, releases: Sequence[Release]) -> "ReleaseBatch | list[Release]":
        """Stack same-kind, same-shape releases; return the list unchanged otherwise."""
        if isinstance(releases, ReleaseBatch):
            return releases
        releases = list(releases)
        if not releases:
            return releases
        kind = releases[0].kind
        if kind not in cls._FIELD or any(r.kind != kind for r in releases):
            return releases
        attr = cls._FIELD[kind]
        arrays = [getattr(r, attr) for r in releases]
        if any(a.shape != arrays[0].shape for a in arrays):
            return releases
        counts = None
        if kind == "centroids" and all(getattr(r, "counts", None) is not None for r in releases):
            counts = np.stack([r.counts for r in releases])  # type: ignore[attr-defined]
        return cls(kind, np.stack(arrays), counts)


def release_many(mechanism: Mechanism, X: np.ndarray, rng: np.random.Generator, n: int
                 ) -> Sequence[Release]:
    """``n`` independent releases of ``mechanism`` on ``X`` from one generator.

    Uses the mechanism's own vectorised ``release_many`` when it has one and
    otherwise loops; fixed-shape results come back as a :class:`ReleaseBatch`.
    """
    fast = getattr(mechanism, "release_many", None)
    if callable(fast):
        return fast(X, rng, n)
    return ReleaseBatch.stack([mechanism.release(X, rng) for _ in range(n)])
