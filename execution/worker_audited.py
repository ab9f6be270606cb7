"""The audited object in the worker: loading it, calling it once, and its reply as meta and arrays.

Imported by ``_worker_calls.py`` (and, by path, by ``_worker_main.py`` when it
runs as a script in the audited code's interpreter): it needs only the
standard library and numpy.

* **Loading.**  :func:`load_audited` builds :class:`Audited` from a ``load``
  request: a registered mechanism name (through dpaudit's own ``dpaudit.mechanisms``,
  found first by :class:`OwnPackages`), or a plug-in spec ``module:attr`` /
  ``path.py:attr`` — a mechanism, a function or an estimator class, loaded by
  :func:`dpaudit.mechanisms.spec_loading.load_spec`, the auditor's own loader.
* **Supervised plug-ins.**  :func:`function_shape`, :func:`fit_takes_y` and
  :class:`Supervision` use :mod:`dpaudit.mechanisms.label_column`, the one copy
  both sides share (numpy only, loaded here from its file).
* **Replies.**  :func:`encode` turns a release into a meta and its arrays;
  anything that cannot be a release is :class:`Malformed`.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from typing import Any, Callable

import numpy as np

__all__ = ["Audited", "Malformed", "OwnPackages", "SPEC_LOADERS", "SUPERVISED_OUTPUTS", "Supervision", "encode",
           "fit_takes_y", "function_shape", "load_audited", "numeric"]

RAW_KINDS = ("points", "centroids", "labels", "vector")

# --------------------------------------------------------------------------- #
# Loading the audited object (a stdlib-only mirror of dpaudit.mechanisms.registry)
# --------------------------------------------------------------------------- #
class OwnPackages:
    """A meta-path finder, put *first*, that resolves exactly the named packages from the named folders:
    dpaudit's own ``dpaudit`` and ``dpaudit.mechanisms``, wherever the auditor's interpreter has them
    (an installed copy, or a checkout whose folders the install maps into one namespace).  An audited
    environment's own ``dpaudit``, however it got there, is never picked up instead; every other name is
    left to the usual finders, and submodules are found through these packages' own ``__path__``."""

    def __init__(self, folders: dict[str, str]) -> None:
        self.folders = dict(folders)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(fullname, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])


def _load_object(spec: str) -> Any:
    """The object a plug-in spec names (:func:`dpaudit.mechanisms.spec_loading.load_spec`)."""
    return _shared("spec_loading").load_spec(spec, "audited_plugin")


_OPTIONAL = ("epsilon", "bounds")  # passed to a plug-in class only if its constructor takes them
_PLUGIN_KEYS = {"output", "neighbours", "delta"}


def _accepts(sig: inspect.Signature, key: str) -> bool:
    """Whether a constructor of signature ``sig`` takes the keyword ``key`` (by name or ``**kwargs``)."""
    return key in sig.parameters or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


# --------------------------------------------------------------------------- #
# Supervised plug-ins: the numpy-only part both sides share (dpaudit.mechanisms.label_column)
# --------------------------------------------------------------------------- #
def _shared(name: str) -> Any:
    """The module ``dpaudit.mechanisms.<name>`` (standard library and numpy only), loaded from its file beside
    this package's folder: the auditor's own copy, in whatever interpreter the worker runs (never a
    ``dpaudit`` that interpreter may have installed)."""
    key = f"_audit_worker_{name}"
    if key not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mechanisms", f"{name}.py")
        spec = importlib.util.spec_from_file_location(key, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


_labels = _shared("label_column")
_forms = _shared("plugin_forms")
programs = _shared("executable_protocol")  # plug-in form: a program (cmd:COMMAND) — its protocol client
# How a worker loads what a spec of each form names (plugin_forms.SPEC_FORMS, by name), besides the registered
# names (dpaudit.mechanisms.get builds those); the auditor's process has its own (registry.SPEC_LOADERS).
SPEC_LOADERS = {"file": _load_object, "module": _load_object, "command": programs.CommandSpec}
SUPERVISED_OUTPUTS = _labels.SUPERVISED_OUTPUTS
fit_takes_y = _labels.fit_takes_y
function_shape = _labels.function_shape


class Supervision:
    """How the last column of a record becomes ``y``, and what a fitted estimator releases, from the
    auditor's JSON set-up (:class:`dpaudit.mechanisms.supervised.Supervision`, its ``to_dict``)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.classes = spec.get("classes")
        self.label_range: Any = spec.get("label_range")  # (lo, hi) when there are no classes
        self.anchors = spec.get("anchors") or []
        self.grid = np.asarray(spec.get("grid") or [], dtype=np.float64)

    def split(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _labels.split_records(records, self.classes, self.label_range, self.anchors, error=ValueError)

    def read(self, est: Any, output: str) -> np.ndarray:
        return _labels.release_of(est, output, self.grid, error=AttributeError)


class Audited:
    """The audited object and how to call it."""

    def __init__(self, spec: str, params: dict[str, Any], output: str, supervision: dict[str, Any] | None = None,
                 own_randomness: bool = False, output_stated: bool = True) -> None:
        self.output = output
        self.output_stated = output_stated
        self.epsilon = params.get("epsilon")
        self.kind = "mechanism"
        self.refusal: type[BaseException] | None = None  # a registered mechanism's "bad input" error
        self.supervision: Supervision | None = None
        self.takes_rng = True
        self.own_randomness = bool(own_randomness)
        self.roots: tuple[str, ...] = ()  # folders a trace names the code's files relative to (worker_frames)
        self.obj: Any = None  # what _load adopts: a mechanism, a class, a function or a program
        self._load(spec, params, output)
        if self.kind == "mechanism" and getattr(self.obj, "own_randomness", False) is True:
            self.own_randomness = True  # a mechanism class may state it (an attribute own_randomness = True)
        if output in SUPERVISED_OUTPUTS and self.kind != "estimator":
            raise TypeError(f"--output {output} reads a fitted supervised estimator class; {spec} is a "
                            f"{self.kind}: use --output vector for what it returns")
        if self.kind == "estimator" and not self.supervised and output not in ("centroids", "labels"):
            raise TypeError(f"{spec} is an unsupervised estimator (fit(X)): it releases centroids "
                            f"(cluster_centers_) or labels (labels_), not {output}")
        if self.supervised:
            if supervision is None:
                raise TypeError(f"{spec} takes labels ({'fit(X, y)' if self.kind == 'estimator' else 'fn(X, y, …)'}):"
                                " give labelled data — a built-in dataset, or --label-column for a CSV")
            self.supervision = Supervision(supervision)
            if self.kind == "estimator" and output not in SUPERVISED_OUTPUTS:
                raise TypeError(f"{spec} is a supervised estimator (fit(X, y)): it releases "
                                f"{' or '.join(SUPERVISED_OUTPUTS)} (--output), not {output}")
            if output == "predictions" and not self.supervision.grid.size:  # pragma: no cover - the auditor sends one
                raise TypeError("--output predictions needs a public grid of feature points (a box: --bounds)")

    @property
    def supervised(self) -> bool:
        if self.kind == "estimator":
            return fit_takes_y(self.obj)
        if self.kind == "function":
            return function_shape(self.obj)[0]
        return False

    def _load(self, spec: str, params: dict[str, Any], output: str) -> None:
        """The object ``spec`` names (its :data:`~dpaudit.mechanisms.plugin_forms.SPEC_FORMS` form), adopted by
        its plug-in form (:data:`ADOPT`)."""
        where = _forms.spec_form(spec)
        if where is not None and where.name == "registered":  # needs dpaudit's mechanisms package
            import dpaudit.mechanisms
            from dpaudit.mechanisms.validation import InvalidInputError
            self.refusal = InvalidInputError
            self.obj = dpaudit.mechanisms.get(spec, **params)  # or a plug-in's class, instance or function
            return
        if where is None or where.name not in SPEC_LOADERS:
            raise _forms.PluginFormError(f"{spec!r} is not of the form module:attr or file.py:attr")
        obj = SPEC_LOADERS[where.name](spec)
        if where.name == "file":  # file.py:attr: its files are named from its folder
            self.roots = (os.path.dirname(os.path.abspath(spec.rpartition(":")[0])),)
        form = _forms.form_of(obj, spec)
        self.kind = form.kind
        self.ADOPT[form.name](self, obj, params, spec)

    def _mechanism_class(self, cls: Any, params: dict[str, Any], spec: str) -> None:
        sig = inspect.signature(cls)
        # ε and the public box are the auditor's: a class that states its own claim, or places no
        # canaries, need not take them (the box is still where the auditor places canaries)
        params = {k: v for k, v in params.items() if k not in _OPTIONAL or _accepts(sig, k)}
        self.obj = cls(**{k: v for k, v in params.items() if k not in _PLUGIN_KEYS or k in sig.parameters})
        _forms.check_mechanism(self.obj, spec)

    def _mechanism_object(self, obj: Any, params: dict[str, Any], spec: str) -> None:
        _forms.check_mechanism(obj, spec)
        self.obj = obj

    def _estimator_class(self, cls: Any, params: dict[str, Any], spec: str) -> None:
        sig = inspect.signature(cls)
        _forms.check_estimator(cls, spec, supervised=fit_takes_y(cls))
        self.obj = cls
        self.params = {k: v for k, v in params.items() if k not in _PLUGIN_KEYS and (k not in _OPTIONAL
                                                                                    or _accepts(sig, k))}
        self.takes_random_state = "random_state" in sig.parameters

    def _program(self, command: Any, params: dict[str, Any], spec: str) -> None:
        """A program (``cmd:COMMAND``) owns the process it runs, started here and spoken to by its protocol client;
        it says what it releases in its handshake."""
        self.obj = programs.Program(command.spec, epsilon=self.epsilon,
                                    output=self.output if self.output_stated else None,
                                    params={k: v for k, v in params.items() if k != "epsilon"}, in_worker=True)
        self.output = self.obj.output

    def _function(self, fn: Any, params: dict[str, Any], spec: str) -> None:
        supervised, no_rng = function_shape(fn)
        _forms.check_function(fn, spec, supervised=supervised, takes_rng=not no_rng)
        self.obj = fn
        self.takes_rng = not no_rng
        self.own_randomness = self.own_randomness or not self.takes_rng

    # How a worker runs each plug-in form (plugin_forms.FORMS, by name); the auditor's process has its own
    # (dpaudit.mechanisms.registry.ADAPTERS).
    ADOPT: dict[str, Callable[[Audited, Any, dict[str, Any], str], None]] = {
        "function": _function, "mechanism class": _mechanism_class, "mechanism object": _mechanism_object,
        "estimator class": _estimator_class, "program": _program}

    def describe(self) -> dict[str, Any]:
        name = getattr(self.obj, "name", None) or getattr(self.obj, "__name__", "plugin")
        vectorised = self.kind == "mechanism" and callable(getattr(self.obj, "release_many", None))
        out: dict[str, Any] = {"name": str(name), "kind": self.kind, "vectorised": vectorised,
                               "supervised": self.supervised, "own_randomness": self.own_randomness}
        if self.kind == "executable":  # plug-in form: a program says what it releases in its handshake
            out["output"] = self.output
        claim = getattr(self.obj, "claim", None) if self.kind == "mechanism" else None
        if claim is not None:
            out["claim"] = {"epsilon": float(claim.epsilon), "delta": float(getattr(claim, "delta", 0.0)),
                            "neighbours": str(getattr(claim, "neighbours", "add-remove"))}
        return out

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int
                     ) -> list[tuple[dict[str, Any], dict[str, np.ndarray]]]:
        """The mechanism's own vectorised ``release_many``: one stacked entry, or one entry per release."""
        batch = self.obj.release_many(X, rng, n)
        array = getattr(batch, "array", None)
        if array is not None and getattr(batch, "kind", None) in RAW_KINDS:
            arrays = {"value": numeric(array)}
            if getattr(batch, "counts", None) is not None:
                arrays["counts"] = numeric(batch.counts)
            return [({"kind": batch.kind, "batched": n}, arrays)]
        try:
            items = list(batch)
        except TypeError:
            raise Malformed(f"release_many returned {type(batch).__name__}, not a batch of releases") from None
        return [encode(rel) for rel in items]

    def release(self, X: np.ndarray, rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        if self.kind == "function":
            args: tuple[Any, ...] = (X,) if self.supervision is None else self.supervision.split(X)
            value = self.obj(*args, self.epsilon, rng) if self.takes_rng else self.obj(*args, self.epsilon)
            return {"kind": "raw"}, {"value": numeric(value)}
        if self.kind == "estimator":
            params = dict(self.params)
            if self.takes_random_state:
                params["random_state"] = int(rng.integers(2**31 - 1))  # mechanisms.base.random_state_from
            est = self.obj(**params)
            if self.supervision is not None:
                est.fit(*self.supervision.split(X))
                return {"kind": "vector"}, {"value": numeric(self.supervision.read(est, self.output))}
            est.fit(X)
            attr = "cluster_centers_" if self.output == "centroids" else "labels_"
            if not hasattr(est, attr):
                raise AttributeError(f"fit did not set {attr}")
            return {"kind": "raw"}, {"value": numeric(getattr(est, attr))}
        return encode(self.obj.release(X, rng))


def load_audited(header: dict[str, Any]) -> Audited:
    """The audited object a ``load`` request names (``own_packages``: the folders of dpaudit's own packages,
    resolved first — :class:`OwnPackages`; ``plugin_root``: the auditor's working directory when it holds the
    plug-in's package, appended to ``sys.path`` after the installed packages, as
    :func:`dpaudit.mechanisms.plugins.on_import_path` does there)."""
    own = header.get("own_packages")
    if own and not any(isinstance(f, OwnPackages) for f in sys.meta_path):
        sys.meta_path.insert(0, OwnPackages(own))
        importlib.invalidate_caches()
    project = header.get("plugin_root")
    if project and project not in sys.path:
        sys.path.append(project)
        importlib.invalidate_caches()
    return Audited(header["spec"], header.get("params", {}), header.get("output", "points"),
                   header.get("supervision"), bool(header.get("own_randomness")),
                   bool(header.get("output_stated", True)))


def encode(rel: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A release object (or a bare array) as a meta and its arrays."""
    if isinstance(rel, np.ndarray):
        return {"kind": "raw"}, {"value": numeric(rel)}
    kind: Any = getattr(rel, "kind", None)
    if kind == "spans":
        arrays = {"origin": numeric(rel.origin), "width": numeric(rel.width),
                  "shape": np.asarray(rel.shape, dtype=np.int64)}
        arrays.update({f"cells{j}": np.asarray(c, dtype=np.int64) for j, c in enumerate(rel.cells)})
        return {"kind": "spans", "n_cells": len(rel.cells)}, arrays
    field = {"points": "points", "centroids": "centers", "labels": "labels", "vector": "values"}.get(kind)
    if field is None:
        raise Malformed(f"returned {type(rel).__name__}, not a release")
    arrays = {"value": numeric(getattr(rel, field))}
    if kind == "centroids" and getattr(rel, "counts", None) is not None:
        arrays["counts"] = numeric(rel.counts)
    return {"kind": kind}, arrays


class Malformed(Exception):
    """The audited code returned something that cannot be a release."""


def numeric(value: Any) -> np.ndarray:
    """``value`` as a numeric (bool, integer or float) array; anything else is :class:`Malformed`."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise Malformed(f"returned a non-numeric value ({type(value).__name__} of dtype {arr.dtype})")
    return arr
