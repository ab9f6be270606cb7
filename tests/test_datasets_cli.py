"""Datasets and the catalogue commands of the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit import __version__
from dpaudit.cli import app
from dpaudit.data import datasets
from dpaudit.mechanisms.base import InvalidInputError

runner = CliRunner()


@pytest.mark.parametrize("name, shape", [
    ("blobs-2d", (2000, 2)), ("blobs-3d", (2000, 3)), ("blobs-5d", (2000, 5)),
    ("moons", (2000, 2)), ("circles", (2000, 2)), ("dbscan-blobs", (2000, 2)),
    ("iris", (150, 4)), ("wine", (178, 13)), ("breast-cancer", (569, 30)), ("digits", (1797, 64)),
])
def test_builtin_datasets(name: str, shape: tuple[int, int]) -> None:
    ds = datasets.load(name)
    assert ds.X.shape == shape and ds.y is not None and len(ds.y) == shape[0]
    lo, hi = ds.bounds
    # the public box is a stated domain, and the records do fall inside it
    assert np.all(ds.X >= lo) and np.all(ds.X <= hi)


def test_thesis_small_set_and_subsets() -> None:
    assert datasets.load("blobs-2d", records=50).X.shape == (50, 2)
    a = datasets.load("iris", records=40, seed=1)
    b = datasets.load("iris", records=40, seed=1)
    assert a.X.shape == (40, 4) and np.array_equal(a.X, b.X)


def test_summary_holds_no_records() -> None:
    s = datasets.load("iris").summary()
    assert "X" not in s and s["n_records"] == 150


def test_csv_loading(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n1,2,x\n3,4,y\n5,6,x\n")
    ds = datasets.load_csv(path, label_column="label")
    assert ds.X.shape == (3, 2) and ds.y.tolist() == [0, 1, 0] and ds.bounds is None


@pytest.mark.parametrize("content, kwargs, message", [
    ("a,b\n1,x\n2,y\n", {}, "non-numeric column"),
    ("a,b\n1,\n2,3\n", {}, "missing values"),
    ("a,b\n1,2\n3,4\n", {"label_column": "c"}, "label column"),
    ("a,b\n", {}, "no records"),
    ("a,b\n1,2\n", {}, "1 row"),
])
def test_csv_errors(tmp_path: Path, content: str, kwargs: dict, message: str) -> None:
    path = tmp_path / "d.csv"
    path.write_text(content)
    with pytest.raises(InvalidInputError, match=message):
        datasets.load_csv(path, **kwargs)


def test_missing_csv_and_unknown_dataset(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="not found"):
        datasets.load_csv(tmp_path / "nope.csv")
    with pytest.raises(InvalidInputError, match="unknown dataset"):
        datasets.load("mnist")


def test_cli_version_and_catalogue() -> None:
    assert runner.invoke(app, ["--version"]).stdout.strip() == f"dpaudit {__version__}"
    out = runner.invoke(app, ["mechanisms"])
    assert out.exit_code == 0 and "ndlaplace-thesis" in out.stdout and "metric" in out.stdout
    out = runner.invoke(app, ["datasets"])
    assert out.exit_code == 0 and "breast-cancer" in out.stdout


def test_cli_unknown_command_exits_2() -> None:
    out = runner.invoke(app, ["frobnicate"])
    assert out.exit_code == 2


def test_datasets_lists_each_public_box() -> None:
    """A plug-in author matching a clipping box needs each dataset's public box: the listing shows it."""
    from typer.testing import CliRunner

    from dpaudit.cli import app
    from dpaudit.commands.catalogue import box_text

    res = CliRunner().invoke(app, ["datasets"])
    assert res.exit_code == 0 and "public box" in res.stdout and "[-15, 15]²" in res.stdout
    assert box_text(([0.0] * 64, [16.0] * 64)) == "[0, 16]⁶⁴"
    assert box_text(([0, 0, 0], [10, 5, 8])) == "[0, 10]×[0, 5]×…" and box_text(None) == "none"
