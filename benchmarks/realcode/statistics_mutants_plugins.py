"""Planted mistakes in the wrappers of two correct DP means, where a user makes them.

The correct functions are the library panel's plug-ins, used as they are
(``benchmarks/libraries/diffprivlib_plugins.py:tools_mean``, ``benchmarks/libraries/pydp_plugins.py:bounded_mean``).
Their mutants below are what a user's wrapper gets wrong: a budget ten times the claim, bounds read off the
data (the noise then scales with the data's own range), and a shortcut that returns the exact mean of a small
dataset.  The mistakes planted inside diffprivlib itself are patches of its copy (see ``catalogue.py``).
"""

import numpy as np

BOX = (-1.0, 1.0)
SMALL = 10  # the shortcut's "too few records to bother with noise"


def _column(X):
    return np.clip(np.asarray(X, dtype=float)[:, 0], *BOX)


def tools_mean_at_ten_epsilon(X, epsilon, rng):
    """``diffprivlib.tools.mean(x, 10·epsilon, bounds=(-1, 1))``: the budget passed ten times too large."""
    from diffprivlib.tools import mean

    return np.atleast_1d(mean(_column(X), epsilon=10.0 * epsilon, bounds=BOX, random_state=int(rng.integers(2**31 - 1))))


def _pydp_mean(values, epsilon, lower, upper):
    from pydp.algorithms.laplacian import BoundedMean

    algorithm = BoundedMean(epsilon=float(epsilon), lower_bound=float(lower), upper_bound=float(upper), dtype="float")
    return np.array([float(algorithm.quick_result([float(v) for v in values]))])


def bounded_mean_at_ten_epsilon(X, epsilon):
    """python-dp ``BoundedMean(10·epsilon, -1, 1)``: the budget passed ten times too large."""
    return _pydp_mean(_column(X), 10.0 * epsilon, *BOX)


def bounded_mean_data_bounds(X, epsilon):
    """python-dp ``BoundedMean(epsilon, lower_bound=min(x), upper_bound=max(x))``: bounds read off the data."""
    x = _column(X)
    return _pydp_mean(x, epsilon, np.min(x), np.max(x))


def bounded_mean_small_exact(X, epsilon):
    """python-dp ``BoundedMean(epsilon, -1, 1)``, but the exact mean when there are fewer than 10 records."""
    x = _column(X)
    if len(x) < SMALL:
        return np.array([float(np.mean(x))])
    return _pydp_mean(x, epsilon, *BOX)
