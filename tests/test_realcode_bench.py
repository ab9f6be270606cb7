"""``benchmarks/bench_realcode.py``: the real-code corpus's catalogue, wrappers, reproductions, page and a smoke run.

The fast tests need no environment and no checkout: the catalogue is consistent (at least eight implementations,
every correct one with its three mutants, every row's wrapper function and reproduction where the row says, the
reproductions free of dpaudit), a patch is applied where it says and its line recorded, jobs shard without
overlap, a second copy's verdicts compare, and the page renders from the committed baseline JSON.  The R
environment kind refuses a machine without R or its Debian packages, naming the apt-get line, and its rows'
programs are told where the library is.  Where R and the benchmark's diffpriv library are present (built by
``bench_realcode.py --only diffpriv-r``), the R program answers the handshake and seeded requests, and the R
reproductions run on a few hundred fits; they are skipped, saying why, elsewhere.  The slow test builds (or
reuses) diffprivlib's environment from the registry and runs one row with ``--quick``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchmarks.bench_realcode import as_run, jobs_of, parse_seeds, twin_command
from benchmarks.realcode import r_environment
from benchmarks.realcode.catalogue import (
    ENVIRONMENTS,
    MUTANTS,
    PROGRAM_FILES,
    R_ENVIRONMENTS,
    ROWS,
    WRAPPER_FILES,
    Mutant,
    Patch,
    select_rows,
)
from benchmarks.realcode.environments import apply_patch
from benchmarks.realcode.page import compare_twins, markdown, run_status

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "bench_realcode.py"
BASELINE = REPO / "benchmarks" / "results" / "realcode-before.json"


def _functions(path: str) -> set[str]:
    return {n.name for n in ast.parse((REPO / path).read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}


def _r_plugins(path: str) -> set[str]:
    """The functions an R program serves: named in its PLUGINS list and defined at its top level."""
    text = (REPO / path).read_text(encoding="utf-8")
    listed = re.search(r"^PLUGINS <- list\((.*?)\)$", text, re.M | re.S)
    assert listed, path
    named = set(re.findall(r"(\w+) = \"(?:vector|centroids|points|labels)\"", listed.group(1)))
    return {n for n in named if re.search(rf"^{n} <- function\(", text, re.M)}


def test_the_corpus_has_eight_implementations_and_every_correct_one_its_three_mutants():
    implementations = [r for r in ROWS if r.kind in ("correct", "broken")]
    assert len(implementations) >= 8 and len({r.name for r in ROWS}) == len(ROWS) and not any("," in r.name for r in ROWS)
    assert {r.kind for r in ROWS} == {"correct", "broken", "mutant"}
    assert any(r.env == "google-dp" and r.kind == "correct" for r in ROWS)
    for row in (r for r in ROWS if r.kind == "correct"):
        mutants = [r.name for r in ROWS if r.kind == "mutant" and r.name.startswith(row.name)]
        assert len(mutants) == 3 and any("10·ε" in m for m in mutants), row.name
        assert any("noise scale" in m or "bounds from the data" in m for m in mutants), row.name
        assert any("branch" in m for m in mutants), row.name
    for row in ROWS:
        assert row.expected == ("holds" if row.kind == "correct" else "violated"), row.name
        assert row.env in ENVIRONMENTS or row.env in MUTANTS or row.env in R_ENVIRONMENTS, row.name
        assert row.neighbours in ("add-remove", "replace") and ("--neighbours" in row.options) == (row.neighbours
                                                                                                  == "replace")


def test_every_wrapper_parses_and_names_the_function_its_rows_run():
    for path in (*WRAPPER_FILES, *PROGRAM_FILES):
        assert (REPO / path).is_file(), path
    for row in ROWS:
        if row.spec.startswith("cmd:"):  # a program: cmd:Rscript <file> <function>
            interpreter, path, fn = row.spec.removeprefix("cmd:").split()
            assert interpreter == "Rscript" and row.env in R_ENVIRONMENTS, row.spec
            assert path in PROGRAM_FILES and fn in _r_plugins(path), row.spec
            continue
        path, _, fn = row.spec.rpartition(":")
        assert path in WRAPPER_FILES and fn in _functions(path), row.spec


def _r_packages(text: str) -> set[str]:
    """The R packages an R script loads or calls into."""
    calls = re.findall(r"(?:library|require|requireNamespace)\(\"?(\w+)", text)
    return set(calls) | set(re.findall(r"\b(\w+):::?\w", text))


def test_every_reproduction_exists_imports_no_dpaudit_and_prints_its_bound():
    for row in ROWS:
        script = REPO / row.reproduction.split()[0]
        if script.suffix == ".R":  # R and diffpriv only (jsonlite writes the JSON), through the R wrappers
            text = script.read_text(encoding="utf-8") + (script.parent / "one_pair.R").read_text(encoding="utf-8")
            assert _r_packages(text) <= {"diffpriv", "jsonlite", "utils"}, (script, _r_packages(text))
            assert "dpaudit" not in text.replace("dpaudit's", "") and "wrappers()" in text, script
            if "--case" in row.reproduction:
                assert f'"{row.reproduction.split("--case")[1].split()[0]}"' in text, row.reproduction
            assert row.line or row.kind == "correct", row.name
            continue
        tree = ast.parse(script.read_text(encoding="utf-8"))
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not imported & {"dpaudit", "attacks", "mechanisms", "execution", "benchmarks"}, script
        if "--case" in row.reproduction:
            assert row.reproduction.split("--case")[1].split()[0] in script.read_text(encoding="utf-8")
        if row.kind != "correct" and row.env not in MUTANTS:
            assert row.line, row.name  # the line that leaks, stated (a mutant's is found when it is patched)
    for name in ("one_pair.py", "one_pair.R"):
        helper = (REPO / "benchmarks/realcode/reproductions" / name).read_text(encoding="utf-8")
        assert "epsilon >= ln((p_lo - delta)/q_hi)" in helper and "the line:" in helper, name


def test_sources_are_pinned_and_mutants_patch_a_copy_of_their_base():
    for env in ENVIRONMENTS.values():
        assert all("==" in r for r in env.requirements), env.key
        if env.source:
            assert len(env.source.commit) == 40 and env.source.files, env.key
    for mutant in MUTANTS.values():
        assert mutant.key.startswith(mutant.base + "+") and mutant.base in ENVIRONMENTS
        assert mutant.patch.old != mutant.patch.new and mutant.copies and mutant.patch.file.endswith(".py")
    for r_env in R_ENVIRONMENTS.values():
        assert r_env.key not in ENVIRONMENTS and len(r_env.source.commit) == 40 and "DESCRIPTION" in r_env.source.files
        assert r_env.apt_get.startswith("apt-get install r-base-core ") and all(
            debian == f"r-cran-{name}" for name, debian in r_env.depends), r_env.key


def test_an_r_environment_without_r_or_its_debian_packages_is_refused_with_the_apt_get_line(monkeypatch):
    env = R_ENVIRONMENTS["diffpriv-r"]
    monkeypatch.setattr(r_environment.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="apt-get install r-base-core r-cran-gsl r-cran-jsonlite"):
        r_environment.check_r(env)
    monkeypatch.setattr(r_environment.shutil, "which", lambda name: f"/usr/bin/{name}")
    missing = subprocess.CompletedProcess(["Rscript"], 0, stdout="gsl", stderr="")
    monkeypatch.setattr(r_environment, "_r", lambda code, library=None, timeout=120.0: missing)
    with pytest.raises(SystemExit, match=r"gsl from Debian \(r-cran-gsl\).*apt-get install r-base-core"):
        r_environment.check_r(env)


def test_a_program_row_is_told_its_r_library_and_a_python_row_is_left_as_it_is():
    r_row = next(r for r in ROWS if r.env in R_ENVIRONMENTS)
    run = as_run(r_row, {"python": None, "library": "benchmarks/.venvs/realcode/diffpriv-r/library"})
    assert run.spec == f"{r_row.spec} --library benchmarks/.venvs/realcode/diffpriv-r/library"
    assert run.name == r_row.name
    assert as_run(ROWS[0], {"python": "x/bin/python"}) is ROWS[0]


def test_a_patch_changes_its_copy_once_and_records_the_line(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("a = 1\nnoise = draw(scale=s)\n", encoding="utf-8")
    mutant = Mutant("x+y", "x", "src", Patch("pkg/m.py", "draw(scale=s)", "draw(scale=s * data.max())"), "w")
    patched = apply_patch(mutant, tmp_path)
    assert patched["where"] == "pkg/m.py:2" and "data.max()" in (tmp_path / "pkg" / "m.py").read_text()
    with pytest.raises(SystemExit):
        apply_patch(mutant, tmp_path)  # the old text is gone: another version of the code is refused


def test_rows_are_selected_by_name_environment_and_kind_and_jobs_shard_without_overlap():
    assert {r.env for r in select_rows("google-dp")} == {"google-dp", "google-dp+noise-scale", "google-dp+branch"}
    assert all(r.kind == "correct" for r in select_rows("", "correct"))
    with pytest.raises(SystemExit):
        select_rows("no such row")
    rows = list(ROWS[:5])
    seeds = parse_seeds("3")
    assert seeds == [0, 1, 2] and parse_seeds("0,4") == [0, 4]
    halves = [jobs_of(rows, seeds, "1/2"), jobs_of(rows, seeds, "2/2")]
    assert sorted(map(id, (j[0] for h in halves for j in h))) == sorted(map(id, (j[0] for j in jobs_of(rows, seeds,
                                                                                                          None))))
    assert not {(r.name, s) for r, s in halves[0]} & {(r.name, s) for r, s in halves[1]}
    twin = twin_command(["--only", "x", "--pair-load", "--out", "a.md"], Path("b.md"))
    assert "--pair-load" not in twin and twin[-3:] == ["--out", "b.md", "--force"] and "a.md" not in twin


PROGRAM = "benchmarks/realcode/diffpriv_plugins.R"
R_REPRODUCTIONS = REPO / "benchmarks" / "realcode" / "reproductions"
R_SETUP = "apt-get install r-base-core r-cran-gsl r-cran-jsonlite"


def _r_library() -> list[str]:
    """``--library`` for the benchmark's diffpriv (its cache), or none for a diffpriv R finds itself; skipped when R,
    jsonlite or diffpriv is missing."""
    if shutil.which("Rscript") is None:
        pytest.skip(f"R is not installed ({R_SETUP})")
    cache = REPO / "benchmarks" / ".venvs" / "realcode" / "diffpriv-r" / "library"
    library = ["--library", str(cache)] if (cache / "diffpriv").is_dir() else []
    probe = subprocess.run(["Rscript", "-e", f".libPaths(c({json.dumps(str(cache))}, .libPaths())); "
                            'for (p in c("jsonlite", "diffpriv")) if (!requireNamespace(p, quietly = TRUE)) stop(p)'],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("R's jsonlite or diffpriv is missing (jsonlite: " + R_SETUP + "; diffpriv: python "
                    "benchmarks/bench_realcode.py --sources DIR --only diffpriv-r builds it from a checkout)")
    return library


def _ask(fn: str, library: list[str], *requests: dict) -> list[dict]:
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.run(["Rscript", PROGRAM, fn, *library], input=lines, capture_output=True, text=True, timeout=60,
                          cwd=REPO, env={**os.environ, "LANG": "C.UTF-8"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _request(seeds: list[int], data: list[list[float]]) -> dict:
    return {"op": "release", "epsilon": 1.0, "count": len(seeds), "seeds": seeds, "n": len(data), "d": 2, "params": {},
            "data": data}


def test_the_r_program_answers_its_handshake_and_seeded_requests():
    library = _r_library()
    data = [[1.0, 1.0], [0.9, 1.0], [5.0, 5.0]]  # clipped to [-1, 1]²: every record in the (1, 1) candidate's cell
    hello, reply, empty = _ask("laplace_mean", library, _request([7, 8, 7], data), _request([1, 2], []))
    assert hello == {"protocol": "dpaudit/1", "output": "vector", "name": "diffpriv laplace_mean"}
    first, second, again = reply["releases"]
    assert len(first) == 2 and first == again and first != second  # release i is what its seed makes it
    assert len(empty["releases"]) == 2
    hello, reply, empty = _ask("exponential_centre", library, _request(list(range(40)), data), _request([1, 2], []))
    assert hello["output"] == "centroids"
    # no exp: a candidate whose cell is empty has probability 0, so the one non-empty cell's centre, every time
    assert reply["releases"] == [[[1.0, 1.0]]] * 40
    assert [r["error"] for r in empty["releases"]] == ["NA in probability vector"] * 2  # 0/0: sample() refuses


def _reproduce(script: str, library: list[str], tmp_path: Path, *args: str, fits: int = 400) -> dict:
    out = tmp_path / (Path(script).stem + "-".join(args) + ".json")
    proc = subprocess.run(["Rscript", str(R_REPRODUCTIONS / script), *args, *library, "--fits", str(fits), "--json",
                           str(out)], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "epsilon >= ln((p_lo - delta)/q_hi)" in proc.stdout
    result: dict = json.loads(out.read_text(encoding="utf-8"))
    return result


def test_the_r_reproductions_show_the_exponential_bug_and_a_laplace_bound_below_its_claim(tmp_path: Path):
    library = _r_library()
    broken = _reproduce("reproduce_diffpriv_exponential.R", library, tmp_path)
    assert broken["in_event_D"] == 0 and broken["in_event_D_prime"] > 0 and broken["epsilon_lower_bound"] > 1
    assert "exponential_mechanism.R" in broken["line"] and broken["line_text"].startswith("pmf <- qualities")
    # the finding's patch (exp): the candidate is chosen on D too (rate e^0 / (e^5 + 8) ≈ 0.0064: ~13 of 2,000)
    patched = _reproduce("reproduce_diffpriv_exponential.R", library, tmp_path, "--patched", fits=2000)
    assert patched["in_event_D"] > 0 and patched["epsilon_lower_bound"] < 1
    assert _reproduce("reproduce_diffpriv_mean.R", library, tmp_path, "--case", "claim")["epsilon_lower_bound"] < 1
    at_ten = _reproduce("reproduce_diffpriv_mean.R", library, tmp_path, "--case", "ten-epsilon")
    assert at_ten["epsilon_lower_bound"] > 1


def _run(row: str, seed: int, verdict: str | None, code: int = 0) -> dict:
    return {"row": row, "seed": seed, "verdict": verdict, "exit_code": code, "wall_seconds": 50.0, "wall_budget": 120.0,
            "epsilon_lower_bound": 2.0, "command": "dpaudit estimate-eps …", "pair": {}, "findings": []}


def test_a_correct_row_flagged_is_a_false_alarm_and_twins_compare_by_verdict_class():
    row = {"name": "r", "env": "e", "expected": "holds", "reproduction": "x.py"}
    assert not run_status(row, _run("r", 0, "violation"), [])["as_expected"]
    assert run_status(row, _run("r", 0, "no violation found"), [])["as_expected"]
    over = _run("r", 0, "no violation found") | {"wall_seconds": 130.0}
    assert not run_status(row, over, [])["as_expected"]
    a = {"runs": [_run("r", 0, "violation"), _run("r", 1, None, 2)]}
    b = {"runs": [_run("r", 0, "violation"), _run("r", 1, "inconclusive", 3)]}
    twins = compare_twins(a, b)
    assert (twins["same"], twins["total"]) == (1, 2) and "**no**" in twins["text"]


def test_the_committed_baseline_renders_with_every_row_and_command():
    payload = json.loads(BASELINE.read_text(encoding="utf-8"))
    text = markdown(payload)
    assert text.startswith("# Real DP code, audited as a user audits it")
    assert all(row["name"] in text for row in payload["rows"]) and len(payload["runs"]) >= len(payload["rows"])
    assert all(run["command"].startswith("dpaudit estimate-eps -m ") and "--seed" in run["command"]
               for run in payload["runs"])
    committed = BASELINE.read_text(encoding="utf-8")
    assert str(REPO) not in committed and tempfile.gettempdir() + "/" not in committed  # no machine paths
    for env in payload["meta"]["environments"].values():
        assert env["versions"] and (env.get("source") is None or len(env["source"]["commit"]) == 40)


@pytest.mark.parametrize("page, kinds", [("realcode.json", {"broken", "mutant"}), ("realcode-correct.json", {"correct"})])
def test_the_committed_pages_carry_the_r_rows_beside_the_python_ones(page: str, kinds: set[str]):
    payload = json.loads((REPO / "benchmarks" / "results" / page).read_text(encoding="utf-8"))
    r_rows = [r for r in payload["rows"] if r["env"] in R_ENVIRONMENTS]
    assert {r["kind"] for r in r_rows} == kinds and len(r_rows) < len(payload["rows"])  # beside the Python rows
    env = payload["meta"]["environments"]["diffpriv-r"]
    assert env["python"] is None and env["interpreter"] == "Rscript" and env["library"].startswith("benchmarks/")
    assert {"R", "diffpriv", "jsonlite", "gsl"} <= set(env["versions"])
    assert env["source"]["commit"] == R_ENVIRONMENTS["diffpriv-r"].source.commit
    assert len(payload["status"]) == len(payload["runs"])
    for row in r_rows:
        runs = [run for run in payload["runs"] if run["row"] == row["name"]]
        assert len(runs) >= 3 and all(run["command"].startswith("dpaudit estimate-eps -m 'cmd:Rscript ")
                                      and "--library benchmarks/" in run["command"] for run in runs), row["name"]
        assert any(rep["script"] == row["reproduction"] and rep["result"] for rep in payload["reproductions"])
    text = markdown(payload)
    assert all(row["name"] in text for row in r_rows) and "R 4." in text


@pytest.mark.slow
def test_quick_run_of_one_row_writes_the_page_and_the_runs(tmp_path: Path) -> None:
    out = tmp_path / "realcode.md"
    cmd = [sys.executable, str(SCRIPT), "--quick", "--reuse-venvs", "--seeds", "1", "--only",
           "diffprivlib tools.mean", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert [(r["row"], r["seed"]) for r in data["runs"]] == [("diffprivlib tools.mean", 0)]
    assert data["runs"][0]["verdict"] in ("no violation found", "violation", "inconclusive")
    assert data["meta"]["environments"]["diffprivlib"]["versions"]["diffprivlib"] == "0.6.6"
    assert data["reproductions"][0]["result"]["fits"] == 100 and data["meta"]["complete"]
    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr
