"""A newcomer's plug-in and data mistakes: each is one ``Error:`` line on stderr, exit 2, checked before
anything runs (no report folder), naming what to do — the accepted forms of a plug-in, the closest name
("did you mean"), that a file is not a CSV — and no source location inside dpaudit.

A plug-in whose code raises once it is called is not a mistake of this kind: that is the audited code's
behaviour, a finding (the last test).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

runner = CliRunner()

PLUGIN = '''import numpy as np

K = 4


def good(X, epsilon, rng):
    return X + rng.laplace(scale=1 / epsilon, size=X.shape)


def own(X, epsilon):
    return X


def one_arg(X):
    return X


def no_epsilon(X, rng):
    return X + rng.laplace(size=X.shape)


def swapped(X, rng, epsilon):
    return X + rng.laplace(scale=1 / epsilon, size=X.shape)


def no_args():
    return 0


def extra_required(X, epsilon, rng, scale):
    return X


def keyword_required(X, epsilon, rng, *, scale):
    return X


def boom(X, epsilon, rng):
    raise RuntimeError("inside the plug-in")


class NoRelease:
    pass


class BadRelease:
    def __init__(self, epsilon=1.0):
        from dpaudit import PrivacyClaim
        self.claim = PrivacyClaim(epsilon, 0.0, "add-remove")

    def release(self, X):
        return X


class BadFit:
    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon

    def fit(self):
        return self
'''

FILES = {
    "plug.py": PLUGIN,
    "syntax.py": "def fn(X, epsilon, rng)\n    return X\n",
    "raises_at_import.py": "raise RuntimeError('no licence key')\n\ndef fn(X, epsilon, rng):\n    return X\n",
    "imports_missing.py": "import no_such_package_xyz\n\ndef fn(X, epsilon, rng):\n    return X\n",
    "data.json": '[{"a": 1, "b": 2}, {"a": 3, "b": 4}]\n',
    "object.json": '{"records": [[1, 2], [3, 4]]}\n',
    "book.xlsx": "PK\x03\x04 not really a workbook",
    "blob.csv": "a,b\n1,2\x00\x00\x01\n",
    "empty.csv": "",
    "semicolon.csv": "a;b\n1;2\n3;4\n5;6\n",
    "text.csv": "a,b\n1,x\n2,y\n3,z\n",
    "good.csv": "a,b\n" + "".join(f"{i % 7},{i % 5}\n" for i in range(40)),
}

RUN = ["estimate-eps", "--eps", "1", "--releases", "2000", "-q"]
FORMS = "fn(X, epsilon, rng)"

# (id, arguments after RUN, words the one line must hold)
CASES: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("function-one-argument", ["-m", "{d}/plug.py:one_arg"], ("one_arg(X)", FORMS)),
    ("function-without-epsilon", ["-m", "{d}/plug.py:no_epsilon"], ("no_epsilon(X, rng)", "takes no epsilon", FORMS)),
    ("function-epsilon-and-rng-swapped", ["-m", "{d}/plug.py:swapped"], ("swapped(X, rng, epsilon)", "swapped", FORMS)),
    ("function-no-arguments", ["-m", "{d}/plug.py:no_args"], ("no_args()", FORMS)),
    ("function-extra-required", ["-m", "{d}/plug.py:extra_required"], ("scale", FORMS)),
    ("function-keyword-required", ["-m", "{d}/plug.py:keyword_required"], ("scale", FORMS)),
    ("function-misspelt", ["-m", "{d}/plug.py:godo"], ("did you mean", "'good'")),
    ("function-misspelt-case", ["-m", "{d}/plug.py:Good"], ("did you mean", "'good'")),
    ("class-misspelt", ["-m", "{d}/plug.py:BadRelaese"], ("did you mean", "'BadRelease'")),
    ("name-nowhere-near", ["-m", "{d}/plug.py:zzzzzz"], ("has no attribute 'zzzzzz'", "good")),
    ("not-callable", ["-m", "{d}/plug.py:K"], ("not a plug-in", FORMS)),
    ("class-without-release-or-fit", ["-m", "{d}/plug.py:NoRelease"], ("neither release() nor fit()",)),
    ("release-wrong-signature", ["-m", "{d}/plug.py:BadRelease"], ("release", "(X, rng)")),
    ("fit-wrong-signature", ["-m", "{d}/plug.py:BadFit", "--output", "centroids"], ("fit", "(X)")),
    ("plugin-file-missing", ["-m", "{d}/nosuch.py:good"], ("not found", "nosuch.py")),
    ("plugin-file-is-a-directory", ["-m", "{d}/adir:good"], ("directory",)),
    ("plugin-syntax-error", ["-m", "{d}/syntax.py:fn"], ("syntax error", "line 1")),
    ("plugin-raises-at-import", ["-m", "{d}/raises_at_import.py:fn"], ("no licence key",)),
    ("plugin-imports-missing-package", ["-m", "{d}/imports_missing.py:fn"], ("no_such_package_xyz",)),
    ("module-not-importable", ["-m", "no_such_package_xyz.mod:fn"], ("no_such_package_xyz",)),
    ("registered-name-misspelt", ["-m", "ndlaplase"], ("Did you mean", "ndlaplace")),
    ("bad-output", ["-m", "{d}/plug.py:good", "--output", "pointz"], ("output", "points")),
    ("data-json-array", ["-m", "{d}/plug.py:good", "--data", "{d}/data.json"], ("not a CSV file", "JSON")),
    ("data-json-object", ["-m", "{d}/plug.py:good", "--data", "{d}/object.json"], ("not a CSV file", "JSON")),
    ("data-spreadsheet", ["-m", "{d}/plug.py:good", "--data", "{d}/book.xlsx"], ("not a CSV file", "xlsx")),
    ("data-binary", ["-m", "{d}/plug.py:good", "--data", "{d}/blob.csv"], ("not a CSV file", "binary")),
    ("data-missing", ["-m", "{d}/plug.py:good", "--data", "{d}/missing.csv"], ("not found",)),
    ("data-directory", ["-m", "{d}/plug.py:good", "--data", "{d}/adir"], ("directory",)),
    ("data-empty", ["-m", "{d}/plug.py:good", "--data", "{d}/empty.csv"], ("empty.csv",)),
    ("data-semicolons", ["-m", "{d}/plug.py:good", "--data", "{d}/semicolon.csv"], ("comma",)),
    ("data-text-column", ["-m", "{d}/plug.py:good", "--data", "{d}/text.csv"], ("non-numeric",)),
    ("data-label-column-missing", ["-m", "{d}/plug.py:good", "--data", "{d}/good.csv", "--label-column", "y"],
     ("label column",)),
    ("data-and-dataset", ["-m", "{d}/plug.py:good", "--data", "{d}/good.csv", "--dataset", "blobs-2d"],
     ("either --dataset or --data",)),
]

# A source location inside dpaudit or the interpreter: never on a user's error line (dpaudit --debug shows them).
INTERNAL = re.compile(r"\(at (<frozen|[A-Za-z_]*(registry|spec_loading|plugin_forms|_worker_\w+|worker|lanes)\.py)")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("mistakes")
    for name, text in FILES.items():
        (d / name).write_text(text)
    (d / "adir").mkdir()
    return d


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("args, words", [pytest.param(a, w, id=i) for i, a, w in CASES])
def test_a_mistake_is_one_line_and_exit_2(files: Path, tmp_path: Path, args: list[str], words: tuple[str, ...]
                                          ) -> None:
    out = tmp_path / "report"
    result = runner.invoke(app, [*RUN, *(a.replace("{d}", str(files)) for a in args), "--out", str(out)])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert not INTERNAL.search(lines[0]), lines[0]
    assert "Traceback" not in result.output
    assert not out.exists(), "a mistake writes no report folder"


@pytest.mark.parametrize("command", [["attack", "-r", "1"], ["audit", "--attack", "yeom", "-r", "1"],
                                     ["sweep", "-r", "1", "--clusterers", "none"], ["estimate-eps"]],
                         ids=lambda c: c[0])
@pytest.mark.parametrize("function", ["one_arg", "no_epsilon", "swapped"])
def test_a_wrong_signature_stops_every_command_before_it_runs(files: Path, tmp_path: Path, command: list[str],
                                                              function: str) -> None:
    out = tmp_path / "report"
    result = runner.invoke(app, [*command, "-m", f"{files}/plug.py:{function}", "--eps", "1", "-q", "--out", str(out)])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and FORMS in lines[0], result.output
    assert not out.exists()


def test_debug_shows_where_inside_dpaudit(files: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["--debug", *RUN, "-m", f"{files}/plug.py:godo", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "(at spec_loading.py:" in result.stderr


def test_code_that_raises_when_called_is_a_finding_not_a_form_error(files: Path, tmp_path: Path) -> None:
    """The probe is a signature bind, not a call: a function of the right form whose body raises runs the audit,
    which says the code raised (with the plug-in's own line), and exits 3."""
    result = runner.invoke(app, [*RUN, "-m", f"{files}/plug.py:boom", "--out", str(tmp_path / "r")])
    assert result.exit_code == 3, result.output
    assert "INCONCLUSIVE" in result.stdout
    assert "inside the plug-in (at plug.py:" in result.output
    assert not INTERNAL.search(result.output)


@pytest.mark.parametrize("command", [["attack", "-r", "1", "--attack", "yeom"], ["audit", "--attack", "yeom", "-r", "1"],
                                     ["estimate-eps"]], ids=lambda c: c[0])
def test_an_unstated_output_of_another_shape_is_a_mistake(files: Path, tmp_path: Path, command: list[str]) -> None:
    """A function returning a 2-vector, run without --output (read as points): its first call's shape tells — one
    Error: line naming --output vector, exit 2, no report folder; stated, the same function runs."""
    (tmp_path / "mean.py").write_text("import numpy as np\n\ndef mean(X, epsilon, rng):\n"
                                      "    return np.clip(X, -1, 1).mean(axis=0) + rng.laplace(size=X.shape[1])\n")
    out = tmp_path / "report"
    result = runner.invoke(app, [*command, "-m", f"{tmp_path}/mean.py:mean", "--eps", "1", "-q", "--out", str(out)])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "--output vector" in lines[0], result.output
    assert "shape (2,)" in lines[0] and not out.exists()
