"""The corpus's interpreters: virtual environments from the registry, source copies, and mutants layered on them.

Harness-side (``benchmarks/bench_realcode.py``).  Everything goes under one cache folder (default
``benchmarks/.venvs/realcode/``, gitignored):

* ``<env>/`` — a venv with the environment's pinned requirements (pip, from the registry) and, for code from a
  public repository, ``<env>/src/``: a copy of the files a user takes from a checkout under ``--sources DIR``
  (``DIR/<owner>+<name>/``, which must be at the catalogue's commit), put on the interpreter's path by a
  ``.pth`` file, as ``pip install -e`` or a ``sys.path`` line would.  Nothing is downloaded but the packages.
* ``<env>+<mutant>/`` — a venv with no packages of its own whose ``.pth`` puts a patched copy of the code first
  and the base environment's site-packages after it: the same libraries, one line changed.

An environment is rebuilt unless ``reuse`` is asked and its marker file says it was built from the same
requirements and source commit (a mutant: from the same patch); otherwise it is built afresh.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks._outputs import REPOSITORY
from benchmarks.bench_libraries import make_venv, package_versions, venv_python
from benchmarks.realcode.catalogue import ENVIRONMENTS, MUTANTS, Environment, Mutant

MARKER = "realcode-env.json"
PTH = "realcode-source.pth"


def runnable(python: Path) -> str:
    """The interpreter as the commands name it: relative to the repository when inside it (not resolved: a venv's
    interpreter is a link out of it; the runs start there, and the results then carry no machine path), else absolute."""
    path = python.absolute()
    return path.relative_to(REPOSITORY).as_posix() if path.is_relative_to(REPOSITORY) else str(path)


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages")) or sorted(venv.glob("Lib/site-packages"))
    if not found:
        raise SystemExit(f"Error: {venv} has no site-packages")
    return found[0]


def checkout_commit(folder: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def pinned_checkout(key: str, source: Any, sources: Path | None) -> Path:
    """``sources/<owner>+<name>/``, checked to be at the commit the corpus pins (a clear error otherwise)."""
    if sources is None:
        raise SystemExit(f"Error: {key} needs a checkout of {source.repo}: give --sources DIR with "
                         f"DIR/{source.folder}/ at commit {source.commit}")
    checkout = sources / source.folder
    commit = checkout_commit(checkout)
    if commit != source.commit:
        raise SystemExit(f"Error: {checkout} is {'at ' + commit if commit else 'not a git checkout'}; the corpus "
                         f"pins {source.repo} at {source.commit}")
    return checkout


def copy_source(env: Environment, venv: Path, sources: Path | None) -> dict[str, Any]:
    """The source's files from its checkout into ``venv/src/``, on the path; what was copied, and from where."""
    assert env.source is not None
    checkout = pinned_checkout(env.key, env.source, sources)
    src = venv / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir()
    for path in env.source.files:
        origin = checkout / path
        if not origin.exists():
            raise SystemExit(f"Error: {origin} is missing (a sparse checkout without {path}?)")
        (shutil.copytree if origin.is_dir() else shutil.copy2)(origin, src / origin.name)
    (site_packages(venv) / PTH).write_text(str(src.resolve()) + "\n", encoding="utf-8")
    return {"repo": env.source.repo, "commit": env.source.commit, "files": list(env.source.files)}


def build_environment(env: Environment, root: Path, sources: Path | None, reuse: bool) -> dict[str, Any]:
    """Build (or reuse) ``env`` under ``root``: what the results record of it."""
    t0 = time.perf_counter()
    venv = root / env.key
    python = venv_python(venv)
    wanted = {"requirements": list(env.requirements), "source": env.source.commit if env.source else None}
    marker = venv / MARKER
    reused = reuse and python.exists() and marker.exists() and json.loads(marker.read_text()) == wanted
    if not reused:
        base = shutil.which(env.python) or env.python
        make_venv(venv, env.requirements, base)
    source = copy_source(env, venv, sources) if env.source else None
    marker.write_text(json.dumps(wanted), encoding="utf-8")
    versions = package_versions(python, list(env.packages))
    if versions is None or any(name not in versions for name in env.packages):
        raise SystemExit(f"Error: {python} lacks some of {', '.join(env.packages)} ({versions})")
    return {"title": env.title, "requirements": list(env.requirements), "python": runnable(python),
            "versions": versions, "source": source, "setup_seconds": time.perf_counter() - t0, "reused": reused}


def apply_patch(mutant: Mutant, overlay: Path) -> dict[str, Any]:
    """Replace the patch's text in the overlay's copy; the line it changes (1-based) and both texts."""
    target = overlay / mutant.patch.file
    text = target.read_text(encoding="utf-8")
    if text.count(mutant.patch.old) != 1:
        raise SystemExit(f"Error: {mutant.key}: the text to patch occurs {text.count(mutant.patch.old)} times in "
                         f"{mutant.patch.file} (another version of the code?)")
    at = text.index(mutant.patch.old)
    target.write_text(text.replace(mutant.patch.old, mutant.patch.new), encoding="utf-8")
    line = text[:at].count("\n") + 1
    return {"file": mutant.patch.file, "line": line, "where": f"{mutant.patch.file}:{line}",
            "old": mutant.patch.old, "new": mutant.patch.new}


def build_mutant(mutant: Mutant, root: Path, reuse: bool = False) -> dict[str, Any]:
    """The mutant's layered venv over its (built) base: a patched copy first on the path, the base's packages after.
    With ``reuse``, one built from the same patch is kept (a second copy of the harness running beside the first
    must not replace the interpreter the first is using)."""
    t0 = time.perf_counter()
    base = root / mutant.base
    venv = root / mutant.key
    marker = venv / MARKER
    wanted = {"base": mutant.base, "copies": mutant.copies, "file": mutant.patch.file, "old": mutant.patch.old,
              "new": mutant.patch.new}
    if reuse and marker.exists() and venv_python(venv).exists():
        kept = json.loads(marker.read_text(encoding="utf-8"))
        if {k: kept.get(k) for k in wanted} == wanted:
            return _mutant_record(mutant, venv, kept["patch"], time.perf_counter() - t0)
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([str(venv_python(base)), "-m", "venv", "--without-pip", str(venv)], check=True)
    overlay = venv / "overlay"
    if mutant.copies == "src":
        shutil.copytree(base / "src", overlay)
    else:
        shutil.copytree(site_packages(base) / mutant.copies, overlay / mutant.copies)
    patch = apply_patch(mutant, overlay)
    (site_packages(venv) / PTH).write_text(f"{overlay.resolve()}\n{site_packages(base).resolve()}\n", encoding="utf-8")
    marker.write_text(json.dumps({**wanted, "patch": patch}), encoding="utf-8")
    return _mutant_record(mutant, venv, patch, time.perf_counter() - t0)


def _mutant_record(mutant: Mutant, venv: Path, patch: dict[str, Any], seconds: float) -> dict[str, Any]:
    return {"title": f"{ENVIRONMENTS[mutant.base].title}, mutant: {mutant.what}", "base": mutant.base,
            "python": runnable(venv_python(venv)), "patch": patch, "setup_seconds": seconds}


def build_all(keys: list[str], root: Path, sources: Path | None, reuse: bool) -> dict[str, Any]:
    """Every environment the rows name (a mutant's base first): key → its record."""
    built: dict[str, Any] = {}
    for key in keys:
        base_key = MUTANTS[key].base if key in MUTANTS else key
        if base_key not in built:
            built[base_key] = build_environment(ENVIRONMENTS[base_key], root, sources, reuse)
        if key in MUTANTS and key not in built:
            built[key] = {**build_mutant(MUTANTS[key], root, reuse), "versions": built[base_key]["versions"],
                          "source": built[base_key]["source"]}
    return built
