
"""Privacy measurements of a sweep cell beyond displacement: membership attacks and a certified ε bound.

Membership attacks come from :mod:`attacks` (issue 4) and the ε lower bound
from :func:`dpaudit.attacks.epsilon.estimate_epsilon` (issue 6); this module only
adapts their results to flat per-cell metrics ``mia.<attack>.<metric>`` and
``epsilon_lower_bound``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit.execution import Findings
from dpaudit.execution.verdict import Verdict

if TYPE_CHECKING:
    from .config import SweepConfig

__all__ = ["privacy_metrics"]


def privacy_metrics(cfg: SweepConfig, mech: Any, data: Any, rng: np.random.Generator
                    ) -> tuple[dict[str, Any], dict[str, str], Findings]:
    """Per-cell membership-attack metrics and (``cfg.epsilon_bound``) a certified ε lower bound.

    Membership: one repeat of ``dpaudit attack``'s set-up (thesis §5.3.2: 75 %
    of the records are the attacker's shadow data, the rest candidates that are
    members by independent fair coins; :func:`dpaudit.attack.repeat.run_repeat`),
    giving ``mia.<attack>.advantage`` (threshold chosen on the attacker's own runs), ``.auc``,
    ``.tpr_at_1pct_fpr`` (where the cell's non-members resolve it) and ``.epsilon_lower_bound``
    (the one-run add/remove bound of that release, Steinke et al. 2023) — for every membership
    attack, LiRA, RMIA and tracing included (an attack that does not apply to the release kind
    leaves no metrics).  An attack that fails in a cell leaves its
    metrics out of that cell and its error in the second value returned
    (``{"mia.<attack>": error}``); the third is the findings of the estimator's
    draws (its single releases are recorded by the caller's
    :func:`~dpaudit.execution.recording`).  ε bound:
    :func:`dpaudit.attacks.epsilon.estimate_epsilon` on the sweep's budget (``samples``
    certification samples, at its confidence, 95 % by default); an inconclusive estimate is
    an error too (``epsilon_lower_bound``).  A claim in a notion (``cfg.claim``, :mod:`dpaudit.claims`) is the
    claim each cell's estimate tests: ``curve_below_claim`` (1 when the cell's certified test lies below its
    trade-off curve, else 0) and ``mu_lower_bound`` (the certified μ_lo) join the cell's metrics.
    """
    out: dict[str, Any] = {}
    errors: dict[str, str] = {}
    findings = Findings()
    if cfg.attack.attacks:
        from dpaudit.attack.repeat import run_repeat
        k = cfg.n_clusters or data.default_k
        # Drawn from the cell's generator, not a stream of the cell's seed: a stream would change every number.
        seed = np.random.SeedSequence(int(rng.integers(0, 2**63 - 1)))
        outcome = run_repeat(cfg.attack, data.X, k, seed, lambda: mech, alpha=cfg.alpha)
        findings.merge(outcome.findings)
        errors.update({f"mia.{name}": error for name, error in outcome.errors.items()})
        for name, res in outcome.results.items():
            for key in ("advantage", "auc", "tpr_at_1pct_fpr", "epsilon_lower_bound"):
                value = getattr(res, key, None)
                if value is not None:
                    out[f"mia.{name}.{key}"] = float(value)
    if cfg.epsilon_bound:
        import warnings

        from dpaudit.attacks.epsilon import RunSettings, estimate_epsilon
        from dpaudit.mechanisms.base import PrivacyLeakWarning
        with warnings.catch_warnings():  # the cell recorded the leak from its own release already
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            est = estimate_epsilon(mech, data.X, cfg.claim.claim(mech.claim), budget=cfg.budget,
                                   search=dataclasses.replace(cfg.search, bounds=data.bounds),
                                   run=RunSettings(n_jobs=1, progress=False), seed=int(rng.integers(0, 2**31 - 1)))  # drawn, as the attacks' seed above
        findings.merge(Findings.from_list(est.findings))
        if est.verdict == Verdict.INCONCLUSIVE and not est.findings:
            errors["epsilon_lower_bound"] = est.guarantee
        out["epsilon_lower_bound"] = float(est.epsilon_lower_bound)
        out["epsilon_ceiling"] = float(est.ceiling)  # the largest bound this sample size can certify
        curve = est.curve if est.claim.notion is not None else {}
        if curve.get("decides_verdict"):  # a claim in a notion: this cell's test of its curve (not a sweep verdict)
            out["curve_below_claim"] = 1.0 if curve.get("verdict") == Verdict.VIOLATION else 0.0
            out["mu_lower_bound"] = float(curve.get("mu_lower_bound") or 0.0)
    return out, errors, findings
