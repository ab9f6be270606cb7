"""Report rendering: formats, figures, HTML validity, and that no record leaks into any file."""

from __future__ import annotations

import base64
import csv
import html.parser
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import dpaudit.mechanisms
from dpaudit.cli import app
from dpaudit.report import load_results, render_report
from dpaudit.report.figures import all_figures
from dpaudit.report.provenance import provenance
from dpaudit.report.standin import release_2d

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def sample_results() -> dict:
    """A results dict with every part the renderer draws (numbers from real releases)."""
    rng = np.random.default_rng(7)
    eps_list = [0.1, 1.0, 5.0]
    cells = []
    for eps in eps_list:
        for r in range(3):
            cells.append({"epsilon": eps, "repeat": r, "metrics": {
                "kmeans.ari": float(np.tanh(eps) + 0.01 * r), "kmeans.ami": float(np.tanh(eps)),
                "kmeans.silhouette": 0.5, "dbscan.ari": float(np.tanh(eps / 2)),
                "displacement": 2.0 / eps + 0.01 * r, "mia.shokri.advantage": 0.02 * eps,
                "epsilon_lower_bound": 0.5 * eps}})
    summary = []
    for eps in eps_list:
        rows = [c["metrics"] for c in cells if c["epsilon"] == eps]
        summary.append({"epsilon": eps, "n": len(rows), "metrics": {
            k: {"mean": float(np.mean([m[k] for m in rows])), "std": float(np.std([m[k] for m in rows], ddof=1))}
            for k in rows[0]}})
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    fpr = np.linspace(0, 1, 50)
    return {
        "kind": "sweep", "status": "complete",
        "mechanism": {"spec": "ndlaplace", "name": "ndlaplace", "claim": mech.claim.to_dict(), "params": {}},
        "dataset": {"name": "test", "n_records": 40, "n_features": 2, "n_classes": None},
        "verdict": "no violation found",
        "verdict_table": [{"part": "ε estimation", "statistic": "ε_lb", "value": 0.9, "claim": 1.0,
                           "verdict": "no violation found"}],
        "findings": [{"kind": "raises", "part": "attack", "call": "release", "error": "ValueError: boom"}],
        "warnings": [{"category": "PrivacyLeakWarning", "message": "box from the data"}],
        "epsilon_estimate": {"epsilon_lower_bound": 0.9, "claim": mech.claim.to_dict(), "ceiling": 5.6,
                             "verdict": "no violation found", "samples": 1000},
        "attacks": [{"name": "yeom", "advantage": 0.1, "auc": 0.55, "roc": {"fpr": fpr.tolist(),
                                                                         "tpr": np.sqrt(fpr).tolist()}},
                    {"name": "reconstruction", "success_rate": 0.2, "median_error": 1.5,
                     "baseline_success_rate": 0.05}],
        "utility": {"kmeans": {"ari": 0.8, "ami": 0.7}},
        "sweep": {"epsilons": eps_list, "repeats": 3, "cells": cells, "summary": summary,
                  "cells_done": 9, "cells_total": 9},
        "release_2d": release_2d(mech, (np.array([-1.0, -1.0]), np.array([1.0, 1.0])), 1.0, rng),
        "provenance": provenance(seed=0, parameters={"repeats": 3}, durations={"sweep": 1.0}, argv=["dpaudit"]),
    }


class _Images(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.srcs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img":
            self.srcs.append(dict(attrs)["src"])


@pytest.fixture(scope="module")
def sample() -> dict:
    return sample_results()


def test_every_figure_is_drawn_and_small(sample):
    figs = all_figures(sample)
    assert [f.name for f in figs] == ["utility", "tradeoff", "advantage", "roc", "certified", "displacement",
                                      "release"]
    for f in figs:
        assert f.png.startswith(PNG_MAGIC)
        assert len(f.png) <= 200_000, f.name


def test_figures_only_when_data_present():
    assert all_figures({"kind": "attack", "attacks": [{"name": "yeom", "advantage": 0.1}]}) == []


def test_all_formats_and_html_images_decode(tmp_path: Path, sample):
    import matplotlib.image as mpimg
    written = render_report(sample, tmp_path)
    assert {"json", "md", "html", "csv"} <= set(written)
    parser = _Images()
    parser.feed(written["html"].read_text(encoding="utf-8"))
    parser.close()
    assert "table" in parser.tags and len(parser.srcs) == 7
    for src in parser.srcs:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png.startswith(PNG_MAGIC)
        assert mpimg.imread(io.BytesIO(png), format="png").ndim == 3
    md = written["md"].read_text(encoding="utf-8")
    for name in re.findall(r"!\[[^]]*\]\(([^)]+)\)", md):
        assert (tmp_path / name).read_bytes().startswith(PNG_MAGIC)
    assert "| KMeans: ARI vs non-private |" in md and "Provenance" in md
    with open(written["csv"], newline="", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 9 and "kmeans.ari" in table[0]
    again = load_results(written["json"])
    assert again["sweep"]["cells_total"] == 9 and again["mechanism"]["claim"]["neighbours"] == "metric"


def test_non_finite_numbers_become_valid_json(tmp_path: Path):
    written = render_report({"kind": "x", "mechanism": {"name": "identity", "claim": {
        "epsilon": float("inf"), "delta": 0.0, "neighbours": "add-remove"}}, "utility": {"a": float("nan")}},
        tmp_path, ["json", "md"])
    data = json.loads(written["json"].read_text())  # strict JSON: no NaN/Infinity tokens
    assert data["mechanism"]["claim"]["epsilon"] == "inf" and data["utility"]["a"] is None
    assert "ε = ∞" in written["md"].read_text()


def test_cli_report_rerenders(tmp_path: Path):
    small = {"kind": "attack", "mechanism": {"name": "ndlaplace"},
             "attacks": [{"name": "yeom", "advantage": 0.1, "roc": {"fpr": [0, 0.5, 1], "tpr": [0, 0.7, 1]}}]}
    render_report(small, tmp_path, ["json"])
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(tmp_path / "results.json"), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report.md").is_file() and not (tmp_path / "report.html").exists()
    res = runner.invoke(app, ["report", str(tmp_path / "results.json")])
    assert res.exit_code == 0 and (tmp_path / "report.html").is_file()


@pytest.mark.parametrize("args, message", [
    (["report", "missing.json"], "not found"),
    (["report", "{path}", "--format", "pdf"], "--format"),
])
def test_cli_report_errors(tmp_path: Path, args, message):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    args = [a.replace("{path}", str(bad)) for a in args]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


CSV_ROWS = {"kind": "attack", "attacks": [
    {"name": "a", "whole": 1, "gap": None, "flag": True, "mixed": 1, "text": "plain"},
    {"name": "b", "whole": 2, "gap": 3, "flag": None, "mixed": 2.5, "text": 'comma, "quote"'},
    {"name": "c", "whole": 3, "gap": 4, "flag": False, "mixed": "inf", "late": 0.1 + 0.2, "text": "line\nbreak"},
]}


@pytest.mark.parametrize("source", ["rows", *sorted(p.parent.name for p in Path(__file__).resolve().parents[1]
                                                    .glob("reports/examples/*/results.json"))])
def test_results_csv_is_written_as_pandas_wrote_it(tmp_path: Path, source: str) -> None:
    """results.csv no longer needs pandas; its bytes are what ``DataFrame.to_csv`` wrote (the oracle,
    where pandas is installed): column order, 3 vs 3.0, gaps, quoting."""
    pd = pytest.importorskip("pandas")
    from dpaudit.report.render import raw_rows, run_columns, to_jsonable, write_csv
    results = CSV_ROWS if source == "rows" else json.loads(
        (Path(__file__).resolve().parents[1] / "reports" / "examples" / source / "results.json").read_text())
    rows = raw_rows(results)
    assert rows
    written = write_csv(results, tmp_path / "results.csv")
    # One difference by design: a line break inside a cell is written as the escape \n, so a row is one line
    # and text from audited code cannot start a line of its own (tests/test_untrusted_text.py).
    # The run's verdict and certified figures lead every row (run_columns): a results.csv alone says the verdict.
    run = to_jsonable(run_columns(results))
    frame = pd.DataFrame([{**run, **to_jsonable(r)} for r in rows]).replace({"line\nbreak": "line\\nbreak"})
    assert written.read_text(encoding="utf-8") == frame.to_csv(index=False)
