"""Per-cell measurements of a sweep: utility of a release and its displacement.

Utility (thesis §5.3.2; DESIGN §5), computed with :func:`dpaudit.utility.metrics.partition_metrics`:
external — ARI and AMI of the release's partition against the same clusterer
on the plain data (``ari``, ``ami``) and, when the data has labels, ARI and
the F-measure against the ground truth (``ari_truth``, ``f_measure``);
internal — silhouette and Calinski–Harabasz of the released partition (NaN,
stored as missing, when undefined); NICV for centroid releases (seed 001).
Privacy: mean Euclidean displacement ‖z − x‖ of a points release (thesis
§5.3.2, "privacy distance").  Only aggregates leave this module.
"""

from __future__ import annotations

import numpy as np

__all__ = ["displacement"]


def displacement(X: np.ndarray, Z: np.ndarray) -> float:
    """Mean ‖z_i − x_i‖₂ over the records."""
    diff = np.asarray(Z, float) - np.asarray(X, float)
    return float(np.mean(np.sqrt(np.einsum("ij,ij->i", diff, diff))))
