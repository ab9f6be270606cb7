"""``dpaudit audit``: findings instead of crashes, verdicts, exit codes, nothing lost, no records in reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit.attacks.epsilon import Budget
from dpaudit.audit.config import AuditConfig
from dpaudit.audit.run import run_audit
from dpaudit.cli import app
from dpaudit.data.datasets import Dataset
from dpaudit.execution import Isolation
from dpaudit.options import AttackOptions, ClaimOptions, TargetOptions

PLUGIN = Path(__file__).parent / "plugins" / "misbehaving.py"


@pytest.fixture(scope="module")
def plugin() -> Path:
    return PLUGIN


def _data() -> Dataset:
    from sklearn.datasets import make_blobs
    X, y = make_blobs(90, centers=3, n_features=2, cluster_std=0.5, random_state=1)
    return Dataset("blobs", X, y, (np.full(2, -15.0), np.full(2, 15.0)), "test blobs")


@pytest.mark.parametrize("fn, kind", [("raises", "raises"), ("hangs", "timeout"), ("shape", "wrong-shape")])
def test_each_misbehaviour_is_a_finding_and_the_audit_ends_cleanly(tmp_path, plugin, fn, kind):
    # --output stated: a release of another shape is then the code's misbehaviour (unstated, the run refuses it)
    cfg = AuditConfig(target=TargetOptions(mechanism=f"{plugin}:{fn}", output="points"),
                      claim=ClaimOptions(epsilon=1.0), isolation=Isolation(timeout=1.0), parts=("smoke", "utility"))
    results = run_audit(cfg, _data(), tmp_path, progress=False).to_dict()
    assert results["status"] == "complete" and results["verdict"] == "inconclusive"
    kinds = {(f["kind"], f["part"]) for f in results["findings"]}
    # the code fails every call: the first calls (the replay probe's) record how, once; no part can run, so the
    # smoke part fails with that error and the utility part is skipped (not run a second time to fail again)
    assert (kind, "replay probe") in kinds and ("incomplete", "audit parts") in kinds
    assert results["parts"]["smoke"].startswith("failed: the audited code released nothing")
    assert results["parts"]["utility"].startswith("skipped:")
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["findings"][0]["kind"] == kind
    assert "Findings" in (tmp_path / "report.md").read_text()


def test_nan_releases_are_noted_and_the_parts_that_need_numbers_say_so(tmp_path, plugin):
    """NaN points are a release (the smoke test passes, with a non-finite note); the utility part, which needs
    numbers to cluster, could not run — the audit goes on and cannot be clean."""
    cfg = AuditConfig(target=TargetOptions(mechanism=f"{plugin}:nan"), claim=ClaimOptions(epsilon=1.0),
                      isolation=Isolation(timeout=1.0), parts=("smoke", "utility"))
    results = run_audit(cfg, _data(), tmp_path, progress=False).to_dict()
    assert results["status"] == "complete" and results["verdict"] == "inconclusive"
    kinds = {(f["kind"], f["part"]) for f in results["findings"]}
    assert ("non-finite", "smoke") in kinds and any(k == "incomplete" and "utility" in p for k, p in kinds)


def test_good_plugin_utility_and_figure(tmp_path, plugin):
    cfg = AuditConfig(target=TargetOptions(mechanism=f"{plugin}:good"), claim=ClaimOptions(epsilon=50.0),
                      parts=("smoke", "utility"))
    results = run_audit(cfg, _data(), tmp_path, progress=False).to_dict()
    assert results["findings"] == [] and results["parts"] == {"smoke": "ok", "utility": "ok"}
    (how, util), = [(k, v) for k, v in results["utility"].items() if isinstance(v, dict)]
    # Laplace noise of scale 1/50 on clusters 0.5 wide leaves KMeans' partition intact.
    assert util["ARI vs truth"] > 0.9
    assert results["release_2d"]["kind"] == "points"
    assert (tmp_path / "report.html").is_file() and (tmp_path / "fig-release.png").is_file()


def test_violation_sets_the_verdict_and_the_exit_code(tmp_path, plugin):
    """A noiseless mean claiming ε = 1: certified bound at the sample-size ceiling, exit 1 with --fail-on-violation."""
    out = tmp_path / "run"
    args = ["audit", "-m", f"{plugin}:noiseless_mean", "--output", "vector", "--eps", "1", "--samples", "200",
            "--attack", "none", "--out", str(out), "--no-progress"]
    res = CliRunner().invoke(app, args + ["--fail-on-violation"])
    assert res.exit_code == 1, res.output
    assert res.stdout.rstrip().splitlines()[-1].startswith("Conclusion: VIOLATION: the claim ε = 1 cannot hold")
    data = json.loads((out / "results.json").read_text())
    assert data["verdict"] == "violation" and data["epsilon_estimate"]["epsilon_lower_bound"] > 1.0
    assert data["verdict_table"][0]["part"] == "ε estimation"
    assert set(data["parts"]) == {"smoke", "epsilon", "utility"}
    # Without the flag the same verdict exits 0 (the report is the product).
    res = CliRunner().invoke(app, args[:-3] + ["--out", str(tmp_path / "again"), "--no-progress"])
    assert res.exit_code == 0 and "Conclusion: VIOLATION" in res.stdout


def test_no_record_value_in_any_audit_output(tmp_path, plugin):
    X = np.random.default_rng(5).normal(size=(90, 2))
    X[:, 0] += 123.456789
    X[:, 1] *= 0.01
    labels = np.repeat([0, 1, 2], 30)
    csv = tmp_path / "secret.csv"
    np.savetxt(csv, np.column_stack([X, labels]), delimiter=",", header="a,b,label", comments="", fmt="%.6f")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["audit", "-m", f"{plugin}:good", "--eps", "1", "--data", str(csv),
                                   "--label-column", "label", "--samples", "200", "--attack", "yeom",
                                   "--repeats", "1", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    names = {p.name for p in out.iterdir()}
    assert {"results.json", "report.md", "report.html", "fig-release.png"} <= names
    needles = [b"123.45", b"123,45"]
    for v in X[:, 0]:  # each record's first value as text, truncated to 4 decimals
        s = repr(float(v))
        needles.append(s[: s.index(".") + 5].encode())
    for path in out.iterdir():
        blob = path.read_bytes()
        assert not any(n in blob for n in needles), path.name


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path):
    """--progress is the default, but a bar is drawn only on a terminal (CliRunner's stderr is not one)."""
    res = CliRunner().invoke(app, ["audit", "-m", "ndlaplace", "--eps", "1", "--records", "20", "--samples", "100",
                                   "--attack", "none", "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert "%|" not in res.stderr and "chunk/s" not in res.stderr, res.stderr


def test_audit_of_a_non_private_baseline_renders(tmp_path):
    """Claim ε = ∞ (a baseline): the certified-ε figure has no diagonal point and must not crash the report."""
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["audit", "-m", "identity", "--eps", "1", "--records", "20", "--samples", "100",
                                   "--attack", "none", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert (out / "report.html").is_file() and "ε = ∞" in res.stdout
    assert json.loads((out / "results.json").read_text())["epsilon_estimate"]["status"] == "ok"


def test_n_jobs_gives_the_same_numbers_and_bad_values_exit_2(tmp_path):
    """--n-jobs spreads the ε estimation's chunks and the attack repeats over processes; seeds decide the
    numbers, not the worker count."""
    args = ["audit", "-m", "ndlaplace", "--eps", "1", "--records", "100", "--samples", "200",
            "--attack", "yeom", "--repeats", "2", "--no-progress", "-q"]
    runs = {}
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        res = CliRunner().invoke(app, args + ["--n-jobs", str(jobs), "--out", str(out)])
        assert res.exit_code in (0, 1), res.output
        runs[jobs] = json.loads((out / "results.json").read_text())
    for key in ("epsilon_lower_bound", "counts", "event"):
        assert runs[1]["epsilon_estimate"][key] == runs[2]["epsilon_estimate"][key]
    assert runs[1]["parts"]["attacks"] == "ok"
    assert [(a["name"], a.get("epsilon_lower_bound"), a.get("auc")) for a in runs[1]["attacks"]] == \
        [(a["name"], a.get("epsilon_lower_bound"), a.get("auc")) for a in runs[2]["attacks"]]
    assert runs[2]["provenance"]["parameters"]["n_jobs"] == 2
    bad = CliRunner().invoke(app, args + ["--n-jobs", "0", "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "--n-jobs must be" in bad.output and "Traceback" not in bad.output


def test_a_test_that_cannot_decide_takes_no_share_of_alpha(tmp_path: Path) -> None:
    """A vector release under a replace claim: no membership bound applies (the one-run bound is about add/remove
    membership; the classifier attacks do not apply to a vector), so the ε estimate is the only test that can
    decide — decided before any test's sample is drawn — and it is certified at the audit's full α."""
    (tmp_path / "mean.py").write_text("import numpy as np\n\ndef mean(X, epsilon, rng):\n"
                                      "    X = np.clip(X, -15, 15)\n"
                                      "    return X.mean(axis=0) + rng.laplace(scale=60 / (len(X) * epsilon), size=2)\n")
    cfg = AuditConfig(target=TargetOptions(mechanism=f"{tmp_path}/mean.py:mean", output="vector"),
                      claim=ClaimOptions(epsilon=1.0, neighbours="replace"), budget=Budget(samples=2000),
                      attack=AttackOptions(attacks=("yeom", "lira", "tracing"), repeats=1), parts=("epsilon", "attacks"))
    results = run_audit(cfg, _data(), tmp_path / "run", progress=False).to_dict()
    conf = results["confidence"]
    assert conf["tests"] == ["ε estimate"] and conf["certified_tests"] == 1 and conf["per_test"] == 0.95
    assert set(conf["not_deciding"]) == {"yeom", "lira", "tracing"}
    assert "vector" in conf["not_deciding"]["yeom"] and "replace" in conf["not_deciding"]["lira"]
    assert results["epsilon_estimate"]["confidence"] == 0.95
    assert "95 % per test" in results["verdict_table"][0]["statistic"]
    lira = next(a for a in results["attacks"] if a["name"] == "lira")
    assert lira["confidence"] == 0.95  # its figures, per repeat too, at the audit's level


def test_code_that_releases_nothing_is_said_once_and_no_part_runs(tmp_path: Path, plugin: Path) -> None:
    """Every first call fails: the smoke part fails with the first error in full, every other part is skipped
    (not run, so no seven attacks failing one by one), the part list and the conclusion say it once."""
    cfg = AuditConfig(target=TargetOptions(mechanism=f"{plugin}:shape", output="points"),
                      claim=ClaimOptions(epsilon=1.0), budget=Budget(samples=300),
                      attack=AttackOptions(attacks=("shokri", "yeom", "label-only", "reconstruction"), repeats=1))
    results = run_audit(cfg, _data(), tmp_path, progress=False).to_dict()
    parts = results["parts"]
    assert parts["smoke"].startswith("failed: the audited code released nothing") and "shape (90, 2)" in parts["smoke"]
    assert all(parts[p].startswith("skipped: the audited code released nothing") for p in ("epsilon", "attacks"))
    assert not results.get("attacks") and results["verdict_table"] == [] and results["verdict"] == "inconclusive"
    text = results["conclusion"]["text"]
    assert text.count("released nothing") == 1 and "epsilon, attacks, utility parts could not run" in text
    html = (tmp_path / "report.html").read_text()
    assert "skipped: the audited code released nothing" in html and ">ok<" not in html


def test_the_part_list_names_the_attacks_that_failed(tmp_path: Path) -> None:
    """The code releases at first, then fails: the attacks part is not "ok" — it names each attack that failed
    and in how many repeats, with the first error in full."""
    from dpaudit.audit.results import AuditResults
    from dpaudit.audit.run import attacks_status

    results = AuditResults(title="t", mechanism={}, execution={}, dataset={}, confidence={}, provenance={})
    results.attacks = [{"name": "yeom", "status": "error", "repeats_failed": 2, "errors": ["raises in target: boom at line 3"]},
                       {"name": "tracing", "status": "not-applicable"}]
    assert attacks_status(results, 2) == "failed: yeom (2 of 2 repeats); first error: raises in target: boom at line 3"
    results.attacks.append({"name": "lira", "status": "ok"})
    assert attacks_status(results, 2).startswith("partly failed: yeom (2 of 2 repeats)")
