"""Worst-case neighbouring datasets per release kind.

The generic pairs of :mod:`dpaudit.attacks.epsilon.pairs.neighbours` move one record among the
audited data, whose effect on a clustering release is far below the noise.
A DP claim quantifies over *every* neighbouring pair, so the auditor may
build datasets where one record matters most.  Every function here returns
:class:`~dpaudit.attacks.epsilon.pairs.neighbours.NeighbourPair` s valid under the stated relation
(add-remove: D′ = D plus one record, appended last; replace: one row differs),
placed in the mechanism's *public* box only — never derived from audited
records.  Pairs are candidates like any other: the estimator compares them on
its selection sample and certifies one on fresh samples, so offering more of
them costs no confidence.

* **Grid / histogram releases** (DP-DBSCAN spans and labels):
  :func:`core_threshold_pairs` — N records in one interior cell whose κ
  neighbours are empty, N set so the cell's noisy neighbourhood sum sits at
  (or a little below) the core threshold MinPts + τ; the canary joins that
  cell, raising the κ sums around it by one and flipping core decisions.
* **Centroid releases** (DP-KCCM, DP-FCM, diffprivlib KMeans):
  :func:`lone_corner_pair` (k − 1 tight groups near one corner and the canary
  alone at the opposite corner, owning its cluster), :func:`tiny_pair` (the
  fewest records the mechanism accepts, at one spot, and the canary at the far
  corner — it moves its centre by the full sensitivity),
  :func:`empty_cluster_pair` (every record at one corner so that k − 1
  clusters are empty — diffprivlib draws no noise for an empty cluster — and
  the canary at the far corner filling one).
* **Degenerate datasets** (centroid, vector and label releases, built-in or a
  plain function that exposes nothing): :func:`degenerate_pairs` — every
  record at one point (a corner, the centre), two points, sizes around k —
  with a canary at the far corner and at the opposite side.  The box is the
  public one (``--bounds``, or the mechanism's ``bounds``) and k is read off a
  probe release when the code does not state it (:func:`release_k`).
* **Point releases**: :func:`dpaudit.attacks.epsilon.pairs.neighbours.candidate_pairs` is already
  tight for nD-Laplace and is kept.

:func:`worst_case_pairs` picks the constructions for a mechanism.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import signal

from dpaudit.mechanisms.base import InvalidInputError, check_bounds, check_data

from ...bounds import clopper_pearson
from .neighbours import NeighbourPair, candidate_pairs

__all__ = ["construction_pairs", "core_threshold_pairs", "degenerate_pairs", "degenerate_sizes", "distinct",
           "empty_cluster_pair",
           "first_tries", "lone_corner_pair", "neighbour_sum_tail", "release_k", "tiny_pair", "to_replace", "worst_case_pairs"]

_JITTER = 1e-3      # spread of a "tight" group, as a share of the box width (avoids exact ties)
SIDE_SIZES = 2      # degenerate datasets with the canary at the opposite side: the first this many sizes
OUTLIER_SIZES = 2   # ... and with a lone far record beyond the box: the first this many sizes
# How far beyond the box the far record lies, in box widths: far enough to dwarf the noise of code that does not
# clip (its noise is scaled to the box): ten widths moved a [-1, 1]-box DPLloyd's sum by 21 against noise of 15.
OUTLIER_REACH = 1000.0


def _box(bounds: object, d: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = check_bounds(bounds, d)
    return lo.astype(np.float64), hi.astype(np.float64)


def _group(centre: np.ndarray, size: int, width: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return centre + rng.uniform(-_JITTER, _JITTER, size=(size, centre.size)) * width


def _add_pair(name: str, D: np.ndarray, canary: np.ndarray, description: str) -> NeighbourPair:
    D = np.asarray(D, dtype=np.float64)
    canary = np.asarray(canary, dtype=np.float64)
    return NeighbourPair(name, D, np.vstack([D, canary[None, :]]), "add-remove", len(D), canary.copy(), None,
                         1.0, 1.0, description)


def to_replace(pair: NeighbourPair, stand_in: np.ndarray | None = None) -> NeighbourPair:
    """The replace-relation version of an add-remove pair: D gets a stand-in record where D′ has the canary.

    The stand-in defaults to D's first record (so the record moves from the
    densest spot to the canary's place).
    """
    if pair.relation != "add-remove":
        raise InvalidInputError(f"{pair.name} is already a {pair.relation} pair")
    old = np.asarray(pair.D[0] if stand_in is None else stand_in, dtype=np.float64)
    D = np.vstack([pair.D, old[None, :]])
    return NeighbourPair(f"{pair.name}-replace", D, pair.D_prime.copy(), "replace", len(pair.D), pair.new.copy(),
                         old.copy(), 1.0, 1.0, pair.description + " (replace: a record moves there from D's first)",
                         family=pair.family)


# --------------------------------------------------------------------------- #
# Centroid releases
# --------------------------------------------------------------------------- #
def tiny_pair(bounds: object, d: int, *, size: int = 2, at: str = "mid", seed: int = 0) -> NeighbourPair:
    """``size`` records (the fewest a mechanism accepts) at the box midpoint (``at="mid"``) or at
    corner ``lo`` (``at="lo"``); the canary at corner ``hi``.

    A centred sum moves by the canary's full |x − mid| in every coordinate and
    a count by one: the most a record can move a centroid's statistics.
    """
    lo, hi = _box(bounds, d)
    if at not in ("mid", "lo"):
        raise InvalidInputError(f"at must be 'mid' or 'lo', got {at!r}")
    rng = np.random.default_rng(seed)
    D = _group((lo + hi) / 2.0 if at == "mid" else lo + 0.02 * (hi - lo), int(size), hi - lo, rng)
    return _add_pair(f"tiny-{size}-{at}", D, hi, f"{size} records at the box {'midpoint' if at == 'mid' else 'corner'}"
                     "; canary added at the opposite corner (one record moves a centre by the full sensitivity)")


def lone_corner_pair(bounds: object, d: int, k: int, *, group_size: int = 10, seed: int = 0) -> NeighbourPair:
    """k − 1 tight groups spread along the lower half of the diagonal; the canary alone at corner ``hi``.

    With k centroids the canary owns its own cluster on D′; with k = 1 this is
    :func:`tiny_pair` (two records at the midpoint).
    """
    if k <= 1:
        return tiny_pair(bounds, d, seed=seed)
    lo, hi = _box(bounds, d)
    rng = np.random.default_rng(seed)
    spots = [lo + (hi - lo) * (0.05 + 0.45 * j / max(k - 2, 1)) for j in range(k - 1)]
    D = np.vstack([_group(s, group_size, hi - lo, rng) for s in spots])
    groups = f"{k - 1} tight group{'s' if k > 2 else ''} of {group_size}"
    where = "on the lower half of the box diagonal" if k > 2 else "near one box corner"
    return _add_pair(f"lone-corner-k{k}", D, hi, f"{groups} {where}; canary added alone at the opposite corner "
                     "(its own cluster)")


def empty_cluster_pair(bounds: object, d: int, k: int, *, size: int | None = None, seed: int = 0) -> NeighbourPair:
    """Every record at corner ``lo`` (so k − 1 clusters stay empty); the canary at corner ``hi`` fills one.

    Targets implementations that skip the noise of an empty cluster
    (diffprivlib's KMeans): on D′ a cluster that was empty gets a noisy update.
    """
    lo, hi = _box(bounds, d)
    rng = np.random.default_rng(seed)
    size = max(int(k), 2) if size is None else int(size)
    D = _group(lo + 0.02 * (hi - lo), size, hi - lo, rng)
    return _add_pair(f"empty-cluster-k{k}", D, hi, f"{size} records at one corner (k − 1 of {k} clusters "
                     "empty); canary added at the opposite corner")


# --------------------------------------------------------------------------- #
# Grid / histogram releases (DP-DBSCAN)
# --------------------------------------------------------------------------- #
def neighbour_sum_tail(kappa: int, epsilon: float, step: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """(x, P[Z ≥ x]) for Z the sum of κ independent Lap(1/ε) (a noisy neighbourhood sum's noise)."""
    b = 1.0 / float(epsilon)
    half = 40.0 * b + 1.0
    x = np.arange(-half, half + step / 2, step)
    dens = np.exp(-np.abs(x) / b) / (2.0 * b) * step
    total = dens
    for _ in range(int(kappa) - 1):
        total = signal.fftconvolve(total, dens)
    total = np.clip(total, 0.0, None)
    grid = (np.arange(total.size) - (total.size - 1) / 2.0) * step
    tail = np.cumsum(total[::-1])[::-1]
    return grid, np.clip(tail / tail[0], 0.0, 1.0)


def core_threshold_pairs(mechanism: Any, d: int, *, n_cert: int = 10_000, alpha: float = 0.025,
                         candidates: int = 3) -> list[NeighbourPair]:
    """DP-DBSCAN: N records in one interior cell, N near the core threshold; the canary joins the cell.

    The cell's noisy neighbourhood sum is N + Z (Z: κ Laplace noises), its core
    decision N + Z ≥ MinPts + τ; on D′ it is N + 1 + Z.  N is chosen where the
    one decision would certify most with ``n_cert`` samples (the exact law of
    Z, :func:`neighbour_sum_tail`), and ``candidates`` values around it are
    offered.  The κ cells around also see the canary, which only adds evidence.
    The mechanism states its core decision through its protocol
    (``core_threshold(d)``: public grid, offsets, the histogram's ε and
    MinPts + τ); nothing of its internals is imported here.
    """
    grid, offsets, eps_h, threshold = mechanism.core_threshold(d)
    kappa = int(offsets.shape[0])
    if min(grid.shape) < 2 * int(np.abs(offsets).max()) + 1:
        raise InvalidInputError("the grid is too small for a cell with all its neighbours inside")
    x, tail = neighbour_sum_tail(kappa, eps_h)

    def p_at(v: float) -> float:
        return float(np.interp(v, x, tail, left=1.0, right=0.0))

    top = int(math.ceil(threshold))
    scored = []
    for N in range(max(1, top - int(6 * math.sqrt(2 * kappa) / eps_h) - 1), top + 2):
        p, q = p_at(threshold - N - 1), p_at(threshold - N)   # core on D′ vs on D
        if p * n_cert < 5:
            continue
        lo, _ = clopper_pearson(p * n_cert, n_cert, alpha / 2, side="lower")
        _, hi = clopper_pearson(q * n_cert, n_cert, alpha / 2, side="upper")
        scored.append((float(np.log(max(lo, 1e-300) / hi)), N))
    if not scored:
        scored = [(0.0, top)]
    scored.sort(reverse=True)
    centre = np.asarray(grid.shape) // 2
    cell_lo = grid.origin + centre * grid.width
    rng = np.random.default_rng(0)
    pairs = []
    for _, N in sorted(scored[:candidates], key=lambda s: s[1]):
        D = cell_lo + grid.width * (0.5 + rng.uniform(-0.25, 0.25, size=(N, d)))
        canary = cell_lo + 0.5 * grid.width
        pairs.append(_add_pair(f"core-threshold-N{N}", D, canary,
                               f"{N} records in one interior grid cell with its {kappa} neighbours empty "
                               f"(core threshold MinPts + τ = {threshold:.1f}); canary added in that cell"))
    return pairs


# --------------------------------------------------------------------------- #
# Degenerate datasets: what a careful auditor tries first on code that exposes nothing
# --------------------------------------------------------------------------- #
def degenerate_sizes(k: int, n_records: int | None = None) -> list[int]:
    """Dataset sizes around the number of clusters ``k`` — k, 10, k − 1, k + 1, 2k, then every size from 0
    (the empty dataset: the canary alone in D′) to k + 1 — in the order they are tried, then ``n_records`` (the
    audited data's size, when given): code whose noise shrinks with n (a "sensitivity of the mean" of Δ/n)
    leaks most on the largest dataset it is audited at."""
    k = max(1, int(k))
    extra = (int(n_records),) if n_records is not None else ()
    return list(dict.fromkeys(m for m in (k, 10, k - 1, k + 1, 2 * k, *range(0, k + 2), *extra) if m >= 0))


def _flip_first(point: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``point`` with its first coordinate moved to the other end of the box (the opposite side)."""
    out = point.astype(np.float64).copy()
    out[0] = hi[0] if point[0] == lo[0] else lo[0]
    return out


def degenerate_pairs(bounds: object, d: int, k: int = 2, *, sizes: list[int] | None = None,
                     n_records: int | None = None) -> list[NeighbourPair]:
    """Add-remove pairs on degenerate datasets in the public box, each record an exact copy of one point.

    Families (``m`` records, for ``m`` in :func:`degenerate_sizes` of ``k`` and ``n_records``; the
    opposite-side canaries for the first :data:`SIDE_SIZES` sizes only):

    * ``point-lo-m``: every record at corner ``lo``; the canary at the far
      corner ``hi`` (``…-far``) or at the opposite side, ``lo`` with its
      first coordinate moved to ``hi`` (``…-side``).  With fewer distinct points
      than clusters, clusters are left empty (code that skips an empty
      cluster's noise keeps its start centre exactly) and one far record moves
      a sum, a mean or a centre by the whole box.
    * ``point-mid-m``: every record at the box centre; the canary at ``hi``
      (``…-far``) or at ``lo`` (``…-side``).
    * ``two-points-m`` (m ≥ 2): half the records at ``lo``, half at ``hi``; the
      canary at the centre (``…-mid``) or at the mixed corner (``…-side``).

    * ``point-lo-m-outlier`` (the first :data:`OUTLIER_SIZES` sizes): the
      canary :data:`OUTLIER_REACH` box widths beyond the far corner — the lone
      far record a careful auditor tries on code that may not clip.  Family
      ``outlier``: if the code refuses that dataset only, the refusal is a
      domain check (the record is outside the public box), not output.

    Exact copies (no jitter) on purpose: ties, zero spreads and repeated
    records are inputs DP code must handle like any other.  Ordered so the
    strongest candidates for clustering and sums come first (the pair search
    keeps the head of the list when its budget is short).
    """
    lo, hi = _box(bounds, d)
    mid = (lo + hi) / 2.0
    sizes = degenerate_sizes(k, n_records) if sizes is None else [int(m) for m in sizes if int(m) >= 1]
    side_lo = _flip_first(lo, lo, hi)
    pairs: list[NeighbourPair] = []
    far_out = hi + OUTLIER_REACH * (hi - lo)
    for m in sizes[:OUTLIER_SIZES]:
        pairs.append(dataclasses.replace(_add_pair(
            f"point-lo-{m}-outlier", np.repeat(lo[None, :], m, axis=0), far_out,
            f"{m} identical record(s) at one box corner; canary added {OUTLIER_REACH:g} box widths beyond the "
            "far corner (code that does not clip its input lets one record move everything)"), family="outlier"))
    for canary_kind, these in (("far", sizes), ("side", sizes[:SIDE_SIZES])):
        for m in these:
            far = canary_kind == "far"
            pairs.append(_add_pair(f"point-lo-{m}-{canary_kind}", np.repeat(lo[None, :], m, axis=0),
                                   hi if far else side_lo, f"{m} identical record(s) at one box corner; canary "
                                   f"added at {'the far corner' if far else 'the opposite side'}"))
            pairs.append(_add_pair(f"point-mid-{m}-{canary_kind}", np.repeat(mid[None, :], m, axis=0),
                                   hi if far else lo, f"{m} identical record(s) at the box centre; canary added "
                                   f"at {'a corner' if far else 'the opposite corner'}"))
            if m >= 2:
                D = np.vstack([np.repeat(lo[None, :], m - m // 2, axis=0), np.repeat(hi[None, :], m // 2, axis=0)])
                pairs.append(_add_pair(f"two-points-{m}-{'mid' if far else 'side'}", D, mid if far else side_lo,
                                       f"{m} records on two opposite box corners; canary added at "
                                       f"{'the centre' if far else 'a third corner'}"))
    return distinct([p if p.family == "outlier" else dataclasses.replace(p, family="degenerate") for p in pairs])


def distinct(pairs: list[NeighbourPair]) -> list[NeighbourPair]:
    """``pairs`` without repeats: the first of the pairs whose D and D′ are the same datasets (every record at
    one corner or at the centre is the same empty dataset when there are none), in order."""
    seen: set[bytes] = set()
    out = []
    for p in pairs:
        key = b"|".join(np.ascontiguousarray(a, dtype=np.float64).tobytes() + str(a.shape).encode()
                        for a in (p.D, p.D_prime))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


# --------------------------------------------------------------------------- #
# Per mechanism
# --------------------------------------------------------------------------- #
def first_tries(pairs: list[NeighbourPair], k: int, n_records: int | None = None) -> list[NeighbourPair]:
    """``pairs`` with a careful auditor's first tries at the head, the rest in their order.

    The first tries span sizes and placements rather than variants of one: every record at one point
    with the canary at the far corner (as many records as the audited data has, at least ten, first: where
    several pairs separate D from D′ perfectly on the search's few releases the earlier one is certified,
    and a lone record against many identical ones leaks most cleanly; then k records at a corner, at the
    centre; k + 1 and k − 1 records), the canary on the opposite side, the lone far record beyond the box,
    and the canary alone in its own cluster.  Every pair is screened (:mod:`..search.screening`); the head is
    screened first and wins ties.
    """
    k = max(1, int(k))
    many = max(10, int(n_records or 0))
    wanted = [f"point-lo-{many}-far", f"point-lo-{k}-far", f"point-mid-{k}-far", f"point-lo-{k}-side",
              f"point-lo-{k + 1}-far", f"point-lo-{k - 1}-far", f"lone-corner-k{k}", f"point-lo-{k}-outlier",
              "point-lo-10-far",
              f"point-mid-{k + 1}-far", f"two-points-{k}-mid"]
    by_name = {p.name: p for p in pairs}
    head = [by_name[n] for n in dict.fromkeys(wanted) if n in by_name]
    chosen = {id(p) for p in head}
    return head + [p for p in pairs if id(p) not in chosen]


def release_k(release: Any) -> int | None:
    """The number of clusters a release shows: the rows of a centroid release, the distinct non-noise labels of
    a labels release; None for other kinds."""
    kind = getattr(release, "kind", None)
    if kind == "centroids":
        return int(np.asarray(release.centers).shape[0])
    if kind == "labels":
        labels = np.asarray(release.labels)
        return int(np.unique(labels[labels >= 0]).size) or None
    return None


def construction_pairs(mechanism: Any, d: int, kind: str, relation: str, *, bounds: object | None = None,
                       k: int | None = None, n_records: int | None = None) -> list[NeighbourPair]:
    """The constructions for a release kind and relation (none for point releases or metric claims).

    ``bounds`` is the public box (default: the mechanism's ``bounds`` attribute;
    without either, no box-based construction); ``k`` the number of clusters
    (default: the mechanism's ``n_clusters`` attribute, else 2)
    — for a plain function, the caller reads it off a probe release
    (:func:`release_k`); ``n_records`` the audited data's size (a size of the degenerate datasets).  Grid mechanisms (``core_threshold``) add DP-DBSCAN's
    core-threshold pairs.  A construction the parameters rule out is left out,
    never an error: the generic pairs remain.
    """
    bounds = bounds if bounds is not None else getattr(mechanism, "bounds", None)
    if k is None:
        k = getattr(mechanism, "n_clusters", None)
    try:
        k = max(1, int(k)) if k is not None else 2
    except (TypeError, ValueError):
        k = 2
    pairs: list[NeighbourPair] = []
    try:
        if kind in ("spans", "labels") and callable(getattr(mechanism, "core_threshold", None)):
            pairs += core_threshold_pairs(mechanism, d)
        if bounds is not None and kind in ("centroids", "vector", "labels"):
            if kind == "centroids":
                pairs += [lone_corner_pair(bounds, d, k), tiny_pair(bounds, d, size=max(2, k)),
                          empty_cluster_pair(bounds, d, k)]
            pairs += degenerate_pairs(bounds, d, k if kind in ("centroids", "labels") else 1, n_records=n_records)
    except (InvalidInputError, ValueError, TypeError):
        return []
    if relation == "replace":  # a record moves: D needs one to move (no empty dataset)
        return [to_replace(p) for p in pairs if len(p.D)]
    return pairs if relation == "add-remove" else []


def worst_case_pairs(mechanism: Any, X: object, *, kind: str | None = None, relation: str | None = None
                     ) -> list[NeighbourPair]:
    """The constructions for a mechanism's release kind, followed by the generic candidate pairs.

    ``kind`` defaults to what the mechanism releases (a transcript audit uses
    the underlying mechanism's kind); ``relation`` to its claim's.  Returns
    the constructions first.  Needs the mechanism's public ``bounds``.
    """
    X = check_data(X)
    relation = relation or mechanism.claim.neighbours
    probe = None
    if kind is None:
        probe = mechanism.release(X, np.random.default_rng(0))
        kind = probe.kind
    bounds = getattr(mechanism, "bounds", None)
    return construction_pairs(mechanism, X.shape[1], kind, relation, k=release_k(probe) if probe else None,
                              n_records=len(X)) + candidate_pairs(X, relation, kind=kind, bounds=bounds)
