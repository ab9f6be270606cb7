"""The command line's flat options as the typed parts of a workflow (:mod:`dpaudit.options`), one builder per part.

Every command builds its config from these, so each option group is read one way whichever command has it: what
needs reading (a file's path, ``0,1``, ``2G``, ``all``) is read here, every other option goes to the part's field
of the same name as given (``**given``), so an option a part already has takes no change here.  A part's mistake
names its field, which :func:`dpaudit.commands.flags.flag_words` turns into the flag.  The commands import this
module when they run (it loads numpy), never for ``--help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace
from dpaudit.execution import Isolation, parse_memory
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions, built

from .support import parse_float_list

__all__ = ["attack_names", "attack_options", "budget", "claim_options", "data_options", "isolation", "run_settings",
           "search", "target_options"]


def claim_options(eps: float | None, *, notions: dict[str, Any] | None = None, **given: Any) -> ClaimOptions:
    """``--eps``, the notion options (``--rho`` …, by name) and ``--delta``, ``--neighbours``."""
    return ClaimOptions(epsilon=eps, notions=dict(notions or {}), **given)


def target_options(mechanism: str, *, classes: str | None = None, label_range: str | None = None, **given: Any
                   ) -> TargetOptions:
    """``--mechanism``, a supervised plug-in's ``--classes`` (``0,1``) and ``--label-range`` (``LO,HI``), and the
    parsed ``--param`` values (``params``), ``--output``, ``--own-randomness``, ``--label-anchors``."""
    lo_hi = None
    if label_range is not None:
        lo_hi = parse_float_list(label_range, "--label-range")
        if len(lo_hi) != 2:
            raise InvalidInputError(f"--label-range takes LO,HI with LO < HI, got {label_range!r}")
    return TargetOptions(mechanism=mechanism, **given,
                         classes=None if classes is None else tuple(parse_float_list(classes, "--classes")),
                         label_range=None if lo_hi is None else (lo_hi[0], lo_hi[1]))


def data_options(dataset: str | None = None, data: Path | None = None, **given: Any) -> DataOptions:
    """``--dataset`` or ``--data`` (a path), and ``--label-column``, ``--records``, ``--rescale`` and the parsed
    ``--bounds``."""
    return DataOptions(dataset=dataset, data=None if data is None else str(data), **given)


def attack_names(text: str | None, *, every: tuple[str, ...], empty: tuple[str, ...]) -> tuple[str, ...]:
    """``--attack``: comma-separated names, ``all`` (``every``) or ``none``; no name at all is ``empty``.  The
    names are checked by :class:`~dpaudit.options.AttackOptions`."""
    names = tuple(a.strip() for a in (text or "").split(",") if a.strip())
    if names == ("all",):
        return every
    if names == ("none",):
        return ()
    return names or empty


def attack_options(attacks: tuple[str, ...], **given: Any) -> AttackOptions:
    """The parsed ``--attack`` names and ``--repeats``, ``--candidates``, ``--reference-runs``."""
    return AttackOptions(attacks=attacks, **given)


def budget(**given: Any) -> Budget:
    """``--samples``, ``--time-budget``, ``--releases``, ``--selection-samples`` and ``--confidence``."""
    return built(Budget, **given)


def search(**given: Any) -> SearchSpace:
    """``--distance``, ``--max-pairs``, ``--min-records`` and ``--classifier`` (by name)."""
    return built(SearchSpace, **given)


def isolation(*, memory_limit: str | None = None, **given: Any) -> Isolation:
    """``--memory-limit`` (``2G``), ``--timeout`` and ``--python``."""
    return built(Isolation, memory_limit=parse_memory(memory_limit), **given)


def run_settings(**given: Any) -> RunSettings:
    """``--n-jobs`` and ``--scheduler``."""
    return built(RunSettings, **given)
