"""Stage 4 of the ε estimator: the chosen pair's event certified on fresh releases, in looks.

In: the winning :class:`~..selection.candidate.Candidate` (pair, feature map, selected event), a count sampler
and the certification size of the plan.  Out: a :class:`~.certification.Certification` — the looks, each with
its counts and certified bound (:mod:`.certification`, the :class:`~.certification.Certifier`), which of two
certified pairs the result leads with (:mod:`.certified_pairs`), and for a claim stated in a notion the verdict
on its curve (:mod:`.curve_verdict`, from the trade-off statement of :mod:`.tradeoff` and the Rényi bound of
:mod:`.renyi`).  What a *perfect* test could certify at a sample size — the ceilings of a pair's
privacy-loss distribution (:mod:`.ceilings`, :mod:`.loss_distributions`, the per-draw budgets of
:mod:`.draw_budgets`) — sits here too: the bound certification could reach at best.

Imports :mod:`..pairs`, :mod:`..selection` and :mod:`..sampling`; the search imports it (its early stop is
the certifier's rule).
"""
