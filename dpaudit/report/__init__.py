"""Reports: ``results.json``, ``report.md`` (+ PNGs), self-contained ``report.html``, ``results.csv``.

Every dpaudit run (attack, estimate-eps, sweep, audit) ends in a *results
dict* of plain JSON-able data; :func:`render_report` writes it in every
format, and ``dpaudit report RESULTS.json`` re-renders a stored one.  The
keys the renderer understands (each part is drawn only when present):

``schema_version``
    of ``results.json``, the same for every command (:data:`~dpaudit.report.render.SCHEMA_VERSION`,
    stamped when it is written); its JSON Schema is :data:`~dpaudit.report.render.SCHEMA_FILE`
    (:func:`~dpaudit.report.render.results_schema`).
``kind``, ``title``, ``status``
    what ran (``attack``, ``audit``, ``estimate-eps``, ``sweep``), a title, and
    ``complete`` / ``partial`` / ``interrupted`` (a run stopped by Ctrl-C or SIGTERM).
``conclusion``
    ``{verdict, text, incomplete, reasons}``: the run's ``Conclusion:`` line (:mod:`dpaudit.verdicts.ending`).
``mechanism``
    ``{"spec", "name", "claim": {"epsilon", "delta", "neighbours"}, "params"}``.
``dataset``
    :meth:`dpaudit.data.datasets.Dataset.summary` — shape and public box, never records.
``verdict``, ``verdict_table``
    ``violation`` / ``no violation found``; rows ``{part, statistic, value, claim, verdict}``.
``findings``
    misbehaviour of audited code: ``{kind, part, call, error}``.
``warnings``
    captured :class:`~dpaudit.mechanisms.base.PrivacyLeakWarning` s ``{category, message}``.
``epsilon_estimate``
    the ε-estimation result (``epsilon_lower_bound``, ``claim``, ``verdict``, ``ceiling``, ...); an
    ``estimate-eps`` results dict holds these keys at its top level.  Its ``search["leak_sites"]`` (the
    :class:`~dpaudit.attacks.epsilon.result.leak_sites.LeakSite` dicts) is drawn as "Where it leaks" beside a violation.
``attacks``
    list of attack results (``name`` ∈ shokri, yeom, label-only, reconstruction; optional ``roc``
    ``{fpr, tpr}``); ``roc_curves`` — further ``{label, fpr, tpr}``.
``utility``
    ``{clusterer: {metric: value}}``.
``sweep``
    ``{"epsilons", "repeats", "cells": [{epsilon, repeat, metrics}], "summary": [{epsilon, n, metrics:
    {name: {mean, std}}}], "cells_done", "cells_total"}``; metric names ``<clusterer>.<metric>``,
    ``displacement``, ``mia.<attack>.advantage``, ``epsilon_lower_bound``.
``release_2d``
    a release on a public synthetic stand-in (:mod:`dpaudit.report.standin`).
``provenance``
    :func:`dpaudit.report.provenance.provenance`.
``internal_errors``
    errors inside dpaudit itself (bugs, not the audited code's failures): ``{where, error, traceback,
    …}``; written to ``dpaudit-errors.log`` beside the report (:mod:`dpaudit.report.error_log`).

Reports never contain the audited records: nothing here writes ``Dataset.X``,
and the 2-D figure is drawn over a synthetic stand-in.
"""

from .provenance import Timer, capture_warnings, provenance, stamp_finished
from .render import FORMATS, load_results, render_report, to_jsonable, write_csv, write_json

__all__ = ["FORMATS", "Timer", "capture_warnings", "load_results", "provenance", "render_report",
           "stamp_finished", "to_jsonable", "write_csv", "write_json"]
