"""MkDocs hook: the API pages read the package as it installs — one import name, ``dpaudit`` — from the checkout.

The repository keeps the layers as folders beside ``dpaudit/`` (``attacks/``, ``mechanisms/``, ``execution/``)
that an installation maps into it (``pyproject.toml``, ``package-dir``).  mkdocstrings reads sources, not
imports, so at start-up this hook lays out ``build/api-view/dpaudit``: symbolic links to every entry of
``dpaudit/`` and to the three layer folders, which is the installed package's shape; ``mkdocs.yml`` points
mkdocstrings there.  Nothing is copied and the checkout is not changed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VIEW = ROOT / "build" / "api-view"
LAYERS = ("attacks", "mechanisms", "execution")


def lay_out(view: Path = VIEW) -> Path:
    """``view``/dpaudit as the installed package: links to dpaudit/'s entries and to the layer folders."""
    package = view / "dpaudit"
    if view.exists():
        shutil.rmtree(view)
    package.mkdir(parents=True)
    for entry in sorted((ROOT / "dpaudit").iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    for layer in LAYERS:
        (package / layer).symlink_to(ROOT / layer, target_is_directory=True)
    return view


def on_startup(command: str, dirty: bool, **kwargs: Any) -> None:
    lay_out()


if __name__ == "__main__":
    print(lay_out())
