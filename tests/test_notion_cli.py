"""Claims in a notion on every command: ``--rho``, ``--mu``, ``--rdp``, ``--profile`` on ``attack``, ``audit``,
``estimate-eps`` and ``sweep`` — parsed into the config, a bad value one ``Error:`` line and exit 2, the
``Conclusion:`` naming the notion end to end, and the report's curve figure and text present for a notion claim
and absent for an (ε, δ) claim."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Callable, cast

import pytest
import typer
from typer.testing import CliRunner

from dpaudit.attack.config import AttackConfig
from dpaudit.attacks.epsilon import Budget
from dpaudit.audit.config import AuditConfig
from dpaudit.cli import app
from dpaudit.estimate.config import EstimateConfig
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.mechanisms.notions import GaussianDP, PrivacyProfile, RenyiDP, ZeroCDP
from dpaudit.options import AttackOptions, ClaimOptions, TargetOptions
from dpaudit.sweep.config import SweepConfig
from dpaudit.verdicts.sentences import curve_sentence, violation_text

runner = CliRunner()
COMMANDS = ("attack", "audit", "estimate-eps", "sweep")
OPTIONS = ("--rho", "--mu", "--rdp", "--profile")
PROFILE = "epsilon,delta\n0.5,0.01\n1.0,1e-5\n2.0,1e-9\n"

LAPLACE = TargetOptions(mechanism="laplace")
CONFIGS: dict[str, Callable[..., Any]] = {
    "attack": lambda **kw: AttackConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0, notions=kw),
                                        attack=AttackOptions(attacks=("yeom",))),
    "audit": lambda **kw: AuditConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0, notions=kw)),
    "estimate-eps": lambda **kw: EstimateConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0, notions=kw)),
    "sweep": lambda **kw: SweepConfig(target=LAPLACE, claim=ClaimOptions(notions=kw), epsilons=(1.0,),
                                      epsilon_bound=True, budget=Budget(samples=1000)),
}
# Each command with small valid arguments (nothing runs: every case below is refused at the boundary).
BASE = {
    "attack": ["attack", "-m", "laplace", "--eps", "1", "--records", "80", "-r", "1"],
    "audit": ["audit", "-m", "laplace", "--eps", "1", "--attack", "none", "--samples", "100"],
    "estimate-eps": ["estimate-eps", "-m", "laplace", "--eps", "1", "--samples", "100"],
    "sweep": ["sweep", "-m", "laplace", "--eps", "1", "-r", "1", "--clusterers", "none", "--epsilon-bound"],
}


@pytest.fixture()
def profile_csv(tmp_path: Path) -> Path:
    path = tmp_path / "profile.csv"
    path.write_text(PROFILE)
    return path


def _value(option: str, profile: Path) -> tuple[str, Any]:
    """(the command line's value, the notion it states)."""
    return {"--rho": ("0.5", ZeroCDP(0.5)), "--mu": ("1", GaussianDP(1.0)),
            "--rdp": ("8:1.9,2:0.5", RenyiDP((2.0, 8.0), (0.5, 1.9))),
            "--profile": (str(profile), PrivacyProfile((0.5, 1.0, 2.0), (0.01, 1e-5, 1e-9)))}[option]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_the_notion_options(command: str) -> None:
    click_command = cast(Any, typer.main.get_command(app)).commands[command]
    options = {opt for param in click_command.params for opt in getattr(param, "opts", [])}
    assert set(OPTIONS) <= options


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("command", COMMANDS)
def test_the_config_carries_the_notion(command: str, option: str, profile_csv: Path) -> None:
    text, notion = _value(option, profile_csv)
    config = CONFIGS[command](**{option.lstrip("-"): float(text) if option in ("--rho", "--mu") else text})
    assert config.claim.notion() == notion
    assert config.to_dict()[option.lstrip("-")] == (float(text) if option in ("--rho", "--mu") else text)
    assert CONFIGS[command]().claim.notion() is None


BAD = [("--rho", "-1", "--rho"), ("--mu", "0", "--mu"), ("--rdp", "2=0.5", "order:epsilon"),
       ("--rdp", "1:0.5", "orders must be > 1"), ("--profile", "{d}/missing.csv", "cannot read"),
       ("--profile", "{d}/bad.csv", "rows of numbers")]


@pytest.mark.parametrize("option, value, needle", BAD)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_value_is_one_error_line(command: str, option: str, value: str, needle: str, tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("epsilon,delta\none,two\n")
    out = tmp_path / "out"
    result = runner.invoke(app, BASE[command] + [option, value.replace("{d}", str(tmp_path)), "--out", str(out)])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("Error:") and needle in lines[0], lines
    assert result.stdout == "" and not out.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_one_notion_at_most(command: str, tmp_path: Path) -> None:
    result = runner.invoke(app, BASE[command] + ["--rho", "0.5", "--mu", "1", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and result.stderr.strip() == "Error: state the claim in one notion; got --rho, --mu"


def test_a_notion_point_needs_a_positive_delta_and_a_sweep_its_estimate(tmp_path: Path) -> None:
    result = runner.invoke(app, BASE["estimate-eps"] + ["--mu", "1", "--delta", "0", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "needs δ > 0" in result.stderr
    sweep = [a for a in BASE["sweep"] if a != "--epsilon-bound"] + ["--mu", "1", "--out", str(tmp_path / "s")]
    result = runner.invoke(app, sweep)
    assert result.exit_code == 2 and "add --epsilon-bound" in result.stderr
    with pytest.raises(InvalidInputError, match="stated in ε only"):
        ClaimOptions(epsilon=1.0, neighbours="metric", notions={"rho": 0.5})


def _run(tmp_path: Path, *args: str, code: int) -> tuple[str, dict[str, Any], Path]:
    out = tmp_path / "out"
    result = runner.invoke(app, [*args, "--no-progress", "-q", "--out", str(out)])
    assert result.exit_code == code, (result.exit_code, result.stdout[-600:], result.stderr[-600:])
    line = result.stdout.strip().splitlines()[-1]
    return line, json.loads((out / "results.json").read_text()), out


ESTIMATE = ("estimate-eps", "-m", "laplace", "--eps", "1", "--releases", "4000", "--max-pairs", "2")


@pytest.mark.parametrize("args, start, code", [
    (("--mu", "0.2", "--fail-on-violation"), "VIOLATION of μ = 0.2 (GDP): certified false-positive rate ≤ ", 1),
    (("--mu", "3"), "Consistent with μ = 3 (GDP): certified false-positive rate ≤ ", 0),
    (("--rho", "0.01", "--fail-on-violation"), "VIOLATION of ρ = 0.01 (zCDP): ", 1),
    (("--rdp", "2:0.5,8:1.9"), "Consistent with ε(α) = 0.5 at α = 2, 1.9 at α = 8 (Rényi DP): ", 0),
    (("--profile", "{profile}", "--fail-on-violation"), "VIOLATION of (ε, δ) ∈ {(0.5, 0.01), (1, 1e-05), (2, 1e-09)} "
                                                        "(3 rows) (privacy profile): ", 1),
])
def test_estimate_concludes_in_the_notion(args: tuple[str, ...], start: str, code: int, tmp_path: Path,
                                          profile_csv: Path) -> None:
    line, results, _ = _run(tmp_path, *ESTIMATE, *(a.replace("{profile}", str(profile_csv)) for a in args), code=code)
    assert line.startswith("Conclusion: " + start), line
    assert results["conclusion"]["text"] == results["curve"]["conclusion"]
    assert results["conclusion"]["verdict"] == (Verdict.VIOLATION if code else Verdict.NO_VIOLATION)


def test_the_report_draws_the_claims_curve_and_states_the_profile(tmp_path: Path) -> None:
    _, results, out = _run(tmp_path, *ESTIMATE, "--mu", "0.2", code=0)
    assert (out / "fig-tradeoff-curve.png").is_file()
    md, html = (out / "report.md").read_text(), (out / "report.html").read_text()
    for text in (md, html):
        assert "The claimed trade-off curve (μ = 0.2 (GDP))" in text and "Empirical privacy profile" in text
        assert "Certified μ lower bound" in text and "Trade-off curve: μ = 0.2 (GDP)" in text
    assert "fig-tradeoff-curve.png" in md
    row = next(csv.DictReader((out / "results.csv").open()))
    assert row["run_notion_claim"] == "μ = 0.2 (GDP)" and row["run_curve_verdict"] == "VIOLATION"
    assert float(row["run_mu_lower_bound"]) == pytest.approx(results["curve"]["mu_lower_bound"])
    assert "run_epsilon_lower_bound_at_delta_1e-05" in row


def test_an_epsilon_claim_has_no_curve_part_in_its_report(tmp_path: Path) -> None:
    line, results, out = _run(tmp_path, *ESTIMATE, code=0)
    assert results["curve"] and not results["curve"]["decides_verdict"]  # reported in the JSON, beside the verdict
    assert line.startswith(("Conclusion: VIOLATION: the claim ε = 1 ", "Conclusion: Consistent with ε = 1: "))
    assert not (out / "fig-tradeoff-curve.png").exists()
    assert "trade-off curve" not in (out / "report.md").read_text()
    assert "run_mu_lower_bound" not in next(csv.DictReader((out / "results.csv").open()))


def test_attack_concludes_in_the_notion(tmp_path: Path) -> None:
    line, results, out = _run(tmp_path, "attack", "-m", "laplace", "--eps", "1", "--mu", "0.5", "--attack", "yeom",
                              "-r", "1", "--records", "80", "--releases", "2000", "--fail-on-violation", code=1)
    assert line.startswith("Conclusion: VIOLATION of μ = 0.5 (GDP): certified "), line
    assert results["mechanism"]["claim"]["notion"] == {"notion": "gdp", "mu": 0.5}
    assert (out / "fig-tradeoff-curve.png").is_file()


@pytest.mark.parametrize("args, start, claim, code", [
    (("--mu", "2"), "Consistent with μ = 2 (GDP): ", "μ = 2 (GDP): ε = ", 0),
    (("--rho", "0.01", "--fail-on-violation"), "VIOLATION of ρ = 0.01 (zCDP): ", "ρ = 0.01 (zCDP): ε = ", 1),
])
def test_audit_concludes_in_the_notion(args: tuple[str, ...], start: str, claim: str, code: int,
                                       tmp_path: Path) -> None:
    line, results, _ = _run(tmp_path, "audit", "-m", "laplace", "--eps", "1", "--attack", "none", "--releases", "4000",
                            *args, code=code)
    assert line.startswith("Conclusion: " + start), line
    row = next(r for r in results["verdict_table"] if r["part"] == "ε estimation")
    assert row["claim"].startswith(claim), row


def test_sweep_names_the_notion_and_its_cells_curve_tests(tmp_path: Path) -> None:
    line, results, out = _run(tmp_path, "sweep", "-m", "laplace", "--eps", "0.5,4", "-r", "1", "--clusterers", "none",
                              "--epsilon-bound", "--samples", "1000", "--mu", "1", code=0)
    assert line.startswith("Conclusion: NOT TESTED: a sweep measures privacy and utility per ε and certifies no "
                           "verdict on the claim μ = 1 (GDP) "), line
    assert "its trade-off curve: in " in line and "certified μ ≥ " in line
    cells = results["sweep"]["cells"]
    assert all({"curve_below_claim", "mu_lower_bound"} <= set(c["metrics"]) for c in cells)
    assert "mu_lower_bound" in (out / "results.csv").read_text()


def test_the_sentences_name_the_notion() -> None:
    claim = {"epsilon": 2.3456, "delta": 1e-5, "neighbours": "add-remove", "notion": {"notion": "zcdp", "rho": 0.5}}
    assert violation_text(claim, 3.0, "yeom", 0.95).startswith(
        "VIOLATION of ρ = 0.5 (zCDP): certified ε_lb = 3 > 2.346, its ε at δ = 1e-05 (yeom, 95% confidence")
    curve = {"decides_verdict": True, "verdict": "violation", "conclusion": "VIOLATION of ρ = 0.5 (zCDP): …"}
    assert curve_sentence(claim, {"curve": curve}, Verdict.VIOLATION) == curve["conclusion"]
    assert curve_sentence(claim, {"curve": curve}, Verdict.NO_VIOLATION) is None
    assert curve_sentence({k: v for k, v in claim.items() if k != "notion"}, {"curve": curve}, "violation") is None
