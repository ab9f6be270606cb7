"""``results.json`` has a schema, and every committed one keeps it.

The schema (:data:`dpaudit.report.render.SCHEMA_FILE`, JSON Schema draft 2020-12) states each command's top level
(required keys and their types, nothing else), the verdict vocabulary, the conclusion, the claim and the findings.
Checked here: it is a valid schema and speaks the code's vocabulary (verdicts, their words, finding kinds,
:data:`~dpaudit.report.render.SCHEMA_VERSION`); every committed ``results.json`` validates (the example reports
and any under ``benchmarks/results/``), and so does a fresh ``estimate-eps`` run (no example report is one);
and a copy of a committed file broken in any of several ways does not.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest
from typer.testing import CliRunner

from dpaudit.cli import app
from dpaudit.execution.findings import FINDING_KINDS
from dpaudit.execution.verdict import Verdict
from dpaudit.report.render import SCHEMA_VERSION, results_schema

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted([*ROOT.glob("reports/examples/**/results.json"), *ROOT.glob("benchmarks/results/**/results.json")])


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = results_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: jsonschema.Draft202012Validator, data: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:160]}" for e in validator.iter_errors(data)]


def test_the_schema_speaks_the_codes_vocabulary() -> None:
    defs = results_schema()["$defs"]
    assert defs["verdict"]["enum"] == [v.value for v in Verdict]
    assert defs["word"]["enum"] == [v.word for v in Verdict]
    assert defs["finding"]["properties"]["kind"]["enum"] == list(FINDING_KINDS)
    assert results_schema()["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


def test_every_kind_of_result_is_committed() -> None:
    kinds = {json.loads(p.read_text(encoding="utf-8"))["kind"] for p in COMMITTED}
    assert kinds >= {"attack", "audit", "sweep"}, kinds  # estimate-eps: the fresh run below


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_results_json_keeps_the_schema(validator: jsonschema.Draft202012Validator, path: Path) -> None:
    errors = _errors(validator, json.loads(path.read_text(encoding="utf-8")))
    assert not errors, "\n".join(errors[:20])


def test_a_fresh_estimate_keeps_the_schema(validator: jsonschema.Draft202012Validator, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["estimate-eps", "-m", "ndlaplace", "--eps", "1", "--releases", "400",
                                      "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    errors = _errors(validator, json.loads((out / "results.json").read_text(encoding="utf-8")))
    assert not errors, "\n".join(errors[:20])


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def breaks(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return breaks


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.pop(key)


BREAKAGES: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {  # name -> (which example, what breaks)
    "a verdict outside the vocabulary": ("attack-ndlaplace", _set(("conclusion", "verdict"), "violated")),
    "a word outside the vocabulary": ("attack-ndlaplace", _set(("conclusion", "word"), "OK")),
    "a word that is another verdict's": ("attack-ndlaplace", _set(("conclusion", "word"), "INCONCLUSIVE")),
    "no conclusion": ("sweep-rq1-ndlaplace", _drop("conclusion")),
    "an attack run without its attacks": ("attack-ndlaplace", _drop("attacks")),
    "an audit row with a made-up verdict": ("audit-dpfcm", _set(("verdict_table", 0, "verdict"), "maybe")),
    "a key no command writes": ("audit-dpfcm", _set(("surprise",), 1)),
    "another schema version": ("sweep-rq1-ndlaplace", _set(("schema_version",), SCHEMA_VERSION + 1)),
    "a kind no command is": ("sweep-rq1-ndlaplace", _set(("kind",), "scan")),
    "a claim's neighbour relation misspelt": ("attack-ndlaplace", _set(("mechanism", "claim", "neighbours"), "metrc")),
    "a number written as text": ("sweep-rq1-ndlaplace", _set(("sweep", "cells_total"), "12")),
    "a finding of no known kind": ("audit-dpfcm", _set(("findings",), [{"kind": "oops", "count": 1, "calls": 1,
                                                                        "blocking": True, "error": "x"}])),
}


@pytest.mark.parametrize("name", sorted(BREAKAGES))
def test_a_broken_copy_fails_validation(validator: jsonschema.Draft202012Validator, tmp_path: Path, name: str) -> None:
    example, breaks = BREAKAGES[name]
    source = ROOT / "reports" / "examples" / example / "results.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    assert not _errors(validator, data)  # the original keeps the schema
    broken = copy.deepcopy(data)
    breaks(broken)
    copy_path = tmp_path / "results.json"
    copy_path.write_text(json.dumps(broken), encoding="utf-8")
    assert _errors(validator, json.loads(copy_path.read_text(encoding="utf-8"))), f"{name}: still valid"
