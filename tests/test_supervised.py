"""Supervised plug-ins (``fit(X, y)``, ``fn(X, y, epsilon, rng)``) and code that draws its own randomness.

The label is the last column of every record the auditor builds (mapped to the nearest class, with one
anchor record per class in every dataset); the code is given it as ``y``.  A correct textbook linear
classifier is not flagged, scikit-learn's non-private LogisticRegression is, by function and by estimator
class.  Code without a generator parameter is not replayed: an ``own-randomness`` note, never INCONCLUSIVE
for that reason alone.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit.cli import app
from dpaudit.data import datasets
from dpaudit.data.labels import supervision_for, with_labels
from dpaudit.execution import worker_audited
from dpaudit.mechanisms.base import InvalidInputError
from dpaudit.mechanisms.label_column import fit_takes_y, function_shape
from dpaudit.mechanisms.plugins import EstimatorMechanism, FunctionMechanism
from dpaudit.mechanisms.supervised import Supervision, class_anchors, feature_grid

PLUGINS = Path(__file__).parent / "plugins" / "supervised.py"
runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, ["estimate-eps", *args, "--no-progress"])


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """estimate-eps writes a report folder under reports/: here, in the test's own directory."""
    monkeypatch.chdir(tmp_path)


# ---------------------------------------------------------------------------------------------- the set-up
def test_label_column_maps_to_the_nearest_class_and_anchors_join_every_dataset():
    sup = Supervision(classes=(0, 1, 3), anchors=class_anchors([-1, -1], [1, 1], (0, 1, 3)))
    records = np.array([[0.5, 0.5, -7.0], [0.1, 0.2, 0.5], [0.0, 0.0, 1.9], [0.0, 0.0, 2.1], [0.0, 0.0, 40.0]])
    X, y = sup.split(records)
    assert X.shape == (8, 2) and y.dtype.kind == "i"
    assert y.tolist() == [0, 0, 1, 3, 3, 0, 1, 3]  # ties go to the lower class; anchors last, one per class
    assert np.array_equal(X[5:], np.zeros((3, 2)))  # the anchors sit at the centre of the feature box
    assert sup.label_bounds() == (0.0, 3.0)
    reg = Supervision(label_range=(0.0, 10.0))
    assert reg.split(records)[1].tolist() == [0.0, 0.5, 1.9, 2.1, 10.0]
    with pytest.raises(InvalidInputError):
        Supervision(classes=(0, 1), label_range=(0, 1))


def test_the_worker_mirror_splits_records_as_the_auditor_does(rng):
    for sup in (Supervision(classes=(-1, 2.5, 4), anchors=class_anchors([0, 0, 0], [1, 2, 3], (-1, 2.5, 4))),
                Supervision(classes=(0, 1)), Supervision(label_range=(-2.0, 2.0))):
        R = rng.uniform(-3, 5, size=(40, 4))
        X1, y1 = sup.split(R)
        X2, y2 = worker_audited.Supervision(sup.to_dict()).split(R)
        assert np.array_equal(X1, X2) and np.array_equal(y1, y2) and y1.dtype == y2.dtype
        assert Supervision.from_dict(sup.to_dict()) == sup


def test_plugin_shapes_are_read_off_signatures():
    from sklearn.cluster import KMeans
    from sklearn.linear_model import LogisticRegression

    def plain(X, epsilon, rng): ...
    def labelled(X, y, epsilon, rng): ...
    def own(X, epsilon): ...
    def labelled_own(X, y, epsilon): ...
    def rng_default(X, epsilon, rng=None): ...
    def star(*args): ...
    for shape in (function_shape, worker_audited.function_shape):
        assert [shape(f) for f in (plain, labelled, own, labelled_own, rng_default, star)] == [
            (False, False), (True, False), (False, True), (True, True), (False, False), (False, False)]
    for takes_y in (fit_takes_y, worker_audited.fit_takes_y):
        assert takes_y(LogisticRegression) and not takes_y(KMeans)  # KMeans.fit(X, y=None): unsupervised


def test_supervision_from_data_and_the_labelled_box():
    ds = datasets.load("blobs-2d", records=30, seed=0)
    sup = supervision_for(ds)
    assert sup.classes == (0.0, 1.0, 2.0, 3.0) and len(sup.anchors) == 4 and len(sup.grid) == 25
    assert np.allclose(sup.grid.__len__(), feature_grid([-15, -15], [15, 15]).shape[0])
    lab = with_labels(ds, sup)
    assert lab.X.shape == (30, 3) and np.array_equal(lab.X[:, -1], ds.y)
    assert lab.bounds[0].tolist() == [-15, -15, 0] and lab.bounds[1].tolist() == [15, 15, 3]
    assert supervision_for(ds, classes=(0, 1), label_anchors=False).anchors == ()
    with pytest.raises(InvalidInputError, match="not both"):
        supervision_for(ds, classes=(0, 1), label_range=(0, 1))


def test_in_process_plugins_fit_on_features_and_labels(rng):
    import importlib.util

    spec = importlib.util.spec_from_file_location("sup_plugins", PLUGINS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sup = Supervision(classes=(0, 1), anchors=class_anchors([-1, -1], [1, 1], (0, 1)),
                      grid=feature_grid([-1, -1], [1, 1]))
    R = np.column_stack([rng.normal(size=(20, 2)), np.arange(20) % 2])
    echo = FunctionMechanism(mod.echo_labels, epsilon=1.0, output="vector", supervision=sup)
    values = echo.release(R, rng).values
    assert values[:3].tolist() == [22, 2, 1] and values[3:].tolist() == [*(np.arange(20) % 2), 0, 1]
    est = EstimatorMechanism(mod.NonPrivateLogistic, epsilon=1.0, output="predictions", supervision=sup)
    assert est.supervised and est.release(R, rng).values.shape == (25 * 2,)
    with pytest.raises(InvalidInputError, match="labelled data"):
        FunctionMechanism(mod.echo_labels, epsilon=1.0, output="vector")
    with pytest.raises(InvalidInputError, match="parameters or predictions"):
        EstimatorMechanism(mod.NonPrivateLogistic, epsilon=1.0, output="centroids", supervision=sup)


# ---------------------------------------------------------------------------------------------- end to end
def test_fit_receives_the_label_column_as_y_in_the_worker(tmp_path):
    out = tmp_path / "echo.json"
    res = _run("-m", f"{PLUGINS}:echo_labels", "--eps", "1", "--output", "vector", "--releases", "300",
               "--max-pairs", "1", "--json", str(out))
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    sup = data["supervision"]
    assert sup["classes"] == [0, 1, 2, 3] and sup["anchors"] == 4 and "data" in sup["source"]
    assert data["box"]["lo"] == [-15, -15, 0] and data["box"]["hi"] == [15, 15, 3]
    assert data["dataset"]["n_features"] == 3


def test_textbook_linear_classifier_is_not_flagged_and_sklearn_logistic_is():
    res = _run("-m", f"{PLUGINS}:noisy_linear", "--eps", "1", "--output", "vector", "--releases", "6000",
               "--max-pairs", "6")
    assert res.exit_code == 0 and "Conclusion: Consistent with" in res.output, res.output
    res = _run("-m", f"{PLUGINS}:sklearn_logistic", "--eps", "1", "--output", "vector", "--releases", "400",
               "--max-pairs", "2", "--fail-on-violation")
    assert res.exit_code == 1 and "VIOLATION" in res.output, res.output


@pytest.mark.parametrize("output", ["parameters", "predictions"])
def test_supervised_estimator_class_releases_parameters_or_predictions(tmp_path, output):
    out = tmp_path / "r.json"
    res = _run("-m", f"{PLUGINS}:NonPrivateLogistic", "--eps", "1", "--output", output, "--releases", "400",
               "--max-pairs", "2", "--json", str(out))
    assert res.exit_code == 0 and "VIOLATION" in res.output, res.output
    release = json.loads(out.read_text())["supervision"]["release"]
    assert ("coef_" in release) if output == "parameters" else ("grid of 25 points" in release)


def test_supervised_code_without_labels_and_wrong_outputs_are_one_line_errors(tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("a,b,label\n" + "".join(f"{i % 3},{i % 5},{i % 2}\n" for i in range(12)))
    res = _run("-m", f"{PLUGINS}:noisy_linear", "--eps", "1", "--output", "vector", "--data", str(csv),
               "--releases", "200", "--max-pairs", "1")
    assert res.exit_code == 2 and "labelled data" in res.output and "Traceback" not in res.output
    res = _run("-m", f"{PLUGINS}:noisy_linear", "--eps", "1", "--output", "vector", "--data", str(csv),
               "--label-column", "label", "--classes", "0,1", "--bounds", "0,5", "--releases", "200",
               "--max-pairs", "1")
    assert res.exit_code == 0, res.output
    res = _run("-m", f"{PLUGINS}:NonPrivateLogistic", "--eps", "1", "--output", "centroids", "--releases", "200")
    assert res.exit_code == 2 and "parameters or predictions" in res.output
    res = _run("-m", f"{PLUGINS}:noisy_linear", "--eps", "1", "--output", "parameters", "--releases", "200")
    assert res.exit_code == 2 and "--output vector" in res.output


def test_own_randomness_is_a_note_not_an_inconclusive_verdict(tmp_path):
    common = ("--eps", "1", "--neighbours", "replace", "--output", "vector", "--releases", "3000", "--max-pairs", "2")
    out = tmp_path / "own.json"
    res = _run("-m", f"{PLUGINS}:laplace_mean_own", *common, "--json", str(out))
    assert res.exit_code == 0 and "Conclusion: Consistent with" in res.output, res.output
    data = json.loads(out.read_text())
    assert [f["kind"] for f in data["findings"]] == ["own-randomness"] and not data["findings"][0]["blocking"]
    assert data["randomness"].startswith("its own")
    res = _run("-m", f"{PLUGINS}:laplace_mean_ignores_rng", *common)
    assert "Conclusion: INCONCLUSIVE" in res.output and "nondeterministic" in res.output
    res = _run("-m", f"{PLUGINS}:laplace_mean_ignores_rng", *common, "--own-randomness")
    assert "Conclusion: Consistent with" in res.output and "own-randomness" in res.output, res.output


def test_a_mechanism_class_may_state_its_own_randomness(tmp_path):
    plugin = tmp_path / "cls.py"
    plugin.write_text(textwrap.dedent("""
        import numpy as np
        from dpaudit.mechanisms.base import PrivacyClaim, Vector
        class OsLaplace:
            own_randomness = True
            name = "os-laplace"
            def __init__(self, epsilon=1.0):
                self.claim = PrivacyClaim(epsilon, 0.0, "add-remove")
            def release(self, X, rng):
                return Vector(np.array([len(X) + np.random.default_rng().laplace(scale=1 / self.claim.epsilon)]))
    """))
    res = _run("-m", f"{plugin}:OsLaplace", "--eps", "1", "--releases", "3000", "--max-pairs", "2")
    assert "Conclusion: Consistent with" in res.output and "own-randomness" in res.output, res.output


def test_attack_on_a_supervised_plugin_certifies_and_says_why_classifier_attacks_do_not_apply(tmp_path):
    res = runner.invoke(app, ["attack", "-m", f"{PLUGINS}:NonPrivateLogistic", "--eps", "1", "--output", "parameters",
                              "--attack", "yeom", "--repeats", "1", "--records", "200", "--releases", "400",
                              "--out", str(tmp_path / "r"), "--no-progress"])
    assert res.exit_code == 3, res.output  # no attack measured anything: the result is incomplete
    data = json.loads((tmp_path / "r" / "results.json").read_text())
    assert data["epsilon_estimate"]["verdict"] == "violation" and data["verdict"] == "violation"
    # a classifier-querying attack does not apply to a vector release: a 'not applicable' row that says why
    (yeom,) = data["attacks"]
    assert yeom["status"] == "not-applicable" and "query a classifier" in yeom["reason"], yeom
