"""Neighbouring datasets (D, D′) for empirical ε estimation — the *generator*
of the generator → mechanism → tester pipeline.

A DP claim quantifies over every neighbouring pair, so the auditor may pick
the pairs where the mechanism is most likely to leak.  Which pairs are
neighbours depends on the claim's relation (:class:`~mechanisms.base.PrivacyClaim`):

``add-remove``
    D′ = D ∪ {canary}; the canary is always the *last* row of D′, so records
    shared by D and D′ keep their indices.  Candidates: a canary at the box
    corner farthest from the data (largest influence on sums and centres), a
    far outlier beyond the data (only without a public box), a canary alone
    in the emptiest part of the box (its own cluster), one on the densest
    record (pushes a near-threshold cell or neighbourhood over MinPts), and
    the most isolated record removed.
``replace``
    One record moved across the domain: the most isolated and the most
    central record each moved to the box corner farthest from it.
``metric`` (d_x-privacy)
    One record moved by exactly ``distance`` (default 1) along ±e₁ and along
    ±(1, …, 1)/√d; the certified bound is divided by the distance so it is per
    unit distance, comparable with the claimed ε.

Label and span releases also get the DP-DBSCAN paper's lower-bound
construction (seed 002, Lemma 3.1): n records at one location — one tight
cluster — and the neighbour in which one of them is moved far away, to the
box corner.  Every accurate label release gives that record the cluster's
label on D and a different one on D′, which no ε-DP mechanism can do with
constant probability.  The lemma is a *replace* pair; under an add-remove
claim a replace is two add-remove steps, so (group privacy, δ = 0) a bound ε_r
certified on it gives ε ≥ ε_r/2 — :attr:`NeighbourPair.scale` = 2.

Pairs are candidates: the estimator compares them on a selection sample and
certifies only the chosen one on fresh samples.  The box used to place
canaries is the public ``bounds`` when given, else the data's range widened
by 10 % on each side — a choice of *test input*, not a parameter of the
mechanism, so it leaks nothing: the DP promise covers every pair.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mechanisms.base import InvalidInputError, check_bounds, check_data

__all__ = ["NeighbourPair", "candidate_pairs", "lemma_pair", "pair_box"]


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """One neighbouring pair (D, D′) and what distinguishes them.

    ``index`` is the row of the changed record: for replace/metric pairs the
    same row in D and D′; for add-remove pairs the canary's row in D′ (= len(D)).
    ``old``/``new`` are that record in D and in D′ (``old`` is None for
    add-remove).  ``fallback_for`` names an earlier, cheaper pair: this one is
    skipped when that one's selected event already separates D from D′
    perfectly on the selection sample.
    ``scale`` converts the ε certified on this pair into the
    claim's unit: the distance for metric pairs, 2 for a replace pair audited
    against an add-remove claim, else 1.
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

    @property
    def n_shared(self) -> int:
        """Rows that are the same record in D and D′ (indices 0..n_shared−1, minus ``index``)."""
        return int(min(len(self.D), len(self.D_prime)))

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
                "distance": self.distance, "scale": self.scale, "description": self.description}


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


def _add(name: str, X: np.ndarray, canary: np.ndarray, description: str) -> NeighbourPair:
    return NeighbourPair(name, X, np.vstack([X, canary[None, :]]), "add-remove", len(X), canary.astype(float),
                         None, 1.0, 1.0, description)


def _replace(name: str, X: np.ndarray, i: int, new: np.ndarray, relation: str, description: str,
             distance: float = 1.0, scale: float = 1.0) -> NeighbourPair:
    Xp = X.copy()
    Xp[i] = new
    return NeighbourPair(name, X, Xp, relation, int(i), np.asarray(new, float), X[i].copy(), distance, scale,
                         description)


def lemma_pair(n: int, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator, *, scale: float = 1.0,
               fallback_for: str | None = None) -> NeighbourPair:
    """DP-DBSCAN Lemma 3.1 (seed 002): n records in one tight spot; D′ moves one to a far corner.

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
                    scale=scale)
    return dataclasses.replace(pair, fallback_for=fallback_for)


def candidate_pairs(X: object, relation: str, *, kind: str | None = None, bounds: object | None = None,
                    distance: float = 1.0, delta: float = 0.0, rng: np.random.Generator | None = None,
                    max_pairs: int | None = None) -> list[NeighbourPair]:
    """Candidate neighbouring pairs for a claim relation and release kind.

    Parameters
    ----------
    X
        The dataset the audit starts from (n × d).
    relation
        ``add-remove``, ``replace`` or ``metric``.
    kind
        The release kind; ``labels`` and ``spans`` add the Lemma 3.1 pairs.
    bounds
        Public box (lo, hi) to place canaries in; the data range ± 10 % when absent.
    distance
        For ``metric``: how far the record moves.
    delta
        The claim's δ: the halved replace pair is offered to add-remove
        claims only when δ = 0 (group privacy for δ > 0 also inflates δ).
    """
    X = check_data(X, min_rows=2)
    rng = rng if rng is not None else np.random.default_rng(0)
    n, d = X.shape
    lo, hi, public = pair_box(X, bounds)
    isolated = int(np.argmax(_nn_distances(X, 1)))
    central = int(np.argmin(_nn_distances(X, 5)))
    pairs: list[NeighbourPair] = []
    if relation == "add-remove":
        mean = X.mean(axis=0)
        pairs.append(_add("canary-corner", X, _farthest_corner(mean, lo, hi),
                          "canary added at the box corner farthest from the data"))
        pairs.append(_add("canary-isolated", X, _emptiest_point(X, lo, hi, rng),
                          "canary added alone in the emptiest part of the box (its own cluster)"))
        if not public:
            far = mean + 10.0 * (_farthest_corner(mean, lo, hi) - mean)
            pairs.append(_add("canary-outlier", X, far, "canary added as a far outlier (10× the data's extent)"))
        pairs.append(_add("canary-dense", X, X[central].copy(),
                          "canary added on the record with the densest neighbourhood"))
        rest = np.delete(X, isolated, axis=0)
        pairs.append(_add("remove-isolated", rest, X[isolated].copy(),
                          "the most isolated record removed"))
    elif relation == "replace":
        for label, i in (("isolated", isolated), ("central", central)):
            pairs.append(_replace(f"replace-{label}", X, i, _farthest_corner(X[i], lo, hi), "replace",
                                  f"the most {label} record moved to the farthest box corner"))
    elif relation == "metric":
        if not (np.isfinite(distance) and distance > 0):
            raise InvalidInputError(f"distance must be a positive number, got {distance!r}")
        dirs = [("+e1", np.eye(d)[0]), ("-e1", -np.eye(d)[0])]
        if d > 1:
            diag = np.ones(d) / np.sqrt(d)
            dirs += [("+diag", diag), ("-diag", -diag)]
        for label, i in (("isolated", isolated), ("central", central)):
            for dname, u in dirs:
                pairs.append(_replace(f"move-{label}{dname}", X, i, X[i] + distance * u, "metric",
                                      f"the most {label} record moved by {distance:g} along {dname}",
                                      distance=float(distance), scale=float(distance)))
    else:
        raise InvalidInputError(f"neighbours must be add-remove, replace or metric; got {relation!r}")
    if kind in ("labels", "spans") and relation in ("add-remove", "replace"):
        # The lemma pairs go first: for label releases they are the strongest known construction.
        scale = 2.0 if relation == "add-remove" else 1.0
        if relation == "replace" or delta == 0.0:
            # The large one (enough records to pass density thresholds such as DP-DBSCAN's
            # MinPts + τ) is costlier; it is skipped when the small one already separates perfectly.
            lemma = [lemma_pair(n, lo, hi, rng, scale=scale)]
            if n < 500:
                lemma.append(lemma_pair(500, lo, hi, rng, scale=scale, fallback_for=lemma[0].name))
            pairs = lemma + pairs
    if max_pairs is not None:
        pairs = pairs[:max(1, int(max_pairs))]
    return pairs
