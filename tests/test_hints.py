"""A hint for every failure that has one: the option that addresses it, on stderr and in the report."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app
from dpaudit.hints import hints

CENTROIDS = (Path(__file__).parent / "plugins" / "endings.py").as_posix() + ":passing"


def _finding(kind: str, error: str) -> dict:
    return {"kind": kind, "part": "release calls", "count": 3, "calls": 3, "error": error, "blocking": True}


@pytest.mark.parametrize("finding, words", [
    (_finding("wrong-shape", "returned shape (1, 2); a points release must have the input's shape (30, 2)"),
     "pass --output centroids"),
    (_finding("timeout", "no answer within 60 s"), "raise --timeout"),
    (_finding("crash", "ran out of memory: MemoryError"), "--memory-limit"),
    (_finding("nondeterministic", "different release"), "draw every random number from the rng"),
    (_finding("raises", 'ValueError: "needs bounds"'), "--bounds LO,HI"),
])
def test_each_finding_kind_has_its_hint(finding: dict, words: str) -> None:
    assert any(words in h for h in hints({"findings": [finding]})), hints({"findings": [finding]})


def test_other_failures_have_theirs() -> None:
    assert any("pip install 'dpaudit[diffprivlib]'" in h
               for h in hints({"parts": {"utility": "skipped: No module named 'diffprivlib'"}}))
    assert any("--time-budget" in h for h in hints({"epsilon_estimate": {"counts": {"looks": {"stopped": "deadline"}}}}))
    assert any("--resume" in h for h in hints({"status": "interrupted", "sweep": {"cells_done": 1}}))
    assert hints({"findings": []}) == []


def test_a_centroid_function_audited_as_points_gets_one_line_per_error_and_the_hint(tmp_path: Path) -> None:
    """The issue's case: without --output, exit 3 and 60 lines of one repeated error, no hint."""
    res = CliRunner().invoke(app, ["attack", "-m", CENTROIDS, "--eps", "1", "--records", "100", "--repeats", "2",
                                   "--releases", "2000", "--no-progress", "--out", str(tmp_path / "run")])
    assert res.exit_code == 3, res.output
    lines = res.stderr.splitlines()
    assert sum(line.startswith("finding [incomplete]") for line in lines) == 1, lines
    hint = [line for line in lines if line.startswith("hint: ")]
    assert len(hint) == 1 and "returned a (1, 2) array" in hint[0] and "pass --output centroids" in hint[0]
    md = (tmp_path / "run" / "report.md").read_text()
    assert "Hint: the code returned a (1, 2) array" in md
