"""``dpaudit estimate-eps`` end to end: output, JSON, exit codes, plug-ins."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """Every estimate-eps run writes a report folder under reports/: here, in the test's own directory."""
    monkeypatch.chdir(tmp_path)


def _run(*args: str):
    return runner.invoke(app, ["estimate-eps", *args, "--no-progress"])


def test_control_json_and_text(tmp_path):
    out = tmp_path / "eps.json"
    res = _run("--mechanism", "laplace", "--eps", "1", "--samples", "5000", "--json", str(out))
    assert res.exit_code == 0, res.output
    assert "Conclusion: Consistent with ε = 1" in res.output and "the search used" in res.output
    data = json.loads(out.read_text())
    for key in ("mechanism", "claim", "epsilon_lower_bound", "verdict", "confidence", "samples", "ceiling",
                "pair", "elapsed_seconds", "guarantee", "selection_samples"):
        assert key in data
    assert data["mechanism"]["spec"] == "laplace" and data["claim"]["neighbours"] == "add-remove"
    assert data["kind"] == "estimate-eps" and data["schema_version"] >= 2 and data["status"] == "complete"
    folder = next((tmp_path / "reports").iterdir())  # the same results.json, and a report beside it
    assert json.loads((folder / "results.json").read_text()) == data
    assert {"report.md", "report.html", "results.csv"} <= {p.name for p in folder.iterdir()}
    assert data["samples"] == 5000 and data["dataset"]["n_records"] == 30


def test_plugin_vector_through_cli_fails_on_violation(tmp_path):
    plugin = tmp_path / "leaky.py"
    plugin.write_text(textwrap.dedent("""
        import numpy as np
        def noisy_count(X, epsilon, rng):
            # 30 % too little noise for a count (sensitivity 1)
            return np.array([len(X) + rng.laplace(0.0, 0.7 / epsilon)])
        def exact_mean(X, epsilon, rng):
            return X.mean(axis=0)
    """))
    out = tmp_path / "r.json"
    res = _run("--mechanism", f"{plugin}:noisy_count", "--eps", "1", "--output", "vector",
               "--samples", "20000", "--fail-on-violation", "--json", str(out))
    assert res.exit_code == 1, res.output
    assert "VIOLATION" in res.output
    assert json.loads(out.read_text())["verdict"] == "violation"
    res = _run("--mechanism", f"{plugin}:exact_mean", "--eps", "1", "--output", "vector",
               "--neighbours", "replace", "--samples", "500", "-j", "2")
    assert res.exit_code == 0 and "VIOLATION" in res.output and "replace" in res.output


def test_plugin_labels_and_centroids_through_cli(tmp_path):
    plugin = tmp_path / "clusterers.py"
    plugin.write_text(textwrap.dedent("""
        import numpy as np
        def side_labels(X, epsilon, rng):
            # labels computed from each record itself, no noise: not DP
            return (X[:, 0] > 0).astype(int)
        def exact_centre(X, epsilon, rng):
            return X.mean(axis=0, keepdims=True)
    """))
    res = _run("--mechanism", f"{plugin}:side_labels", "--eps", "1", "--output", "labels", "--samples", "300",
               "--neighbours", "replace")  # under add-remove the label count alone (n vs n + 1) is the leak
    assert res.exit_code == 0 and "VIOLATION" in res.output, res.output
    res = _run("--mechanism", f"{plugin}:exact_centre", "--eps", "1", "--output", "centroids",
               "--samples", "300")
    assert res.exit_code == 0 and "VIOLATION" in res.output, res.output


def test_metric_claim_reported_per_unit_distance():
    res = _run("--mechanism", "ndlaplace", "--eps", "0.5", "--distance", "2", "--samples", "2000",
               "--max-pairs", "2", "--classifier", "mlp")
    assert res.exit_code == 0, res.output
    assert "per unit distance" in res.output and "moved by 2" in res.output


def test_plugin_that_never_releases_is_a_finding_exit_3(tmp_path):
    """Code that fails every call is audited, not refused: an inconclusive result, its findings, exit 3; code
    that answers NaN has answered."""
    plugin = tmp_path / "bad.py"
    plugin.write_text("import numpy as np\n"
                      "def boom(X, epsilon, rng):\n    return 1 / 0\n"
                      "def nan(X, epsilon, rng):\n    return np.full(X.shape, np.nan)\n")
    out = tmp_path / "boom.json"
    res = _run("--mechanism", f"{plugin}:boom", "--eps", "1", "--output", "vector", "--samples", "100",
               "--json", str(out))
    assert res.exit_code == 3 and "ZeroDivisionError" in res.output and "Traceback" not in res.output, res.output
    data = json.loads(out.read_text())
    assert data["verdict"] == "inconclusive" and data["findings"][0]["share"] == 1.0
    # NaN is part of a release (a "no answer" entry): every call answered, so what it releases is audited — n
    # points on n records give an added record away — and the NaN is a note.
    out = tmp_path / "nan.json"
    res = _run("--mechanism", f"{plugin}:nan", "--eps", "1", "--output", "points", "--samples", "100",
               "--json", str(out))
    data = json.loads(out.read_text())
    assert data["verdict"] == "violation" and "Traceback" not in res.output, res.output
    assert [(f["kind"], f["blocking"]) for f in data["findings"]] == [("non-finite", False)]


def test_bad_input_one_line_exit_2():
    for args in (["--mechanism", "nope", "--eps", "1"],
                 ["--mechanism", "laplace", "--eps", "-1"],
                 ["--mechanism", "laplace", "--eps", "1", "--neighbours", "swap"],
                 ["--mechanism", "laplace", "--eps", "1", "--confidence", "2"],
                 ["--mechanism", "laplace", "--eps", "1", "--classifier", "svm"],
                 ["--mechanism", "laplace", "--eps", "1", "--dataset", "nope"]):
        res = _run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert "Traceback" not in res.output


# --------------------------------------------------------------------------- #
# --pair D.csv D2.csv: the user's own neighbouring pair
# --------------------------------------------------------------------------- #
def _csv(path, rows):
    import numpy as np

    np.savetxt(path, np.asarray(rows, dtype=float), delimiter=",", header="a,b", comments="")
    return str(path)


def _pair_files(tmp_path):
    import numpy as np

    X = np.random.default_rng(0).uniform(0.0, 1.0, size=(10, 2))
    moved = X.copy()
    moved[3] += [0.5, 0.0]
    return {"D": _csv(tmp_path / "D.csv", X), "added": _csv(tmp_path / "added.csv", np.vstack([X, [[1.0, 1.0]]])),
            "moved": _csv(tmp_path / "moved.csv", moved),
            "two": _csv(tmp_path / "two.csv", np.vstack([X[:8], [[0.9, 0.9], [0.1, 0.1]]]))}


def test_pair_add_remove_certified_on_the_users_pair(tmp_path):
    files, out = _pair_files(tmp_path), tmp_path / "pair.json"
    res = _run("--mechanism", "laplace", "--eps", "1", "--pair", files["D"], files["added"],
               "--samples", "2000", "--json", str(out))
    assert res.exit_code == 0, res.output
    assert "user-pair" in res.output and "--pair" in res.output
    data = json.loads(out.read_text())
    assert data["pair_source"] == "user" and data["pair"]["family"] == "user"
    assert data["pair"]["records_D"] == 10 and data["pair"]["records_D_prime"] == 11
    assert len(data["candidates"]) == 1 and [d["n_records"] for d in data["pair_datasets"]] == [10, 11]
    # either order: D′ may be the smaller dataset
    assert _run("--mechanism", "laplace", "--eps", "1", "--pair", files["added"], files["D"],
                "--samples", "500").exit_code == 0


def test_pair_replace_flags_a_leak_and_metric_reports_the_distance(tmp_path):
    files = _pair_files(tmp_path)
    plugin = tmp_path / "exact.py"
    plugin.write_text("def exact_mean(X, epsilon, rng):\n    return X.mean(axis=0)\n")
    res = _run("--mechanism", f"{plugin}:exact_mean", "--eps", "1", "--output", "vector", "--neighbours",
               "replace", "--pair", files["D"], files["moved"], "--samples", "300", "--fail-on-violation")
    assert res.exit_code == 1 and "VIOLATION" in res.output, res.output
    res = _run("--mechanism", "ndlaplace", "--eps", "1", "--pair", files["D"], files["moved"], "--samples", "1000")
    assert res.exit_code == 0, res.output
    assert "moved by 0.5" in res.output and "per unit distance" in res.output


def test_pair_that_is_not_neighbours_or_mixed_with_data_exit_2(tmp_path):
    files = _pair_files(tmp_path)
    nan = tmp_path / "nan.csv"
    nan.write_text("a,b\n" + "\n".join("0.5,0.5" for _ in range(9)) + "\nnan,0.1\n")
    cases = [(["--pair", files["D"], files["moved"]], "not add-remove neighbours"),       # same size
             (["--pair", files["D"], files["added"], "--neighbours", "replace"], "not replace neighbours"),
             (["--pair", files["D"], files["two"], "--neighbours", "replace"], "differ in 2 rows"),
             (["--pair", files["D"], files["added"], "--data", files["D"]], "--pair gives both datasets"),
             (["--pair", files["D"], files["added"], "--dataset", "blobs-2d"], "--pair gives both datasets"),
             (["--pair", files["D"], str(nan)], "nan"),
             (["--pair", files["D"], str(tmp_path / "missing.csv")], "not found")]
    for args, text in cases:
        res = _run("--mechanism", "laplace", "--eps", "1", "--samples", "100", *args)
        assert res.exit_code == 2, (args, res.output)
        errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and text.lower() in errors[0].lower(), (args, res.output)
        assert "Traceback" not in res.output


# --------------------------------------------------------------------------- #
# --access transcript
# --------------------------------------------------------------------------- #
def test_release_transcript_audits_every_noisy_statistic(tmp_path):
    out = tmp_path / "t.json"
    res = _run("--mechanism", "dpkccm", "--eps", "1", "--access", "transcript", "--samples", "200",
               "--max-pairs", "1", "--json", str(out))
    assert res.exit_code == 0, res.output
    assert "release" in res.output and "transcript" in res.output
    data = json.loads(out.read_text())
    assert data["access"] == "transcript" and data["mechanism_name"].endswith("[transcript]")
    assert data["pair"]["family"] in ("construction", "degenerate")  # a worst-case construction, not a generic pair
    assert data["box"]["public"] and data["box"]["source"] == "the mechanism's bounds"
    default = tmp_path / "o.json"
    assert _run("--mechanism", "laplace", "--eps", "1", "--samples", "200", "--json", str(default)).exit_code == 0
    assert json.loads(default.read_text())["access"] == "output"


def test_release_transcript_without_one_exit_2():
    for args, text in ((["--mechanism", "ndlaplace", "--access", "transcript"], "does not expose a transcript"),
                       (["--mechanism", "laplace", "--access", "iterates"], "--access must be one of")):
        res = _run(*args, "--eps", "1", "--samples", "100")
        assert res.exit_code == 2, res.output
        errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and text in errors[0] and "Traceback" not in res.output, res.output


# --------------------------------------------------------------------------- #
# Plug-ins: a public box for functions, a class's own claim
# --------------------------------------------------------------------------- #
def test_plugin_function_public_box_from_param(tmp_path):
    plugin = tmp_path / "box.py"
    plugin.write_text("import numpy as np\n"
                      "def noisy_sum(X, epsilon, rng):\n"
                      "    return np.array([np.clip(X[:, 0], 0, 1).sum() + rng.laplace(0, 1 / epsilon)])\n")
    for bounds, lo in (("[0,1]", [0.0, 0.0]), ("[[0,0],[1,1]]", [0.0, 0.0])):
        out = tmp_path / "box.json"
        res = _run("--mechanism", f"{plugin}:noisy_sum", "--eps", "1", "--output", "vector",
                   "--param", f"bounds={bounds}", "--samples", "300", "--max-pairs", "2", "--json", str(out))
        assert res.exit_code == 0 and "Traceback" not in res.output, res.output
        box = json.loads(out.read_text())["box"]
        assert box == {"public": True, "source": "--param bounds", "lo": lo, "hi": [1.0, 1.0]}
    res = _run("--mechanism", f"{plugin}:noisy_sum", "--eps", "1", "--output", "vector", "--param", "bounds=[1,0]")
    assert res.exit_code == 2 and "bounds must satisfy lo < hi" in res.output, res.output


_REPLACE_CLASS = """
import numpy as np
from dpaudit.mechanisms.base import PrivacyClaim, Vector

class ReplaceSum:
    '''A clipped sum with Laplace noise of scale 1: 1-DP under replace (sensitivity 1), a fixed claim.'''
    name = "replace-sum"
    claim = PrivacyClaim(1.0, 0.0, "replace")
    bounds = ([0.0, 0.0], [1.0, 1.0])

    def release(self, X, rng):
        return Vector(np.array([np.clip(X[:, 0], 0, 1).sum() + rng.laplace(0, 1.0)]))

class ScaledSum:
    '''Takes the ε it runs at; claims replace-DP with a small δ.'''
    name = "scaled-sum"
    def __init__(self, epsilon):
        self.claim = PrivacyClaim(epsilon, 1e-9, "replace")
    def release(self, X, rng):
        return Vector(np.array([np.clip(X[:, 0], 0, 1).sum() + rng.laplace(0, 1.0 / self.claim.epsilon)]))
"""


def test_plugin_class_claim_is_the_default(tmp_path):
    plugin = tmp_path / "claims.py"
    plugin.write_text(_REPLACE_CLASS)
    out = tmp_path / "c.json"
    res = _run("--mechanism", f"{plugin}:ReplaceSum", "--samples", "300", "--max-pairs", "2", "--json", str(out))
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["claim"] == {"epsilon": 1.0, "delta": 0.0, "neighbours": "replace"}
    # a different --eps: one note, used for ε only; the relation and δ stay the class's
    res = _run("--mechanism", f"{plugin}:ReplaceSum", "--eps", "2", "--samples", "300", "--max-pairs", "2",
               "--json", str(out))
    assert res.exit_code == 0, res.output
    assert sum("differs from the ε = 1" in line for line in res.output.splitlines()) == 1
    assert json.loads(out.read_text())["claim"] == {"epsilon": 2.0, "delta": 0.0, "neighbours": "replace"}
    # a class that takes ε runs at --eps and keeps its own relation and δ; --neighbours overrides
    res = _run("--mechanism", f"{plugin}:ScaledSum", "--eps", "0.5", "--samples", "300", "--max-pairs", "1",
               "--json", str(out))
    assert res.exit_code == 0 and "differs" not in res.output, res.output
    assert json.loads(out.read_text())["claim"] == {"epsilon": 0.5, "delta": 1e-9, "neighbours": "replace"}
    res = _run("--mechanism", f"{plugin}:ScaledSum", "--eps", "0.5", "--neighbours", "add-remove",
               "--samples", "300", "--max-pairs", "1", "--json", str(out))
    assert res.exit_code == 0 and json.loads(out.read_text())["claim"]["neighbours"] == "add-remove"


def test_eps_required_when_nothing_states_a_claim(tmp_path):
    plugin = tmp_path / "fn.py"
    plugin.write_text("def f(X, epsilon, rng):\n    return X.sum(axis=0)\n")
    for spec, text in (("laplace", "--eps is required"), (f"{plugin}:f", "states no privacy claim")):
        res = _run("--mechanism", spec, "--output", "vector", "--samples", "100") if ":" in spec else \
            _run("--mechanism", spec, "--samples", "100")
        errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
        assert res.exit_code == 2 and len(errors) == 1 and text in errors[0], res.output


def test_pair_takes_two_files_spaced_or_comma_separated() -> None:
    """--pair D.csv D2.csv and --pair D.csv,D2.csv name the same pair (the help shows the first)."""
    from dpaudit.commands.argv import pair_comma_form

    assert pair_comma_form(["estimate-eps", "--pair", "a.csv,b.csv", "-q"]) == ["estimate-eps", "--pair", "a.csv",
                                                                                 "b.csv", "-q"]
    assert pair_comma_form(["--pair=a.csv,b.csv"]) == ["--pair", "a.csv", "b.csv"]
    assert pair_comma_form(["--pair", "a.csv", "b.csv"]) == ["--pair", "a.csv", "b.csv"]
    assert pair_comma_form(["--pair", "a,b,c.csv"]) == ["--pair", "a,b,c.csv"]  # not two files: left to the parser
