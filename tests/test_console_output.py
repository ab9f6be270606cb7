"""What the commands print: the attack headline concludes, every column is defined, tables fit in 100
columns, files are listed, progress reaches a pipe, and reports are never silently overwritten."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app
from dpaudit.execution.verdict import Verdict
from dpaudit.progress import RunProgress
from dpaudit.verdicts.attack_conclusion import conclude

ANSI = re.compile(r"\x1b\[")
METRIC = {"epsilon": 1.0, "delta": 0.0, "neighbours": "metric"}
ADD_REMOVE = {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}


def _attack(tmp_path: Path, *args: str) -> object:
    return CliRunner().invoke(app, ["attack", "--records", "400", "--repeats", "2", "--out", str(tmp_path / "run"),
                                    *args])


@pytest.fixture(scope="module")
def headline(tmp_path_factory: pytest.TempPathFactory):
    """The headline command, made small: ndlaplace (a metric claim) at ε = 1, every attack."""
    tmp = tmp_path_factory.mktemp("headline")
    res = _attack(tmp, "--mechanism", "ndlaplace", "--eps", "1", "--samples", "500")
    assert res.exit_code == 0, res.output
    return res, tmp / "run"


def test_headline_says_what_was_attacked_before_the_table(headline) -> None:
    res, _ = headline
    out = res.stdout
    table_at = out.index("Membership inference")
    before = out[:table_at]
    assert "Attacked" in before and "ndlaplace" in before and "ε = 1 per unit distance (metric)" in before
    assert "blobs-2d: 400 records × 2 features" in before
    assert "2 repeats" in before and "100 candidates" in before
    per_repeat = re.search(r"members/non-members per repeat: (\d+)/(\d+), (\d+)/(\d+)", " ".join(before.split()))
    assert per_repeat and int(per_repeat.group(1)) + int(per_repeat.group(2)) == 100


def test_headline_defines_every_column_and_both_ceilings(headline) -> None:
    res, _ = headline
    flat = " ".join(res.stdout.split())
    for column in ("attack", "advantage", "AUC", "TPR @ 1 % FPR", "ε_lb", "vs claim", "recovered within r",
                   "prior-only baseline", "median error"):
        assert column in flat
    assert "± standard deviation over the 2 repeats" in flat
    assert "advantage ceiling (e^ε−1)/(e^ε+1) = 0.462 for ε = 1" in flat
    assert "sample-size ceiling" in flat and "success radius r =" in flat
    assert "n/c = not comparable with a metric (d_x) claim" in flat
    # 400 records: about 50 non-members per repeat, too few for 1 % FPR
    assert "n/a (needs ≥ 100 non-members)" in flat
    assert "ceiling  " not in res.stdout  # no bare "ceiling" column: the two ceilings have their own names


def test_headline_concludes_in_one_quotable_line(headline) -> None:
    res, run = headline
    lines = res.stdout.rstrip().splitlines()
    assert lines[-1].startswith("Conclusion: Consistent with ε = 1 per unit distance: certified ε_lb = ")
    assert "(ε estimate, 95% confidence)" in lines[-1]
    import json
    data = json.loads((run / "results.json").read_text())
    assert data["conclusion"]["verdict"] == Verdict.NO_VIOLATION and data["epsilon_estimate"]["status"] == "ok"
    assert data["epsilon_estimate"]["claim"]["neighbours"] == "metric"


def test_tables_fit_in_100_columns_and_a_pipe_gets_no_escape_codes(headline) -> None:
    res, _ = headline
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines if not line.startswith("Conclusion:")) <= 100  # quoted whole
    assert not ANSI.search(res.stdout) and not ANSI.search(res.stderr)


def test_every_file_written_is_listed(headline) -> None:
    res, run = headline
    listed = res.stderr.strip().splitlines()[-1]
    assert listed.startswith(f"wrote {len(list(run.iterdir()))} files in {run}")
    for path in run.iterdir():
        assert path.name in listed


def test_progress_reaches_a_pipe_as_plain_lines(headline) -> None:
    res, _ = headline
    lines = [line for line in res.stderr.splitlines() if line.startswith("attack ndlaplace ε=1:")]
    assert any("% done after" in line for line in lines) and lines[-1].startswith("attack ndlaplace ε=1: finished")
    assert len(lines) <= 25  # one per repeat / per 10 %, not one per chunk


def test_violation_headline(tmp_path: Path) -> None:
    """The thesis's Algorithm 2 as printed (data-derived box, resampling at ε) breaks its metric claim."""
    res = _attack(tmp_path, "-m", "ndlaplace-thesis", "--eps", "1", "--attack", "yeom", "-p", "bounds=null",
                  "--releases", "50000", "--quiet")
    assert res.exit_code == 0, res.output
    last = res.stdout.rstrip().splitlines()[-1]
    assert last.startswith("Conclusion: VIOLATION: the claim ε = 1 per unit distance cannot hold — certified ε_lb = ")
    assert all(line.startswith("PrivacyLeakWarning: ") for line in res.stderr.splitlines())  # --quiet


def test_quiet_prints_no_progress_and_no_file_list(tmp_path: Path) -> None:
    res = _attack(tmp_path, "-m", "ndlaplace", "--eps", "2", "--attack", "yeom", "--epsilon-estimate", "off",
                  "--repeats", "1", "--quiet")
    assert res.exit_code == 0, res.output
    assert res.stderr == "" and res.stdout.rstrip().splitlines()[-1].startswith("Conclusion: NOT TESTED")


def test_an_existing_report_is_never_silently_overwritten(tmp_path: Path) -> None:
    args = ("-m", "ndlaplace", "--eps", "1", "--attack", "yeom", "--repeats", "1", "--epsilon-estimate", "off", "-q")
    assert _attack(tmp_path, *args).exit_code == 0
    stale = tmp_path / "run" / "fig-old.png"
    stale.write_bytes(b"x")
    res = _attack(tmp_path, *args)
    assert res.exit_code == 2 and "already holds a report" in res.stderr and "--force" in res.stderr
    res = _attack(tmp_path, *args, "--force")
    assert res.exit_code == 0 and not stale.exists()


def test_sweep_writes_a_new_folder_and_refuses_an_old_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["sweep", "-m", "ndlaplace", "--eps", "1", "--repeats", "1", "--records", "50", "--clusterers", "kmeans",
            "-q"]
    first, second = CliRunner().invoke(app, args), CliRunner().invoke(app, args)
    assert first.exit_code == 0 and second.exit_code == 0, (first.output, second.output)
    runs = sorted((tmp_path / "reports").iterdir())
    assert len(runs) == 2  # the default folder is new every time
    res = CliRunner().invoke(app, [*args, "--out", str(runs[0])])
    assert res.exit_code == 2 and "already holds" in res.stderr
    res = CliRunner().invoke(app, [*args, "--out", str(runs[0]), "--force"])
    assert res.exit_code == 0, res.output


# ---- the conclusion rule -------------------------------------------------------------------------
def _results(claim: dict, attacks: list[dict] = (), estimate: dict | None = None, findings: list | None = None):
    out = {"mechanism": {"claim": claim}, "attacks": list(attacks)}
    if estimate is not None:
        out["epsilon_estimate"] = estimate
    if findings is not None:
        out["findings"] = findings
    return out


def _mia(lb: float, comparable: bool = True, **extra) -> dict:
    return {"name": "yeom", "status": "ok", "epsilon_lower_bound": lb, "epsilon_lower_bound_comparable": comparable,
            "confidence": 0.95, **extra}


ESTIMATE_OK = {"status": "ok", "epsilon_lower_bound": 0.7, "verdict": "no violation found", "confidence": 0.95}


@pytest.mark.parametrize("results, verdict, words", [
    (_results(ADD_REMOVE, [_mia(1.4)]), Verdict.VIOLATION, "certified ε_lb = 1.4 > 1 (yeom one-run membership bound"),
    (_results(METRIC, [_mia(3.0, comparable=False)], ESTIMATE_OK), Verdict.NO_VIOLATION, "ε_lb = 0.7 per unit distance ≤ 1"),
    (_results(METRIC, [_mia(0.0, comparable=False)]), Verdict.INCONCLUSIVE, "no certified test applies"),
    (_results(ADD_REMOVE, [_mia(0.2), {"name": "shokri", "status": "error", "repeats_failed": 2}]), Verdict.INCONCLUSIVE,
     "shokri failed in 2 repeat(s)"),
    (_results(METRIC, [], {"status": "error", "error": "ValueError: boom"}), Verdict.INCONCLUSIVE, "ε estimate failed"),
    (_results(METRIC, [], {**ESTIMATE_OK, "verdict": "inconclusive", "guarantee": "No bound. Findings."}),
     Verdict.INCONCLUSIVE, "ε estimate was inconclusive"),
    (_results(ADD_REMOVE, [_mia(0.2)], findings=[{"kind": "timeout", "blocking": True}]), Verdict.INCONCLUSIVE,
     "misbehaved (timeout"),
    (_results(ADD_REMOVE, [_mia(0.2)], findings=[{"kind": "mutates-input", "blocking": False}]), Verdict.NO_VIOLATION,
     "Consistent with ε = 1"),
    (_results(METRIC, [], {**ESTIMATE_OK, "epsilon_lower_bound": 3.8, "verdict": "violation"}), Verdict.VIOLATION,
     "ε = 1 per unit distance cannot hold"),
    (_results({"epsilon": "inf", "neighbours": "add-remove"}, [_mia(0.9, advantage=0.5)]), Verdict.NO_CLAIM,
     "nothing to violate"),
])
def test_conclusion_rule(results: dict, verdict: str, words: str) -> None:
    got = conclude(results)
    assert got["verdict"] == verdict and words in got["text"], got
    assert "\n" not in got["text"]


def test_a_violation_wins_over_a_failed_part() -> None:
    got = conclude(_results(ADD_REMOVE, [_mia(2.0), {"name": "shokri", "status": "error", "repeats_failed": 1}]))
    assert got["verdict"] == Verdict.VIOLATION


# ---- progress ------------------------------------------------------------------------------------
class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_is_weighted_by_step_cost() -> None:
    """A cheap first step (1 of 10 cost units) done in 10 s leaves 90 s, not 10 s (a count would say 1 of 2)."""
    clock = _Clock()
    p = RunProgress("x", [("cheap", 1.0), ("dear", 9.0)], mode="off", clock=clock)
    p.start("cheap")
    clock.now = 10.0
    p.finish()
    assert p.fraction() == pytest.approx(0.1) and p.eta() == pytest.approx(90.0)
    p.start("dear")
    p.advance(0.5)
    clock.now = 55.0
    assert p.fraction() == pytest.approx(0.55) and p.eta() == pytest.approx(45.0)


def test_lines_mode_prints_one_line_per_group_and_per_ten_percent() -> None:
    clock, out = _Clock(), io.StringIO()
    plan = [(f"repeat {r}/2 · {a}", 1.0) for r in (1, 2) for a in ("a", "b", "c", "d", "e")]
    p = RunProgress("run", plan, mode="lines", stream=out, clock=clock)
    for name, _ in plan:
        clock.now += 2.0
        p.start(name)
        for i in range(1, 11):
            p.advance(i / 10)
    p.close()
    lines = out.getvalue().splitlines()
    assert sum(bool(re.match(r"run: \d+% done after", line)) for line in lines) == 9  # 10 %, …, 90 %
    assert [line.split(" (")[0] for line in lines if "…" in line] == ["run: repeat 1/2 …", "run: repeat 2/2 …"]
    assert lines[-1] == "run: finished in 20 s"


def test_heartbeat_without_a_total_and_silence_when_off() -> None:
    clock, out = _Clock(), io.StringIO()
    p = RunProgress("est", mode="lines", stream=out, clock=clock, unit="chunks")
    p.start("certifying")
    for _ in range(40):
        clock.now += 1.0
        p.update(1)
    assert out.getvalue().count("chunks done after") == 2  # at 15 s and 30 s
    quiet = io.StringIO()
    q = RunProgress("est", [("a", 1.0)], mode="off", stream=quiet)
    q.start("a")
    q.advance(0.5)
    q.close()
    assert quiet.getvalue() == ""


def test_report_out_never_overwrites_another_runs_folder(tmp_path: Path) -> None:
    """``dpaudit report A --out B`` where B holds run B's report: refused (exit 2, one line) unless --force, which
    replaces B's files with A's report and A's results.json — the folder then describes one run, A."""
    args = ("-m", "ndlaplace", "--attack", "yeom", "--repeats", "1", "--epsilon-estimate", "off", "-q")
    for name, eps in (("a", "1"), ("b", "2")):
        res = CliRunner().invoke(app, ["attack", *args, "--eps", eps, "--out", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
    before = (tmp_path / "b" / "report.md").read_bytes()
    res = CliRunner().invoke(app, ["report", str(tmp_path / "a"), "--format", "md", "--out", str(tmp_path / "b")])
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and "already holds a report" in lines[0] and "--force" in lines[0]
    assert (tmp_path / "b" / "report.md").read_bytes() == before
    res = CliRunner().invoke(app, ["report", str(tmp_path / "a"), "--format", "md", "--out", str(tmp_path / "b"),
                                   "--force"])
    assert res.exit_code == 0, res.output
    stored = json.loads((tmp_path / "b" / "results.json").read_text())
    assert stored["mechanism"]["claim"]["epsilon"] == 1.0  # run A's results beside run A's report
    assert not (tmp_path / "b" / "report.html").exists()  # nothing of run B is left
    res = CliRunner().invoke(app, ["report", str(tmp_path / "a"), "--format", "md"])  # beside its own results
    assert res.exit_code == 0, res.output
