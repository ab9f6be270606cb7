"""Verdicts: how each command's parts settle into one verdict, its exit status and its ``Conclusion:`` line.

The words come from the vocabulary, :mod:`dpaudit.execution.verdict` (:class:`~dpaudit.execution.verdict.Verdict`
and :func:`~dpaudit.execution.verdict.settle_verdict`, the one rule findings impose): it lives in the
execution layer because the findings rule and the ε estimator speak of verdicts and may not import the
application.  Everything above them is here:

* :mod:`.attack_rule` — which certified tests can decide ``dpaudit attack``'s verdict, α split over them, and
  the rule (a violation when one exceeds the claim; inconclusive when none ran or a part could not);
* :mod:`.attack_conclusion`, :mod:`.audit_conclusion` (with the audit's rule over its verdict table),
  :mod:`.estimate_conclusion`, :mod:`.sweep_conclusion` — each command's ``results["conclusion"]``;
* :mod:`.sentences` — the sentences those are written in (``VIOLATION: …``, ``Consistent with …``,
  ``INCONCLUSIVE: …``) and the claim in words;
* :mod:`.ending` — the conclusion record and the ``Conclusion:`` line;
* :mod:`.exit_status` — the exit-status table and rule, the same for every command (loaded for ``--help``,
  so this package's ``__init__`` imports nothing).

The curve verdict of a claim in a notion (:mod:`dpaudit.attacks.epsilon.certification.curve_verdict`) is certified with
the ε estimate, in the attacks layer, and writes its own sentence there; the conclusions here quote it.
"""
