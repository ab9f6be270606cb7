"""Old import paths still work for one release, with a DeprecationWarning naming the new path (attacks._moved).

Every module that moved when attacks/ was laid out as its attack families — and the execution engine,
which moved out of attacks/ — imports from its old path; every public name of the new module is reachable
there and is the same object; a moved package's submodules follow it.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from attacks._moved import MOVED, new_path


def _fresh_import(name: str):
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(name)
    return module, [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_imports_the_new_module_with_a_warning(old: str) -> None:
    module, caught = _fresh_import(old)
    new = importlib.import_module(MOVED[old])
    assert caught and MOVED[old] in str(caught[0].message) and old in str(caught[0].message)
    public = getattr(new, "__all__", [n for n in dir(new) if not n.startswith("_")])
    assert public, f"{MOVED[old]} exports nothing"
    for name in public:
        assert getattr(module, name) is getattr(new, name), (old, name)


def test_names_reach_the_old_path_whichever_way_they_are_imported() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from attacks import yeom  # an attribute of the package
        from attacks.execution.worker import WorkerMechanism  # a moved package's submodule
        from attacks.neighbours import NeighbourPair
        from attacks.plan import make_plan  # a module merged into another
        from attacks.transcripts import estimate_transcript_epsilon  # a name that left for its family's package
    import attacks.epsilon
    import attacks.epsilon.budget
    import attacks.epsilon.neighbours
    import attacks.membership.yeom
    import execution.worker

    assert yeom.YeomAttack is attacks.membership.yeom.YeomAttack
    assert WorkerMechanism is execution.worker.WorkerMechanism
    assert NeighbourPair is attacks.epsilon.neighbours.NeighbourPair
    assert make_plan is attacks.epsilon.budget.make_plan
    assert estimate_transcript_epsilon is attacks.epsilon.estimate_transcript_epsilon


def test_paths_that_did_not_move_are_left_alone() -> None:
    assert new_path("attacks.bounds") is None and new_path("attacks.epsilon") is None
    assert new_path("attacks.execution.seeds") == "execution.seeds"
    with pytest.raises(AttributeError):
        import attacks

        attacks.no_such_module  # noqa: B018
