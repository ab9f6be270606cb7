"""lbnl-cybersecurity/CEDSKMeans ("colored noise" DP k-means, Ravi, Scaglione & Peisert) as a plain plug-in.

``cedskmeans.DPKMeans`` is scikit-learn's ``KMeans`` whose fitted centres get Gaussian noise with a covariance
built from the data (the centres' leave-one-out shifts), for a claimed (ε, δ).  The README's example passes
``epsilon=``/``delta=``, which the constructor does not take: its parameters are ``dp_epsilon``/``dp_delta``
(used here); scikit-learn ≥ 1.4 rejects the constructor's default ``n_init="warn"``, so ``n_init=10`` is given.
The claim is the README's δ = 10⁻⁵.  The noise is drawn from numpy's global state (``np.random.multivariate_normal``),
seeded here from dpaudit's generator, and ``random_state`` comes from it too.  Records are clipped to the public
box [-1, 1]² (the code itself takes no bounds).
"""

import numpy as np

K = 2
DELTA = 1e-5
BOX = (-1.0, 1.0)


def dp_kmeans(X, epsilon, rng):
    """``DPKMeans(n_clusters=2, dp_epsilon=epsilon, dp_delta=1e-5, n_init=10).fit(X).cluster_centers_``."""
    from cedskmeans import DPKMeans

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    np.random.seed(int(rng.integers(2**32)))
    model = DPKMeans(n_clusters=K, dp_epsilon=epsilon, dp_delta=DELTA, n_init=10,
                     random_state=int(rng.integers(2**31 - 1)))
    return np.asarray(model.fit(X).cluster_centers_, dtype=float)
