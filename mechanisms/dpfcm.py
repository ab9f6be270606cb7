"""DP-FCM: differentially private fuzzy c-means, as published and corrected.

Seed 004 (Yang, Zhang, Ismail, "Differential privacy-preserving fuzzy-c-means
clustering algorithm", 2025), §4.1 steps 1–8 and §5.

**As published** (:class:`DPFCM`, ``dpfcm``):

1. normalise every feature to [0, 1];
2. random membership matrix U (rows sum to 1);
3. centres v_j = Σ_i u_ij^m x_i / Σ_i u_ij^m (eq. 5);
4. v'_j = v_j + Y with Y Laplace noise (Definition 4);
5.–6. memberships from the distances to the *noisy* centres,
   u_ij = 1 / Σ_c (d_ij / d_ic)^(2/(m−1)) (eq. 7);
7. repeat until ``max_iter`` (paper: 1000) or until memberships change by
   less than 0.005 (§8);
8. release the labels argmax_j u_ij.

The paper never states Δf.  Chosen here: **Δf = d**, the L1 diameter of the
normalised domain [0, 1]^d — a centre is a weighted mean of normalised records,
so it lies in [0, 1]^d and one record can move it by at most that much.  This is
the most generous reading (no data-dependent or smaller value is justified by
the paper's eqs. 13–18).  ``sensitivity=`` overrides it, e.g. to explore which
Δf the paper's reported utility would need.  Every centre gets Lap(d/ε) per coordinate at every
iteration, with the *full* ε each time, as §5 proves for one centre only.  The
claim is the paper's: ε-DP, add-remove neighbours.  It should not survive an
audit: one record influences all c centres at every one of up to 1000
iterations (no composition), the stopping rule and the released labels are
computed from the raw records (the labels *are* a function of each record), and
without public ``bounds`` the normalisation uses the data's min/max (a
:class:`PrivacyLeakWarning`).

**Corrected** (:class:`DPFCMCorrected`, ``dpfcm-corrected``): records are clipped
into a public box and mapped to [0, 1]^d (step 1 with public bounds); a fixed
number of iterations T, each with budget ε/T; per iteration the memberships are
computed from the previous *noisy* centres (public), and the weighted sums
S_j = Σ_i u_ij^m (x_i − ½) and weights W_j = Σ_i u_ij^m are released with
Lap(Δ/(ε/T)), Δ = d/2 + 1: for m ≥ 1, Σ_j u_ij^m ≤ Σ_j u_ij = 1, so one record
moves the (S, W) vector by at most Σ_i ½ + 1 in L1.  The centres S'/W' + ½ are
post-processing; only they (mapped back to the box) and W' are released —
never labels of the private records.  Sequential composition gives ε-DP
(add-remove).  A noisy weight W' ≤ 0 leaves that centre where it was (the box
centre before the first update); centres are clipped into the box.

**Transcripts** (``release_transcript``; the same draws as ``release`` for the
same seed).  ``dpfcm``: ``centres``, the noisy centres of every iteration in
normalised units (max_iter × c × d, NaN after the run stopped) and
``iterations``, the number run — its labels are computed from the records as
well, so the transcript does not cover the release.  ``dpfcm-corrected``:
``sums`` (T × c × d, Σu^m(x − ½) in normalised units) and ``weights`` (T × c),
of which the released centres are post-processing.  The random initial
memberships are per-record (their number is n), so they are not part of either.
"""

from __future__ import annotations

import warnings

import numpy as np

from .base import (
    Centroids,
    InvalidInputError,
    Labels,
    PrivacyClaim,
    PrivacyLeakWarning,
    ReleaseBatch,
    Transcript,
    TranscriptBatch,
    check_bounds,
    check_clusters,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
    warn_privacy_leak,
)

__all__ = ["DPFCM", "DPFCMCorrected", "check_fcm_params", "corrected_centres", "fcm_centres", "fcm_memberships",
           "random_memberships"]


def random_memberships(n: int, c: int, rng: np.random.Generator) -> np.ndarray:
    """Random n×c membership matrix, entries in (0, 1), rows summing to 1 (step 2)."""
    U = rng.random((n, c)) + 1e-12
    return U / U.sum(axis=1, keepdims=True)


def fcm_centres(X: np.ndarray, U: np.ndarray, m: float) -> np.ndarray:
    """Eq. 5: v_j = Σ_i u_ij^m x_i / Σ_i u_ij^m.  ``U`` may carry leading batch axes."""
    W = U * U if m == 2.0 else U ** m
    return (np.swapaxes(W, -1, -2) @ X) / W.sum(axis=-2)[..., None]


def fcm_memberships(X: np.ndarray, V: np.ndarray, m: float, x_sq: np.ndarray | None = None) -> np.ndarray:
    """Eq. 7: u_ij = 1 / Σ_c (d_ij / d_ic)^(2/(m−1)).

    Computed as (d²_min,i / d²_ij)^(1/(m−1)) normalised over j — the same value,
    with every power in (0, 1] (no overflow).  A record that coincides with a
    centre belongs to it (shared equally when it coincides with several).
    ``x_sq`` (the rows' squared norms) may be passed to save recomputing it.
    ``V`` may carry leading batch axes (…, c, d); the result is then (…, n, c).
    """
    if x_sq is None:
        x_sq = np.einsum("ij,ij->i", X, X)
    d2 = x_sq[:, None] - 2.0 * (X @ np.swapaxes(V, -1, -2)) + np.sum(V * V, axis=-1)[..., None, :]
    np.maximum(d2, 0.0, out=d2)
    zero = d2 <= 1e-300
    hit = zero.any(axis=-1, keepdims=True)
    any_hit = bool(hit.any())
    if any_hit:
        d2 = np.where(hit, 1.0, d2)          # placeholder rows, replaced below
    inv = d2.min(axis=-1, keepdims=True) / d2
    if m != 2.0:
        inv **= 1.0 / (m - 1.0)
    if any_hit:
        inv = np.where(hit, zero.astype(np.float64), inv)
    inv /= inv.sum(axis=-1, keepdims=True)
    return inv


def check_fcm_params(c: object, m: object, n_iter: object, iter_name: str) -> tuple[int, float, int]:
    """Validate FCM's (c ≥ 2, fuzzifier m > 1, iteration count ≥ 1); return them typed."""
    c_ = int(check_positive(c, name="n_clusters", integer=True, minimum=2, inclusive=True))
    m_ = float(check_positive(m, name="m (fuzzifier)", minimum=1.0))
    it = int(check_positive(n_iter, name=iter_name, integer=True, minimum=1, inclusive=True))
    return c_, m_, it


class DPFCM:
    """DP-FCM as published (the DP-FCM paper §4.1); releases the records' labels.

    Parameters
    ----------
    epsilon : float
        The paper's ε (used in full at every iteration, as published).
    c : int
        Number of clusters.
    m : float
        Fuzzifier (paper: 2).
    max_iter : int
        Iteration cap (paper: 1000).
    tol : float
        Stop when no membership changes by ``tol`` or more (paper: 0.005).
    bounds : (lo, hi), optional
        Public box used for the [0, 1] normalisation (records clipped into it).
        ``None`` (as published) normalises with the data's min/max and emits a
        :class:`PrivacyLeakWarning`.
    sensitivity : float, optional
        Δf per centre (L1, normalised units).  Default ``None`` = d.
    """

    name = "dpfcm"

    def __init__(self, epsilon: float = 1.0, n_clusters: int = 3, *, m: float = 2.0, max_iter: int = 1000,
                 tol: float = 0.005, bounds: tuple[object, object] | None = None,
                 sensitivity: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = None if sensitivity is None else float(check_positive(sensitivity, name="sensitivity"))
        self.n_clusters, self.m, self.max_iter = check_fcm_params(n_clusters, m, max_iter, "max_iter")
        self.tol = float(check_positive(tol, name="tol"))
        if bounds is not None:
            check_bounds(bounds)
        self.bounds = bounds
        self.claim = PrivacyClaim(self.epsilon, 0.0, "add-remove")  # the paper's claim (§5)

    def __repr__(self) -> str:
        return (f"DPFCM(epsilon={self.epsilon:g}, n_clusters={self.n_clusters}, m={self.m:g}, max_iter={self.max_iter}, "
                f"tol={self.tol:g}, bounds={self.bounds!r}, sensitivity={self.sensitivity!r})")

    def _normalise(self, X: np.ndarray) -> np.ndarray:
        if self.bounds is None:
            warn_privacy_leak("dpfcm: normalising with the data's own min/max (as published); "
                              "give public bounds=(lo, hi) to avoid this leak")
            lo, hi = X.min(axis=0), X.max(axis=0)
            width = np.where(hi > lo, hi - lo, 1.0)
            return (X - lo) / width
        lo, hi = check_bounds(self.bounds, X.shape[1])
        return (np.clip(X, lo, hi) - lo) / (hi - lo)

    def _prepare(self, X: np.ndarray, rng: object) -> tuple[np.ndarray, np.random.Generator, float]:
        X = check_data(X)
        gen = check_rng(rng)
        check_clusters(self.n_clusters, X, name="n_clusters")
        Z = self._normalise(X)
        delta_f = float(Z.shape[1]) if self.sensitivity is None else self.sensitivity
        return Z, gen, delta_f / self.epsilon  # default Δf = d (L1 diameter of [0, 1]^d), see module docstring

    def _run(self, Z: np.ndarray, rng: np.random.Generator, scale: float, runs: int, record: bool = False
             ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """``runs`` independent runs at once (steps 2–8, vectorised over runs).

        Returns the labels (runs, n), with ``record`` the noisy centres of every
        iteration (runs, max_iter, c, d; NaN after a run stopped), and the
        number of iterations each run made.
        """
        n, d = Z.shape
        z_sq = np.einsum("ij,ij->i", Z, Z)
        U = rng.random((runs, n, self.n_clusters)) + 1e-12          # step 2, as random_memberships
        U /= U.sum(axis=-1, keepdims=True)
        history = np.full((runs, self.max_iter, self.n_clusters, d), np.nan) if record else None
        n_iter = np.zeros(runs, dtype=np.int64)
        active = np.arange(runs)
        for it in range(self.max_iter):
            Ua = U[active]
            V = fcm_centres(Z, Ua, self.m) + rng.laplace(0.0, scale, size=(active.size, self.n_clusters, d))
            if history is not None:
                history[active, it] = V
            n_iter[active] += 1
            U_new = fcm_memberships(Z, V, self.m, z_sq)
            change = np.abs(U_new - Ua).reshape(active.size, -1).max(axis=1)
            U[active] = U_new
            active = active[change >= self.tol]             # stop rule per run
            if active.size == 0:
                break
        return np.argmax(U, axis=-1), history, n_iter

    def _labels(self, Z: np.ndarray, rng: np.random.Generator, scale: float, runs: int) -> np.ndarray:
        """``runs`` independent runs at once: (runs, n) labels."""
        return self._run(Z, rng, scale, runs)[0]

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Labels:
        Z, gen, scale = self._prepare(X, rng)
        return Labels(self._labels(Z, gen, scale, 1)[0])

    def _block(self, Z: np.ndarray) -> int:
        return max(1, min(256, 2**22 // max(1, Z.shape[0] * self.n_clusters)))   # fixed by the problem only

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        """``n`` releases, vectorised over blocks of runs (same seed ⇒ same batch)."""
        Z, gen, scale = self._prepare(X, rng)
        block = self._block(Z)
        parts = [self._labels(Z, gen, scale, min(block, n - start)) for start in range(0, n, block)]
        return ReleaseBatch("labels", np.concatenate(parts) if parts else np.empty((0, Z.shape[0]), np.int64))

    # ------------------------------------------------------------------ transcript
    transcript_covers_release = False   # the labels are computed from the records too

    def transcript_config(self, d: int) -> dict[str, object]:
        """Public parameters (the box only when it is public: a data-derived one is never put here)."""
        lo, hi = (None, None) if self.bounds is None else (tuple(v.tolist()) for v in check_bounds(self.bounds, d))
        return {"epsilon": self.epsilon, "n_clusters": self.n_clusters, "m": self.m, "max_iter": self.max_iter, "tol": self.tol,
                "scale": (float(d) if self.sensitivity is None else self.sensitivity) / self.epsilon,
                "lo": lo, "hi": hi}

    def release_transcript(self, X: np.ndarray, rng: np.random.Generator) -> Transcript:
        """``centres`` (max_iter × c × d, NaN after the stop) and ``iterations`` — the draws of :meth:`release`."""
        Z, gen, scale = self._prepare(X, rng)
        _, history, n_iter = self._run(Z, gen, scale, 1, record=True)
        if history is None:
            raise RuntimeError("_run(record=True) returned no history")
        return Transcript({"centres": history[0], "iterations": n_iter[:1].astype(np.float64)}, self.name,
                          self.transcript_config(Z.shape[1]))

    def release_transcript_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> TranscriptBatch:
        """``n`` transcripts, vectorised over the same blocks of runs as :meth:`release_many`."""
        Z, gen, scale = self._prepare(X, rng)
        block = self._block(Z)
        hist, iters = [], []
        for start in range(0, n, block):
            _, h, k = self._run(Z, gen, scale, min(block, n - start), record=True)
            if h is None:
                raise RuntimeError("_run(record=True) returned no history")
            hist.append(h)
            iters.append(k)
        d = Z.shape[1]
        return TranscriptBatch({"centres": np.concatenate(hist) if hist else np.empty((0, self.max_iter, self.n_clusters, d)),
                                "iterations": np.concatenate(iters).astype(np.float64)[:, None] if iters
                                else np.empty((0, 1))}, self.name, self.transcript_config(d))

    def release_from_transcript(self, transcript: Transcript, X: np.ndarray | None = None) -> Labels:
        """The labels of ``X`` from the last noisy centres (needs ``X``: the release is not post-processing)."""
        if X is None:
            raise InvalidInputError(f"{self.name}: the labels depend on the records; pass X")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)   # already warned when the transcript was drawn
            Z = self._normalise(check_data(X))
        last = int(transcript["iterations"][0]) - 1
        return Labels(np.argmax(fcm_memberships(Z, np.asarray(transcript["centres"][last]), self.m), axis=-1))


class DPFCMCorrected:
    """DP-FCM with the privacy accounting fixed; releases noisy centres only.

    Parameters
    ----------
    epsilon : float
        Total budget, split equally over ``iterations`` (add-remove).
    c : int
        Number of clusters.
    m : float
        Fuzzifier (≥ 1 needed for the sensitivity bound; default 2).
    iterations : int
        Fixed number of iterations T (no data-dependent stopping).  Default 5:
        without noise, FCM from a random start has converged by then on iris
        and breast cancer, and fewer iterations leave more budget for each.
    bounds : (lo, hi)
        Public box; records are clipped into it.  Default (0, 1): data already
        normalised as in the paper's step 1.
    """

    name = "dpfcm-corrected"

    def __init__(self, epsilon: float = 1.0, n_clusters: int = 3, *, m: float = 2.0, iterations: int = 5,
                 bounds: tuple[object, object] | None = (0.0, 1.0)) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_clusters, self.m, self.iterations = check_fcm_params(n_clusters, m, iterations, "iterations")
        check_bounds(bounds)
        self.bounds = bounds
        self.claim = PrivacyClaim(self.epsilon, 0.0, "add-remove")

    def __repr__(self) -> str:
        return (f"DPFCMCorrected(epsilon={self.epsilon:g}, n_clusters={self.n_clusters}, m={self.m:g}, "
                f"iterations={self.iterations}, bounds={self.bounds!r})")

    def _setup(self, X: np.ndarray, rng: object) -> tuple[np.ndarray, np.random.Generator, float]:
        """Records clipped into the box and mapped to [−½, ½]^d, the generator, the Laplace scale Δ/(ε/T)."""
        X = check_data(X)
        gen = check_rng(rng)
        check_clusters(self.n_clusters, X, name="n_clusters")
        lo, hi = check_bounds(self.bounds, X.shape[1])
        Z = (np.clip(X, lo, hi) - lo) / (hi - lo) - 0.5      # in [−½, ½]^d
        return Z, gen, (Z.shape[1] / 2.0 + 1.0) / (self.epsilon / self.iterations)

    def _draws(self, Z: np.ndarray, rng: np.random.Generator, scale: float, runs: int | None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Noisy sums (…, T, c, d) and weights (…, T, c); ``runs=None`` is one run without a batch axis."""
        shape = () if runs is None else (runs,)
        d = Z.shape[1]
        U = rng.random(shape + (Z.shape[0], self.n_clusters)) + 1e-12     # as random_memberships, batched
        U /= U.sum(axis=-1, keepdims=True)
        V = np.zeros(shape + (self.n_clusters, d))
        sums = np.empty(shape + (self.iterations, self.n_clusters, d))
        weights = np.empty(shape + (self.iterations, self.n_clusters))
        for t in range(self.iterations):
            if t:
                U = fcm_memberships(Z, V, self.m)             # from the previous noisy centres
            W = U ** self.m
            S = np.swapaxes(W, -1, -2) @ Z + rng.laplace(0.0, scale, size=shape + (self.n_clusters, d))
            W_noisy = W.sum(axis=-2) + rng.laplace(0.0, scale, size=shape + (self.n_clusters,))
            V = corrected_centres(V, S, W_noisy)
            sums[..., t, :, :], weights[..., t, :] = S, W_noisy
        return sums, weights

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Centroids:
        Z, gen, scale = self._setup(X, rng)
        return self.release_from_transcript(self._transcript(*self._draws(Z, gen, scale, None), Z.shape[1]))

    # ------------------------------------------------------------------ transcript
    transcript_covers_release = True

    def transcript_config(self, d: int) -> dict[str, object]:
        lo, hi = check_bounds(self.bounds, d)
        return {"epsilon": self.epsilon, "n_clusters": self.n_clusters, "m": self.m, "iterations": self.iterations,
                "scale": (d / 2.0 + 1.0) / (self.epsilon / self.iterations), "lo": tuple(lo.tolist()),
                "hi": tuple(hi.tolist())}

    def _transcript(self, sums: np.ndarray, weights: np.ndarray, d: int) -> Transcript:
        return Transcript({"sums": sums, "weights": weights}, self.name, self.transcript_config(d))

    def release_transcript(self, X: np.ndarray, rng: np.random.Generator) -> Transcript:
        """``sums`` (T × c × d) and ``weights`` (T × c) — the draws :meth:`release` makes for the same seed."""
        Z, gen, scale = self._setup(X, rng)
        return self._transcript(*self._draws(Z, gen, scale, None), Z.shape[1])

    def release_transcript_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> TranscriptBatch:
        """``n`` transcripts, vectorised over runs (same seed ⇒ same batch)."""
        Z, gen, scale = self._setup(X, rng)
        sums, weights = self._draws(Z, gen, scale, int(n))
        return TranscriptBatch({"sums": sums, "weights": weights}, self.name, self.transcript_config(Z.shape[1]))

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int) -> ReleaseBatch:
        """``n`` releases from :meth:`release_transcript_many`, post-processed vectorised over runs."""
        batch = self.release_transcript_many(X, rng, n)
        sums, weights = batch.statistics["sums"], batch.statistics["weights"]
        lo, hi = check_bounds(self.bounds, sums.shape[-1])
        V = np.zeros((sums.shape[0],) + sums.shape[-2:])
        for t in range(sums.shape[1]):
            V = corrected_centres(V, sums[:, t], weights[:, t])
        return ReleaseBatch("centroids", lo + (V + 0.5) * (hi - lo), weights[:, -1])

    def release_from_transcript(self, transcript: Transcript, X: np.ndarray | None = None) -> Centroids:
        """The centres (mapped back to the box) and last noisy weights of a run with this transcript."""
        sums = np.asarray(transcript["sums"], dtype=np.float64)
        weights = np.asarray(transcript["weights"], dtype=np.float64)
        lo, hi = check_bounds(self.bounds, sums.shape[-1])
        V = np.zeros(sums.shape[-2:])
        for t in range(sums.shape[0]):
            V = corrected_centres(V, sums[t], weights[t])
        return Centroids(lo + (V + 0.5) * (hi - lo), weights[-1])


def corrected_centres(V: np.ndarray, S: np.ndarray, W: np.ndarray) -> np.ndarray:
    """One iteration's post-processing in DP-FCM-corrected: S'/W' where W' > 0 (else the previous
    centre), clipped into [−½, ½]^d.  Any leading batch axes."""
    ok = W > 0
    V = np.where(ok[..., None], S / np.where(ok, W, 1.0)[..., None], V)
    return np.clip(V, -0.5, 0.5)
