"""IBM diffprivlib's releases as plain plug-ins, written the way a user writes them.

Each function calls one documented diffprivlib entry point with its documented
parameters (``epsilon``, ``bounds``/``range``, ``random_state``) and returns
what that call releases; it knows nothing of diffprivlib's internals and
nothing of dpaudit.  Every random number comes from the ``random_state``
drawn from the generator dpaudit passes (``rng``), so the same seed gives the
same release.  The public box of every record is [-1, 1] per feature (the
functions clip to it, as a user who states ``bounds=(-1, 1)`` must make true);
supervised functions take the labels ``y`` dpaudit gives them.  Warnings are
left alone: dpaudit records diffprivlib's ``PrivacyLeakWarning`` (there should
be none: every bound is given).

The same file serves the fork ``diffprivlib-fix`` 0.6.7, which installs under
the same import name.  ``benchmarks/bench_libraries.py`` audits these in a
virtual environment that holds only the library and its dependencies.
"""

import numpy as np

BOX = (-1.0, 1.0)   # the public box of every feature
TARGET = (0.0, 3.0)  # the public range of the regression target (the label column)
BINS = 4


def _state(rng):
    return int(rng.integers(2**31 - 1))


def _column(X):
    return np.clip(np.asarray(X, dtype=float)[:, 0], *BOX)


# --------------------------------------------------------------------------------------------- tools
def tools_mean(X, epsilon, rng):
    """``diffprivlib.tools.mean(x, epsilon, bounds=(-1, 1))`` of the first column."""
    from diffprivlib.tools import mean

    return np.atleast_1d(mean(_column(X), epsilon=epsilon, bounds=BOX, random_state=_state(rng)))


def tools_var(X, epsilon, rng):
    """``diffprivlib.tools.var(x, epsilon, bounds=(-1, 1))`` of the first column."""
    from diffprivlib.tools import var

    return np.atleast_1d(var(_column(X), epsilon=epsilon, bounds=BOX, random_state=_state(rng)))


def tools_std(X, epsilon, rng):
    """``diffprivlib.tools.std(x, epsilon, bounds=(-1, 1))`` of the first column."""
    from diffprivlib.tools import std

    return np.atleast_1d(std(_column(X), epsilon=epsilon, bounds=BOX, random_state=_state(rng)))


def tools_histogram(X, epsilon, rng):
    """``diffprivlib.tools.histogram(x, epsilon, bins=4, range=(-1, 1))`` of the first column: the counts."""
    from diffprivlib.tools import histogram

    counts, _edges = histogram(_column(X), epsilon=epsilon, bins=BINS, range=BOX, random_state=_state(rng))
    return np.asarray(counts, dtype=float)


def tools_median(X, epsilon, rng):
    """``diffprivlib.tools.median(x, epsilon, bounds=(-1, 1))`` of the first column."""
    from diffprivlib.tools import median

    return np.atleast_1d(median(_column(X), epsilon=epsilon, bounds=BOX, random_state=_state(rng)))


# --------------------------------------------------------------------------------------------- models
def models_kmeans(X, epsilon, rng):
    """``diffprivlib.models.KMeans(n_clusters=2, epsilon, bounds=(-1, 1))``: ``cluster_centers_``."""
    from diffprivlib.models import KMeans

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    model = KMeans(n_clusters=2, epsilon=epsilon, bounds=BOX, random_state=_state(rng)).fit(X)
    return np.asarray(model.cluster_centers_, dtype=float)


def models_gaussian_nb(X, y, epsilon, rng):
    """``diffprivlib.models.GaussianNB(epsilon, bounds=(-1, 1))`` fitted on (X, y): ``theta_``, ``var_`` and
    ``class_prior_`` — what its ``predict`` uses — flattened."""
    from diffprivlib.models import GaussianNB

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    model = GaussianNB(epsilon=epsilon, bounds=BOX, random_state=_state(rng)).fit(X, y)
    return np.concatenate([np.ravel(model.theta_), np.ravel(model.var_), np.ravel(model.class_prior_)])


def models_linear_regression(X, y, epsilon, rng):
    """``diffprivlib.models.LinearRegression(epsilon, bounds_X=(-1, 1), bounds_y=(0, 3))`` fitted on the first
    column of X and y (a regression on one feature, like the tools above): ``coef_`` and ``intercept_``."""
    from diffprivlib.models import LinearRegression

    X = _column(X)[:, None]
    y = np.clip(np.asarray(y, dtype=float), *TARGET)
    model = LinearRegression(epsilon=epsilon, bounds_X=BOX, bounds_y=TARGET, random_state=_state(rng)).fit(X, y)
    return np.concatenate([np.ravel(model.coef_), np.ravel(model.intercept_)])


# --------------------------------------------------------------------------------------------- classes read from y
GRID = np.array([[a, b] for a in (-0.5, 0.0, 0.5) for b in (-0.5, 0.0, 0.5)])  # public points a model predicts at


def models_logistic_regression(X, y, epsilon, rng):
    """``diffprivlib.models.LogisticRegression(epsilon, data_norm=√2)`` fitted on (X, y): ``coef_`` and
    ``intercept_`` flattened.  The class takes no class list: it reads the classes from ``y``."""
    from diffprivlib.models import LogisticRegression

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    model = LogisticRegression(epsilon=epsilon, data_norm=float(np.sqrt(X.shape[1])), random_state=_state(rng))
    model.fit(X, y)
    return np.concatenate([np.ravel(model.coef_), np.ravel(model.intercept_)])


def models_decision_tree(X, y, epsilon, rng):
    """``diffprivlib.models.DecisionTreeClassifier(max_depth=2, epsilon, bounds=(-1, 1))`` fitted on (X, y), no
    ``classes`` given (the classes are then read from ``y``): ``predict_proba`` at 9 public points, flattened."""
    from diffprivlib.models import DecisionTreeClassifier

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    model = DecisionTreeClassifier(max_depth=2, epsilon=epsilon, bounds=BOX, random_state=_state(rng)).fit(X, y)
    return np.ravel(model.predict_proba(GRID[:, :X.shape[1]]))


def models_random_forest(X, y, epsilon, rng):
    """``diffprivlib.models.RandomForestClassifier(n_estimators=5, max_depth=2, epsilon, bounds=(-1, 1))`` fitted on
    (X, y), no ``classes`` given (read from ``y``): ``predict_proba`` at 9 public points, flattened."""
    from diffprivlib.models import RandomForestClassifier

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    model = RandomForestClassifier(n_estimators=5, max_depth=2, epsilon=epsilon, bounds=BOX,
                                   random_state=_state(rng)).fit(X, y)
    return np.ravel(model.predict_proba(GRID[:, :X.shape[1]]))
