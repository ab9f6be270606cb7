"""Stage 1 of the estimator: the neighbouring pairs (D, D′) to search, in priority order.

A pair source is called with the mechanism, the data and one probe release
(its kind, and k for clusterings that do not state it) and returns the
candidates, best first: the search keeps the head of the list when its
budget is short.  :class:`WorstCasePairs` — the default — takes the
worst-case constructions for the release kind (:mod:`.constructions`, in the
public box or the data's) and the generic candidates built from the data
(:func:`~.neighbours.candidate_pairs`): a careful auditor's first tries (the head
of the constructions, :data:`FIRST_TRIES` of them), then the other
constructions and the generic pairs in turn — every one of them is screened
(:mod:`..search.screening`), the order only breaks ties and says which are screened first
when a timed plan is short: neither family is the strongest
for every release (degenerate datasets for sums,
means and clusterings; pairs built from the data for releases whose queries
depend on it).  :class:`GivenPairs` certifies the caller's own pairs.
``searchable`` says whether the model-based search may add datasets of its own.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dpaudit.mechanisms.base import Mechanism, PrivacyClaim, Release

from .constructions import construction_pairs, first_tries, release_k
from .growth import grown_pairs
from .neighbours import NeighbourPair, candidate_pairs, pair_box

__all__ = ["FIRST_TRIES", "GivenPairs", "PairSource", "WorstCasePairs"]

FIRST_TRIES = 8  # the head of the constructions, before the other constructions and generic pairs alternate


class PairSource(Protocol):
    """What stage 1 is: candidates for the search, best first; and, for the screen's growth steps, the same
    kind of candidates at a larger size (none: the source does not grow)."""

    @property
    def searchable(self) -> bool: ...

    def __call__(self, mechanism: Mechanism, X: np.ndarray, probe: Release) -> list[NeighbourPair]: ...

    def grown(self, mechanism: Mechanism, X: np.ndarray, probe: Release, size: int) -> list[NeighbourPair]: ...


@dataclass(frozen=True)
class GivenPairs:
    """The caller's own pairs (``pairs=``), as given: no construction and no search over datasets."""

    pairs: tuple[NeighbourPair, ...]

    @property
    def searchable(self) -> bool:
        return False

    def __call__(self, mechanism: Mechanism, X: np.ndarray, probe: Release) -> list[NeighbourPair]:
        return list(self.pairs)

    def grown(self, mechanism: Mechanism, X: np.ndarray, probe: Release, size: int) -> list[NeighbourPair]:
        return []


@dataclass(frozen=True)
class WorstCasePairs:
    """The worst-case constructions and the generic candidate pairs, in turn (see the module doc).

    ``bounds`` is the public box (None: the data's range); ``seed`` seeds the
    generic pairs' random choices; ``max_pairs`` keeps only that many generic
    pairs and no constructions (nor a model-based search).
    """

    claim: PrivacyClaim
    bounds: object | None
    distance: float
    seed: np.random.SeedSequence
    max_pairs: int | None = None

    @property
    def searchable(self) -> bool:
        return self.max_pairs is None

    def __call__(self, mechanism: Mechanism, X: np.ndarray, probe: Release) -> list[NeighbourPair]:
        claim, kind = self.claim, probe.kind
        generic = candidate_pairs(X, claim.neighbours, kind=kind, bounds=self.bounds, distance=self.distance,
                                  delta=claim.delta, rng=np.random.default_rng(self.seed), max_pairs=self.max_pairs)
        if self.max_pairs is not None:
            return list(generic)
        lo, hi, _ = pair_box(X, self.bounds)
        constructed = construction_pairs(mechanism, X.shape[1], kind, claim.neighbours, bounds=(lo, hi),
                                         k=None if _states_k(mechanism) else release_k(probe), n_records=len(X))
        constructed = first_tries(constructed, _k_of(mechanism, probe, kind), len(X))
        first = [dataclasses.replace(p, first_try=True) for p in constructed[:FIRST_TRIES]]
        taken = itertools.zip_longest(constructed[FIRST_TRIES:], generic)
        return first + [p for both in taken for p in both if p is not None]

    def grown(self, mechanism: Mechanism, X: np.ndarray, probe: Release, size: int) -> list[NeighbourPair]:
        """The constructions at ``size`` records (:func:`~.growth.grown_pairs`), unless the list is cut to
        ``max_pairs`` generic pairs."""
        if self.max_pairs is not None:
            return []
        lo, hi, _ = pair_box(X, self.bounds)
        return grown_pairs((lo, hi), X, _k_of(mechanism, probe, probe.kind), size, self.claim.neighbours)


def _k_of(mechanism: Mechanism, probe: Release, kind: str) -> int:
    """The number of clusters the first tries are sized by: the one the code states, else the probe's (1 for
    vector releases)."""
    if kind not in ("centroids", "labels"):
        return 1
    value = getattr(mechanism, "n_clusters", None)
    if isinstance(value, (int, np.integer)) and value >= 1:
        return int(value)
    return release_k(probe) or 2


def _states_k(mechanism: Mechanism) -> bool:
    return getattr(mechanism, "n_clusters", None) is not None
