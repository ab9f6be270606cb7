"""Stage 5 of the ε estimator: what an estimate returns and states.

In: the search's outcome, the certification's looks and the run's facts.  Out: an
:class:`~.result.EpsilonEstimate`, certified or inconclusive (:mod:`.result`), with what it reports of a
notion's curve (:mod:`.curve_result`), the guarantee in words (:mod:`.guarantee`) and, beside a violation, the
lines of the audited code where it leaks (:mod:`.leak_sites`: a maintainer's pointer, never part of a statement).

The top stage: it may import every other, and no stage imports it (the estimator composes it).
"""
