"""What :func:`~dpaudit.attacks.epsilon.estimate_epsilon` is asked to do, as three typed settings objects.

The estimator's parameters fall into four concerns; the claim is a
:class:`~dpaudit.mechanisms.base.PrivacyClaim`, the other three are here, each
validated when it is built (a mistake is an :class:`InvalidInputError` naming
the field, before anything runs):

* :class:`Budget` — how much evidence: total ``releases``, or a ``time_budget``
  in seconds, or fixed ``samples``/``selection_samples``, and the
  ``confidence`` of the certified statement;
* :class:`SearchSpace` — where the evidence is looked for: the candidate
  ``pairs`` (or the worst-case constructions), the public ``bounds`` they live
  in, the ``distance`` of a metric claim, the event-selection ``classifier``,
  the model-based search, and the code's stated domain (``min_records``);
* :class:`RunSettings` — how the releases are drawn, which never changes the
  numbers: ``n_jobs`` local processes or a Dask ``scheduler``, the
  ``progress`` bar, ``chunk_size`` and a ``notify`` callback.

The names are the ones the command line, the configs and the results use
(``--releases``, ``--time-budget``, ``--confidence``, ``--n-jobs``, …).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError, check_positive

from .sampling.budget import DEFAULT_TIME_BUDGET

if TYPE_CHECKING:
    from .pairs.neighbours import NeighbourPair
    from .pairs.pairs import PairSource

__all__ = ["Budget", "RunSettings", "SearchSpace"]


def _count(value: Any, name: str, minimum: int) -> int | None:
    if value is None:
        return None
    return int(check_positive(value, name=name, integer=True, minimum=minimum, inclusive=True))


@dataclass(frozen=True)
class Budget:
    """How much evidence an estimate draws, and at what confidence.

    ``releases``: total releases, selection and certification — the same numbers on any machine.
    ``time_budget``: seconds, used when neither ``releases`` nor ``samples`` is given (the code is timed
    and what fits is planned; ``None``: the default, :data:`~dpaudit.attacks.epsilon.sampling.budget.DEFAULT_TIME_BUDGET`).
    ``samples``: certification releases per dataset, one look at the full α.  ``selection_samples``:
    first-round selection releases per dataset per pair.  ``confidence``: 1 − α of the certified bound.
    """

    releases: int | None = None
    time_budget: float | None = DEFAULT_TIME_BUDGET
    samples: int | None = None
    selection_samples: int | None = None
    confidence: float = 0.95

    def __post_init__(self) -> None:
        object.__setattr__(self, "releases", _count(self.releases, "releases", 100))
        object.__setattr__(self, "samples", _count(self.samples, "samples", 1))
        object.__setattr__(self, "selection_samples", _count(self.selection_samples, "selection_samples", 10))
        if self.time_budget is not None:
            object.__setattr__(self, "time_budget", float(check_positive(self.time_budget, name="time_budget")))
        try:
            confidence = float(self.confidence)
        except (TypeError, ValueError):
            raise InvalidInputError(f"confidence must be a number in (0, 1), got {self.confidence!r}") from None
        if not 0.0 < confidence < 1.0:
            raise InvalidInputError(f"confidence must be in (0, 1), got {self.confidence!r}")
        object.__setattr__(self, "confidence", confidence)

    @property
    def alpha(self) -> float:
        """The level of the certified statement, 1 − confidence."""
        return 1.0 - self.confidence


@dataclass(frozen=True)
class SearchSpace:
    """Where an estimate looks for evidence.

    ``pairs``: explicit candidate pairs, or a :class:`~dpaudit.attacks.epsilon.pairs.pairs.PairSource` of your own
    (``None``: the worst-case constructions, the generic candidates and the model-based search).
    ``bounds``: the public box the code works in, where canaries and degenerate datasets go (``None``:
    the mechanism's, else the data's range ± 10 %).  ``distance``: how far a record moves under a metric
    claim (the bound is per unit).  ``max_pairs``: keep the first few generic pairs only.
    ``model_search``: the model-based search over small datasets.  ``classifier``: ``"logistic"``,
    ``None``/``"none"`` or any scikit-learn classifier, cloned per pair, for event selection.
    ``min_records``: the code's stated domain — pairs with a dataset of fewer records are not tried
    (``None``: read off what the code refuses, :mod:`dpaudit.attacks.epsilon.pairs.refusals`).
    """

    pairs: Sequence[NeighbourPair] | PairSource | None = None
    bounds: object | None = None
    distance: float = 1.0
    max_pairs: int | None = None
    model_search: bool = True
    classifier: Any = "logistic"
    min_records: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_pairs", _count(self.max_pairs, "max_pairs", 1))
        object.__setattr__(self, "min_records", _count(self.min_records, "min_records", 0))
        object.__setattr__(self, "distance", float(check_positive(self.distance, name="distance")))
        if self.pairs is not None and not callable(self.pairs):
            object.__setattr__(self, "pairs", tuple(self.pairs))


@dataclass(frozen=True)
class RunSettings:
    """How the releases are drawn — never what they are: the same seed gives the same numbers whatever these are.

    ``n_jobs``: local worker processes (−1: every core), or ``scheduler``: a Dask scheduler (address or
    client).  ``progress``: True/False, ``None`` (a bar when stderr is a terminal) or a tqdm-like bar.
    ``chunk_size``: releases per chunk of work (``None``: planned).  ``notify(text)``: told, at the start
    of a timed run, what the budget buys (:meth:`~dpaudit.attacks.epsilon.sampling.budget.Plan.briefing`).
    """

    n_jobs: int = 1
    scheduler: Any = None
    progress: Any = None
    chunk_size: int | None = None
    notify: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        n_jobs = self.n_jobs
        if self.scheduler is None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer))
                                       or not (n_jobs == -1 or n_jobs >= 1)):
            raise InvalidInputError(f"n_jobs must be a whole number ≥ 1, or -1 for every core; got {n_jobs!r}")
        object.__setattr__(self, "chunk_size", _count(self.chunk_size, "chunk_size", 1))
