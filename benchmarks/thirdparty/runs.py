"""How ``benchmarks/bench_thirdparty.py`` runs things: the third party's interpreter (a virtual environment
built from the registry) and each ``dpaudit`` run, audit or witness in a subprocess, read back as a
:class:`~benchmarks.thirdparty.catalogue.Run`.  Harness-side, like ``page.py``: ``functions.py`` is the third
party's code and imports nothing of this.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.thirdparty.catalogue import (
    CLAIM,
    GRID_RECORDS,
    Function,
    Run,
)

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ("numpy", "diffprivlib==0.6.6", "scikit-learn<1.8", "dp-accounting")
RUN_TIMEOUT = 1800.0  # seconds per dpaudit run before the harness gives up on it (a row says so)


# ---------------------------------------------------------------------------------------------
# The third party's interpreter
# ---------------------------------------------------------------------------------------------

def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def packages_of(python: Path) -> dict[str, str] | None:
    """Versions of Python, numpy, scikit-learn and diffprivlib in ``python`` (None: it lacks one)."""
    probe = ("import json, platform, importlib.metadata as md, numpy, sklearn, diffprivlib, dp_accounting; "
             "print(json.dumps({'python': platform.python_version(), 'numpy': numpy.__version__, "
             "'scikit-learn': sklearn.__version__, 'diffprivlib': diffprivlib.__version__, "
             "'dp-accounting': md.version('dp-accounting')}))")
    try:
        out = subprocess.run([str(python), "-c", probe], check=False, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def ensure_venv(venv: Path, recreate: bool) -> dict[str, str]:
    """Create (or reuse) the third party's virtual environment from the registry; its package versions."""
    python = venv_python(venv)
    if not recreate and python.exists():
        versions = packages_of(python)
        if versions is not None and versions["diffprivlib"] == "0.6.6":
            return versions
        print(f"{venv} is incomplete; building it afresh", file=sys.stderr)
    if venv.exists():
        shutil.rmtree(venv)
    print(f"creating {venv}: python -m venv, pip install {' '.join(REQUIREMENTS)}", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *REQUIREMENTS], check=True)
    versions = packages_of(python)
    if versions is None:
        raise SystemExit(f"Error: {python} cannot import numpy, scikit-learn and diffprivlib after pip install")
    return versions


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------

def dpaudit_executable() -> list[str]:
    """The ``dpaudit`` console script of this interpreter's environment (else ``python -m dpaudit``)."""
    script = Path(sys.executable).parent / ("dpaudit.exe" if os.name == "nt" else "dpaudit")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dpaudit"]


def shown(argv: list[str], scratch: Path) -> str:
    """The command as a user types it from the repository's root: ``dpaudit …``, scratch paths as $SCRATCH."""
    text = shlex.join(["dpaudit", *argv])
    return text.replace(str(scratch), "$SCRATCH")


def execute(argv: list[str], scratch: Path, timeout: float) -> tuple[int, float, str]:
    """Run ``dpaudit argv`` from the repository's root; (exit code, wall seconds, stderr)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([*dpaudit_executable(), *argv], check=False, cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)
        code, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code = -1
        err = (exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")) + \
            f"\n(harness: no answer within {timeout:.0f} s; stopped)"
    return code, time.perf_counter() - t0, err


def _findings_of(res: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: f.get(k) for k in ("kind", "part", "count", "calls", "share", "blocking", "error") if k in f}
            for f in res.get("findings") or []]


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def claim_args(fn: Function) -> list[str]:
    """The function's own claim and domain: ``--delta`` for an (ε, δ) claim, ``--bounds`` for its public box."""
    return [*(["--delta", f"{fn.delta:g}"] if fn.delta > 0 else []), *(["--bounds", fn.bounds] if fn.bounds else [])]


def estimate_argv(fn: Function, seed: int, python: str, out: Path, extra: list[str], *,
                  time_budget: float | None = None, data: Path | None = None) -> list[str]:
    """The ``dpaudit estimate-eps`` arguments of one run (``out``: its --json file)."""
    return ["estimate-eps", "-m", f"{fn.file}:{fn.name}", "--eps", f"{CLAIM:g}", *claim_args(fn),
            "--output", "centroids", *(["--data", str(data)] if data is not None else []),
            "--python", python, *(["--seed", str(seed)] if seed else []),
            *(["--time-budget", f"{time_budget:g}"] if time_budget else []), *extra, "--json", str(out),
            "--out", str(out.with_suffix("")), "--force"]


def estimate_run(fn: Function, seed: int, python: str, scratch: Path, extra: list[str], timeout: float, *,
                 time_budget: float | None = None, data: Path | None = None, d: int | None = None) -> Run:
    """One ``estimate-eps`` run of ``fn`` (at ``time_budget`` seconds, on the ``data`` CSV of dimension ``d``)."""
    tag = (f"-budget{time_budget:g}" if time_budget else "") + (f"-d{d}" if d is not None else "")
    out = scratch / f"{fn.name}{tag}-seed{seed}.json"
    argv = estimate_argv(fn, seed, python, out, extra, time_budget=time_budget, data=data)
    code, wall, err = execute(argv, scratch, timeout + (time_budget or 0.0))
    run = Run(fn.name, fn.correct, "estimate-eps", seed, shown(argv, scratch), code, wall, time_budget=time_budget,
              d=d)
    if not out.exists():
        run.error = _tail(err) or f"exit code {code}, no JSON written"
        return run
    res = json.loads(out.read_text(encoding="utf-8"))
    run.verdict = res.get("verdict")
    _read_estimate(run, res)
    run.selection_releases = res.get("selection_samples_total")
    run.dpaudit_seconds = res.get("elapsed_seconds")
    run.findings = _findings_of(res)
    run.status = res.get("status")
    if code not in (0, 1, 3):
        run.error = _tail(err)
    return run


def blobs_csv(folder: Path, d: int, records: int = GRID_RECORDS, seed: int = 0) -> Path:
    """A seeded blobs dataset in [-1, 1]^d written as CSV (header x1, …, xd): three centres drawn uniformly
    in [-0.6, 0.6]^d, records around them with standard deviation 0.15, clipped into the box."""
    import numpy as np

    rng = np.random.default_rng([seed, d])
    centres = rng.uniform(-0.6, 0.6, size=(3, d))
    X = np.clip(centres[rng.integers(0, 3, size=records)] + rng.normal(scale=0.15, size=(records, d)), -1.0, 1.0)
    path = folder / f"blobs-{d}d.csv"
    lines = [",".join(f"x{i + 1}" for i in range(d))] + [",".join(f"{v:.6f}" for v in row) for row in X]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _read_estimate(run: Run, est: dict[str, Any]) -> None:
    """The ε estimate's figures (estimate-eps's JSON, or the audit's ``epsilon_estimate``) into ``run``."""
    pair = est.get("pair") or None
    run.epsilon_lower_bound = est.get("epsilon_lower_bound")
    run.ceiling = est.get("ceiling")
    run.samples = est.get("samples")
    run.pair = None if pair is None else {k: pair.get(k) for k in ("name", "family", "relation", "records_D",
                                                                    "records_D_prime", "description")}
    run.event = (est.get("event") or {}).get("text")
    run.counts = est.get("counts") or None
    run.leak_warnings = list(est.get("leak_warnings") or [])


def audit_run(fn: Function, python: str, scratch: Path, timeout: float) -> Run:
    """``dpaudit audit`` at its defaults (seed 0) into a scratch report folder."""
    out = scratch / f"audit-{fn.name}"
    argv = ["audit", "-m", f"{fn.file}:{fn.name}", "--eps", f"{CLAIM:g}", *claim_args(fn), "--output",
            "centroids", "--python", python, "--out", str(out)]
    code, wall, err = execute(argv, scratch, timeout)
    run = Run(fn.name, fn.correct, "audit", 0, shown(argv, scratch), code, wall)
    results = out / "results.json"
    if not results.exists():
        run.error = _tail(err) or f"exit code {code}, no results.json written"
        return run
    res = json.loads(results.read_text(encoding="utf-8"))
    run.verdict = res.get("verdict")
    _read_estimate(run, res.get("epsilon_estimate") or {})
    run.findings = _findings_of(res)
    run.parts = [{k: row.get(k) for k in ("part", "value", "verdict")} for row in res.get("verdict_table") or []]
    run.dpaudit_seconds = sum((res.get("provenance") or {}).get("durations_seconds", {}).values()) or None
    if code not in (0, 1, 3):
        run.error = _tail(err)
    return run


# ---------------------------------------------------------------------------------------------
# Provenance
# ---------------------------------------------------------------------------------------------



# ---------------------------------------------------------------------------------------------

def run_witnesses(python: str, fits: int, names: list[str], scratch: Path, timeout: float) -> list[dict[str, Any]]:
    """``benchmarks/thirdparty/witnesses.py`` in the third party's interpreter (buggy functions only; a grid
    cell as ``NAME@D``, its row marked ``grid``)."""
    if fits <= 0 or not names:
        return []
    out = scratch / "witnesses.json"
    argv = [python, "benchmarks/thirdparty/witnesses.py", "--fits", str(fits), "--only", ",".join(names),
            "--json", str(out)]
    proc = subprocess.run(argv, check=False, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not out.exists():
        print(f"witnesses failed (exit {proc.returncode}):\n{_tail(proc.stderr)}", file=sys.stderr)
        return []
    sys.stderr.write(proc.stdout)
    rows = json.loads(out.read_text(encoding="utf-8"))
    for name, row in zip(names, rows):
        row["grid"] = "@" in name
    out.unlink()
    return rows
