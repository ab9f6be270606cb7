"""OpenDP 0.16 measurements stated in zCDP (and one in pure DP), as plain plug-ins for ``bench_curves``.

Built with ``opendp.prelude`` the way its documentation builds them, each noise scale found with
``dp.binary_search_param`` so that the measurement's own privacy map meets the figure at an input distance
of 1 (one record added or removed):

* ``gaussian_sum`` — clamp to [-1, 1], sum, ``then_gaussian`` under ``ZeroConcentratedDivergence``: map(1) ≤ ρ
  = :data:`RHO_SUM`;
* ``noisy_max_zcdp`` — the counts of the first column in :data:`BINS` equal bins of [-1, 1] (one record changes
  one count by one: ``linf_distance(monotonic=True)``, d_in = 1) and ``make_noisy_max`` under
  ``ZeroConcentratedDivergence`` (Gumbel noise, the exponential mechanism): map(1) ≤ ρ = :data:`RHO_MAX`;
* ``noisy_max_pure`` — the same counts and ``make_noisy_max`` under ``MaxDivergence`` (exponential noise,
  permute-and-flip, McKenna & Sheldon 2020): map(1) ≤ ε = :data:`EPS_MAX`.  It is ε-DP, but not ε²/8-zCDP —
  the figure that holds for the Gumbel sampler (the exponential mechanism is ε-bounded-range, Cesar & Rogers
  2021) — which ``bench_curves`` claims for it.

OpenDP draws its noise from the operating system: the functions take no generator (``fn(X, epsilon)``; the
ε passed is unused, each function's figure is its own constant), so dpaudit does not replay them.
"""

import functools

import numpy as np
import opendp.prelude as dp

dp.enable_features("contrib")

RHO_SUM = 0.5
RHO_MAX = 0.125
EPS_MAX = 1.0
BINS = 4
_FLOATS = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance())
_SCORES = (dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int, monotonic=True))


def _calibrated(chain, d_out):
    return chain(dp.binary_search_param(chain, d_in=1, d_out=float(d_out)))


@functools.lru_cache(maxsize=1)
def _gaussian():
    return _calibrated(lambda s: _FLOATS >> dp.t.then_clamp((-1.0, 1.0)) >> dp.t.then_sum() >> dp.m.then_gaussian(s),
                       RHO_SUM)


@functools.lru_cache(maxsize=2)
def _noisy_max(measure):
    output = dp.zero_concentrated_divergence() if measure == "zcdp" else dp.max_divergence()
    return _calibrated(lambda s: dp.m.make_noisy_max(*_SCORES, output, s), RHO_MAX if measure == "zcdp" else EPS_MAX)


def _counts(X):
    col = np.clip(np.asarray(X, dtype=float)[:, 0], -1.0, 1.0)
    return np.bincount(np.clip(((col + 1.0) / 2.0 * BINS).astype(int), 0, BINS - 1), minlength=BINS).tolist()


def gaussian_sum(X, epsilon):
    return np.array([_gaussian()([float(x) for x in np.asarray(X, dtype=float)[:, 0]])])


def noisy_max_zcdp(X, epsilon):
    return np.array([float(_noisy_max("zcdp")(_counts(X)))])


def noisy_max_pure(X, epsilon):
    return np.array([float(_noisy_max("pure")(_counts(X)))])
