"""OpenDP 0.16 measurements as plain plug-ins, built from its combinators the way its documentation builds them.

Each function builds one measurement with ``opendp.prelude`` — an input space of
float vectors under the symmetric distance (add/remove one record), a chain of
transformations (``then_clamp``, ``then_sum``, ``then_count``,
``then_count_by_categories``, ``then_resize``, ``then_mean``) and a noise
measurement (``then_laplace``) — whose noise scale is found with
``dp.binary_search_param`` so that the measurement's own privacy map gives at
most ε at an input distance of 1, and releases the measurement's output on the
first column of the records (clipped to the public box [-1, 1] by the chain).

OpenDP samples its noise from the operating system's randomness and takes no
generator: the functions have the shape ``fn(X, epsilon)`` — no ``rng``
parameter — which tells dpaudit that they draw their own randomness (it then
does not replay them: the same seed cannot give the same release).  A
measurement is built once per ε and reused (it holds no data).
"""

import functools

import numpy as np
import opendp.prelude as dp

dp.enable_features("contrib")

BOX = (-1.0, 1.0)   # the public box of the first column
MEAN_SIZE = 10      # the public dataset size the mean is resized to (OpenDP's bounded-size mean)
BINS = 4            # histogram categories: the first column cut into 4 equal bins of the box
_SPACE = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance())


def _calibrated(chain, epsilon):
    """The measurement ``chain(scale)`` with the smallest scale whose map(1) ≤ ε (OpenDP's own search)."""
    scale = dp.binary_search_param(chain, d_in=1, d_out=float(epsilon))
    return chain(scale)


@functools.lru_cache(maxsize=8)
def _sum(epsilon):
    return _calibrated(lambda s: _SPACE >> dp.t.then_clamp(BOX) >> dp.t.then_sum() >> dp.m.then_laplace(s), epsilon)


@functools.lru_cache(maxsize=8)
def _count(epsilon):
    return _calibrated(lambda s: _SPACE >> dp.t.then_count() >> dp.m.then_laplace(s), epsilon)


@functools.lru_cache(maxsize=8)
def _histogram(epsilon):
    space = (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    return _calibrated(lambda s: space >> dp.t.then_count_by_categories(categories=list(range(BINS)))
                       >> dp.m.then_laplace(s), epsilon)


@functools.lru_cache(maxsize=8)
def _mean(epsilon):
    return _calibrated(lambda s: _SPACE >> dp.t.then_clamp(BOX) >> dp.t.then_resize(size=MEAN_SIZE, constant=0.0)
                       >> dp.t.then_mean() >> dp.m.then_laplace(s), epsilon)


def _column(X):
    return [float(v) for v in np.asarray(X, dtype=float)[:, 0]]


def laplace_sum(X, epsilon):
    """Sum of the first column clamped to [-1, 1], Laplace noise (``then_clamp >> then_sum >> then_laplace``)."""
    return np.array([_sum(epsilon)(_column(X))], dtype=float)


def laplace_count(X, epsilon):
    """Number of records, discrete Laplace noise (``then_count >> then_laplace`` on an integer count)."""
    return np.array([_count(epsilon)(_column(X))], dtype=float)


def histogram(X, epsilon):
    """Counts of the first column in 4 equal bins of [-1, 1] (values outside fall in the end bins) and of a
    null category, discrete Laplace noise (``then_count_by_categories >> then_laplace``)."""
    x = np.clip(np.asarray(X, dtype=float)[:, 0], *BOX)
    bins = np.minimum(((x - BOX[0]) / (BOX[1] - BOX[0]) * BINS).astype(int), BINS - 1)
    return np.asarray(_histogram(epsilon)([int(b) for b in bins]), dtype=float)


def bounded_mean(X, epsilon):
    """Mean of the first column clamped to [-1, 1] and resized to 10 records (padded with 0 or truncated),
    Laplace noise (``then_clamp >> then_resize >> then_mean >> then_laplace``)."""
    return np.array([_mean(epsilon)(_column(X))], dtype=float)
