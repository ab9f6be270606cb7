"""`dpaudit attack` end to end, bad input, error isolation, and the thesis ε trend."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit.attack.config import AttackConfig
from dpaudit.attack.run import run_attack
from dpaudit.attacks.epsilon import Budget
from dpaudit.cli import app
from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions

MEMBERSHIP_KEYS = {"advantage", "auc", "tpr_at_1pct_fpr", "tpr_at_0_1pct_fpr", "epsilon_lower_bound",
                   "advantage_ceiling"}


def test_cli_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["attack", "--mechanism", "ndlaplace", "--eps", "1", "--records", "400",
                                   "--repeats", "1", "--out", str(out), "--json", str(tmp_path / "r.json"),
                                   "--no-progress"])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "results.json").read_text())
    assert data == json.loads((tmp_path / "r.json").read_text())
    assert data["complete"] is True
    names = [a["name"] for a in data["attacks"]]
    assert names == ["shokri", "yeom", "label-only", "reconstruction", "lira", "rmia", "tracing"]
    for a in data["attacks"]:
        if a["name"] == "tracing":  # vector releases only
            assert a["status"] == "not-applicable" and "vector" in a["reason"], a
            continue
        assert a["status"] == "ok", a
        if a["name"] == "reconstruction":
            assert {"success_rate", "median_error", "baseline_success_rate"} <= set(a)
        else:
            assert MEMBERSHIP_KEYS <= set(a)
            assert "Steinke" in a["epsilon_lower_bound_method"] and a["confidence"] == 0.95
            assert {"correct", "guesses"} <= set(a["counts"])
            # ndlaplace's claim is metric (d_x): the add/remove bound gets no verdict.
            assert a["epsilon_lower_bound_comparable"] is False and "metric" in a["epsilon_lower_bound_scope"]
            assert "epsilon_lower_bound_exceeds_claim" not in a
    assert data["mechanism"]["claim"]["neighbours"] == "metric"
    assert {"dpaudit_version", "command", "seed", "parameters", "dataset", "package_versions", "timings",
            "warnings"} <= set(data)
    assert "X" not in data["dataset"]  # a summary, never the records
    report = (out / "report.md").read_text()
    assert "| Shokri |" in report and "advantage" in res.output


@pytest.mark.parametrize("args, message", [
    (["--mechanism", "nope", "--eps", "1"], "unknown mechanism"),
    (["--mechanism", "ndlaplace", "--eps", "1", "--attack", "magic"], "unknown attack"),
    (["--mechanism", "ndlaplace", "--eps", "1", "--dataset", "nope"], "unknown dataset"),
    (["--mechanism", "ndlaplace", "--eps", "0"], "must be > 0"),
    (["--mechanism", "ndlaplace", "--eps", "nan"], "NaN"),
    (["--mechanism", "ndlaplace", "--eps", "1", "--records", "30"], "too few"),
])
def test_bad_input_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["attack", *args, "--out", str(tmp_path / "x")])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.output


def test_failing_attack_is_recorded_and_others_run(tmp_path: Path) -> None:
    """The plug-in works on the target's size only: reconstruction's noise probe on the shadow data fails."""
    plugin = tmp_path / "plug.py"
    plugin.write_text(
        "import numpy as np\n"
        "def perturb(X, epsilon, rng):\n"
        "    if len(X) > 100:\n"
        "        raise RuntimeError('too many records')\n"
        "    return X + rng.laplace(scale=1 / epsilon, size=X.shape)\n")
    res = CliRunner().invoke(app, ["attack", "--mechanism", f"{plugin}:perturb", "--output", "points", "--eps", "1",
                                   "--records", "400", "--repeats", "1", "--attack", "yeom,reconstruction",
                                   "--epsilon-estimate", "off", "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 3, res.output  # a part could not run: incomplete (README, "Exit status")
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    by = {a["name"]: a for a in data["attacks"]}
    assert by["yeom"]["status"] == "ok"
    assert by["reconstruction"]["status"] == "error" and "too many records" in by["reconstruction"]["errors"][0]


def test_advantage_shrinks_at_tiny_epsilon() -> None:
    """ε = 0.05: noise of mean radius 40 on data spread over ~20 units; nothing to learn.

    500 fair-coin candidates (≈ 250 members) per repeat: TPR − FPR at a fixed threshold has sd
    ≈ √(2·0.25/250) ≈ 0.045; the mean of 2 repeats ≈ 0.032, so |advantage| < 0.13 (4 sd).  The
    one-run bound on 500 guesses: with no signal it is 0 except with probability ≤ α, and the
    ≈ 0.025 leakage of ε = 0.05 moves accuracy by < 0.013, far below the one-sided margin ≈ 0.037.
    Null AUC with 250 + 250 scores has sd √(501/(12·250²)) ≈ 0.026 (≈ 0.018 for the mean of 2), so
    0.1 is > 5 sd.  A bound ≥ 0.2 needs accuracy ≥ 0.576 on the 1000 pooled guesses (≈ 4.8 sd above
    0.5); ≥ 0.3 per repeat needs ≥ 0.611 on 500 guesses (≈ 5 sd).
    """
    cfg = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=0.05),
                       attack=AttackOptions(attacks=("shokri", "yeom"), repeats=2), seed=11, epsilon_estimate="off")
    res = run_attack(cfg).to_dict()
    for a in res["attacks"]:
        assert a["status"] == "ok"
        assert abs(a["advantage"]) < 0.13 and abs(a["auc"] - 0.5) < 0.1
        assert a["epsilon_lower_bound"] < 0.2
        assert all(e < 0.3 for e in a["epsilon_lower_bound_per_repeat"])


def test_same_seed_same_numbers() -> None:
    cfg = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=2.0),
                       data=DataOptions(records=400), attack=AttackOptions(attacks=("yeom", "reconstruction"), repeats=2),
                       seed=5, budget=Budget(releases=20_000))  # the attacks' numbers and the estimate's, a small plan
    a, b = run_attack(cfg).to_dict(), run_attack(cfg).to_dict()
    assert a["attacks"] == b["attacks"]


@pytest.mark.slow
def test_thesis_figure_5_5_trend() -> None:
    """Advantage rises with ε (thesis Fig. 5.5), for Yeom's loss attack on nD-Laplace releases.

    10 repeats of 250 + 250 records per ε (the thesis sweep, seed 0 as in the benchmark). The
    advantage's sd over repeats is ≈ 0.04, so the mean has sd ≈ 0.013 and a difference of two
    means ≈ 0.018; the benchmark measures 0.006 / 0.086 / 0.151 at ε = 0.05 / 5 / 9, so gaps of
    0.03 (≥ 2.5 sd below the measured gaps) are required.  dpaudit's Shokri attack queries
    members plainly and shows almost no trend (README, "Attacks — benchmarks"); it must stay
    below the ceiling tanh(ε/2) within noise.
    """
    means, shokri = {}, {}
    for eps in (0.05, 5.0, 9.0):
        attacks = AttackOptions(attacks=("yeom", "shokri") if eps == 0.05 else ("yeom",), repeats=10)
        res = run_attack(AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=eps),
                                      attack=attacks, seed=0)).to_dict()
        by = {a["name"]: a for a in res["attacks"]}
        means[eps] = by["yeom"]["advantage"]
        if "shokri" in by:
            shokri[eps] = by["shokri"]
    assert means[0.05] + 0.03 < means[5.0] and means[5.0] + 0.03 < means[9.0], means
    # ε = 0.05: ceiling 0.025; 2.5 sd of a 10-repeat mean (≈ 0.013) above it is the noise allowance.
    assert shokri[0.05]["advantage"] < shokri[0.05]["advantage_ceiling"] + 0.033


def test_results_written_as_they_come() -> None:
    """on_update sees a partial dict after each repeat, then the complete one (what Ctrl-C leaves)."""
    seen: list[tuple[str, int]] = []
    cfg = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=1.0),
                       data=DataOptions(records=400), attack=AttackOptions(attacks=("yeom",), repeats=2), seed=3,
                       epsilon_estimate="off")
    res = run_attack(cfg, on_update=lambda r: seen.append((r["status"], r["timings"]["repeats_done"]))).to_dict()
    assert seen == [("partial", 1), ("partial", 2), ("complete", 2)]
    roc = res["attacks"][0]["roc"]
    fewest = min(r["n_non_members"] for r in res["attacks"][0]["per_repeat"])
    # Cut where the sample resolves it: nothing below FPR 1/n_non-members of any repeat.
    assert 1.0 / fewest <= roc["fpr"][0] < 1.26 / fewest and roc["fpr"][-1] == 1.0 and roc["tpr"][-1] == 1.0
    assert all(a <= b for a, b in zip(roc["tpr"], roc["tpr"][1:]))  # a ROC curve never falls
    assert res["provenance"]["seed"] == 3 and "packages" in res["provenance"]


def test_shadow_data_disjoint_from_scored_records() -> None:
    """Thresholds come from shadow targets: their records never include the scored members/non-members."""
    from dpaudit.attack.repeat import prepare_trial
    from dpaudit.attack.run import build_mechanism
    from dpaudit.attacks.membership.shadow import train_shadow_targets
    from dpaudit.data import datasets
    cfg = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=1.0),
                       data=DataOptions(records=400), attack=AttackOptions(attacks=("yeom",), repeats=1))
    ds = datasets.load("blobs-2d", records=400)
    trial = prepare_trial(cfg.attack, ds.X, 4, np.random.SeedSequence(0), lambda: build_mechanism(cfg, ds, 4))
    scored = {tuple(r) for r in np.vstack([trial.members, trial.non_members])}
    assert not scored & {tuple(r) for r in trial.shadow}
    for run in train_shadow_targets(trial.knowledge, 3, np.random.default_rng(0)):
        used = {tuple(r) for r in np.vstack([run.members, run.non_members])}
        assert used <= {tuple(r) for r in trial.shadow} and not used & scored


@pytest.mark.parametrize("mechanism", ["ndlaplace", "identity"])
def test_no_record_value_in_any_attack_output(tmp_path: Path, mechanism: str) -> None:
    """Seed the audited CSV with distinctive values; no output file (or stdout) may contain any of them.

    ``identity`` releases the records verbatim: whatever the attacks see, the report must not repeat it.
    """
    X = np.random.default_rng(3).normal(size=(120, 2))
    X[:, 0] += 123.456789
    X[11, 1] = 987.654321
    csv = tmp_path / "secret.csv"
    np.savetxt(csv, X, delimiter=",", header="a,b", comments="", fmt="%.6f")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["attack", "-m", mechanism, "--eps", "1", "--data", str(csv), "--repeats", "1",
                                   "--out", str(out), "--json", str(tmp_path / "copy.json"), "--no-progress"])
    assert res.exit_code == 0, res.output
    files = [p for p in out.iterdir() if p.is_file()] + [tmp_path / "copy.json"]
    assert {"results.json", "results.csv", "report.md", "report.html"} <= {p.name for p in files}
    needles = [b"123.45", b"123,45", b"987.65", b"987,65", b"1.2345", b"9.8765"]
    for v in X[:, 0]:  # every record's first value to 4 decimals, as it would appear in JSON/CSV/Markdown
        s = f"{v:.6f}"
        needles.append(s[: s.index(".") + 5].encode())
    for path in files:
        blob = path.read_bytes()
        for needle in needles:
            assert needle not in blob, (path.name, needle)
    for needle in needles:
        assert needle.decode() not in res.output


def test_bounds_dataset_uses_the_public_box(tmp_path: Path) -> None:
    """-p bounds=dataset means the built-in dataset's public box (as in sweep and audit)."""
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["attack", "-m", "dpkccm", "--eps", "1", "--records", "80", "--repeats", "1",
                                   "--attack", "yeom", "-p", "n_clusters=4", "-p", "bounds=dataset", "--out", str(out),
                                   "--releases", "3000", "--no-progress"])
    assert res.exit_code == 0, res.output
    from dpaudit.data import datasets
    lo, hi = datasets.load("blobs-2d").bounds
    params = json.loads((out / "results.json").read_text())["parameters"]
    assert np.allclose(params["params"]["bounds"], [lo.tolist(), hi.tolist()])


def test_label_only_failing_is_a_recorded_error_and_the_others_run(tmp_path: Path, monkeypatch) -> None:
    import dpaudit.attacks.membership.label_only as label_only

    def fails(*args, **kwargs):
        raise RuntimeError("HopSkipJump could not finish")

    monkeypatch.setattr(label_only, "boundary_distances", fails)
    res = CliRunner().invoke(app, ["attack", "--mechanism", "ndlaplace", "--eps", "1", "--records", "400",
                                   "--repeats", "1", "--attack", "yeom,label-only", "--out", str(tmp_path / "r"),
                                   "--epsilon-estimate", "off", "--no-progress"])
    assert res.exit_code == 3, res.output  # label-only could not finish: incomplete
    status = {a["name"]: a for a in json.loads((tmp_path / "r" / "results.json").read_text())["attacks"]}
    assert status["yeom"]["status"] == "ok"
    assert status["label-only"]["status"] != "ok" and "HopSkipJump" in json.dumps(status["label-only"])


def test_ctrl_c_says_where_the_partial_results_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dpaudit.attack.run as attack_run  # the command imports run_attack from here when it runs

    def interrupted(config, *, command, on_update, progress, dataset=None):  # one repeat saved, then Ctrl-C
        on_update({"kind": "attack", "status": "interrupted", "attacks": []})
        raise KeyboardInterrupt

    monkeypatch.setattr(attack_run, "run_attack", interrupted)
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["attack", "-m", "ndlaplace", "--eps", "1", "--records", "80", "--out", str(out)])
    assert res.exit_code == 130
    assert f"partial results (finished repeats) in {out / 'results.json'}" in res.stderr
    assert (out / "results.json").is_file()


def test_ctrl_c_before_anything_is_certified_claims_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import dpaudit.attacks.epsilon

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(dpaudit.attacks.epsilon, "estimate_epsilon", interrupted)
    res = CliRunner().invoke(app, ["estimate-eps", "-m", "ndlaplace", "--eps", "1", "--samples", "100",
                                   "--out", str(tmp_path / "run")])
    assert res.exit_code == 130 and res.stderr.strip().splitlines()[-1] == "Interrupted."
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert data["status"] == "interrupted" and data["verdict"] == "inconclusive"


def test_vector_release_is_attacked_not_refused(tmp_path: Path) -> None:
    """An aggregate release (--output vector) used to fail every attack ("cannot attack a vector release with a
    classifier"): now tracing, LiRA and RMIA measure it and the classifier attacks say they do not apply."""
    plugin = Path(__file__).parent / "plugins" / "aggregates.py"
    res = CliRunner().invoke(app, ["attack", "--mechanism", f"{plugin}:leaky_sum", "--output", "vector", "--eps", "1",
                                   "--records", "400", "--repeats", "1", "--reference-runs", "4",
                                   "--epsilon-estimate", "off", "--out", str(tmp_path / "run"), "--no-progress"])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    status = {a["name"]: a["status"] for a in data["attacks"]}
    assert status == {"shokri": "not-applicable", "yeom": "not-applicable", "label-only": "not-applicable",
                      "reconstruction": "not-applicable", "lira": "ok", "rmia": "ok", "tracing": "ok"}
    assert data["measured"] is True and "nothing was measured" not in res.output
    assert "n/a" in res.output and "shokri, yeom, label-only: they query a classifier" in res.output
    lira = next(a for a in data["attacks"] if a["name"] == "lira")
    assert lira["epsilon_lower_bound_comparable"] is True and lira["mechanism_calls_per_repeat"] == [4]


def test_candidates_option_grows_the_candidate_set() -> None:
    from dpaudit.options import OptionError

    assert AttackOptions(candidates=1201).split_sizes(2000) == (800, 600)  # rounded down to even; the rest public
    with pytest.raises(OptionError, match="candidates 1990 leaves 10 of the 2000 records") as too_many:
        AttackOptions(candidates=1990).split_sizes(2000)
    with pytest.raises(OptionError, match="candidates must be a whole number ≥ 20") as too_few:
        AttackOptions(candidates=5)
    with pytest.raises(OptionError, match="reference_runs must be a whole number ≥ 2") as one_run:
        AttackOptions(reference_runs=1)
    assert [e.value.field for e in (too_many, too_few, one_run)] == ["candidates", "candidates", "reference_runs"]
    bad = CliRunner().invoke(app, ["attack", "-m", "ndlaplace", "--eps", "1", "--candidates", "5"])
    assert bad.exit_code == 2 and "--candidates must be a whole number ≥ 20, got 5" in bad.output
