"""Registry of mechanisms, and resolution of a mechanism *spec*.

A spec names a mechanism wherever one is asked for (API and CLI):

* a registered name — ``ndlaplace``, ``dpkccm``, ... (:func:`available`);
* an entry point in the group ``dpaudit.mechanisms``;
* ``package.module:attr`` — an importable object;
* ``path/to/file.py:attr`` — an object in a Python file;
* ``cmd:COMMAND`` — a program in any language that speaks dpaudit's protocol
  (:mod:`dpaudit.mechanisms.executable`).

The object may be a mechanism class (instantiated with ``**params``), a
mechanism instance, a plain function ``fn(X, epsilon, rng) -> array``, or a
scikit-learn-style estimator class with an ``epsilon`` parameter: the forms of
:data:`~dpaudit.mechanisms.plugin_forms.FORMS`, each adapted here by its name
(:data:`ADAPTERS`; :mod:`dpaudit.mechanisms.plugins` holds the adapters' classes).
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
from typing import Any, Callable, cast

from .base import InvalidInputError, Mechanism, PrivacyClaim
from .executable import ExecutableSpec
from .plugin_forms import PluginFormError, check_mechanism, form_of, recognised_form, spec_form, split_spec
from .plugins import BoxedMechanism, EstimatorMechanism, FunctionMechanism
from .spec_loading import SpecError, load_module_file, resolve_attribute

__all__ = ["MechanismInfo", "as_mechanism", "available", "describe", "get", "is_builtin", "load_object", "plugin", "register_builtin",
           "seal_builtins"]

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
    if getattr(spec_form(spec), "name", None) == "file":
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


_PLUGIN_KEYS = ("output", "neighbours", "delta")  # what a plug-in function or estimator cannot state itself
_OPTIONAL = ("epsilon", "bounds")  # passed to a plug-in class only if its constructor takes them (as in a worker)


def _accepts(sig: inspect.Signature, key: str) -> bool:
    """Whether a constructor of signature ``sig`` takes the keyword ``key`` (by name or ``**kwargs``)."""
    return key in sig.parameters or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def _mechanism_class(cls: Any, params: dict[str, Any], label: str) -> Mechanism:
    """Built with the parameters its constructor takes (ε and the public box only if it takes them, as a worker
    builds it), its release checked, the box stated."""
    sig = inspect.signature(cls)
    accepted = {k: v for k, v in params.items() if (k not in _PLUGIN_KEYS and k not in _OPTIONAL)
                or (k in _PLUGIN_KEYS and k in sig.parameters) or (k in _OPTIONAL and _accepts(sig, k))}
    try:
        mech = cast(Mechanism, cls(**accepted))
    except TypeError as exc:
        raise InvalidInputError(f"{label}: {exc}") from None
    return _with_box(_checked(mech, label), params.get("bounds"))


def _mechanism_object(obj: Any, params: dict[str, Any], label: str) -> Mechanism:
    """Used as it is (its parameters were fixed by its author), its release checked, the box stated."""
    return _with_box(_checked(obj, label), params.get("bounds"))


def _estimator_class(cls: Any, params: dict[str, Any], label: str) -> Mechanism:
    return EstimatorMechanism(cls, name=label, **params)


def _function(fn: Any, params: dict[str, Any], label: str) -> Mechanism:
    return FunctionMechanism(fn, name=label, **params)


def _program(command: ExecutableSpec, params: dict[str, Any], label: str) -> Mechanism:
    return cast(Mechanism, command.build(params, label))


# How this process runs each plug-in form (plugin_forms.FORMS, by name); a worker has its own (Audited.ADOPT).
ADAPTERS: dict[str, Callable[[Any, dict[str, Any], str], Mechanism]] = {
    "function": _function, "mechanism class": _mechanism_class, "mechanism object": _mechanism_object,
    "estimator class": _estimator_class, "program": _program}


def _instantiate(obj: Any, params: dict[str, Any], label: str) -> Mechanism:
    """Turn a loaded object plus parameters into a mechanism: its form (:func:`~dpaudit.mechanisms.plugin_forms.form_of`)
    adapted by :data:`ADAPTERS`, once the parameters hold what the form needs (a function's or estimator's ε)."""
    try:
        form = form_of(obj, label)
    except PluginFormError as exc:
        raise InvalidInputError(str(exc)) from None
    missing = [need for need in form.needs if params.get(need) is None]
    if missing:
        raise InvalidInputError(f"{label} is {'an' if form.name[0] in 'aeiou' else 'a'} {form.name}: give the "
                                f"{' and '.join(missing)} it should honour")
    return ADAPTERS[form.name](obj, params, label)


def _with_box(mech: Mechanism, bounds: Any) -> Mechanism:
    """``mech``, or a view of it that states the public box ``bounds`` when it states none itself."""
    if bounds is None or getattr(mech, "bounds", None) is not None:
        return mech
    return cast(Mechanism, BoxedMechanism(mech, bounds))


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
    return _instantiate(_load_spec(spec), params, spec.strip())


# How this process loads what a spec of each form names (plugin_forms.SPEC_FORMS, by name), besides the
# registered names _load_spec looks up itself.
SPEC_LOADERS: dict[str, Callable[[str], Any]] = {"file": load_object, "module": load_object,
                                                 "command": ExecutableSpec}


def _load_spec(spec: str) -> Any:
    """The object a spec names: a built-in, an entry point, or what :data:`SPEC_LOADERS` loads
    (``module:attr``, ``file.py:attr``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInputError("a mechanism name or spec is required")
    spec = spec.strip()
    if spec in _BUILTINS:
        return load_object(_BUILTINS[spec].target)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            try:
                return ep.load()
            except Exception as exc:
                raise InvalidInputError(f"entry point {spec!r} failed to load: {exc}") from exc
    loader = SPEC_LOADERS.get(getattr(spec_form(spec), "name", ""))
    if loader is not None:
        return loader(spec)
    close = [n for n in available() if n.startswith(spec[:3])]
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise InvalidInputError(
        f"unknown mechanism {spec!r}.{hint} Run `dpaudit mechanisms` for the list, "
        "or name a plug-in as module:attr or path/to/file.py:attr")


def plugin(obj: Any, *, epsilon: float | None = None, output: str | None = None, neighbours: str | None = None,
           delta: float | None = None, bounds: Any = None, name: str | None = None, **params: Any) -> Mechanism:
    """Someone else's code as a mechanism, with the keywords of the command line: what ``--mechanism``,
    ``--eps``, ``--output``, ``--neighbours``, ``--delta`` and ``--bounds`` say there.

    ``obj`` is anything ``--mechanism`` names, as the object itself or as its spec: a plain function
    ``fn(X, epsilon, rng)`` (or ``fn(X, epsilon)``, or supervised ``fn(X, y, epsilon[, rng])``), a
    scikit-learn-style estimator class with an ``epsilon`` parameter, a mechanism class or instance, a
    registered name, ``"module:attr"`` or ``"path/to/file.py:attr"``.  Its form is checked as the command line
    checks it (:mod:`dpaudit.mechanisms.plugin_forms`): a function of the wrong form is an
    :class:`InvalidInputError` before anything runs.

    ``epsilon``: the ε the code should honour (a function or estimator needs it; a mechanism class gets it when
    its constructor takes it).  ``output``: what a function returns — ``points`` (read so when not stated),
    ``centroids``, ``labels`` or ``vector`` —, or what an estimator releases (``centroids``, ``labels``;
    supervised: ``parameters``, ``predictions``).  ``neighbours`` (default ``add-remove``) and ``delta`` (0): the
    rest of a function's or estimator's claim.  ``bounds``: the public box the code works in, ``(lo, hi)`` —
    where the auditor places canaries and worst-case datasets (without one they go in the data's range widened
    by 10 %, which can certify a much weaker bound); passed to a class that takes ``bounds``.  ``params``: the
    constructor's other parameters.

    Examples
    --------
    >>> import numpy as np, dpaudit
    >>> def noisy_mean(X, epsilon, rng):
    ...     return np.clip(X, -1, 1).mean(axis=0) + rng.laplace(scale=2 / (len(X) * epsilon), size=X.shape[1])
    >>> mech = dpaudit.plugin(noisy_mean, epsilon=1.0, output="vector", neighbours="replace", bounds=(-1, 1))
    >>> mech.claim.neighbours, mech.release(np.zeros((10, 2)), np.random.default_rng(0)).kind
    ('replace', 'vector')
    """
    label = name or (obj.strip() if isinstance(obj, str) else str(getattr(obj, "__name__", type(obj).__name__)))
    loaded = _load_spec(obj) if isinstance(obj, str) else obj
    stated = {"epsilon": epsilon, "output": output, "neighbours": neighbours, "delta": delta, "bounds": bounds}
    if (_form_name(loaded) == "mechanism object"
            and any(stated[k] is not None for k in ("epsilon", "output", "neighbours", "delta"))):
        raise InvalidInputError(f"{label} is a mechanism object: it states its own claim and release "
                                f"({loaded.claim}); test another claim with estimate_epsilon(..., claim=…)")
    given = {k: v for k, v in stated.items() if v is not None}
    return _instantiate(loaded, {**params, **given}, label)


def as_mechanism(obj: Any, claim: PrivacyClaim | None = None, *, takes_claim: bool = False) -> Mechanism:
    """``obj`` as the mechanism the auditing functions take (:func:`dpaudit.estimate_epsilon`, the attacks'
    :class:`~dpaudit.attacks.membership.shadow.AttackerKnowledge`): a mechanism object (``release`` and ``claim``)
    as it is; anything else :func:`plugin` accepts — a function, an estimator or mechanism class, a spec — built
    by :func:`plugin` with the ε, relation and δ of ``claim``.  A plain function or an estimator class states no
    claim: without ``claim`` it is an :class:`InvalidInputError` that says how to state one (``takes_claim``: the
    caller also takes a ``claim=``, which the message then names)."""
    if _form_name(obj) == "mechanism object":
        return cast(Mechanism, obj)
    label = obj.strip() if isinstance(obj, str) else str(getattr(obj, "__name__", type(obj).__name__))
    if claim is None:
        if isinstance(obj, str) or _form_name(obj) == "mechanism class":
            return plugin(obj)  # a registered name or a mechanism class: it states its own claim
        kind = "an estimator class" if inspect.isclass(obj) else "a plain function" if callable(obj) else "not a mechanism"
        raise InvalidInputError(
            f"{label} is {kind}: it states no claim or release kind. Wrap it: dpaudit.plugin({label}, epsilon=…, "
            "output=…, neighbours=…, bounds=…) — the command line's --eps, --output, --neighbours and --bounds"
            + (" — or pass claim=PrivacyClaim(epsilon, delta, neighbours)" if takes_claim else ""))
    if not isinstance(claim, PrivacyClaim):
        raise InvalidInputError(f"claim must be a PrivacyClaim, got {type(claim).__name__}")
    return plugin(obj, epsilon=claim.epsilon, neighbours=claim.neighbours, delta=claim.delta)


def _form_name(obj: Any) -> str | None:
    """The name of ``obj``'s plug-in form (:func:`~dpaudit.mechanisms.plugin_forms.recognised_form`), or None."""
    form = recognised_form(obj)
    return None if form is None else form.name
