"""Adapters that turn third-party code into a :class:`~dpaudit.mechanisms.base.Mechanism`.

Accepted shapes:

* a Mechanism object (or class) — used as it is;
* a plain function ``fn(X, epsilon, rng) -> array`` — :class:`FunctionMechanism`;
  the caller states the release kind (``output``) and the claim
  (``neighbours``, ``delta``) because a bare function cannot;
* a scikit-learn-style estimator class with an ``epsilon`` parameter and
  ``fit(X)`` — :class:`EstimatorMechanism`, releasing ``cluster_centers_``
  (``output="centroids"``) or ``labels_`` (``output="labels"``).

*Supervised* plug-ins — an estimator whose ``fit`` takes ``(X, y)``, a
function ``fn(X, y, epsilon, rng)`` — get the label as the last column of
each record (:mod:`dpaudit.mechanisms.supervised`).  A function without a generator
parameter (``fn(X, epsilon)``, ``fn(X, y, epsilon)``) draws its own
randomness: ``own_randomness`` is then true, and the auditor does not replay it
(the same seed cannot give the same release).

Where a plug-in is found.  ``path/to/file.py:attr`` is loaded from that file;
``package.module:attr`` is imported — from the installed packages, and from the
working directory when it holds ``package/`` (or ``package.py``): that
directory is added to ``sys.path`` (:func:`on_import_path`), as pytest adds
its rootdir, so a project's own package needs no ``PYTHONPATH`` and its
imports of its own modules work.  It is appended: installed packages come
first, and no module of the project shadows one of theirs.
:func:`plugin_root` names the directory; a worker process that runs the
plug-in (:mod:`dpaudit.execution.worker`) needs it on its own ``sys.path`` too.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any, Callable, cast

import numpy as np

from .base import (
    RELEASE_KINDS,
    Centroids,
    InvalidInputError,
    Labels,
    Points,
    PrivacyClaim,
    Release,
    Vector,
    check_epsilon,
    random_state_from,
)
from .label_column import SUPERVISED_OUTPUTS, fit_takes_y, function_shape
from .plugin_forms import PLUGIN_ROOT, PluginFormError, check_estimator, check_function, spec_form
from .supervised import Supervision, read_release

__all__ = ["MAX_RELEASE_ABS", "NOT_FINITE", "BoxedMechanism", "EstimatorMechanism", "FunctionMechanism", "MalformedReleaseError",
           "check_output", "on_import_path", "plugin_root", "wrap_array"]

_ARRAY_KINDS = ("points", "centroids", "labels", "vector")
# Release values beyond this size are garbage, not a release: distances square the differences of two values
# and sum them, so (2·1e150)² · 10⁷ coordinates stays below the float64 maximum while 1e300 overflows at the
# first square (the same limit the command line puts on records).  Every path checks it (execution).
MAX_RELEASE_ABS = 1e150
NOT_FINITE = f"NaN or infinite values, or values beyond ±{MAX_RELEASE_ABS:.0e} (distances between them overflow)"


def plugin_root(spec: str, cwd: str | None = None) -> str | None:
    """The directory a ``package.module:attr`` plug-in is looked up in besides the installed packages:
    ``cwd`` (default: the working directory, absolute) when it holds the spec's top-level package
    (``package/``) or module (``package.py``); None for any other spec (a registered name, ``file.py:attr``)."""
    form = spec_form(spec) if isinstance(spec, str) else None
    if form is None or PLUGIN_ROOT not in form.needs:
        return None
    top = spec.strip().rpartition(":")[0].partition(".")[0]
    try:
        root = os.path.abspath(os.getcwd() if cwd is None else cwd)
    except OSError:  # the working directory was removed
        return None
    if os.path.isdir(os.path.join(root, top)) or os.path.isfile(os.path.join(root, top + ".py")):
        return root
    return None


def on_import_path(spec: str) -> str | None:
    """Append :func:`plugin_root` of ``spec`` to ``sys.path`` unless it is there already (``""`` counts
    as the working directory), so that importing the plug-in finds it; that directory, or None."""
    root = plugin_root(spec)
    if root is not None and not any(os.path.abspath(entry or os.curdir) == root for entry in sys.path):
        sys.path.append(root)
        importlib.invalidate_caches()
    return root


class MalformedReleaseError(RuntimeError):
    """Audited code returned something that is not a valid release (NaN, wrong shape, ...)."""


def wrap_array(value: Any, output: str, X: np.ndarray) -> Release:
    """Check a raw array returned by audited code and wrap it as ``output``.

    Vectors, points and centroids may hold "no answer" entries (None, NaN, ±inf: part of the release, which
    the auditor notes); labels must be finite whole numbers.  A centroids release may hold any number of
    centres, none included: an empty array (shape ``(0, d)``, or any shape with no element) is the empty set
    of centres of a clustering that found no cluster.
    """
    if isinstance(value, Release):
        return value
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MalformedReleaseError(f"returned a non-numeric value of type {type(value).__name__}: {exc}") from None
    if output == "vector":
        # "No answer" entries (None → NaN, ±inf) are part of a vector release (a sparse
        # vector's ⊥); the auditor gives them their own status features.
        return Vector(arr)
    n, d = X.shape
    if output == "points":
        if arr.shape != (n, d):
            raise MalformedReleaseError(f"returned shape {arr.shape}; a points release must have the input's shape {(n, d)}")
        return Points(arr)
    if output == "centroids":
        if arr.size == 0:  # no cluster found: the empty set of centres
            return Centroids(arr.reshape(0, d))
        if arr.ndim != 2 or arr.shape[1] != d:
            raise MalformedReleaseError(f"returned shape {arr.shape}; a centroids release must be k×{d}")
        return Centroids(arr)
    if not (np.all(np.isfinite(arr)) and (arr.size == 0 or float(np.max(np.abs(arr))) <= MAX_RELEASE_ABS)):
        raise MalformedReleaseError(f"returned {NOT_FINITE}")
    if output == "labels":
        if arr.shape != (n,):
            raise MalformedReleaseError(f"returned shape {arr.shape}; a labels release must have one label per record ({n},)")
        if np.any(arr != np.round(arr)):
            raise MalformedReleaseError("returned non-integer labels")
        return Labels(arr.astype(np.int64))
    raise InvalidInputError(f"output must be one of {', '.join(_ARRAY_KINDS)}; got {output!r}")


def check_output(output: str) -> str:
    """A plug-in function's declared release kind (``--output``), checked before anything runs
    (``parameters`` and ``predictions`` are what a supervised estimator class releases: a vector)."""
    if output in SUPERVISED_OUTPUTS:
        return output
    if output not in _ARRAY_KINDS:
        if output in RELEASE_KINDS:
            raise InvalidInputError(f"a plug-in cannot release {output!r} as a bare array; return a Release object")
        raise InvalidInputError(f"output must be one of {', '.join(_ARRAY_KINDS)}; got {output!r}")
    return output


class FunctionMechanism:
    """A plain function ``fn(X, epsilon, rng) -> ndarray`` as a mechanism.

    Parameters
    ----------
    fn : callable
        The audited function.  It receives the data, the ε it should honour
        and a :class:`numpy.random.Generator`.
    epsilon, delta, neighbours
        The claim the function's authors make (a bare function cannot say).
    output : {"points", "centroids", "labels", "vector"}, optional
        How to read the returned array; not stated (None), it is read as points, and a first release of
        another shape is the caller's mistake (``output_stated`` is false: the first call tells,
        :func:`dpaudit.execution.check_unstated_output`).
    bounds : (lo, hi), optional
        The public box the code works in: where the auditor places its canaries and worst-case datasets
        (``bounds``, read by the estimator); never passed to the function.
    supervision : Supervision, optional
        For ``fn(X, y, epsilon, rng)``: how the last column of each record
        becomes ``y`` (required for such a function).
    own_randomness : bool
        The function draws its own randomness (always so for ``fn(X, epsilon)``).
    """

    plugin_kind = "function"

    def __init__(self, fn: Callable[..., Any], *, epsilon: float, output: str | None = None,
                 neighbours: str = "add-remove", delta: float = 0.0, name: str | None = None,
                 bounds: Any = None, supervision: Supervision | None = None, own_randomness: bool = False) -> None:
        if not callable(fn):
            raise InvalidInputError(f"{fn!r} is not callable")
        self.fn = fn
        self.epsilon = check_epsilon(epsilon)
        self.output_stated = output is not None
        self.output = check_output("points" if output is None else output)
        self.bounds = bounds
        if self.output in SUPERVISED_OUTPUTS:
            raise InvalidInputError(f"--output {self.output} reads a fitted estimator; a function returns its "
                                    "release itself: use --output vector")
        self.claim = PrivacyClaim(self.epsilon, delta, neighbours)
        self.name = name or str(getattr(fn, "__name__", "plugin"))
        self.supervised, no_rng = function_shape(fn)
        self._takes_rng = not no_rng
        try:
            check_function(fn, self.name, supervised=self.supervised, takes_rng=self._takes_rng)
        except PluginFormError as exc:
            raise InvalidInputError(str(exc)) from None
        self.own_randomness = bool(own_randomness) or no_rng
        if self.supervised and supervision is None:
            raise InvalidInputError(f"{self.name} takes labels (fn(X, y, ...)): give labelled data — a built-in "
                                    "dataset, or --label-column for a CSV")
        self.supervision = supervision if self.supervised else None

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release:
        args: tuple[Any, ...] = (X,)
        if self.supervision is not None:
            args = self.supervision.split(X)
        value = self.fn(*args, self.epsilon, rng) if self._takes_rng else self.fn(*args, self.epsilon)
        return wrap_array(value, self.output, X)

    def __repr__(self) -> str:
        return f"FunctionMechanism({self.name}, epsilon={self.epsilon:g}, output={self.output!r})"


class EstimatorMechanism:
    """A scikit-learn-style estimator with an ``epsilon`` parameter.

    Each release constructs ``estimator_cls(epsilon=..., **params)``, passes a
    ``random_state`` drawn from the generator when the estimator accepts one,
    calls ``fit(X)`` and releases ``cluster_centers_`` or ``labels_``.  A
    supervised estimator (``fit(X, y)``: :func:`~dpaudit.mechanisms.label_column.fit_takes_y`)
    is fitted on the records' features and labels (``supervision``) and releases
    ``parameters`` or ``predictions`` (:func:`~dpaudit.mechanisms.supervised.read_release`).
    ``bounds`` is the public box the code works in (where the auditor places canaries); it is passed to the
    estimator too when its constructor takes ``bounds`` (diffprivlib's models do).
    """

    plugin_kind = "estimator"

    def __init__(self, estimator_cls: type, *, epsilon: float, output: str | None = None,
                 neighbours: str = "add-remove", delta: float = 0.0, name: str | None = None, bounds: Any = None,
                 supervision: Supervision | None = None, own_randomness: bool = False, **params: Any) -> None:
        self.estimator_cls = estimator_cls
        self.epsilon = check_epsilon(epsilon)
        self.output = check_output(output or "centroids")
        self.bounds = bounds
        self.name = name or estimator_cls.__name__
        self.supervised = fit_takes_y(estimator_cls)
        try:
            check_estimator(estimator_cls, self.name, supervised=self.supervised)
        except PluginFormError as exc:
            raise InvalidInputError(str(exc)) from None
        if self.supervised:
            if self.output not in SUPERVISED_OUTPUTS:
                raise InvalidInputError(f"{self.name} is a supervised estimator (fit(X, y)): it releases "
                                        f"{' or '.join(SUPERVISED_OUTPUTS)} (--output), not {self.output}")
            if supervision is None:
                raise InvalidInputError(f"{self.name} is a supervised estimator (fit(X, y)): give labelled data "
                                        "— a built-in dataset, or --label-column for a CSV")
        elif self.output not in ("centroids", "labels"):
            raise InvalidInputError("an estimator plug-in releases centroids (cluster_centers_) or labels (labels_)")
        self.supervision = supervision if self.supervised else None
        self._grid = (np.asarray(self.supervision.grid, dtype=np.float64)
                      if self.supervision is not None and self.supervision.grid else None)
        sig = inspect.signature(estimator_cls)
        if bounds is not None and "bounds" in sig.parameters:
            params = {"bounds": bounds, **params}
        self.params = params
        self.claim = PrivacyClaim(self.epsilon, delta, neighbours)
        self._takes_random_state = "random_state" in sig.parameters
        self.own_randomness = bool(own_randomness)

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release:
        params = dict(self.params)
        if self._takes_random_state:
            params["random_state"] = random_state_from(rng)
        est = self.estimator_cls(epsilon=self.epsilon, **params)
        if self.supervision is not None:
            est.fit(*self.supervision.split(X))
            try:
                return Vector(read_release(est, self.output, self._grid))
            except InvalidInputError as exc:
                raise MalformedReleaseError(str(exc)) from None
        est.fit(X)
        attr = "cluster_centers_" if self.output == "centroids" else "labels_"
        if not hasattr(est, attr):
            raise MalformedReleaseError(f"{self.name}.fit did not set {attr}")
        return wrap_array(getattr(est, attr), self.output, X)

    def __repr__(self) -> str:
        return f"EstimatorMechanism({self.name}, epsilon={self.epsilon:g}, output={self.output!r})"


class BoxedMechanism:
    """A mechanism object that states no public box, seen with one: ``bounds`` is the box the caller says the code
    works in (where the auditor places canaries); everything else — ``release``, ``release_many``, ``claim``,
    ``name``, any attribute — is the mechanism's own.  The object itself is left as it is."""

    def __init__(self, mechanism: Any, bounds: Any) -> None:
        self.mechanism = mechanism
        self.bounds = bounds

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release:
        return cast(Release, self.mechanism.release(X, rng))

    def __getattr__(self, name: str) -> Any:
        if name == "mechanism":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.mechanism, name)

    def __repr__(self) -> str:
        return f"BoxedMechanism({self.mechanism!r}, bounds={self.bounds!r})"
