"""The forms a plug-in may take, and their check before anything runs — the part both sides of the process boundary
need (the auditor's :mod:`dpaudit.mechanisms.registry` and a worker in another interpreter,
:mod:`dpaudit.execution.worker_audited`, which loads this file by path): standard library only.

Two tables, read by both sides.  :data:`SPEC_FORMS`: how a ``--mechanism`` spec names the code (a registered
name, ``package.module:attr``, ``path/to/file.py:attr``) and what loading it needs.  :data:`FORMS`: what the
loaded object is (a function, a mechanism class or object, an estimator class), how dpaudit calls it and what
the caller must state for it.  Each side adapts a form by its name (the registry's ``ADAPTERS``, the worker's
``Audited.ADOPT``; a test holds both to the table), so a new form is an entry here plus, when it is called
another way than the forms before it, its adapter on each side.

A plug-in whose form does not fit is a user mistake, told in one line before the audit starts
(:class:`PluginFormError`); what its code does once called is the code's own behaviour, a finding.  The check
binds the arguments dpaudit will pass to the plug-in's signature (:func:`inspect.Signature.bind`); it never
calls the code.  Code without a signature (a builtin, an extension function) is not checked here.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Callable

__all__ = ["ACCEPTED", "EPSILON_NAMES", "FORMS", "FUNCTION_FORMS", "GENERATOR_NAMES", "OWN_PACKAGES", "PLUGIN_ROOT",
           "SPEC_FORMS", "PluginForm", "PluginFormError", "SpecForm", "check_estimator", "check_function",
           "check_mechanism", "form_of", "is_file_spec", "misplaced_names", "missing_attribute", "recognised_form",
           "spec_form", "split_spec"]

# How a plug-in function is called (dpaudit.mechanisms.label_column.function_shape reads which one it is).
FUNCTION_FORMS = ("fn(X, epsilon, rng)", "fn(X, epsilon) (draws its own randomness)",
                  "fn(X, y, epsilon[, rng]) (supervised: y is the label column)")


class SpecForm:
    """How a spec names the audited code: ``name`` (what each side loads it by), ``told`` (how messages show
    it), ``needs`` (what a worker needs to load it: :data:`OWN_PACKAGES`, :data:`PLUGIN_ROOT`), ``recognises``
    (whether a spec string has this form: the first form of :data:`SPEC_FORMS` that does is the spec's, so a
    form with a prefix of its own goes first).  A plain class, not a NamedTuple or a dataclass: a worker builds
    this table at every start."""

    __slots__ = ("name", "told", "needs", "recognises")

    def __init__(self, name: str, told: str, needs: tuple[str, ...], recognises: Callable[[str], bool]) -> None:
        self.name, self.told, self.needs, self.recognises = name, told, needs, recognises

    def __repr__(self) -> str:
        return f"SpecForm({self.name!r})"


OWN_PACKAGES = "dpaudit's own packages"  # a registered name: dpaudit.mechanisms builds it, in the worker too
PLUGIN_ROOT = "the working directory on the import path, when it holds the package"  # plugins.plugin_root


COMMAND_PREFIX = "cmd:"  # a program in any language (docs/executables.md)


def split_spec(spec: str) -> tuple[str, str] | None:
    """``(module or file, attribute path)`` of ``spec``; None when it is not of the form ``left:attr`` (a program,
    ``cmd:COMMAND``, is not)."""
    if str(spec).startswith(COMMAND_PREFIX):
        return None
    left, sep, attr = str(spec).rpartition(":")
    return (left, attr) if sep and left and attr else None


def is_file_spec(left: str) -> bool:
    """Whether the left side of a spec names a Python file (``.py``, or any path) rather than a module."""
    return left.endswith(".py") or "/" in left or "\\" in left


SPEC_FORMS: tuple[SpecForm, ...] = (  # in precedence order; the forms exclude one another
    SpecForm("command", "cmd:COMMAND", (), lambda s: s.startswith(COMMAND_PREFIX)),
    SpecForm("file", "path/to/file.py:attr", (), lambda s: (p := split_spec(s)) is not None and is_file_spec(p[0])),
    SpecForm("module", "package.module:attr", (PLUGIN_ROOT,),
             lambda s: (p := split_spec(s)) is not None and not is_file_spec(p[0])),
    SpecForm("registered", "a registered name", (OWN_PACKAGES,), lambda s: ":" not in s),
)


def spec_form(spec: str) -> SpecForm | None:
    """The form of ``spec``: the first of :data:`SPEC_FORMS` that recognises it, or None (``module:``, ``:attr``)."""
    return next((form for form in SPEC_FORMS if form.recognises(str(spec).strip())), None)


class PluginForm:
    """One form of plug-in object: ``name`` (what each side adapts it by), ``kind`` (the run's ``plugin_kind``:
    how its releases are read), ``told`` (how the accepted forms line names it), ``called_as`` (how dpaudit calls
    it), ``needs`` (what the caller must state: the ε a function or an estimator cannot), ``recognises`` (whether
    a loaded object has this form — it looks, never calls; the forms exclude one another)."""

    __slots__ = ("name", "kind", "told", "called_as", "needs", "recognises")

    def __init__(self, name: str, kind: str, told: str, called_as: str, needs: tuple[str, ...],
                 recognises: Callable[[Any], bool]) -> None:
        self.name, self.kind, self.told, self.called_as = name, kind, told, called_as
        self.needs, self.recognises = needs, recognises

    def __repr__(self) -> str:
        return f"PluginForm({self.name!r})"


def _is_mechanism_object(obj: Any) -> bool:
    return not inspect.isclass(obj) and hasattr(obj, "release") and hasattr(obj, "claim")


def _is_estimator_class(obj: Any) -> bool:
    sig = _signature(obj) if inspect.isclass(obj) and not hasattr(obj, "release") and hasattr(obj, "fit") else None
    return sig is not None and "epsilon" in sig.parameters


_MECHANISMS = "a mechanism class or object with release(X, rng)"
FORMS: tuple[PluginForm, ...] = (
    PluginForm("function", "function", "a function " + ", ".join(FUNCTION_FORMS), "fn(X, epsilon, rng) → an array",
               ("epsilon",), lambda obj: callable(obj) and not inspect.isclass(obj) and not _is_mechanism_object(obj)),
    PluginForm("mechanism class", "mechanism", _MECHANISMS, "Class(**params).release(X, rng) → a release", (),
               lambda obj: inspect.isclass(obj) and hasattr(obj, "release")),
    PluginForm("mechanism object", "mechanism", _MECHANISMS, "obj.release(X, rng) → a release", (),
               _is_mechanism_object),
    PluginForm("estimator class", "estimator", "an estimator class with an epsilon parameter and fit(X) or fit(X, y)",
               "Class(epsilon=…, **params).fit(X) → cluster_centers_ or labels_", ("epsilon",), _is_estimator_class),
    PluginForm("program", "executable", "a program in any language, named cmd:COMMAND (docs/executables.md)",
               "one long-lived process: a request of (data, ε, one seed per release) → its releases (dpaudit/1)",
               ("epsilon",), lambda obj: getattr(obj, "plugin_form", None) == "program"),
)
ACCEPTED = "; ".join(dict.fromkeys(form.told for form in FORMS))


def recognised_form(obj: Any) -> PluginForm | None:
    """The form of ``obj`` (:data:`FORMS`), or None."""
    return next((form for form in FORMS if form.recognises(obj)), None)


def form_of(obj: Any, label: str) -> PluginForm:
    """The form of ``obj``; an object of none is a :class:`PluginFormError` naming the accepted forms."""
    form = recognised_form(obj)
    if form is not None:
        return form
    if inspect.isclass(obj):
        raise PluginFormError(f"{label} is a class with neither release() nor fit() and an epsilon parameter; "
                              f"accepted: {ACCEPTED}")
    raise PluginFormError(f"{label} is a {type(obj).__name__}, not a plug-in; accepted: {ACCEPTED}")


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
