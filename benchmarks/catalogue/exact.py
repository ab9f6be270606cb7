"""Exact ε of the sparse-vector variants (and of report-noisy-max releasing
the noisy maximum's value) on one input pair, by numerical integration over
the threshold noise.

For a fixed-threshold SVT (Lyu et al. Alg. 1, 3, 4, 6; Alg. 2 when c = 1,
where it never redraws its threshold) the queries' outcomes are independent
given the threshold noise ρ = r: query j is ⊤ with probability
s_j(r) = P[a_j + ν_j ≥ T + r] = 1 − F_ν(T + r − a_j).  So

* a ⊤/⊥ pattern (cut after the c-th ⊤ when the mechanism aborts) has
  probability ∫ f_ρ(r) Π_{answered j} (s_j(r) if ⊤ else 1 − s_j(r)) dr, and
  the pair's ε is the largest |log-ratio| over the finitely many patterns;
* SVT3 with c = 1 releases (k, v): ⊥ for queries before k and the noisy
  answer v at k, with density f_ν(v − a_k) · ∫_{−∞}^{v − T} f_ρ(r)
  Π_{j<k} F_ν(T + r − a_j) dr; the pair's ε is the supremum of the
  |log-ratio| over k and v (and the "no ⊤" outcome).

The integrals use the trapezoid rule on a grid of step ``h`` over
[−L, L], L = 40 × the largest noise scale + the answers' range (the
Laplace mass outside is below e⁻⁴⁰), with the kinks of the integrand
(r = 0 and r = a_j − T) added to the grid; SVT3's density ratio is read
only for v − T in [−L/2, L/2], where the truncated lower tail of the inner
integral is negligible.  Report noisy max with its value released (Ding et al. Alg. 7,
:class:`~.noisy_max.ReportNoisyMax3`) has the density
g(x) = Σ_i f_i(x) Π_{j≠i} F_j(x) (f_i, F_i: Laplace density and CDF centred at
answer a_i); the pair's ε is sup_x |log g_D(x) − log g_D′(x)|, read in log
space on the same kind of grid (:func:`noisy_max_value_epsilon`).

The result is the ε of the
mechanism *on that pair* — a lower bound on its true ε, and the best any
auditor can certify with that pair.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats

from dpaudit.attacks.bounds import RATE_RATIO, TWO_LIMITS, epsilon_rate_ratio
from dpaudit.attacks.epsilon.pairs.neighbours import NeighbourPair

from .base import CatalogueMechanism
from .noisy_max import ReportNoisyMax3
from .rappor import Rappor
from .sparse_vector import SparseVectorBase, SparseVectorTechnique2, SparseVectorTechnique3

__all__ = ["best_event_bound", "exact_on_pair", "noisy_max_value_epsilon", "pair_epsilon", "pattern_probabilities"]


def _grid(mech: SparseVectorBase, answers: list[np.ndarray], h: float) -> np.ndarray:
    a = np.concatenate(answers)
    scale = max(mech.threshold_scale, mech.query_scale)
    span = 40.0 * scale + float(np.max(np.abs(a))) + abs(mech.threshold)
    kinks = np.concatenate([[0.0], a - mech.threshold])
    return np.unique(np.concatenate([np.arange(-span, span + h, h), kinks]))


def _above(mech: SparseVectorBase, a: np.ndarray, r: np.ndarray) -> np.ndarray:
    """s_j(r) for every query (rows) and grid point (columns)."""
    return stats.laplace(scale=mech.query_scale).sf(mech.threshold + r[None, :] - a[:, None])


def _patterns(m: int, c: int | None) -> list[tuple[int, ...]]:
    """Distinct output patterns: 1 = ⊤, 0 = ⊥, −1 = not answered (after the c-th ⊤)."""
    out = set()
    for bits in itertools.product((0, 1), repeat=m):
        seen, pat = 0, []
        for b in bits:
            if c is not None and seen >= c:
                pat.append(-1)
            else:
                pat.append(b)
                seen += b
        out.add(tuple(pat))
    return sorted(out)


def pattern_probabilities(mech: SparseVectorBase, a1: np.ndarray, a2: np.ndarray, h: float = 0.05
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(patterns, P[pattern | a1], P[pattern | a2]) of a fixed-threshold SVT with ⊤/⊥ outputs: every
    pattern (1 ⊤, 0 ⊥, −1 after the abort) with its probability under each answer vector (module doc)."""
    a1, a2 = np.asarray(a1, float), np.asarray(a2, float)
    r = _grid(mech, [a1, a2], h)
    w = stats.laplace(scale=mech.threshold_scale).pdf(r)
    pats = np.array(_patterns(a1.size, mech.c if mech.aborts else None))
    out = []
    for a in (a1, a2):
        s = _above(mech, a, r)                               # (m, grid)
        probs = np.empty(len(pats))
        for start in range(0, len(pats), 64):
            block = pats[start:start + 64]                   # (b, m)
            factor = np.where(block[:, :, None] == 1, s[None], np.where(block[:, :, None] == 0, 1 - s[None], 1.0))
            probs[start:start + 64] = np.trapezoid(w[None, :] * np.prod(factor, axis=1), r, axis=1)
        out.append(probs)
    return pats, out[0], out[1]


def _discrete(mech: SparseVectorBase, a1: np.ndarray, a2: np.ndarray, h: float) -> float:
    _, p, q = pattern_probabilities(mech, a1, a2, h)
    return float(np.max(np.abs(np.log(p) - np.log(q))))


def best_event_bound(p: np.ndarray, q: np.ndarray, n: int, *, alpha: float = 0.1,
                     statement: str = TWO_LIMITS) -> float:
    """The largest bound that any event of a discrete output with outcome probabilities ``p`` and ``q``
    certifies at its *expected* counts on ``n`` releases per dataset: by the Neyman–Pearson lemma the best
    events are the outcomes sorted by likelihood ratio, taken from the top (either direction).  What an
    auditor with the best event, and no luck, certifies at that sample size — the sample-size ceiling of a
    catalogue row (not a bound on ε).  ``statement``: two Clopper–Pearson limits at α/2 each
    ln(p_lo/q_hi), or the rate ratio's one limit at α (:func:`dpaudit.attacks.bounds.epsilon_rate_ratio`, what
    the estimator certifies with δ = 0 when the verdict is not at stake)."""
    best = 0.0
    for P, Q in ((np.asarray(p, float), np.asarray(q, float)), (np.asarray(q, float), np.asarray(p, float))):
        with np.errstate(divide="ignore", invalid="ignore"):
            order = np.argsort(-(np.log(P) - np.log(Q)), kind="stable")
        kp, kq = np.cumsum(P[order]) * n, np.cumsum(Q[order]) * n
        ok = (kp >= 1) & (kp < n)
        if not np.any(ok):
            continue
        if statement == RATE_RATIO:
            best = max(best, float(np.max(epsilon_rate_ratio(kp[ok], kq[ok], alpha=alpha))))
            continue
        lo = stats.beta.ppf(alpha / 2, kp[ok], n - kp[ok] + 1)
        hi = stats.beta.ppf(1 - alpha / 2, kq[ok] + 1, n - kq[ok])
        best = max(best, float(np.max(np.log(lo / hi))))
    return best


def _svt3(mech: SparseVectorTechnique3, a1: np.ndarray, a2: np.ndarray, h: float) -> float:
    r = _grid(mech, [a1, a2], h)
    w = stats.laplace(scale=mech.threshold_scale).pdf(r)
    nu = stats.laplace(scale=mech.query_scale)
    v = r + mech.threshold                                   # v − T on the grid
    logs, none = [], []
    for a in (a1, a2):
        below = nu.cdf(mech.threshold + r[None, :] - a[:, None])          # P[query j is ⊥ | r]
        prefix = np.vstack([np.ones_like(r), np.cumprod(below, axis=0)[:-1]])  # Π_{j<k}
        integrand = w[None, :] * prefix
        steps = (integrand[:, 1:] + integrand[:, :-1]) / 2 * np.diff(r)[None, :]
        G = np.hstack([np.zeros((a.size, 1)), np.cumsum(steps, axis=1)])  # ∫_{−L}^{v−T}
        with np.errstate(divide="ignore"):
            logs.append(np.log(nu.pdf(v[None, :] - a[:, None])) + np.log(G))
        none.append(np.log(np.trapezoid(w * np.prod(below, axis=0), r)))
    # Both densities well above underflow, and v − T in the inner half of the grid, where the
    # integral's missing mass below −L is negligible relative to G.
    ok = (logs[0] > -460) & (logs[1] > -460) & (np.abs(r) <= r[-1] / 2)
    with np.errstate(invalid="ignore"):
        dens = np.max(np.abs(logs[0] - logs[1])[ok]) if np.any(ok) else 0.0
    return float(max(dens, abs(none[0] - none[1])))


def pair_epsilon(mech: SparseVectorBase, a1: np.ndarray, a2: np.ndarray, h: float = 0.05) -> float:
    """Exact ε of ``mech`` between answer vectors ``a1`` and ``a2`` (see the module doc)."""
    a1, a2 = np.asarray(a1, float), np.asarray(a2, float)
    if not mech.query_noise:
        raise ValueError("no query noise: outcomes are deterministic given ρ (SVT5 is ∞, see its doc)")
    if isinstance(mech, SparseVectorTechnique3):
        if mech.c != 1:
            raise ValueError("the SVT3 density is implemented for c = 1")
        return _svt3(mech, a1, a2, h)
    if isinstance(mech, SparseVectorTechnique2) and mech.c != 1:
        raise ValueError("SVT2 redraws its threshold after each ⊤; exact only for c = 1")
    return _discrete(mech, a1, a2, h)


def noisy_max_value_epsilon(mech: ReportNoisyMax3, a1: np.ndarray, a2: np.ndarray, h: float = 0.05) -> float:
    """Exact ε of the noisy maximum's value (Laplace noise, scale b = 2/ε) between answer vectors ``a1``
    and ``a2``: sup_x |log g₁(x) − log g₂(x)| with g = Σ_i f_i Π_{j≠i} F_j, in log space (logpdf, logcdf)
    so the tails — where the ratio is largest — do not underflow; x over ±40·b around the answers."""
    a1, a2 = np.asarray(a1, float), np.asarray(a2, float)
    b = 2.0 / mech.epsilon
    lo = float(min(a1.min(), a2.min())) - 40.0 * b
    hi = float(max(a1.max(), a2.max())) + 40.0 * b
    x = np.unique(np.concatenate([np.arange(lo, hi + h, h), a1, a2]))
    noise = stats.laplace(scale=b)

    def log_density(a: np.ndarray) -> np.ndarray:
        log_f = noise.logpdf(x[None, :] - a[:, None])     # (m, grid)
        log_F = noise.logcdf(x[None, :] - a[:, None])
        total_F = log_F.sum(axis=0)
        return np.logaddexp.reduce(log_f + total_F[None, :] - log_F, axis=0)

    return float(np.max(np.abs(log_density(a1) - log_density(a2))))


def exact_on_pair(mech: CatalogueMechanism, pair: NeighbourPair) -> float | None:
    """The exact ε of a catalogue mechanism on one neighbouring pair, where the catalogue can compute
    it: the fixed-threshold sparse-vector variants (:func:`pair_epsilon`), report noisy max releasing its
    value (:func:`noisy_max_value_epsilon`) and RAPPOR (differing Bloom-filter bits × the per-bit ratio);
    None for the others.  No auditor can soundly certify more
    than this with that pair."""
    if not isinstance(mech, (Rappor, SparseVectorBase, ReportNoisyMax3)):
        return None
    a1, a2 = mech.query.answer(pair.D), mech.query.answer(pair.D_prime)
    if isinstance(mech, ReportNoisyMax3):
        return noisy_max_value_epsilon(mech, a1, a2)
    if isinstance(mech, Rappor):
        return float(mech.pair_epsilon(float(a1[0]), float(a2[0])))
    if isinstance(mech, SparseVectorBase):
        try:
            return float(pair_epsilon(mech, a1, a2))
        except ValueError:  # a variant with no finite exact value here (SVT5; SVT2/3 beyond c = 1)
            return None
    return None
