"""python-dp (PyDP, Google's differential privacy library) 1.1.5 as plain plug-ins, written the way its
documentation writes them.

Each function builds one ``pydp.algorithms.laplacian`` algorithm with its documented parameters
(``epsilon``, ``lower_bound``/``upper_bound`` — the public box [-1, 1] — and ``dtype="float"``; the
contribution bounds ``l0_sensitivity``/``linf_sensitivity`` stay at their default 1: one record per
person) and returns ``quick_result`` on the first column of the records.  The library clamps the
values to the bounds itself.

Google's library draws its noise from its own secure generator and takes no seed: the functions
have the shape ``fn(X, epsilon)`` — no ``rng`` parameter — which tells dpaudit that they draw
their own randomness.  An algorithm object is single-use (its budget is spent by the result), so
one is built per call.
"""

import numpy as np
from pydp.algorithms.laplacian import BoundedMean, BoundedSum, BoundedVariance, Count, Max, Median

BOX = (-1.0, 1.0)   # the public bounds of the first column


def _column(X):
    return [float(v) for v in np.asarray(X, dtype=float)[:, 0]]


def _bounded(cls, X, epsilon):
    algorithm = cls(epsilon=float(epsilon), lower_bound=BOX[0], upper_bound=BOX[1], dtype="float")
    return np.array([float(algorithm.quick_result(_column(X)))])


def bounded_sum(X, epsilon):
    """``BoundedSum(epsilon, lower_bound=-1, upper_bound=1, dtype="float").quick_result(x)``."""
    return _bounded(BoundedSum, X, epsilon)


def bounded_mean(X, epsilon):
    """``BoundedMean(epsilon, lower_bound=-1, upper_bound=1, dtype="float").quick_result(x)``."""
    return _bounded(BoundedMean, X, epsilon)


def bounded_variance(X, epsilon):
    """``BoundedVariance(epsilon, lower_bound=-1, upper_bound=1, dtype="float").quick_result(x)``."""
    return _bounded(BoundedVariance, X, epsilon)


def count(X, epsilon):
    """``Count(epsilon, dtype="float").quick_result(x)``: the number of records."""
    return np.array([float(Count(epsilon=float(epsilon), dtype="float").quick_result(_column(X)))])


def maximum(X, epsilon):
    """``Max(epsilon, lower_bound=-1, upper_bound=1, dtype="float").quick_result(x)`` (a quantile tree)."""
    return _bounded(Max, X, epsilon)


def median(X, epsilon):
    """``Median(epsilon, lower_bound=-1, upper_bound=1, dtype="float").quick_result(x)`` (a quantile tree)."""
    return _bounded(Median, X, epsilon)
