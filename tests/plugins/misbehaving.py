"""Audited code that misbehaves in every way the worker protocol must survive.

Loaded by path (``tests/plugins/misbehaving.py:NAME``) by the worker and audit
tests; each function has the plug-in signature ``fn(X, epsilon, rng)``.
"""

import time

import numpy as np


def good(X, epsilon, rng):
    print("chatter on stdout must not break the protocol")
    return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)


def raises(X, epsilon, rng):
    raise ValueError("boom from the plug-in")


def hangs(X, epsilon, rng):
    time.sleep(600)


def nan(X, epsilon, rng):
    return np.full(X.shape, np.nan)


def shape(X, epsilon, rng):
    return X[:, :1]


def dies(X, epsilon, rng):
    import os
    os._exit(3)


def noiseless_mean(X, epsilon, rng):
    """Claims ε-DP but adds no noise."""
    return np.array([X.mean()])


class Counter:
    """A Mechanism-shaped class stating its own claim."""
    name = "counter"

    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.claim = type("Claim", (), {"epsilon": epsilon, "delta": 0.0, "neighbours": "add-remove"})()

    def release(self, X, rng):
        return np.array([len(X) + rng.laplace(scale=1.0 / self.epsilon)])
