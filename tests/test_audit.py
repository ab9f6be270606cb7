"""``dpaudit audit``: findings instead of crashes, verdicts, exit codes, nothing lost, no records in reports."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit.audit import AuditConfig, run_audit
from dpaudit.cli import app
from dpaudit.datasets import Dataset

PLUGIN = textwrap.dedent('''
    import time
    import numpy as np

    def good(X, epsilon, rng):
        return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)

    def raises(X, epsilon, rng):
        raise ValueError("boom from the plug-in")

    def hangs(X, epsilon, rng):
        time.sleep(600)

    def nan(X, epsilon, rng):
        return np.full(X.shape, np.nan)

    def shape(X, epsilon, rng):
        return X[:, :1]
''')


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("audited") / "their_code.py"
    path.write_text(PLUGIN)
    return path


def _data() -> Dataset:
    from sklearn.datasets import make_blobs
    X, y = make_blobs(90, centers=3, n_features=2, cluster_std=0.5, random_state=1)
    return Dataset("blobs", X, y, (np.full(2, -15.0), np.full(2, 15.0)), "test blobs")


@pytest.mark.parametrize("fn, kind", [("raises", "raises"), ("hangs", "timeout"), ("nan", "nan"),
                                      ("shape", "wrong-shape")])
def test_each_misbehaviour_is_a_finding_and_the_audit_goes_on(tmp_path, plugin, fn, kind):
    cfg = AuditConfig(mechanism=f"{plugin}:{fn}", epsilon=1.0, timeout=1.0, parts=("smoke", "utility"))
    results = run_audit(cfg, _data(), tmp_path, progress=False)
    assert results["status"] == "complete" and results["verdict"] == "inconclusive"
    kinds = {(f["kind"], f["part"]) for f in results["findings"]}
    assert (kind, "smoke") in kinds and (kind, "utility") in kinds  # both parts ran, both recorded
    assert all(status.startswith("failed") for status in results["parts"].values())
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["findings"][0]["kind"] == kind
    assert "Findings" in (tmp_path / "report.md").read_text()


def test_good_plugin_utility_and_figure(tmp_path, plugin):
    cfg = AuditConfig(mechanism=f"{plugin}:good", epsilon=50.0, parts=("smoke", "utility"))
    results = run_audit(cfg, _data(), tmp_path, progress=False)
    assert results["findings"] == [] and results["parts"] == {"smoke": "ok", "utility": "ok"}
    (how, util), = [(k, v) for k, v in results["utility"].items() if isinstance(v, dict)]
    # Laplace noise of scale 1/50 on clusters 0.5 wide leaves KMeans' partition intact.
    assert util["ARI vs truth"] > 0.9
    assert results["release_2d"]["kind"] == "points"
    assert (tmp_path / "report.html").is_file() and (tmp_path / "fig-release.png").is_file()
