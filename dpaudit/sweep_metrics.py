"""Per-cell measurements of a sweep: utility of a release and its displacement.

Utility (thesis §5.3.2; DESIGN §5), computed with :mod:`dpaudit.utility`:
external — ARI and AMI of the release's partition against the same clusterer
on the plain data (``ari``, ``ami``) and, when the data has labels, ARI and
the F-measure against the ground truth (``ari_truth``, ``f_measure``);
internal — silhouette and Calinski–Harabasz of the released partition (NaN,
stored as missing, when undefined); NICV for centroid releases (seed 001).
Privacy: mean Euclidean displacement ‖z − x‖ of a points release (thesis
§5.3.2, "privacy distance").  Only aggregates leave this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import utility

__all__ = ["displacement", "partition_metrics"]


def displacement(X: np.ndarray, Z: np.ndarray) -> float:
    """Mean ‖z_i − x_i‖₂ over the records."""
    diff = np.asarray(Z, float) - np.asarray(X, float)
    return float(np.mean(np.sqrt(np.einsum("ij,ij->i", diff, diff))))


def partition_metrics(labels: np.ndarray, *, reference: np.ndarray | None, truth: np.ndarray | None,
                      internal_on: np.ndarray | None, centers: np.ndarray | None = None,
                      plain: np.ndarray | None = None) -> dict[str, Any]:
    """ARI/AMI vs the non-private ``reference``, ARI/F-measure vs ``truth``, silhouette/CH on
    ``internal_on``, NICV of ``centers`` on ``plain``."""
    out: dict[str, Any] = {}
    if reference is not None:
        out["ari"] = utility.adjusted_rand(reference, labels)
        out["ami"] = utility.adjusted_mutual_info(reference, labels)
    if truth is not None:
        out["ari_truth"] = utility.adjusted_rand(truth, labels)
        out["f_measure"] = utility.f_measure(truth, labels)
    if internal_on is not None:
        out["silhouette"] = utility.silhouette(internal_on, labels)
        out["calinski_harabasz"] = utility.calinski_harabasz(internal_on, labels)
    if centers is not None and plain is not None:
        out["nicv"] = utility.nicv(plain, centers)
    return out
