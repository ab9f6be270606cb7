"""Audited code with one fault each: the fault-injection suite of the execution layer.

Plug-in functions ``fn(X, epsilon, rng) -> array`` (read as a points release
unless a test says otherwise), loaded by path in this process or in a worker.
Faults that depend on the seed (``nan_sometimes``, ``hangs_sometimes``) are
deterministic given (X, seed); ``raises_on_call_5`` and ``stateful`` keep a
call counter in the module, i.e. state between calls.
"""

import os
import sys
import time

import numpy as np

_calls = 0


def _claim(epsilon):
    """A claim as a plug-in states it without importing dpaudit: any object with these attributes."""
    return type("Claim", (), {"epsilon": epsilon, "delta": 0.0, "neighbours": "add-remove"})()


def _laplace(X, epsilon, rng):
    return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)


def honest(X, epsilon, rng):
    return _laplace(X, epsilon, rng)


def _nd_laplace(X, epsilon, rng):
    """nD-Laplace: each record moved by R·U, R ~ Gamma(d, 1/ε), U uniform on the sphere — ε-metric-DP (L2)."""
    X = np.asarray(X, dtype=float)
    u = rng.normal(size=X.shape)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return X + rng.gamma(X.shape[1], 1.0 / epsilon, size=(len(X), 1)) * u


def honest_metric(X, epsilon, rng):
    """Correct under a metric claim (--neighbours metric); a points release reveals n under add-remove."""
    return _nd_laplace(X, epsilon, rng)


def _fail_on_call_5() -> None:
    global _calls
    _calls += 1
    if _calls == 5:
        raise RuntimeError("call 5 fails")


def metric_raises_on_call_5(X, epsilon, rng):
    _fail_on_call_5()
    return _nd_laplace(X, epsilon, rng)


def hangs(X, epsilon, rng):
    time.sleep(600)


def hangs_sometimes(X, epsilon, rng):
    """Hangs on about one release in 60 (which ones depends on the seed only)."""
    if rng.random() < 1.0 / 60.0:
        time.sleep(600)
    return _laplace(X, epsilon, rng)


def raises_on_call_5(X, epsilon, rng):
    _fail_on_call_5()
    return _laplace(X, epsilon, rng)


def nan_sometimes(X, epsilon, rng):
    """NaN in about one release in ten (which ones depends on the seed only)."""
    out = _laplace(X, epsilon, rng)
    if rng.random() < 0.1:
        out[0, 0] = np.nan
    return out


def wrong_shape(X, epsilon, rng):
    return X[:, :1]


def exits(X, epsilon, rng):
    os._exit(3)


def sys_exit_0(X, epsilon, rng):
    sys.exit(0)


def segfault(X, epsilon, rng):
    import ctypes
    ctypes.string_at(0)


def _ndlaplace_noise(shape, epsilon, rng):
    """nD-Laplace noise, density ∝ exp(−ε‖z‖): radius Gamma(d, 1/ε), direction uniform on the sphere."""
    n, d = shape
    radius = rng.gamma(shape=d, scale=1.0 / epsilon, size=n)
    direction = rng.standard_normal((n, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return radius[:, None] * direction


def ndlaplace(X, epsilon, rng):
    """A correct ε-metric nD-Laplace that returns a new array."""
    return X + _ndlaplace_noise(X.shape, epsilon, rng)


def in_place_ndlaplace(X, epsilon, rng):
    """The same mechanism, adding its noise in place (the same numbers as ``ndlaplace`` for the same rng)."""
    X += _ndlaplace_noise(X.shape, epsilon, rng)
    return X


def stateful(X, epsilon, rng):
    """Honest noise plus a drift that grows with every call: state kept between calls."""
    global _calls
    _calls += 1
    return _laplace(X, epsilon, rng) + 1e-3 * _calls


def global_random(X, epsilon, rng):
    """Randomness from numpy's global generator instead of the one it was given."""
    return X + np.random.laplace(scale=1.0 / epsilon, size=X.shape)


def impossible_allocation(X, epsilon, rng):
    """Asks for 128 TiB: refused at once (MemoryError), safe to run anywhere."""
    np.empty(1 << 44)
    return X


def huge_allocation(X, epsilon, rng):
    """Allocates and touches 2 GiB: only ever run in a worker with a memory limit."""
    return X + np.ones(1 << 28)[: X.size].reshape(X.shape)


def returns_garbage(X, epsilon, rng):
    return "not an array"


class Spy:
    """A mechanism that reports what it can see of its surroundings (to the file ``out``)."""

    name = "spy"

    def __init__(self, epsilon, out):
        import json

        self.epsilon = epsilon
        self.claim = _claim(epsilon)
        seen = {"argv": sys.argv, "path": sys.path, "env": dict(os.environ), "numpy": np.__file__,
                "executable": sys.executable}
        import importlib.util
        found = importlib.util.find_spec("sklearn")  # where an import would come from, without importing it
        seen["sklearn"] = found.origin if found is not None else "ImportError: no sklearn"
        for name in ("attacks", "dpaudit", "mechanisms"):
            seen[name] = name in sys.modules
        with open(out, "w") as fh:
            json.dump(seen, fh)
        self.out = out

    def release(self, X, rng):
        import json

        with open(self.out) as fh:
            seen = json.load(fh)
        seen["seed_seq"] = {"entropy": str(rng.bit_generator.seed_seq.entropy),
                            "spawn_key": list(rng.bit_generator.seed_seq.spawn_key)}
        with open(self.out, "w") as fh:
            json.dump(seen, fh)
        return _laplace(X, self.epsilon, rng)


class ListBatches:
    """A correct vectorised mechanism whose ``release_many`` returns a list of releases, not a stacked batch."""

    name = "list-batches"

    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.claim = _claim(epsilon)

    def release(self, X, rng):
        return np.array([X.sum() + rng.laplace(scale=1.0 / self.epsilon)])

    def release_many(self, X, rng, n):
        return [np.array([v]) for v in X.sum() + rng.laplace(scale=1.0 / self.epsilon, size=n)]


def floods(X, epsilon, rng):
    """Returns 128 MiB for a release of a few hundred bytes (a wrong shape, and a memory bomb for the auditor)."""
    return np.zeros(1 << 24)


class PrivacyLeakWarning(UserWarning):
    """Named like dpaudit's: the worker forwards warnings of this name to the auditor."""


HOSTILE = ("\x1b]0;pwned\x07\x1b[2J\rboom\nVERDICT: NO VIOLATION FOUND\nConclusion: Consistent with ε = 1: "
           "certified ε_lb = 0 ≤ 1 (forged)\u202e")


def hostile_text(X, epsilon, rng):
    """Warns and raises with text made to act on a terminal and to forge verdict lines."""
    import warnings

    warnings.warn(HOSTILE, PrivacyLeakWarning, stacklevel=2)
    raise RuntimeError(HOSTILE)
