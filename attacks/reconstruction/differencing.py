"""Centroid differencing: the record added between two ``Centroids`` releases.

The attacker (DP's strong adversary: knows D) obtains releases of D and of
D ∪ {x}, matches centres permutation-invariantly (Hungarian on distances) and
inverts the change of the centre that moved most: with n_j records of D in
that cluster, x̂ = c′_j + n_j (c′_j − c_j) (the mean update
c′ = (n_j c + x)/(n_j + 1)).  n_j comes from the released noisy counts when
present, else from assigning D to the released centres.

Real code releases fewer centres than k on small data (k capped by the size of
a private coreset, empty clusters dropped), so the two releases may differ in
size.  The centres are then matched on their common size (the optimal
assignment of the smaller set into the larger, :func:`match_centres`):

* ``after`` has a centre no centre of ``before`` matched — the record may have
  opened a cluster of its own: x̂ is the unmatched centre of ``after`` farthest
  from every centre of ``before``;
* ``after`` has fewer centres — a cluster was dropped or merged: the matched
  pair that moved most is inverted as above;
* ``after`` has no centre — the release says nothing about x: x̂ is the mean of
  the public prior (the attacker's best guess without it).

Each target's case is counted in the result's ``matching`` (how many releases
differed in size, how many were guesses from the prior), so the report says how
often the plain mean-update inversion applied.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from dpaudit.execution import release_once
from dpaudit.mechanisms.base import Centroids, InvalidInputError, Mechanism

from ..attack import Progress
from ..targets import check_release
from .result import ReconstructionResult, scored

__all__ = ["CASES", "difference_centroids", "match_centres", "reconstruct_centroids"]

# How difference_centroids estimated a record, by the sizes of the two releases.
CASES = ("same size", "new centre", "fewer centres", "no centre")


def match_centres(c: np.ndarray, c2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols): the optimal assignment of min(k, k′) centres of ``c`` to centres of ``c2``
    (Hungarian on Euclidean distances, rectangular when the sizes differ; empty when either is)."""
    if len(c) == 0 or len(c2) == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    cost = np.linalg.norm(c[:, None, :] - c2[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(cost)
    return rows.astype(np.int64), cols.astype(np.int64)


def difference_centroids(before: Centroids, after: Centroids, D: np.ndarray,
                         prior_mean: np.ndarray | None = None) -> tuple[np.ndarray, str]:
    """Estimate the added record x from releases of D and D ∪ {x}; and which case of
    :data:`CASES` the estimate came from (see the module docstring).

    ``prior_mean``: the guess when ``after`` has no centre (required then).
    """
    c, c2 = before.centers, after.centers
    if c.shape[1:] != c2.shape[1:]:
        raise InvalidInputError(f"centres of {c.shape[1:]} and {c2.shape[1:]} dimensions cannot be compared")
    if len(c2) == 0:
        if prior_mean is None:
            raise InvalidInputError("a release of no centre says nothing about the record: give a prior mean")
        return np.asarray(prior_mean, dtype=np.float64).copy(), "no centre"
    rows, cols = match_centres(c, c2)
    if len(c2) > len(c):  # a centre of its own: the unmatched one farthest from every old centre
        new = np.setdiff1d(np.arange(len(c2)), cols)
        far = (np.linalg.norm(c2[new][:, None, :] - c[None, :, :], axis=2).min(axis=1) if len(c)
               else np.zeros(len(new)))
        return c2[new[int(np.argmax(far))]].copy(), "new centre"
    shift = np.linalg.norm(c2[cols] - c[rows], axis=1)
    j = int(np.argmax(shift))
    cj, cj2 = c[rows[j]], c2[cols[j]]
    if before.counts is not None:
        n_j = max(float(before.counts[rows[j]]), 1.0)
    else:
        n_j = float(np.sum(before.predict(D) == rows[j]))
    return cj2 + n_j * (cj2 - cj), ("same size" if len(c2) == len(c) else "fewer centres")


def reconstruct_centroids(mechanism: Mechanism, members: np.ndarray, targets: np.ndarray, prior: np.ndarray,
                          radius: float, rng: np.random.Generator, *,
                          progress: Progress | None = None) -> ReconstructionResult:
    """Differencing attack for each record in ``targets`` added to ``members``.

    The result's ``matching`` counts the targets per case of :data:`CASES` and the releases'
    numbers of centres (before, and the range after).
    """
    before = check_release(release_once(mechanism, members, rng), members)
    if not isinstance(before, Centroids):
        raise InvalidInputError("differencing needs a centroids release")
    prior_mean = np.asarray(prior, dtype=np.float64).mean(axis=0)
    X_hat = np.empty_like(targets)
    cases: list[str] = []
    sizes = np.empty(len(targets), dtype=np.int64)
    for i, x in enumerate(targets):  # one mechanism run per target record
        D1 = np.vstack([members, x[None, :]])
        after = check_release(release_once(mechanism, D1, rng), D1)
        if not isinstance(after, Centroids):
            raise InvalidInputError(f"differencing needs centroids releases; one was {after.kind}")
        X_hat[i], case = difference_centroids(before, after, members, prior_mean)
        cases.append(case)
        sizes[i] = len(after.centers)
        if progress is not None:
            progress("differencing", i + 1, len(targets))
    return scored("differencing", targets, X_hat, prior, radius, rng, matching=_matching(before, sizes, cases))


def _matching(before: Centroids, sizes: np.ndarray, cases: list[str]) -> dict[str, Any]:
    """How the centres were matched: targets per case, and the numbers of centres released."""
    counts = {case: sum(c == case for c in cases) for case in CASES}
    return {"targets_per_case": counts, "centres_before": int(len(before.centers)),
            "centres_after_min": int(sizes.min()) if sizes.size else None,
            "centres_after_max": int(sizes.max()) if sizes.size else None,
            "size_changed": int(len(cases) - counts["same size"]),
            "method": "Hungarian assignment on the common size of the two centre sets"}
