"""Stage 1 of the ε estimator: the neighbouring pairs (D, D′) to search, in priority order.

In: the mechanism, the audited data, one probe release and the claim's relation.  Out: a list of
:class:`~.pair.NeighbourPair` s, best first, from a :class:`~.pairs.PairSource` (:mod:`.pairs`: the default
:class:`~.pairs.WorstCasePairs`, or the caller's own :class:`~.pairs.GivenPairs`).  Here are the pair itself
(:mod:`.pair`), the generic pairs of each relation built from the data (:mod:`.neighbours`,
:mod:`.pair_families`), the worst-case datasets a careful auditor tries first (:mod:`.constructions`), the same at
larger sizes for code that answers only on enough data (:mod:`.growth`), and what the code refuses — the
datasets outside its domain, which no pair may use, or a leak channel (:mod:`.refusals`).

The lowest stage: it imports no other stage, and every other stage passes its pairs on.
"""
