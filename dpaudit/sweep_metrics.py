"""Per-cell measurements of a sweep: utility of a release and its displacement.

Utility (thesis §5.3.2; DESIGN §5): external — ARI and AMI of the release's
partition against the same clusterer on the plain data (and ARI against the
ground truth when the data has labels); internal — silhouette and
Calinski–Harabasz of the released partition; NICV for centroid releases
(seed 001: (1/N)·Σ_j Σ_{x∈C_j} ‖x − c_j‖², records assigned to the nearest
released centre); F-measure against the ground truth (seed 004's measure).
Privacy: mean Euclidean displacement ‖z − x‖ of a points release (thesis
§5.3.2, "privacy distance").  Only aggregates leave this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn import metrics as skm

__all__ = ["displacement", "f_measure", "nicv", "partition_metrics"]


def displacement(X: np.ndarray, Z: np.ndarray) -> float:
    """Mean ‖z_i − x_i‖₂ over the records."""
    diff = np.asarray(Z, float) - np.asarray(X, float)
    return float(np.mean(np.sqrt(np.einsum("ij,ij->i", diff, diff))))


def nicv(X: np.ndarray, centers: np.ndarray) -> float:
    """(1/N)·Σ ‖x − c(x)‖² with c(x) the nearest centre (seed 001, NICV)."""
    X = np.asarray(X, float)
    C = np.asarray(centers, float)
    d2 = (np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ C.T + np.einsum("ij,ij->i", C, C)[None, :])
    return float(np.mean(np.maximum(d2.min(axis=1), 0.0)))


def f_measure(truth: np.ndarray, labels: np.ndarray) -> float:
    """Clustering F-measure: Σ_i (n_i/n)·max_j 2·P·R/(P + R), P = n_ij/n_j, R = n_ij/n_i (seed 004 §5)."""
    cont = skm.cluster.contingency_matrix(truth, labels).astype(float)  # classes × clusters
    n_i = cont.sum(axis=1, keepdims=True)
    n_j = cont.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = cont / n_j
        r = cont / n_i
        f = np.where(cont > 0, 2 * p * r / (p + r), 0.0)
    return float(np.sum(n_i[:, 0] / cont.sum() * f.max(axis=1)))


def _internal(X: np.ndarray, labels: np.ndarray) -> dict[str, float | None]:
    n_labels = len(np.unique(labels))
    if not 2 <= n_labels <= len(labels) - 1:
        return {"silhouette": None, "calinski_harabasz": None}
    return {"silhouette": float(skm.silhouette_score(X, labels)),
            "calinski_harabasz": float(skm.calinski_harabasz_score(X, labels))}


def partition_metrics(labels: np.ndarray, *, reference: np.ndarray | None, truth: np.ndarray | None,
                      internal_on: np.ndarray | None) -> dict[str, Any]:
    """ARI/AMI vs the non-private ``reference``, ARI/F-measure vs ``truth``, silhouette/CH on ``internal_on``."""
    out: dict[str, Any] = {}
    if reference is not None:
        out["ari"] = float(skm.adjusted_rand_score(reference, labels))
        out["ami"] = float(skm.adjusted_mutual_info_score(reference, labels))
    if truth is not None:
        out["ari_truth"] = float(skm.adjusted_rand_score(truth, labels))
        out["f_measure"] = f_measure(truth, labels)
    if internal_on is not None:
        out.update(_internal(internal_on, labels))
    return out
