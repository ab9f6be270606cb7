"""Registry and plug-in loading: names, module:attr, file.py:attr, entry points."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.mechanisms.base import InvalidInputError, Labels, Points, Vector
from dpaudit.mechanisms.plugins import FunctionMechanism, MalformedReleaseError
from dpaudit.mechanisms.registry import load_object

PLUGIN = textwrap.dedent('''
    import numpy as np
    from dpaudit.mechanisms.base import Points, PrivacyClaim

    def noisy_mean(X, epsilon, rng):
        return X.mean(axis=0) + rng.laplace(scale=1.0 / epsilon, size=X.shape[1])

    def jitter(X, epsilon, rng):
        return X + rng.laplace(scale=1.0 / epsilon, size=X.shape)

    def bad_shape(X, epsilon, rng):
        return X[:1]

    def nan_out(X, epsilon, rng):
        return X * np.nan

    class Shift:
        name = "shift"
        def __init__(self, epsilon, offset=0.0):
            self.claim = PrivacyClaim(epsilon, 0.0, "replace")
            self.offset = offset
        def release(self, X, rng):
            return Points(X + self.offset)

    class TinyKMeans:
        def __init__(self, epsilon, n_clusters=2, random_state=None):
            self.epsilon, self.n_clusters, self.random_state = epsilon, n_clusters, random_state
        def fit(self, X):
            self.labels_ = (X[:, 0] > np.median(X[:, 0])).astype(int)
            return self
''')


@pytest.fixture
def plugin_file(tmp_path: Path) -> Path:
    path = tmp_path / "their_code.py"
    path.write_text(PLUGIN)
    return path


def test_available_lists_builtins() -> None:
    assert {"ndlaplace", "ndlaplace-thesis"} <= set(dpaudit.mechanisms.available())
    info = {m.name: m for m in dpaudit.mechanisms.describe()}
    assert info["ndlaplace"].neighbours == "metric" and info["ndlaplace"].release_kind == "points"


def test_function_plugin_from_file(plugin_file: Path) -> None:
    mech = dpaudit.mechanisms.get(f"{plugin_file}:noisy_mean", epsilon=2.0, output="vector")
    assert isinstance(mech, FunctionMechanism) and mech.claim.epsilon == 2.0
    rel = mech.release(np.ones((5, 3)), np.random.default_rng(0))
    assert isinstance(rel, Vector) and rel.values.shape == (3,)


def test_function_plugin_points_and_claim(plugin_file: Path) -> None:
    mech = dpaudit.mechanisms.get(f"{plugin_file}:jitter", epsilon=1.0, output="points", neighbours="replace")
    assert mech.claim.neighbours == "replace"
    assert isinstance(mech.release(np.zeros((4, 2)), np.random.default_rng(0)), Points)


def test_class_plugin_from_file(plugin_file: Path) -> None:
    mech = dpaudit.mechanisms.get(f"{plugin_file}:Shift", epsilon=1.0, offset=3.0)
    assert mech.release(np.zeros((2, 2)), np.random.default_rng(0)).points.tolist() == [[3, 3], [3, 3]]


def test_estimator_plugin(plugin_file: Path) -> None:
    mech = dpaudit.mechanisms.get(f"{plugin_file}:TinyKMeans", epsilon=1.0, output="labels")
    rel = mech.release(np.arange(8.0).reshape(4, 2), np.random.default_rng(0))
    assert isinstance(rel, Labels) and rel.labels.tolist() == [0, 0, 1, 1]


def test_module_attr_plugin() -> None:
    mech = dpaudit.mechanisms.get("dpaudit.mechanisms.ndlaplace:NDLaplace", epsilon=1.0)
    assert mech.claim.neighbours == "metric"
    assert load_object("numpy:mean") is np.mean


def test_malformed_releases_are_reported(plugin_file: Path) -> None:
    X = np.zeros((4, 2))
    with pytest.raises(MalformedReleaseError, match="shape"):
        dpaudit.mechanisms.get(f"{plugin_file}:bad_shape", epsilon=1.0).release(X, np.random.default_rng(0))
    # NaN values are part of a release ("no answer"): the estimator reads them, the attacks refuse them
    assert np.isnan(dpaudit.mechanisms.get(f"{plugin_file}:nan_out", epsilon=1.0).release(
        X, np.random.default_rng(0)).points).any()


@pytest.mark.parametrize("spec, message", [
    ("no-such-mechanism", "unknown mechanism"),
    ("", "required"),
    ("missing_file.py:fn", "not found"),
    ("no_such_module_xyz:fn", "cannot import"),
    ("numpy:no_such_attr", "no attribute"),
])
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        dpaudit.mechanisms.get(spec, epsilon=1.0)


def test_function_plugin_needs_epsilon_and_valid_output(plugin_file: Path) -> None:
    with pytest.raises(InvalidInputError, match="epsilon"):
        dpaudit.mechanisms.get(f"{plugin_file}:jitter")
    with pytest.raises(InvalidInputError, match="output"):
        dpaudit.mechanisms.get(f"{plugin_file}:jitter", epsilon=1.0, output="histogram")


def test_broken_plugin_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(InvalidInputError, match="boom"):
        dpaudit.mechanisms.get(f"{path}:fn", epsilon=1.0)


def test_entry_point_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    import dpaudit.mechanisms.registry as registry

    ep = EntryPoint(name="third-party-laplace", value="dpaudit.mechanisms.ndlaplace:NDLaplace",
                    group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep] if group == ep.group else [])
    assert "third-party-laplace" in dpaudit.mechanisms.available()
    assert dpaudit.mechanisms.get("third-party-laplace", epsilon=0.5).claim.epsilon == 0.5
