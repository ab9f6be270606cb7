"""Supervised plug-ins: code that learns from labelled records, audited with the label as part of the record.

A supervised plug-in is an estimator class whose ``fit`` takes ``(X, y)`` (a
second parameter with no default: ``fit(X, y=None)`` is scikit-learn's
*unsupervised* convention and stays unsupervised) or a function
``fn(X, y, epsilon, rng)``.  The auditor treats the label as what it is, part
of the person's record: every record it builds has the features followed by
the label as its **last column**, so a neighbouring pair (one record added,
removed or replaced) changes one label with its features, and a canary has a
label too.  :class:`Supervision` says how that column becomes the ``y`` the
code is given:

* **classification** (``classes``): the label column lies in the box
  [min class, max class] like any other column, and each value is mapped to
  the nearest known class (ties to the lower).  Constructions placed at box
  corners therefore carry the smallest or the largest class, the midpoint
  the middle one.  The map is applied to each record alone, so a pair of
  neighbouring datasets stays a pair of neighbours: a violation certified
  for the code fed this way is a violation of the code.
* **regression** (``label_range``): the label column is clipped to the
  public range of the target.

**Class anchors** (``anchors``): one public record per class — the centre of
the feature box, with that class — added to *both* datasets of every pair.
Classifiers refuse data that lacks a class (scikit-learn: "needs samples of
at least 2 classes"); without anchors most worst-case datasets (every record
at one corner, hence of one class) would be refused on one side and accepted
on the other, and the auditor would certify that refusal instead of what the
model releases.  With anchors the code is audited as ``M(D ∪ A)``; since
``D ∪ A`` and ``D′ ∪ A`` are neighbours whenever ``D`` and ``D′`` are, a
violation of ``M(· ∪ A)`` is a violation of ``M``.  The price: a leak that
needs a class to be absent (a model whose shape shows which classes the data
held) is not looked for; audit without anchors for that.

**What is released** by a supervised estimator class (``output``):
``parameters`` — the fitted ``coef_`` and ``intercept_`` (when the model has
one), flattened into one vector; ``predictions`` — the fitted model's
``predict_proba`` (else ``decision_function``, else ``predict``) on the
public ``grid`` of points in the feature box (:func:`feature_grid`), flattened.
A supervised function returns its release itself (``output="vector"``).

The part a worker in another interpreter needs too (which plug-ins take
labels, the split, the release) is one numpy-only module both sides use,
:mod:`dpaudit.mechanisms.label_column`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .label_column import labels_of, release_of, split_records
from .validation import InvalidInputError

__all__ = ["GRID_POINTS", "MAX_CLASSES", "Supervision", "class_anchors", "feature_grid", "read_release"]

GRID_POINTS = 25     # points of the public prediction grid (at most: a full grid of m^d points, m ≥ 2)
MAX_GRID_POINTS = 64  # beyond a full grid of this many points, a seeded uniform sample of GRID_POINTS points
MAX_CLASSES = 50     # distinct labels read from data beyond this are a regression target, not classes


def _tuple_rows(a: Any) -> tuple[tuple[float, ...], ...]:
    arr = np.asarray(a, dtype=np.float64)
    if arr.size == 0:
        return ()
    return tuple(tuple(float(v) for v in row) for row in np.atleast_2d(arr))


@dataclass(frozen=True)
class Supervision:
    """How the last column of a record becomes the label ``y`` a supervised plug-in is given.

    Exactly one of ``classes`` (classification: nearest class) and
    ``label_range`` (regression: clipped) is set.  ``anchors``: full records
    (features and label) added to every dataset; ``grid``: feature points for
    ``output="predictions"``; ``source``: where the classes came from (a
    sentence for the report).
    """

    classes: tuple[float, ...] | None = None
    label_range: tuple[float, float] | None = None
    anchors: tuple[tuple[float, ...], ...] = ()
    grid: tuple[tuple[float, ...], ...] = ()
    source: str = ""

    def __post_init__(self) -> None:
        if (self.classes is None) == (self.label_range is None):
            raise InvalidInputError("a supervised set-up needs the classes (classification) or the label's range "
                                    "(regression), not both")
        if self.classes is not None:
            values = np.unique(np.asarray(self.classes, dtype=np.float64))
            if values.size == 0 or not np.all(np.isfinite(values)):
                raise InvalidInputError(f"classes must be finite numbers, got {self.classes!r}")
            object.__setattr__(self, "classes", tuple(float(v) for v in values))
        elif self.label_range is not None:  # exactly one of the two is given (checked above)
            lo, hi = (float(v) for v in self.label_range)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise InvalidInputError(f"the label's range must be finite with LO < HI, got {self.label_range!r}")
            object.__setattr__(self, "label_range", (lo, hi))
        object.__setattr__(self, "anchors", _tuple_rows(self.anchors))
        object.__setattr__(self, "grid", _tuple_rows(self.grid))

    # ---- the label column ------------------------------------------------------------
    @property
    def kind(self) -> str:
        return "classification" if self.classes is not None else "regression"

    def label_bounds(self) -> tuple[float, float]:
        """The label column's side of the public box: [min class, max class], or the target's range."""
        if self.classes is not None:
            lo, hi = self.classes[0], self.classes[-1]
            return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)
        if self.label_range is None:  # __post_init__ requires the classes or the range
            raise RuntimeError("a supervised set-up with neither classes nor a label range")
        return self.label_range

    def labels(self, column: np.ndarray) -> np.ndarray:
        """The label of each value of the label column (nearest class, ties to the lower; or clipped)."""
        return labels_of(column, self.classes, self.label_range)

    def split(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(features, labels) of ``records`` (n × (d + 1), the label last), the anchors appended."""
        return split_records(records, self.classes, self.label_range, self.anchors, error=InvalidInputError)

    # ---- serialisation ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the worker's load request, and the report)."""
        return {"kind": self.kind, "classes": None if self.classes is None else list(self.classes),
                "label_range": None if self.label_range is None else list(self.label_range),
                "anchors": [list(a) for a in self.anchors], "grid": [list(g) for g in self.grid],
                "source": self.source}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Supervision":
        return cls(classes=None if data.get("classes") is None else tuple(data["classes"]),
                   label_range=None if data.get("label_range") is None else tuple(data["label_range"]),
                   anchors=tuple(map(tuple, data.get("anchors") or ())), grid=tuple(map(tuple, data.get("grid") or ())),
                   source=str(data.get("source", "")))


# --------------------------------------------------------------------------- #
# Public points: the anchors and the prediction grid
# --------------------------------------------------------------------------- #
def class_anchors(lo: Any, hi: Any, classes: Any) -> np.ndarray:
    """One record per class at the centre of the feature box [lo, hi] (rows: features, then the class)."""
    centre = (np.asarray(lo, dtype=np.float64) + np.asarray(hi, dtype=np.float64)) / 2.0
    return np.array([[*centre, float(c)] for c in classes], dtype=np.float64)


def feature_grid(lo: Any, hi: Any, points: int = GRID_POINTS) -> np.ndarray:
    """A fixed public grid in the feature box: m points per axis (m ≥ 2, m^d ≤ ``points`` where it can),
    each axis's points at the centres of m equal cells; beyond :data:`MAX_GRID_POINTS` grid points (high d) a
    uniform sample of ``points`` points drawn with seed 0."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    d = lo.size
    m = max(2, int(math.floor(points ** (1.0 / max(d, 1)) + 1e-9)))
    if m ** d > MAX_GRID_POINTS:
        return np.random.default_rng(0).uniform(lo, hi, size=(points, d))
    axes = [lo[j] + (hi[j] - lo[j]) * (np.arange(m) + 0.5) / m for j in range(d)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([g.ravel() for g in mesh])


def read_release(est: Any, output: str, grid: np.ndarray | None) -> np.ndarray:
    """A fitted supervised estimator's release: ``parameters`` or ``predictions`` on ``grid`` (one vector;
    :func:`dpaudit.mechanisms.label_column.release_of`, its failures as the user's mistake)."""
    return release_of(est, output, grid, error=InvalidInputError)
