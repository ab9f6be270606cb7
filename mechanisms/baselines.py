"""Non-private baselines: what the DP mechanisms are compared against.

Every baseline claims ε = ∞ (no privacy): an auditor should find unbounded
leakage, and utility metrics use them as the reference clustering.  They take an
``epsilon`` argument only so that sweeps can pass the same parameters to every
mechanism; it is ignored.  scikit-learn estimators get their ``random_state``
from the ``rng`` passed to ``release`` (one integer drawn from it), so the same
seed gives the same release.

Release kinds (chosen so each baseline is compared like for like):

* ``kmeans`` → :class:`Centroids` (cluster centres with exact cluster sizes),
  comparable with ``dpkccm`` and ``diffprivlib-kmeans``.
* ``dbscan`` → :class:`Labels` (DBSCAN has no centres; −1 = noise).
* ``affinity-propagation`` → :class:`Labels`: its "centres" are exemplars, i.e.
  verbatim records; labels are the comparable output.  When it does not
  converge scikit-learn labels every record −1.
* ``fcm`` → :class:`Labels` (argmax membership), the output ``dpfcm`` publishes.
* ``identity`` → :class:`Points`, the records unchanged (the trivially
  non-private "perturbation").
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np

from .base import (
    Centroids,
    InvalidInputError,
    Labels,
    Points,
    PrivacyClaim,
    check_clusters,
    check_data,
    check_positive,
    check_rng,
    random_state_from,
)
from .dpfcm import check_fcm_params, fcm_centres, fcm_memberships, random_memberships

__all__ = ["AffinityPropagationBaseline", "DBSCANBaseline", "FCMBaseline", "Identity", "KMeansBaseline"]

NO_PRIVACY = PrivacyClaim(math.inf, 0.0, "add-remove")


class _Baseline:
    name = "baseline"
    claim = NO_PRIVACY

    def __init__(self, epsilon: float | None = None) -> None:
        self.epsilon = epsilon  # ignored: a baseline has no privacy

    def __repr__(self) -> str:
        """``Name(param=value, ...)`` from the constructor's signature (sklearn style)."""
        params = [p for p in inspect.signature(type(self).__init__).parameters if p not in ("self", "epsilon")]
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in params if hasattr(self, p))
        return f"{type(self).__name__}({args})"


class KMeansBaseline(_Baseline):
    """scikit-learn ``KMeans(k, n_init)``; releases centres and cluster sizes."""

    name = "kmeans"

    def __init__(self, epsilon: float | None = None, n_clusters: int = 4, *, n_init: int = 10) -> None:
        super().__init__(epsilon)
        self.n_clusters = int(check_positive(n_clusters, name="n_clusters", integer=True, minimum=1, inclusive=True))
        self.n_init = int(check_positive(n_init, name="n_init", integer=True, minimum=1, inclusive=True))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Centroids:
        from sklearn.cluster import KMeans

        X = check_data(X)
        check_clusters(self.n_clusters, X)
        model = KMeans(n_clusters=self.n_clusters, n_init=self.n_init, random_state=random_state_from(check_rng(rng))).fit(X)
        counts = np.bincount(model.labels_, minlength=self.n_clusters).astype(np.float64)
        return Centroids(model.cluster_centers_, counts)


class DBSCANBaseline(_Baseline):
    """scikit-learn ``DBSCAN(eps=alpha, min_samples=min_pts)``; releases labels."""

    name = "dbscan"

    def __init__(self, epsilon: float | None = None, alpha: float = 0.5, min_pts: int = 5) -> None:
        super().__init__(epsilon)
        self.alpha = float(check_positive(alpha, name="alpha (radius)"))
        self.min_pts = int(check_positive(min_pts, name="min_pts", integer=True, minimum=1, inclusive=True))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Labels:
        from sklearn.cluster import DBSCAN

        X = check_data(X)
        check_rng(rng)
        return Labels(DBSCAN(eps=self.alpha, min_samples=self.min_pts).fit(X).labels_)


class AffinityPropagationBaseline(_Baseline):
    """scikit-learn ``AffinityPropagation(damping)``; releases labels."""

    name = "affinity-propagation"

    def __init__(self, epsilon: float | None = None, damping: float = 0.5, max_iter: int = 200) -> None:
        super().__init__(epsilon)
        self.damping = float(check_positive(damping, name="damping", minimum=0.5, inclusive=True))
        if self.damping >= 1.0:
            raise InvalidInputError(f"damping must be < 1, got {self.damping:g}")
        self.max_iter = int(check_positive(max_iter, name="max_iter", integer=True, minimum=1, inclusive=True))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Labels:
        from sklearn.cluster import AffinityPropagation
        from sklearn.exceptions import ConvergenceWarning

        X = check_data(X)
        model = AffinityPropagation(damping=self.damping, max_iter=self.max_iter,
                                    random_state=random_state_from(check_rng(rng)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # non-convergence ⇒ all −1, documented
            return Labels(model.fit(X).labels_)


class FCMBaseline(_Baseline):
    """Plain fuzzy c-means (the DP-FCM paper eqs. 5 and 7, no noise) on the records as given."""

    name = "fcm"

    def __init__(self, epsilon: float | None = None, n_clusters: int = 3, *, m: float = 2.0, max_iter: int = 300,
                 tol: float = 1e-5) -> None:
        super().__init__(epsilon)
        self.n_clusters, self.m, self.max_iter = check_fcm_params(n_clusters, m, max_iter, "max_iter")
        self.tol = float(check_positive(tol, name="tol"))

    def fit(self, X: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Centres (c×d) and memberships (n×c) after convergence."""
        X = check_data(X)
        check_clusters(self.n_clusters, X, name="n_clusters")
        U = random_memberships(X.shape[0], self.n_clusters, check_rng(rng))
        V = fcm_centres(X, U, self.m)
        for _ in range(self.max_iter):
            U_new = fcm_memberships(X, V, self.m)
            change = float(np.max(np.abs(U_new - U)))
            U = U_new
            V = fcm_centres(X, U, self.m)
            if change < self.tol:
                break
        return V, U

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Labels:
        _, U = self.fit(X, rng)
        return Labels(np.argmax(U, axis=1))


class Identity(_Baseline):
    """Releases the records unchanged."""

    name = "identity"

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Points:
        return Points(check_data(X))
