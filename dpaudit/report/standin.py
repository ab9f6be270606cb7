"""The public synthetic stand-in the 2-D release figure is drawn over.

Reports never contain the audited records — not as numbers and
not as a picture.  So the "release drawn over the data" figure does not draw
the audited data: it runs the mechanism once more on a *public synthetic
stand-in* — four Gaussian blobs (thesis §5.1 shape: std 0.6 around centres
drawn by ``make_blobs``) rescaled into the public box the run uses, or the
thesis blobs themselves when there is no box — and draws that release over
the stand-in.  The figure caption says so.  This is also why the drawing is
only made for 2-D data: a stand-in of another dimension says nothing.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from dpaudit.mechanisms.base import Centroids, Labels, Mechanism, Points, PrivacyClaim, Release, Spans
from dpaudit.mechanisms.registry import as_mechanism

from .guard import STORED_DECIMALS, withhold_records

__all__ = ["release_2d", "stand_in_data"]

_MAX_POINTS = 300


def stand_in_data(bounds: tuple[np.ndarray, np.ndarray] | None, n: int = 200, seed: int = 0) -> np.ndarray:
    """Four 2-D blobs; rescaled into the middle 70 % of ``bounds`` when a box is given."""
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=min(n, _MAX_POINTS), centers=4, n_features=2, cluster_std=0.6,
                      random_state=seed)
    if bounds is None:
        return X
    lo, hi = (np.broadcast_to(np.asarray(b, float), (2,)) for b in bounds)
    span = X.max(axis=0) - X.min(axis=0)
    unit = (X - X.min(axis=0)) / np.where(span > 0, span, 1.0)
    return lo + (hi - lo) * (0.15 + 0.7 * unit)


def _round(a: np.ndarray) -> list[Any]:
    return np.round(np.asarray(a, float), STORED_DECIMALS).tolist()


def describe_release(release: Release, stand_in: np.ndarray, epsilon: float, note: str) -> dict[str, Any]:
    """``release_2d`` entry of results.json for one release on the stand-in."""
    out: dict[str, Any] = {"kind": release.kind, "epsilon": epsilon, "stand_in": _round(stand_in),
                           "description": note}
    if release.kind == "points":
        out["points"] = _round(cast(Points, release).points)
    elif release.kind == "centroids":
        out["centers"] = _round(cast(Centroids, release).centers)
    elif release.kind == "labels":
        out["labels"] = np.asarray(cast(Labels, release).labels).astype(int).tolist()
    elif release.kind == "spans":
        spans = cast(Spans, release)
        out["origin"] = _round(spans.origin)
        out["width"] = float(spans.width)
        out["cells"] = [np.asarray(c).astype(int).tolist() for c in spans.cells]
    else:
        return {}
    return out


def release_2d(mechanism: Mechanism | Any, bounds: tuple[np.ndarray, np.ndarray] | None, epsilon: float,
               rng: np.random.Generator, records: np.ndarray | None = None) -> dict[str, Any]:
    """Run ``mechanism`` on the stand-in and describe the release; ``{}`` when it cannot.

    A mechanism that fails on the stand-in only loses the figure; the caller's
    run goes on.  ``records``: the audited records; a release holding one of them
    (a stateful plug-in echoing what it saw before) is withheld (:mod:`dpaudit.report.guard`).
    """
    X = stand_in_data(bounds)
    where = "rescaled into the run's public box" if bounds is not None else "thesis blobs, no box"
    note = (f"The mechanism run once on a public synthetic stand-in (4 blobs, {len(X)} points, {where}); "
            "the audited records are never drawn.")
    try:  # a plug-in object (a function, an estimator class) is wrapped as dpaudit.plugin does, at this ε
        release = as_mechanism(mechanism, None if hasattr(mechanism, "release") else PrivacyClaim(epsilon)).release(X, rng)
        described = describe_release(release, X, epsilon, note)
    except Exception:  # noqa: BLE001 - audited code (or its malformed release); the figure is optional
        return {}
    return withhold_records(described, records)
