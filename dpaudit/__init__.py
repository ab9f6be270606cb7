"""dpaudit: privacy attacks and empirical ε audits for DP clustering mechanisms.

One import name.  The public API, in one place::

    import numpy as np
    import dpaudit

    mech = dpaudit.get_mechanism("ndlaplace", epsilon=1.0)
    X = np.random.default_rng(0).normal(size=(30, 2))
    result = dpaudit.estimate_epsilon(mech, X, budget=dpaudit.Budget(releases=20_000),
                                      search=dpaudit.SearchSpace(bounds=(-3.0, 3.0)), seed=0)
    result.verdict, result.epsilon_lower_bound

* the ε estimate: :func:`estimate_epsilon` (:mod:`dpaudit.attacks.epsilon`), its settings :class:`Budget`,
  :class:`SearchSpace`, :class:`RunSettings`, and its result :class:`EpsilonEstimate`;
* privacy claims and releases: :class:`PrivacyClaim`, :class:`PrivacyLeakWarning`,
  :class:`InvalidInputError` (:mod:`dpaudit.mechanisms.base`);
* the mechanism registry: :func:`get_mechanism`, :func:`available_mechanisms`
  (:mod:`dpaudit.mechanisms`); someone else's code as a mechanism: :func:`plugin` (a function, an estimator or
  mechanism class, or a spec, with the command line's ``epsilon``, ``output``, ``neighbours`` and ``bounds``) —
  :func:`estimate_epsilon` and the attacks' :class:`~dpaudit.attacks.membership.shadow.AttackerKnowledge` take
  such objects too, and :class:`NoPublicBoxWarning` says when the estimate had no public box;
* the attacks (each a class with ``fit``/``infer``): :class:`ShokriAttack`, :class:`YeomAttack`,
  :class:`LabelOnlyAttack`, :class:`LiRAAttack`, :class:`RMIAAttack`, :class:`TracingAttack`
  (:mod:`dpaudit.attacks.membership`), and :func:`reconstruct` (:mod:`dpaudit.attacks.reconstruction`) — every
  attack :mod:`dpaudit.attack.registry` holds.

The names load on first use: ``dpaudit --help`` and a worker process import nothing they do not need.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import TYPE_CHECKING, Any

# The repository keeps the lower layers as folders beside this one (attacks/, mechanisms/, execution/), which an
# installation maps into this package (pyproject.toml, package-dir).  Imported from the checkout itself instead —
# its root first on sys.path, as under ``python -m`` or ``python -c`` there — a finder put first on the meta path
# maps exactly those three names to the checkout's folders, as the editable install's finder does: the layers
# import under the same names as when installed (``dpaudit.attacks`` is the checkout's attacks/), their
# subpackages through their own ``__path__``, and nothing else of the checkout becomes part of the package (no
# ``dpaudit.benchmarks``, ``dpaudit.tests``, ``dpaudit.dpaudit``).  An installed copy has no pyproject.toml beside
# it and is left as it is.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LAYER_FOLDERS = ("mechanisms", "execution", "attacks")


class _CheckoutLayers:
    """A meta-path finder for ``dpaudit.mechanisms``, ``dpaudit.execution`` and ``dpaudit.attacks`` only: each
    from its folder in the checkout at ``root``; every other name is left to the usual finders."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        package, _, folder = fullname.partition(".")
        if package != "dpaudit" or folder not in _LAYER_FOLDERS:
            return None
        location = os.path.join(self.root, folder)
        return importlib.util.spec_from_file_location(fullname, os.path.join(location, "__init__.py"),
                                                      submodule_search_locations=[location])


if os.path.isfile(os.path.join(_CHECKOUT, "pyproject.toml")) and os.path.isfile(
        os.path.join(_CHECKOUT, "mechanisms", "__init__.py")):
    # once per process: a re-import (a test that drops dpaudit from sys.modules) replaces its own finder
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__qualname__ != _CheckoutLayers.__qualname__
                        or getattr(f, "root", None) != _CHECKOUT]
    sys.meta_path.insert(0, _CheckoutLayers(_CHECKOUT))

from dpaudit.attack.registry import facade  # noqa: E402 - the table loads nothing heavy; the checkout path first

if TYPE_CHECKING:
    from dpaudit.attacks.epsilon import Budget, EpsilonEstimate, RunSettings, SearchSpace, estimate_epsilon
    from dpaudit.attacks.epsilon.pairs.pair import NoPublicBoxWarning
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack as LabelOnlyAttack
    from dpaudit.attacks.membership.lira import LiRAAttack as LiRAAttack
    from dpaudit.attacks.membership.rmia import RMIAAttack as RMIAAttack
    from dpaudit.attacks.membership.shadow import AttackerKnowledge
    from dpaudit.attacks.membership.shokri import ShokriAttack as ShokriAttack
    from dpaudit.attacks.membership.tracing import TracingAttack as TracingAttack
    from dpaudit.attacks.membership.yeom import YeomAttack as YeomAttack
    from dpaudit.attacks.reconstruction import reconstruct as reconstruct
    from dpaudit.mechanisms import available as available_mechanisms
    from dpaudit.mechanisms import get as get_mechanism
    from dpaudit.mechanisms import plugin
    from dpaudit.mechanisms.base import (
        InvalidInputError,
        PrivacyClaim,
        PrivacyLeakWarning,
    )

# public name -> (module, attribute)
_PUBLIC: dict[str, tuple[str, str]] = {
    "estimate_epsilon": ("dpaudit.attacks.epsilon", "estimate_epsilon"),
    "EpsilonEstimate": ("dpaudit.attacks.epsilon", "EpsilonEstimate"),
    "Budget": ("dpaudit.attacks.epsilon", "Budget"),
    "SearchSpace": ("dpaudit.attacks.epsilon", "SearchSpace"),
    "RunSettings": ("dpaudit.attacks.epsilon", "RunSettings"),
    "PrivacyClaim": ("dpaudit.mechanisms.base", "PrivacyClaim"),
    "PrivacyLeakWarning": ("dpaudit.mechanisms.base", "PrivacyLeakWarning"),
    "InvalidInputError": ("dpaudit.mechanisms.base", "InvalidInputError"),
    "get_mechanism": ("dpaudit.mechanisms", "get"),
    "available_mechanisms": ("dpaudit.mechanisms", "available"),
    "plugin": ("dpaudit.mechanisms", "plugin"),
    "NoPublicBoxWarning": ("dpaudit.attacks.epsilon.pairs.pair", "NoPublicBoxWarning"),
    "AttackerKnowledge": ("dpaudit.attacks.membership.shadow", "AttackerKnowledge"),
}
_ATTACKS = facade()  # every registered attack's class or function (dpaudit.attack.registry)
_PUBLIC.update(_ATTACKS)

__all__ = ["AttackerKnowledge", "Budget", "EpsilonEstimate", "InvalidInputError", "NoPublicBoxWarning", "PrivacyClaim",
           "PrivacyLeakWarning", "RunSettings", "SearchSpace", "__version__", "available_mechanisms",
           "estimate_epsilon", "get_mechanism", "plugin"]
__all__.extend(_ATTACKS)


def __getattr__(name: str) -> Any:
    """The public names on first use, and ``__version__`` from the installed metadata (importlib.metadata is
    slow to import, and ``dpaudit --help`` does not need it)."""
    if name in _PUBLIC:
        module, attr = _PUBLIC[name]
        value = getattr(importlib.import_module(module), attr)
    elif name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("dpaudit")
        except PackageNotFoundError:  # running from a source checkout without install
            value = "0.1.0"
    else:
        raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
