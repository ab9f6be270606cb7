"""How one record moves a vector release: the tracing statistic of Homer et al. (2008) and
Dwork, Smith, Steinke, Ullman & Vadhan (FOCS 2015, "Robust traceability from trace amounts").

A vector release v (a noisy mean, a clipped sum, a histogram, …) is a fixed-shape
statistic of the data.  Tracing scores a record x by the inner product of the
record's direction with the centred release:

    t(x; v) = ⟨g(x), v − v̄⟩,

where v̄ is the release expected without knowing the members (the mean of
releases the attacker drew itself on public or reference data) and g(x) is how
adding x moves the release:

* when the release has one value per feature (a mean or a sum of the records),
  g(x) = x − μ, μ the mean of the attacker's public records — the statistic of
  the papers, invariant to the release's scale (mean or sum alike);
* otherwise (a count, a histogram, a statistic of another shape) g is learned
  from the attacker's own runs: a ridge regression of the runs' releases on the
  sufficient statistics of their inputs, u = (Σ (x − μ), n), gives a matrix A and
  g(x) = A·(x − μ, 1).  A release that depends on the count only (a noisy count)
  then gives every record the same direction (when the runs differ in size, as
  reference runs do) or a direction fitted to noise (when they do not), and the
  attack guesses at chance, as it should.  With fewer runs than d + 1 the ridge
  penalty keeps the map small rather than exact.

Entries of v that are not finite (a sparse vector's "no answer") contribute
nothing.  Releases whose length varies (a sparse histogram, one value per noisy
cluster) are padded with "no answer" to the longest of the attacker's runs
(:func:`pad_vectors`), and a release scored against the map is fitted to its
length (:func:`fit_length`: padded, or cut where the runs never released a value —
the map learned nothing about those positions).  :attr:`VectorMap.scale` is a public spread of t (over the runs the map
was fitted on), so that t/scale is comparable across releases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

__all__ = ["VectorMap", "fit_length", "pad_vectors", "release_values"]

RIDGE = 1e-3  # ridge penalty, relative to the mean diagonal of UᵀU (a learned map only)


def release_values(release: object) -> np.ndarray:
    """The flat float values of a vector release (``Vector.values``), non-finite entries kept."""
    values = getattr(release, "values", None)
    if values is None:
        raise InvalidInputError(f"a {getattr(release, 'kind', type(release).__name__)} release is not a vector")
    return np.asarray(values, dtype=np.float64).ravel()


def pad_vectors(values: Sequence[np.ndarray]) -> np.ndarray:
    """Flat vectors of any lengths as one (runs × longest) matrix, missing entries NaN ("no answer")."""
    flat = [np.asarray(v, dtype=np.float64).ravel() for v in values]
    width = max((v.size for v in flat), default=0)
    out = np.full((len(flat), width), np.nan)
    lengths = np.array([v.size for v in flat], dtype=np.int64)
    if flat and width:
        out[np.arange(width)[None, :] < lengths[:, None]] = np.concatenate(flat)
    return out


def fit_length(values: np.ndarray, size: int) -> np.ndarray:
    """``values`` (flat) with exactly ``size`` entries: padded with NaN ("no answer"), or cut."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size >= size:
        return v[:size]
    return np.concatenate([v, np.full(size - v.size, np.nan)])


@dataclass(frozen=True, eq=False)
class VectorMap:
    """t(x; v) = ⟨g(x), v − v̄⟩ / scale for the rows x of a matrix (see the module docstring)."""

    record_centre: np.ndarray     # μ: mean of the attacker's public records
    release_centre: np.ndarray    # v̄: mean of the attacker's own releases
    matrix: np.ndarray | None     # A (len(v) × (d + 1)); None: g(x) = x − μ
    scale: float = 1.0

    @property
    def learned(self) -> bool:
        return self.matrix is not None

    @classmethod
    def fit(cls, record_centre: np.ndarray, inputs: Sequence[np.ndarray], releases: np.ndarray,
            scale_records: np.ndarray | None = None) -> "VectorMap":
        """The map of the runs ``releases[k] = M(inputs[k])`` (the attacker's own runs, never the target).

        ``scale_records``: records whose statistic sets :attr:`scale` (public records; default the
        first run's inputs).
        """
        mu = np.asarray(record_centre, dtype=np.float64)
        V = np.asarray(releases, dtype=np.float64)
        if V.ndim != 2 or len(V) != len(inputs) or len(V) < 2:
            raise InvalidInputError("a vector map needs at least two runs with one release each")
        finite = np.isfinite(V)
        counts = finite.sum(axis=0)
        centre = np.where(finite, V, 0.0).sum(axis=0) / np.maximum(counts, 1)  # 0 where no run answered
        matrix = None
        if V.shape[1] != mu.size:
            matrix = _ridge(mu, inputs, np.where(finite, V, centre) - centre)
        unscaled = cls(mu, centre, matrix, 1.0)
        probe = np.asarray(scale_records if scale_records is not None else inputs[0], dtype=np.float64)
        spread = np.std(np.concatenate([unscaled.statistic(probe, v) for v in V]))
        return cls(mu, centre, matrix, float(spread) if np.isfinite(spread) and spread > 0 else 1.0)

    def directions(self, X: np.ndarray) -> np.ndarray:
        """g(x) for every row of X: (n, len(v))."""
        Z = np.asarray(X, dtype=np.float64) - self.record_centre
        if self.matrix is None:
            return Z
        return np.column_stack([Z, np.ones(len(Z))]) @ self.matrix.T

    def statistic(self, X: np.ndarray, release: np.ndarray) -> np.ndarray:
        """t(x; v)/scale for every row x of X (higher = the release leans towards x).

        A release of another length than the map's is fitted to it (:func:`fit_length`).
        """
        v = fit_length(release, self.release_centre.size)
        centred = np.where(np.isfinite(v), v - self.release_centre, 0.0)
        return self.directions(X) @ centred / self.scale


def _ridge(mu: np.ndarray, inputs: Sequence[np.ndarray], Y: np.ndarray) -> np.ndarray:
    """A (len(v) × (d + 1)) minimising ‖Y − U·Aᵀ‖² + λ‖A‖², u_k = (Σ (x − μ), n_k), both centred."""
    U = np.array([np.r_[(np.asarray(x, dtype=np.float64) - mu).sum(axis=0), len(x)] for x in inputs])
    U = U - U.mean(axis=0)
    Y = Y - Y.mean(axis=0)
    gram = U.T @ U
    lam = RIDGE * max(float(np.trace(gram)) / gram.shape[0], 1e-12)
    return np.linalg.solve(gram + lam * np.eye(gram.shape[0]), U.T @ Y).T
