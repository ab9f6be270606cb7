"""RMIA, the relative membership inference attack of Zarifzadeh, Liu, Mittal & Shokri
(ICML 2024, "Low-cost high-power membership inference attacks"), on mechanism releases.

RMIA compares a candidate x with *population* records z that are in neither the
target's input nor any reference run.  With c(x; θ) the per-record confidence of a
release θ (:mod:`dpaudit.attacks.membership.record_scores`) and Pr(x) = the mean of c(x; θ_k) over the
reference runs θ_k (§3: reference models trained on random halves, so x is in about
half of them),

    LR(x, z) = [c(x; θ)/Pr(x)] / [c(z; θ)/Pr(z)],
    score(x) = Pr_z[ LR(x, z) ≥ γ ],

the share of population records x dominates by a factor γ (Eq. 3–4).  As RMIA's
implementations temper a classifier's logits, c is tempered here: RMIA uses
sigmoid(logit(c)/T), T the spread of logit(c) over the attacker's own runs, so that
no ratio is driven by the far tail of a kernel density (c of 10⁻³⁰⁰ against 10⁻²⁰⁰).  The offline
variant uses the runs without x only and approximates Pr(x) by
½((1 + a)·Pr_out(x) + (1 − a)) (§3, "offline"); population records are in no run, so
Pr(z) is the same mean either way.  Within one release the ranking of the candidates
is that of c(x; θ)/Pr(x); the population makes the scores of different releases
comparable and sets their scale.  To keep the low-FPR end resolvable the share is
broken by c(x; θ)/Pr(x) itself where it ties (a monotone tie-break, weight 10⁻⁶).
Higher scores mean "member"; scores lie in [0, 1].  γ = 1 by default: population
records are in no reference run, so Pr(z) averages runs without z only while Pr(x)
averages runs with and without x; a member's ratio then sits near 1–2 against the
population's ≈ 1, and γ = 2 would leave almost every share at 0 (the ranking of one
release, by c(x; θ)/Pr(x), is the same for every γ).

Shared with LiRA: the reference runs and the leave-one-run-out calibration
(:mod:`dpaudit.attacks.membership.per_record`).  As the paper shows for classifiers, RMIA needs few
reference runs; in the benchmark (``benchmarks/bench_membership.py``) it is run at
the same number of mechanism calls as every other attack.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp

from dpaudit.mechanisms.base import InvalidInputError

from .per_record import PerRecordAttack
from .record_scores import logit_confidence
from .reference_runs import ReferenceRuns

__all__ = ["RMIAAttack"]

TIE_BREAK = 1e-6


class RMIAAttack(PerRecordAttack):
    """Population-relative likelihood-ratio membership attack on a mechanism's release.

    Parameters
    ----------
    n_reference : int
        Reference runs of the mechanism (each candidate is in half of them).
    gamma : float
        Factor by which x must dominate a population record (γ ≥ 1; default 1, see the module docstring).
    online : bool
        Pr(x) from every run (online) or from the runs without x and the ``offline_a`` correction.
    offline_a : float
        The offline approximation's a ∈ [0, 1].

    ``infer`` returns the share of population records each candidate dominates (1 = member).
    """

    attack_params = ("n_reference", "gamma", "online", "offline_a")

    def __init__(self, n_reference: int = 16, gamma: float = 1.0, online: bool = True,
                 offline_a: float = 0.3) -> None:
        self.n_reference = n_reference
        self.gamma = gamma
        self.online = online
        self.offline_a = offline_a
        self._check_params()

    def _check_params(self) -> None:
        super()._check_params()
        if not (np.isfinite(float(self.gamma)) and float(self.gamma) >= 1.0):
            raise InvalidInputError(f"gamma must be a number ≥ 1, got {self.gamma!r}")
        if not 0.0 <= float(self.offline_a) <= 1.0:
            raise InvalidInputError(f"offline_a must be in [0, 1], got {self.offline_a!r}")
        if not isinstance(self.online, (bool, np.bool_)):
            raise InvalidInputError(f"online must be True or False, got {self.online!r}")

    @property
    def mode(self) -> str:
        return "online" if self.online else f"offline (a = {float(self.offline_a):g})"

    def _log_prior(self, log_c: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        """log Pr(·) per column of ``log_c`` (runs × records); ``out``: the runs without each record."""
        if self.online or out is None:
            return logsumexp(log_c, axis=0) - np.log(len(log_c))
        n_out = out.sum(axis=0)
        if np.any(n_out == 0):
            raise InvalidInputError("a record has no reference run without it; use more reference runs")
        p_out = np.where(out, np.exp(log_c), 0.0).sum(axis=0) / n_out
        a = float(self.offline_a)
        return np.log(np.maximum(0.5 * ((1.0 + a) * p_out + (1.0 - a)), 1e-300))

    def _score(self, runs: ReferenceRuns, candidate: np.ndarray, population: np.ndarray) -> np.ndarray:
        phi = logit_confidence(runs.scores)
        scale = float(np.std(phi)) or 1.0  # the temperature: the spread of φ over the attacker's own runs

        def tempered(log_c: np.ndarray) -> np.ndarray:
            return -np.logaddexp(0.0, -logit_confidence(log_c) / scale)  # log sigmoid(φ/T)

        ratio_x = tempered(candidate) - self._log_prior(tempered(runs.scores), ~runs.inclusion)
        ratio_z = np.sort(tempered(population) - self._log_prior(tempered(runs.population_scores), None))
        # Pr_z[ratio_x − ratio_z ≥ log γ] = share of ratio_z ≤ ratio_x − log γ
        share = np.searchsorted(ratio_z, ratio_x - np.log(float(self.gamma)), side="right") / len(ratio_z)
        return (1.0 - TIE_BREAK) * share + TIE_BREAK * expit(ratio_x)
