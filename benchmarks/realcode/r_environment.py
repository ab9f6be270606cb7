"""The corpus's R environments: an R library folder, built by ``R CMD INSTALL`` from a checkout, not a venv.

Harness-side (``benchmarks/bench_realcode.py``), beside :mod:`benchmarks.realcode.environments`.  Under the same
cache folder (default ``benchmarks/.venvs/realcode/``, gitignored):

* ``<env>/src/<package>/`` — a copy of the package's files from its checkout under ``--sources DIR``
  (``DIR/<owner>+<name>/``, at the catalogue's commit);
* ``<env>/library/`` — the R library ``R CMD INSTALL --no-docs --with-keep.source --library=<env>/library`` makes
  of that copy (the source references let the reproductions name the library's lines).

Nothing is downloaded: R and the R packages the package needs come from Debian (``r-base-core``, ``r-cran-*``),
and a machine without them is refused with the ``apt-get install`` line that brings them.  The record the results
keep has no ``python`` (the rows are programs, run by dpaudit's own workers) but the library folder the harness
gives each program (``--library``), the interpreter the reproductions run in (``Rscript``), and the versions of R,
the package (its DESCRIPTION's) and every R package it needs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.realcode.catalogue import R_ENVIRONMENTS, REnvironment
from benchmarks.realcode.environments import pinned_checkout, runnable

MARKER = "realcode-env.json"
RSCRIPT = "Rscript"
_VERSIONS = ('cat(jsonlite::toJSON(c(list(R = paste(R.version$major, R.version$minor, sep = ".")), '
             'lapply(setNames(nm = PACKAGES), function(p) as.character(utils::packageVersion(p)))), '
             'auto_unbox = TRUE))')


def _r_vector(names: list[str]) -> str:
    return "c(" + ", ".join(json.dumps(n) for n in names) + ")"


def _r(code: str, library: Path | None = None, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """``Rscript -e code`` (with ``library`` first on the library path)."""
    head = f".libPaths(c({json.dumps(str(library))}, .libPaths())); " if library is not None else ""
    return subprocess.run([RSCRIPT, "-e", head + code], capture_output=True, text=True, timeout=timeout)


def check_r(env: REnvironment) -> None:
    """Refuse (one ``Error:`` line naming the ``apt-get`` line) when Rscript or an R package the package needs is
    missing: the benchmark installs nothing from a registry for R."""
    if shutil.which(RSCRIPT) is None or shutil.which("R") is None:
        raise SystemExit(f"Error: {env.key} needs R (Rscript and R are not on PATH): {env.apt_get}")
    wanted = [name for name, _ in env.depends]
    probe = _r(f"cat(Filter(function(p) !requireNamespace(p, quietly = TRUE), {_r_vector(wanted)}), sep = ' ')")
    missing = probe.stdout.split() if probe.returncode == 0 else wanted
    if missing:
        debian = " ".join(deb for name, deb in env.depends if name in missing)
        raise SystemExit(f"Error: {env.key} needs the R package(s) {', '.join(missing)} from Debian ({debian}): "
                         f"{env.apt_get}")


def r_versions(env: REnvironment, library: Path) -> dict[str, str] | None:
    """R's version, the package's (as installed in ``library``) and those of the R packages it needs."""
    names = [env.package, *(name for name, _ in env.depends)]
    out = _r(_VERSIONS.replace("PACKAGES", _r_vector(names)), library)
    if out.returncode != 0:
        return None
    found: dict[str, str] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def copy_package(env: REnvironment, folder: Path, sources: Path | None) -> dict[str, Any]:
    """The package's files from its checkout into ``folder/src/<package>/``; what was copied, and from where."""
    checkout = pinned_checkout(env.key, env.source, sources)
    copy = folder / "src" / env.package
    if copy.exists():
        shutil.rmtree(copy)
    copy.mkdir(parents=True)
    for path in env.source.files:
        origin = checkout / path
        if not origin.exists():
            raise SystemExit(f"Error: {origin} is missing (a sparse checkout without {path}?)")
        (shutil.copytree if origin.is_dir() else shutil.copy2)(origin, copy / origin.name)
    return {"repo": env.source.repo, "commit": env.source.commit, "files": list(env.source.files)}


def build_r_environment(env: REnvironment, root: Path, sources: Path | None, reuse: bool) -> dict[str, Any]:
    """Build (or reuse) ``env``'s R library under ``root``: what the results record of it."""
    t0 = time.perf_counter()
    check_r(env)
    folder = root / env.key
    library = folder / "library"
    marker = folder / MARKER
    source = copy_package(env, folder, sources)
    wanted = {"package": env.package, "source": env.source.commit, "depends": [list(d) for d in env.depends]}
    reused = (reuse and marker.exists() and json.loads(marker.read_text(encoding="utf-8")) == wanted
              and (library / env.package / "DESCRIPTION").exists())
    if not reused:
        if library.exists():
            shutil.rmtree(library)
        library.mkdir(parents=True)
        cmd = ["R", "CMD", "INSTALL", "--no-docs", "--with-keep.source", f"--library={library}",
               str(folder / "src" / env.package)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"Error: R CMD INSTALL of {env.package} failed: {done.stderr.strip()[-1500:]}")
        marker.write_text(json.dumps(wanted), encoding="utf-8")
    versions = r_versions(env, library)
    if versions is None or env.package not in versions:
        raise SystemExit(f"Error: {library} lacks {env.package} after R CMD INSTALL ({versions})")
    return {"title": env.title, "requirements": [f"apt:{p}" for p in env.apt_get.split()[2:]], "python": None,
            "interpreter": RSCRIPT, "library": runnable(library), "versions": versions, "source": source,
            "setup_seconds": time.perf_counter() - t0, "reused": reused}


def build_r_all(keys: list[str], root: Path, sources: Path | None, reuse: bool) -> dict[str, Any]:
    """Every R environment the rows name: key → its record."""
    return {key: build_r_environment(R_ENVIRONMENTS[key], root, sources, reuse) for key in keys}
