"""The examples of ``examples/executables/``, audited through the protocol for programs (``cmd:COMMAND``) as a user
audits them: a correct DP mean is not flagged, the broken one (far too little noise) is a VIOLATION — in C
(compiled here with the system's cc) and JavaScript (node) in the default run, R and Octave in the slow tier.

Each run is ``estimate-eps`` at a fixed number of releases (``--releases``: the same numbers on any machine) on
three candidate pairs, so the verdicts are the same everywhere; the broken variants' true ε is 10 (C) and 60
(JavaScript), far beyond what 8,000 releases need to certify ε > 1.  The slow tier's interpreters come from
Debian's packages (``apt-get install r-base-core r-cran-jsonlite octave``, docs/executables.md); a missing one
skips its test and says why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "executables"
RELEASES = "8000"


def audit(spec: str, out: Path) -> tuple[int, dict]:
    """``estimate-eps`` of the program ``spec`` under its claim (ε = 1, replace); exit code and results."""
    res = CliRunner().invoke(app, ["estimate-eps", "-m", spec, "--eps", "1", "--neighbours", "replace",
                                   "--releases", RELEASES, "--max-pairs", "3", "--fail-on-violation",
                                   "--no-progress", "--out", str(out)])
    assert "Traceback" not in res.output, res.output
    return res.exit_code, json.loads((out / "results.json").read_text())


def check_pair(correct: str, broken: str, tmp_path: Path) -> None:
    code, results = audit(correct, tmp_path / "correct")
    assert code == 0 and results["verdict"] == "no violation found", (code, results["conclusion"])
    assert results["mechanism"]["name"] == "dp_mean" and not results["findings"]
    assert results["search"]["screening"]["coupling"]["status"] == "holds"  # it seeds from the seed it is sent
    code, results = audit(broken, tmp_path / "broken")
    assert code == 1 and results["verdict"] == "violation" and results["epsilon_lower_bound"] > 1.5, code


def compiled(tmp_path: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc or gcc) on PATH")
    binary = tmp_path / "dp_mean"
    subprocess.run([cc, "-O2", "-o", str(binary), str(EXAMPLES / "dp_mean.c"), "-lm"], check=True)
    return binary


def test_c_dp_mean_correct_and_broken(tmp_path: Path) -> None:
    binary = compiled(tmp_path)
    check_pair(f"cmd:{binary}", f"cmd:{binary} --broken", tmp_path)


def interpreter(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (apt-get install {package}: docs/executables.md)")
    return found


def test_javascript_dp_mean_correct_and_broken(tmp_path: Path) -> None:
    node = interpreter("node", "nodejs")
    script = EXAMPLES / "dp_mean.js"
    check_pair(f"cmd:{node} {script}", f"cmd:{node} {script} --broken", tmp_path)


@pytest.mark.slow
def test_r_dp_mean_correct_and_broken(tmp_path: Path) -> None:
    rscript = interpreter("Rscript", "r-base-core r-cran-jsonlite")
    if subprocess.run([rscript, "-e", "library(jsonlite)"], capture_output=True).returncode != 0:
        pytest.skip("R's jsonlite is not installed (apt-get install r-cran-jsonlite: docs/executables.md)")
    script = EXAMPLES / "dp_mean.R"
    check_pair(f"cmd:{rscript} {script}", f"cmd:{rscript} {script} --broken", tmp_path)


@pytest.mark.slow
def test_octave_dp_mean_correct_and_broken(tmp_path: Path) -> None:
    octave = interpreter("octave-cli", "octave")
    script = EXAMPLES / "dp_mean.m"
    check_pair(f"cmd:{octave} --no-gui --quiet {script}", f"cmd:{octave} --no-gui --quiet {script} --broken",
               tmp_path)


def test_the_docs_clients_are_the_tested_examples() -> None:
    """Every client on docs/executables.md is an excerpt, line for line, of the example file the tests above audit:
    the page cannot drift from code that works."""
    import re

    page = (Path(__file__).resolve().parents[1] / "docs" / "executables.md").read_text(encoding="utf-8")
    files = {"c": "dp_mean.c", "javascript": "dp_mean.js", "r": "dp_mean.R", "octave": "dp_mean.m"}
    blocks = re.findall(r"```(c|javascript|r|octave)\n(.*?)```", page, re.S)
    assert sorted(language for language, _ in blocks) == sorted(files)
    for language, block in blocks:
        source = (EXAMPLES / files[language]).read_text(encoding="utf-8")
        assert block in source, f"the {language} client on docs/executables.md is not an excerpt of {files[language]}"
        assert 10 <= block.count("\n") <= 40
