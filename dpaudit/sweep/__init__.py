"""``dpaudit sweep``: privacy–utility over ε × repeats, resumable.

config → run → results dict → report: :mod:`~dpaudit.sweep.config` (what was
asked, each cell's seed), :mod:`~dpaudit.sweep.cells` (one cell),
:mod:`~dpaudit.sweep.metrics` and :mod:`~dpaudit.sweep.privacy` (what a cell
measures), :mod:`~dpaudit.sweep.store` (finished cells on disk),
:mod:`~dpaudit.sweep.run` (the cells, in parallel or resumed),
:mod:`~dpaudit.sweep.report` (the results dict and report),
:mod:`~dpaudit.sweep.output` (the console table).
"""
