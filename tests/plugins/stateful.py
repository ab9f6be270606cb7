"""Plug-ins that keep state between calls, for the lane tests of the execution layer.

``remembers_first`` is the leak lanes exist for: it releases the exact column
sums of the first input its process ever saw, whatever it is called on after
that.  Drawn on D and D′ in one process, both sides release D's sums and the
leak is hidden; drawn in a process per side, each side releases its own.
``whoami`` reports its process, how many calls that process has served and a
fingerprint of the first input it saw; ``mutates_sometimes`` writes into its
input on about one call in four (by the seed).
"""

import os
import zlib

import numpy as np

_first = None
_calls = 0


def remembers_first(X, epsilon, rng):
    """The exact column sums of the first input this process saw (a vector release, no noise at all)."""
    global _first
    if _first is None:
        _first = X.sum(axis=0).copy()
    return _first.copy()


def whoami(X, epsilon, rng):
    """[pid, calls served by this process, crc32 of the first input it saw] as a vector release."""
    global _calls, _first
    _calls += 1
    if _first is None:
        _first = np.array([zlib.crc32(X.tobytes())], dtype=np.float64)
    return np.array([os.getpid(), _calls, _first[0]], dtype=np.float64)


def mutates_sometimes(X, epsilon, rng):
    """Honest Laplace noise, but on about one call in four it first writes into its input."""
    if rng.random() < 0.25:
        X[0, 0] = 1e6
    return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)


def identity_then_in_place(X, epsilon, rng):
    """Returns its input itself on one call in two, and adds noise in place otherwise (by the seed)."""
    if rng.random() < 0.5:
        return X
    X += rng.laplace(scale=1.0 / epsilon, size=X.shape)
    return X


def fails_by_seed(X, epsilon, rng):
    """Raises, returns NaN or a wrong shape on some releases (which ones depends on the seed only)."""
    u = rng.random()
    if u < 0.1:
        raise ValueError("fails by seed")
    out = X + rng.laplace(scale=1.0 / epsilon, size=X.shape)
    if u < 0.2:
        out[0, 0] = np.nan
    elif u < 0.3:
        return out[:, :1]
    return out


def hangs_on_small_data(X, epsilon, rng):
    """Answers on data of 20 records or more, hangs on smaller data (the other side of a pair, say)."""
    if len(X) < 20:
        import time
        time.sleep(600)
    return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)
