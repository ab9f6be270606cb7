"""The estimator's release budget and chunking: functions of the problem only, never of timings.

The same seed gives the same numbers on any machine and any worker count, so
neither the total budget (:func:`default_budget`) nor the chunk size
(:func:`default_chunk_size`) may depend on measured speed: both follow from the
mechanism's interface (a vectorised ``release_many``), the size of one release
and the number of features it maps to.  :mod:`attacks.epsilon` spends the
budget: :data:`SELECTION_SHARE` on the search (:mod:`attacks.pair_search`), the
rest on certification.
"""

from __future__ import annotations

import numpy as np

from mechanisms.base import Mechanism, Release

__all__ = ["FAST_BUDGET", "FAST_FLOATS", "FAST_MIN_BUDGET", "MIN_ROUND_FAST", "MIN_ROUND_SLOW", "MIN_SELECTION",
           "PROBE", "SEARCH_SHARE", "SEARCH_TRIALS", "SEARCH_TRIAL_SIZE", "SELECTION_SHARE", "SLOW_BUDGET",
           "default_budget", "default_chunk_size", "is_fast"]

FAST_BUDGET = 2_000_000     # releases (selection + certification) for fast vectorised mechanisms, at most
FAST_MIN_BUDGET = 200_000   # ... at least
FAST_FLOATS = 2 ** 27       # ... and about this many released numbers in all
SLOW_BUDGET = 8_000         # releases for everything else (about today's cost of a clustering audit)
SELECTION_SHARE = 0.4       # of the budget, for the search
MIN_ROUND_FAST, MIN_ROUND_SLOW = 500, 40  # first-round releases per dataset per pair, at least
MIN_SELECTION = (12 * MIN_ROUND_FAST, 12 * MIN_ROUND_SLOW)  # selection budget when `samples` is given, at least
SEARCH_SHARE = 0.25         # of the selection budget, for the model-based search (fast mechanisms only)
SEARCH_TRIALS = 64          # model-based search trials, at most ...
SEARCH_TRIAL_SIZE = 1_000   # ... of this many releases per dataset each (the best go on to the full rounds)
PROBE = 16                  # probe releases per dataset per pair


def default_chunk_size(mechanism: Mechanism, n_records: int, d: int) -> int:
    """Releases per chunk: a function of the problem only, never of the worker count."""
    if callable(getattr(mechanism, "release_many", None)):
        return int(max(64, min(65_536, 2 ** 21 // max(1, n_records * d))))
    return 64


def is_fast(mechanism: Mechanism, kind: str) -> bool:
    """A vectorised ``release_many`` (not a per-release loop behind one) releasing vectors or points."""
    return (callable(getattr(mechanism, "release_many", None)) and bool(getattr(mechanism, "vectorised", True))
            and kind in ("vector", "points"))


def _release_size(release: Release) -> int:
    for attr in ("values", "points", "centers", "labels"):
        if hasattr(release, attr):
            return int(np.asarray(getattr(release, attr)).size)
    return 1


def default_budget(mechanism: Mechanism, release: Release, n_features: int = 0) -> int:
    """Total releases (selection + certification) when ``samples`` is not given.

    A function of the mechanism's interface, the size of one release and the
    number of features it maps to only — never of measured timings, so the
    same seed gives the same numbers on any machine: fast mechanisms
    (:func:`is_fast`) get about :data:`FAST_FLOATS` released numbers and
    features, between :data:`FAST_MIN_BUDGET` and :data:`FAST_BUDGET`
    releases; others :data:`SLOW_BUDGET`.
    """
    if not is_fast(mechanism, release.kind):
        return SLOW_BUDGET
    per_release = max(1, _release_size(release) + int(n_features))
    return int(np.clip(FAST_FLOATS // per_release, FAST_MIN_BUDGET, FAST_BUDGET))
