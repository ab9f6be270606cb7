"""Deterministic replays of built-in mechanisms' transcripts (issue 10).

The auditor knows both datasets of a pair.  Given a transcript's prefix (the
previous noisy centres, the released threshold, …) it can recompute the exact
statistic each draw perturbed, under D and under D′, and so the log-likelihood
ratio of every draw: ln f(y | D) − ln f(y | D′).  Summed over the draws this
is the transcript's privacy loss (when the replay is exact), whose threshold
events are the most powerful tests (Neyman–Pearson).

A replay is auditor-side code, written against the mechanism's documented
algorithm — never taken from the audited code.  Its output is a fixed function
of the release (same pair, same transcript ⇒ same numbers), so a threshold on
it is a valid event whatever its quality: a wrong or approximate replay only
weakens the test, it cannot make a bound unsound.  Approximations made here
are stated per replay (the random initial memberships of DP-FCM are not in the
transcript, so their first iteration is scored at the memberships' mean).

``REPLAYS`` maps a transcript's ``source`` to its replay; :func:`replay_for`
looks one up.  Each replay's :meth:`llr` returns named groups of
per-release log-likelihood ratios, shape (releases, columns).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from mechanisms.base import InvalidInputError, Transcript, TranscriptBatch
from mechanisms.dpfcm import corrected_centres, fcm_centres, fcm_memberships
from mechanisms.dpkccm import nearest_centroid, update_centroids
from mechanisms.grid import Grid, cell_ids

__all__ = ["REPLAYS", "Replay", "laplace_llr", "replay_for"]

Batch = TranscriptBatch


class Replay(Protocol):
    """Recomputes the exact statistics of a transcript under two hypothesised datasets.

    ``exact`` is True when the summed ratio is the transcript's exact privacy
    loss (no approximation), so ceilings may be simulated from it.
    """

    exact: bool

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]: ...


def laplace_llr(y: np.ndarray, mean_D: np.ndarray, mean_Dp: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """ln f(y | mean_D) − ln f(y | mean_D′) for Laplace noise of ``scale``, elementwise.

    Computed as clip(2s(μ − y), −Δ, Δ)/b with Δ = |mean_D′ − mean_D|, μ their
    midpoint and s the sign of mean_D′ − mean_D — the same value as
    (|y − mean_D′| − |y − mean_D|)/b, but on the two plateaus (y beyond both
    means) it is ±Δ/b exactly, whatever y.  The direct form rounds differently
    for different y there, and those rounding patterns differ between releases
    of D and of D′ (a Laplace draw added to different means has different
    low-order bits): an event "the ratio equals its maximum to the last bit"
    would then separate D from D′ through floating-point artefacts — a
    floating-point attack (Mironov, CCS 2012), outside what an ε audit tests.
    """
    mean_D = np.asarray(mean_D, dtype=np.float64)
    mean_Dp = np.asarray(mean_Dp, dtype=np.float64)
    gap = np.abs(mean_Dp - mean_D)
    sign = np.sign(mean_Dp - mean_D)
    return np.clip(sign * (mean_D + mean_Dp - 2.0 * np.asarray(y, dtype=np.float64)), -gap, gap) / scale


def _laplace_log_below(x: np.ndarray) -> np.ndarray:
    """ln P[Lap(1) < x], stable in both tails."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x < 0, x - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(x))))


def _box(config: Mapping[str, Any], d: int) -> tuple[np.ndarray, np.ndarray]:
    lo = np.broadcast_to(np.asarray(config["lo"], dtype=np.float64), (d,))
    hi = np.broadcast_to(np.asarray(config["hi"], dtype=np.float64), (d,))
    return lo, hi


def _stack(batch: Batch | Sequence[Transcript]) -> Batch:
    if isinstance(batch, TranscriptBatch):
        return batch
    stacked = TranscriptBatch.stack(list(batch))
    if not isinstance(stacked, TranscriptBatch):
        raise InvalidInputError("these transcripts do not stack (different shapes); replay them one at a time")
    return stacked


# --------------------------------------------------------------------------- #
# DP-KCCM (the DP-KCCM paper): 12 iterations of noisy per-cluster sums and counts
# --------------------------------------------------------------------------- #
class DPKCCMReplay:
    """Each iteration: assign the records to the previous centroids (computed from the
    transcript exactly as the mechanism does), sum them per cluster, Laplace(Δ/ε_it) on
    every sum coordinate and count.  Exact.  Groups: ``iteration`` (12 columns)."""

    exact = True

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        batch = _stack(batch)
        init = np.asarray(batch.statistics["initial"], dtype=np.float64)
        sums = np.asarray(batch.statistics["sums"], dtype=np.float64)
        counts = np.asarray(batch.statistics["counts"], dtype=np.float64)
        R, iters, m, d = sums.shape
        lo, hi = _box(self.config, d)
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        shares = np.asarray(self.config["shares"], dtype=np.float64)
        delta = float(self.config["sensitivity"])
        Xs = [np.clip(np.asarray(X, dtype=np.float64), lo, hi) - mid for X in (D, D_prime)]
        C = init - mid
        out = np.zeros((R, iters))
        for it in range(iters):
            exact = []
            for Xc in Xs:
                onehot = (nearest_centroid(Xc, C)[..., None] == np.arange(m)).astype(np.float64)
                exact.append((np.swapaxes(onehot, -1, -2) @ Xc, onehot.sum(axis=-2)))
            scale = delta / shares[it]
            out[:, it] = (laplace_llr(sums[:, it], exact[0][0], exact[1][0], scale).sum(axis=(1, 2))
                          + laplace_llr(counts[:, it], exact[0][1], exact[1][1], scale).sum(axis=1))
            C = update_centroids(C, sums[:, it], counts[:, it], half)
        return {"iteration": out}


# --------------------------------------------------------------------------- #
# DP-DBSCAN (the DP-DBSCAN paper): the noisy histogram (naive or sparse) and the noisy n
# --------------------------------------------------------------------------- #
class DPDBSCANReplay:
    """Cell counts under each dataset; Lap(1/ε_h) per cell.  ``naive``: every cell's
    density.  ``sparse``: for the cells whose counts differ, the density of the released
    value or the probability of staying below T; plus the noisy n.  Exact.
    Groups: ``histogram`` (1 column) and, when n is a draw, ``n``."""

    exact = True

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        cfg = self.config
        self.grid = Grid(np.asarray(cfg["origin"], dtype=np.float64), float(cfg["width"]),
                         tuple(int(s) for s in cfg["shape"]))
        self.scale = 1.0 / float(cfg["epsilon_histogram"])

    def _counts(self, X: np.ndarray) -> np.ndarray:
        return np.bincount(cell_ids(np.asarray(X, dtype=np.float64), self.grid),
                           minlength=self.grid.n_cells).astype(np.float64)

    def llr(self, batch: Batch | Sequence[Transcript], D: np.ndarray, D_prime: np.ndarray
            ) -> dict[str, np.ndarray]:
        cD, cDp = self._counts(D), self._counts(D_prime)
        diff = np.flatnonzero(cD != cDp)
        if self.config["histogram"] == "naive":
            h = _stack(batch).statistics["histogram"]
            llr = laplace_llr(np.asarray(h[:, diff], dtype=np.float64), cD[diff], cDp[diff], self.scale).sum(axis=1)
            return {"histogram": llr[:, None]}
        return self._sparse(list(batch), cD[diff], cDp[diff], diff, len(D), len(D_prime))

    def _sparse(self, items: list[Transcript], aD: np.ndarray, aDp: np.ndarray, diff: np.ndarray,
                nD: int, nDp: int) -> dict[str, np.ndarray]:
        from mechanisms.grid import tau0
        cfg = self.config
        eps_h = float(cfg["epsilon_histogram"])
        kappa, n_cells = int(cfg["kappa"]), self.grid.n_cells
        hist = np.zeros(len(items))
        n_llr = np.zeros(len(items))
        has_n = bool(items) and "n_noisy" in items[0].statistics
        for r, t in enumerate(items):              # ragged releases: one at a time
            if has_n:
                n_used = float(t["n_noisy"][0])
                scale_n = 1.0 / float(cfg["epsilon_n"])
                if n_used <= 1.0:                  # the mechanism reports max(ñ, 1)
                    n_llr[r] = (_laplace_log_below((1.0 - nD) / scale_n)
                                - _laplace_log_below((1.0 - nDp) / scale_n))
                else:
                    n_llr[r] = laplace_llr(n_used, nD, nDp, scale_n)
            else:
                n_used = float(cfg["n_used"]) if cfg.get("n_used") is not None else float("nan")
            T = (math.log(n_cells / n_used) / eps_h if n_cells > 2.0 * n_used
                 else tau0(kappa, n_cells, eps_h, float(cfg["beta"])) / kappa)
            cells, values = np.asarray(t["cells"]), np.asarray(t["values"], dtype=np.float64)
            pos = np.minimum(np.searchsorted(cells, diff), max(cells.size - 1, 0))
            released = (cells.size > 0) & (cells[pos] == diff) if cells.size else np.zeros(diff.size, bool)
            y = values[pos] if cells.size else np.zeros(diff.size)
            below = (_laplace_log_below((T - aD) / self.scale) - _laplace_log_below((T - aDp) / self.scale))
            hist[r] = float(np.where(released, laplace_llr(y, aD, aDp, self.scale), below).sum())
        out = {"histogram": hist[:, None]}
        if has_n:
            out["n"] = n_llr[:, None]
        return out


# --------------------------------------------------------------------------- #
# DP-FCM corrected and as published (the DP-FCM paper)
# --------------------------------------------------------------------------- #
_MEAN_POWER_DRAWS = 200_000


def _mean_membership_power(c: int, m: float) -> float:
    """E[u^m] for one entry of a row of c uniforms normalised to sum 1 (the random start).

    Estimated once from a fixed seed (a constant of the replay, chosen before any
    release is seen); standard error below 10⁻³.
    """
    U = np.random.default_rng(20240610).random((_MEAN_POWER_DRAWS, c)) + 1e-12
    U /= U.sum(axis=1, keepdims=True)
    return float(np.mean(U ** m))


class DPFCMCorrectedReplay:
    """Iterations ≥ 2: memberships from the previous noisy centres (recomputed from the
    transcript), exact Σu^m(x − ½) and Σu^m, Laplace(scale).  Iteration 1 uses random
    memberships that are not released: it is scored at their mean, E[u^m] per entry
    (approximate).  Groups: ``iteration`` (T columns)."""

    exact = False

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        self.mean_power = _mean_membership_power(int(config["c"]), float(config["m"]))

    def _normalised(self, X: np.ndarray, d: int) -> np.ndarray:
        lo, hi = _box(self.config, d)
        return (np.clip(np.asarray(X, dtype=np.float64), lo, hi) - lo) / (hi - lo) - 0.5

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        batch = _stack(batch)
        S = np.asarray(batch.statistics["sums"], dtype=np.float64)
        W = np.asarray(batch.statistics["weights"], dtype=np.float64)
        R, T, c, d = S.shape
        m, scale = float(self.config["m"]), float(self.config["scale"])
        Zs = [self._normalised(X, d) for X in (D, D_prime)]
        out = np.zeros((R, T))
        V = np.zeros((R, c, d))
        for t in range(T):
            exact = []
            for Z in Zs:
                if t == 0:
                    w = np.full((len(Z), c), self.mean_power)
                    exact.append((np.broadcast_to(w.T @ Z, (R, c, d)), np.broadcast_to(w.sum(axis=0), (R, c))))
                else:
                    Wt = fcm_memberships(Z, V, m) ** m
                    exact.append((np.swapaxes(Wt, -1, -2) @ Z, Wt.sum(axis=-2)))
            out[:, t] = (laplace_llr(S[:, t], exact[0][0], exact[1][0], scale).sum(axis=(1, 2))
                         + laplace_llr(W[:, t], exact[0][1], exact[1][1], scale).sum(axis=1))
            V = corrected_centres(V, S[:, t], W[:, t])
        return {"iteration": out}


class DPFCMReplay:
    """DP-FCM as published: noisy centres of every iteration (Lap(scale) per coordinate).
    Iterations ≥ 2 are replayed from the previous noisy centres on the records normalised
    as the mechanism does (public box, or each dataset's own min/max as published); the
    first, from random memberships, is scored at the records' mean (approximate).  The
    stopping rule is deterministic given the transcript from iteration 2 on: a run that
    the hypothesised dataset would have stopped earlier, or not stopped, is impossible
    under it (ratio ±∞).  Groups: ``centres`` (1 column), ``stop`` (1 column)."""

    exact = False

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def _normalised(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if self.config.get("lo") is None:
            lo, hi = X.min(axis=0), X.max(axis=0)
            return (X - lo) / np.where(hi > lo, hi - lo, 1.0)
        lo, hi = _box(self.config, X.shape[1])
        return (np.clip(X, lo, hi) - lo) / (hi - lo)

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        batch = _stack(batch)
        V = np.asarray(batch.statistics["centres"], dtype=np.float64)       # (R, max_iter, c, d)
        iters = np.asarray(batch.statistics["iterations"], dtype=np.float64).reshape(-1).astype(np.int64)
        R, max_iter, c, d = V.shape
        m, scale, tol = float(self.config["m"]), float(self.config["scale"]), float(self.config["tol"])
        Zs = [self._normalised(X) for X in (D, D_prime)]
        centres = np.zeros(R)
        log_stop = np.zeros((2, R))                  # 0, or −inf where the run is impossible under H
        previous: list[np.ndarray | None] = [None, None]   # memberships from the previous noisy centres
        for it in range(int(iters.max()) if R else 0):
            live = iters > it
            Vt = np.where(live[:, None, None], V[:, it], 0.0)
            exact = []
            for h, Z in enumerate(Zs):
                if it == 0:                          # random memberships: scored at their mean
                    exact.append(np.broadcast_to(Z.mean(axis=0), (R, c, d)))
                else:
                    exact.append(fcm_centres(Z, previous[h], m))
                current = fcm_memberships(Z, Vt, m)
                if it >= 1:                          # the stop rule, deterministic from iteration 2 on
                    change = np.abs(current - previous[h]).reshape(R, -1).max(axis=1)
                    went_on = it < iters - 1
                    stopped = (it == iters - 1) & (iters < max_iter)
                    bad = live & ((went_on & (change < tol)) | (stopped & (change >= tol)))
                    log_stop[h] = np.where(bad, -np.inf, log_stop[h])
                previous[h] = current
            centres += np.where(live, laplace_llr(Vt, exact[0], exact[1], scale).sum(axis=(1, 2)), 0.0)
        with np.errstate(invalid="ignore"):
            stop = log_stop[0] - log_stop[1]
        stop = np.where(np.isnan(stop), 0.0, stop)                # both impossible: no evidence
        return {"centres": centres[:, None], "stop": stop[:, None]}


# --------------------------------------------------------------------------- #
# IBM diffprivlib KMeans (instrumented draws; mechanisms/diffprivlib_adapter.py)
# --------------------------------------------------------------------------- #
def _folded_geometric_logpmf(y: np.ndarray, a: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """ln P[y] for diffprivlib's GeometricFolded(sensitivity 1, lower ½): y = fold(a + K),
    K two-sided geometric P[K = k] ∝ e^(−ε|k|), values below ½ reflected (v ↦ 1 − v)."""
    log_p = -epsilon
    log_norm = np.log1p(-np.exp(log_p)) - np.log1p(np.exp(log_p))
    return np.logaddexp(log_norm + log_p * np.abs(y - a), log_norm + log_p * np.abs(1.0 - y - a))


def _bounded_laplace_log_mass(x: np.ndarray, scale: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """ln ∫_lo^hi e^(−|y − x|/b) dy: the normaliser of diffprivlib's LaplaceBoundedDomain
    (Laplace(x, b) restricted to [lo, hi]), for x in [lo, hi]."""
    return np.log(scale * (2.0 - np.exp(-(x - lo) / scale) - np.exp(-(hi - x) / scale)))


class DiffprivlibKMeansReplay:
    """diffprivlib's KMeans from its recorded draws: the iteration count it computes from n
    (``_calc_iters``), labels from the previous centres, which clusters draw (the empty ones
    do not), the folded-geometric count and bounded-Laplace sums with the recorded ε and
    scales.  A transcript whose iteration count or draw pattern the dataset cannot produce
    is impossible under it (ratio ±∞).  Exact for the draws.  Groups: ``iteration`` (7)."""

    exact = True

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def _iterations(self, n: int, d: int) -> int:
        """diffprivlib 0.6 ``KMeans._calc_iters`` (ρ = 0.225), from the public k, ε and d and the dataset's n."""
        k, eps, rho = int(self.config["n_clusters"]), float(self.config["epsilon"]), 0.225
        eps_m = math.sqrt(500.0 * k ** 3 / n ** 2 * (d + (4.0 * d * rho ** 2) ** (1.0 / 3.0)) ** 3)
        return int(max(min(eps / eps_m, 7), 2))

    def llr(self, batch: Batch, D: np.ndarray, D_prime: np.ndarray) -> dict[str, np.ndarray]:
        st = {k: np.asarray(v, dtype=np.float64) for k, v in _stack(batch).statistics.items()}
        counts, sums = st["counts"], st["sums"]
        R, I, k = counts.shape
        d = sums.shape[-1]
        lo, hi = _box(self.config, d)
        Xs = [np.clip(np.asarray(X, dtype=np.float64), lo, hi) for X in (D, D_prime)]
        iters = st["iterations"].reshape(R).astype(np.int64)
        # ln f(T | D) − ln f(T | D′) per iteration, with −∞/+∞ when D/D′ cannot produce the transcript.
        possible = [iters == self._iterations(len(X), d) for X in Xs]
        ratio = np.zeros((R, I))
        centres = np.array(st["initial"], dtype=np.float64)
        for it in range(I):
            live = iters > it
            drawn = ~np.isnan(counts[:, it])
            c_obs = np.where(drawn, counts[:, it], 1.0)
            y = np.where(drawn[..., None], sums[:, it], 0.0)
            exact = []
            for h, Xc in enumerate(Xs):
                d2 = ((Xc[None, :, None, :] - centres[:, None, :, :]) ** 2).sum(axis=-1)    # (R, n, k)
                onehot = (np.argmin(d2, axis=-1)[..., None] == np.arange(k)).astype(np.float64)
                true_n = onehot.sum(axis=1)
                possible[h] = possible[h] & ~(live & ~np.all(drawn == (true_n > 0), axis=1))
                # diffprivlib clips the sum into the domain [c̃·lo, c̃·hi] before adding noise
                exact.append((true_n, np.clip(np.swapaxes(onehot, 1, 2) @ Xc, c_obs[..., None] * lo,
                                              c_obs[..., None] * hi)))
            eps_n = np.where(drawn, st["epsilon_counts"][:, it], 1.0)
            count_ratio = (_folded_geometric_logpmf(c_obs, exact[0][0], eps_n)
                           - _folded_geometric_logpmf(c_obs, exact[1][0], eps_n))   # integers: exact
            scale = np.where(drawn[..., None], st["scale_sums"][:, it], 1.0)
            # Computed jointly, as laplace_llr, so the ratio is exactly flat where y is beyond both means.
            sum_ratio = (laplace_llr(y, exact[0][1], exact[1][1], scale)
                         + _bounded_laplace_log_mass(exact[1][1], scale, c_obs[..., None] * lo, c_obs[..., None] * hi)
                         - _bounded_laplace_log_mass(exact[0][1], scale, c_obs[..., None] * lo, c_obs[..., None] * hi))
            step = np.where(drawn, count_ratio, 0.0).sum(axis=1) + np.where(drawn[..., None], sum_ratio, 0.0).sum(
                axis=(1, 2))
            ratio[:, it] = np.where(live, step, 0.0)
            centres = np.where((live[:, None] & drawn)[..., None], y / c_obs[..., None], centres)
        with np.errstate(invalid="ignore"):
            impossible = np.where(possible[0], 0.0, -np.inf) - np.where(possible[1], 0.0, -np.inf)
        impossible = np.where(np.isnan(impossible), 0.0, impossible)   # impossible under both: no evidence
        ratio[:, 0] += impossible
        return {"iteration": ratio}


REPLAYS: dict[str, Callable[[Mapping[str, Any]], Replay]] = {
    "dpkccm": DPKCCMReplay,
    "dpdbscan": DPDBSCANReplay,
    "dpdbscan-labels": DPDBSCANReplay,
    "dpfcm-corrected": DPFCMCorrectedReplay,
    "dpfcm": DPFCMReplay,
    "diffprivlib-kmeans": DiffprivlibKMeansReplay,
}


def replay_for(source: str, config: Mapping[str, Any]) -> Replay | None:
    """The built-in replay for a transcript's ``source``, or None (plug-ins: generic features only)."""
    factory = REPLAYS.get(source)
    return None if factory is None else factory(config)
