"""LiRA, the likelihood-ratio attack of Carlini, Chien, Nasr, Song, Terzis & Tramèr
(S&P 2022, "Membership inference attacks from first principles"), on mechanism releases.

For each candidate record x the attack has reference runs of the mechanism with x in
its input and runs without (:mod:`dpaudit.attacks.membership.reference_runs`), and a per-record score
φ(x; release) = logit c(x; release) (:mod:`dpaudit.attacks.membership.record_scores`: the distance to the
nearest released point or centre, the spans around x, its label's share, the tracing
statistic of a vector — Carlini et al.'s logit-scaled confidence, for releases that
are not classifiers).  It fits one Gaussian to φ over the runs with x ("in") and one
over the runs without ("out") — §IV-B, Algorithm 1 — and scores the target release by

* **online**: the log-likelihood ratio log N(φ; μ_in, σ_in²) − log N(φ; μ_out, σ_out²);
* **offline**: the one-sided standard score (φ − μ_out)/σ_out against the "out"
  Gaussian alone (§VI-C; monotone in their p-value), for runs without the record only.

Variance: Carlini et al. recommend one global variance per group when there are few
reference models (§VI-B, "fixed variance"); ``variance="auto"`` uses each record's
own variances from 32 runs per group on, the global ones below.  Higher scores mean
"member"; the online score is the per-record risk's likelihood ratio (natural log).
"""

from __future__ import annotations

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

from .per_record import PerRecordAttack
from .record_scores import logit_confidence
from .reference_runs import ReferenceRuns

__all__ = ["LiRAAttack", "gaussian_fits"]

VARIANCES = ("auto", "global", "per-record")
PER_RECORD_FROM = 32  # runs per group from which "auto" trusts each record's own variance


def _group_stats(phi: np.ndarray, mask: np.ndarray, per_record: bool) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of φ per record over the runs in ``mask`` (global or own spread)."""
    n = mask.sum(axis=0)
    if np.any(n == 0):
        raise InvalidInputError("a record has no reference run in one group; use more reference runs")
    mean = np.where(mask, phi, 0.0).sum(axis=0) / n
    resid = np.where(mask, phi - mean, 0.0) ** 2
    floor = 1e-12 * (1.0 + float(np.var(phi)))
    if per_record and np.all(n > 1):
        var = resid.sum(axis=0) / (n - 1)
    else:
        dof = max(int(n.sum()) - phi.shape[1], 1)
        var = np.full(phi.shape[1], resid.sum() / dof)
    return mean, np.sqrt(np.maximum(var, floor))


def gaussian_fits(phi: np.ndarray, inclusion: np.ndarray, variance: str = "auto"
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(μ_in, σ_in, μ_out, σ_out) per record from φ (runs × records) and the runs' inclusion rows."""
    inc = np.asarray(inclusion, dtype=bool)
    own = variance == "per-record" or (variance == "auto" and min(inc.sum(axis=0).min(),
                                                                  (~inc).sum(axis=0).min()) >= PER_RECORD_FROM)
    mu_in, sd_in = _group_stats(phi, inc, own)
    mu_out, sd_out = _group_stats(phi, ~inc, own)
    return mu_in, sd_in, mu_out, sd_out


class LiRAAttack(PerRecordAttack):
    """Per-record likelihood-ratio membership attack on a mechanism's release.

    Parameters
    ----------
    n_reference : int
        Reference runs of the mechanism (each record is in half of them).
    online : bool
        Online LiRA (Gaussians with and without the record) or offline (without only).
    variance : {"auto", "global", "per-record"}

    ``infer`` returns the log-likelihood ratio (online) or the standard score against the
    "out" runs (offline) per record (higher = member; 1 = member).
    """

    attack_params = ("n_reference", "online", "variance")

    def __init__(self, n_reference: int = 16, online: bool = True, variance: str = "auto") -> None:
        self.n_reference = n_reference
        self.online = online
        self.variance = variance
        self._check_params()

    def _check_params(self) -> None:
        super()._check_params()
        if self.variance not in VARIANCES:
            raise InvalidInputError(f"variance must be one of {', '.join(VARIANCES)}; got {self.variance!r}")
        if not isinstance(self.online, (bool, np.bool_)):
            raise InvalidInputError(f"online must be True or False, got {self.online!r}")

    @property
    def mode(self) -> str:
        return "online" if self.online else "offline"

    def _score(self, runs: ReferenceRuns, candidate: np.ndarray, population: np.ndarray) -> np.ndarray:
        phi = logit_confidence(runs.scores)
        mu_in, sd_in, mu_out, sd_out = gaussian_fits(phi, runs.inclusion, self.variance)
        x = logit_confidence(candidate)
        z_out = (x - mu_out) / sd_out
        if not self.online:
            return z_out
        z_in = (x - mu_in) / sd_in
        return 0.5 * (z_out ** 2 - z_in ** 2) + np.log(sd_out / sd_in)
