"""``docs/execution.md`` against the code, where it quotes it: every number it states is the constant the code
uses, its findings table lists every kind with the right effect on a verdict, and what it says runs where is
what the recipe does."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from dpaudit.execution import _worker_calls, backends, engine, findings, isolation, worker_audited, worker_draw
from dpaudit.execution.engine import MechanismRecipe

DOC = (Path(__file__).resolve().parents[1] / "docs" / "execution.md").read_text(encoding="utf-8")
TEXT = re.sub(r"\s+", " ", DOC)  # line breaks inside a sentence do not matter
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


@pytest.mark.parametrize("quote", [
    f"bigger than {_worker_calls.MAX_RELEASE_FACTOR} times the data ({_worker_calls.MAX_RELEASE_FLOOR >> 20} MiB "
    "at least)",
    f"{WORDS[isolation.MAX_CONSECUTIVE_DROPS].capitalize()} releases dropped in a row",
    f"the first {engine.REPLAY_CALLS} (single) calls",
    f"replaying {engine.REPLAY_CALLS} early calls",
    f"default {backends.DASK_STALL_TIMEOUT:g} s, or {WORDS.get(int(backends.STALL_FACTOR), 'ten')} times the "
    "slowest chunk",
    f"batches of up to {worker_draw.MAX_BATCH:,} releases per request",
])
def test_every_number_the_page_states_is_the_codes(quote: str) -> None:
    assert quote in TEXT, f"docs/execution.md should say: {quote!r}"


def test_the_findings_table_lists_every_kind_and_its_effect() -> None:
    rows = re.findall(r"^\| (`[^|]+`) \|[^|]*\|[^|]*\| (yes|no[^|]*) \|$", DOC, flags=re.M)
    blocking: dict[str, bool] = {}
    for kinds, effect in rows:
        for kind in re.findall(r"`([a-z-]+)`", kinds):
            blocking[kind] = effect.startswith("yes")
    assert set(blocking) == set(findings.FINDING_KINDS)
    assert {k for k, b in blocking.items() if b} == set(findings.BLOCKING_KINDS)


def test_what_runs_where_is_what_the_recipe_does() -> None:
    assert MechanismRecipe("ndlaplace").in_process                    # a built-in: dpaudit's own process
    assert not MechanismRecipe("their_code.py:fn").in_process         # third-party code: a worker
    assert not MechanismRecipe("some_pkg.mech:Mech").in_process
    assert "in a worker process (`WorkerMechanism`) in every command" in TEXT
    # "a finder put first": the worker's finder for dpaudit's own packages goes to the head of sys.meta_path
    assert "sys.meta_path.insert(0, OwnPackages(" in inspect.getsource(worker_audited.load_audited)
    assert "a finder put first" in TEXT
