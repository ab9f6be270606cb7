"""Stage 3 of the ε estimator: one event per neighbouring pair, chosen and validated on its selection sample.

In: a pair (:mod:`..pairs`) and its selection releases.  Out: a :class:`~.candidate.Candidate` — the pair, its
feature map, its sample kept as :class:`~.evidence.Evidence` and the :class:`~.selection.SelectedEvent` chosen
on it by the :class:`~.selection.EventSelector` (:mod:`.selection`), with the predictions that rank it.  The
releases become features (:mod:`.features`, :mod:`.geometry_features`; a transcript's statistics:
:mod:`.transcripts`), statistics of the features become bins (:mod:`.binning`, :mod:`.cells`), events are sets
of bins (:mod:`.events`; for a claim in a notion, ranked by the gap below its curve: :mod:`.curve_selection`),
and the sample's disjoint parts (:mod:`.evidence`) fit, choose and validate them.

The pipeline runs the search (stage 2) before this stage is done, but the import graph is the other way
round: the search calls the selector on every candidate it ranks (:func:`~.candidate.evaluate`), so this
package imports no other stage but :mod:`..pairs`.
"""
