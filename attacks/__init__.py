"""Attacks on releases, laid out as the attacks they are.

* :mod:`attacks.membership` — membership inference (Shokri, Yeom, label-only, LiRA, RMIA, tracing);
* :mod:`attacks.reconstruction` — distance-based reconstruction of records;
* :mod:`attacks.epsilon` — the empirical ε estimator, a pipeline of stages.

What several of them share sits here: :mod:`attacks.attack` (what an attack is: ``fit``/``infer``,
parameters checked up front), :mod:`attacks.bounds` (Clopper–Pearson limits, the ε a pair of
frequencies certifies, the one-run bound) and :mod:`attacks.targets` (what a release becomes for an
attacker: the mechanism pipeline).  Audited code runs through the execution engine
(:mod:`execution`); the attacks never import the application (:mod:`dpaudit`).

Modules that moved keep their old paths for one release (:mod:`attacks._moved`).
"""

from __future__ import annotations

import importlib
from typing import Any

from ._moved import MOVED, install

install()


def __getattr__(name: str) -> Any:
    """``from attacks import shokri`` and the like: the old submodule names, through the stand-ins."""
    if f"attacks.{name}" in MOVED:
        return importlib.import_module(f"attacks.{name}")
    raise AttributeError(f"module 'attacks' has no attribute {name!r}")
