"""One sweep cell: release the data once at one ε, cluster the release, measure.

A cell's randomness comes from ``Stream.SWEEP_CELL.of(seed, ε index, repeat)``
(:mod:`dpaudit.execution.seeds`) — keyed by the cell, not by execution
order or worker count.  The mechanism runs where its recipe puts it
(:meth:`SweepConfig.recipe`: built-ins in this process, anything else in a worker
process shared by the cells this process runs), every call through the execution
layer; the cell stores how many calls it made and their findings, so a resumed
sweep still counts them.
"""

from __future__ import annotations

import warnings

import numpy as np

from dpaudit.data.datasets import Dataset
from dpaudit.execution import MechanismFailure, NoUsableRelease, recording, release_once
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import InvalidInputError, PrivacyLeakWarning
from dpaudit.run_shapes import SweepCell

from .config import SweepConfig
from .metrics import release_metrics

__all__ = ["CellTask", "run_cell"]


def run_cell(cfg: SweepConfig, data: Dataset, refs: dict[str, np.ndarray], eps_index: int, repeat: int
             ) -> SweepCell:
    """One (ε, repeat) cell: release, cluster, measure.  Returns plain JSON data.

    A cell whose release fails (the audited code raised, hung, crashed, returned
    garbage) or whose measurements fail records ``error`` and has no metrics; a
    privacy measurement that fails alone is left out and named in
    ``partial_errors``; the sweep goes on.  ``calls`` and ``findings`` say what the cell's calls into the
    audited code did (:meth:`dpaudit.execution.Findings.to_list`).
    """
    eps = cfg.epsilons[eps_index]
    rng = np.random.default_rng(Stream.SWEEP_CELL.of(cfg.seed, eps_index, repeat))
    k = cfg.n_clusters or data.default_k
    cell: SweepCell = {"eps_index": eps_index, "epsilon": eps, "repeat": repeat}
    leaks: list[str] = []
    with recording() as calls:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", PrivacyLeakWarning)
                mech = cfg.recipe().open(eps)
                release = release_once(mech, data.X, rng)
            leaks = sorted({str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)})
            metrics = release_metrics(cfg, release, data, refs, k, rng)
            if cfg.attack.attacks or cfg.epsilon_bound:
                from .privacy import privacy_metrics
                privacy, errors, draws = privacy_metrics(cfg, mech, data, rng)
                metrics.update(privacy)
                calls.merge(draws)
                if errors:
                    cell["partial_errors"] = errors  # measurements left out of this cell, and why
            cell["metrics"] = metrics
        except InvalidInputError as exc:
            if not isinstance(exc, NoUsableRelease):
                raise  # a user mistake the set-up check missed, or a built-in refusing the data: exit 2
            cell["metrics"] = {}
            cell["error"] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - audited code misbehaved in this cell
            cell["metrics"] = {}
            cell["error"] = (f"{exc.finding['kind']}: {exc.finding['error']}" if isinstance(exc, MechanismFailure)
                             else f"{type(exc).__name__}: {exc}")
    cell["calls"] = calls.calls
    if len(calls):
        cell["findings"] = calls.to_list()
    if leaks:
        cell["warnings"] = leaks
    return cell


class CellTask:
    """``task((ε index, repeat)) -> cell``: one cell as a picklable chunk function for
    :func:`dpaudit.execution.map_seeds` (joblib processes or Dask workers)."""

    def __init__(self, cfg: SweepConfig, data: Dataset, refs: dict[str, np.ndarray]) -> None:
        self.cfg, self.data, self.refs = cfg, data, refs

    def __call__(self, cell: tuple[int, int]) -> SweepCell:
        return run_cell(self.cfg, self.data, self.refs, int(cell[0]), int(cell[1]))
