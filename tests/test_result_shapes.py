"""The typed shapes of results (:mod:`dpaudit.result_shapes`) and the JSON schema name the same keys.

For every schema definition :data:`~dpaudit.run_shapes.SCHEMA_DEFINITIONS` pairs with a class, the class's keys
are the definition's ``properties`` (at least those, where the definition is open to more) (for the four results kinds, :class:`~dpaudit.run_shapes.RunResults` holds
the union of their properties and nothing else, but for the report layer's own inputs); and the estimate embedded in a run adds its own keys to the
estimate's.  A key added to one and not the other fails here.
"""

from __future__ import annotations

import pytest

from dpaudit.report.render import results_schema
from dpaudit.result_shapes import EmbeddedEstimate, EstimateSummary
from dpaudit.run_shapes import REPORT_ONLY_KEYS, SCHEMA_DEFINITIONS, RunResults

RESULT_KINDS = ("attack_results", "audit_results", "estimate_results", "sweep_results")


@pytest.mark.parametrize("definition", sorted(set(SCHEMA_DEFINITIONS) - set(RESULT_KINDS)))
def test_each_shape_has_its_definitions_keys(definition: str) -> None:
    properties = set(results_schema()["$defs"][definition]["properties"])
    (shape,) = SCHEMA_DEFINITIONS[definition]
    keys = set(shape.__annotations__) if definition != "embedded_estimate" else set(EmbeddedEstimate.__annotations__)
    if definition == "embedded_estimate":  # its own keys; the estimate's come with it (the schema's allOf/if)
        keys -= set(EstimateSummary.__annotations__) - {"seed"}
    if results_schema()["$defs"][definition].get("additionalProperties") is False:
        assert keys == properties, (sorted(keys - properties), sorted(properties - keys))
    else:  # an open definition: the shape may name keys the schema leaves open, never miss one it states
        assert keys >= properties, sorted(properties - keys)


def test_run_results_hold_the_union_of_the_kinds_keys() -> None:
    defs = results_schema()["$defs"]
    union = set().union(*(defs[kind]["properties"] for kind in RESULT_KINDS))
    keys = set(RunResults.__annotations__) - set(REPORT_ONLY_KEYS)
    assert keys == union, (sorted(keys - union), sorted(union - keys))
    assert not union & set(REPORT_ONLY_KEYS)
    assert all(SCHEMA_DEFINITIONS[kind] == (RunResults,) for kind in RESULT_KINDS)


def test_every_object_definition_of_the_schema_has_a_shape() -> None:
    objects = {name for name, d in results_schema()["$defs"].items() if d.get("type") == "object"}
    assert objects <= set(SCHEMA_DEFINITIONS) | {"notion"}, sorted(objects - set(SCHEMA_DEFINITIONS))
