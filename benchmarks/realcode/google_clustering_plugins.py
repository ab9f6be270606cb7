"""Google's DP clustering (google/differential-privacy, ``learning/clustering``) as a plain plug-in, as a user wraps it.

``clustering_algorithm.private_lsh_clustering(k, data, privacy_param)`` is the library's entry point (its
README): records in a ball of public radius, an LSH prefix tree with discrete-Laplace counts, Gaussian noisy
sums at the leaves (a private coreset), then k-means++ on the coreset.  Its noise is calibrated for (ε, δ)
under add/remove by dp-accounting's PLD accountant; the calibration (a root search over PLD compositions,
~0.6 s) and its validation (~45 ms) depend only on (ε, δ, radius, depth), so this wrapper memoises both per
(ε, δ), as a user who calls the clustering thousands of times would: a fit then costs about 2 ms.

The code draws all its randomness from numpy's global state (``np.random.normal``, ``scipy.stats.dlaplace.rvs``
and scikit-learn's k-means++ without a ``random_state``), so the wrapper seeds that state from the generator
dpaudit passes: the same seed gives the same release.  Records are clipped to the public box [-1, 1]², whose
radius √2 is the radius the code is told.  The library's folder ``learning/clustering`` is importable as
``clustering`` in the interpreter this runs in (``benchmarks/bench_realcode.py`` puts a copy of it on the path).
"""

import functools

import numpy as np

K = 2
DELTA = 1e-6
BOX = (-1.0, 1.0)
MAX_DEPTH = 20  # private_lsh_clustering's own default depth when no TreeParam is given


@functools.lru_cache(maxsize=None)
def _calibrated(epsilon, delta, radius, max_depth):
    """The library's PrivacyCalculator for (ε, δ), calibrated and validated once."""
    from clustering import clustering_params

    param = clustering_params.DifferentialPrivacyParam(epsilon=epsilon, delta=delta)
    calculator = _ORIGINAL(param, radius, max_depth, clustering_params.PrivacyCalculatorMultiplier())
    calculator.validate_accounting(param, max_depth)
    calculator.validate_accounting = lambda *args, **kwargs: None  # validated above, for these very parameters
    return calculator


def _memoised(privacy_param, radius, max_depth, multipliers):
    return _calibrated(float(privacy_param.epsilon), float(privacy_param.delta), float(radius), int(max_depth))


def _install_memo():
    global _ORIGINAL
    from clustering import privacy_calculator

    if privacy_calculator.PrivacyCalculator is not _memoised:
        _ORIGINAL = privacy_calculator.PrivacyCalculator
        privacy_calculator.PrivacyCalculator = _memoised


_ORIGINAL = None


def cluster(X, epsilon, rng):
    from clustering import clustering_algorithm, clustering_params

    _install_memo()
    X = np.clip(np.asarray(X, dtype=float), *BOX)
    radius = float(np.sqrt(X.shape[1]) * max(abs(BOX[0]), abs(BOX[1])))
    np.random.seed(int(rng.integers(2**32)))
    data = clustering_params.Data(X, radius=radius)
    privacy = clustering_params.DifferentialPrivacyParam(epsilon=epsilon, delta=DELTA)
    return np.asarray(clustering_algorithm.private_lsh_clustering(K, data, privacy).centers, dtype=float)


def lsh_clustering(X, epsilon, rng):
    """``private_lsh_clustering(k=2, Data(X, radius=√2), DifferentialPrivacyParam(epsilon, 1e-6))``: the centres."""
    return cluster(X, epsilon, rng)


def lsh_clustering_at_ten_epsilon(X, epsilon, rng):
    """The same call at 10·ε: a wrapper that passes the wrong budget while the claim stays ε."""
    return cluster(X, 10.0 * epsilon, rng)
