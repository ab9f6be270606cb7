"""Supervised plug-ins for the tests: code that learns from labelled records (``fit(X, y)``,
``fn(X, y, epsilon, rng)``), and code that draws its own randomness.  numpy and scikit-learn only."""

import numpy as np
from sklearn.linear_model import LogisticRegression  # at import: the lanes fork from a loaded template

BOX = 15.0  # the public feature box of blobs-2d, [-15, 15]^d


def noisy_linear(X, y, epsilon, rng):
    """A linear classifier from noisy sufficient statistics (textbook Laplace mechanism): correct.

    Records are clipped to [-15, 15]^d; per class c the sum of its records and its count get
    Laplace noise of scale (d·15 + 1)/ε — one record changes one class's sum by at most d·15 in
    L1 and its count by 1 (add/remove), so the vector of all sums and counts is ε-DP.  The released
    weights w = mean_1 − mean_0 and bias −w·(mean_0 + mean_1)/2 (classes 0 and 1 of y; other
    classes are ignored) are post-processing.
    """
    X = np.clip(np.asarray(X, dtype=float), -BOX, BOX)
    y = np.asarray(y)
    d = X.shape[1]
    scale = (d * BOX + 1.0) / epsilon
    means = []
    for c in (0, 1):
        members = X[y == c]
        total = members.sum(axis=0) + rng.laplace(scale=scale, size=d)
        count = len(members) + rng.laplace(scale=scale)
        means.append(np.clip(total / max(count, 1.0), -BOX, BOX))
    w = means[1] - means[0]
    return np.concatenate([w, [-w @ (means[0] + means[1]) / 2.0]])


def sklearn_logistic(X, y, epsilon, rng):
    """scikit-learn's LogisticRegression, no privacy at all: coef_ and intercept_."""
    model = LogisticRegression(solver="liblinear").fit(np.asarray(X, dtype=float), np.asarray(y))
    return np.concatenate([model.coef_.ravel(), model.intercept_.ravel()])


def echo_labels(X, y, epsilon, rng):
    """What the code was given: the number of rows, the feature count and the labels themselves."""
    y = np.asarray(y)
    return np.concatenate([[len(X), np.asarray(X).shape[1], float(y.dtype.kind == "i")], y.astype(float)])


class NonPrivateLogistic:
    """A scikit-learn-style estimator class with an epsilon it ignores: fit(X, y) is supervised."""

    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon = epsilon
        self.random_state = random_state

    def fit(self, X, y):
        model = LogisticRegression(solver="liblinear").fit(X, y)
        self.coef_, self.intercept_, self.classes_ = model.coef_, model.intercept_, model.classes_
        self._model = model
        return self

    def predict_proba(self, X):
        return self._model.predict_proba(X)


def laplace_mean_own(X, epsilon):
    """A correct Laplace mean of the first column clipped to [-15, 15] (replace neighbours) that draws its own
    randomness from the operating system: no generator parameter."""
    x = np.clip(np.asarray(X, dtype=float)[:, 0], -BOX, BOX)
    return np.array([x.mean() + np.random.default_rng().laplace(scale=2 * BOX / (len(x) * epsilon))])


def laplace_mean_ignores_rng(X, epsilon, rng):
    """The same, taking a generator it never uses (the replay catches it unless --own-randomness is given)."""
    return laplace_mean_own(X, epsilon)
