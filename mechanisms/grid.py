"""Grid machinery for DP-DBSCAN with spans (the DP-DBSCAN paper, §5–7).

One concept: a regular grid over a *public* box, the α-neighbourhood offsets
of a cell, the two ε-DP histograms of cell counts (``naive`` and the O(n)
``sparse`` one of §6, Algorithm 2), the noisy neighbourhood sums S(g) of §5.2
eq. (2), the upward shift τ of §7.1 (Theorem 7.1), and the connected
components of core cells of §5.3.  :mod:`dpaudit.mechanisms.dpdbscan` assembles them
into the mechanism.

Cells are addressed by linear ids (``numpy.ravel_multi_index`` over the grid
shape, C order), so a set of cells is a sorted ``int64`` array.  Nothing in
the ``sparse`` path allocates an array the size of the grid: its memory is
O(n + released cells).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .base import InvalidInputError, check_bounds, check_positive

__all__ = [
    "check_dbscan_params",
    "Grid",
    "SparseHistogram",
    "cell_ids",
    "components",
    "dense_neighbour_sums",
    "naive_histogram",
    "neighbour_offsets",
    "sparse_core_cells",
    "sparse_histogram",
    "tau0",
]

def check_dbscan_params(name: str, alpha: object, min_pts: object, bounds: object, why_bounds: str
                        ) -> tuple[float, int]:
    """Validate the DBSCAN parameters every DP-DBSCAN variant needs; return (α, MinPts).

    ``alpha`` (the DBSCAN radius), ``min_pts`` and a public ``bounds`` box are
    required — there is no safe default for any of them; ``why_bounds`` says
    in the error what the box is for.
    """
    if alpha is None:
        raise InvalidInputError(f"{name} needs alpha (the DBSCAN radius), e.g. alpha=0.2")
    alpha_f = float(check_positive(alpha, name="alpha"))
    if min_pts is None:
        raise InvalidInputError(f"{name} needs min_pts (DBSCAN MinPts), e.g. min_pts=7")
    min_pts_i = int(check_positive(min_pts, name="min_pts", integer=True, minimum=1, inclusive=True))
    if bounds is None:
        raise InvalidInputError(f"{name} needs public bounds=(lo, hi): {why_bounds}")
    check_bounds(bounds)
    return alpha_f, min_pts_i


_MAX_LINEAR = 2**62          # linear cell ids must fit int64 with room for offsets
_MAX_OFFSET_CANDIDATES = 2_000_000


def neighbour_offsets(d: int, cell_scale: float = 1.0) -> np.ndarray:
    """Integer offsets c of the cells in a cell's α-neighbourhood (the DP-DBSCAN paper §5.2, Fig. 3).

    With cell width w = η′α/√d, a cell at offset c can hold a point within α
    of some point of cell 0 iff the gap between the two cells,
    ‖(max(|c_i| − 1, 0))_i‖₂ (in cell widths), is < α/w = √d/η′.  The test is
    done on squares (gap² < d/η′²), exact in integers when η′ = 1.
    κ = |N| is 21 for d = 2 and 117 for d = 3 (η′ = 1).  Returns a (κ, d)
    int64 array in lexicographic order; N is symmetric (c ∈ N ⇔ −c ∈ N).
    """
    radius2 = d / (cell_scale * cell_scale)
    m = math.ceil(math.sqrt(radius2))
    if (2 * m + 1) ** d > _MAX_OFFSET_CANDIDATES:
        raise InvalidInputError(
            f"DP-DBSCAN's grid neighbourhood is too large for d = {d} with cell_scale = {cell_scale:g} "
            f"({2 * m + 1}^{d} candidate offsets); use fewer dimensions or a larger cell_scale")
    axis = np.arange(-m, m + 1)
    cand = np.array(list(itertools.product(axis, repeat=d)), dtype=np.int64).reshape(-1, d)
    gap = np.maximum(np.abs(cand) - 1, 0)
    return cand[(gap * gap).sum(axis=1) < radius2 - 1e-12]


def tau0(kappa: int, n_cells: int, epsilon: float, beta: float) -> float:
    """Upward shift τ₀ (the DP-DBSCAN paper §7.1 / Theorem 7.1, as in the reference code).

    All |X| neighbourhood sums of κ independent Lap(b) noises, b = 1/ε, stay
    ≤ τ₀ with probability ≥ 1 − β (union bound over the |X| cells).  τ₀ is
    the smallest of three bounds:

    * trivial:  κ·b·ln(|X|/β)  (every single noise ≤ b·ln(|X|/β));
    * Hoeffding on noises bounded by a = b·ln(2|X|/β):  √(2κ·ln(4|X|/β))·a;
    * sub-exponential (Lap(b) is SE(ν = 2b, α = √2·b)):
      max(2b·√(2κ·ln(2|X|/β)), 2√2·b·ln(2|X|/β)).
    """
    b = 1.0 / epsilon
    x = float(n_cells)
    trivial = kappa * b * math.log(x / beta)
    hoeffding = math.sqrt(2.0 * kappa * math.log(4.0 * x / beta)) * b * math.log(2.0 * x / beta)
    ln2 = math.log(2.0 * x / beta)
    sub_exp = max(2.0 * b * math.sqrt(2.0 * kappa * ln2), 2.0 * math.sqrt(2.0) * b * ln2)
    return min(trivial, hoeffding, sub_exp)


@dataclass(frozen=True)
class Grid:
    """A grid of cubic cells of width ``width`` anchored at ``origin`` (public).

    ``shape[i] = ⌊(hi_i − lo_i)/w⌋ + 1`` cells along dimension i (the DP-DBSCAN paper
    reference code), so the box's upper face falls in the last cell.
    """

    origin: np.ndarray
    width: float
    shape: tuple[int, ...]

    @classmethod
    def over_box(cls, lo: np.ndarray, hi: np.ndarray, width: float) -> "Grid":
        per_dim = np.floor((hi - lo) / width).astype(np.float64) + 1.0
        if float(np.prod(per_dim)) >= _MAX_LINEAR:
            raise InvalidInputError(
                f"the grid would have {float(np.prod(per_dim)):.3g} cells (width {width:.3g} over the box); "
                "use a larger alpha or cell_scale, or a smaller box")
        return cls(np.asarray(lo, dtype=np.float64), float(width), tuple(int(s) for s in per_dim))

    @property
    def n_cells(self) -> int:
        return math.prod(self.shape)

    @property
    def d(self) -> int:
        return len(self.shape)

    def coords_of(self, ids: np.ndarray) -> np.ndarray:
        """(m, d) integer coordinates of linear cell ids."""
        if ids.size == 0:
            return np.empty((0, self.d), dtype=np.int64)
        return np.stack(np.unravel_index(ids, self.shape), axis=1).astype(np.int64)

    def ids_of(self, coords: np.ndarray) -> np.ndarray:
        """Linear ids of in-grid integer coordinates (m, d)."""
        if coords.shape[0] == 0:
            return np.empty(0, dtype=np.int64)
        return np.ravel_multi_index(tuple(coords.T), self.shape).astype(np.int64)

    def inside(self, coords: np.ndarray) -> np.ndarray:
        return np.all((coords >= 0) & (coords < np.asarray(self.shape)), axis=1)


def cell_ids(X: np.ndarray, grid: Grid) -> np.ndarray:
    """Linear cell id of each record.  Records outside the box are clipped to it first.

    Clipping is a per-record map fixed in advance, so a histogram of clipped
    records keeps sensitivity 1.  The binning formula is the one
    :meth:`dpaudit.mechanisms.base.Spans.cell_of` uses.
    """
    scaled = np.floor((X - grid.origin) / grid.width)
    np.clip(scaled, 0, np.asarray(grid.shape, dtype=np.float64) - 1, out=scaled)  # before the int cast
    return grid.ids_of(scaled.astype(np.int64))


# --------------------------------------------------------------------------- #
# Naive histogram: every cell + Lap(1/ε)  (Theorem 2.8), O(|X|) memory
# --------------------------------------------------------------------------- #
def naive_histogram(ids: np.ndarray, grid: Grid, epsilon: float, rng: np.random.Generator | None
                    ) -> np.ndarray:
    """Dense noisy counts of shape ``grid.shape``; ``rng=None`` switches noise off."""
    h = np.bincount(ids, minlength=grid.n_cells).astype(np.float64)
    if rng is not None:
        h += rng.laplace(0.0, 1.0 / epsilon, size=grid.n_cells)
    return h.reshape(grid.shape)


def dense_neighbour_sums(h: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """S(g) = Σ_{c∈N} h(g + c) on a dense grid (cells outside the grid count 0)."""
    m = int(np.abs(offsets).max()) if offsets.size else 0
    padded = np.pad(h, m)
    out = np.zeros_like(h)
    for c in offsets:  # κ vectorised passes over the grid
        out += padded[tuple(slice(m + ci, m + ci + s) for ci, s in zip(c, h.shape))]
    return out


# --------------------------------------------------------------------------- #
# Sparse histogram: the O(n) pure-DP histogram of §6 (Algorithm 2)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class SparseHistogram:
    """Released cells (sorted linear ids) and their noisy counts, all ≥ ``threshold``.

    ``n_kept`` occupied cells survived the threshold; ``n_empty_released``
    empty cells were drawn (``m`` of Algorithm 2).  Unreleased cells count 0.
    """

    ids: np.ndarray
    values: np.ndarray
    threshold: float
    n_occupied: int
    n_kept: int
    n_empty_released: int


def _sample_empty_cells(rng: np.random.Generator, m: int, n_cells: int, occupied: np.ndarray
                        ) -> np.ndarray:
    """m distinct cells drawn uniformly from the cells not in ``occupied`` (sorted).

    Rejection sampling without enumerating the empty cells: draw uniform ids,
    drop occupied ones and repeats, top up until m distinct remain, then keep
    a uniform m-subset.  Every step treats the empty cells symmetrically, so
    the result is a uniform m-subset; expected work O(m) while the empty
    cells are at least half of the grid (and O(#empty) otherwise).
    """
    if m == 0:
        return np.empty(0, dtype=np.int64)
    n_empty = n_cells - occupied.size
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < m:
        need = m - chosen.size
        draws = int(math.ceil(need * n_cells / n_empty * 1.1)) + 16
        cand = rng.integers(0, n_cells, size=draws, dtype=np.int64)
        if occupied.size:
            pos = np.minimum(np.searchsorted(occupied, cand), occupied.size - 1)
            cand = cand[occupied[pos] != cand]
        merged = np.sort(np.concatenate([chosen, cand]))
        chosen = merged[np.concatenate(([True], merged[1:] != merged[:-1]))] if merged.size else merged
    if chosen.size > m:
        chosen = np.sort(rng.choice(chosen, size=m, replace=False))
    return chosen


def sparse_histogram(ids: np.ndarray, n_cells: int, epsilon: float, threshold: float,
                     rng: np.random.Generator | None) -> SparseHistogram:
    """Seed 002 Algorithm 2 with Laplace noise (ε-DP, add/remove, sensitivity 1).

    1. each occupied cell's count + Lap(1/ε) is released iff ≥ T;
    2. m ~ Binomial(#empty, ½·e^(−εT)) — ½e^(−εT) = P[Lap(1/ε) ≥ T];
    3. m distinct empty cells chosen uniformly, each given T + Exp(scale 1/ε)
       (the law of Lap(1/ε) conditioned on ≥ T).
    The output has the law of a full Laplace histogram with entries < T
    dropped (§6, Theorem 6.1).  ``rng=None`` switches the noise off: every
    occupied cell is released with its exact count and no empty cell is.
    """
    occupied, counts = np.unique(ids, return_counts=True)
    if rng is None:
        return SparseHistogram(occupied.astype(np.int64), counts.astype(np.float64), 0.0,
                               occupied.size, occupied.size, 0)
    noisy = counts + rng.laplace(0.0, 1.0 / epsilon, size=counts.size)
    keep = noisy >= threshold
    n_empty = n_cells - occupied.size
    m = int(rng.binomial(n_empty, 0.5 * math.exp(-epsilon * threshold))) if n_empty > 0 else 0
    empty = _sample_empty_cells(rng, m, n_cells, occupied)
    empty_vals = threshold + rng.exponential(1.0 / epsilon, size=m)
    all_ids = np.concatenate([occupied[keep], empty])
    all_vals = np.concatenate([noisy[keep], empty_vals])
    order = np.argsort(all_ids, kind="stable")
    return SparseHistogram(all_ids[order].astype(np.int64), all_vals[order], float(threshold),
                           occupied.size, int(keep.sum()), m)


def sparse_core_cells(hist: SparseHistogram, grid: Grid, offsets: np.ndarray, core_threshold: float,
                      prune_threshold: float, chunk: int = 8192) -> np.ndarray:
    """Sorted ids of the cells g with S(g) ≥ ``core_threshold``, from released cells only.

    Cells are grouped in blocks of B^d cells, B = max|c_i| over N, so every
    neighbourhood of a cell of block q lies in the 3^d blocks around q.  Every
    released value minus T is ≥ 0; a block's mass M(q) = Σ (h − T) over its
    released cells bounds Σ (h − T) over any neighbourhood inside it.  A cell
    can be core only if Σ_{released nbrs}(h − T) ≥ ``prune_threshold``
    (= MinPts + τ₀, since k ≤ κ released neighbours add k·T ≤ κ·T), so only
    blocks whose 3^d-neighbourhood mass reaches it are examined, and only
    blocks next to a block of mass ≥ prune_threshold / 3^d can.  For the
    survivors S(g) is computed exactly on a dense (3B)^d window.  Memory and
    time are O(released cells · 3^d) plus O(κ) per examined cell — never the
    grid.
    """
    d = grid.d
    if hist.ids.size == 0:
        return np.empty(0, dtype=np.int64)
    B = max(int(np.abs(offsets).max()), 1)
    bshape = tuple(-(-s // B) for s in grid.shape)
    coords = grid.coords_of(hist.ids)
    bcoords, sub = np.divmod(coords, B)
    bids = np.ravel_multi_index(tuple(bcoords.T), bshape).astype(np.int64)
    blocks, inv = np.unique(bids, return_inverse=True)
    mass = np.bincount(inv, weights=hist.values - hist.threshold, minlength=blocks.size)
    sub_lin = np.ravel_multi_index(tuple(sub.T), (B,) * d)
    dense = np.zeros((blocks.size + 1, B ** d))          # row blocks.size = an all-zero block
    dense[inv, sub_lin] = hist.values
    mass = np.append(mass, 0.0)

    around = np.array(list(itertools.product((-1, 0, 1), repeat=d)), dtype=np.int64)
    heavy = blocks[mass[:-1] >= prune_threshold / len(around)]
    if heavy.size == 0:
        return np.empty(0, dtype=np.int64)
    bshape_arr = np.asarray(bshape)
    parts = []
    for start in range(0, heavy.size, chunk):       # chunked: memory O(chunk·3^d) per step
        hc = np.stack(np.unravel_index(heavy[start:start + chunk], bshape), axis=1).astype(np.int64)
        nb = (hc[:, None, :] + around[None, :, :]).reshape(-1, d)
        nb = nb[np.all((nb >= 0) & (nb < bshape_arr), axis=1)]
        parts.append(np.ravel_multi_index(tuple(nb.T), bshape))
    cand = np.unique(np.concatenate(parts))

    def block_rows(qcoords: np.ndarray) -> np.ndarray:
        """Row in ``dense`` of each neighbouring block (3^d per candidate); missing → zero row."""
        nb = qcoords[:, None, :] + around[None, :, :]
        ok = np.all((nb >= 0) & (nb < bshape_arr), axis=2)
        lin = np.where(ok, np.ravel_multi_index(tuple(np.moveaxis(nb, -1, 0)), bshape, mode="clip"), -1)
        pos = np.minimum(np.searchsorted(blocks, lin), blocks.size - 1)
        return np.where(ok & (blocks[pos] == lin), pos, blocks.size)

    local_sub = np.array(list(itertools.product(range(B), repeat=d)), dtype=np.int64)
    perm = [0] + [v for i in range(d) for v in (1 + i, 1 + d + i)]
    out: list[np.ndarray] = []
    for start in range(0, cand.size, chunk):
        q = np.stack(np.unravel_index(cand[start:start + chunk], bshape), axis=1).astype(np.int64)
        r = block_rows(q)
        keep = mass[r].sum(axis=1) >= prune_threshold   # the 3^d-window bound
        q, r = q[keep], r[keep]
        k = q.shape[0]
        if k == 0:
            continue
        # window of 3^d blocks → dense (k, 3B, ..., 3B) array
        win = dense[r].reshape((k,) + (3,) * d + (B,) * d)
        win = win.transpose(perm).reshape((k,) + (3 * B,) * d)
        s = np.zeros((k,) + (B,) * d)
        for c in offsets:
            s += win[(slice(None),) + tuple(slice(B + ci, 2 * B + ci) for ci in c)]
        cell_coords = (q[:, None, :] * B + local_sub[None, :, :]).reshape(-1, d)
        hit = (s.reshape(-1) >= core_threshold) & grid.inside(cell_coords)
        out.append(grid.ids_of(cell_coords[hit]))
    return np.sort(np.concatenate(out)) if out else np.empty(0, dtype=np.int64)


# --------------------------------------------------------------------------- #
# Merging core cells (§5.3)
# --------------------------------------------------------------------------- #
def components(core_ids: np.ndarray, grid: Grid, offsets: np.ndarray) -> tuple[np.ndarray, int]:
    """Connected components of core cells, two cells adjacent iff their offset is in N.

    ``core_ids`` must be sorted.  Returns (label per core cell, number of
    components); labels are numbered in order of each component's smallest
    cell id, so the result does not depend on anything but the cell set.
    """
    n = core_ids.size
    if n == 0:
        return np.empty(0, dtype=np.int64), 0
    coords = grid.coords_of(core_ids)
    rows, cols = [], []
    for c in offsets:
        if tuple(c) <= (0,) * grid.d:  # N is symmetric: one direction of each pair suffices
            continue
        nb = coords + c
        ok = grid.inside(nb)
        lin = grid.ids_of(nb[ok])
        pos = np.minimum(np.searchsorted(core_ids, lin), n - 1)
        hit = core_ids[pos] == lin
        rows.append(np.flatnonzero(ok)[hit])
        cols.append(pos[hit])
    r = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.empty(0, dtype=np.int64)
    graph = coo_matrix((np.ones(r.size, dtype=np.int8), (r, c)), shape=(n, n))
    k, labels = connected_components(graph, directed=False)
    # renumber by first appearance (smallest cell id) for a canonical order
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(k, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(k)
    return rank[labels], int(k)
