"""The attack registry: one entry per attack, read by the repeats, the verdicts, the reports, the command line
and the facade — and a repeat's seeds keyed by name, so a new entry moves no attack's numbers."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import numpy as np
import pytest
import typer

import dpaudit
from dpaudit.attack.registry import (
    ATTACKS,
    MEMBERSHIP_ATTACKS,
    PER_RECORD_ATTACKS,
    REGISTRY,
    applies_to,
    attack_words,
    check_table,
    step_cost,
)
from dpaudit.cli import app
from dpaudit.execution.seeds import Stream


def test_the_listing_order_and_the_seeds_are_those_the_numbers_were_made_with() -> None:
    """Before the registry a repeat spawned 4 + 7 children: split, target, public reference, the seven attacks in
    this order, then the reference runs; each attack keeps its child by name (Stream.ATTACK, the seed table), and
    an attack added later gets a key of its own that moves none of theirs."""
    first = ("shokri", "yeom", "label-only", "reconstruction", "lira", "rmia", "tracing")
    assert ATTACKS[:7] == first
    assert MEMBERSHIP_ATTACKS[:6] == tuple(a for a in first if a != "reconstruction")
    assert PER_RECORD_ATTACKS[:2] == ("lira", "rmia")
    parent = np.random.SeedSequence(7).spawn(3)[2]
    children = np.random.SeedSequence(parent.entropy, spawn_key=parent.spawn_key).spawn(11)
    for index, name in enumerate(first, start=3):
        assert np.array_equal(Stream.ATTACK.of(parent, name).generate_state(4), children[index].generate_state(4))
    new = Stream.ATTACK.of(parent, "a new attack").generate_state(4)
    assert not any(np.array_equal(new, c.generate_state(4)) for c in children)


def test_a_bad_entry_fails_when_the_table_loads() -> None:
    shokri = REGISTRY[0]
    for bad in (REGISTRY + (dataclasses.replace(shokri, name="shokri"),),  # shokri twice
                REGISTRY + (dataclasses.replace(shokri, name="x", needs="a table"),)):
        with pytest.raises(RuntimeError, match="unique"):
            check_table(bad)
    check_table(REGISTRY + (dataclasses.replace(shokri, name="next"),))


@pytest.mark.parametrize("name, kind, why", [
    ("yeom", "vector", "it queries a classifier"), ("yeom", "centroids", None), ("tracing", "points", "tracing scores"),
    ("tracing", "vector", None), ("lira", "vector", None), ("rmia", "labels", None),
])
def test_what_an_attack_needs_is_known_before_a_release_is_drawn(name: str, kind: str, why: str | None) -> None:
    said = applies_to(name, kind)
    assert (said is None) == (why is None) and (why is None or why in str(said))


def test_the_reports_the_plan_and_the_facade_read_the_table() -> None:
    assert [attack_words(a) for a in ATTACKS[:7]] == ["Shokri", "Yeom", "label-only", "reconstruction", "LiRA",
                                                      "RMIA", "tracing"]
    assert attack_words("a-new-one") == "a-new-one"
    assert step_cost("label-only", 125) == pytest.approx(0.09 * 125) and step_cost("shokri", 125) == 1.6
    for e in REGISTRY:
        assert e.api is not None
        name = e.api.split(":")[1]
        assert name in dpaudit.__all__ and getattr(dpaudit, name).__name__ == name


def test_the_command_line_lists_every_registered_attack() -> None:
    commands = cast(Any, typer.main.get_command(app)).commands
    attack_help = next(p.help for p in commands["attack"].params if "--attack" in p.opts)
    audit_help = next(p.help for p in commands["audit"].params if "--attack" in p.opts)
    assert all(name in attack_help and name in audit_help for name in ATTACKS)
