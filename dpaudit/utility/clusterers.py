"""The analyst's clusterers a sweep runs on a released point set (thesis §5.3.1, §5.3.3).

Thesis settings, all from scikit-learn, each on standard-scaled data (the
thesis scales after perturbation, for clustering only — §5.3.3):

* ``kmeans`` — ``KMeans(k)``, k = the number of true classes when the data
  has labels, else 4 (thesis Table 5.1: 4 from the elbow plot);
* ``affinity-propagation`` — ``AffinityPropagation(damping=0.5)`` with the
  median-similarity preference (scikit-learn's default; Table 5.2);
* ``dbscan`` — ``DBSCAN(eps=0.5, min_samples=4)`` (the thesis code's values on
  standard-scaled data; Table 5.3 gives minPts = 2·d = 4 in 2-D).

Each clusterer takes a seed so a sweep cell is reproducible.
"""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

__all__ = ["CLUSTERERS", "cluster", "parse_clusterers", "standard_scale"]

CLUSTERERS: tuple[str, ...] = ("kmeans", "affinity-propagation", "dbscan")


def standard_scale(X: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per feature (constant features stay 0)."""
    X = np.asarray(X, dtype=np.float64)
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def _kmeans(X: np.ndarray, k: int, seed: int) -> np.ndarray:
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    with warnings.catch_warnings():
        # Fewer distinct points than k (duplicates, or a release collapsed by noise or clipping) is an
        # outcome the partition metrics score, not something to print once per cell.
        warnings.simplefilter("ignore", ConvergenceWarning)
        return KMeans(n_clusters=min(k, len(X)), n_init=10, random_state=seed).fit_predict(X)


def _affinity(X: np.ndarray, k: int, seed: int) -> np.ndarray:
    from sklearn.cluster import AffinityPropagation
    from sklearn.exceptions import ConvergenceWarning
    with warnings.catch_warnings():
        # Non-convergence is an outcome on noisy data (all points labelled −1), not an error.
        warnings.simplefilter("ignore", ConvergenceWarning)
        return AffinityPropagation(damping=0.5, random_state=seed).fit_predict(X)


def _dbscan(X: np.ndarray, k: int, seed: int) -> np.ndarray:
    from sklearn.cluster import DBSCAN
    return DBSCAN(eps=0.5, min_samples=4).fit_predict(X)


_RUN: dict[str, Callable[[np.ndarray, int, int], np.ndarray]] = {
    "kmeans": _kmeans, "affinity-propagation": _affinity, "dbscan": _dbscan}


def parse_clusterers(text: str | None) -> tuple[str, ...]:
    """``"kmeans,dbscan"`` → ("kmeans", "dbscan"); empty or "none" → ()."""
    if text is None or text.strip().lower() in ("", "none"):
        return ()
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    bad = [n for n in names if n not in _RUN]
    if bad:
        raise InvalidInputError(f"unknown clusterer(s) {', '.join(bad)}; choose from {', '.join(CLUSTERERS)}")
    return names


def cluster(name: str, X: np.ndarray, *, n_clusters: int, seed: int, scale: bool = True) -> np.ndarray:
    """Labels of clusterer ``name`` on ``X`` (standard-scaled first unless ``scale=False``)."""
    data = standard_scale(X) if scale else np.asarray(X, dtype=np.float64)
    return np.asarray(_RUN[name](data, n_clusters, seed), dtype=np.int64)
