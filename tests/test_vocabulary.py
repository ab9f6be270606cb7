"""One name per concept, the same in the API, on the command line, in the configs and in the JSON.

Each concept has one name; its synonyms (names the code once used for it) appear nowhere a user
meets them: no command's option, no config's field, no parameter of the estimator, no key of a
results file.  The verdicts are one enum (:class:`dpaudit.execution.verdict.Verdict`) every layer uses.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from dpaudit.attack.config import AttackConfig
from dpaudit.attacks.epsilon import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.audit.config import AuditConfig
from dpaudit.cli import app
from dpaudit.commands.flags import NO_FLAG, RENAMED, flag, flag_words
from dpaudit.estimate.config import EstimateConfig
from dpaudit.execution import Isolation
from dpaudit.execution.verdict import Verdict
from dpaudit.options import (
    AttackingWorkflow,
    AttackOptions,
    ClaimOptions,
    DataOptions,
    OptionError,
    TargetOptions,
    Workflow,
    built,
)
from dpaudit.sweep.config import SweepConfig

# concept -> (its one name as a Python identifier, the synonyms that must not appear)
CONCEPTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "releases drawn in all (selection and certification)": ("releases", ("budget", "total_releases",
                                                                         "estimate_releases")),
    "local worker processes": ("n_jobs", ("jobs", "workers", "processes")),
    "the level of a certified statement": ("confidence", ("alpha", "level")),
    "the number of clusters": ("n_clusters", ("k", "c", "clusters", "n_centres")),
    "what the auditor sees of a run (output or transcript)": ("access", ("release", "view")),
    "the certification sample size": ("samples", ("estimate_samples", "n_cert", "epsilon_samples")),
    "independent repeats of the attacks": ("repeats", ("attack_repeats", "n_repeats")),
}
SYNONYMS = {s: concept for concept, (_, synonyms) in CONCEPTS.items() for s in synonyms}


def _options(command: Any) -> set[str]:
    return {opt for param in command.params for opt in getattr(param, "opts", [])}


def test_no_command_takes_a_synonym_as_an_option() -> None:
    group = typer.main.get_command(app)
    found = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for opt in _options(command):
            word = opt.lstrip("-").replace("-", "_")
            if word in SYNONYMS:
                found.append(f"dpaudit {name} {opt}: say --{CONCEPTS[SYNONYMS[word]][0].replace('_', '-')} "
                             f"({SYNONYMS[word]})")
    assert not found, "\n".join(found)


WORKFLOWS = (AttackConfig, AuditConfig, EstimateConfig, SweepConfig)
# The parts a workflow is built from (dpaudit.options) and the estimator's and the execution layer's settings.
PARTS = (TargetOptions, ClaimOptions, DataOptions, AttackOptions, Budget, SearchSpace, RunSettings, Isolation)
PART_FIELDS = {f.name for f in dataclasses.fields(Workflow)} | {f.name for f in dataclasses.fields(AttackingWorkflow)}


def _option_names(kind: type) -> set[str]:
    """A config's options by their one name: its own fields and those of the parts it holds."""
    own = {f.name for f in dataclasses.fields(kind)} - PART_FIELDS
    return own | {f.name for part in PARTS for f in dataclasses.fields(part)}


@pytest.mark.parametrize("config", WORKFLOWS)
def test_no_config_has_a_synonym_as_a_field(config: type) -> None:
    found = sorted(_option_names(config) & set(SYNONYMS))
    assert not found, [f"{config.__name__}.{f}: say {CONCEPTS[SYNONYMS[f]][0]}" for f in found]


def test_no_field_is_declared_in_two_workflow_configs() -> None:
    """Each workflow config declares only its own few fields; the rest are the parts of the workflow they share."""
    own = {kind.__name__: set(kind.__annotations__) for kind in WORKFLOWS}
    shared = [(a, b, sorted(own[a] & own[b])) for i, a in enumerate(own) for b in list(own)[i + 1:] if own[a] & own[b]]
    assert not shared, shared
    assert not any(own[name] & PART_FIELDS for name in own), own
    assert all(len(names) <= 5 for names in own.values()), own


def test_every_part_field_has_its_flag_and_the_flag_is_an_option() -> None:
    """The command line names a part's field by its flag (:func:`dpaudit.commands.flags.flag`) — the field's name
    with dashes, but for the few :data:`~dpaudit.commands.flags.RENAMED` — and every such flag is an option of a
    command; a field no option sets is listed as such (:data:`~dpaudit.commands.flags.NO_FLAG`), and is one."""
    names = set().union(*(_option_names(kind) for kind in WORKFLOWS))
    group: Any = typer.main.get_command(app)
    options = set().union(*(_options(command) for command in group.commands.values()))
    flags = {name: flag(name) for name in names}
    assert {f for f in flags.values() if f is not None} <= options, sorted(
        name for name, f in flags.items() if f is not None and f not in options)
    assert set(RENAMED) <= names and NO_FLAG <= names | {"notions"}, sorted(NO_FLAG - names)
    assert not {"--" + name.replace("_", "-") for name in NO_FLAG} & options


@pytest.mark.parametrize("error, said", [
    (OptionError("records", "records must be a whole number ≥ 2, got 0"), "--records must be a whole number ≥ 2, got 0"),
    (OptionError("epsilons", "each ε must be > 0, got 0"), "--eps: each ε must be > 0, got 0"),
    (OptionError("n_shadow", "n_shadow must be a whole number ≥ 1, got 0"), "n_shadow must be a whole number ≥ 1, got 0"),
    (ValueError("n_clusters must be ≥ 2"), "n_clusters must be ≥ 2"),  # a mechanism's own parameter: as it is
])
def test_a_part_s_mistake_names_the_flag_on_the_command_line(error: Exception, said: str) -> None:
    assert flag_words(error) == said


def test_a_library_setting_s_mistake_names_its_field() -> None:
    with pytest.raises(OptionError) as caught:
        built(Budget, samples=0)
    assert caught.value.field == "samples" and flag_words(caught.value).startswith("--samples must be")


def test_the_estimator_takes_the_same_names() -> None:
    """The estimator takes typed settings whose fields are the concepts' names, and nothing else by keyword."""
    params = set(inspect.signature(estimate_epsilon).parameters)
    assert params == {"mechanism", "X", "claim", "budget", "search", "run", "seed"}
    fields = {f.name for kind in (Budget, SearchSpace, RunSettings) for f in dataclasses.fields(kind)}
    assert {"releases", "n_jobs", "confidence", "samples"} <= fields
    assert not fields & set(SYNONYMS), sorted(fields & set(SYNONYMS))


# estimator settings that are not options of ``estimate-eps``: caller objects, not command-line values
NOT_OPTIONS = {"pairs", "model_search", "progress", "chunk_size", "notify"}


def test_every_estimator_setting_is_the_option_of_the_same_name() -> None:
    """Each field of the estimator's settings is ``estimate-eps``'s option of the same name (``n_jobs`` is
    ``--n-jobs``), so what the API calls a thing is what the command line calls it."""
    command = typer.main.get_command(app).commands["estimate-eps"]  # type: ignore[attr-defined]
    options = {opt.lstrip("-").replace("-", "_") for opt in _options(command)}
    fields = {f.name for kind in (Budget, SearchSpace, RunSettings) for f in dataclasses.fields(kind)}
    assert fields - NOT_OPTIONS <= options, sorted(fields - NOT_OPTIONS - options)
    assert set(NOT_OPTIONS) <= fields


def _keys(value: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out += [(str(k), path)] + _keys(v, f"{path}.{k}")
        return out
    if isinstance(value, list):
        return [kv for item in value for kv in _keys(item, path + "[]")]
    return []


def test_no_results_file_has_a_synonym_as_a_key(tmp_path: Path) -> None:
    """An ε estimate's JSON, read key by key (the parameters a mechanism states are its own: not checked)."""
    out = tmp_path / "run.json"
    result = CliRunner().invoke(app, ["estimate-eps", "-m", "laplace", "--eps", "1", "--releases", "4000",
                                      "--max-pairs", "2", "--no-progress", "--out", str(tmp_path / "rep"),
                                      "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    found = [f"{path}.{key}: say {CONCEPTS[SYNONYMS[key]][0]}" for key, path in _keys(data)
             if key in SYNONYMS and not path.startswith(".parameters")]
    assert not found, "\n".join(found)
    assert data["verdict"] in {v.value for v in Verdict}
    assert data["conclusion"]["verdict"] in {v.value for v in Verdict}
    assert data["search"]["plan"]["releases"] == 4000


def test_a_verdict_is_its_text() -> None:
    assert Verdict.VIOLATION == "violation" and json.dumps(Verdict.NO_VIOLATION) == '"no violation found"'
    assert f"{Verdict.INCONCLUSIVE}" == "inconclusive" and str(Verdict.NOT_TESTED) == "not tested"
