"""Empirical ε estimation: a certified lower bound on a mechanism's ε, and a verdict against its claim.

The estimator is a pipeline of stages, each an object with a small typed
interface, composed by :func:`estimate_epsilon` (:mod:`.estimator`) — the
generator → mechanism → tester → result shape of dp_auditorium — and
configured by typed settings (:mod:`.settings`: :class:`Budget`,
:class:`SearchSpace`, :class:`RunSettings`) beside the claim:

1. **Neighbouring pairs** — a :class:`~.pairs.PairSource` (default
   :class:`~.pairs.WorstCasePairs`; the caller's own with ``pairs=``): the
   pair itself (:mod:`.pair`), the generic pairs of each relation
   (:mod:`.neighbours`, :mod:`.pair_families`) and the worst-case datasets a
   careful auditor tries first (:mod:`.constructions`).
2. **Pair search** — :class:`~.search.PairSearch`: successive halving over
   the candidates (:mod:`.candidate`), a model-based search over small
   datasets (:mod:`.model_search`); releases drawn by :mod:`.sampling` and
   kept as :mod:`.evidence` (rows, then counts).
3. **Event selection** — :class:`~.selection.EventSelector`: statistics of
   the release features (:mod:`.features`, :mod:`.geometry_features`) as bins
   (:mod:`.binning`, :mod:`.cells`), events on them (:mod:`.events`), chosen
   and validated on disjoint parts of the selection sample.
4. **Certification** — :class:`~.certification.Certifier`: fresh releases, in
   looks, with α spent over the looks (the confidence limits are
   :mod:`dpaudit.attacks.bounds`, shared with the membership attacks).
5. **The result** — :mod:`.result` (:class:`EpsilonEstimate`, certified or
   inconclusive) and :mod:`.guarantee` (the statement, in words).

The budget — how many releases, for which stage, in which rounds and looks,
and the plan of one run — lives in :mod:`.budget`.  Transcripts of built-in
mechanisms (every noisy statistic drawn) are audited through
:mod:`.transcripts`; :mod:`.ceilings`, :mod:`.loss_distributions` and
:mod:`.draw_budgets` say what a perfect test could certify at a sample size.
"""

from .budget import DEFAULT_TIME_BUDGET, FAST_BUDGET, SELECTION_SHARE, SLOW_BUDGET, default_budget
from .estimator import EpsilonEstimate, estimate_epsilon, estimate_transcript_epsilon
from .guarantee import GUARANTEE, guarantee_text
from .settings import Budget, RunSettings, SearchSpace

__all__ = ["DEFAULT_TIME_BUDGET", "FAST_BUDGET", "GUARANTEE", "SELECTION_SHARE", "SLOW_BUDGET", "Budget",
           "EpsilonEstimate", "RunSettings", "SearchSpace", "default_budget", "estimate_epsilon", "estimate_transcript_epsilon",
           "guarantee_text"]
