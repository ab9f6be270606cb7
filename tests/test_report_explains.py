"""The report and the console explain what they print, and never contradict themselves.

One test per item of the issue: the HTML colours a verdict by the verdict (not by the word "VIOLATION" in
it); numbers are right-aligned; a single-ε certified figure is not almost empty; the estimate's derived
seed is explained; a reason is never cut at a decimal point; the selection classifier is named; the
estimate's 30 records say why; the audit names its per-test confidence; the sweep defines its columns
and marks what is within noise; the attack marks noise and says when no membership bound applies.
(The risk table's indices and its at-chance attacks: ``tests/test_report_content.py``.)
"""

from __future__ import annotations

import html.parser
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from dpaudit.report import render_report
from dpaudit.report.figures import SINGLE_RANGE_FACTOR, all_figures, single_axis_end
from dpaudit.verdicts.attack_conclusion import conclude

CLAIM = {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}


def _results(verdict: str, **extra) -> dict:
    text = {"violation": "VIOLATION: the claim ε = 1 cannot hold",
            "no violation found": "Consistent with ε = 1: no VIOLATION found"}[verdict]
    return {"kind": "audit", "title": "t", "status": "complete", "mechanism": {"spec": "m", "claim": CLAIM},
            "verdict": verdict, "conclusion": {"verdict": "violation" if verdict == "violation" else "no violation found",
                                               "text": text},
            "verdict_table": [{"part": "ε estimation", "statistic": "certified ε lower bound", "value": 0.41,
                               "claim": "ε = 1", "verdict": verdict}], **extra}


class _Cells(html.parser.HTMLParser):
    """(tag, class, text) of every headline paragraph and table cell."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str, str, str]] = []
        self._open: tuple[str, str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("p", "td", "th"):
            self._open = (tag, dict(attrs).get("class") or "")
            self.cells.append((tag, self._open[1], ""))

    def handle_data(self, data):
        if self._open is not None:
            tag, cls, text = self.cells[-1]
            self.cells[-1] = (tag, cls, text + data)

    def handle_endtag(self, tag):
        if tag in ("p", "td", "th"):
            self._open = None


def _html_cells(results: dict, out: Path) -> list[tuple[str, str, str]]:
    render_report(results, out, ["html", "md"])
    parser = _Cells()
    parser.feed((out / "report.html").read_text())
    return parser.cells


def test_no_violation_found_is_not_painted_as_a_violation(tmp_path: Path) -> None:
    """The verdict is said once, in the banner's one word (the conclusion under it), coloured by the verdict."""
    html = _html_page(_results("no violation found"), tmp_path / "ok")
    assert '<div class="banner verdict-no-violation"' in html and '<p class="word">Consistent</p>' in html
    body = html.split("<body>", 1)[1]
    assert "verdict-violation" not in body and "NO VIOLATION FOUND" not in body and "Verdict: " not in body
    html = _html_page(_results("violation"), tmp_path / "bad")
    assert '<div class="banner verdict-violation"' in html and '<p class="word">VIOLATION</p>' in html
    assert html.index('class="banner') < html.index('class="headline"'), "the banner comes first"


def _html_page(results: dict, out: Path) -> str:
    render_report(results, out, ["html", "md"])
    return (out / "report.html").read_text()


def test_numbers_are_right_aligned_in_html_and_markdown(tmp_path: Path) -> None:
    results = _results("no violation found")
    cells = _html_cells(results, tmp_path)
    value = next(c for c in cells if c[0] == "td" and c[2] == "0.41")
    assert value[1] == "num"
    assert next(c for c in cells if c[0] == "th" and c[2] == "value")[1] == "num"
    assert next(c for c in cells if c[0] == "td" and c[2] == "ε estimation")[1] == ""
    md = (tmp_path / "report.md").read_text()
    assert "| part | statistic | value | claim | verdict |\n|---|---|---:|---|---|" in md


def test_a_single_epsilon_certified_figure_is_not_almost_empty(tmp_path: Path) -> None:
    end, drawn = single_axis_end(1.0, 0.96, 12.0)  # the main job: claim 1, bound 0.96, ceiling 12
    assert not drawn and end == pytest.approx(SINGLE_RANGE_FACTOR)  # the ceiling is named, not drawn
    assert max(1.0, 0.96) / end >= 0.6  # claim and bound fill most of the axis
    end, drawn = single_axis_end(1.0, 2.5, 3.0)
    assert drawn and 3.0 < end <= 2 * SINGLE_RANGE_FACTOR * 2.5
    est = {"claim": CLAIM, "epsilon_lower_bound": 0.96, "ceiling": 12.0, "verdict": "no violation found"}
    fig = next(f for f in all_figures({"mechanism": {"claim": CLAIM}, "epsilon_estimate": est})
               if f.name == "certified")
    width, height = struct.unpack(">II", fig.png[16:24])
    assert height <= 0.4 * width  # a strip, not a square
    assert "ceiling" in fig.caption


def test_the_estimates_derived_seed_is_explained(tmp_path: Path) -> None:
    results = {"kind": "attack", "mechanism": {"spec": "m", "claim": CLAIM}, "provenance": {"seed": 0},
               "epsilon_estimate": {"status": "ok", "claim": CLAIM, "epsilon_lower_bound": 0.5, "seed": 1519347953}}
    render_report(results, tmp_path, ["md"])
    md = (tmp_path / "report.md").read_text()
    assert "| seed of the estimate | 1519347953 (derived from the run's seed 0 by numpy's SeedSequence" in md


def test_a_reason_is_never_cut_at_a_decimal_point() -> None:
    guarantee = ("With probability at least 0.95 (α = 0.05) the mechanism's true ε is at least ε_lb = 0.4212. "
                 "One statement is certified.")
    est = {"status": "ok", "verdict": "inconclusive", "epsilon_lower_bound": 0.42, "guarantee": guarantee}
    got = conclude({"mechanism": {"claim": CLAIM}, "attacks": [], "epsilon_estimate": est})
    assert "(With probability at least 0.95 (α = 0.05) the mechanism's true ε is at least ε_lb = 0.4212)" \
        in got["text"], got["text"]


def test_the_selection_classifier_is_named() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from dpaudit.attacks.epsilon.selection.binning import ClassifierBins

    rng = np.random.default_rng(0)
    stat = ClassifierBins.fit(make_pipeline(StandardScaler(), LogisticRegression()),
                                   rng.normal(size=(50, 2)), rng.normal(1.0, size=(50, 2)))
    assert stat is not None and stat.label.startswith("logistic-regression score (the selection classifier")


def test_the_estimates_subset_says_why_it_is_small() -> None:
    import dpaudit.mechanisms
    from dpaudit.attack.certify import estimate_for_attack
    from dpaudit.attacks.epsilon import Budget

    X = np.random.default_rng(0).normal(size=(200, 2))
    est = estimate_for_attack(lambda: dpaudit.mechanisms.get("ndlaplace", epsilon=1.0), X, seed=0,
                              budget=Budget(samples=200, time_budget=None))
    assert est["records_rule"].startswith("a seeded subset of 30 of the 200 records — as estimate-eps does")
    assert "a single record moves the release most" in est["records_rule"]


def test_the_audit_names_its_per_test_confidence() -> None:
    from dpaudit.audit.output import format_verdict_table

    results = _results("no violation found", confidence={
        "overall": 0.95, "certified_tests": 4, "per_test": 0.9875,
        "tests": ["shokri", "yeom", "lira", "ε estimate"], "not_deciding": {"tracing": "vector releases only"}})
    text = " ".join(format_verdict_table(results).split())
    assert ("Each certified test runs at 98.75 % confidence: the audit's 95% split over the 4 tests that can decide "
            "(shokri, yeom, lira, ε estimate; Bonferroni); tracing cannot decide") in text
    alone = _results("no violation found", confidence={"overall": 0.95, "certified_tests": 1, "per_test": 0.95,
                                                       "tests": ["ε estimate"]})
    text = " ".join(format_verdict_table(alone).split())
    assert "runs at 95 % confidence: the audit's whole 95%: it is the only test that can decide (ε estimate)" in text


def test_the_sweep_defines_its_columns_and_marks_noise() -> None:
    from dpaudit.sweep.output import format_summary

    summary = [{"epsilon": e, "n": 3, "metrics": {
        "displacement": {"mean": 2.0 / e, "std": 0.1, "n": 3},
        "mia.yeom.advantage": {"mean": adv, "std": 0.05, "n": 3}}} for e, adv in ((0.5, -0.01), (5.0, 0.4))]
    text = format_summary({"sweep": {"repeats": 3, "summary": summary}})
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()[:1].isdigit()}
    assert rows["0.5"].rstrip().endswith("~") and not rows["5"].rstrip().endswith("~")
    flat = " ".join(text.split())
    assert "± standard deviation over the repeats (3 per ε)" in flat and "within noise" in flat
    assert "Yeom: advantage (TPR − FPR) membership attack" in flat and "~ within noise of chance" in flat


def test_attack_console_marks_noise_and_says_when_no_membership_bound_applies() -> None:
    from dpaudit.attack.output import format_table

    metric = {**CLAIM, "neighbours": "metric"}
    attack = {"name": "yeom", "status": "ok", "advantage": -0.015, "auc": 0.479, "chance": True,
              "epsilon_lower_bound": 0.0, "epsilon_lower_bound_comparable": False,
              "epsilon_lower_bound_scope": "not comparable with a metric (d_x) claim"}
    est = {"status": "ok", "claim": metric, "epsilon_lower_bound": 0.96, "verdict": "no violation found",
           "confidence": 0.95}
    results = {"mechanism": {"spec": "ndlaplace", "claim": metric}, "dataset": {}, "parameters": {"repeats": 3},
               "attacks": [attack], "epsilon_estimate": est, "verdict": "no violation found",
               "verdict_tests": [{"attack": "ε estimate", "epsilon_lower_bound": 0.96, "confidence": 0.95,
                                  "exceeds_claim": False}]}
    results["conclusion"] = conclude(results)
    text = format_table(results)
    row = next(line for line in text.splitlines() if line.startswith("yeom"))
    assert row.count("~") == 2  # the advantage and the AUC
    flat = " ".join(text.split())
    assert "a negative advantage or an AUC below 0.5 is sampling noise" in flat
    assert "no membership bound applies to this claim (every row n/c)" in flat
    last = text.rstrip().splitlines()[-1]
    assert last.startswith("Conclusion: Consistent with ε = 1 per unit distance")
    assert "no attack exceeded" not in last and len(last) <= 160, last  # short, in plain words
    above = " ".join(text.rstrip().splitlines()[-3:-1])  # the basis, just above the line
    assert "bounds do not apply to this claim" in " ".join(text.split()) and "rests on the certified ε estimate" in flat
    assert "membership attacks" in above or "membership attacks" in " ".join(text.split()[-80:])


def test_estimate_eps_results_render_as_a_report(tmp_path: Path) -> None:
    """estimate-eps writes the same files as every command, from the same schema."""
    from typer.testing import CliRunner

    from dpaudit.cli import app

    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["estimate-eps", "-m", "laplace", "--eps", "1", "--releases", "4000", "--out",
                                   str(out), "-q"])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "results.json").read_text())
    assert {"schema_version", "kind", "status", "conclusion", "findings", "warnings", "provenance"} <= set(data)
    md = (out / "report.md").read_text()
    assert "## Empirical ε (certified lower bound)" in md and "> **Consistent** — with ε = 1" in md
    again = tmp_path / "again"
    res = CliRunner().invoke(app, ["report", str(out), "--format", "all", "--out", str(again)])
    assert res.exit_code == 0 and (again / "report.html").is_file(), res.output


def test_the_banner_never_says_its_word_twice() -> None:
    """The banner's word is its own line; the sentence goes on after it — a notion's violation included."""
    from dpaudit.report.banner import after_word

    assert after_word("VIOLATION of ρ = 0.1 (zCDP): certified false-positive rate ≤ 0.2 lies below the curve.",
                      "VIOLATION") == "the claim ρ = 0.1 (zCDP) cannot hold: certified false-positive rate ≤ 0.2 lies below the curve."
    assert after_word("VIOLATION: the claim ε = 1 cannot hold — certified ε_lb = 2 > 1.", "VIOLATION") == \
        "the claim ε = 1 cannot hold — certified ε_lb = 2 > 1."
    assert after_word("Consistent with μ = 1 (GDP): certified μ ≥ 0.9.", "Consistent") == \
        "with μ = 1 (GDP): certified μ ≥ 0.9."
    assert after_word("No privacy claim (ε = ∞): nothing to violate.", "no claim") == \
        "No privacy claim (ε = ∞): nothing to violate."


def test_a_noise_mark_stays_beside_its_number() -> None:
    """The sweep table's ``~`` never wraps onto a line of its own: a numeric column is as wide as its widest
    cell, and its header wraps instead."""
    from dpaudit.sweep.output import format_summary

    summary = [{"epsilon": e, "n": 3, "metrics": {
        "displacement": {"mean": 2.0 / e, "std": 0.1, "n": 3},
        "kmeans.ari": {"mean": 0.0073, "std": 0.013, "n": 3}, "kmeans.ari_truth": {"mean": 0.00695, "std": 0.012, "n": 3},
        "mia.yeom.advantage": {"mean": 0.00554, "std": 0.0052, "n": 3},
        "mia.yeom.auc": {"mean": 0.501, "std": 0.018, "n": 3}}} for e in (0.1, 0.5, 1.0, 2.0, 5.0)]
    text = format_summary({"sweep": {"repeats": 3, "summary": summary}})
    table = text.split("\n\n")[0].splitlines()
    assert all(len(line) <= 100 for line in table)
    assert not any(line.strip() == "~" or line.strip().startswith("~ ") for line in table), text
    assert sum("~" in line for line in table) >= 5
