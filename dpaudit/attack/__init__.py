"""``dpaudit attack``: membership inference and reconstruction against one mechanism at one ε.

config → run → results dict → report:
:mod:`~dpaudit.attack.config` (what was asked), :mod:`~dpaudit.attack.repeat`
(one split, one release, every attack), :mod:`~dpaudit.attack.run` (the
repeats and the results dict), :mod:`~dpaudit.attack.summary` (one entry per
attack), :mod:`~dpaudit.attack.output` (the console table).  Every attack a run
can run is one entry of :mod:`~dpaudit.attack.registry`.
"""
