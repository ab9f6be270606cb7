"""Turn a release into the model an attacker queries (scikit-learn compatible).

Membership attacks query a *classifier*; a clustering mechanism releases
points, centroids, spans or labels.  Following the thesis's semi-supervised
set-up (the nD-Laplace thesis §4.4.1, Fig. 4.2 and §5.3.2), each release becomes a
classifier over the same public classes:

* :class:`PointsTarget` — KMeans labels on the released points, then a
  RandomForest trained on released points → labels (the thesis pipeline);
* :class:`CentroidTarget` — soft nearest centroid, p ∝ exp(−‖x − c‖²/T);
* :class:`SpanTarget` — the span containing x (``Spans.predict``), one-hot;
  noise → uniform;
* :class:`LabelLookupTarget` — the released label of the nearest labelled
  record (an exact lookup for the records themselves); noise → uniform.

Cluster ids of different releases are arbitrary, so every target maps its
clusters onto the classes of a public :class:`Reference` clustering (KMeans on
the attacker's own shadow data, classes ordered canonically): a released
cluster takes the reference class nearest to its representative point.  All
targets therefore expose ``classes_ = [0, …, k−1]`` and ``predict_proba`` of
width k, which ART's ``SklearnClassifier`` needs.

:class:`MechanismPipeline` is an estimator whose ``fit(X)`` runs the
mechanism itself and builds the target from its release, so shadow models are
trained exactly as the target was.  Its randomness is derived from ``seed``
and a digest of the training data, so clones fitted on different shadow sets
get different noise, and the same inputs always give the same model.
"""

from __future__ import annotations

import hashlib
from typing import Any, cast

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.cluster import KMeans
from sklearn.ensemble import RandomForestClassifier
from sklearn.neighbors import NearestNeighbors

from dpaudit.execution import MechanismFailure, release_once
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import (
    Centroids,
    InvalidInputError,
    Labels,
    Mechanism,
    Points,
    Release,
    Spans,
    Vector,
)
from dpaudit.mechanisms.plugins import MalformedReleaseError
from dpaudit.mechanisms.registry import as_mechanism

from .attack import NotApplicable
from .flat_forest import FlatForest

__all__ = [
    "CentroidTarget",
    "LabelLookupTarget",
    "MechanismPipeline",
    "PointsTarget",
    "Reference",
    "SpanTarget",
    "check_release",
    "release_to_target",
]


def sq_dist(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances, (n, k), clipped at 0."""
    d2 = (np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ C.T + np.einsum("ij,ij->i", C, C)[None, :])
    return np.maximum(d2, 0.0)


def _canonical(centers: np.ndarray) -> np.ndarray:
    """Order centres lexicographically by coordinates (first coordinate first)."""
    order = np.lexsort(centers.T[::-1])
    return centers[order]


class Reference:
    """The attacker's public class structure: KMeans(k) on shadow data, canonically ordered.

    ``predict(X)`` gives the "true label" the attacker attaches to any record;
    ``align(reps)`` maps a release's cluster representatives onto these classes.
    """

    def __init__(self, centers: np.ndarray) -> None:
        centers = np.asarray(centers, dtype=np.float64)
        if centers.ndim != 2 or len(centers) < 2:
            raise InvalidInputError("a reference clustering needs at least 2 centres")
        self.centers = _canonical(centers)

    @classmethod
    def fit(cls, X: np.ndarray, k: int, seed: int) -> "Reference":
        km = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(X)
        return cls(km.cluster_centers_)

    @property
    def n_classes(self) -> int:
        return int(len(self.centers))

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.argmin(sq_dist(np.asarray(X, dtype=np.float64), self.centers), axis=1)

    def align(self, representatives: np.ndarray) -> np.ndarray:
        """Reference class of each cluster representative (its nearest reference centre)."""
        reps = np.asarray(representatives, dtype=np.float64)
        if len(reps) == 0:
            return np.empty(0, dtype=np.int64)
        return self.predict(reps)


class _Target(ClassifierMixin, BaseEstimator):
    """Shared parts: classes 0..k−1, predict = argmax predict_proba."""

    reference: Reference

    def _finish(self, n_features: int) -> None:
        self.classes_ = np.arange(self.reference.n_classes)
        self.n_features_in_ = n_features

    def predict_proba(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.argmax(self.predict_proba(X), axis=1)


# Every tree of a target's RandomForest is grown on at most this many bootstrap draws of the
# released points (scikit-learn's ``max_samples``; below it the forest is the thesis's default
# forest, bootstrap of size n).  A tree grown to purity on s draws has at most 2s − 1 nodes, so
# a forest is bounded by 100 × 2·10⁴ nodes (≈ 200 MB for 4 classes) whatever the release size;
# on the thesis's 2-D blobs a tree has ~10³ nodes.  Fitting costs O(s log s) per tree instead
# of O(n log n): at 1.25·10⁵ released points 1.4 s instead of 11 s per forest, and a shadow
# attack fits 4–5 forests.  Each member still reaches ≈ 100·(1 − e^(−s/n)) trees (15 at
# n = 1.25·10⁵); the same cap applies to the target and every shadow target, so the attacker
# models the target exactly as it was built.
FOREST_MAX_SAMPLES = 10_000
# Queries with fewer rows than this go through FlatForest (no per-tree dispatch; label-only's
# thousands of small queries), larger ones through scikit-learn's compiled per-tree traversal
# in chunks of QUERY_CHUNK rows (FlatForest's (trees × rows) index arrays would take ~1.6 GB
# for 2.5·10⁵ rows and run 5–10× slower than scikit-learn there).
FLAT_FOREST_MAX_ROWS = 64
QUERY_CHUNK = 65_536


class PointsTarget(_Target):
    """Thesis pipeline on released points: KMeans labels, then a RandomForest (the nD-Laplace thesis §5.3.2).

    Any number of released points: KMeans finds min(k, m) clusters; with no point at all the
    target answers the uniform vector (the release says nothing about any record).
    """

    def __init__(self, reference: Reference | None = None, n_estimators: int = 100,
                 random_state: int = 0) -> None:
        self.reference = cast(Reference, reference)  # None until given one: fit checks
        self.n_estimators = n_estimators
        self.random_state = random_state

    def fit(self, Z: np.ndarray, y: Any = None) -> "PointsTarget":
        Z = np.asarray(Z, dtype=np.float64)
        if self.reference is None:
            raise InvalidInputError("PointsTarget needs a public reference clustering")
        k = self.reference.n_classes
        self._finish(Z.shape[1])
        if len(Z) == 0:  # no point released: nothing to learn, every query gets the uniform vector
            self.forest_ = self.flat_forest_ = None
            return self
        km = KMeans(n_clusters=min(k, len(Z)), n_init=2, random_state=self.random_state).fit(Z)
        labels = self.reference.align(km.cluster_centers_)[km.labels_]
        max_samples = FOREST_MAX_SAMPLES if len(Z) > FOREST_MAX_SAMPLES else None
        self.forest_ = RandomForestClassifier(n_estimators=self.n_estimators, max_samples=max_samples,
                                              random_state=self.random_state).fit(Z, labels)
        self.flat_forest_ = FlatForest(self.forest_)
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if self.forest_ is None:
            return np.full((len(X), self.reference.n_classes), 1.0 / self.reference.n_classes)
        out = np.zeros((len(X), self.reference.n_classes))
        if len(X) < FLAT_FOREST_MAX_ROWS:
            if self.flat_forest_ is None:
                raise RuntimeError("the forest was fitted without its flat copy")
            out[:, self.forest_.classes_] = self.flat_forest_.predict_proba(X)
            return out
        for s in range(0, len(X), QUERY_CHUNK):
            out[s:s + QUERY_CHUNK, self.forest_.classes_] = self.forest_.predict_proba(X[s:s + QUERY_CHUNK])
        return out


class CentroidTarget(_Target):
    """Soft nearest centroid: p_j ∝ exp(−‖x − c_j‖²/T), summed per reference class.

    Any number of centres (fewer than the k reference classes leaves some classes at 0); with
    none the target answers the uniform vector.
    """

    def __init__(self, centers: np.ndarray, reference: Reference, temperature: float = 1.0) -> None:
        self.centers = centers
        self.reference = reference
        self.temperature = temperature

    def fit(self, X: Any = None, y: Any = None) -> "CentroidTarget":
        c = np.asarray(self.centers, dtype=np.float64)
        self.centers_ = c
        self.class_of_center_ = self.reference.align(c)
        self._finish(c.shape[1])
        return self

    def distance(self, X: np.ndarray) -> np.ndarray:
        """Distance from each row of X to the nearest released centre (Yeom's loss; +inf without one)."""
        X = np.asarray(X, dtype=np.float64)
        if len(self.centers_) == 0:
            return np.full(len(X), np.inf)
        return np.sqrt(sq_dist(X, self.centers_).min(axis=1))

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        if len(self.centers_) == 0:  # no centre released: the uniform vector for every query
            return np.full((len(X), self.reference.n_classes), 1.0 / self.reference.n_classes)
        d2 = sq_dist(np.asarray(X, dtype=np.float64), self.centers_) / self.temperature
        w = np.exp(-(d2 - d2.min(axis=1, keepdims=True)))
        out = w @ np.eye(self.reference.n_classes)[self.class_of_center_]  # sum the weights per class
        return out / out.sum(axis=1, keepdims=True)


def _one_hot_or_uniform(labels: np.ndarray, classes_of: np.ndarray, k: int) -> np.ndarray:
    out = np.full((len(labels), k), 1.0 / k)
    hit = labels >= 0
    out[hit] = 0.0
    out[np.flatnonzero(hit), classes_of[labels[hit]]] = 1.0
    return out


class SpanTarget(_Target):
    """The span containing x (the DP-DBSCAN paper), one-hot; outside every span → uniform."""

    def __init__(self, spans: Spans, reference: Reference) -> None:
        self.spans = spans
        self.reference = reference

    def fit(self, X: Any = None, y: Any = None) -> "SpanTarget":
        s = self.spans
        sizes = np.array([len(c) for c in s.cells], dtype=np.int64)
        if sizes.size == 0:  # no span: every query lands outside, the class map is never read
            reps = np.zeros((1, len(s.origin)))
        else:  # each span's mean cell centre; a span of no cell (never predicted) takes the grid origin
            sums = np.vstack([np.asarray(c, dtype=np.float64).sum(axis=0) for c in s.cells])
            reps = s.origin + (sums / np.maximum(sizes, 1)[:, None] + 0.5 * (sizes > 0)[:, None]) * s.width
        self.class_of_span_ = self.reference.align(reps)
        self._finish(len(s.origin))
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        labels = self.spans.predict(np.asarray(X, dtype=np.float64))
        return _one_hot_or_uniform(labels, self.class_of_span_, self.reference.n_classes)


class LabelLookupTarget(_Target):
    """Released label of the nearest labelled record (exact for the records themselves)."""

    def __init__(self, records: np.ndarray, labels: np.ndarray, reference: Reference) -> None:
        self.records = records
        self.labels = labels
        self.reference = reference

    def fit(self, X: Any = None, y: Any = None) -> "LabelLookupTarget":
        R = np.asarray(self.records, dtype=np.float64)
        lab = np.asarray(self.labels, dtype=np.int64)
        self.nn_ = NearestNeighbors(n_neighbors=1).fit(R)
        self.labels_ = lab
        clustered = lab >= 0
        n_ids = int(lab[clustered].max()) + 1 if clustered.any() else 1
        ids = lab[clustered]  # one mean per released cluster, one pass per coordinate
        sums = np.column_stack([np.bincount(ids, weights=R[clustered, c], minlength=n_ids)
                                for c in range(R.shape[1])])
        counts = np.bincount(ids, minlength=n_ids)[:, None]
        reps = sums / np.maximum(counts, 1)  # unused ids keep a zero representative, as before
        self.class_of_label_ = self.reference.align(reps)
        self._finish(R.shape[1])
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        idx = self.nn_.kneighbors(np.asarray(X, dtype=np.float64), return_distance=False)[:, 0]
        return _one_hot_or_uniform(self.labels_[idx], self.class_of_label_, self.reference.n_classes)


def check_release(release: Any, X: np.ndarray, *, allow_vector: bool = False) -> Release:
    """Reject what audited code returned when it is not a usable release (``allow_vector``: a vector
    release is usable, by the attacks that score vectors; its "no answer" entries are kept).

    A release's *size* is the mechanism's business: a points release may hold any number of points
    (synthetic data), a centroids release any number of centres (fewer than k, or none), a spans
    release any number of spans (empty ones too).  Only its dimension, its finiteness and, for
    labels, one label per record are checked; each attack copes with the size itself.  A release with NaN or
    infinite values is a release (the ε estimate reads it), but no classifier: :class:`MechanismFailure` of
    kind ``nan``, as for a call that failed.
    """
    if allow_vector and isinstance(release, Vector):
        return release
    if not isinstance(release, Release):
        raise MalformedReleaseError(f"release() returned {type(release).__name__}, not a Release")
    n, d = X.shape
    if isinstance(release, Points):  # any number of points: synthetic data need not have one per record
        arr = release.points
        if arr.ndim != 2 or arr.shape[1] != d:
            raise MalformedReleaseError(f"points release has shape {arr.shape}, expected m×{d}")
    elif isinstance(release, Centroids):  # any number of centres, none included (fewer than k is common)
        arr = release.centers
        if arr.ndim != 2 or arr.shape[1] != d:
            raise MalformedReleaseError(f"centroids release has shape {arr.shape}, expected k×{d}")
        if release.counts is not None and release.counts.shape != (len(arr),):
            raise MalformedReleaseError(f"centroids release has {release.counts.shape} counts for {len(arr)} centres")
    elif isinstance(release, Labels):
        arr = release.labels.astype(np.float64)
        if arr.shape != (n,):
            raise MalformedReleaseError(f"labels release has shape {arr.shape}, expected ({n},)")
    elif isinstance(release, Spans):
        arr = release.origin
        if arr.shape != (d,):
            raise MalformedReleaseError(f"spans origin has shape {arr.shape}, expected ({d},)")
    else:
        raise MalformedReleaseError(
            f"cannot attack a {release.kind} release with a classifier: membership attacks query a classifier "
            "built from a points, centroids, spans or labels release (a vector — a statistic, or a supervised "
            "model's parameters or predictions on a grid — is audited by the ε estimate)")
    if not np.all(np.isfinite(arr)):  # a release, but no classifier: the attacks that need one cannot use it
        raise MechanismFailure({"kind": "nan", "call": "release",
                                "error": f"{release.kind} release contains NaN or infinity (no classifier can be "
                                         "built from it)"})
    return release


def release_to_target(release: Release, X: np.ndarray, reference: Reference, *,
                      n_estimators: int = 100, random_state: int = 0) -> _Target:
    """The fitted classifier an attacker queries for ``release`` (of records ``X``)."""
    release = check_release(release, X)
    if isinstance(release, Points):
        return PointsTarget(reference, n_estimators, random_state).fit(release.points)
    if isinstance(release, Centroids):
        return CentroidTarget(release.centers, reference).fit()
    if isinstance(release, Spans):
        return SpanTarget(release, reference).fit()
    return LabelLookupTarget(X, cast(Labels, release).labels, reference).fit()


def _digest(X: np.ndarray) -> int:
    return int.from_bytes(hashlib.blake2b(np.ascontiguousarray(X).tobytes(), digest_size=8).digest(), "little")


class MechanismPipeline(_Target):
    """Estimator whose ``fit(X)`` runs the mechanism on X and builds the target from the release.

    ``y`` is ignored (the thesis set-up is semi-supervised: labels come from
    clustering the release).  After ``fit``: ``release_`` (the release) and
    ``target_`` (the fitted target classifier; ``None`` for a vector release, which is
    no classifier: querying it raises :class:`~dpaudit.attacks.attack.NotApplicable`).
    """

    def __init__(self, mechanism: Mechanism | Any = None, reference: Reference | None = None,
                 seed: int = 0, n_estimators: int = 100) -> None:
        self.mechanism = mechanism
        self.reference = cast(Reference, reference)  # None until given one: fit checks
        self.seed = seed
        self.n_estimators = n_estimators

    def fit(self, X: np.ndarray, y: Any = None) -> "MechanismPipeline":
        if self.mechanism is None or self.reference is None:
            raise InvalidInputError("MechanismPipeline needs a mechanism and a reference clustering")
        X = np.asarray(X, dtype=np.float64)
        ss = np.random.SeedSequence([int(self.seed), _digest(X)])
        mechanism = as_mechanism(self.mechanism)  # a plug-in object wrapped as dpaudit.plugin does (sklearn keeps the parameter)
        self.release_ = check_release(release_once(mechanism, X, Stream.TARGET_RELEASE.of(ss)), X, allow_vector=True)
        self.target_ = None if isinstance(self.release_, Vector) else release_to_target(
            self.release_, X, self.reference, n_estimators=self.n_estimators,
            random_state=int(Stream.TARGET_MODEL.of(ss).generate_state(1)[0] >> 1))
        self._finish(X.shape[1])
        return self

    @property
    def is_classifier(self) -> bool:
        """Whether the release can be queried as a classifier (every kind but a vector)."""
        return self.target_ is not None

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        if self.target_ is None:
            raise NotApplicable(f"a {self.release_.kind} release is not a classifier: the classifier-based attacks "
                                "(Shokri, Yeom, label-only) do not apply; LiRA, RMIA and tracing score it")
        return self.target_.predict_proba(X)
