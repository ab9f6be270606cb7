"""One verdict per code, whatever the command: ``attack``, ``audit`` and ``estimate-eps`` on the same plug-in,
claim and seed reach the same verdict class (violation / no violation found / inconclusive).

Each command runs the same certified ε estimate (the worst-case datasets, the pair search, certification in
looks); ``--releases`` fixes its plan so the test does not depend on the machine's speed, and the attacks are
cut to one cheap repeat.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

PLUGINS = textwrap.dedent('''
    import numpy as np

    BOX = (-15.0, 15.0)

    def leaky_kmeans(X, epsilon, rng):
        """Start centres drawn from the records, no noise in the iterations, Laplace(1/ε) at the end: not DP."""
        X = np.asarray(X, dtype=float)
        centres = X[rng.choice(len(X), size=min(3, len(X)), replace=False)]
        for _ in range(3):
            labels = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
            centres = np.array([X[labels == j].mean(axis=0) if np.any(labels == j) else centres[j]
                                for j in range(len(centres))])
        return centres + rng.laplace(scale=1.0 / epsilon, size=centres.shape)

    def honest_mean(X, epsilon, rng):
        """A clipped mean with noisy sum and count (ε/2 each, sensitivities d·15 and 1): ε-DP add/remove."""
        X = np.clip(np.asarray(X, dtype=float), *BOX)
        d = X.shape[1]
        total = X.sum(axis=0) + rng.laplace(scale=2.0 * d * 15.0 / epsilon, size=d)
        count = len(X) + rng.laplace(scale=2.0 / epsilon)
        return np.clip(total / max(count, 1.0), *BOX)[None, :]

    def always_raises(X, epsilon, rng):
        raise RuntimeError("this code never works")

    def huge_centroids(X, epsilon, rng):
        """Garbage: centres at ±1e300, where every distance overflows (a finding, never a clean verdict)."""
        return np.array([[1e300, -1e300], [-1e300, 1e300]]) * rng.choice([-1.0, 1.0])
''')

COMMON = ["--eps", "1", "--output", "centroids", "--seed", "0", "--releases", "12000", "-q"]
ATTACK_CHEAP = ["--attack", "yeom", "--repeats", "1", "--records", "200"]


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agreement") / "third_party.py"
    path.write_text(PLUGINS)
    return path


def _verdicts(plugin: Path, fn: str, tmp: Path) -> dict[str, str]:
    runner = CliRunner()
    spec = f"{plugin}:{fn}"
    out: dict[str, str] = {}
    res = runner.invoke(app, ["estimate-eps", "-m", spec, *COMMON, "--json", str(tmp / "est.json"),
                              "--out", str(tmp / "estimate")])
    out["estimate-eps"] = json.loads((tmp / "est.json").read_text())["verdict"] if res.exit_code in (0, 3) else \
        f"exit {res.exit_code}: {res.output}"
    res = runner.invoke(app, ["attack", "-m", spec, *COMMON, *ATTACK_CHEAP, "--out", str(tmp / "attack")])
    out["attack"] = json.loads((tmp / "attack" / "results.json").read_text())["verdict"] \
        if (tmp / "attack" / "results.json").is_file() else f"exit {res.exit_code}: {res.output}"
    res = runner.invoke(app, ["audit", "-m", spec, *COMMON, "--attack", "yeom", "--repeats", "1",
                              "--out", str(tmp / "audit")])
    out["audit"] = json.loads((tmp / "audit" / "results.json").read_text())["verdict"] \
        if (tmp / "audit" / "results.json").is_file() else f"exit {res.exit_code}: {res.output}"
    return out


@pytest.mark.parametrize("fn, expected", [("leaky_kmeans", "violation"), ("honest_mean", "no violation found"),
                                          ("always_raises", "inconclusive")])
def test_every_command_reaches_the_same_verdict(plugin: Path, tmp_path: Path, fn: str, expected: str) -> None:
    verdicts = _verdicts(plugin, fn, tmp_path)
    assert set(verdicts.values()) == {expected}, verdicts


def test_garbage_values_are_read_by_the_estimate_and_refused_by_the_attacks(plugin: Path, tmp_path: Path) -> None:
    """Centres at ±1e300 (every distance overflows) are a release the ε estimate reads — a random sign, the
    same on both datasets: nothing to certify, and a non-finite note — but no classifier: the attacks that
    need one cannot run, so attack and audit cannot be clean.  None of them finds a violation."""
    verdicts = _verdicts(plugin, "huge_centroids", tmp_path)
    assert verdicts == {"estimate-eps": "no violation found", "attack": "inconclusive", "audit": "inconclusive"}
    est = json.loads((tmp_path / "est.json").read_text())
    assert [f["kind"] for f in est["findings"]] == ["non-finite"]


def test_attack_without_the_estimate_is_not_tested(plugin: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["attack", "-m", f"{plugin}:honest_mean", *COMMON, *ATTACK_CHEAP,
                                   "--epsilon-estimate", "off", "--out", str(tmp_path / "off")])
    results = json.loads((tmp_path / "off" / "results.json").read_text())
    assert results["verdict"] == "inconclusive", results["verdict_basis"]
    assert "Conclusion: NOT TESTED" in res.output and "Consistent" not in res.output, res.output
