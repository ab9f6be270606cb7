"""The forms a plug-in may take, checked before anything runs — the part both sides of the process boundary
need (the auditor's :mod:`dpaudit.mechanisms.plugins` and a worker in another interpreter,
:mod:`dpaudit.execution.worker_audited`, which loads this file by path): standard library only.

A plug-in whose form does not fit is a user mistake, told in one line before the audit starts
(:class:`PluginFormError`); what its code does once called is the code's own behaviour, a finding.  The check
binds the arguments dpaudit will pass to the plug-in's signature (:func:`inspect.Signature.bind`); it never
calls the code.  Code without a signature (a builtin, an extension function) is not checked here.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any

__all__ = ["EPSILON_NAMES", "FUNCTION_FORMS", "GENERATOR_NAMES", "PluginFormError", "check_estimator", "check_function",
           "check_mechanism", "misplaced_names", "missing_attribute"]

# How a plug-in function is called (dpaudit.mechanisms.label_column.function_shape reads which one it is).
FUNCTION_FORMS = ("fn(X, epsilon, rng)", "fn(X, epsilon) (draws its own randomness)",
                  "fn(X, y, epsilon[, rng]) (supervised: y is the label column)")
ACCEPTED = ("a function " + ", ".join(FUNCTION_FORMS) + "; a mechanism class or object with release(X, rng); "
            "an estimator class with an epsilon parameter and fit(X) or fit(X, y); a program in any language, "
            "named cmd:COMMAND (docs/executables.md)")


class PluginFormError(TypeError):
    """A plug-in that does not have one of the accepted forms, or a spec that names nothing: a user mistake.
    ``plain``: its message is the whole line (no exception type, no source location)."""

    plain = True


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def _shown(name: str, sig: inspect.Signature) -> str:
    return f"{name}{sig}"


# Parameter names that say what a parameter is: dpaudit passes its arguments by position, so a generator's name where
# ε goes (``fn(X, rng)``: ε forgotten) or ε's name where the generator goes (``fn(X, rng, epsilon)``: swapped) is a
# mistake the names show before any call — the call itself would fail inside the plug-in, far from the cause.
GENERATOR_NAMES = frozenset({"rng", "generator", "gen", "prng", "random_state", "random_generator", "random", "seed",
                             "rs", "np_rng"})
EPSILON_NAMES = frozenset({"epsilon", "eps", "ε", "epsilon_", "privacy_budget"})


def _positional_names(sig: inspect.Signature) -> list[str] | None:
    """The names of the positional parameters, in order; None when ``*args`` takes the rest (names cannot tell)."""
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def misplaced_names(sig: inspect.Signature, *, supervised: bool, takes_rng: bool) -> str | None:
    """Why the parameter names of ``sig`` do not match what dpaudit passes by position — ``(X, [y,] epsilon[,
    rng])`` — or None: a generator's name in ε's place, or ε's name in the generator's."""
    names = _positional_names(sig)
    if names is None:
        return None
    first = 2 if supervised else 1
    passed = {first: "epsilon"} | ({first + 1: "rng"} if takes_rng else {})
    for position, argument in passed.items():
        if position >= len(names):
            continue
        name = names[position].lower()
        if argument == "epsilon" and name in GENERATOR_NAMES:
            has_epsilon = any(n.lower() in EPSILON_NAMES for n in names)
            return (f"its parameter {names[position]!r} would receive ε (dpaudit passes X, epsilon, rng in that order)"
                    + ("; epsilon and the generator are swapped" if has_epsilon else "; it takes no epsilon"))
        if argument == "rng" and name in EPSILON_NAMES:
            return (f"its parameter {names[position]!r} would receive the random generator (dpaudit passes X, "
                    "epsilon, rng in that order); epsilon and the generator are swapped")
    return None


def check_function(fn: Any, label: str, *, supervised: bool, takes_rng: bool) -> None:
    """Raise :class:`PluginFormError` unless ``fn`` can be called as dpaudit will call it:
    ``fn(X, [y,] epsilon[, rng])`` — the arguments bind (:meth:`inspect.Signature.bind`) and the parameters'
    names do not say another order (:func:`misplaced_names`)."""
    sig = _signature(fn)
    if sig is None:
        return
    name = str(getattr(fn, "__name__", "fn"))
    accepted = f"a plug-in function is {', '.join(FUNCTION_FORMS[:2])} or {FUNCTION_FORMS[2]}"
    n = (2 if supervised else 1) + 1 + (1 if takes_rng else 0)
    try:
        sig.bind(*range(n))
    except TypeError as exc:
        raise PluginFormError(f"{label}: {_shown(name, sig)} does not take the arguments dpaudit passes ({exc}); "
                              f"{accepted}") from None
    wrong = misplaced_names(sig, supervised=supervised, takes_rng=takes_rng)
    if wrong is not None:
        raise PluginFormError(f"{label}: {_shown(name, sig)}: {wrong}; {accepted}")


def check_mechanism(obj: Any, label: str) -> None:
    """Raise :class:`PluginFormError` unless ``obj.release`` takes ``(X, rng)``."""
    sig = _signature(getattr(obj, "release", None))
    if sig is None:
        return
    try:
        sig.bind(0, 1)
    except TypeError as exc:
        raise PluginFormError(f"{label}: release{sig} does not take (X, rng) ({exc}); a mechanism's "
                              "release(X, rng) returns one release") from None


def check_estimator(cls: Any, label: str, *, supervised: bool) -> None:
    """Raise :class:`PluginFormError` unless an estimator class's ``fit`` takes ``(X)`` or, supervised, ``(X, y)``."""
    sig = _signature(getattr(cls, "fit", None))
    if sig is None:
        return
    try:
        sig.bind(None, *range(2 if supervised else 1))
    except TypeError as exc:
        raise PluginFormError(f"{label}: fit{sig} does not take {'(X, y)' if supervised else '(X)'} ({exc}); an "
                              "estimator plug-in is fitted as fit(X), or fit(X, y) when supervised") from None


def missing_attribute(owner: Any, name: str, where: str) -> str:
    """The line for a spec whose ``name`` is not in ``owner`` (a module or class) ``where`` names: what it
    does define, and "did you mean" the closest names."""
    module = getattr(owner, "__name__", None) if inspect.ismodule(owner) else None
    defined = sorted(n for n in dir(owner) if not n.startswith("_") and _is_plugin_like(getattr(owner, n, None), module))
    close = difflib.get_close_matches(name, defined, n=3, cutoff=0.6)
    if close:
        return f"{where} has no attribute {name!r}; did you mean {' or '.join(repr(c) for c in close)}?"
    if defined:
        return f"{where} has no attribute {name!r}; it defines {', '.join(defined[:10])}{', …' if len(defined) > 10 else ''}"
    return f"{where} has no attribute {name!r}, and defines no function or class"


def _is_plugin_like(obj: Any, module: str | None) -> bool:
    """A function or class defined in ``module`` (when given), or any callable other than a module."""
    if obj is None or inspect.ismodule(obj) or not callable(obj):
        return False
    return module is None or getattr(obj, "__module__", module) == module
