"""``benchmarks/bench_libraries.py``: the panel's catalogue, how a row is called, its page and a smoke run.

The fast tests check the catalogue (enough rows, a supervised one, every expected violation with a
reproduction script that exists, every plug-in where the row says) and the panel's rule — a row is a
VIOLATION only when dpaudit certifies one and its reproduction shows it — on a synthetic payload.  The
slow test builds (or reuses) OpenDP's environment from the registry and runs one row with ``--quick``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.libraries.catalogue import (
    DIFFPRIVLIB_FILE,
    ENVIRONMENTS,
    OPENDP_FILE,
    PIPELINEDP_FILE,
    PYDP_FILE,
    ROWS,
    SMALL_FILE,
)
from benchmarks.libraries.page import markdown, row_status
from benchmarks.libraries.upstream import FINDINGS, upstream_of

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "bench_libraries.py"


def test_the_catalogue_covers_seven_packages_a_supervised_estimator_and_reproduces_every_violation():
    assert len(ROWS) >= 35 and len({r.name for r in ROWS}) == len(ROWS) and not any("," in r.name for r in ROWS)
    assert {r.env for r in ROWS} == set(ENVIRONMENTS) == {"diffprivlib", "diffprivlib-fix", "diffprivlib-fix-latest",
                                                          "opendp", "python-dp", "pipeline-dp", "diffpriv-pure",
                                                          "diff-priv-laplace"}
    assert any(r.supervised for r in ROWS)
    for row in ROWS:
        assert row.expected in ("holds", "violated", "broken") and row.neighbours in ("add-remove", "replace")
        assert row.neighbours in row.options or row.neighbours == "add-remove"
        if row.expected == "violated":
            script = row.reproduction.split()[0] if row.reproduction else ""
            assert script and (REPO / script).is_file() and row.line, row.name
            assert "--patched" in (REPO / script).read_text(), f"{script} has no control"
        path, _, attr = row.spec.rpartition(":")
        if path.endswith(".py"):
            assert path in (DIFFPRIVLIB_FILE, OPENDP_FILE, PYDP_FILE, PIPELINEDP_FILE, SMALL_FILE)
            assert f"def {attr}(" in (REPO / path).read_text()


def test_every_finding_has_its_upstream_status_and_a_report_when_not_known_upstream():
    names = {r.name for r in ROWS}
    for row in ROWS:
        if row.expected in ("violated", "broken"):
            assert upstream_of(row.name) is not None, row.name
    for finding in FINDINGS:
        assert set(finding["rows"]) <= names and finding["searched"] and finding["short"]
        assert finding["status"].startswith(("known", "not found upstream", "cause partly known"))
        if not finding["status"].startswith("known"):
            assert finding["report"] and (REPO / finding["report"]).is_file(), finding["title"]


def test_plugins_have_the_shapes_the_rows_rely_on():
    text = (REPO / OPENDP_FILE).read_text()
    # OpenDP draws its own randomness: its plug-ins take no generator, which says so to dpaudit
    assert "def laplace_sum(X, epsilon):" in text and "rng" not in text.split("def laplace_sum")[1].split(":")[0]
    assert "def models_gaussian_nb(X, y, epsilon, rng):" in (REPO / DIFFPRIVLIB_FILE).read_text()


def _payload(verdict: str, bound: float | None, expected: str = "violated") -> dict:
    row = {"name": "r", "env": "diffprivlib", "expected": expected, "reproduction": "benchmarks/reproductions/x.py",
           "release": "a release", "neighbours": "replace", "why": "because", "supervised": None, "line": "l"}
    run = {"row": "r", "verdict": verdict, "epsilon_lower_bound": 2.0, "ceiling": 5.0, "wall_seconds": 61.0,
           "exit_code": 0, "command": "dpaudit estimate-eps …", "pair": {"name": "p", "records_D": 1,
                                                                        "records_D_prime": 2, "description": "d"},
           "event": "e", "counts": {}, "findings": [], "randomness": "the generator"}
    reps = [] if bound is None else [{"script": row["reproduction"], "env": "diffprivlib", "command": "python x.py",
                                      "wall_seconds": 3.0, "result": {"epsilon_lower_bound": bound, "fits": 10,
                                                                      "in_event_D": 9, "in_event_D_prime": 0}}]
    return {"meta": {"harness_command": "python benchmarks/bench_libraries.py", "commit": "abc", "cores": 2,
                     "machine": "x", "python": "3", "total_seconds": 60.0, "load_average_start": [1, 1, 1],
                     "load_average_end": [1, 1, 1], "environments": {}, "quick": False},
            "rows": [row], "runs": [run], "reproductions": reps}


@pytest.mark.parametrize("verdict,bound,panel", [
    ("violation", 5.0, "VIOLATION"), ("violation", 0.5, "flagged, not reproduced"),
    ("violation", None, "flagged, not reproduced"), ("no violation found", 5.0, "MISSED by dpaudit (reproduced)"),
    ("no violation found", None, "no violation found"), ("inconclusive", None, "inconclusive")])
def test_a_row_is_a_violation_only_when_its_reproduction_shows_it(verdict, bound, panel):
    payload = _payload(verdict, bound)
    assert row_status(payload["rows"][0], payload["runs"][0], payload["reproductions"])["panel"] == panel
    text = markdown(payload)
    assert text.startswith("# The DP libraries people ship") and panel in text
    assert ("**1 violation(s)**" in text) == (panel == "VIOLATION")


def test_a_row_over_its_budget_says_so_and_is_never_counted_as_no_violation():
    payload = _payload("no violation found", None, expected="holds")
    payload["runs"][0].update(wall_seconds=130.0, wall_budget=120.0)
    status = row_status(payload["rows"][0], payload["runs"][0], payload["reproductions"])
    assert status["panel"].startswith("over budget (130 s > 120 s)") and not status["as_expected"]
    assert "rows over their budget (shown, never counted as no violation): 1" in markdown(payload)


@pytest.mark.slow
def test_quick_run_of_one_opendp_row_writes_the_page_and_the_runs(tmp_path: Path) -> None:
    out = tmp_path / "libraries.md"
    cmd = [sys.executable, str(SCRIPT), "--quick", "--reuse-venvs", "--only", "opendp: count >> laplace",
           "--out", str(out)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert [r["row"] for r in data["runs"]] == ["opendp: count >> laplace"]
    run = data["runs"][0]
    assert run["verdict"] in ("no violation found", "violation") and run["randomness"].startswith("its own")
    assert data["meta"]["environments"]["opendp"]["versions"]["opendp"] == "0.16.0"
    assert "own-randomness" in out.read_text(encoding="utf-8")
    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr
