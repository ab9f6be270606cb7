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


def test_a_centroid_function_audited_as_points_is_one_error_line_naming_the_output(tmp_path: Path) -> None:
    """The first call's shape already tells: without --output a function returning one centre is a user
    mistake — one Error: line naming --output centroids, exit 2, and no report folder (issue: the first
    releases are not points)."""
    res = CliRunner().invoke(app, ["attack", "-m", CENTROIDS, "--eps", "1", "--records", "100", "--repeats", "2",
                                   "--releases", "2000", "--no-progress", "--out", str(tmp_path / "run")])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    assert "(1, 2)" in lines[0] and "--output centroids" in lines[0]
    assert "Traceback" not in res.output
    assert not (tmp_path / "run" / "report.md").exists()
