"""Is what the audited code returned a usable release?  If not, the :class:`Failed` that stands for it.

One set of checks for every path (in-process calls, vectorised batches and
the worker's replies), so a malformed value is the same finding wherever the
code ran.  A release has the shape its kind promises for the input; its
*size* is the code's business: a points release may hold any number of points
(synthetic data), a centroids release any number of centres — none included: a
clustering that finds no cluster releases an empty set, a release like any
other.  Values may be NaN or infinite in ``vector``, ``points`` and
``centroids`` releases (a "no answer" entry, a division by a noisy count that
reached 0): they are part of the release, which the estimator's features read
as such, and :func:`non_finite_rows` lets the caller note them (the
``non-finite`` note); the attacks that need finite values check that
themselves (:func:`dpaudit.attacks.targets.check_release`).  Grids (spans) must
be finite and labels whole numbers.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from dpaudit.mechanisms.base import Centroids, Failed, Labels, Points, Release, ReleaseBatch, Spans, TranscriptBatch
from dpaudit.mechanisms.plugins import MAX_RELEASE_ABS, NOT_FINITE

from .findings import Findings

__all__ = ["MAX_RELEASE_ABS", "NOT_FINITE", "NON_FINITE_NOTE", "batch_problem", "check_batch", "check_release",
           "failure_kind", "non_finite", "non_finite_rows", "note_non_finite", "usable_rows", "wrap_rows"]

NON_FINITE_NOTE = "released NaN, infinite or huge values (beyond ±1e150; kept as part of the release)"


def failure_kind(message: str) -> str:
    """``nan`` or ``wrong-shape`` for a message saying why a value is not a release."""
    return "nan" if ("NaN" in message or "infinite" in message) else "wrong-shape"




def usable_rows(flat: np.ndarray) -> np.ndarray:
    """Per row of a 2-D float array: every value finite and within ±:data:`MAX_RELEASE_ABS`."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(flat).all(axis=1) & (np.abs(flat) <= MAX_RELEASE_ABS).all(axis=1)


def _finite(a: Any) -> bool:
    arr = np.asarray(a)
    return arr.dtype.kind not in "fc" or bool(usable_rows(arr.reshape(1, -1))[0])


def non_finite_rows(flat: np.ndarray) -> np.ndarray:
    """Per row of a 2-D array of releases' values: whether any value is NaN, infinite or beyond ±
    :data:`MAX_RELEASE_ABS` (what the ``non-finite`` note counts)."""
    if flat.dtype.kind not in "fc":
        return np.zeros(len(flat), dtype=bool)
    return ~usable_rows(flat)


def note_non_finite(findings: Findings, releases: ReleaseBatch | TranscriptBatch | Sequence[Release]) -> None:
    """Record the ``non-finite`` note for the points and centroids releases that hold NaN or infinite values."""
    if isinstance(releases, TranscriptBatch):
        return
    if isinstance(releases, ReleaseBatch):
        if releases.kind not in ("points", "centroids") or not len(releases):
            return
        rows = non_finite_rows(releases.array.reshape(len(releases), -1))
        if releases.counts is not None:
            rows |= non_finite_rows(releases.counts.reshape(len(releases), -1))
        count = int(rows.sum())
    else:
        count = sum(1 for r in releases if non_finite(r))
    if count:
        findings.record("non-finite", NON_FINITE_NOTE, count=count)


def non_finite(release: Release) -> bool:
    """Whether a points or centroids release holds a non-finite value (see :func:`non_finite_rows`)."""
    if isinstance(release, Points):
        return not _finite(release.points)
    if isinstance(release, Centroids):
        return not (_finite(release.centers) and (release.counts is None or _finite(release.counts)))
    return False


def check_release(release: Any, X: np.ndarray) -> Release:
    """``release`` itself when usable, else a :class:`Failed` saying what is wrong."""
    if isinstance(release, Failed):
        return release
    if not isinstance(release, Release):
        return Failed("wrong-shape", f"release() returned {type(release).__name__}, not a Release")
    n, d = X.shape
    problem = None
    if isinstance(release, Points):
        if release.points.ndim != 2 or release.points.shape[1] != d:  # any number of points: synthetic data
            problem = f"points release has shape {release.points.shape}, expected m×{d}"
    elif isinstance(release, Centroids):  # any number of centres, none included; non-finite values are kept
        k = len(release.centers)
        if release.centers.shape[1:] != (d,):
            problem = f"centroids release has shape {release.centers.shape}, expected k×{d}"
        elif release.counts is not None and release.counts.shape != (k,):
            problem = f"centroids release has {release.counts.shape} counts for {k} centres"
    elif isinstance(release, Labels):
        if release.labels.shape != (n,):
            problem = f"labels release has shape {release.labels.shape}, expected ({n},)"
    elif isinstance(release, Spans):
        if release.origin.shape != (d,) or len(release.shape) != d:
            problem = f"spans release has a {release.origin.shape[0]}-D grid for {d}-D data"
        elif not (_finite(release.origin) and np.isfinite(release.width) and release.width > 0):
            problem = "spans release has a NaN, infinite or non-positive grid"
    if problem is None:
        return release
    return Failed(failure_kind(problem), problem)


_BATCH_SHAPES = {"labels": lambda n, N, d: (n, N)}


def batch_problem(batch: ReleaseBatch, X: np.ndarray, n: int) -> str | None:
    """Why a vectorised batch as a whole is unusable (wrong length or shape), else None."""
    N, d = X.shape
    value = batch.array
    got = value.shape[0] if value.ndim else 0
    if got != n:
        return f"release_many returned {got} releases, {n} were asked for"
    expected = _BATCH_SHAPES.get(batch.kind)
    if expected is not None and value.shape != expected(n, N, d):
        return f"release_many returned a batch of shape {value.shape} for {n} {batch.kind} releases of {N}×{d} data"
    if batch.kind == "points" and (value.ndim != 3 or value.shape[2] != d):
        return f"release_many returned a batch of shape {value.shape} for {n} points releases of {d}-D data"
    if batch.kind == "centroids":
        if value.ndim != 3 or value.shape[2] != d:
            return f"release_many returned centres of shape {value.shape}, expected ({n}, k, {d})"
        if batch.counts is not None and batch.counts.shape != value.shape[:2]:
            return f"release_many returned counts of shape {batch.counts.shape} for centres {value.shape}"
    return None


def check_batch(batch: ReleaseBatch | Sequence[Any], X: np.ndarray, n: int
                ) -> tuple[ReleaseBatch | TranscriptBatch | list[Release] | None, str | None]:
    """Check a vectorised ``release_many`` result.

    Returns ``(releases, None)`` — the batch itself (non-finite values are part of a points or centroids
    release: :func:`non_finite_rows` counts them), or for a list of releases the list checked one by one —
    or ``(None, reason)`` when the batch as a whole is malformed (the caller then draws those releases one
    at a time, so each failure is its own outcome).
    """
    if not isinstance(batch, ReleaseBatch):
        try:
            items = list(batch)
        except TypeError:
            return None, f"release_many returned {type(batch).__name__}, not a sequence of releases"
        if len(items) != n:
            return None, f"release_many returned {len(items)} releases, {n} were asked for"
        checked = [check_release(r, X) for r in items]
        return ReleaseBatch.stack(checked), None
    problem = batch_problem(batch, X, n)
    if problem is not None:
        return None, problem
    return batch, None


_OUTPUTS = ("points", "centroids", "labels", "vector")


def _shape_problem(output: str, shape: tuple[int, ...], n: int, d: int) -> str | None:
    """What ``dpaudit.mechanisms.plugins.wrap_array`` says of a plug-in's array of this shape, or None."""
    if output == "points" and shape != (n, d):
        return f"returned shape {shape}; a points release must have the input's shape {(n, d)}"
    if output == "centroids" and (len(shape) != 2 or shape[1] != d) and 0 not in shape:
        return f"returned shape {shape}; a centroids release must be k×{d}"
    if output == "labels" and shape != (n,):
        return f"returned shape {shape}; a labels release must have one label per record ({n},)"
    return None


def wrap_rows(values: np.ndarray, output: str, X: np.ndarray) -> ReleaseBatch | list[Release]:
    """Plug-in arrays stacked on a leading axis (one row per call), checked and wrapped as ``output``.

    The same outcome, row by row, as :func:`dpaudit.mechanisms.plugins.wrap_array`
    followed by :func:`check_release` — the shape, then (labels) finite whole numbers — in one vectorised step: the batch itself when every row is
    usable, else a list with :class:`Failed` in each unusable row's place.
    """
    if output not in _OUTPUTS:
        from dpaudit.mechanisms.base import InvalidInputError

        raise InvalidInputError(f"output must be one of {', '.join(_OUTPUTS)}; got {output!r}")
    arr = np.asarray(values, dtype=np.float64)
    m = len(arr)
    if output == "vector":  # "no answer" entries (NaN, ±inf) are part of a vector release
        return ReleaseBatch("vector", arr)
    n, d = X.shape
    if output == "centroids" and arr.size == 0:  # no cluster found in any call: empty sets of centres
        arr = arr.reshape(m, 0, d)
    problem = _shape_problem(output, arr.shape[1:], n, d)
    flat = arr.reshape(m, -1)
    # NaN and ±inf are part of a points or centroids release (non_finite_rows counts them); labels must be numbers
    finite = usable_rows(flat) if output == "labels" else np.ones(m, bool)
    whole = (flat == np.round(flat)).all(axis=1) if output == "labels" and problem is None else np.ones(m, bool)
    if problem is None and finite.all() and whole.all():
        return ReleaseBatch(output, arr.astype(np.int64) if output == "labels" else arr)
    with np.errstate(invalid="ignore"):  # NaN rows of labels: Failed below, never read as numbers
        batch = ReleaseBatch(output, arr.astype(np.int64) if output == "labels" and problem is None else arr)
    out: list[Release] = []
    for i in range(m):
        if not finite[i]:
            out.append(Failed("nan", f"returned {NOT_FINITE}"))
        elif problem is not None:
            out.append(Failed(failure_kind(problem), problem))
        elif not whole[i]:
            out.append(Failed("wrong-shape", "returned non-integer labels"))
        else:
            out.append(batch[i])
    return out
