"""``benchmarks/bench_thirdparty.py`` in ``--quick`` mode: the harness runs and its page has the promised shape.

Slow tier only: it builds (or reuses) the third party's virtual environment under
``benchmarks/.venvs/thirdparty/`` with ``pip install numpy diffprivlib==0.6.6 "scikit-learn<1.8"``
(the registry must be reachable the first time), then audits one correct and one buggy function
through the ``dpaudit`` command line in that interpreter.  The verdicts are not checked: they depend
on the estimator, which the full benchmark measures; this test checks the table's structure, the JSON
beside it, the commands it shows and that it refuses to overwrite without ``--force``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "bench_thirdparty.py"
FUNCTIONS = ("dplloyd_correct", "dplloyd_empty_skip")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=900)


def _table(text: str, header_start: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table whose header starts with ``header_start``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])])  # "\|" is a cell's own
    return rows


@pytest.mark.slow
def test_quick_run_writes_the_page_and_the_runs(tmp_path: Path) -> None:
    out = tmp_path / "thirdparty.md"
    proc = _run("--quick", "--only", ",".join(FUNCTIONS), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))

    assert text.startswith("# Third-party DP k-means functions audited at defaults")
    assert "python benchmarks/bench_thirdparty.py --quick --only" in text
    assert "dpaudit commit " in text and "logical cores" in text
    assert "diffprivlib 0.6.6" in text

    summary = _table(text, "| function | correct? |")
    header, rule, body = summary[0], summary[1], summary[2:]
    assert len(rule) == len(header) and all(set(c) <= set("-:") for c in rule)
    assert [row[0] for row in body] == [f"`{n}`" for n in FUNCTIONS]
    assert all(len(row) == len(header) for row in body)
    col = {name: i for i, name in enumerate(header)}
    assert [row[col["correct?"]] for row in body] == ["correct", "buggy"]
    for row in body:
        assert row[col["verdict (seed 0)"]].strip("*").lower() in ("violation", "no violation found", "inconclusive")
        float(row[col["ε_lb (seed 0)"]])
        float(row[col["wall s (seed 0)"]])
        assert row[col["VIOLATION / seeds"]].endswith("/ 1")
        assert row[col["meets the goal"]].strip("*") in ("yes", "no")

    runs = _table(text, "| function | seed |")
    head = runs[0]
    assert head[-1] == "command" and len(runs) == 2 + len(FUNCTIONS)
    for row, name in zip(runs[2:], FUNCTIONS):
        command = row[-1].strip("`")
        assert command.startswith(f"dpaudit estimate-eps -m benchmarks/thirdparty/functions.py:{name} --eps 1 "
                                  "--output centroids --python benchmarks/.venvs/thirdparty/bin/python")
        assert "--samples 200" in command and "--json $SCRATCH/" in command
    assert str(tmp_path) not in text and str(REPO) not in text  # no machine paths on the page

    witnesses = _table(text, "| function | D | D′ |")
    assert [row[0] for row in witnesses[2:]] == ["`dplloyd_empty_skip`"]  # buggy functions only
    w = witnesses[2]
    assert w[4].endswith("/200") and w[5].endswith("/200") and float(w[6]) >= 0
    assert "## Notes" in text and "lines 243–244" in text

    assert data["meta"]["cores"] >= 1 and data["meta"]["venv"]["diffprivlib"] == "0.6.6"
    assert [x["function"] for x in data["witnesses"]] == ["dplloyd_empty_skip"]
    assert [r["function"] for r in data["runs"]] == list(FUNCTIONS)
    for run in data["runs"]:
        assert run["exit_code"] in (0, 1, 3) and run["error"] is None
        assert run["verdict"] in ("violation", "no violation found", "inconclusive")
        assert isinstance(run["epsilon_lower_bound"], float) and run["wall_seconds"] > 0
        assert run["pair"]["name"] and run["event"]
    assert set(data["goals"]) == set(FUNCTIONS)

    again = _run("--quick", "--only", FUNCTIONS[0], "--out", str(out))  # refuses before it runs anything
    assert again.returncode == 2 and "--force" in again.stderr
    assert out.read_text(encoding="utf-8") == text

    rendered = tmp_path / "again.md"  # the page again from its JSON, no dpaudit run
    proc = _run("--from-json", str(out.with_suffix(".json")), "--out", str(rendered))
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in rendered.read_text(encoding="utf-8").splitlines() if line and "re-rendered" not in line]
    assert lines == [line for line in text.splitlines() if line]


@pytest.mark.slow
def test_the_functions_run_on_tiny_and_empty_data_in_the_third_party_interpreter() -> None:
    """Every function of the file returns k finite centres (the diffprivlib ones and ``their_kmeans``
    refuse fewer records than clusters, as their libraries do); the correct ones take an empty dataset."""
    python = REPO / "benchmarks" / ".venvs" / "thirdparty" / "bin" / "python"
    if not python.exists():
        pytest.skip("the third party's environment is built by the test above (run it first)")
    probe = r"""
import importlib.util, json, warnings
import numpy as np
spec = importlib.util.spec_from_file_location("f", "benchmarks/thirdparty/functions.py")
f = importlib.util.module_from_spec(spec); spec.loader.exec_module(f)
warnings.simplefilter("ignore")
out = {}
X = np.random.default_rng(0).normal(size=(30, 2))
for name in ["their_kmeans_honest", "dplloyd_correct", "diffprivlib_kmeans_bounded", "diffprivlib_kmeans_unbounded",
             "their_kmeans", "dplloyd_empty_skip", "dplloyd_unclipped", "kmeans_noisy_centres_over_n"]:
    fn = getattr(f, name)
    a = fn(X, 1.0, np.random.default_rng(1)); b = fn(X, 1.0, np.random.default_rng(1))
    try:
        empty = list(fn(np.zeros((0, 2)), 1.0, np.random.default_rng(1)).shape)
    except Exception as exc:
        empty = type(exc).__name__
    out[name] = [list(a.shape), bool(np.all(np.isfinite(a))), bool(np.array_equal(a, b)), empty]
print(json.dumps(out))
"""
    proc = subprocess.run([str(python), "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, (shape, finite, same, _empty) in got.items():
        k = 4 if name.startswith("their_") else 2
        assert shape == [k, 2] and finite and same, name
    assert got["dplloyd_correct"][3] == [2, 2] and got["their_kmeans_honest"][3] == [4, 2]
