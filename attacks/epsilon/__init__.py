"""Empirical ε estimation: a certified lower bound on a mechanism's ε, and a verdict against its claim.

The estimator is a pipeline of stages, each an object with a small typed
interface, composed by :func:`estimate_epsilon` (:mod:`.estimator`) — the
generator → mechanism → tester → result shape of dp_auditorium — and
configured by typed settings (:mod:`.settings`: :class:`Budget`,
:class:`SearchSpace`, :class:`RunSettings`) beside the claim.  Each stage is
a package:

1. **Neighbouring pairs** (:mod:`.pairs`) — a :class:`~.pairs.pairs.PairSource`
   (default :class:`~.pairs.pairs.WorstCasePairs`; the caller's own with
   ``pairs=``): the pair itself (:mod:`.pairs.pair`), the generic pairs of each
   relation (:mod:`.pairs.neighbours`, :mod:`.pairs.pair_families`), the
   worst-case datasets a careful auditor tries first
   (:mod:`.pairs.constructions`) and the datasets the code refuses
   (:mod:`.pairs.refusals`).
2. **Pair search** (:mod:`.search`) — :class:`~.search.search.PairSearch`:
   screening, successive halving over the candidates
   (:mod:`.selection.candidate`), a model-based search over small datasets
   (:mod:`.search.model_search`).
3. **Event selection** (:mod:`.selection`) —
   :class:`~.selection.selection.EventSelector`: statistics of the release
   features (:mod:`.selection.features`, :mod:`.selection.geometry_features`)
   as bins (:mod:`.selection.binning`, :mod:`.selection.cells`), events on them
   (:mod:`.selection.events`), chosen and validated on disjoint parts of the
   selection sample, kept as :mod:`.selection.evidence` (rows, then counts).
4. **Certification** (:mod:`.certification`) —
   :class:`~.certification.certification.Certifier`: fresh releases, in looks,
   with α spent over the looks (the confidence limits are
   :mod:`dpaudit.attacks.bounds`, shared with the membership attacks).
5. **The result** (:mod:`.result`) — :mod:`.result.result`
   (:class:`EpsilonEstimate`, certified or inconclusive) and
   :mod:`.result.guarantee` (the statement, in words).

The releases every stage draws come through :mod:`.sampling`, shared by the
stages: the budget — how many releases, for which stage, in which rounds and
looks, and the plan of one run — (:mod:`.sampling.budget`), the calibration of
a timed plan (:mod:`.sampling.calibration`) and the sampler
(:mod:`.sampling.sampling`).  Transcripts of built-in mechanisms (every noisy
statistic drawn) are audited through :mod:`.selection.transcripts`;
:mod:`.certification.ceilings`, :mod:`.certification.loss_distributions` and
:mod:`.certification.draw_budgets` say what a perfect test could certify at a
sample size.

The packages import one way, in the order the code depends on, not the order
the pipeline runs: pairs → selection → sampling → certification → search →
result.  The search runs first but ranks its candidates by the event the
selector chooses on them and stops by the certifier's rule, so it sits above
both; the sampler featurises and counts releases where they are drawn, so it
sits above selection.  ``tests/test_layers.py`` checks the order.
"""

from .estimator import EpsilonEstimate, estimate_epsilon, estimate_transcript_epsilon
from .result.guarantee import GUARANTEE, guarantee_text
from .sampling.budget import DEFAULT_TIME_BUDGET, FAST_BUDGET, SELECTION_SHARE, SLOW_BUDGET, default_budget
from .settings import Budget, RunSettings, SearchSpace

__all__ = ["DEFAULT_TIME_BUDGET", "FAST_BUDGET", "GUARANTEE", "SELECTION_SHARE", "SLOW_BUDGET", "Budget",
           "EpsilonEstimate", "RunSettings", "SearchSpace", "default_budget", "estimate_epsilon", "estimate_transcript_epsilon",
           "guarantee_text"]
