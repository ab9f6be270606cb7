"""The records a run works on.

:mod:`~dpaudit.data.datasets` — built-in datasets (each with a public box) and the CSV loader;
:mod:`~dpaudit.data.inputs` — a run's records (dataset or CSV, subset, rescaling) and ``--param`` values.
"""
