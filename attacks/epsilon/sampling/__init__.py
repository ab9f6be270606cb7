"""The ε estimator's releases, shared by the search and certification: how many, how fast, and the draws.

Not a stage of its own: the plan every stage reads and the sampler the stages draw through.
:mod:`.budget` turns a time or release budget into the run's :class:`~.budget.Plan` (the selection share for the
search, the looks and their α for certification); :mod:`.calibration` times the audited code for a timed
plan; :mod:`.sampling` draws every release through the execution layer (:class:`~.sampling.Sampler`: chunked,
seeded, each side in a lane of its own) and featurises and counts it where it was drawn, which is why it
imports the selection stage's feature maps, bins and evidence layout.

In: the mechanism, a pair and a feature map.  Out: releases, feature rows or per-bin counts, and the
findings about the audited code.  Imports :mod:`..pairs` and :mod:`..selection`; imported by certification,
the search and the result.
"""
