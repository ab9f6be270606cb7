"""Neighbouring datasets (D, D′) for empirical ε estimation — the *generator*
of the generator → mechanism → tester pipeline.

A DP claim quantifies over every neighbouring pair, so the auditor may pick
the pairs where the mechanism is most likely to leak — including datasets
that have nothing to do with the user's records (a leak on an empty or tiny
dataset is a leak).  Which pairs are neighbours depends on the claim's
relation (:class:`~mechanisms.base.PrivacyClaim`):

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
selection samples (:mod:`attacks.epsilon.search`) and certifies only the chosen
one on fresh samples.  The box used to place canaries is the public
``bounds`` when given, else the data's range widened by 10 % on each side — a
choice of *test input*, not a parameter of the mechanism, so it leaks
nothing: the DP promise covers every pair.  A user's own pair is checked by
:func:`pair_from_datasets`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mechanisms.base import NEIGHBOURS, InvalidInputError, check_bounds, check_data

__all__ = ["NeighbourPair", "candidate_pairs", "lemma_pair", "pair_box", "pair_from_datasets"]

MAX_CORNERS = 16          # box corners tried (all of them when 2^d ≤ this, else a seeded sample)
MAX_AXIS_EXTREMES = 16    # axis-extreme placements tried
SMALL_SIZES = (0, 1, 2, 5, 9)  # records in the small datasets (0–10)
DUPLICATES = (2, 4, 8)    # copies of one record


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """One neighbouring pair (D, D′) and what distinguishes them.

    ``index`` is the row of the changed record: for replace/metric pairs the
    same row in D and D′; for add-remove pairs the extra record's row in the
    larger dataset (the canary's row len(D) of D′ for the pairs built here).
    ``old``/``new`` are that record in D and in D′ (``old`` is None for
    add-remove, ``new`` is then the extra record).  ``fallback_for`` names an
    earlier, cheaper pair: this one is skipped when that one's selected event
    already separates D from D′ perfectly on the selection sample.
    ``scale`` converts the ε certified on this pair into the claim's unit:
    the distance for metric pairs, 2 for a replace pair audited against an
    add-remove claim, else 1.
    """

    name: str
    D: np.ndarray
    D_prime: np.ndarray
    relation: str
    index: int
    new: np.ndarray
    old: np.ndarray | None = None
    distance: float = 1.0
    scale: float = 1.0
    description: str = ""
    fallback_for: str | None = None  # try only if the pair of this name found nothing on the selection sample
    family: str = "construction"     # construction | degenerate | outlier | small | duplicates | corner | axis |
    #                                  lemma | search | user; "outlier": a record beyond the public box, whose
    #                                  one-sided refusal is a domain check, not output (pair_search.refusal)

    @property
    def n_shared(self) -> int:
        """Records that are the same in D and D′ (for replace/metric: every row but ``index``)."""
        return int(min(len(self.D), len(self.D_prime)))

    @property
    def shared_records(self) -> np.ndarray:
        """The records D and D′ share, in a fixed order (the smaller dataset of an add-remove pair;
        D for replace/metric, whose row ``index`` is the changed record)."""
        if self.relation == "add-remove":
            return self.D if len(self.D) <= len(self.D_prime) else self.D_prime
        return self.D

    @property
    def focus(self) -> np.ndarray:
        """Where the change happens: the canary, or the changed record's new place."""
        return self.new

    @property
    def direction(self) -> np.ndarray | None:
        """Unit vector from the old to the new record (replace/metric)."""
        if self.old is None:
            return None
        diff = self.new - self.old
        norm = float(np.linalg.norm(diff))
        return diff / norm if norm > 0 else None

    def summary(self) -> dict[str, object]:
        """What reports show: never record values (the canary is synthetic, but kept out too)."""
        return {"name": self.name, "relation": self.relation, "changed_index": self.index,
                "records_D": int(len(self.D)), "records_D_prime": int(len(self.D_prime)),
                "distance": self.distance, "scale": self.scale, "description": self.description,
                "family": self.family}


def pair_box(X: np.ndarray, bounds: object | None) -> tuple[np.ndarray, np.ndarray, bool]:
    """The box canaries are placed in: public ``bounds`` or the data range ± 10 %.

    Returns (lo, hi, public).
    """
    d = X.shape[1]
    if bounds is not None:
        lo, hi = check_bounds(bounds, d)
        return lo, hi, True
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return lo - 0.1 * span, hi + 0.1 * span, False


def _nn_distances(X: np.ndarray, k: int) -> np.ndarray:
    """Distance from each record to its k-th nearest other record."""
    from scipy.spatial import cKDTree

    k = max(1, min(k, len(X) - 1))
    dist, _ = cKDTree(X).query(X, k=k + 1)
    return dist[:, k]


def _farthest_corner(point: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The box corner farthest from ``point``."""
    return np.where(np.abs(point - lo) > np.abs(hi - point), lo, hi).astype(float)


def _corners(lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every box corner when there are at most :data:`MAX_CORNERS`, else a seeded sample of them."""
    d = len(lo)
    if 2 ** d <= MAX_CORNERS:
        bits = ((np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
    else:
        bits = rng.random((MAX_CORNERS, d)) < 0.5
    return np.where(bits, hi, lo).astype(float)


def _axis_extremes(centre: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """``centre`` pushed to the low and the high end of each axis (at most :data:`MAX_AXIS_EXTREMES`)."""
    out = []
    for j in range(len(lo)):
        for label, value in (("lo", lo[j]), ("hi", hi[j])):
            point = centre.astype(float).copy()
            point[j] = value
            out.append((f"{label}{j}", point))
    return out[:MAX_AXIS_EXTREMES]


def _emptiest_point(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A point of the box far from every record (corners, centre and 512 random points tried)."""
    from scipy.spatial import cKDTree

    d = X.shape[1]
    cands = [rng.uniform(lo, hi, size=(512, d)), ((lo + hi) / 2.0)[None, :]]
    if d <= 10:
        bits = ((np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
        cands.append(np.where(bits, hi, lo))
    C = np.vstack(cands)
    dist, _ = cKDTree(X).query(C, k=1)
    return C[int(np.argmax(dist))]


def _add(name: str, X: np.ndarray, canary: np.ndarray, description: str, family: str = "construction"
         ) -> NeighbourPair:
    return NeighbourPair(name, X, np.vstack([X, canary[None, :]]), "add-remove", len(X), canary.astype(float),
                         None, 1.0, 1.0, description, family=family)


def _replace(name: str, X: np.ndarray, i: int, new: np.ndarray, relation: str, description: str,
             distance: float = 1.0, scale: float = 1.0, family: str = "construction") -> NeighbourPair:
    Xp = X.copy()
    Xp[i] = new
    return NeighbourPair(name, X, Xp, relation, int(i), np.asarray(new, float), X[i].copy(), distance, scale,
                         description, family=family)


def lemma_pair(n: int, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator, *, scale: float = 1.0,
               fallback_for: str | None = None) -> NeighbourPair:
    """DP-DBSCAN Lemma 3.1 (the DP-DBSCAN paper, "Approximate DBSCAN under Differential Privacy"): n records in one tight spot; D′ moves one to a far corner.

    The records sit within 0.5 % of the box width of the box centre (a public,
    data-independent placement; the tiny spread avoids degenerate zero-range
    inputs in mechanisms that rescale).  Record 0 moves to the corner ``hi``.
    """
    centre = (lo + hi) / 2.0
    spread = 0.005 * (hi - lo)
    D = centre + rng.uniform(-spread, spread, size=(n, len(lo)))
    pair = _replace(f"lemma3.1-n{n}", D, 0, hi.astype(float), "replace",
                    f"DP-DBSCAN Lemma 3.1: {n} records in one tight cluster at the box centre; "
                    "one record moved to a far box corner" + (" (replace pair, bound halved for add-remove)"
                                                             if scale == 2.0 else ""),
                    scale=scale, family="lemma")
    return dataclasses.replace(pair, fallback_for=fallback_for)


# --------------------------------------------------------------------------- #
# Constructions per relation
# --------------------------------------------------------------------------- #
def _add_remove_pairs(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, public: bool, isolated: int, central: int,
                      by_centrality: np.ndarray, rng: np.random.Generator) -> list[NeighbourPair]:
    mean = X.mean(axis=0)
    far = _farthest_corner(mean, lo, hi)
    pairs = [_add("canary-corner", X, far, "canary added at the box corner farthest from the data"),
             _add("canary-isolated", X, _emptiest_point(X, lo, hi, rng),
                  "canary added alone in the emptiest part of the box (its own cluster)")]
    if not public:
        pairs.append(_add("canary-outlier", X, mean + 10.0 * (far - mean),
                          "canary added as a far outlier (10× the data's extent)"))
    pairs.append(_add("canary-dense", X, X[central].copy(), "canary added on the record with the densest neighbourhood"))
    pairs.append(_add("remove-isolated", np.delete(X, isolated, axis=0), X[isolated].copy(),
                      "the most isolated record removed"))
    for m in SMALL_SIZES:
        D = X[by_centrality[:m]]
        corner = _farthest_corner(D.mean(axis=0) if m else (lo + hi) / 2.0, lo, hi)
        pairs.append(_add(f"small{m}-canary-corner", D, corner,
                          f"a dataset of {m} record(s) (the most central ones) and a canary at the far box corner",
                          family="small"))
    for k in DUPLICATES:
        D = np.vstack([X, np.repeat(X[isolated][None, :], k - 1, axis=0)])
        pairs.append(_add(f"dup{k}-isolated", D, X[isolated].copy(),
                          f"the most isolated record present {k - 1} extra time(s), plus one more copy",
                          family="duplicates"))
    for c in _corners(lo, hi, rng):
        if np.array_equal(c, far):
            continue
        pairs.append(_add("canary-at-" + _corner_name(c, lo), X, c, "canary added at a box corner", family="corner"))
    for label, point in _axis_extremes((lo + hi) / 2.0, lo, hi):
        pairs.append(_add(f"canary-axis-{label}", X, point, "canary added at an axis extreme of the box",
                          family="axis"))
    return pairs


def _replace_pairs(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, isolated: int, central: int,
                   by_centrality: np.ndarray, rng: np.random.Generator) -> list[NeighbourPair]:
    pairs = [_replace(f"replace-{label}", X, i, _farthest_corner(X[i], lo, hi), "replace",
                      f"the most {label} record moved to the farthest box corner")
             for label, i in (("isolated", isolated), ("central", central))]
    for m in SMALL_SIZES[1:]:
        D = X[by_centrality[:m]]
        pairs.append(_replace(f"small{m}-to-corner", D, 0, _farthest_corner(D[0], lo, hi), "replace",
                              f"a dataset of {m} record(s); one moved to the far box corner", family="small"))
    pairs.append(_replace("corner-to-opposite", lo[None, :].astype(float), 0, hi.astype(float), "replace",
                          "one record at a box corner moved to the opposite corner", family="small"))
    for k in DUPLICATES:
        D = np.vstack([X, np.repeat(X[isolated][None, :], k, axis=0)])
        pairs.append(_replace(f"dup{k}-to-corner", D, len(D) - 1, _farthest_corner(X[isolated], lo, hi), "replace",
                              f"the most isolated record present {k} extra time(s); one copy moved to the far corner",
                              family="duplicates"))
    seen = {tuple(p.new) for p in pairs}
    for c in _corners(lo, hi, rng):
        if tuple(c) not in seen:
            pairs.append(_replace("isolated-to-" + _corner_name(c, lo), X, isolated, c, "replace",
                                  "the most isolated record moved to a box corner", family="corner"))
    for label, point in _axis_extremes(X[isolated], lo, hi):
        pairs.append(_replace(f"isolated-axis-{label}", X, isolated, point, "replace",
                              "the most isolated record moved to an axis extreme", family="axis"))
    return pairs


def _metric_pairs(X: np.ndarray, distance: float, isolated: int, central: int, by_centrality: np.ndarray
                  ) -> list[NeighbourPair]:
    d = X.shape[1]
    dirs = [("+e1", np.eye(d)[0]), ("-e1", -np.eye(d)[0])]
    if d > 1:
        diag = np.ones(d) / np.sqrt(d)
        dirs += [("+diag", diag), ("-diag", -diag)]
    pairs = []
    for label, i in (("isolated", isolated), ("central", central)):
        for dname, u in dirs:
            pairs.append(_replace(f"move-{label}{dname}", X, i, X[i] + distance * u, "metric",
                                  f"the most {label} record moved by {distance:g} along {dname}",
                                  distance=float(distance), scale=float(distance)))
    for m in SMALL_SIZES[1:]:
        D = X[by_centrality[:m]]
        pairs.append(_replace(f"small{m}-move+e1", D, 0, D[0] + distance * np.eye(d)[0], "metric",
                              f"a dataset of {m} record(s); one moved by {distance:g} along +e1",
                              distance=float(distance), scale=float(distance), family="small"))
    for k in DUPLICATES:
        D = np.vstack([X, np.repeat(X[isolated][None, :], k, axis=0)])
        pairs.append(_replace(f"dup{k}-move+e1", D, len(D) - 1, X[isolated] + distance * np.eye(d)[0], "metric",
                              f"the most isolated record present {k} extra time(s); one copy moved by {distance:g}",
                              distance=float(distance), scale=float(distance), family="duplicates"))
    for j in range(1, min(d, MAX_AXIS_EXTREMES // 2)):
        for sign in (1.0, -1.0):
            pairs.append(_replace(f"move-isolated{'+' if sign > 0 else '-'}e{j + 1}", X, isolated,
                                  X[isolated] + sign * distance * np.eye(d)[j], "metric",
                                  f"the most isolated record moved by {distance:g} along an axis",
                                  distance=float(distance), scale=float(distance), family="axis"))
    return pairs


def _corner_name(corner: np.ndarray, lo: np.ndarray) -> str:
    return "corner-" + "".join("0" if c == l else "1" for c, l in zip(corner, lo))


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
    isolated = int(np.argmax(_nn_distances(X, 1)))
    central = int(np.argmin(_nn_distances(X, 5)))
    by_centrality = np.argsort(np.linalg.norm(X - X.mean(axis=0), axis=1), kind="stable")
    if relation == "add-remove":
        pairs = _add_remove_pairs(X, lo, hi, public, isolated, central, by_centrality, rng)
    elif relation == "replace":
        pairs = _replace_pairs(X, lo, hi, isolated, central, by_centrality, rng)
    elif relation == "metric":
        if not (np.isfinite(distance) and distance > 0):
            raise InvalidInputError(f"distance must be a positive number, got {distance!r}")
        pairs = _metric_pairs(X, float(distance), isolated, central, by_centrality)
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
