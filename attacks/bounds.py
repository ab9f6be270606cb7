"""Confidence bounds shared by every attack: Clopper–Pearson intervals and the
ε lower bound a pair of event frequencies certifies.

For an (ε, δ)-DP mechanism M, neighbouring D, D' and any event S,
P[M(D) ∈ S] ≤ e^ε · P[M(D') ∈ S] + δ, so with p = P[M(D) ∈ S] and
q = P[M(D') ∈ S]:   ε ≥ ln((p − δ) / q).
From k₁ of n₁ hits on D and k₂ of n₂ on D', the certified bound replaces p by
its Clopper–Pearson lower limit and q by its upper limit, each at confidence
1 − α/2, so the pair holds jointly with probability ≥ 1 − α (union bound).

For a membership attack with true-positive rate TPR and false-positive rate
FPR the same argument gives ε ≥ ln((TPR − δ)/FPR) and, applied to the
complement event, ε ≥ ln((1 − FPR − δ)/(1 − TPR)) (Kairouz et al. 2015;
Jagielski et al. 2020); :func:`epsilon_from_rates` reports the larger.

The ε estimator certifies *one* statement instead (:func:`epsilon_one_statement`):
the event S and the ordered pair (A, B) it favours are fixed on an
independent selection sample, so only P[M(A) ∈ S] ≥ p_lo (level α_p) and
P[M(B) ∈ S] ≤ q_hi (level α_q) need to hold, and α_p + α_q = α gives
ln((p_lo − δ)/q_hi) ≤ ln((p − δ)/q) ≤ ε with probability ≥ 1 − α.  How α is
split between the two limits may itself be chosen on the selection sample
(:data:`ALPHA_Q_SHARES`): with q small the upper limit of q is the wide one,
so it should get most of α.
When δ = 0 there is a second statement (:func:`epsilon_rate_ratio`), chosen on
the selection sample when it predicts more and the verdict is not at stake
(:func:`dpaudit.attacks.epsilon.selection.selection.certification_statement`): draw the certification sample
sizes N_A, N_B independently from Poisson(n) (:func:`poisson_sizes`).  Then the
event counts are independent, k_A ~ Poisson(n·p), k_B ~ Poisson(n·q), and
given k_A + k_B = k, k_A ~ Bin(k, p/(p + q)) exactly.  One one-sided
Clopper–Pearson lower limit θ_lo on p/(p + q) at the full level α gives
p/q ≥ θ_lo/(1 − θ_lo) (the conditional test of a ratio of Poisson rates):
one limit at α instead of two at α_p + α_q, about 40 % less of the gap to
the true ε on rare events.

That certificate needs the TP/FP outcomes to be independent trials, i.e. one
release per trial.  When many records share one release (a membership attack
on one target), use :func:`epsilon_one_run` instead: it is valid for one
release, provided membership was decided by independent fair coins.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

__all__ = [
    "clopper_pearson",
    "epsilon_from_counts",
    "epsilon_from_rates",
    "ALPHA_Q_SHARES",
    "best_ceiling",
    "epsilon_both_directions",
    "epsilon_ceiling",
    "epsilon_one_statement",
    "epsilon_rate_ratio",
    "poisson_sizes",
    "certified_bound",
    "statement_ceiling",
    "RATE_RATIO",
    "TWO_LIMITS",
    "epsilon_one_run",
    "one_run_p_value",
]


def clopper_pearson(k: np.ndarray | float, n: np.ndarray | float, alpha: float | np.ndarray, side: str = "two-sided"
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial confidence limits for k successes in n trials.

    ``side="lower"``/``"upper"`` return one-sided limits at level 1 − α (the
    other limit is 0 or 1); ``"two-sided"`` splits α in half.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError("need 0 ≤ k ≤ n and n > 0")
    alpha = np.asarray(alpha, dtype=float)  # may be an array (broadcast with k and n)
    if not (np.all(alpha > 0.0) and np.all(alpha < 1.0)):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    a = alpha / 2.0 if side == "two-sided" else alpha
    # Beta quantiles via the inverse regularised incomplete beta function (the
    # ufunc behind scipy.stats.beta.ppf, without its per-call overhead).
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1, a), 0.0)
        hi = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - a), 1.0)
    if side == "lower":
        hi = np.ones_like(hi)
    elif side == "upper":
        lo = np.zeros_like(lo)
    return lo, hi


def _log_ratio(p_lo: np.ndarray, q_hi: np.ndarray, delta: float) -> np.ndarray:
    num = np.asarray(p_lo, dtype=float) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((num > 0) & (q_hi > 0), np.log(num / np.asarray(q_hi, dtype=float)), 0.0)
    return np.maximum(out, 0.0)


def epsilon_from_counts(k_p: np.ndarray | int, n_p: np.ndarray | int, k_q: np.ndarray | int,
                        n_q: np.ndarray | int, *, alpha: float, delta: float = 0.0) -> np.ndarray:
    """Certified ε ≥ ln((p_lo − δ)/q_hi) for one event, one direction.

    ``k_p`` of ``n_p`` runs on D fell in the event, ``k_q`` of ``n_q`` on D'.
    Each limit is one-sided at α/2, so the bound holds with probability
    ≥ 1 − α.  Returns 0 when nothing can be certified.
    """
    p_lo, _ = clopper_pearson(k_p, n_p, alpha / 2.0, side="lower")
    _, q_hi = clopper_pearson(k_q, n_q, alpha / 2.0, side="upper")
    return _log_ratio(p_lo, q_hi, delta)


# Shares of α the q limit may get (the p limit gets the rest); a grid fixed in advance,
# one point of which the selection sample picks.  The extremes serve events with q ≈ 0
# (perfect separation: almost all of α should go to q's upper limit) and p ≈ q ≈ 1.
ALPHA_Q_SHARES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98)


def epsilon_one_statement(k_p: np.ndarray | float, n_p: np.ndarray | float, k_q: np.ndarray | float,
                          n_q: np.ndarray | float, *, alpha: float, q_share: float | np.ndarray = 0.5,
                          delta: float = 0.0) -> np.ndarray:
    """Certified ε ≥ ln((p_lo − δ)/q_hi) for one event and one ordered pair, at total level α.

    ``k_p`` of ``n_p`` runs on the favoured dataset fell in the event, ``k_q``
    of ``n_q`` on the other.  p_lo is the one-sided Clopper–Pearson lower
    limit at level α·(1 − ``q_share``), q_hi the upper limit at α·``q_share``;
    by a union bound both hold with probability ≥ 1 − α, and then the DP
    inequality p ≤ e^ε·q + δ gives ε ≥ ln((p_lo − δ)/q_hi).  The event, the
    direction and ``q_share`` must be fixed independently of these counts.
    Counts may be fractional (expected counts, used to *predict* a bound).
    Returns 0 where nothing can be certified.
    """
    if not (np.all(np.asarray(q_share) > 0.0) and np.all(np.asarray(q_share) < 1.0)):
        raise ValueError(f"q_share must be in (0, 1), got {q_share}")
    p_lo, _ = clopper_pearson(k_p, n_p, alpha * (1.0 - q_share), side="lower")
    _, q_hi = clopper_pearson(k_q, n_q, alpha * q_share, side="upper")
    return _log_ratio(p_lo, q_hi, delta)


TWO_LIMITS = "two limits"  # p_lo at α_p and q_hi at α_q, any sample sizes (epsilon_one_statement)
RATE_RATIO = "rate ratio"  # one limit on p/(p + q) at α, Poisson sample sizes, δ = 0 (epsilon_rate_ratio)


def epsilon_rate_ratio(k_p: np.ndarray | float, k_q: np.ndarray | float, *, alpha: float,
                       signed: bool = False) -> np.ndarray:
    """Certified ε ≥ ln(θ_lo/(1 − θ_lo)) from event counts on Poisson-sized samples (δ = 0).

    Valid only when the two sample sizes were drawn independently from the same
    Poisson(n) (:func:`poisson_sizes`) *before* sampling: then ``k_p`` ~
    Poisson(n·p) and ``k_q`` ~ Poisson(n·q) are independent and, given their
    sum k, ``k_p`` ~ Bin(k, θ), θ = p/(p + q).  θ_lo, the one-sided
    Clopper–Pearson lower limit of ``k_p`` in k at level 1 − α, is ≤ θ with
    probability ≥ 1 − α (conditionally on k, hence unconditionally), and
    p/q = θ/(1 − θ) ≥ θ_lo/(1 − θ_lo); an ε-DP mechanism has p ≤ e^ε·q.
    The event and its direction must be fixed independently of these counts.
    Counts may be fractional (expected counts, to *predict* a bound).
    Returns 0 where nothing can be certified, or with ``signed`` the log-odds
    itself (negative, or −∞ at k_p = 0: a ranking only).
    """
    k_p = np.asarray(k_p, dtype=float)
    k_q = np.asarray(k_q, dtype=float)
    if np.any(k_p < 0) or np.any(k_q < 0):
        raise ValueError("need non-negative counts")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(k_p > 0, special.betaincinv(np.maximum(k_p, 1e-300), k_q + 1.0, alpha), 0.0)
        odds = np.where(theta >= 1.0, np.inf, np.log(theta) - np.log1p(-theta))
    return odds if signed else np.maximum(odds, 0.0)


def poisson_sizes(rng: np.random.Generator, n: int) -> tuple[int, int]:
    """Two independent Poisson(``n``) sample sizes: the precondition of :func:`epsilon_rate_ratio`."""
    return int(rng.poisson(n)), int(rng.poisson(n))


def certified_bound(statement: str, k_p: float, n_p: float, k_q: float, n_q: float, *, alpha: float,
                    q_share: float = 0.5, delta: float = 0.0) -> float:
    """The raw ε lower bound of ``statement`` (:data:`TWO_LIMITS` or :data:`RATE_RATIO`) from the counts."""
    if min(n_p, n_q) <= 0:
        return 0.0
    if statement == RATE_RATIO:
        if delta != 0.0:
            raise ValueError("the rate-ratio statement certifies pure ε only (δ = 0)")
        return float(epsilon_rate_ratio(k_p, k_q, alpha=alpha))
    if statement != TWO_LIMITS:
        raise ValueError(f"unknown statement {statement!r}")
    return float(epsilon_one_statement(k_p, n_p, k_q, n_q, alpha=alpha, q_share=q_share, delta=delta))


def epsilon_both_directions(tp: int, n_pos: int, fp: int, n_neg: int, *, alpha: float,
                            delta: float = 0.0) -> tuple[float, float]:
    """(event, complement) certified ε bounds; jointly valid with probability ≥ 1 − α.

    ``tp`` of ``n_pos`` runs on D fell in the event, ``fp`` of ``n_neg`` on D'.
    The forward statement is the event for (D, D'), the backward one its
    complement for (D', D); each gets α/2 (union bound).
    """
    forward = epsilon_from_counts(tp, n_pos, fp, n_neg, alpha=alpha / 2.0, delta=delta)
    backward = epsilon_from_counts(n_neg - fp, n_neg, n_pos - tp, n_pos, alpha=alpha / 2.0, delta=delta)
    return float(forward), float(backward)


def epsilon_from_rates(tp: int, n_pos: int, fp: int, n_neg: int, *, alpha: float,
                       delta: float = 0.0) -> float:
    """ε a membership attack's TPR/FPR certify, both event directions.

    ``tp`` of ``n_pos`` members and ``fp`` of ``n_neg`` non-members were
    flagged.  The larger of :func:`epsilon_both_directions`, which holds with
    probability ≥ 1 − α.
    """
    return max(epsilon_both_directions(tp, n_pos, fp, n_neg, alpha=alpha, delta=delta))


def epsilon_ceiling(n: int, *, alpha: float, delta: float = 0.0, q_share: float = 0.5) -> float:
    """Largest ε any attack can certify with ``n`` runs per side (perfect separation).

    With all n runs on D in the event and none on D', p_lo = (α(1−s))^(1/n) and
    q_hi = 1 − (αs)^(1/n), s = ``q_share`` (Clopper–Pearson, one-sided; s = ½
    splits α evenly).
    """
    if n <= 0:
        return 0.0
    p_lo = (alpha * (1.0 - q_share)) ** (1.0 / n)
    q_hi = -math.expm1(math.log(alpha * q_share) / n)
    if p_lo - delta <= 0:
        return 0.0
    return float(math.log((p_lo - delta) / q_hi))


def best_ceiling(n: int, *, alpha: float, delta: float = 0.0) -> tuple[float, float]:
    """(ceiling, q share): the largest ε ``n`` runs per side can certify at any split in
    :data:`ALPHA_Q_SHARES` (one statement at total level α), and that split."""
    values = [(epsilon_ceiling(n, alpha=alpha, delta=delta, q_share=s), s) for s in ALPHA_Q_SHARES]
    return max(values)


def statement_ceiling(statement: str, n_p: int, n_q: int, *, alpha: float, delta: float = 0.0) -> float:
    """Largest ε ``statement`` can certify from ``n_p`` runs on A and ``n_q`` on B (perfect separation:
    all of A's in the event, none of B's; the rate ratio depends on ``n_p`` alone)."""
    if statement == RATE_RATIO:
        return float(epsilon_rate_ratio(max(n_p, 0), 0.0, alpha=alpha))
    return best_ceiling(max(1, min(n_p, n_q)), alpha=alpha, delta=delta)[0]


def _one_run_q(epsilon: float) -> float:
    """e^ε/(1 + e^ε): the accuracy of ε-randomised response."""
    return float(1.0 / (1.0 + math.exp(-epsilon)))


def one_run_p_value(correct: int, guesses: int, candidates: int, epsilon: float, delta: float = 0.0) -> float:
    """P[W ≥ correct] allowed by (ε, δ)-DP in the one-run game (Steinke et al. 2023, Thm. 3.1).

    With q = e^ε/(1 + e^ε), r = ``guesses``, v = ``correct``, m = ``candidates``:

        P[W ≥ v] ≤ P[Bin(r, q) ≥ v] + 2·m·δ · max_{i=1..v} P[v > Bin(r, q) ≥ v − i] / i,

    the bound of their Theorem 3.1 (as evaluated by the authors' published
    auditing snippet); the second term vanishes for δ = 0.
    """
    v, r, m = int(correct), int(guesses), int(candidates)
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 ≤ correct ≤ guesses ≤ candidates, got {v}, {r}, {m}")
    q = _one_run_q(epsilon)
    beta = float(stats.binom.sf(v - 1, r, q))
    if delta <= 0.0 or v == 0:
        return min(beta, 1.0)
    # P[v > Bin ≥ v − i] for i = 1..v: cumulative pmf at v−1, v−2, …, 0.
    pmf = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)
    worst = float(np.max(np.cumsum(pmf) / np.arange(1, v + 1)))
    return min(beta + 2.0 * m * delta * worst, 1.0)


def epsilon_one_run(correct: int, guesses: int, *, alpha: float, delta: float = 0.0,
                    candidates: int | None = None) -> float:
    """ε lower bound certified by one release: Steinke, Nasr & Jagielski (NeurIPS 2023).

    "Privacy Auditing with One (1) Training Run", Theorem 3.1 (pure case:
    their Proposition for δ = 0).  Assumptions, all required:

    * m candidate records are each included in the mechanism's input
      independently with probability 1/2 (S_i ~ Bernoulli(1/2) i.i.d.), on top
      of any fixed non-candidate records;
    * the mechanism M is (ε, δ)-DP with respect to adding or removing one
      record (``add-remove`` neighbours);
    * the attacker's guesses T_i ∈ {member, non-member, abstain} are a
      function of M's output and of information independent of S only
      (thresholds, abstention rules and the set of queried candidates are all
      fixed without looking at S).

    Then the number W of correct guesses among the r = ``guesses``
    non-abstentions satisfies, for δ = 0, W ≼ Bin(r, e^ε/(1 + e^ε))
    (stochastic dominance).  So with v = ``correct``, the mechanism cannot be
    ε-DP for any ε with P[Bin(r, e^ε/(1+e^ε)) ≥ v] ≤ α, and at confidence
    1 − α the bound is ε_lb = logit(p_lo), p_lo the one-sided Clopper–Pearson
    lower limit of v/r at level 1 − α; ε_lb = 0 when p_lo ≤ 1/2.

    For δ > 0 (``candidates`` = m required) the largest ε whose
    :func:`one_run_p_value` is ≤ α is found by bisection (the δ term of
    Theorem 3.1).  Independent repeats (fresh coins, fresh release) may be
    pooled by summing ``correct``, ``guesses`` and ``candidates``: together
    they are one mechanism on Σm independent coins, each coin affecting one
    run only.
    """
    v, r = int(correct), int(guesses)
    if not 0 <= v <= r:
        raise ValueError(f"need 0 ≤ correct ≤ guesses, got {v} of {r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if r == 0 or 2 * v <= r:
        return 0.0
    if delta == 0.0:
        p_lo = float(clopper_pearson(v, r, alpha, side="lower")[0])
        return float(math.log(p_lo / (1.0 - p_lo))) if p_lo > 0.5 else 0.0
    if candidates is None:
        raise ValueError("the δ > 0 bound needs the number of candidates m")
    m = int(candidates)
    if one_run_p_value(v, r, m, 0.0, delta) > alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(v, r, m, hi, delta) <= alpha:  # P[W ≥ v] grows with ε
        lo, hi = hi, 2.0 * hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if one_run_p_value(v, r, m, mid, delta) <= alpha else (lo, mid)
    return lo
