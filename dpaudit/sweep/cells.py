"""One sweep cell: release the data once at one ε, cluster the release, measure.

A cell's randomness comes from ``SeedSequence(seed, spawn_key=(ε index, repeat))``
(:func:`~dpaudit.sweep.config.cell_seed`) — keyed by the cell, not by execution
order or worker count.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import mechanisms
from dpaudit.data.datasets import Dataset
from mechanisms.base import InvalidInputError, PrivacyLeakWarning

from .config import SweepConfig, cell_seed
from .metrics import release_metrics

__all__ = ["run_cell"]


def run_cell(cfg: SweepConfig, data: Dataset, refs: dict[str, np.ndarray], eps_index: int, repeat: int
             ) -> dict[str, Any]:
    """One (ε, repeat) cell: release, cluster, measure.  Returns plain JSON data.

    A mechanism that raises in one cell does not stop the sweep: the cell
    records the error (a finding) and has no metrics.
    """
    eps = cfg.epsilons[eps_index]
    rng = np.random.default_rng(cell_seed(cfg.seed, eps_index, repeat))
    k = cfg.k or data.default_k
    cell: dict[str, Any] = {"eps_index": eps_index, "epsilon": eps, "repeat": repeat}
    leaks: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PrivacyLeakWarning)
            mech = mechanisms.get(cfg.mechanism, epsilon=eps, **cfg.params)
            release = mech.release(data.X, rng)
        leaks = sorted({str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)})
        metrics = release_metrics(cfg, release, data, refs, k, rng)
        if cfg.attacks or cfg.epsilon_bound:
            from .privacy import privacy_metrics
            metrics.update(privacy_metrics(cfg, mech, data, rng, epsilon=eps))
        cell["metrics"] = metrics
    except InvalidInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - audited code misbehaved in this cell
        cell["metrics"] = {}
        cell["error"] = f"{type(exc).__name__}: {exc}"
    if leaks:
        cell["warnings"] = leaks
    return cell
