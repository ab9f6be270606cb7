"""Each run option's flag on the command line, by the option's one name: :data:`FLAGS`.

The parts a workflow is built from (:mod:`dpaudit.options`) and the estimator's settings name their fields the
way the command line names its options, dashes for underscores (``n_jobs`` is ``--n-jobs``); the few
exceptions are :data:`RENAMED`.  A mistake in a part names the field (``records must be a whole number ≥ 2``);
on the command line it names the flag (``--records must be …``): :func:`flag_words`.  A field no command sets
is in :data:`NO_FLAG`.  ``tests/test_vocabulary.py`` holds every part's field to this table.
"""

from __future__ import annotations

__all__ = ["FLAGS", "NO_FLAG", "RENAMED", "flag_words"]

# Fields whose flag is not their name with dashes.
RENAMED = {"epsilon": "--eps", "epsilons": "--eps", "attacks": "--attack", "params": "--param"}

# Fields no command's option sets: a command's own choice, the estimator's caller objects, what a run builds.
NO_FLAG = frozenset({"shadow_fraction", "n_shadow", "n_estimators", "label_only_queries", "parts", "utility_repeats",
                     "supervision", "notions", "pairs", "model_search", "progress", "chunk_size", "notify"})

_NAMES = ("mechanism", "params", "output", "own_randomness", "classes", "label_range", "label_anchors", "epsilon",
          "epsilons", "delta", "neighbours", "dataset", "data", "label_column", "records", "rescale", "bounds",
          "attacks", "repeats", "candidates", "reference_runs", "releases", "time_budget", "samples",
          "selection_samples", "confidence", "distance", "max_pairs", "min_records", "classifier", "timeout",
          "python", "memory_limit", "n_jobs", "scheduler", "seed", "epsilon_estimate", "access", "clusterers",
          "n_clusters", "epsilon_bound")

FLAGS: dict[str, str] = {name: RENAMED.get(name, "--" + name.replace("_", "-")) for name in _NAMES}


def flag_words(error: BaseException) -> str:
    """An error's message as the command line says it: a run option's mistake (an error with the ``field`` it
    names, :class:`~dpaudit.options.OptionError`) names the option's flag, ``--records must be …`` for
    ``records must be …`` (``--eps: each ε must be > 0`` where the message names it in other words); any other
    message as it is."""
    message = str(error)
    field = getattr(error, "field", None)
    flag = FLAGS.get(field) if isinstance(field, str) else None
    if flag is None or field is None:
        return message
    if message == field or message.startswith(field + " "):
        return flag + message[len(field):]
    return f"{flag}: {message}"
