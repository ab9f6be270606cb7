"""Plug-ins for the screening tests (tests/test_screening.py): each stands for a class of real DP code.

Every function is ``fn(X, epsilon, rng) -> array`` and draws its noise from ``rng`` unless it says otherwise.
The box is [-1, 1]^d throughout (the tests pass it as the public bounds).
"""

import os

import numpy as np


def _clipped_mean(X, epsilon, rng, scale_factor=1.0):
    """A DP mean of records clipped to [-1, 1]^d: Laplace noise on the sum (sensitivity d) and on the count (1)."""
    X = np.clip(X, -1.0, 1.0)
    d = X.shape[1]
    noisy_sum = X.sum(axis=0) + rng.laplace(scale=2.0 * d / epsilon * scale_factor, size=d)
    noisy_count = len(X) + rng.laplace(scale=2.0 / epsilon * scale_factor)
    return noisy_sum, noisy_count


def mean_or_nothing(X, epsilon, rng):
    """Correct: one noisy centre, or no centre at all (an empty set, 0 × d) when the noisy count is below 5."""
    s, c = _clipped_mean(X, epsilon, rng)
    if c < 5:
        return np.empty((0, X.shape[1]))
    return np.clip(s / c, -1.0, 1.0)[None, :]


def mean_over_noisy_count(X, epsilon, rng):
    """Correct, but divides by a rounded noisy count that can be 0: NaN or infinite centres are part of its output."""
    s, c = _clipped_mean(X, epsilon, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (s / np.round(max(c, 0.0)))[None, :]


def range_scaled_crashes_far(X, epsilon, rng):
    """Broken: its noise scale is the data's own range (no noise at all on identical records); and it runs out of
    memory on a record far outside the box (a grid sized from the data's range)."""
    if len(X) == 0:
        return np.empty((0, X.shape[1]))
    if np.abs(X).max() > 100.0:
        raise MemoryError("grid too large")
    spread = float(X.max() - X.min())
    centre = X.mean(axis=0)
    return (centre + rng.laplace(scale=spread / epsilon + 1e-12, size=X.shape[1]))[None, :]


def silent_below_100(X, epsilon, rng):
    """Broken, and silent on small data: no centre while a noisy count (ε/2 of the budget) is below 100; above,
    noise 100 times too small."""
    if len(X) + rng.laplace(scale=2.0 / epsilon) < 100:
        return np.empty((0, X.shape[1]))
    s, c = _clipped_mean(X, epsilon, rng, scale_factor=0.01)
    return np.clip(s / max(c, 1.0), -1.0, 1.0)[None, :]


def refuses_identical(X, epsilon, rng):
    """Refuses identical records (a singular covariance: the head of the constructions), and leaks otherwise:
    its noise is a hundred times too small."""
    if len(X) < 2 or np.allclose(X, X[0]):
        raise np.linalg.LinAlgError("Singular matrix")
    s, c = _clipped_mean(X, epsilon, rng, scale_factor=0.01)
    return np.clip(s / max(c, 1.0), -1.0, 1.0)[None, :]


def crashes_on_one_and_leaks(X, epsilon, rng):
    """Raises on a one-record dataset (a refusal channel) *and* leaks in what it releases (noise 100× too small):
    the bound on releases both sides answer must lead."""
    if len(X) == 1:
        raise np.linalg.LinAlgError("one-record cluster")
    s, c = _clipped_mean(X, epsilon, rng, scale_factor=0.01)
    return np.clip(s / max(c, 1.0), -1.0, 1.0)[None, :]


def count_refusing_one(X, epsilon, rng):
    """A correct noisy count (Laplace, sensitivity 1) that raises on a one-record dataset: a refusal channel."""
    if len(X) == 1:
        raise ValueError("one record is not enough")
    return np.array([[len(X) + rng.laplace(scale=1.0 / epsilon), 0.0]])


def correct_mean(X, epsilon, rng):
    """Correct: the clipped noisy mean, or the centre of the box when the noisy count is not positive."""
    s, c = _clipped_mean(X, epsilon, rng)
    return (np.clip(s / c, -1.0, 1.0) if c > 1.0 else np.zeros(X.shape[1]))[None, :]


def urandom_mean(X, epsilon, rng):
    """Correct, but ignores its generator: it draws its noise from the operating system's randomness."""
    own = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    return correct_mean(X, epsilon, own)


def own_generator_mean(X, epsilon, rng):
    """Correct, but ignores its generator: a fresh unseeded one of its own on every call."""
    return correct_mean(X, epsilon, np.random.default_rng())


def global_numpy_mean(X, epsilon, rng):
    """Correct, drawing its noise from numpy's global generator (as much wrapped research code does)."""
    X = np.clip(X, -1.0, 1.0)
    d = X.shape[1]
    s = X.sum(axis=0) + np.random.laplace(scale=2.0 * d / epsilon, size=d)
    c = len(X) + np.random.laplace(scale=2.0 / epsilon)
    return (np.clip(s / c, -1.0, 1.0) if c > 1.0 else np.zeros(d))[None, :]


def data_scaled_noise(X, epsilon, rng):
    """Broken in a way a maintainer must be shown: the noise scale comes from the data (its spread), and small
    data skips the clipping."""
    if len(X) == 0:
        return np.zeros((1, X.shape[1]))
    if len(X) < 3:
        centre = X.mean(axis=0)
    else:
        centre = np.clip(X, -1.0, 1.0).mean(axis=0)
    sigma = float(X.std(axis=0).mean()) / epsilon + 1e-9
    return (centre + rng.normal(0.0, sigma, size=X.shape[1]))[None, :]


def data_scaled_noise_only(X, epsilon, rng):
    """Broken, and only by its noise scale: the Gaussian noise's σ is the data's own spread (no branch at all)."""
    sigma = float(np.clip(X, -1.0, 1.0).std(axis=0).mean()) / epsilon + 1e-9 if len(X) else 1.0
    centre = np.clip(X, -1.0, 1.0).mean(axis=0) if len(X) else np.zeros(X.shape[1])
    return (centre + rng.normal(0.0, sigma, size=X.shape[1]))[None, :]


_CALIBRATION: dict = {}


def slow_first_call(X, epsilon, rng):
    """Correct, with a calibration memoised per ε that costs 0.5 s on a process's first call (as a noise
    calibrated by an accountant is): a lane forked from a warm template never pays it."""
    if epsilon not in _CALIBRATION:
        import time

        time.sleep(0.5)
        _CALIBRATION[epsilon] = 2.0 / epsilon
    return correct_mean(X, epsilon, rng)


def starts_a_thread(X, epsilon, rng):
    """Correct, but its first call starts a background thread (a thread pool): forking after it is unsafe."""
    import threading

    if not any(t.name == "pool-worker" for t in threading.enumerate()):
        threading.Thread(target=lambda: threading.Event().wait(), name="pool-worker", daemon=True).start()
    return correct_mean(X, epsilon, rng)


def constant_data_branch(X, epsilon, rng):
    """Broken by a data-dependent branch: identical records (no spread) are released without noise."""
    if len(X) == 0:
        return np.zeros((1, X.shape[1]))
    if np.ptp(X) == 0:
        return X[:1].copy()
    s, c = _clipped_mean(X, epsilon, rng)
    return np.clip(s / max(c, 1.0), -1.0, 1.0)[None, :]
