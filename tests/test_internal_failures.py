"""A failure inside dpaudit is reported as dpaudit's, with its traceback in the run's log, and a part
that could not run — for any reason — ends INCONCLUSIVE with exit status 3.

The attacks run in this process (the plug-in in a worker), so monkeypatching an attack makes it
raise inside dpaudit while the audited code behaves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.attack.internal import INTERNAL, MECHANISM, SETUP, classify, is_internal_message
from dpaudit.attacks.attack import NotApplicable
from dpaudit.cli import app
from dpaudit.execution import MechanismFailure
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.mechanisms.plugins import MalformedReleaseError
from dpaudit.verdicts.audit_conclusion import conclude
from dpaudit.verdicts.exit_status import EXIT_INCOMPLETE

PLUGIN = f"{Path(__file__).parent / 'plugins' / 'varying.py'}:random_k"  # private: only dpaudit's own failure decides
COMMON = ["-m", PLUGIN, "--eps", "1", "--output", "centroids", "--records", "100", "--releases", "1500",
          "--seed", "0", "--timeout", "20", "--no-progress"]
MECHANISM_WORDS = ("the mechanism failed", "the audited code misbehaved", "the audited code failed")


class Boom(ZeroDivisionError):
    """The bug planted in dpaudit's own code."""


def _boom(*args: object, **kwargs: object) -> None:
    raise Boom("planted bug in an attack")


def _run(command: str, extra: list[str], out: Path) -> tuple[int, str, dict]:
    res = CliRunner().invoke(app, [command, *COMMON, *extra, "--out", str(out)])
    return res.exit_code, res.output, json.loads((out / "results.json").read_text())


def _says_internal(text: str) -> None:
    assert "internal dpaudit error" in text and "not in the audited code" in text, text
    assert not any(words in text for words in MECHANISM_WORDS), text


def _logged(out: Path) -> str:
    log = (out / "dpaudit-errors.log").read_text()
    assert "Traceback (most recent call last)" in log and "Boom: planted bug in an attack" in log and "_boom" in log
    return log


def _planted(monkeypatch, owner: object, name: str, command: str, extra: list[str], out: Path) -> tuple[str, dict]:
    """Plant the bug (``owner.name`` raises inside dpaudit), run the command, and check what every such run
    must show: exit 3, a conclusion that names dpaudit's own error, the traceback in the run's log."""
    monkeypatch.setattr(owner, name, _boom)
    code, output, data = _run(command, extra, out)
    assert code == EXIT_INCOMPLETE, output
    _says_internal(data["conclusion"]["text"])
    _logged(out)
    return output, data


def test_whose_failure_an_exception_is() -> None:
    assert classify(MechanismFailure({"kind": "raises", "call": "release", "error": "x"})) == MECHANISM
    assert classify(MalformedReleaseError("bad shape")) == MECHANISM
    assert classify(InvalidInputError("too few records")) == SETUP
    assert classify(NotApplicable("vector releases only")) == SETUP
    assert classify(Boom("bug")) == INTERNAL and classify(KeyError("k")) == INTERNAL


def test_an_attack_that_raises_inside_dpaudit_is_dpaudits_failure_in_attack(monkeypatch, tmp_path: Path) -> None:
    import dpaudit.attacks.membership.yeom as yeom

    output, data = _planted(monkeypatch, yeom.YeomAttack, "infer", "attack",
                            ["--repeats", "1", "--attack", "yeom,rmia"], tmp_path / "run")
    entries = {a["name"]: a for a in data["attacks"]}
    assert entries["yeom"]["internal_errors"] == 1 and entries["yeom"]["repeats_failed"] == 1
    assert entries["rmia"]["status"] == "ok"  # the other attack is untouched
    assert data["conclusion"]["verdict"] == "inconclusive" and data["conclusion"]["incomplete"] is True
    assert output.rstrip().splitlines()[-1] == f"Conclusion: {data['conclusion']['text']}"
    finding = next(f for f in data["findings"] if f["part"] == "yeom repeats")
    assert is_internal_message(finding["error"])
    [record] = data["internal_errors"]
    assert record["attack"] == "yeom" and record["repeat"] == 1 and "Boom" in record["traceback"]


def test_an_attack_that_raises_inside_dpaudit_is_dpaudits_failure_in_audit(monkeypatch, tmp_path: Path) -> None:
    import dpaudit.attacks.reconstruction as reconstruction

    _, data = _planted(monkeypatch, reconstruction, "reconstruct", "audit",
                       ["--repeats", "1", "--attack", "yeom,reconstruction"], tmp_path / "run")
    row = next(r for r in data["verdict_table"] if r["part"] == "reconstruction")
    assert row["verdict"] == "inconclusive" and row["statistic"] == "internal dpaudit error in every repeat"
    assert data["verdict"] == "inconclusive" and data["conclusion"]["incomplete"] is True
    assert data["internal_errors"][0]["attack"] == "reconstruction"


@pytest.mark.parametrize("command", ["attack", "audit"])
def test_an_epsilon_estimate_that_raises_inside_dpaudit_is_dpaudits_failure(command: str, monkeypatch,
                                                                           tmp_path: Path) -> None:
    import dpaudit.attacks.epsilon

    extra = ["--repeats", "1"] if command == "attack" else ["--repeats", "1"]
    _, data = _planted(monkeypatch, dpaudit.attacks.epsilon, "estimate_epsilon", command, [*extra, "--attack", "yeom"],
                       tmp_path / "run")
    assert data["conclusion"]["verdict"] == "inconclusive"
    assert "ε estimate" in data["conclusion"]["text"] or "epsilon part" in data["conclusion"]["text"]
    if command == "audit":
        assert is_internal_message(data["parts"]["epsilon"].split(": ", 1)[1])
    else:
        assert data["epsilon_estimate"]["internal"] is True and "traceback" not in data["epsilon_estimate"]


def test_a_part_that_raises_inside_dpaudit_is_dpaudits_failure(monkeypatch, tmp_path: Path) -> None:
    """A whole audit part (utility) breaking on a bug: the part failed as dpaudit's, the audit went on."""
    import dpaudit.audit.parts as parts

    _, data = _planted(monkeypatch, parts, "utility", "audit", ["--repeats", "1", "--attack", "yeom"],
                       tmp_path / "run")
    assert data["parts"]["utility"].startswith("failed: internal dpaudit error")
    assert data["parts"]["attacks"] == "ok" and data["parts"]["epsilon"] == "ok"
    assert data["internal_errors"][0]["where"] == "utility part"


def test_an_attack_that_could_not_run_makes_the_audit_exit_3(monkeypatch, tmp_path: Path) -> None:
    """The issue's report: an attack raising a stated reason in every repeat left the audit at exit 0."""
    import dpaudit.attacks.reconstruction as reconstruction

    def refuse(*args: object, **kwargs: object) -> None:
        raise InvalidInputError("differencing needs releases with the same number of centres")

    monkeypatch.setattr(reconstruction, "reconstruct", refuse)
    out = tmp_path / "run"
    code, output, data = _run("audit", ["--repeats", "1", "--attack", "yeom,reconstruction"], out)
    assert code == EXIT_INCOMPLETE, output
    assert data["conclusion"]["verdict"] == "inconclusive"
    assert "reconstruction failed in 1 repeat(s)" in data["conclusion"]["text"]
    assert "internal dpaudit error" not in data["conclusion"]["text"] and not data.get("internal_errors")
    assert not (out / "dpaudit-errors.log").exists()


def test_an_audit_conclusion_with_a_failed_attack_repeat_is_incomplete() -> None:
    """Whatever the verdict rows say, an attack that failed in some repeat is a part that did not run."""
    results = {"mechanism": {"claim": {"epsilon": 1.0, "neighbours": "add-remove"}},
               "confidence": {"per_test": 0.99, "certified_tests": 2},
               "verdict": "inconclusive", "parts": {"epsilon": "ok", "attacks": "ok"},
               "verdict_table": [{"part": "ε estimation", "statistic": "…", "value": 0.1, "claim": "ε = 1",
                                  "verdict": "no violation found"}],
               "attacks": [{"name": "lira", "status": "ok", "repeats_ok": 1, "repeats_failed": 1,
                            "errors": ["InvalidInputError: a record has no reference run"]}],
               "findings": []}
    conclusion = conclude(results)
    assert conclusion["incomplete"] is True and conclusion["verdict"] == "inconclusive"
    assert "lira failed in 1 repeat(s)" in conclusion["text"]


def test_a_bug_outside_every_part_is_one_line_saying_it_is_dpaudits_and_exits_3(monkeypatch, tmp_path: Path) -> None:
    # the report writer is dpaudit's own code and runs after every part: a bug there is no part's
    monkeypatch.setattr("dpaudit.commands.estimate._estimate", _boom)
    res = CliRunner().invoke(app, ["estimate-eps", "-m", PLUGIN, "--eps", "1", "--output", "centroids",
                                   "--releases", "1500", "--out", str(tmp_path / "o")])
    assert res.exit_code == EXIT_INCOMPLETE, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: internal dpaudit error (a bug in dpaudit, not in the "
                                                   "audited code): Boom: planted bug"), res.output
    assert "Traceback" not in res.output
    log = Path(lines[0].split("traceback written to ", 1)[1].split(" — ", 1)[0])
    assert "planted bug in an attack" in log.read_text() and "Traceback" in log.read_text()
    log.unlink()
