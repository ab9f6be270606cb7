"""Supervised plug-ins, the part both sides of the process boundary need: which plug-ins take labels, how a
record's last column becomes the label ``y``, and what a fitted estimator releases.

One copy, imported by :mod:`dpaudit.mechanisms.supervised` in the auditor and loaded by path into a worker
running in another interpreter (:mod:`dpaudit.execution.worker_audited`), which has numpy and the standard
library only: this module imports nothing else, and raises the error class its caller names.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

__all__ = ["SUPERVISED_OUTPUTS", "fit_takes_y", "function_shape", "labels_of", "positional_parameters",
           "release_of", "split_records"]

SUPERVISED_OUTPUTS = ("parameters", "predictions")  # what a supervised estimator class releases


def positional_parameters(fn: Any) -> list[inspect.Parameter] | None:
    """``fn``'s positional parameters; None when it has no signature or takes ``*args``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def fit_takes_y(cls: Any) -> bool:
    """Whether an estimator class's ``fit`` needs labels: a second parameter without a default
    (``fit(self, X, y)``); ``fit(self, X, y=None)`` is scikit-learn's unsupervised convention."""
    fit = getattr(cls, "fit", None)
    params = positional_parameters(fit) if callable(fit) else None
    if not params:
        return False
    if params[0].name in ("self", "cls"):
        params = params[1:]
    return len(params) >= 2 and params[1].default is inspect.Parameter.empty


def function_shape(fn: Callable[..., Any]) -> tuple[bool, bool]:
    """(supervised, own randomness) of a plug-in function, from its positional parameters.

    ``fn(X, epsilon, rng)`` → (False, False); ``fn(X, y, epsilon, rng)`` →
    (True, False) — the second parameter is named ``y`` and has no default;
    ``fn(X, epsilon)`` and ``fn(X, y, epsilon)`` take no generator: they draw
    their own randomness (True in the second place).  A generator parameter
    with a default (``rng=None``) is still given the generator; ``*args`` too.
    """
    params = positional_parameters(fn)
    if params is None:
        return False, False
    supervised = len(params) >= 2 and params[1].name == "y" and params[1].default is inspect.Parameter.empty
    return supervised, len(params[2 if supervised else 1:]) == 1


def labels_of(column: np.ndarray, classes: Any, label_range: Any) -> np.ndarray:
    """The label of each value of the label column: the nearest of ``classes`` (ties to the lower; integers
    when every class is one), or the value clipped to ``label_range`` (regression: ``classes`` None)."""
    col = np.asarray(column, dtype=np.float64)
    if classes is None:
        return np.clip(col, float(label_range[0]), float(label_range[1]))
    c = np.unique(np.asarray(classes, dtype=np.float64))
    y = c[np.argmin(np.abs(col[:, None] - c[None, :]), axis=1)]  # the first (lower) class on a tie
    return y.astype(np.int64) if np.all(c == np.round(c)) else y


def split_records(records: np.ndarray, classes: Any, label_range: Any, anchors: Any,
                  error: type[Exception] = ValueError) -> tuple[np.ndarray, np.ndarray]:
    """(features, labels) of ``records`` (n × (d + 1), the label last), the ``anchors`` (full records)
    appended; a shape that cannot be split raises ``error``."""
    R = np.asarray(records, dtype=np.float64)
    if R.ndim != 2 or R.shape[1] < 2:
        raise error(f"a supervised plug-in needs records with features and a label column; got shape {R.shape}")
    A = np.asarray(anchors if anchors is not None else [], dtype=np.float64)
    if A.size:
        if A.ndim != 2 or A.shape[1] != R.shape[1]:
            raise error(f"class anchors have {A.shape[-1]} columns, the records {R.shape[1]}")
        R = np.vstack([R, A])
    return np.ascontiguousarray(R[:, :-1]), labels_of(R[:, -1], classes, label_range)


def release_of(est: Any, output: str, grid: np.ndarray | None, error: type[Exception] = ValueError) -> np.ndarray:
    """A fitted supervised estimator's release: ``parameters`` (``coef_`` and ``intercept_``, flattened) or
    ``predictions`` on the public ``grid`` (``predict_proba``, else ``decision_function``, else ``predict``);
    one vector.  What the estimator lacks raises ``error``."""
    if output == "parameters":
        if not hasattr(est, "coef_"):
            raise error(f"{type(est).__name__} has no coef_ after fit: --output parameters releases coef_ and "
                        "intercept_; release predictions, or write a function fn(X, y, epsilon, rng) that "
                        "returns the fitted values you want audited")
        parts = [np.ravel(np.asarray(est.coef_, dtype=np.float64))]
        if getattr(est, "intercept_", None) is not None:
            parts.append(np.ravel(np.asarray(est.intercept_, dtype=np.float64)))
        return np.concatenate(parts)
    if output == "predictions":
        if grid is None or len(grid) == 0:
            raise error("--output predictions needs the public grid (a box for the features)")
        for method in ("predict_proba", "decision_function", "predict"):
            if callable(getattr(est, method, None)):
                return np.ravel(np.asarray(getattr(est, method)(grid), dtype=np.float64))
        raise error(f"{type(est).__name__} has no predict method")
    raise error(f"a supervised estimator releases one of {', '.join(SUPERVISED_OUTPUTS)}; got {output!r}")
