"""The decision-boundary distance of many records at once: HopSkipJump (Chen, Jordan & Wainwright, S&P 2020),
untargeted, L2, batched over the records.

The label-only boundary attack (Choquette-Choo et al., ICML 2021 §4; Li & Zhang, CCS 2021) scores a record by how
far it is from the target's decision boundary, found with HopSkipJump from labels alone.  ART's
``HopSkipJump`` runs its search record by record, each step a model query on one point or one batch of
perturbations — thousands of small queries per record, which on a release's classifier cost more than the
attack's arithmetic.  Here every record takes the same steps in lockstep, so each step is one query on all of
them: the search of ART (``art/attacks/evasion/hop_skip_jump.py``) step for step — a uniform random start in
the box that the model labels differently, a binary search towards the record, then ``max_iter`` rounds of a
gradient-direction estimate from ``init_eval·√(t+1)`` (≤ ``max_eval``) random unit perturbations, a geometric
step search and a binary search back to the boundary — with three differences that do not change what is
measured: float64 instead of float32, draws from one seeded generator (not NumPy's global state and unseeded
``RandomState`` objects), and a step search that gives up after :data:`MAX_STEP_HALVINGS` halvings and keeps
the current boundary point (ART's loops forever when rounding leaves no adversarial step).

:func:`boundary_distances` returns each record's distance (0 where the model already mislabels it, as ART's
``LabelOnlyDecisionBoundary`` sets it); :func:`distance_threshold` is ART's ``calibrate_distance_threshold``
rule, the τ that best separates members from non-members on a shadow target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["MAX_STEP_HALVINGS", "HopSkipJump", "boundary_distances", "distance_threshold"]

MAX_STEP_HALVINGS = 64  # step sizes 2^-64 of the distance to the boundary: below float64 resolution of the point
THRESHOLD_STEPS = 100   # ART's calibration grid: τ at 1/100 … 99/100 of the largest distance


@dataclass(frozen=True)
class HopSkipJump:
    """HopSkipJump's budget per record (ART's parameters and defaults of the label-only attack)."""

    max_iter: int = 5
    max_eval: int = 200
    init_eval: int = 20
    init_size: int = 50


def _labels(model: Any, X: np.ndarray) -> np.ndarray:
    """The model's label of each row (argmax of its class probabilities, as ART reads a classifier)."""
    return np.asarray(np.argmax(model.predict_proba(X), axis=1))


def _binary_search(model: Any, x: np.ndarray, adv: np.ndarray, label: np.ndarray, threshold: float,
                   box: tuple[float, float]) -> np.ndarray:
    """Each row's boundary point between its record ``x`` (label ``label``) and ``adv`` (labelled otherwise):
    bisect the interpolation weight until its bracket is at most ``threshold``; the adversarial end."""
    lower, upper = np.zeros(len(x)), np.ones(len(x))
    while np.any(upper - lower > threshold):  # the same number of halvings for every row
        alpha = (upper + lower) / 2.0
        mid = np.clip((1.0 - alpha)[:, None] * x + alpha[:, None] * adv, *box)
        adversarial = _labels(model, mid) != label
        lower = np.where(adversarial, lower, alpha)
        upper = np.where(adversarial, alpha, upper)
    return np.clip((1.0 - upper)[:, None] * x + upper[:, None] * adv, *box)


def _start(model: Any, x: np.ndarray, label: np.ndarray, tries: int, box: tuple[float, float],
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A first adversarial point per record — the first of ``tries`` uniform draws in the box the model labels
    otherwise — and whether one was found."""
    n, d = x.shape
    draws = rng.uniform(box[0], box[1], size=(n, tries, d))
    adversarial = (_labels(model, draws.reshape(-1, d)).reshape(n, tries) != label[:, None])
    found = adversarial.any(axis=1)
    first = np.argmax(adversarial, axis=1)
    start = np.where(found[:, None], draws[np.arange(n), first], x)
    return start, found


def _direction(model: Any, current: np.ndarray, label: np.ndarray, delta: np.ndarray, n_eval: int,
               box: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """HopSkipJump's estimate of the direction away from the boundary at each row of ``current``: the mean of
    ``n_eval`` random unit perturbations of radius ``delta``, signed by whether each stays adversarial."""
    n, d = current.shape
    noise = rng.standard_normal((n, n_eval, d))
    noise /= np.sqrt(np.sum(noise ** 2, axis=2, keepdims=True))
    probes = np.clip(current[:, None, :] + delta[:, None, None] * noise, *box)
    noise = (probes - current[:, None, :]) / delta[:, None, None]
    sign = 2.0 * (_labels(model, probes.reshape(-1, d)).reshape(n, n_eval) != label[:, None]) - 1.0
    mean_sign = sign.mean(axis=1, keepdims=True)
    centred = np.where(np.abs(mean_sign) == 1.0, mean_sign, sign - mean_sign)  # all one side: the mean noise, signed
    grad = np.mean(centred[:, :, None] * noise, axis=1)
    norm = np.linalg.norm(grad, axis=1, keepdims=True)
    return np.divide(grad, norm, out=np.zeros_like(grad), where=norm > 0)


def _step(model: Any, current: np.ndarray, direction: np.ndarray, label: np.ndarray, size: np.ndarray,
          box: tuple[float, float]) -> np.ndarray:
    """HopSkipJump's geometric step search: halve each row's step until ``current + step·direction`` is still
    adversarial (at most :data:`MAX_STEP_HALVINGS` times; a row that never is keeps ``current``)."""
    out = current.copy()
    todo = np.ones(len(current), dtype=bool)
    for _ in range(MAX_STEP_HALVINGS):
        size = np.where(todo, size / 2.0, size)
        rows = np.flatnonzero(todo)
        candidate = np.clip(current[rows] + size[rows, None] * direction[rows], *box)
        ok = _labels(model, candidate) != label[rows]
        out[rows[ok]] = candidate[ok]
        todo[rows[ok]] = False
        if not todo.any():
            break
    return out


def boundary_distances(model: Any, X: np.ndarray, y: np.ndarray, box: tuple[float, float], rng: np.random.Generator,
                       budget: HopSkipJump = HopSkipJump(),
                       progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The L2 distance from each record of ``X`` to the boundary of ``model``'s label for it (``predict_proba``
    argmax), found by HopSkipJump within ``box`` (the public clip values); 0 where the model's label differs from
    the record's reference label ``y``, or no start point was found.  ``progress(done, total)`` after each round."""
    x = np.clip(np.asarray(X, dtype=np.float64), *box)
    if not len(x):
        return np.zeros(0)
    n, d = x.shape
    theta = 0.01 / np.sqrt(d)
    predicted = _labels(model, x)
    current, found = _start(model, x, predicted, budget.init_size, box, rng)
    current = _binary_search(model, x, current, predicted, 0.001, box)
    for t in range(budget.max_iter):
        dist = np.linalg.norm(current - x, axis=1)
        delta = np.full(n, 0.1 * (box[1] - box[0])) if t == 0 else np.sqrt(d) * theta * dist
        current = _binary_search(model, x, current, predicted, theta, box)
        n_eval = min(int(budget.init_eval * np.sqrt(t + 1)), budget.max_eval)
        direction = _direction(model, current, predicted, np.maximum(delta, 1e-12), n_eval, box, rng)
        size = 2.0 * np.linalg.norm(current - x, axis=1) / np.sqrt(t + 1)
        current = _step(model, current, direction, predicted, size, box)
        if progress is not None:
            progress(t + 1, budget.max_iter)
    distance = np.where(found, np.linalg.norm(current - x, axis=1), 0.0)
    distance[predicted != np.asarray(y)] = 0.0
    return distance


def distance_threshold(member_distances: np.ndarray, non_member_distances: np.ndarray) -> float:
    """ART's ``calibrate_distance_threshold`` rule: of τ = i/100 of the largest distance (i = 1 … 99), the first
    that classifies most records right when "distance > τ" means member; 0 when every distance is 0."""
    m, nm = np.asarray(member_distances, float), np.asarray(non_member_distances, float)
    top = max(float(np.max(m, initial=0.0)), float(np.max(nm, initial=0.0)))
    if top <= 0.0:
        return 0.0
    taus = top * np.arange(1, THRESHOLD_STEPS) / THRESHOLD_STEPS
    correct = (m[None, :] > taus[:, None]).sum(axis=1) + (nm[None, :] <= taus[:, None]).sum(axis=1)
    best = int(np.argmax(correct))
    return float(taus[best]) if correct[best] > 0 else 0.0
