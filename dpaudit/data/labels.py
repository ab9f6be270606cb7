"""Labelled records for supervised plug-ins: the label becomes the last column of every record.

:func:`supervision_for` turns a run's data and options into the
:class:`~dpaudit.mechanisms.supervised.Supervision` the worker uses (the classes, or
the target's range; the class anchors; the public prediction grid), and
:func:`with_labels` appends the label column to a dataset once the code has
said it takes labels.  The class set is a *schema* fact: stated with
``--classes``, or read from the data's label column (its distinct values,
which the report says), as a user who knows the task would state it.  The
target range of a regression is stated (``--label-range``): it is never read
from the data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.mechanisms.supervised import MAX_CLASSES, Supervision, class_anchors, feature_grid

from .datasets import Dataset

__all__ = ["labelled_box", "needed", "supervision_for", "supervision_summary", "with_labels"]


def _feature_box(ds: Dataset, stated: Any) -> tuple[np.ndarray, np.ndarray, bool]:
    """The feature box: ``--bounds``, the dataset's public box, else the data's range (not public)."""
    if stated is not None:
        return np.asarray(stated[0], float), np.asarray(stated[1], float), True
    if ds.bounds is not None:
        return np.asarray(ds.bounds[0], float), np.asarray(ds.bounds[1], float), True
    lo, hi = ds.X.min(axis=0), ds.X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return lo - 0.1 * span, hi + 0.1 * span, False


def supervision_for(ds: Dataset, *, classes: Any = None, label_range: Any = None, label_anchors: bool = True,
                    bounds: Any = None) -> Supervision | None:
    """How a supervised plug-in would be fed this data (None: no labels, none stated).

    ``classes``: the stated class set (``--classes``); else the distinct values
    of the data's labels (at most :data:`~dpaudit.mechanisms.supervised.MAX_CLASSES`).
    ``label_range``: the stated range of a regression target (``--label-range``).
    ``label_anchors``: one record per class at the centre of the feature box, in every
    dataset (see :mod:`dpaudit.mechanisms.supervised`).  ``bounds``: the stated feature
    box (``--bounds``), else the dataset's; the prediction grid lies in it.
    """
    if classes is not None and label_range is not None:
        raise InvalidInputError("give --classes (a classifier) or --label-range (a regressor), not both")
    if ds.y is None and classes is None and label_range is None:
        return None
    lo, hi, public = _feature_box(ds, bounds)
    grid = tuple(map(tuple, feature_grid(lo, hi).tolist()))
    where = "" if public else " (the data's range widened by 10 %: no public box was given)"
    if label_range is not None:
        return Supervision(label_range=tuple(label_range), grid=grid,
                           source=f"regression target clipped to the stated range{where}")
    if classes is not None:
        values, source = np.unique(np.asarray(classes, float)), "the classes stated with --classes"
    else:
        values = np.unique(np.asarray(ds.y, dtype=np.float64))
        if values.size > MAX_CLASSES:
            raise InvalidInputError(f"the label column has {values.size} distinct values: a regression target? "
                                    "give its public range with --label-range LO,HI (or the classes with --classes)")
        source = f"the {values.size} distinct labels of the data (give --classes to state them)"
    return Supervision(classes=tuple(values.tolist()), grid=grid, source=source + where,
                       anchors=tuple(map(tuple, class_anchors(lo, hi, values).tolist())) if label_anchors else ())


def needed(supervision: Supervision | None, ds: Dataset) -> Supervision:
    """The supervision a supervised plug-in's run on ``ds`` was given; refused when there is none (the data has no
    labels and none were stated)."""
    if supervision is None or ds.y is None:
        raise InvalidInputError(f"{ds.name} has no labels: a supervised plug-in needs them (--label-column NAME "
                                "for a CSV; built-in datasets carry labels)")
    return supervision


def with_labels(ds: Dataset, supervision: Supervision) -> Dataset:
    """``ds`` with its label as one more column (the last), the box extended by the label's side."""
    needed(supervision, ds)
    y = np.asarray(ds.y, dtype=np.float64).reshape(-1, 1)
    X = np.hstack([ds.X, y])
    return Dataset(ds.name, X, ds.y, labelled_box(ds.bounds, supervision), ds.description + "; the label as the "
                   "last column", {**ds.params, "label_column": "last"})


def labelled_box(box: Any, supervision: Supervision) -> tuple[np.ndarray, np.ndarray] | None:
    """A feature box (lo, hi) with the label column's side appended (None stays None)."""
    if box is None:
        return None
    lo, hi = supervision.label_bounds()
    return (np.append(np.asarray(box[0], float), lo), np.append(np.asarray(box[1], float), hi))


def supervision_summary(supervision: Supervision, output: str | None, *, public_box: bool = True) -> dict[str, Any]:
    """What the report says about the labels and the release (the grid itself only when its box is public)."""
    out: dict[str, Any] = {"label_column": "last column of every record", "kind": supervision.kind,
                           "source": supervision.source, "anchors": len(supervision.anchors)}
    if supervision.classes is not None:
        out["classes"] = list(supervision.classes)
        out["rule"] = "the label column is mapped to the nearest class (ties to the lower)"
    else:
        out["label_range"] = list(supervision.label_range or ())
        out["rule"] = "the label column is clipped to the stated range"
    if supervision.anchors:
        out["anchors_text"] = (f"{len(supervision.anchors)} class anchor(s) — one record per class at the centre "
                               "of the feature box — in every dataset of every pair")
    out["release"] = {"parameters": "the fitted coef_ and intercept_, flattened",
                      "predictions": f"predict_proba (else decision_function, else predict) on a fixed grid of "
                                     f"{len(supervision.grid)} points in the feature box",
                      }.get(output or "", "what the function returns")
    if output == "predictions" and public_box:
        out["grid"] = [list(g) for g in supervision.grid]
    return out
