"""Empirical ε estimation: a certified lower bound on a mechanism's ε, and a verdict against its claim.

The estimator is a pipeline of stages, one module each, composed by
:func:`estimate_epsilon` (:mod:`.estimator`) — the generator → mechanism →
tester → result shape of dp_auditorium:

1. **Neighbouring pairs** — :mod:`.neighbours` (the claim's relation: add-remove, replace,
   metric) and :mod:`.constructions` (the worst-case datasets a careful auditor tries first);
   :class:`~.pairs.PairGenerator` proposes them in priority order.
2. **Pair search** — :class:`~.search.PairSearch`: a probe of each pair, a model-based search over
   small datasets, successive halving; releases drawn by :mod:`.sampling` and kept as
   :mod:`.evidence`.
3. **Event selection** — :class:`~.selection.EventSelector`: statistics of the release features
   (:mod:`.features`, :mod:`.binning`), events on them (:mod:`.events`), chosen and validated on
   disjoint parts of the selection sample.
4. **Certification** — :class:`~.certification.Certifier`: fresh releases, in looks, with α spent
   over the looks (:mod:`.bounds` of the attacks package holds the confidence limits).
5. **The guarantee** — :mod:`.guarantee`: the statement the bound makes, in words.

The budget — how many releases, for which stage, in which rounds and looks —
lives in :mod:`.budget`.  Transcripts of built-in mechanisms (every noisy
statistic drawn) are audited through :mod:`.transcripts`; :mod:`.ceilings` and
:mod:`.draw_budgets` say what a perfect test could certify at a sample size.
"""

from .budget import DEFAULT_TIME_BUDGET, FAST_BUDGET, SELECTION_SHARE, SLOW_BUDGET, default_budget
from .estimator import NO_VIOLATION, VIOLATION, EpsilonEstimate, estimate_epsilon, estimate_transcript_epsilon
from .guarantee import GUARANTEE, guarantee_text

__all__ = ["DEFAULT_TIME_BUDGET", "FAST_BUDGET", "GUARANTEE", "NO_VIOLATION", "SELECTION_SHARE", "SLOW_BUDGET",
           "VIOLATION", "EpsilonEstimate", "default_budget", "estimate_epsilon", "estimate_transcript_epsilon",
           "guarantee_text"]
