"""``dpaudit audit``: the full battery on someone else's code, with a verdict on top.

config → run → results dict → report: :mod:`~dpaudit.audit.config` (what was
asked), :mod:`~dpaudit.audit.parts` (smoke, ε estimation, attacks, utility),
:mod:`~dpaudit.verdicts.audit_conclusion` (the overall verdict over the rows),
:mod:`~dpaudit.audit.run` (the parts on a worker, the report),
:mod:`~dpaudit.audit.output` (the console table).
"""
