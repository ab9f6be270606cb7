"""A neighbouring pair (D, D′) of datasets, the object every stage of the estimator passes on.

What makes two datasets neighbours, and which pairs are worth trying, is said
in :mod:`.neighbours`; here are the pair itself (:class:`NeighbourPair`: the
two datasets, the relation, the changed record, the scale a bound on it is
divided by) and the public box canaries are placed in (:func:`pair_box`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.mechanisms.base import check_bounds

__all__ = ["NO_PUBLIC_BOX", "NeighbourPair", "NoPublicBoxWarning", "pair_box"]


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """One neighbouring pair (D, D′) and what distinguishes them.

    ``index`` is the row of the changed record: for replace/metric pairs the
    same row in D and D′; for add-remove pairs the extra record's row in the
    larger dataset (the canary's row len(D) of D′ for the pairs built here).
    ``old``/``new`` are that record in D and in D′ (``old`` is None for
    add-remove, ``new`` is then the extra record).  ``fallback_for`` names an
    earlier, cheaper pair: this one is skipped when that one's selected event
    already separates D from D′ perfectly on the selection sample.
    ``scale`` converts the ε certified on this pair into the claim's unit:
    the distance for metric pairs, 2 for a replace pair audited against an
    add-remove claim, else 1.
    """

    name: str
    D: np.ndarray
    D_prime: np.ndarray
    relation: str
    index: int
    new: np.ndarray
    old: np.ndarray | None = None
    distance: float = 1.0
    scale: float = 1.0
    description: str = ""
    fallback_for: str | None = None  # try only if the pair of this name found nothing on the selection sample
    family: str = "construction"     # construction | degenerate | outlier | small | duplicates | corner | axis |
    #                                  lemma | search | grown | user; "outlier": a record beyond the public box, whose
    #                                  one-sided refusal is a domain check, not output (pair_search.refusal)
    first_try: bool = False          # a careful auditor's first try (pairs.FIRST_TRIES): kept for the rounds
    #                                  whenever screening saw the code answer on it (screening.screening_pool)

    @property
    def n_shared(self) -> int:
        """Records that are the same in D and D′ (for replace/metric: every row but ``index``)."""
        return int(min(len(self.D), len(self.D_prime)))

    @property
    def shared_records(self) -> np.ndarray:
        """The records D and D′ share, in a fixed order (the smaller dataset of an add-remove pair;
        D for replace/metric, whose row ``index`` is the changed record)."""
        if self.relation == "add-remove":
            return self.D if len(self.D) <= len(self.D_prime) else self.D_prime
        return self.D

    @property
    def focus(self) -> np.ndarray:
        """Where the change happens: the canary, or the changed record's new place."""
        return self.new

    @property
    def direction(self) -> np.ndarray | None:
        """Unit vector from the old to the new record (replace/metric)."""
        if self.old is None:
            return None
        diff = self.new - self.old
        norm = float(np.linalg.norm(diff))
        return diff / norm if norm > 0 else None

    def summary(self) -> dict[str, object]:
        """What reports show: never record values (the canary is synthetic, but kept out too)."""
        return {"name": self.name, "relation": self.relation, "changed_index": self.index,
                "records_D": int(len(self.D)), "records_D_prime": int(len(self.D_prime)),
                "distance": self.distance, "scale": self.scale, "description": self.description,
                "family": self.family}


NO_PUBLIC_BOX = ("no public box was given: the canaries and worst-case datasets go in the data's range widened by "
                 "10 % instead of at the corners of the box the code works in, which can certify a much weaker bound "
                 "(a record at a corner moves a clipped statistic most); state the box: --bounds LO,HI on the command "
                 "line, bounds= in dpaudit.plugin or dpaudit.SearchSpace")


class NoPublicBoxWarning(UserWarning):
    """The ε estimate had no public box to place its canaries in (:data:`NO_PUBLIC_BOX` says what that costs)."""


def pair_box(X: np.ndarray, bounds: object | None) -> tuple[np.ndarray, np.ndarray, bool]:
    """The box canaries are placed in: public ``bounds`` or the data range ± 10 %.

    Returns (lo, hi, public).
    """
    d = X.shape[1]
    if bounds is not None:
        lo, hi = check_bounds(bounds, d)
        return lo, hi, True
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return lo - 0.1 * span, hi + 0.1 * span, False
