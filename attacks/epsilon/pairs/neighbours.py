"""Neighbouring datasets (D, D′) for empirical ε estimation — the *generator*
of the generator → mechanism → tester pipeline.

A DP claim quantifies over every neighbouring pair, so the auditor may pick
the pairs where the mechanism is most likely to leak — including datasets
that have nothing to do with the user's records (a leak on an empty or tiny
dataset is a leak).  Which pairs are neighbours depends on the claim's
relation (:class:`~dpaudit.mechanisms.base.PrivacyClaim`):

``add-remove``
    D′ = D ∪ {canary}; the canary is the *last* row of D′ in every pair built
    here, so records shared by D and D′ keep their indices.  From the user's
    data X: a canary at the box corner farthest from the data (largest
    influence on sums and centres), a far outlier beyond the data (only
    without a public box), a canary alone in the emptiest part of the box (its
    own cluster), one on the densest record (pushes a near-threshold cell or
    neighbourhood over MinPts), the most isolated record removed.  Then
    datasets of 0–10 records (the central ones of X) with a canary at the far
    corner, k duplicates of the isolated record plus one more, a canary at
    every box corner (sampled when 2^d is large) and at every axis extreme.
``replace``
    One record moved across the domain: the most isolated and the most
    central record each moved to the box corner farthest from it; the
    isolated record moved to every corner and axis extreme; 1–10-record
    datasets with one record moved to the far corner (one record at a corner
    moved to the opposite corner: the largest change a bounded sum sees); k
    duplicates with one copy moved.
``metric`` (d_x-privacy)
    One record moved by exactly ``distance`` (default 1) along ±e₁ and along
    ±(1, …, 1)/√d, then along every ±e_j; the same moves in 1–10-record
    datasets and for one of k duplicates.  The certified bound is divided by
    the distance so it is per unit distance, comparable with the claimed ε.

Label and span releases also get the DP-DBSCAN paper's lower-bound
construction (the DP-DBSCAN paper, Lemma 3.1): n records at one location — one tight
cluster — and the neighbour in which one of them is moved far away, to the
box corner.  Every accurate label release gives that record the cluster's
label on D and a different one on D′, which no ε-DP mechanism can do with
constant probability.  The lemma is a *replace* pair; under an add-remove
claim a replace is two add-remove steps, so (group privacy, δ = 0) a bound ε_r
certified on it gives ε ≥ ε_r/2 — :attr:`NeighbourPair.scale` = 2.

Pairs are candidates, in priority order: the estimator compares them on
selection samples (:mod:`dpaudit.attacks.epsilon.search.search`) and certifies only the chosen
one on fresh samples.  The box used to place canaries is the public
``bounds`` when given, else the data's range widened by 10 % on each side — a
choice of *test input*, not a parameter of the mechanism, so it leaks
nothing: the DP promise covers every pair.  A user's own pair is checked by
:func:`pair_from_datasets`.
"""

from __future__ import annotations

import numpy as np

from dpaudit.mechanisms.base import NEIGHBOURS, InvalidInputError, check_data

from .pair import NeighbourPair, pair_box
from .pair_families import MAX_CORNERS, add_remove_pairs, lemma_pair, metric_pairs, nn_distances, replace_pairs

__all__ = ["MAX_CORNERS", "NeighbourPair", "candidate_pairs", "lemma_pair", "pair_box", "pair_from_datasets"]


def candidate_pairs(X: object, relation: str, *, kind: str | None = None, bounds: object | None = None,
                    distance: float = 1.0, delta: float = 0.0, rng: np.random.Generator | None = None,
                    max_pairs: int | None = None) -> list[NeighbourPair]:
    """Candidate neighbouring pairs for a claim relation and release kind, in priority order.

    Parameters
    ----------
    X
        The dataset the audit starts from (n × d).
    relation
        ``add-remove``, ``replace`` or ``metric``.
    kind
        The release kind; ``labels`` and ``spans`` add the Lemma 3.1 pairs (first).
    bounds
        Public box (lo, hi) to place canaries in; the data range ± 10 % when absent.
    distance
        For ``metric``: how far the record moves.
    delta
        The claim's δ: the halved replace pair is offered to add-remove
        claims only when δ = 0 (group privacy for δ > 0 also inflates δ).
    max_pairs
        Keep only the first ``max_pairs`` candidates.
    """
    X = check_data(X, min_rows=2)
    rng = rng if rng is not None else np.random.default_rng(0)
    lo, hi, public = pair_box(X, bounds)
    isolated = int(np.argmax(nn_distances(X, 1)))
    central = int(np.argmin(nn_distances(X, 5)))
    by_centrality = np.argsort(np.linalg.norm(X - X.mean(axis=0), axis=1), kind="stable")
    if relation == "add-remove":
        pairs = add_remove_pairs(X, lo, hi, public, isolated, central, by_centrality, rng)
    elif relation == "replace":
        pairs = replace_pairs(X, lo, hi, isolated, central, by_centrality, rng)
    elif relation == "metric":
        if not (np.isfinite(distance) and distance > 0):
            raise InvalidInputError(f"distance must be a positive number, got {distance!r}")
        pairs = metric_pairs(X, float(distance), isolated, central, by_centrality)
    else:
        raise InvalidInputError(f"neighbours must be add-remove, replace or metric; got {relation!r}")
    if kind in ("labels", "spans") and relation in ("add-remove", "replace"):
        # The lemma pairs go first: for label releases they are the strongest known construction.
        scale = 2.0 if relation == "add-remove" else 1.0
        if relation == "replace" or delta == 0.0:
            # The large one (enough records to pass density thresholds such as DP-DBSCAN's
            # MinPts + τ) is costlier; it is skipped when the small one already separates perfectly.
            n = len(X)
            lemma = [lemma_pair(n, lo, hi, rng, scale=scale)]
            if n < 500:
                lemma.append(lemma_pair(500, lo, hi, rng, scale=scale, fallback_for=lemma[0].name))
            pairs = lemma + pairs
    if max_pairs is not None:
        pairs = pairs[:max(1, int(max_pairs))]
    return pairs


# --------------------------------------------------------------------------- #
# A user's own pair
# --------------------------------------------------------------------------- #
def _multiset_extra(small: np.ndarray, large: np.ndarray) -> int | None:
    """Row of ``large`` that is the one extra record when ``small`` ⊂ ``large`` as multisets, else None."""
    both = np.vstack([small, large]) + 0.0
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    k = int(inverse.max()) + 1
    diff = np.bincount(inverse[len(small):], minlength=k) - np.bincount(inverse[:len(small)], minlength=k)
    if np.any(diff < 0) or diff.sum() != 1:
        return None
    extra = int(np.flatnonzero(diff)[0])
    return int(np.flatnonzero(inverse[len(small):] == extra)[-1])


def pair_from_datasets(D: object, D2: object, relation: str, *, name: str = "user-pair",
                       description: str = "the pair given by the user") -> NeighbourPair:
    """Check that (D, D2) is a neighbouring pair under ``relation`` and return it as a candidate.

    ``add-remove``: one dataset is the other plus exactly one row, as
    multisets (either way round; the order of the other rows may differ).
    ``replace``/``metric``: the same number of rows, listed in the same
    order, exactly one of which differs; a metric pair also records the
    distance ‖x − x′‖₂ the changed row moved (the certified bound is reported
    per unit of it).  Anything else raises :class:`InvalidInputError` saying why.
    """
    if relation not in NEIGHBOURS:
        raise InvalidInputError(f"neighbours must be one of {', '.join(NEIGHBOURS)}; got {relation!r}")
    A = check_data(D, min_rows=0, name="D")
    B = check_data(D2, min_rows=0, name="D2")
    if A.shape[1] != B.shape[1]:
        raise InvalidInputError(f"D has {A.shape[1]} features and D2 has {B.shape[1]}; a pair needs the same columns")
    nA, nB = len(A), len(B)
    if relation == "add-remove":
        if abs(nA - nB) != 1:
            raise InvalidInputError(f"D has {nA} records and D2 has {nB}: add-remove neighbours differ by exactly "
                                    "one record")
        small, large = (A, B) if nA < nB else (B, A)
        index = _multiset_extra(small, large)
        if index is None:
            raise InvalidInputError("the larger dataset is not the smaller one plus one record: more than one "
                                    "record differs")
        return NeighbourPair(name, A, B, "add-remove", index, large[index].copy(), None, 1.0, 1.0, description,
                             family="user")
    if nA != nB:
        raise InvalidInputError(f"D has {nA} records and D2 has {nB}: {relation} neighbours have the same number "
                                "of records")
    changed = np.flatnonzero(np.any(A != B, axis=1))
    if changed.size == 0:
        raise InvalidInputError("D and D2 are identical: a neighbouring pair must differ in one record")
    if changed.size > 1:
        hint = ""
        if nA and _multiset_extra(np.delete(A, changed[0], axis=0), B) is not None:
            hint = " (as sets they differ in one record: list the other records in the same order in both files)"
        raise InvalidInputError(f"D and D2 differ in {changed.size} rows; {relation} neighbours differ in exactly "
                                f"one{hint}")
    i = int(changed[0])
    dist = float(np.linalg.norm(B[i] - A[i]))
    scale = dist if relation == "metric" else 1.0
    text = description + (f" (record {i} moved by {dist:.4g})" if relation == "metric" else "")
    return NeighbourPair(name, A, B, relation, i, B[i].copy(), A[i].copy(), dist if relation == "metric" else 1.0,
                         scale, text, family="user")
