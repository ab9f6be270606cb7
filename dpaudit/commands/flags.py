"""Each run option's flag on the command line, by the option's one name: :func:`flag`.

The parts a workflow is built from (:mod:`dpaudit.options`) and the estimator's settings name their fields the
way the command line names its options, dashes for underscores (``n_jobs`` is ``--n-jobs``); the few
exceptions are :data:`RENAMED`, and a field no command's option sets is in :data:`NO_FLAG`.  A mistake in a
part names the field (``records must be a whole number ≥ 2``); on the command line it names the flag
(``--records must be …``): :func:`flag_words`.  ``tests/test_vocabulary.py`` holds every part's field to this
table: its flag is an option of a command, or it is listed as having none.
"""

from __future__ import annotations

__all__ = ["NO_FLAG", "RENAMED", "flag", "flag_words"]

# Fields whose flag is not their name with dashes.
RENAMED = {"epsilon": "--eps", "epsilons": "--eps", "attacks": "--attack", "params": "--param"}

# Fields no command's option sets: a command's own choice, the estimator's caller objects, what a run builds.
NO_FLAG = frozenset({"shadow_fraction", "n_shadow", "n_estimators", "label_only_queries", "parts", "utility_repeats",
                     "supervision", "notions", "pairs", "model_search", "chunk_size", "notify"})


def flag(field: str) -> str | None:
    """The command line's flag of a run option (None: no command sets it)."""
    if field in NO_FLAG:
        return None
    return RENAMED.get(field, "--" + field.replace("_", "-"))


def flag_words(error: BaseException) -> str:
    """An error's message as the command line says it: a run option's mistake (an error with the ``field`` it
    names, :class:`~dpaudit.options.OptionError`) names the option's flag, ``--records must be …`` for
    ``records must be …`` (``--eps: each ε must be > 0`` where the message names it in other words); any other
    message as it is."""
    message = str(error)
    field = getattr(error, "field", None)
    said = flag(field) if isinstance(field, str) else None
    if said is None or field is None:
        return message
    if message == field or message.startswith(field + " "):
        return said + message[len(field):]
    return f"{said}: {message}"
