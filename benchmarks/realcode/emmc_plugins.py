"""UzL-PrivSec/dp-kmeans-max-cover (EMMC, Nguyen et al., AAAI 2021, re-implemented) as a plain plug-in.

``EMMC().cluster(data, diameter, k, epsilon, delta)`` is the README's entry point; it returns the centres it
could release as an array (fewer than k, none at all when no cluster is large enough).  The diameter is the
public box's diagonal, 2√d for [-1, 1]^d; δ = 10⁻⁶.  Its randomness is numpy's global state (and scikit-learn's
k-means++ and random projection without a ``random_state``), seeded here from dpaudit's generator.  The centres
come back as a (c, d) array, c ≤ k (0 × d when it releases none).  It prints progress lines; dpaudit sends them
to stderr.
"""

import numpy as np

K = 2
DELTA = 1e-6
BOX = (-1.0, 1.0)


def emmc(X, epsilon, rng):
    """``EMMC().cluster(data=X, diameter=2√d, k=2, epsilon=epsilon, delta=1e-6)``, as a (c, d) array."""
    from emmc import EMMC

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    np.random.seed(int(rng.integers(2**32)))
    diameter = float(np.sqrt(X.shape[1]) * (BOX[1] - BOX[0]))
    centres = EMMC().cluster(data=X, diameter=diameter, k=K, epsilon=epsilon, delta=DELTA)
    return np.asarray(centres, dtype=float).reshape(-1, X.shape[1])
