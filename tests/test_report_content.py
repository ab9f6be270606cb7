"""What a report says and draws: honest membership figures, the per-record risk table, the
privacy–utility trade-off, words instead of JSON keys, three significant digits, readable
figures, escaped Markdown, and no audited record taken from a release."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from dpaudit.attack.config import AttackConfig
from dpaudit.attack.run import run_attack
from dpaudit.attacks.epsilon import Budget
from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions
from dpaudit.report import render_report
from dpaudit.report.drawing import MIN_WIDTH_PX
from dpaudit.report.figures import all_figures
from dpaudit.report.guard import WITHHELD, contains_records
from dpaudit.report.membership_figures import roc_curves
from dpaudit.report.standin import release_2d


def _png_width(png: bytes) -> int:
    return struct.unpack(">I", png[16:20])[0]


@pytest.fixture(scope="module")
def attack_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    cfg = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=1.0),
                       data=DataOptions(records=600), budget=Budget(samples=500), seed=4,
                       attack=AttackOptions(attacks=("shokri", "yeom", "reconstruction", "lira"), repeats=2))
    results = run_attack(cfg).to_dict()
    out = tmp_path_factory.mktemp("attack")
    render_report(results, out)
    return results, out


def test_roc_is_cut_where_the_sample_resolves_it_and_has_bands(attack_report) -> None:
    results, _ = attack_report
    for a in results["attacks"]:
        if a["name"] == "reconstruction":
            continue
        fewest = min(r["n_non_members"] for r in a["per_repeat"])
        roc = a["roc"]
        assert roc["fpr"][0] >= 1.0 / fewest and roc["cut_at_fpr"] == roc["fpr"][0]
        assert all(lo <= t <= hi for lo, t, hi in zip(roc["tpr_low"], roc["tpr"], roc["tpr_high"]))
    curves = roc_curves(results)
    assert curves and all("tpr_low" in c for c in curves)
    roc_fig = next(f for f in all_figures(results) if f.name == "roc")
    assert "Clopper–Pearson" in roc_fig.caption and "1/n_non-members" in roc_fig.caption


def test_unresolvable_tpr_says_what_it_needs(attack_report) -> None:
    results, out = attack_report
    md = (out / "report.md").read_text()
    shokri = next(a for a in results["attacks"] if a["name"] == "shokri")
    assert shokri["tpr_at_0_1pct_fpr"] is None  # 150 candidates: never 1,000 non-members
    assert "n/a (needs ≥ 1,000 non-members)" in md


def _exposure_md(results: dict, out: Path) -> str:
    render_report(results, out, ["md"])
    return (out / "report.md").read_text().split("## Most exposed records", 1)[1].split("\n## ", 1)[0]


def test_score_histograms_and_the_risk_table_by_index_only(attack_report, tmp_path: Path) -> None:
    results, out = attack_report
    names = [f.name for f in all_figures(results)]
    assert "scores" in names and (out / "fig-scores.png").is_file()
    lira = next(a for a in results["attacks"] if a["name"] == "lira")
    shown = json.loads(json.dumps(results))
    next(a for a in shown["attacks"] if a["name"] == "lira")["chance"] = False  # the table as an attack above chance has it
    section = _exposure_md(shown, tmp_path)
    assert "record (dataset row)" in section and "FPR to flag it" in section
    assert "row in the dataset" in lira["most_exposed_rule"] and "position among" not in lira["most_exposed_rule"]
    assert max(r["index"] for r in lira["most_exposed"]) < results["dataset"]["n_records"]
    rows = [line for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert rows
    for row in rows:  # repeat, row, the attack's score, rank, count, FPR — never a record's value
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert all(re.fullmatch(r"\d+", c) for c in cells[:2] + cells[3:5]) and float(cells[5]) <= 1.0
        float(cells[2])  # the score (LiRA: a log-likelihood ratio), one number


def test_an_attack_at_chance_singles_no_record_out(attack_report, tmp_path: Path) -> None:
    """The report listed records "singled out at FPR 0" by attacks at AUC 0.48–0.51 without a word: an attack at
    chance is left out of the table, and the section says why."""
    results, _ = attack_report
    shown = json.loads(json.dumps(results))
    lira = next(a for a in shown["attacks"] if a["name"] == "lira")
    lira.update(chance=True, auc=0.49)
    section = _exposure_md(shown, tmp_path)
    assert "Left out, at chance (" in section and "LiRA (AUC 0.49)" in section and "noise" in section
    assert "| LiRA: repeat" not in section


def test_headers_are_words_and_numbers_have_three_significant_digits(attack_report) -> None:
    _, out = attack_report
    md = (out / "report.md").read_text()
    body = md.split("## Provenance", 1)[0]
    for key in ("tpr_at_1pct_fpr", "epsilon_lower_bound", "advantage_ceiling", "success_rate", "auc |"):
        assert key not in body
    for section in ("## Attacks", "## Empirical ε"):
        text = body.split(section, 1)[1].split("\n## ", 1)[0]
        for line in text.splitlines():
            if not line.startswith("| ") or "selected event" in line:
                continue
            for number in re.findall(r"(?<![\w.])-?\d+\.\d+", line):
                digits = number.lstrip("-").replace(".", "").lstrip("0")
                assert len(digits) <= 3, (number, line)


def test_figures_are_large_enough_to_read(attack_report, monkeypatch) -> None:
    """≥ 800 px wide; every legend entry ≥ 9 pt (checked on the matplotlib figures before saving)."""
    import dpaudit.report.figures as figures
    import dpaudit.report.membership_figures as membership
    import dpaudit.report.release_figure as release
    results, _ = attack_report
    sizes: list[float] = []
    original = figures.to_png

    def spy(fig):
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is not None:
                sizes.extend(t.get_fontsize() for t in legend.get_texts())
        return original(fig)

    for module in (figures, membership, release):
        monkeypatch.setattr(module, "to_png", spy)
    from test_report import sample_results
    drawn = all_figures(results) + all_figures(sample_results())
    assert len(drawn) >= 9 and sizes
    assert min(sizes) >= 9
    assert min(_png_width(f.png) for f in drawn) >= MIN_WIDTH_PX


def test_tradeoff_plot_against_a_non_private_baseline(tmp_path: Path) -> None:
    from dpaudit.data import datasets
    from dpaudit.sweep.config import SweepConfig
    from dpaudit.sweep.run import run_sweep

    data = datasets.load("blobs-2d", records=200, seed=0)
    cfg = SweepConfig(target=TargetOptions(mechanism="ndlaplace"), epsilons=(0.5, 4.0), repeats=1,
                      clusterers=("kmeans",), attack=AttackOptions(attacks=("yeom",)), budget=Budget(samples=100),
                      seed=0, data=DataOptions(dataset="blobs-2d", records=200))
    prov = {"started": "2000-01-01T00:00:00Z", "finished": "2000-01-01T00:00:00Z"}
    results = run_sweep(cfg, data, tmp_path, progress=False, provenance=prov)
    baseline = results["sweep"]["baseline"]
    assert baseline["kmeans.ari"] == 1.0 and 0.5 < baseline["kmeans.ari_truth"] <= 1.0
    fig = next(f for f in all_figures(results) if f.name == "tradeoff")
    assert "one point per claimed ε" in fig.caption and (tmp_path / "fig-tradeoff.png").is_file()
    # finished is written when the run ends, not when its provenance block was made
    assert results["provenance"]["finished"] > results["provenance"]["started"]
    assert json.loads((tmp_path / "results.json").read_text())["provenance"]["finished"] != prov["started"]
    md = (tmp_path / "report.md").read_text()
    assert "Non-private baseline" in md and "KMeans: ARI vs ground truth" in md


def test_certified_plot_draws_the_sample_size_ceiling(attack_report) -> None:
    results, _ = attack_report
    est = results["epsilon_estimate"]
    assert est["status"] == "ok" and est["ceiling"] > est["epsilon_lower_bound"]
    fig = next(f for f in all_figures(results) if f.name == "certified")
    assert "sample-size ceiling" in fig.caption


HOSTILE = "<script>alert(1)</script>"


def test_markdown_is_escaped(tmp_path: Path) -> None:
    results = {"kind": "audit", "title": f"Audit of {HOSTILE}", "status": "complete",
               "mechanism": {"spec": f"evil.py:{HOSTILE}", "name": HOSTILE,
                             "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}},
               "findings": [{"kind": "raises", "part": "smoke", "call": "release",
                             "error": "ValueError: <img src=x onerror=alert(2)> [click](javascript:alert(3))"}],
               "warnings": [{"category": "PrivacyLeakWarning", "message": "# heading | <b>bold</b>"}],
               "verdict_table": [{"part": HOSTILE, "statistic": "x", "value": 1.0, "claim": "ε = 1",
                                  "verdict": "violation"}]}
    written = render_report(results, tmp_path, ["md", "html"])
    md = written["md"].read_text()
    html = written["html"].read_text()
    for text in (md, html):
        assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert not re.search(r"(?<!\\)\]\(javascript:", md) and "\n# heading" not in md  # no live link
    assert "&lt;script&gt;" in md and "&lt;script&gt;" in html


class EchoingPlugin:
    """Stateful and hostile: remembers the first records it is given and releases them later."""

    name, kind = "echo", "points"

    def __init__(self) -> None:
        import dpaudit.mechanisms.base as base
        self.claim = base.PrivacyClaim(1.0, 0.0, "metric")
        self._seen: np.ndarray | None = None

    def release(self, X, rng):
        from dpaudit.mechanisms.base import Points
        if self._seen is None:
            self._seen = np.array(X, copy=True)
        return Points(self._seen[: len(X)].copy())


def test_a_release_holding_an_audited_record_is_withheld() -> None:
    rng = np.random.default_rng(0)
    records = rng.normal(size=(300, 2)) * 3 + 123.4567
    plugin = EchoingPlugin()
    plugin.release(records, rng)  # the audit's calls: it keeps what it saw
    box = (np.array([-10.0, -10.0]), np.array([10.0, 10.0]))
    described = release_2d(plugin, box, 1.0, rng, records=records)
    assert described["withheld"] == WITHHELD and "points" not in described
    assert "123.4" not in json.dumps(described)
    assert all_figures({"release_2d": described}) == []
    honest = release_2d(plugin.__class__(), box, 1.0, rng, records=records)  # a fresh one echoes the stand-in
    assert "withheld" not in honest and len(honest["points"]) == len(honest["stand_in"])


def test_contains_records_matches_whole_rows_to_the_stored_precision() -> None:
    records = np.array([[1.23456789, -5.0], [3.0, 4.0]])
    assert contains_records([[1.2346, -5.0]], records)          # rounded for storage: still the record
    assert not contains_records([[1.2346, 4.0]], records)       # one coordinate alone is not a record
    assert not contains_records([[1.25, -5.0]], records)
    assert not contains_records(np.empty((0, 2)), records)
