"""Attacks on releases, laid out as the attacks they are.

* :mod:`dpaudit.attacks.membership` — membership inference (Shokri, Yeom, label-only, LiRA, RMIA, tracing);
* :mod:`dpaudit.attacks.reconstruction` — distance-based reconstruction of records;
* :mod:`dpaudit.attacks.epsilon` — the empirical ε estimator, a pipeline of stages.

What several of them share sits here: :mod:`dpaudit.attacks.attack` (what an attack is: ``fit``/``infer``,
parameters checked up front), :mod:`dpaudit.attacks.bounds` (Clopper–Pearson limits, the ε a pair of
frequencies certifies, the one-run bound) and :mod:`dpaudit.attacks.targets` (what a release becomes for an
attacker: the mechanism pipeline).  Audited code runs through the execution engine
(:mod:`dpaudit.execution`); the attacks never import the application's commands and reports.
"""
