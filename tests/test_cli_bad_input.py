"""Bad input on every command: one ``Error:`` line on stderr, exit code 2, never a traceback.

Each case is rejected at the boundary before any real work starts, so the whole
module runs in seconds (tiny data, few samples).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

runner = CliRunner()

CSVS = {
    "nan.csv": "a,b\n1,2\nnan,4\n5,6\n",
    "inf.csv": "a,b\n1,2\ninf,4\n5,6\n",
    "empty.csv": "",
    "header.csv": "a,b\n",
    "one.csv": "a,b\n1,2\n",
    "text.csv": "a,b\n1,x\n2,y\n3,z\n",
    "semicolon.csv": "a;b\n1;2\n3;4\n5;6\n",
    "nolabel.csv": "a,b,label\n1,2,0\n3,4,\n5,6,1\n",
    "good.csv": "a,b,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n",
    "notresults.json": '{"hello": 1}\n',
    "results.json": '{"kind": "attack", "attacks": []}\n',
    "edited.json": '{"kind": "attack", "mechanism": "x", "attacks": [{"name": "yeom", "roc": {"fpr": "x"}}]}\n',
    "estimate.json": '{"command": "estimate-eps", "epsilon_lower_bound": 0.5}\n',
    "broken.json": "{not json",
    "plug.py": "import numpy as np\n\ndef fn(X, epsilon, rng):\n    return X\n",
    "huge.csv": "a,b\n1,2\n1e308,4\n5,6\n7,8\n",
    "wide.csv": ",".join(f"c{i}" for i in range(1001)) + "\n" + ("\n".join(",".join("1" for _ in range(1001))
                                                                     for _ in range(3))) + "\n",
}

# Each command with the smallest valid arguments; {out} is a fresh directory.
BASE = {
    "attack": ["attack", "-m", "ndlaplace", "--eps", "1", "--records", "80", "--repeats", "1"],
    "estimate-eps": ["estimate-eps", "-m", "ndlaplace", "--eps", "1", "--samples", "100", "--records", "10"],
    "sweep": ["sweep", "-m", "ndlaplace", "--eps", "1", "--repeats", "1", "--records", "20",
              "--clusterers", "none"],
    "audit": ["audit", "-m", "ndlaplace", "--eps", "1", "--samples", "100", "--attack", "none",
              "--records", "20"],
}
EPS_CMDS = ("attack", "estimate-eps", "sweep", "audit")


def _with(cmd: str, *extra: str, drop: tuple[str, ...] = ()) -> list[str]:
    """BASE[cmd] with options in ``drop`` (and their values) removed and ``extra`` appended."""
    args, base, i = [], BASE[cmd], 0
    while i < len(base):
        if base[i] in drop:
            i += 2
            continue
        args.append(base[i])
        i += 1
    return args + list(extra)


CASES: list[tuple[str, list[str], str]] = []
for _cmd in EPS_CMDS:
    CASES += [
        (f"{_cmd}-nan-csv", _with(_cmd, "--data", "{d}/nan.csv", drop=("--records",)), "NaN"),
        (f"{_cmd}-inf-csv", _with(_cmd, "--data", "{d}/inf.csv", drop=("--records",)), "inf"),
        (f"{_cmd}-empty-csv", _with(_cmd, "--data", "{d}/empty.csv", drop=("--records",)), "empty"),
        (f"{_cmd}-header-only-csv", _with(_cmd, "--data", "{d}/header.csv", drop=("--records",)), "no records"),
        (f"{_cmd}-one-row-csv", _with(_cmd, "--data", "{d}/one.csv", drop=("--records",)), "1 row"),
        (f"{_cmd}-text-csv", _with(_cmd, "--data", "{d}/text.csv", drop=("--records",)), "non-numeric"),
        (f"{_cmd}-label-column", _with(_cmd, "--data", "{d}/good.csv", "--label-column", "nope",
                                       drop=("--records",)), "label column"),
        (f"{_cmd}-semicolon-csv", _with(_cmd, "--data", "{d}/semicolon.csv", drop=("--records",)), "comma"),
        (f"{_cmd}-label-missing", _with(_cmd, "--data", "{d}/nolabel.csv", "--label-column", "label",
                                        drop=("--records",)), "missing values"),
        (f"{_cmd}-label-column-without-data", _with(_cmd, "--label-column", "y"), "--data"),
        (f"{_cmd}-missing-file", _with(_cmd, "--data", "{d}/missing.csv", drop=("--records",)), "not found"),
        (f"{_cmd}-data-and-dataset", _with(_cmd, "--data", "{d}/good.csv", "--dataset", "iris",
                                           drop=("--records",)), "not both"),
        (f"{_cmd}-records-0", _with(_cmd, "--records", "0", drop=("--records",)), "records"),
        (f"{_cmd}-records-neg", _with(_cmd, "--records", "-5", drop=("--records",)), "records"),
        (f"{_cmd}-records-too-many", _with(_cmd, "--dataset", "iris", "--records", "100000",
                                           drop=("--records",)), "records"),
        (f"{_cmd}-unknown-dataset", _with(_cmd, "--dataset", "nope"), "nope"),
        (f"{_cmd}-unknown-mechanism", _with(_cmd, "-m", "nope", drop=("-m",)), "nope"),
        (f"{_cmd}-plugin-missing-attr", _with(_cmd, "-m", "{d}/plug.py:missing", drop=("-m",)), "missing"),
        (f"{_cmd}-plugin-missing-file", _with(_cmd, "-m", "{d}/nofile.py:fn", drop=("-m",)), "nofile.py"),
        (f"{_cmd}-param-no-equals", _with(_cmd, "-p", "alpha"), "KEY=VALUE"),
        (f"{_cmd}-param-bad-value", _with(_cmd, "-m", "dpkccm", "-p", "n_clusters=abc", drop=("-m",)), "n_clusters"),
        (f"{_cmd}-param-rejected", _with(_cmd, "-m", "dpkccm", "-p", "n_clusters=0", drop=("-m",)), "n_clusters"),
        (f"{_cmd}-param-unknown", _with(_cmd, "-p", "nosuch=1"), "nosuch"),
        (f"{_cmd}-param-epsilon", _with(_cmd, "-p", "epsilon=1"), "--eps"),
        (f"{_cmd}-seed-negative", _with(_cmd, "--seed", "-1"), "--seed"),
        (f"{_cmd}-output-under-a-file", _with(_cmd, "--json" if _cmd == "estimate-eps" else "--out",
                                              "{d}/good.csv/run"), "not a directory"),
    ]
    CASES += [
        (f"{_cmd}-values-overflow", _with(_cmd, "--data", "{d}/huge.csv", drop=("--records",)), "magnitude"),
        (f"{_cmd}-eps-1e-300", _with(_cmd, "--eps", "1e-300", drop=("--eps",)), "smallest ε"),
        (f"{_cmd}-data-is-a-directory", _with(_cmd, "--data", "{d}/emptydir", drop=("--records",)), "is a directory"),
        (f"{_cmd}-too-many-features", _with(_cmd, "--data", "{d}/wide.csv", drop=("--records",)), "1,001 features"),
    ]
    for _bad in ("0", "-1", "nan", "inf", "abc"):
        CASES.append((f"{_cmd}-eps-{_bad}", _with(_cmd, "--eps", _bad, drop=("--eps",)),
                      "eps" if _cmd != "sweep" or _bad == "abc" else "ε"))

CASES += [
    ("attack-json-is-the-input", _with("attack", "--data", "{d}/good.csv", "--json", "{d}/good.csv",
                                       drop=("--records",)), "would overwrite the input"),
    ("attack-json-is-the-plugin", _with("attack", "-m", "{d}/plug.py:fn", "--json", "{d}/plug.py", drop=("-m",)),
     "would overwrite the input"),
    ("estimate-json-is-the-input", _with("estimate-eps", "--data", "{d}/good.csv", "--json", "{d}/good.csv",
                                         drop=("--records",)), "would overwrite the input"),
    ("sweep-out-holds-the-input", _with("sweep", "--data", "{d}/run/results.csv", "--out", "{d}/run",
                                        drop=("--records",)), "would overwrite the input"),
    ("audit-out-holds-the-input", _with("audit", "--data", "{d}/run/results.csv", "--out", "{d}/run",
                                        drop=("--records",)), "would overwrite the input"),
    ("sweep-k-above-records", _with("sweep", "--n-clusters", "50"), "k = 50"),
    ("estimate-50-by-10000", ["estimate-eps", "-m", "ndlaplace", "--eps", "1", "--samples", "200",
                              "--data", "{d}/wide50.csv"], "10,000 features"),
    ("estimate-release-too-large", _with("estimate-eps", "--records", "100001", drop=("--records",)),
     "200,000"),
    ("attack-repeats-0", _with("attack", "--repeats", "0", drop=("--repeats",)), "repeats"),
    ("attack-unknown-attack", _with("attack", "--attack", "nope"), "nope"),
    ("attack-bad-output", _with("attack", "-m", "{d}/plug.py:fn", "--output", "nope", drop=("-m",)), "output"),
    ("attack-bad-neighbours", _with("attack", "-m", "{d}/plug.py:fn", "--neighbours", "nope", drop=("-m",)),
     "neighbours"),
    ("estimate-samples-0", _with("estimate-eps", "--samples", "0", drop=("--samples",)), "samples"),
    ("estimate-samples-neg", _with("estimate-eps", "--samples", "-3", drop=("--samples",)), "samples"),
    ("estimate-confidence-1.5", _with("estimate-eps", "--confidence", "1.5"), "confidence"),
    ("estimate-confidence-0", _with("estimate-eps", "--confidence", "0"), "confidence"),
    ("estimate-delta-neg", _with("estimate-eps", "--delta", "-0.1"), "delta"),
    ("estimate-bad-neighbours", _with("estimate-eps", "--neighbours", "nope"), "neighbours"),
    ("estimate-bad-classifier", _with("estimate-eps", "--classifier", "nope"), "classifier"),
    ("estimate-bad-scheduler", _with("estimate-eps", "--scheduler", "nohost"), "tcp://HOST:PORT"),
    ("estimate-json-is-a-directory", _with("estimate-eps", "--json", "{d}"), "is a directory"),
    ("attack-json-is-a-directory", _with("attack", "--json", "{d}"), "is a directory"),
    ("sweep-out-is-a-file", _with("sweep", "--out", "{d}/good.csv"), "is a file"),
    ("audit-out-is-a-file", _with("audit", "--out", "{d}/good.csv"), "is a file"),
    ("estimate-bad-output", _with("estimate-eps", "--output", "nope"), "output"),
    ("estimate-distance-0", _with("estimate-eps", "--distance", "0"), "distance"),
    ("estimate-n-jobs-0", _with("estimate-eps", "--n-jobs", "0"), "--n-jobs must be"),
    ("estimate-max-pairs-0", _with("estimate-eps", "--max-pairs", "0"), "--max-pairs must be"),
    ("sweep-repeats-0", _with("sweep", "--repeats", "0", drop=("--repeats",)), "repeats"),
    ("sweep-eps-empty", _with("sweep", "--eps", ",", drop=("--eps",)), "empty"),
    ("sweep-eps-list-bad", _with("sweep", "--eps", "1,0", drop=("--eps",)), "ε"),
    ("sweep-unknown-clusterer", _with("sweep", "--clusterers", "nope", drop=("--clusterers",)), "nope"),
    ("sweep-unknown-attack", _with("sweep", "--attack", "nope"), "nope"),
    ("sweep-k-0", _with("sweep", "--n-clusters", "0"), "--n-clusters"),
    ("sweep-epsilon-samples-0", _with("sweep", "--epsilon-bound", "--samples", "0"), "samples"),
    ("sweep-bad-rescale", _with("sweep", "--rescale", "nope"), "rescale"),
    ("sweep-n-jobs-0", _with("sweep", "--n-jobs", "0"), "n-jobs"),
    ("sweep-resume-no-out", _with("sweep", "--resume"), "--out"),
    ("audit-samples-0", _with("audit", "--samples", "0", drop=("--samples",)), "samples"),
    ("audit-attack-repeats-0", _with("audit", "--attack", "yeom", "--repeats", "0",
                                     drop=("--attack",)), "repeats"),
    ("audit-unknown-attack", _with("audit", "--attack", "nope", drop=("--attack",)), "nope"),
    ("audit-bad-output", _with("audit", "-m", "{d}/plug.py:fn", "--output", "nope", drop=("-m",)), "output"),
    ("audit-bad-neighbours", _with("audit", "-m", "{d}/plug.py:fn", "--neighbours", "nope", drop=("-m",)),
     "neighbours"),
    ("audit-timeout-0", _with("audit", "--timeout", "0"), "timeout"),
    ("audit-delta-neg", _with("audit", "--delta", "-1"), "delta"),
    ("audit-missing-python", _with("audit", "--python", "{d}/no-such-python"), "python"),
    ("audit-bad-rescale", _with("audit", "--rescale", "nope"), "rescale"),
    ("report-missing-file", ["report", "{d}/missing.json"], "not found"),
    ("report-not-results", ["report", "{d}/notresults.json"], "results.json"),
    ("report-not-json", ["report", "{d}/broken.json"], "JSON"),
    ("report-a-csv", ["report", "{d}/good.csv"], "JSON"),
    ("report-a-directory", ["report", "{d}/emptydir"], "results.json"),
    ("report-estimate-json", ["report", "{d}/estimate.json"], "estimate-eps"),
    ("report-edited-results", ["report", "{d}/edited.json", "--out", "{d}/edited-out"], "as dpaudit writes it"),
    ("report-out-is-a-file", ["report", "{d}/results.json", "--out", "{d}/good.csv"], "is a file"),
    ("report-bad-format", ["report", "{d}/notresults.json", "--format", "pdf"], "format"),
    ("mechanisms-unknown-option", ["mechanisms", "--nope"], "--nope"),
    ("datasets-extra-argument", ["datasets", "extra"], "extra"),
    ("unknown-command", ["nope"], "nope"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bad")
    for name, text in CSVS.items():
        (d / name).write_text(text)
    (d / "emptydir").mkdir()
    (d / "run").mkdir()
    (d / "run" / "results.csv").write_text(CSVS["good.csv"])
    import numpy as np  # the 50 × 10,000 table (a few MB)
    np.savetxt(d / "wide50.csv", np.ones((50, 10_000)), delimiter=",", fmt="%d",
               header=",".join(f"c{i}" for i in range(10_000)), comments="")
    return d


@pytest.mark.parametrize("args, needle", [pytest.param(a, n, id=i) for i, a, n in CASES])
def test_bad_input_is_one_line_exit_2(files: Path, tmp_path: Path, args: list[str], needle: str) -> None:
    argv = [a.replace("{d}", str(files)) for a in args]
    if argv[0] in BASE and not {"--resume", "--out", "--json"} & set(argv):  # where a run would write: stays absent
        argv += ["--json" if argv[0] == "estimate-eps" else "--out", str(tmp_path / "out")]
    result = runner.invoke(app, argv)
    err = result.stderr.strip()
    assert result.exit_code == 2, (result.exit_code, err, result.exception)
    assert "Traceback" not in result.output and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:"), err
    assert needle.lower() in lines[0].lower(), lines[0]
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()  # nothing was started


def test_help_and_bare_command_still_print_help() -> None:
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0 and "Commands" in res.stdout
    res = runner.invoke(app, [])  # no command: the help text, not a one-line error
    assert "Commands" in res.output and "Error" not in res.output


def test_report_accepts_a_run_directory(tmp_path: Path) -> None:
    from dpaudit.report import render_report
    render_report({"kind": "attack", "mechanism": {"name": "ndlaplace"},
                   "attacks": [{"name": "yeom", "advantage": 0.1}]}, tmp_path, ["json"])
    res = runner.invoke(app, ["report", str(tmp_path), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report.md").is_file()
