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

**Transcript** (:meth:`DiffprivlibKMeans.release_transcript`): the library's
own noise mechanisms are instrumented during ``fit`` — never re-implemented:
for the duration of one fit (under a lock, so concurrent fits in threads do
not mix their records) the ``GeometricFolded`` and ``LaplaceBoundedDomain``
names that ``diffprivlib.models.k_means`` looks up are subclasses that record
every ``randomise`` call (declared ε, the scale actually used, the domain,
the output), and the instance's ``_init_centers``/``_update_centers`` are
wrapped to record the data-independent initial centres and which cluster each
draw belongs to.  Statistics (``I`` = 7, diffprivlib's iteration cap; NaN where
no draw was made — a cluster with no records draws no noise, an iteration past
the run's count): ``counts`` (I × k), ``sums`` (I × k × d), their declared ε
(``epsilon_counts``, ``epsilon_sums``) and the bounded-Laplace scales
(``scale_sums``), ``initial`` (k × d) and ``iterations``.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from .base import (
    Centroids,
    InvalidInputError,
    PrivacyClaim,
    Transcript,
    check_bounds,
    check_clusters,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
    random_state_from,
)

__all__ = ["DiffprivlibKMeans", "diffprivlib_available"]

MAX_ITERATIONS = 7   # diffprivlib KMeans._calc_iters caps the iteration count at 7
_RECORDING = threading.Lock()

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

    def __init__(self, epsilon: float = 1.0, n_clusters: int = 4, *,
                 bounds: tuple[object, object] | None = (-1.0, 1.0)) -> None:
        self.epsilon = check_epsilon(epsilon)
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

    # ------------------------------------------------------------------ transcript
    transcript_covers_release = True

    def _model(self, X: np.ndarray, rng: np.random.Generator) -> tuple[Any, np.ndarray, np.ndarray]:
        lo, hi = check_bounds(self.bounds, X.shape[1])
        model = self._models.KMeans(n_clusters=self.n_clusters, epsilon=self.epsilon, bounds=(lo, hi),
                                    random_state=random_state_from(rng),
                                    accountant=self._accountant.BudgetAccountant())
        return model, lo, hi

    def release_transcript(self, X: np.ndarray, rng: np.random.Generator) -> Transcript:
        """Every noise draw of diffprivlib's own mechanisms in one ``fit`` (see the module docstring);
        the same fit :meth:`release` makes for the same seed."""
        X = check_data(X)
        rng = check_rng(rng)
        check_clusters(self.n_clusters, X, name="n_clusters")
        model, lo, hi = self._model(X, rng)
        k, d = self.n_clusters, X.shape[1]
        with _recording(model) as log:
            model.fit(X)
        shape = (MAX_ITERATIONS, k)
        stats = {"counts": np.full(shape, np.nan), "sums": np.full(shape + (d,), np.nan),
                 "epsilon_counts": np.full(shape, np.nan), "epsilon_sums": np.full(shape + (d,), np.nan),
                 "scale_sums": np.full(shape + (d,), np.nan),
                 "initial": np.asarray(log["initial"], dtype=np.float64).reshape(k, d),
                 "iterations": np.array([float(len(log["iterations"]))])}
        for it, (clusters, draws) in enumerate(log["iterations"][:MAX_ITERATIONS]):
            pos = 0
            for j in clusters:                 # per drawn cluster: the count, then one sum per dimension
                kind, eps, _, out = draws[pos]
                stats["counts"][it, j], stats["epsilon_counts"][it, j] = out, eps
                for i in range(d):
                    _, eps_i, scale_i, out_i = draws[pos + 1 + i]
                    stats["sums"][it, j, i], stats["epsilon_sums"][it, j, i] = out_i, eps_i
                    stats["scale_sums"][it, j, i] = scale_i
                pos += 1 + d
        return Transcript(stats, self.name, {"epsilon": self.epsilon, "n_clusters": k,
                                             "lo": tuple(lo.tolist()), "hi": tuple(hi.tolist())})

    def release_from_transcript(self, transcript: Transcript, X: np.ndarray | None = None) -> Centroids:
        """The centres a fit with this transcript releases: noisy sum / noisy count where drawn, else kept."""
        centres = np.array(transcript["initial"], dtype=np.float64)
        counts, sums = transcript["counts"], transcript["sums"]
        for it in range(int(transcript["iterations"][0])):
            drawn = ~np.isnan(counts[it])
            centres[drawn] = sums[it][drawn] / counts[it][drawn][:, None]
        return Centroids(centres)


@contextmanager
def _recording(model: Any) -> Iterator[dict[str, Any]]:
    """Record the noise draws of one diffprivlib KMeans fit (see the module docstring)."""
    import diffprivlib.models.k_means as k_means_module

    log: dict[str, Any] = {"initial": None, "iterations": []}
    draws: list[tuple[str, float, float, float]] = []
    geometric: Any = k_means_module.GeometricFolded
    laplace: Any = k_means_module.LaplaceBoundedDomain

    class RecordingGeometricFolded(geometric):
        def randomise(self, value: Any) -> Any:
            out = super().randomise(value)
            draws.append(("count", float(self.epsilon), float("nan"), float(out)))
            return out

    class RecordingLaplaceBoundedDomain(laplace):
        def randomise(self, value: Any) -> Any:
            out = super().randomise(value)
            draws.append(("sum", float(self.epsilon), float(self._scale), float(out)))
            return out

    init_centers, update_centers = model._init_centers, model._update_centers

    def recorded_init(*args: Any, **kwargs: Any) -> Any:
        centres = init_centers(*args, **kwargs)
        log["initial"] = None if centres is None else np.array(centres, dtype=np.float64)
        return centres

    def recorded_update(X: Any, centers: Any, labels: Any, *args: Any, **kwargs: Any) -> Any:
        draws.clear()
        out = update_centers(X, centers, labels, *args, **kwargs)
        log["iterations"].append((sorted(int(j) for j in np.unique(labels)), list(draws)))
        return out

    with _RECORDING:
        k_means_module.GeometricFolded = RecordingGeometricFolded
        k_means_module.LaplaceBoundedDomain = RecordingLaplaceBoundedDomain
        model._init_centers, model._update_centers = recorded_init, recorded_update
        try:
            yield log
        finally:
            k_means_module.GeometricFolded, k_means_module.LaplaceBoundedDomain = geometric, laplace
