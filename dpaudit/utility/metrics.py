"""Utility metrics for clusterings: external, internal and the seed papers' own.

External (agreement of two labelings): adjusted Rand index (ARI) and adjusted
mutual information (AMI) — against the ground truth *or* against the
non-private clustering (pass its labels as the reference) — and the clustering
F-measure used by DP-FCM (the DP-FCM paper §7, eq. 20).  Internal (geometry only):
silhouette, Calinski–Harabasz, Davies–Bouldin, and DP-KCCM's NICV (the DP-KCCM paper
eq. 5).  scikit-learn computes every metric it has.

Conventions for degenerate cases (never an exception):

* Label −1 is *noise* (DBSCAN, spans).  ARI and AMI treat noise as one more
  cluster (scikit-learn's behaviour).  The F-measure treats noise as "in no
  cluster": those records lower recall.  Internal metrics drop noise records.
* Internal metrics return **NaN** when they are undefined: fewer than two
  clusters among the non-noise records (one cluster, all noise), or as many
  clusters as records.  NaN means "no clustering structure to score", not 0.
* :func:`nicv` returns NaN when there are no centres.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from sklearn import metrics

from dpaudit.mechanisms.base import InvalidInputError

__all__ = [
    "adjusted_mutual_info",
    "adjusted_rand",
    "calinski_harabasz",
    "clustering_utility",
    "davies_bouldin",
    "f_measure",
    "nicv",
    "partition_metrics",
    "silhouette",
]


def _labels(a: object, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise InvalidInputError(f"{name} must be 1-D, got shape {arr.shape}")
    return arr


def _pair(a: object, b: object) -> tuple[np.ndarray, np.ndarray]:
    x, y = _labels(a, "labels_true"), _labels(b, "labels_pred")
    if x.shape != y.shape:
        raise InvalidInputError(f"label arrays differ in length: {x.size} and {y.size}")
    return x, y


def adjusted_rand(labels_true: object, labels_pred: object) -> float:
    """ARI (Hubert & Arabie); 1 = identical partitions, ≈ 0 = chance."""
    return float(metrics.adjusted_rand_score(*_pair(labels_true, labels_pred)))


def adjusted_mutual_info(labels_true: object, labels_pred: object) -> float:
    """AMI (arithmetic normalisation, scikit-learn's default)."""
    return float(metrics.adjusted_mutual_info_score(*_pair(labels_true, labels_pred)))


def f_measure(labels_true: object, labels_pred: object) -> float:
    """Clustering F-measure (the DP-FCM paper eq. 20, in its usual clustering form).

    For class i and cluster j with n_ij shared records, precision
    P_ij = n_ij / n_j ("accuracy" AC in the paper), recall R_ij = n_ij / n_i and
    F_ij = 2·P_ij·R_ij / (P_ij + R_ij).  Each class is matched to its best
    cluster and the result weighted by class size:
    F = Σ_i (n_i / n) · max_j F_ij  (Larsen & Aone 1999; Steinbach et al. 2000).
    Records labelled −1 belong to no cluster.  Range [0, 1]; 0 if there are no
    clusters at all.
    """
    y, c = _pair(labels_true, labels_pred)
    n = y.size
    if n == 0:
        return math.nan
    classes, yi = np.unique(y, return_inverse=True)
    keep = c != -1
    if not keep.any():
        return 0.0
    clusters, ci = np.unique(c[keep], return_inverse=True)
    table = np.zeros((classes.size, clusters.size))
    np.add.at(table, (yi[keep], ci), 1.0)
    n_i = np.bincount(yi, minlength=classes.size).astype(float)[:, None]   # class sizes (incl. noise)
    n_j = table.sum(axis=0)[None, :]                                       # cluster sizes
    P, R = table / n_j, table / n_i
    with np.errstate(invalid="ignore", divide="ignore"):
        F = np.where(table > 0, 2 * P * R / (P + R), 0.0)
    return float(np.sum(n_i[:, 0] / n * F.max(axis=1)))


def _internal(score: Callable[[np.ndarray, np.ndarray], float], X: object, labels: object) -> float:
    X = np.asarray(X, dtype=np.float64)
    lab = _labels(labels, "labels")
    if X.ndim != 2 or X.shape[0] != lab.size:
        raise InvalidInputError(f"X has shape {X.shape} but there are {lab.size} labels")
    keep = lab != -1
    Xk, lk = X[keep], lab[keep]
    k = np.unique(lk).size
    if k < 2 or k >= Xk.shape[0]:
        return math.nan
    return float(score(Xk, lk))


def silhouette(X: object, labels: object) -> float:
    """Mean silhouette coefficient in [−1, 1] (noise dropped; NaN if undefined)."""
    return _internal(metrics.silhouette_score, X, labels)


def calinski_harabasz(X: object, labels: object) -> float:
    """Calinski–Harabasz variance ratio, higher is better (noise dropped; NaN if undefined)."""
    return _internal(metrics.calinski_harabasz_score, X, labels)


def davies_bouldin(X: object, labels: object) -> float:
    """Davies–Bouldin index, lower is better (noise dropped; NaN if undefined)."""
    return _internal(metrics.davies_bouldin_score, X, labels)


def nicv(X: object, centers: object) -> float:
    """Normalised intra-cluster variance, the DP-KCCM paper eq. 5 (squared).

    NICV = (1/N) Σ_j Σ_{x ∈ C_j} ‖x − c_j‖², each record assigned to its nearest
    centre c_j — the k-means objective per record.  Lower is better.  (Eq. 5 as
    printed omits the square; the paper calls NICV the k-means objective, which
    is squared.)  NaN when there are no centres.
    """
    X = np.asarray(X, dtype=np.float64)
    C = np.asarray(centers, dtype=np.float64)
    if C.size == 0:
        return math.nan
    C = C.reshape(-1, X.shape[1])
    d2 = (np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ C.T + np.einsum("ij,ij->i", C, C)[None, :])
    return float(np.maximum(d2.min(axis=1), 0.0).mean())


def clustering_utility(X: object, labels: object, *, labels_true: object | None = None,
                       reference: object | None = None, centers: object | None = None) -> dict[str, float]:
    """Every metric at once, keyed by name.

    ``labels_true``: ground truth (gives ``ari``, ``ami``, ``f_measure``);
    ``reference``: labels of the non-private clustering (gives ``ari_ref``,
    ``ami_ref``, ``f_measure_ref``); ``centers``: released centres (gives
    ``nicv``).  Internal metrics are always computed.
    """
    out: dict[str, float] = {
        "silhouette": silhouette(X, labels),
        "calinski_harabasz": calinski_harabasz(X, labels),
        "davies_bouldin": davies_bouldin(X, labels),
    }
    for suffix, other in (("", labels_true), ("_ref", reference)):
        if other is not None:
            out[f"ari{suffix}"] = adjusted_rand(other, labels)
            out[f"ami{suffix}"] = adjusted_mutual_info(other, labels)
            out[f"f_measure{suffix}"] = f_measure(other, labels)
    if centers is not None:
        out["nicv"] = nicv(X, centers)
    return out


def partition_metrics(labels: np.ndarray, *, reference: np.ndarray | None, truth: np.ndarray | None,
                      internal_on: np.ndarray | None, centers: np.ndarray | None = None,
                      plain: np.ndarray | None = None) -> dict[str, Any]:
    """ARI/AMI vs the non-private ``reference``, ARI/F-measure vs ``truth``, silhouette/CH on
    ``internal_on``, NICV of ``centers`` on ``plain``."""
    out: dict[str, Any] = {}
    if reference is not None:
        out["ari"] = adjusted_rand(reference, labels)
        out["ami"] = adjusted_mutual_info(reference, labels)
    if truth is not None:
        out["ari_truth"] = adjusted_rand(truth, labels)
        out["f_measure"] = f_measure(truth, labels)
    if internal_on is not None:
        out["silhouette"] = silhouette(internal_on, labels)
        out["calinski_harabasz"] = calinski_harabasz(internal_on, labels)
    if centers is not None and plain is not None:
        out["nicv"] = nicv(plain, centers)
    return out
