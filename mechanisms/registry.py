"""Registry of mechanisms, and resolution of a mechanism *spec*.

A spec names a mechanism wherever one is asked for (API and CLI):

* a registered name — ``ndlaplace``, ``dpkccm``, ... (:func:`available`);
* an entry point in the group ``dpaudit.mechanisms``;
* ``package.module:attr`` — an importable object;
* ``path/to/file.py:attr`` — an object in a Python file.

The object may be a mechanism class (instantiated with ``**params``), a
mechanism instance, a plain function ``fn(X, epsilon, rng) -> array``, or a
scikit-learn-style estimator class with an ``epsilon`` parameter; see
:mod:`dpaudit.mechanisms.plugins`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, cast

from .base import InvalidInputError, Mechanism
from .plugin_forms import PluginFormError, check_mechanism
from .plugins import EstimatorMechanism, FunctionMechanism
from .spec_loading import SpecError, is_file_spec, load_module_file, resolve_attribute, split_spec

__all__ = ["MechanismInfo", "available", "describe", "get", "is_builtin", "load_object", "register_builtin", "seal_builtins"]

ENTRY_POINT_GROUP = "dpaudit.mechanisms"


@dataclass(frozen=True)
class MechanismInfo:
    """One row of ``dpaudit mechanisms``."""

    name: str
    target: str          # "module:attr" of the implementation
    release_kind: str    # points | centroids | spans | labels | vector
    neighbours: str      # add-remove | replace | metric | none
    summary: str
    source: str          # the paper or library it comes from
    builtin: bool = False  # registered by dpaudit itself (register_builtin), never read off a name or a target


# Built-ins are registered by import path so that listing them is cheap; only dpaudit registers them, while
# its mechanisms package is imported (seal_builtins ends that): plug-ins come through entry points or specs.
_BUILTINS: dict[str, MechanismInfo] = {}
_SEALED = False


def register_builtin(name: str, target: str, *, release_kind: str, neighbours: str, summary: str,
                     source: str) -> None:
    """Register one of dpaudit's own mechanisms under ``name`` (only while :mod:`dpaudit.mechanisms` is
    imported: afterwards the built-ins are sealed and this raises)."""
    if _SEALED:
        raise RuntimeError("built-in mechanisms are dpaudit's own; a plug-in is named by an entry point in the "
                           f"group {ENTRY_POINT_GROUP!r}, a module:attr or a file.py:attr spec")
    _BUILTINS[name] = MechanismInfo(name, target, release_kind, neighbours, summary, source, builtin=True)


def seal_builtins() -> None:
    """No more built-ins: called once, at the end of :mod:`dpaudit.mechanisms`'s import."""
    global _SEALED
    _SEALED = True


def is_builtin(spec: str) -> bool:
    """Whether ``spec`` is the name of one of dpaudit's own mechanisms — decided by who registered it, never by
    the name's or the target's spelling (an entry point may name any module)."""
    info = _BUILTINS.get(spec.strip()) if isinstance(spec, str) else None
    return info is not None and info.builtin


def available() -> list[str]:
    """Names of the registered mechanisms (built-ins and entry points)."""
    names = set(_BUILTINS)
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def describe() -> list[MechanismInfo]:
    """Registered built-ins with their claim kind, release kind and source."""
    rows = [_BUILTINS[n] for n in sorted(_BUILTINS)]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _BUILTINS:
            rows.append(MechanismInfo(ep.name, ep.value, "?", "?", "entry point", ep.dist.name if ep.dist else "?"))
    return rows


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise InvalidInputError(f"plug-in file not found: {path}")
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    mod_name = f"dpaudit_plugin_{path.stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    try:
        return load_module_file(str(path), mod_name)
    except SpecError as exc:
        raise InvalidInputError(str(exc)) from None
    except ImportError as exc:
        raise InvalidInputError(str(exc)) from None
    except Exception as exc:  # audited code: report what went wrong, in one line
        raise InvalidInputError(f"importing {path} failed: {type(exc).__name__}: {exc}") from exc


def load_object(spec: str) -> Any:
    """Load the object a ``module:attr`` or ``file.py:attr`` spec names (:mod:`dpaudit.mechanisms.spec_loading`,
    which a worker in another interpreter uses too), every failure as one :class:`InvalidInputError`."""
    parts = split_spec(spec)
    if parts is None:
        raise InvalidInputError(f"{spec!r} is not of the form module:attr or file.py:attr")
    left, attr = parts
    if is_file_spec(left):
        module = _import_file(Path(left))
    else:
        try:
            module = importlib.import_module(left)
        except ImportError as exc:
            raise InvalidInputError(f"cannot import module {left!r}: {exc}") from None
    try:
        return resolve_attribute(module, attr, left)
    except SpecError as exc:
        raise InvalidInputError(str(exc)) from None


def _instantiate(obj: Any, params: dict[str, Any], label: str) -> Mechanism:
    """Turn a loaded object plus parameters into a mechanism."""
    plugin_keys = {"output", "neighbours", "delta"}
    if inspect.isclass(obj):
        sig = inspect.signature(obj)
        if hasattr(obj, "release"):
            accepted = {k: v for k, v in params.items()
                        if k not in plugin_keys or k in sig.parameters}
            try:
                mech = cast(Mechanism, obj(**accepted))
            except TypeError as exc:
                raise InvalidInputError(f"{label}: {exc}") from None
            return _checked(mech, label)
        if hasattr(obj, "fit") and "epsilon" in sig.parameters:
            if "epsilon" not in params:
                raise InvalidInputError(f"{label} needs epsilon")
            return EstimatorMechanism(obj, name=label, **params)
        raise InvalidInputError(f"{label} is a class with neither release() nor fit() and an epsilon parameter")
    if hasattr(obj, "release") and hasattr(obj, "claim"):
        return _checked(obj, label)  # an instance: parameters were fixed by its author
    if callable(obj):
        if "epsilon" not in params:
            raise InvalidInputError(f"{label} is a function: give the epsilon it should honour")
        return FunctionMechanism(obj, name=label, **params)
    raise InvalidInputError(f"{label} is neither a mechanism, a function nor an estimator class")


def _checked(mech: Any, label: str) -> Mechanism:
    """``mech`` when its ``release`` takes ``(X, rng)`` (:func:`~dpaudit.mechanisms.plugin_forms.check_mechanism`)."""
    try:
        check_mechanism(mech, label)
    except PluginFormError as exc:
        raise InvalidInputError(str(exc)) from None
    return cast(Mechanism, mech)


def get(spec: str, **params: Any) -> Mechanism:
    """Build the mechanism a spec names, with ``params`` (e.g. ``epsilon=1.0``).

    Examples
    --------
    >>> import dpaudit.mechanisms
    >>> mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    >>> mech.claim.neighbours
    'metric'
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInputError("a mechanism name or spec is required")
    spec = spec.strip()
    if spec in _BUILTINS:
        info = _BUILTINS[spec]
        return _instantiate(load_object(info.target), params, spec)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            try:
                obj = ep.load()
            except Exception as exc:
                raise InvalidInputError(f"entry point {spec!r} failed to load: {exc}") from exc
            return _instantiate(obj, params, spec)
    if ":" in spec:
        return _instantiate(load_object(spec), params, spec)
    close = [n for n in available() if n.startswith(spec[:3])]
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise InvalidInputError(
        f"unknown mechanism {spec!r}.{hint} Run `dpaudit mechanisms` for the list, "
        "or name a plug-in as module:attr or path/to/file.py:attr")
