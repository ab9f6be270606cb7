"""Per-cell measurements of a sweep: utility of a release and its displacement.

Utility (the thesis's §5.3.2), computed with :func:`dpaudit.utility.metrics.partition_metrics`:
external — ARI and AMI of the release's partition against the same clusterer
on the plain data (``ari``, ``ami``) and, when the data has labels, ARI and
the F-measure against the ground truth (``ari_truth``, ``f_measure``);
internal — silhouette and Calinski–Harabasz of the released partition (NaN,
stored as missing, when undefined); NICV for centroid releases (the DP-KCCM paper's utility metric).
Privacy: mean Euclidean displacement ‖z − x‖ of a points release (thesis
§5.3.2, "privacy distance").  Only aggregates leave this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.data.datasets import Dataset
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import random_state_from
from dpaudit.utility import clusterers as cl
from dpaudit.utility.metrics import partition_metrics

from .config import SweepConfig

__all__ = ["displacement", "non_private_baseline", "reference_labels", "release_metrics"]


def displacement(X: np.ndarray, Z: np.ndarray) -> float:
    """Mean ‖z_i − x_i‖₂ over the records."""
    diff = np.asarray(Z, float) - np.asarray(X, float)
    return float(np.mean(np.sqrt(np.einsum("ij,ij->i", diff, diff))))


def reference_labels(cfg: SweepConfig, X: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Each clusterer on the plain data: the non-private partition ARI/AMI compare against."""
    seed = int(Stream.SWEEP_REFERENCE_CLUSTERS.of(cfg.seed).generate_state(1)[0])
    return {name: cl.cluster(name, X, n_clusters=k, seed=seed) for name in cfg.clusterers}


def non_private_baseline(cfg: SweepConfig, data: Dataset, refs: dict[str, np.ndarray]) -> dict[str, float]:
    """What each clusterer achieves on the plain data, under the names the cells use: the line the
    privacy–utility trade-off plot compares the releases with.  ARI/AMI against the non-private
    clustering are 1 by definition; against the ground truth they are measured.  ``refs``:
    :func:`reference_labels`."""
    out: dict[str, float] = {}
    for name in cfg.clusterers:
        out[f"{name}.ari"] = out[f"{name}.ami"] = 1.0
        if name in refs and data.y is not None:
            for key, value in partition_metrics(refs[name], reference=None, truth=data.y, internal_on=None).items():
                if value is not None and np.isfinite(value):
                    out[f"{name}.{key}"] = float(value)
    return out


def release_metrics(cfg: SweepConfig, release: Any, data: Dataset, refs: dict[str, np.ndarray], k: int,
                     rng: np.random.Generator) -> dict[str, Any]:
    X, y = data.X, data.y
    out: dict[str, Any] = {}
    if release.kind == "points":
        Z = release.points
        out["displacement"] = displacement(X, Z)
        Zs = cl.standard_scale(Z)
        for name in cfg.clusterers:
            labels = cl.cluster(name, Zs, n_clusters=k, seed=random_state_from(rng), scale=False)
            for key, value in partition_metrics(labels, reference=refs[name], truth=y, internal_on=Zs).items():
                out[f"{name}.{key}"] = value
        return out
    if release.kind == "vector":
        return out
    labels = release.labels if release.kind == "labels" else release.predict(X)
    first = cfg.clusterers[0] if cfg.clusterers else None
    metrics = partition_metrics(np.asarray(labels), reference=refs.get(first) if first else None, truth=y,
                                internal_on=cl.standard_scale(X),
                                centers=release.centers if release.kind == "centroids" else None, plain=X)
    for key, value in metrics.items():
        out[f"release.{key}"] = value
    return out
