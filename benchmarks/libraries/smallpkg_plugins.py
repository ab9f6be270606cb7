"""Two small single-purpose packages from the registry that call themselves differentially private,
as plain plug-ins: ``diffpriv-pure`` 0.1.0 ("zero-dependency pure-stdlib differential privacy") and
``diff-priv-laplace-python`` 1.0.5 ("Python library for Laplace differential privacy").

Each function calls one documented entry point with its documented parameters on the first column of
the records, clipped to the public box [-1, 1] (the bounds it states).  ``diffpriv-pure`` draws from
Python's ``random`` module and ``diff-priv-laplace-python`` from numpy's global generator; neither
takes a seed, so each function seeds that global generator from the generator dpaudit passes
(``rng``) first, as a user who wants repeatable runs does: the same seed gives the same release.
The two packages install under different import names; each function imports only its own.
"""

import numpy as np

BOX = (-1.0, 1.0)


def _column(X):
    return np.clip(np.asarray(X, dtype=float)[:, 0], *BOX)


def _seed_random(rng):
    import random

    random.seed(int(rng.integers(2**63 - 1)))


def _seed_numpy(rng):
    np.random.seed(int(rng.integers(2**32 - 1)))


# --------------------------------------------------------------------------------------------- diffpriv-pure
def pure_sum(X, epsilon, rng):
    """``diffpriv_pure.private_sum(x, bounds=(-1, 1), epsilon)``: Laplace with sensitivity hi − lo."""
    from diffpriv_pure import private_sum

    _seed_random(rng)
    return np.array([private_sum([float(v) for v in _column(X)], BOX, float(epsilon))])


def pure_mean(X, epsilon, rng):
    """``diffpriv_pure.private_mean(x, bounds=(-1, 1), epsilon)``: Laplace with sensitivity (hi − lo)/n."""
    from diffpriv_pure import private_mean

    _seed_random(rng)
    return np.array([private_mean([float(v) for v in _column(X)], BOX, float(epsilon))])


def pure_count(X, epsilon, rng):
    """``diffpriv_pure.private_count(n, epsilon)`` of the number of records n (geometric noise)."""
    from diffpriv_pure import private_count

    _seed_random(rng)
    return np.array([float(private_count(len(X), float(epsilon)))])


# --------------------------------------------------------------------------------------------- diff-priv-laplace-python
def laplace_count(X, epsilon, rng):
    """``DiffPrivLaplaceMechanism(epsilon).anonymize_count(n)``: Laplace with sensitivity 1."""
    from diffpriv_laplace import DiffPrivLaplaceMechanism

    _seed_numpy(rng)
    return np.atleast_1d(np.asarray(DiffPrivLaplaceMechanism(float(epsilon)).anonymize_count(float(len(X))), float))


def laplace_sum(X, epsilon, rng):
    """``DiffPrivLaplaceMechanism(epsilon).anonymize_sum(sum, lower=-1, upper=1)``: sensitivity max(|l|, |u|)."""
    from diffpriv_laplace import DiffPrivLaplaceMechanism

    _seed_numpy(rng)
    x = _column(X)
    return np.atleast_1d(np.asarray(DiffPrivLaplaceMechanism(float(epsilon)).anonymize_sum(float(x.sum()), *BOX),
                                    float))


def laplace_mean(X, epsilon, rng):
    """``DiffPrivLaplaceMechanism(epsilon).anonymize_mean(mean, lower=-1, upper=1, n)``: sensitivity (u − l)/n."""
    from diffpriv_laplace import DiffPrivLaplaceMechanism

    _seed_numpy(rng)
    x = _column(X)
    return np.atleast_1d(np.asarray(
        DiffPrivLaplaceMechanism(float(epsilon)).anonymize_mean(float(x.mean()), *BOX, len(x)), float))


def laplace_variance(X, epsilon, rng):
    """``DiffPrivLaplaceMechanism(epsilon).anonymize_variance(var, lower=-1, upper=1, n)``: sensitivity
    (u − l)²/n, of the population variance ``np.var(x)``."""
    from diffpriv_laplace import DiffPrivLaplaceMechanism

    _seed_numpy(rng)
    x = _column(X)
    return np.atleast_1d(np.asarray(
        DiffPrivLaplaceMechanism(float(epsilon)).anonymize_variance(float(x.var()), *BOX, len(x)), float))
