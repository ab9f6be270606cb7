"""Stage 2 of the ε estimator: which neighbouring pair to certify, on selection releases only.

In: the pair source's candidates (:mod:`..pairs`), the plan's selection budget (:mod:`..sampling`) and the
event selector (:mod:`..selection`).  Out: a :class:`~.search.SearchOutcome` — the winning candidate with its
selected event, and every candidate tried (:class:`~.search.PairSearch`, :mod:`.search`).  Every pair is first
screened on a few coupled releases (:mod:`.screening`); a model-based search proposes small datasets of its own
(:mod:`.model_search`); successive halving with racing spends the rest of the budget on the strongest
(:mod:`.halving`).

It runs before selection and certification are done, yet imports both: it ranks candidates by the event the
selector chooses on them, and stops by the certifier's rule (:data:`~..certification.certification.STOP_GAIN`).
Only the result imports it.
"""
