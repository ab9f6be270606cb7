"""A ``package.module:attr`` plug-in in the working directory is found without ``PYTHONPATH``.

A user in a project directory runs ``dpaudit estimate-eps --mechanism mypkg.mymod:release``
with ``mypkg/`` beside them, as pytest finds a project's package from its rootdir: the working
directory is looked up too (:func:`dpaudit.mechanisms.plugins.plugin_root`, added to ``sys.path`` by
:func:`dpaudit.mechanisms.plugins.on_import_path`; the ``--mechanism`` option does so for every command).
The plug-in runs in a worker process, which gets the directory on its own ``sys.path`` from the
load request (``plugin_root``): the end-to-end runs below go through it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import dpaudit.mechanisms
from dpaudit.cli import app
from dpaudit.mechanisms.plugins import on_import_path, plugin_root

NOISE = "SCALE = 2.0\n"
RELEASE = ("import numpy as np\n\nfrom {package}.noise import SCALE\n\n\n"
           "def release(X, epsilon, rng):\n"
           "    return np.clip(X, -10, 10) + rng.laplace(scale=SCALE * 20 / epsilon, size=X.shape)\n")
SMALL = ["--eps", "1", "--samples", "200", "--no-progress"]
IMPORT_FAILED = ("No module named", "cannot import", "ModuleNotFoundError")



def _project(root: Path, package: str) -> str:
    """A project directory holding ``package`` (a release function importing a module of its own); its spec."""
    (root / package).mkdir()
    (root / package / "__init__.py").write_text("", encoding="utf-8")
    (root / package / "noise.py").write_text(NOISE, encoding="utf-8")
    (root / package / "mymod.py").write_text(RELEASE.format(package=package), encoding="utf-8")
    return f"{package}.mymod:release"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A fresh project directory as the working directory, no PYTHONPATH, sys.path restored afterwards."""
    root = tmp_path / "project"
    root.mkdir()
    package = f"lookup_{tmp_path.name.replace('-', '_')}"
    spec = _project(root, package)
    monkeypatch.chdir(root)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    return root, spec


def test_the_working_directory_is_the_root_only_of_a_package_it_holds(project: tuple[Path, str]) -> None:
    root, spec = project
    assert plugin_root(spec) == str(root)
    assert plugin_root(spec, cwd=str(root.parent)) is None  # the package is not there
    assert plugin_root("ndlaplace") is None  # a registered name
    assert plugin_root(f"{root / 'plug.py'}:fn") is None and plugin_root("plug.py:fn") is None  # a file
    assert plugin_root("not_here.mod:fn") is None


def test_the_package_is_imported_from_the_working_directory(project: tuple[Path, str]) -> None:
    root, spec = project
    assert on_import_path(spec) == str(root) and sys.path[-1] == str(root)  # after the installed packages
    assert on_import_path(spec) == str(root) and sys.path.count(str(root)) == 1  # once
    mech = dpaudit.mechanisms.get(spec, epsilon=1.0, output="points")  # its own `from package.noise import …` too
    assert mech.fn.__module__ == spec.partition(":")[0]  # type: ignore[attr-defined]


def test_the_command_line_finds_the_package_in_the_working_directory(project: tuple[Path, str]) -> None:
    root, spec = project
    res = CliRunner().invoke(app, ["estimate-eps", "--mechanism", spec, *SMALL, "--out", str(root / "run")])
    assert not any(text in res.output for text in IMPORT_FAILED), res.output
    assert res.exit_code in (0, 1, 3) and (root / "run" / "results.json").is_file(), res.output


def _argv(how: str) -> list[str] | None:
    """How a user starts dpaudit: ``python -m dpaudit``, or the console script (None: not installed here)."""
    if how == "python -m dpaudit":
        return [sys.executable, "-m", "dpaudit"]
    script = shutil.which("dpaudit", path=str(Path(sys.executable).parent))
    return [script] if script else None


@pytest.mark.parametrize("how", ["python -m dpaudit", "dpaudit"])
def test_a_real_run_finds_the_package_in_the_working_directory(project: tuple[Path, str], how: str) -> None:
    root, spec = project
    argv = _argv(how)
    if argv is None:
        pytest.skip(f"{how} is not installed here")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([*argv, "estimate-eps", "--mechanism", spec, *SMALL, "--out", str(root / "run")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    if "No module named 'dpaudit'" in proc.stderr:
        pytest.skip("dpaudit is not installed in this interpreter (only on PYTHONPATH)")
    assert not any(text in proc.stderr for text in IMPORT_FAILED), proc.stderr
    assert proc.returncode in (0, 1, 3) and (root / "run" / "results.json").is_file(), proc.stderr
