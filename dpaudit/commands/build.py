"""The command line's flat options as the typed parts of a workflow (:mod:`dpaudit.options`), one builder per part.

Every command builds its config from these, so each option group is read one way whichever command has it; a
part's mistake names its field, which :func:`dpaudit.commands.flags.flag_words` turns into the flag.  The
commands import this module when they run (it loads numpy), never for ``--help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpaudit.attacks.epsilon.budget import DEFAULT_TIME_BUDGET
from dpaudit.attacks.epsilon.settings import Budget, RunSettings, SearchSpace
from dpaudit.execution import DEFAULT_TIMEOUT, Isolation, parse_memory
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions, built

from .support import parse_float_list

__all__ = ["attack_names", "attack_options", "budget", "claim_options", "data_options", "isolation", "run_settings",
           "search", "target_options"]


def claim_options(eps: float | None, *, delta: float | None = None, neighbours: str | None = None,
                  notions: dict[str, Any] | None = None) -> ClaimOptions:
    """``--eps``, ``--delta``, ``--neighbours`` and the notion options (``--rho`` …, given by name)."""
    return ClaimOptions(epsilon=eps, delta=delta, neighbours=neighbours, notions=dict(notions or {}))


def target_options(mechanism: str, *, params: dict[str, Any] | None = None, output: str | None = None,
                   own_randomness: bool = False, classes: str | None = None, label_range: str | None = None,
                   label_anchors: bool = True) -> TargetOptions:
    """``--mechanism``, the parsed ``--param`` values, ``--output``, ``--own-randomness`` and a supervised
    plug-in's ``--classes`` (``0,1``), ``--label-range`` (``LO,HI``) and ``--label-anchors``."""
    lo_hi = None
    if label_range is not None:
        lo_hi = parse_float_list(label_range, "--label-range")
        if len(lo_hi) != 2:
            raise InvalidInputError(f"--label-range takes LO,HI with LO < HI, got {label_range!r}")
    return TargetOptions(mechanism=mechanism, params=dict(params or {}), output=output, own_randomness=own_randomness,
                         classes=None if classes is None else tuple(parse_float_list(classes, "--classes")),
                         label_range=None if lo_hi is None else (lo_hi[0], lo_hi[1]), label_anchors=label_anchors)


def data_options(dataset: str | None = None, data: Path | None = None, *, label_column: str | None = None,
                 records: int | None = None, rescale: str = "none",
                 bounds: tuple[list[float], list[float]] | None = None) -> DataOptions:
    """``--dataset`` or ``--data`` (with ``--label-column``), ``--records``, ``--rescale`` and the parsed
    ``--bounds``."""
    return DataOptions(dataset=dataset, data=None if data is None else str(data), label_column=label_column,
                       records=records, rescale=rescale, bounds=bounds)


def attack_names(text: str | None, *, every: tuple[str, ...], empty: tuple[str, ...]) -> tuple[str, ...]:
    """``--attack``: comma-separated names, ``all`` (``every``) or ``none``; no name at all is ``empty``.  The
    names are checked by :class:`~dpaudit.options.AttackOptions`."""
    names = tuple(a.strip() for a in (text or "").split(",") if a.strip())
    if names == ("all",):
        return every
    if names == ("none",):
        return ()
    return names or empty


def attack_options(attacks: tuple[str, ...], *, repeats: int = 1, candidates: int | None = None,
                   reference_runs: int | None = None) -> AttackOptions:
    """The parsed ``--attack`` names, ``--repeats``, ``--candidates`` and ``--reference-runs``."""
    extra = {} if reference_runs is None else {"reference_runs": reference_runs}
    return AttackOptions(attacks=attacks, repeats=repeats, candidates=candidates, **extra)


def budget(*, samples: int | None = None, time_budget: float | None = DEFAULT_TIME_BUDGET,
           releases: int | None = None, selection_samples: int | None = None, confidence: float = 0.95) -> Budget:
    """``--samples``, ``--time-budget``, ``--releases``, ``--selection-samples`` and ``--confidence``."""
    return built(Budget, samples=samples, time_budget=time_budget, releases=releases,
                 selection_samples=selection_samples, confidence=confidence)


def search(*, distance: float = 1.0, max_pairs: int | None = None, min_records: int | None = None,
           classifier: str = "logistic") -> SearchSpace:
    """``--distance``, ``--max-pairs``, ``--min-records`` and ``--classifier`` (by name)."""
    return built(SearchSpace, distance=distance, max_pairs=max_pairs, min_records=min_records, classifier=classifier)


def isolation(*, timeout: float = DEFAULT_TIMEOUT, python: str | None = None, memory_limit: str | None = None
              ) -> Isolation:
    """``--timeout``, ``--python`` and ``--memory-limit`` (``2G``)."""
    return built(Isolation, timeout=timeout, python=python, memory_limit=parse_memory(memory_limit))


def run_settings(*, n_jobs: int = 1, scheduler: str | None = None) -> RunSettings:
    """``--n-jobs`` and ``--scheduler``."""
    return built(RunSettings, n_jobs=n_jobs, scheduler=scheduler)
