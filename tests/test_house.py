"""The house rules: one import name, every package folder installed (and from a checkout only the layer folders
joining the package), no module reaching for another's private names, built-ins known by who registered them.

Read from the installed distribution's metadata and from the source with ``ast`` (nothing of the audited
kind is run).
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

import dpaudit.mechanisms
from dpaudit.mechanisms import registry

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"dpaudit": "dpaudit", "attacks": "dpaudit.attacks", "mechanisms": "dpaudit.mechanisms",
           "execution": "dpaudit.execution"}
# Where "no module imports another's private name" is checked: the package, and the code that uses it as a
# user would (benchmarks, examples, tests, the docs' hooks).
CHECKED = ("dpaudit", "attacks", "mechanisms", "execution", "benchmarks", "examples", "tests", "docs")


def _installed() -> importlib.metadata.Distribution:
    """dpaudit's installed distribution: the one with a RECORD (a wheel's, or an editable install's) — not an
    ``dpaudit.egg-info`` a build may leave in the checkout, which lists the source tree."""
    found = [d for d in importlib.metadata.distributions(name="dpaudit") if d.read_text("RECORD") is not None]
    assert found, "dpaudit is not installed (pip install .)"
    return found[0]


def test_the_distribution_installs_one_top_level_import_name() -> None:
    dist = _installed()
    top_level = (dist.read_text("top_level.txt") or "").split()
    assert top_level == ["dpaudit"], top_level
    # and every module the wheel holds lives under it (an editable install holds only its finder and .pth)
    files = [f for f in dist.files or [] if f.suffix == ".py" and ".dist-info" not in str(f)]
    outside = [str(f) for f in files if f.parts[0] != "dpaudit" and not f.name.startswith("__editable__")]
    assert not outside, outside


def test_every_package_folder_is_installed_under_its_name() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {name: folder for folder, name in FOLDERS.items()}
    folders = {p.parent for folder in FOLDERS for p in (ROOT / folder).rglob("__init__.py")}
    wanted = {".".join([FOLDERS[f.relative_to(ROOT).parts[0]], *f.relative_to(ROOT).parts[1:]]) for f in folders}
    assert sorted(config["packages"]) == sorted(wanted)


def test_the_layers_import_under_the_one_name() -> None:
    import dpaudit.attacks.epsilon as epsilon
    import dpaudit.execution as execution

    assert epsilon.__name__ == "dpaudit.attacks.epsilon" and execution.__name__ == "dpaudit.execution"
    assert Path(dpaudit.mechanisms.__file__).parent.name == "mechanisms"
    for name in ("estimate_epsilon", "PrivacyClaim", "get_mechanism", "ShokriAttack", "reconstruct"):
        assert getattr(dpaudit, name) is not None


# Run from the checkout's root (first on sys.path, as under ``python -c`` there): what each name imports from.
CHECKOUT_PROBE = r"""
import importlib, json, sys
import dpaudit
found = {"dpaudit": dpaudit.__file__}
for name in ("dpaudit.attacks", "dpaudit.execution", "dpaudit.mechanisms", "dpaudit.attacks.epsilon.sampling.budget",
             "dpaudit.dpaudit", "dpaudit.benchmarks", "dpaudit.tests", "dpaudit.examples", "dpaudit.docs"):
    try:
        module = importlib.import_module(name)
        found[name] = getattr(module, "__file__", None) or list(module.__path__)
    except ModuleNotFoundError as exc:
        found[name] = None if exc.name == name else f"{exc.name} missing"
for name in [m for m in sys.modules if m == "dpaudit" or m.startswith("dpaudit.")]:
    del sys.modules[name]
import dpaudit  # again: its finder is not put on the meta path twice
found["finders"] = sum(type(f).__name__ == "_CheckoutLayers" for f in sys.meta_path)
print(json.dumps(found))
"""


def test_from_a_checkout_only_the_three_layers_join_the_package() -> None:
    proc = subprocess.run([sys.executable, "-c", CHECKOUT_PROBE], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    finders = found.pop("finders")
    assert found == {"dpaudit": str(ROOT / "dpaudit" / "__init__.py"),
                     "dpaudit.attacks": str(ROOT / "attacks" / "__init__.py"),
                     "dpaudit.execution": str(ROOT / "execution" / "__init__.py"),
                     "dpaudit.mechanisms": str(ROOT / "mechanisms" / "__init__.py"),
                     "dpaudit.attacks.epsilon.sampling.budget": str(ROOT / "attacks" / "epsilon" / "sampling" / "budget.py"),
                     "dpaudit.dpaudit": None, "dpaudit.benchmarks": None, "dpaudit.tests": None,
                     "dpaudit.examples": None, "dpaudit.docs": None}
    assert finders == 1


def _private_imports(path: Path) -> list[str]:
    """``from module import _name`` of a name that is not itself a module, and ``module._name`` on a module
    bound by an import — each as ``file:line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules: set[str] = set()   # names bound to imported modules
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):  # this project's modules only (os._exit is the standard library's)
            modules.update((a.asname or a.name).split(".")[0] for a in node.names
                           if a.name.split(".")[0] in ("dpaudit", "benchmarks"))
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                private = a.name.startswith("_") and not a.name.startswith("__")
                if private and not _is_module(path, node, a.name):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {'.' * node.level}{node.module or ''} "
                               f"import {a.name}")
                elif _is_module(path, node, a.name):
                    modules.add(a.asname or a.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def _is_module(path: Path, node: ast.ImportFrom, name: str) -> bool:
    """Whether ``from … import name`` imports a module of this repository (a private *module*, such as the
    worker's, may be imported; a private *name* may not)."""
    if node.level:
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        parts = (node.module or "").split(".") if node.module else []
        folder = base.joinpath(*parts)
    else:
        parts = (node.module or "").split(".")
        if parts[0] != "dpaudit":
            folder = ROOT.joinpath(*parts)
        else:
            top = parts[1] if len(parts) > 1 and parts[1] in FOLDERS else None
            folder = ROOT.joinpath(*(parts[1:] if top else parts))
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()


def test_no_module_imports_another_modules_private_name() -> None:
    found = [hit for folder in CHECKED for path in sorted((ROOT / folder).rglob("*.py"))
             if ".venvs" not in path.parts for hit in _private_imports(path)]
    assert not found, "private names used across modules (give them a public name):\n" + "\n".join(found)


@pytest.mark.parametrize("source, expected", [
    ("from .pair_families import _add_remove_pairs\n", ["from .pair_families import _add_remove_pairs"]),
    ("import dpaudit.mechanisms.likelihood as lk\nlk._box(1)\n", ["lk._box"]),
    ("from dpaudit.execution import _worker_calls\n", []),  # a private module: allowed
    ("from .x import __version__\nself._own = 1\n", []),
])
def test_the_private_name_check_catches_what_it_should(tmp_path: Path, monkeypatch, source: str,
                                                       expected: list[str]) -> None:
    here = ROOT / "attacks" / "epsilon" / "pairs" / "_house_probe.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    hits = _private_imports(here)
    assert [h.split(": ", 1)[1] for h in hits] == expected


def test_built_ins_are_known_by_who_registered_them() -> None:
    assert registry.is_builtin("ndlaplace") and not registry.is_builtin("my_pkg.mechanisms:Thing")
    # an entry point or spec may name a module under dpaudit.mechanisms: still not a built-in
    assert not registry.is_builtin("dpaudit.mechanisms.ndlaplace:NDLaplace")
    with pytest.raises(RuntimeError, match="dpaudit's own"):
        registry.register_builtin("mine", "my_pkg:Mine", release_kind="vector", neighbours="add-remove",
                                  summary="", source="")
    assert "mine" not in dpaudit.mechanisms.available()
