"""The options a workflow is built from, one typed part per concern, each checked once in the library's words.

* :class:`ClaimOptions` — the claim tested: ε, δ, the neighbour relation, or a notion (:mod:`dpaudit.claims`);
  :meth:`ClaimOptions.claim` is the one place a run's claim is built;
* :class:`TargetOptions` — the audited code: spec, parameters, how its output is read, its own randomness,
  a supervised plug-in's labels;
* :class:`DataOptions` — the records (a dataset or a CSV, records, rescaling) and the public box;
* :class:`AttackOptions` — which attacks (:mod:`dpaudit.attack.registry`) and how a repeat is set up;

beside the estimator's own :class:`~dpaudit.attacks.epsilon.Budget`,
:class:`~dpaudit.attacks.epsilon.SearchSpace` and :class:`~dpaudit.attacks.epsilon.RunSettings`
and the execution layer's :class:`~dpaudit.execution.Isolation`.  :class:`Workflow` holds them; the four
workflow configs add their own few fields.  A mistake is an :class:`OptionError` naming the field
(:mod:`dpaudit.options.checks`); the command line names its flag instead.
"""

from .attacks import DEFAULT_REFERENCE_RUNS, MIN_MEMBERS, MIN_SHADOW, AttackOptions
from .checks import OptionError, built, epsilon_value, fraction, one_of, whole_number
from .claim import ClaimOptions
from .data import DEFAULT_DATASET, DataOptions
from .target import TargetOptions
from .workflow import AttackingWorkflow, Workflow

__all__ = ["DEFAULT_DATASET", "DEFAULT_REFERENCE_RUNS", "MIN_MEMBERS", "MIN_SHADOW", "AttackOptions",
           "AttackingWorkflow", "ClaimOptions", "DataOptions", "OptionError", "TargetOptions", "Workflow", "built",
           "epsilon_value", "fraction", "one_of", "whole_number"]
