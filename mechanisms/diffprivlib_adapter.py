"""Adapter for IBM diffprivlib's ``KMeans`` (a third-party DP clustering to audit).

diffprivlib (https://github.com/IBM/differential-privacy-library) implements
DPLloyd after Su et al. (CODASPY 2016) in ``diffprivlib.models.KMeans``.  It is
an optional extra: ``pip install 'dpaudit[diffprivlib]'`` (diffprivlib 0.6.x
imports only with scikit-learn < 1.8, so the extra pins that).  This module
imports without it; building the mechanism without diffprivlib raises
:class:`InvalidInputError` saying how to install it.

The public box is always passed explicitly (diffprivlib would otherwise take
it from the data's min/max with a ``PrivacyLeakWarning``); each release gets a
fresh ``BudgetAccountant`` (no global spending state) and a ``random_state``
drawn from the ``rng``.  The claim is the library's: ε-DP, stated here for
add-remove neighbours.  Releases the centres (:class:`Centroids`, no counts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import (
    Centroids,
    InvalidInputError,
    PrivacyClaim,
    check_bounds,
    check_clusters,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
    random_state_from,
)

__all__ = ["DiffprivlibKMeans", "diffprivlib_available"]

_INSTALL_HINT = ("diffprivlib-kmeans needs the optional diffprivlib extra: "
                 "pip install 'dpaudit[diffprivlib]' (diffprivlib ≥ 0.6.6 with scikit-learn < 1.8)")


def _import_diffprivlib() -> Any:
    try:
        import diffprivlib.accountant as accountant
        import diffprivlib.models as models
    except Exception as exc:  # ImportError, or an error raised by an incompatible scikit-learn
        raise InvalidInputError(f"{_INSTALL_HINT}; import failed: {type(exc).__name__}: {exc}") from None
    return models, accountant


def diffprivlib_available() -> bool:
    """True when diffprivlib imports in this environment."""
    try:
        _import_diffprivlib()
    except InvalidInputError:
        return False
    return True


class DiffprivlibKMeans:
    """diffprivlib ``KMeans(n_clusters, epsilon, bounds, random_state)`` as a mechanism.

    Parameters
    ----------
    epsilon : float
        Budget passed to diffprivlib.
    n_clusters : int
        Number of centres (``k`` is accepted as an alias).
    bounds : (lo, hi)
        Public box, scalars or per-feature vectors; always passed explicitly.
    """

    name = "diffprivlib-kmeans"

    def __init__(self, epsilon: float = 1.0, n_clusters: int = 4, *, k: int | None = None,
                 bounds: tuple[object, object] | None = (-1.0, 1.0)) -> None:
        self.epsilon = check_epsilon(epsilon)
        if k is not None:
            n_clusters = k
        self.n_clusters = int(check_positive(n_clusters, name="n_clusters", integer=True, minimum=1,
                                             inclusive=True))
        check_bounds(bounds)
        self.bounds = bounds
        self._models, self._accountant = _import_diffprivlib()
        self.claim = PrivacyClaim(self.epsilon, 0.0, "add-remove")

    def __repr__(self) -> str:
        return f"DiffprivlibKMeans(epsilon={self.epsilon:g}, n_clusters={self.n_clusters}, bounds={self.bounds!r})"

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Centroids:
        X = check_data(X)
        rng = check_rng(rng)
        check_clusters(self.n_clusters, X, name="n_clusters")
        lo, hi = check_bounds(self.bounds, X.shape[1])
        model = self._models.KMeans(n_clusters=self.n_clusters, epsilon=self.epsilon, bounds=(lo, hi),
                                    random_state=random_state_from(rng),
                                    accountant=self._accountant.BudgetAccountant())
        model.fit(X)
        return Centroids(np.asarray(model.cluster_centers_, dtype=np.float64))
