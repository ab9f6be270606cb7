"""DP-DBSCAN with spans (the DP-DBSCAN paper, "Approximate DBSCAN under Differential Privacy").

Algorithm 1 of the paper with the §6 linear-time histogram and the §7.1
tighter upward shift, formulas as restored from the paper's reference code:

1. grid over the *public* box, cell width w = η′·α/√d (§5, η′ = ``cell_scale``);
2. an ε-DP histogram of cell counts (add/remove neighbours, sensitivity 1):
   ``naive`` — every cell + Lap(1/ε) (Theorem 2.8) — or ``sparse`` — the O(n)
   pure-DP histogram of §6 / Algorithm 2 (:func:`dpaudit.mechanisms.grid.sparse_histogram`);
3. noisy neighbourhood sums S(g) = Σ_{c∈N} h(g + c) over the κ cells of the
   α-neighbourhood N (§5.2 eq. (2); κ = 21 in 2-D, 117 in 3-D);
4. core cells S(g) ≥ MinPts + τ, with τ = τ₀ (naive) or τ₀ + κ·T (sparse),
   τ₀ from Theorem 7.1 (:func:`dpaudit.mechanisms.grid.tau0`);
5. core cells adjacent through N are merged (§5.3); each connected component
   is a span.  The release is :class:`~dpaudit.mechanisms.base.Spans`; its
   ``predict(X)`` labels a point by the span containing its cell (−1 = noise).

Steps 3–5 are post-processing of the histogram, so the release is ε-DP
under add/remove neighbours (the claim).

**n.**  The sparse histogram's threshold T = (1/ε)·ln(|X|/n) (when |X| > 2n,
else τ₀/κ) needs the record count n.  The paper's reference code used the
exact n — a data-derived parameter outside the DP analysis.  Here n is either
public (``n_public=<int>``) or, by default, itself released with noise:
ñ = n + Lap(1/(ρε)) with ρ = ``n_budget`` (default 0.05), and the histogram
runs at (1 − ρ)ε; by basic composition the total is ε.  (In T, τ₀ and the
noise scales, ε always means the histogram's share.)  ``n_public="data"``
reproduces the reference code (exact n) and raises a
:class:`~dpaudit.mechanisms.base.PrivacyLeakWarning`.  The naive histogram needs no n
and spends all of ε on the counts.

**histogram="auto"** picks ``naive`` when the grid has at most 2²² cells
(≈ 4.2·10⁶; a few dense float arrays of that size stay under ~100 MB) and
``sparse`` otherwise.  The rule looks only at the public grid, never at the
data — a choice made on the data (the reference code compared n with |X|/2
using the exact n) would itself leak.

Records outside the box are clipped to it before counting (a fixed
per-record map, so the sensitivity stays 1).

:class:`DPDBSCANLabels` (``dpdbscan-labels``) releases the private points'
labels instead — how the paper *evaluates* (§8.2: "not a private output of
the mechanism but for evaluation only").  It is not DP; it is shipped,
claiming ε as the paper's tables imply, for the auditor to catch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .base import (
    InvalidInputError,
    Labels,
    PrivacyClaim,
    Release,
    Spans,
    Transcript,
    TranscriptBatch,
    check_bounds,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
    warn_privacy_leak,
)
from .grid import (
    Grid,
    SparseHistogram,
    cell_ids,
    check_dbscan_params,
    components,
    dense_neighbour_sums,
    naive_histogram,
    neighbour_offsets,
    sparse_core_cells,
    sparse_histogram,
    tau0,
)

__all__ = ["AUTO_NAIVE_MAX_CELLS", "DPDBSCAN", "DPDBSCANLabels", "GridRun"]

HistogramKind = Literal["auto", "naive", "sparse"]
AUTO_NAIVE_MAX_CELLS = 2**22
NAIVE_MAX_CELLS = 2**27        # a dense float64 grid of 1 GiB: beyond that, naive is refused


@dataclass(frozen=True)
class GridRun:
    """One DP-DBSCAN run: the release plus the public quantities that shaped it.

    Everything here except ``spans`` is either a public parameter or a value
    computed from DP outputs (ñ, the released-cell counts); ``n_source`` says
    where the n behind T came from (``public``, ``noisy``, ``data`` = leak,
    or ``None`` when no n was needed).
    """

    spans: Spans
    histogram: str
    n_cells: int
    kappa: int
    epsilon_histogram: float
    tau0: float
    tau: float
    threshold: float | None
    n_used: float | None
    n_source: str | None
    n_released_cells: int
    n_core_cells: int

    def summary(self) -> dict[str, object]:
        """The public diagnostics as plain values (for reports; no records, no counts)."""
        return {"histogram": self.histogram, "n_cells": self.n_cells, "kappa": self.kappa,
                "epsilon_histogram": self.epsilon_histogram, "tau0": self.tau0, "tau": self.tau,
                "threshold": self.threshold, "n_used": self.n_used, "n_source": self.n_source,
                "n_released_cells": self.n_released_cells, "n_core_cells": self.n_core_cells,
                "n_spans": self.spans.n_clusters}


class DPDBSCAN:
    """DP-DBSCAN releasing cluster spans (the DP-DBSCAN paper Algorithm 1).

    Parameters
    ----------
    epsilon : float
        Total privacy budget (add/remove neighbours).
    alpha : float
        DBSCAN radius α (the paper's ε, renamed there to free ε for privacy).
    min_pts : int
        DBSCAN MinPts (≥ 1).
    bounds : (lo, hi)
        Public box, scalars or per-feature vectors — required, never taken
        from the data.
    beta : float
        Failure probability of the upward shift τ (0 < β < 1; paper default 0.5).
    cell_scale : float
        η′: cell width w = η′·α/√d (paper default 1).
    histogram : {"auto", "naive", "sparse"}
        See the module docstring for the ``auto`` rule.
    n_public : int, "data" or None
        Record count used by the sparse histogram's threshold T: a public
        number, ``"data"`` (exact n — a leak, warned), or ``None`` (spend
        ``n_budget``·ε on a noisy n).
    n_budget : float
        Share of ε spent on the noisy n (0 < ρ < 1), only when it is needed.
    noise : bool
        ``False`` switches every noise source off (T = τ = 0): the exact
        grid clustering, for tests.  The claim then becomes ε = ∞.
    """

    name = "dpdbscan"

    def __init__(self, epsilon: float, *, alpha: float | None = None, min_pts: int | None = None,
                 bounds: tuple[object, object] | None = None, beta: float = 0.5,
                 cell_scale: float = 1.0, histogram: HistogramKind = "auto",
                 n_public: int | str | None = None, n_budget: float = 0.05, noise: bool = True) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.alpha, self.min_pts = check_dbscan_params(self.name, alpha, min_pts, bounds,
                                                       "the grid is built on it; it must not come from the data (the reference code's data min/max is a leak)")
        self.bounds = bounds
        self.beta = float(check_positive(beta, name="beta"))
        if self.beta >= 1.0:
            raise InvalidInputError(f"beta must be in (0, 1), got {beta!r}")
        self.cell_scale = float(check_positive(cell_scale, name="cell_scale"))
        if histogram not in ("auto", "naive", "sparse"):
            raise InvalidInputError(f"histogram must be auto, naive or sparse; got {histogram!r}")
        self.histogram = histogram
        if n_public is not None and n_public != "data":
            n_public = int(check_positive(n_public, name="n_public", integer=True, minimum=1, inclusive=True))
        self.n_public = n_public
        self.n_budget = float(check_positive(n_budget, name="n_budget"))
        if self.n_budget >= 1.0:
            raise InvalidInputError(f"n_budget must be in (0, 1), got {n_budget!r}")
        self.noise = bool(noise)
        self.claim = PrivacyClaim(self.epsilon if self.noise else math.inf, 0.0, "add-remove")

    # ------------------------------------------------------------------ #
    def grid_for(self, d: int) -> tuple[Grid, np.ndarray]:
        """The public grid and neighbour offsets for d-dimensional data."""
        lo, hi = check_bounds(self.bounds, d)
        width = self.cell_scale * self.alpha / math.sqrt(d)
        return Grid.over_box(lo, hi, width), neighbour_offsets(d, self.cell_scale)

    def histogram_kind(self, grid: Grid) -> str:
        """``naive`` or ``sparse`` for this grid (the ``auto`` rule looks at |X| only)."""
        if self.histogram != "auto":
            return self.histogram
        return "naive" if grid.n_cells <= AUTO_NAIVE_MAX_CELLS else "sparse"

    def core_threshold(self, d: int) -> tuple[Grid, np.ndarray, float, float]:
        """(grid, neighbour offsets, the histogram's ε, MinPts + τ) of the core decision on d-dimensional data.

        A cell is core when its noisy neighbourhood sum reaches MinPts + τ (DESIGN §3: τ = τ₀ for the naive
        histogram; τ₀ + κT for the sparse one, T evaluated at a dataset of about the threshold's size).
        Offered to auditors: the paper's lower-bound constructions sit on this decision
        (:func:`dpaudit.attacks.epsilon.pairs.constructions.core_threshold_pairs`).
        """
        grid, offsets = self.grid_for(d)
        kappa = int(offsets.shape[0])
        kind = self.histogram_kind(grid)
        eps_h = self.epsilon if kind == "naive" or self.n_public is not None else self.epsilon * (1.0 - self.n_budget)
        t0 = tau0(kappa, grid.n_cells, eps_h, float(self.beta))
        tau = t0
        if kind == "sparse":   # T from the record count (≈ N): evaluate at the threshold's N
            n_guess = max(float(self.min_pts + t0), 1.0)
            tau = t0 + kappa * (math.log(grid.n_cells / n_guess) / eps_h if grid.n_cells > 2.0 * n_guess
                                else t0 / kappa)
        return grid, offsets, eps_h, float(self.min_pts) + tau

    def _record_count(self, n: int, rng: np.random.Generator | None) -> tuple[float, str, float]:
        """(n used for T, its source, ε left for the histogram)."""
        if not self.noise:
            return float(n), "exact (noise off)", self.epsilon
        if self.n_public == "data":
            warn_privacy_leak(f"{self.name}: n_public='data' uses the exact record count for the sparse "
                              "histogram's threshold (as the paper's reference code does); the ε claim "
                              "does not cover it", stacklevel=5)
            return float(n), "data", self.epsilon
        if self.n_public is not None:
            return float(self.n_public), "public", self.epsilon
        eps_n = self.n_budget * self.epsilon
        if rng is None:
            raise RuntimeError("a noisy record count needs the noise generator (noise is on)")
        noisy = n + rng.laplace(0.0, 1.0 / eps_n)
        return max(float(noisy), 1.0), "noisy", self.epsilon - eps_n

    def _draw(self, X: np.ndarray, rng: np.random.Generator) -> tuple[Transcript, Grid, np.ndarray, dict]:
        """Every random draw of one run (the transcript) and the public quantities that shaped it."""
        X = check_data(X, min_rows=1)
        n, d = X.shape
        try:
            grid, offsets = self.grid_for(d)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{self.name}: {exc} (data has {d} features)") from None
        noise_rng = check_rng(rng) if self.noise else None
        kind = self.histogram_kind(grid)
        kappa = int(offsets.shape[0])
        ids = cell_ids(X, grid)
        info: dict = {"kind": kind, "kappa": kappa, "n_used": None, "n_source": None, "threshold": None}
        if kind == "naive":
            if grid.n_cells > NAIVE_MAX_CELLS:
                raise InvalidInputError(
                    f"{self.name}: the grid has {grid.n_cells:.3g} cells, too many for the naive histogram "
                    "(one noisy count per cell); use histogram='sparse' or 'auto'")
            eps_h = self.epsilon
            stats = {"histogram": naive_histogram(ids, grid, eps_h, noise_rng).reshape(-1)}
        else:
            n_used, n_source, eps_h = self._record_count(n, noise_rng)
            hist = sparse_histogram(ids, grid.n_cells, eps_h, self._threshold(grid, kappa, eps_h, n_used),
                                    noise_rng)
            stats = {"cells": hist.ids, "values": hist.values}
            if n_source == "noisy":
                stats["n_noisy"] = np.array([n_used])
            info.update(n_used=n_used, n_source=n_source, n_kept=hist.n_kept, n_occupied=hist.n_occupied,
                        n_empty_released=hist.n_empty_released)
        info["epsilon_histogram"] = eps_h
        config = self.transcript_config(d, kind)
        if info["n_source"] not in (None, "noisy"):   # the n behind T when it is not a draw (data: the leak)
            config["n_used"] = info["n_used"]
        return Transcript(stats, self.name, config), grid, offsets, info

    def _threshold(self, grid: Grid, kappa: int, eps_h: float, n_used: float) -> float:
        """The sparse histogram's threshold T (0 without noise)."""
        if not self.noise:
            return 0.0
        t0 = tau0(kappa, grid.n_cells, eps_h, self.beta)
        return math.log(grid.n_cells / n_used) / eps_h if grid.n_cells > 2.0 * n_used else t0 / kappa

    def _spans(self, transcript: Transcript, grid: Grid, offsets: np.ndarray
               ) -> tuple[Spans, float, float, float | None, np.ndarray, int]:
        """Post-processing of the draws: (spans, τ₀, τ, T, core cell ids, released cells)."""
        kappa = int(offsets.shape[0])
        cfg = transcript.config
        eps_h = float(cfg["epsilon_histogram"])
        if cfg["histogram"] == "naive":
            t0 = tau0(kappa, grid.n_cells, eps_h, self.beta) if self.noise else 0.0
            tau, T = t0, None
            S = dense_neighbour_sums(np.asarray(transcript["histogram"], dtype=np.float64).reshape(grid.shape),
                                     offsets)
            core = np.flatnonzero(S.reshape(-1) >= self.min_pts + tau).astype(np.int64)
            released = grid.n_cells
        else:
            n_used = float(transcript["n_noisy"][0]) if "n_noisy" in transcript.statistics else float(cfg["n_used"])
            t0 = tau0(kappa, grid.n_cells, eps_h, self.beta) if self.noise else 0.0
            T = self._threshold(grid, kappa, eps_h, n_used)
            tau = t0 + kappa * T
            values = np.asarray(transcript["values"], dtype=np.float64)
            hist = SparseHistogram(np.asarray(transcript["cells"], dtype=np.int64), values, T, 0, 0, 0)
            core = sparse_core_cells(hist, grid, offsets, self.min_pts + tau, self.min_pts + t0)
            released = int(values.size)
        labels, k = components(core, grid, offsets)
        coords = grid.coords_of(core)
        order = np.argsort(labels, kind="stable")
        bounds_idx = np.searchsorted(labels[order], np.arange(k + 1))
        cells = tuple(coords[order[bounds_idx[j]:bounds_idx[j + 1]]] for j in range(k))
        return Spans(grid.origin, grid.width, grid.shape, cells), t0, tau, T, core, released

    def run(self, X: np.ndarray, rng: np.random.Generator) -> GridRun:
        """Run the mechanism and return the release with its public diagnostics."""
        transcript, grid, offsets, info = self._draw(X, rng)
        spans, t0, tau, T, core, released = self._spans(transcript, grid, offsets)
        return GridRun(spans, info["kind"], grid.n_cells, info["kappa"], info["epsilon_histogram"], t0, tau, T,
                       info["n_used"], info["n_source"], released, int(core.size))

    # ------------------------------------------------------------------ transcript
    transcript_covers_release = True

    def transcript_config(self, d: int, kind: str | None = None) -> dict[str, object]:
        """Public parameters of the transcript: the grid, the histogram kind and its ε, MinPts, β, n."""
        grid, offsets = self.grid_for(d)
        kind = kind or self.histogram_kind(grid)
        eps_h = self.epsilon
        n_used: float | None = None
        if kind == "sparse" and self.noise and self.n_public is None:
            eps_h = self.epsilon * (1.0 - self.n_budget)
        elif kind == "sparse" and self.n_public not in (None, "data"):
            n_used = float(self.n_public)
        return {"histogram": kind, "origin": tuple(grid.origin.tolist()), "width": grid.width,
                "shape": grid.shape, "kappa": int(offsets.shape[0]), "cell_scale": self.cell_scale,
                "epsilon": self.epsilon, "epsilon_histogram": eps_h, "epsilon_n": self.epsilon - eps_h,
                "min_pts": self.min_pts, "beta": self.beta, "n_used": n_used, "noise": self.noise}

    def release_transcript(self, X: np.ndarray, rng: np.random.Generator) -> Transcript:
        """The run's draws — the same :meth:`release` makes for the same seed.

        ``naive``: ``histogram``, the noisy count of every cell (linear cell ids,
        C order).  ``sparse``: ``cells`` and ``values``, the released cells and
        their noisy counts (ragged: their number is random), and ``n_noisy``
        (ñ, when n is released with noise).  With ``n_public="data"`` the exact
        n behind T is in ``config['n_used']`` — the leak, visible.
        """
        return self._draw(X, rng)[0]

    def release_transcript_many(self, X: np.ndarray, rng: np.random.Generator, n: int
                                ) -> TranscriptBatch | list[Transcript]:
        """``n`` transcripts; the naive histogram is drawn in one call (the same numbers as ``n`` calls)."""
        X = check_data(X, min_rows=1)
        grid, _ = self.grid_for(X.shape[1])
        if self.histogram_kind(grid) != "naive" or not self.noise or grid.n_cells > NAIVE_MAX_CELLS:
            return TranscriptBatch.stack([self.release_transcript(X, rng) for _ in range(int(n))])
        counts = np.bincount(cell_ids(X, grid), minlength=grid.n_cells).astype(np.float64)
        h = counts + check_rng(rng).laplace(0.0, 1.0 / self.epsilon, size=(int(n), grid.n_cells))
        return TranscriptBatch({"histogram": h}, self.name, self.transcript_config(X.shape[1], "naive"))

    def release_from_transcript(self, transcript: Transcript, X: np.ndarray | None = None) -> Release:
        """The spans a run with this transcript releases (post-processing; ``X`` is ignored)."""
        grid, offsets = self.grid_for(len(transcript.config["shape"]))
        return self._spans(transcript, grid, offsets)[0]

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release:
        """ε-DP cluster spans of X."""
        return self.run(X, rng).spans

    def __repr__(self) -> str:
        extra = "" if self.noise else ", noise=False"
        return (f"{type(self).__name__}(epsilon={self.epsilon:g}, alpha={self.alpha:g}, min_pts={self.min_pts}, "
                f"bounds={self.bounds!r}, histogram={self.histogram!r}{extra})")


class DPDBSCANLabels(DPDBSCAN):
    """FLAWED for auditing: DP-DBSCAN that releases the private points' labels.

    The labels are the spans' ``predict`` on the private records themselves
    (each record clipped into the box, i.e. the cell it was counted in) —
    exactly what the paper computes to report ARI/AMI (§8.2, §8.3: "the point
    labels are not outputs and do not have a privacy guarantee").  The claim
    is the ε of the spans, as the paper's tables imply; but a record's own
    label depends on whether *its* cell is core, and the DP-DBSCAN paper Lemma 3.1
    shows that no ε-DP label release can be accurate, so an accurate one such
    as this cannot be ε-DP.  The auditor should reject the claim.
    """

    name = "dpdbscan-labels"
    transcript_covers_release = False   # the labels are computed from the records too

    def release_from_transcript(self, transcript: Transcript, X: np.ndarray | None = None) -> Labels:
        """The labels a run with this transcript gives the records ``X`` (needs ``X``: not post-processing)."""
        if X is None:
            raise InvalidInputError(f"{self.name}: the labels depend on the records; pass X")
        X = check_data(X, min_rows=1)
        lo, hi = check_bounds(self.bounds, X.shape[1])
        return Labels(super().release_from_transcript(transcript).predict(np.clip(X, lo, hi)))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Labels:
        X = check_data(X, min_rows=1)
        run = self.run(X, rng)
        lo, hi = check_bounds(self.bounds, X.shape[1])
        return Labels(run.spans.predict(np.clip(X, lo, hi)))
