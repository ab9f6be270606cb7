"""``dpaudit estimate-eps``: a certified lower bound on a mechanism's ε and a verdict against its claim.

config → run → results dict → output: :mod:`~dpaudit.estimate.config` (what
was asked), :mod:`~dpaudit.estimate.run` (the mechanism, its public box,
:func:`dpaudit.attacks.epsilon.estimate_epsilon`, the results dict),
:mod:`~dpaudit.estimate.output` (the console summary and the JSON file).
"""
