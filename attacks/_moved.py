"""Old import paths of the modules that moved when attacks/ was laid out as the attacks it holds.

For one release every old path still imports — ``import attacks.shokri``,
``from attacks.neighbours import NeighbourPair``, ``from attacks import
yeom`` — with a :class:`DeprecationWarning` that names the new path.  The old
module is a stand-in whose attributes are the new module's (the same objects:
``attacks.shokri.ShokriAttack is attacks.membership.shokri.ShokriAttack``);
assigning to it does not reach the new module.

:data:`MOVED` is the whole table; a moved package's submodules follow it
(``attacks.execution.worker`` → ``execution.worker``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

__all__ = ["MOVED", "install", "new_path"]

_MEMBERSHIP = ("abstain", "exposure", "label_only", "lira", "metrics", "per_record", "record_scores",
               "reference_runs", "rmia", "roc", "shadow", "shokri", "tracing", "vector_map", "yeom")
_EPSILON = {"binning": "binning", "budget": "budget", "budgets": "draw_budgets", "ceilings": "ceilings",
            "certification": "certification", "constructions": "constructions", "events": "events",
            "evidence": "evidence", "features": "features", "guarantee": "guarantee", "neighbours": "neighbours",
            "pair_search": "search", "plan": "budget", "sampling": "sampling", "selection": "selection",
            "transcripts": "transcripts"}

#: old module → where it lives now
MOVED: dict[str, str] = {
    **{f"attacks.{name}": f"attacks.membership.{name}" for name in _MEMBERSHIP},
    **{f"attacks.{old}": f"attacks.epsilon.{new}" for old, new in _EPSILON.items()},
    "attacks.execution": "execution",
    "attacks.untrusted": "execution.untrusted",
    "attacks.replays": "mechanisms.replays",
}


def new_path(name: str) -> str | None:
    """Where the module once imported as ``name`` lives now (None: it did not move)."""
    if name in MOVED:
        return MOVED[name]
    for old, new in MOVED.items():
        if name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths and loads, for each, a module whose attributes are the new module's."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = new_path(fullname)
        if new is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, self)
        if hasattr(importlib.import_module(new), "__path__"):
            spec.submodule_search_locations = []  # a package: its old submodules resolve through this finder too
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        new = new_path(module.__name__)
        assert new is not None
        warnings.warn(f"{module.__name__} has moved to {new}; the old path works for this release only",
                      DeprecationWarning, stacklevel=2)
        real = importlib.import_module(new)
        family = importlib.import_module(new.rsplit(".", 1)[0]) if "." in new else real

        def attribute(name: str) -> Any:
            try:
                return getattr(real, name)
            except AttributeError:  # a name that left its module for the family's (estimate_transcript_epsilon)
                return getattr(family, name)

        module.__doc__ = real.__doc__
        module.__getattr__ = attribute  # type: ignore[method-assign]
        module.__dir__ = lambda: dir(real)  # type: ignore[method-assign]
        module.__all__ = list(getattr(real, "__all__", [n for n in dir(real) if not n.startswith("_")]))


_FINDER = _StandIn()


def install() -> None:
    """Put the stand-in finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _StandIn) for f in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)
