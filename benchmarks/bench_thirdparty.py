"""Third-party DP k-means functions audited at dpaudit's defaults, as a user runs them.

    python benchmarks/bench_thirdparty.py [--out benchmarks/results/thirdparty.md] [--force]
    python benchmarks/bench_thirdparty.py --quick                    # a smoke run: small samples, seed 0
    python benchmarks/bench_thirdparty.py --only dplloyd_correct --seeds 3

The functions are plain ``fn(X, epsilon, rng) -> centroids`` plug-ins written the way outside
code is written (``benchmarks/thirdparty/functions.py``: numpy, and diffprivlib 0.6.6 for two of
them): two correct ones and six with real bugs (``benchmarks/thirdparty/catalogue.py`` says what
is wrong with each and its true ε).  Each is audited by the ``dpaudit`` command line in a
subprocess, exactly as a user would::

    dpaudit estimate-eps -m benchmarks/thirdparty/functions.py:<fn> --eps 1 --output centroids \\
        --python benchmarks/.venvs/thirdparty/bin/python --seed S --json <scratch>/<fn>-seedS.json

with ``--python`` the interpreter of a virtual environment that holds only the third party's
packages from the registry (``numpy``, ``diffprivlib==0.6.6``, ``scikit-learn<1.8``).  The
harness creates it under ``benchmarks/.venvs/thirdparty/`` (gitignored) on its first run and
reuses it after (``--recreate`` builds it afresh; ``--venv DIR`` puts it elsewhere).  Wall time is
the subprocess's: a user's wall time, the auditor's start-up and the worker's imports included.

Correct functions are audited with seeds 0…S−1 (``--seeds``, default 10) and must never be
VIOLATION; buggy ones with seeds 0…B−1 (``--buggy-seeds``, default 1) and must be VIOLATION at
seed 0, on a dataset they accept (a violation certified on fewer records than a function accepts
shows its refusal, not its bug).  Beside them, the *witnesses* (``benchmarks/thirdparty/witnesses.py``,
in the third party's interpreter): for each buggy function, the bound a skilled auditor certifies
on one pair and event read off the code, at about the default sample size (``--witness-fits``,
2,000 per dataset).  ``--audit`` adds a column: ``dpaudit audit`` on each function (seed 0, its
defaults, report in a scratch folder).  ``--quick`` is a smoke run (``--samples 200
--selection-samples 100 --max-pairs 2`` passed to dpaudit, seed 0 only, 200 witness fits) for the
slow-tier test; its verdicts mean little.  ``--dpaudit-args "..."`` passes more options to every
``estimate-eps`` run (they are shown in every command).  ``--from-json`` re-renders a page from a
JSON file this script wrote, without running dpaudit.

Output: a Markdown page (``--out``) and a JSON file beside it (same name, ``.json``) with every
run's command line, verdict, ε_lb, the pair and event that decided it, the findings and the wall
time; the dpaudit commit and the machine's core count head the page.  Without ``--out`` the page
is printed only.  An existing output file is never replaced without ``--force``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._outputs import add_force, git_commit, guard_outputs, portable
from benchmarks.thirdparty.catalogue import (
    CLAIM,
    FUNCTIONS,
    FUNCTIONS_FILE,
    GOAL_SEEDS,
    GRID_BOUNDS,
    GRID_DIMS,
    GRID_FUNCTIONS,
    GRID_RECORDS,
    Function,
    Run,
)
from benchmarks.thirdparty.page import (
    findings_text,
    fmt_num,
    grid_goals,
    markdown,
    pair_text,
    summary_rows,
    verdict_text,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = "benchmarks/.venvs/thirdparty"
REQUIREMENTS = ("numpy", "diffprivlib==0.6.6", "scikit-learn<1.8", "dp-accounting")
QUICK_ARGS = ("--samples", "200", "--selection-samples", "100", "--max-pairs", "2")
RUN_TIMEOUT = 1800.0  # seconds per dpaudit run before the harness gives up on it (a row says so)
WITNESS_FITS = 2000  # fits per dataset of the known-pair witnesses (≈ the default certification sample)


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
    return ["estimate-eps", "-m", f"{FUNCTIONS_FILE}:{fn.name}", "--eps", f"{CLAIM:g}", *claim_args(fn),
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
    argv = ["audit", "-m", f"{FUNCTIONS_FILE}:{fn.name}", "--eps", f"{CLAIM:g}", *claim_args(fn), "--output",
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


def grid_cells(functions: list[Function]) -> list[tuple[Function, int]]:
    """The grid's cells: every k-variant in ``functions`` at every dimension of :data:`GRID_DIMS`."""
    return [(fn, d) for fn in functions for d in GRID_DIMS]


def load_payload(path: Path) -> tuple[list[Run], list[Function], dict[str, Any], list[dict[str, Any]]]:
    """The runs, functions, meta and witnesses of a JSON file this harness wrote."""
    payload = json.loads(path.read_text(encoding="utf-8"))
    fields = set(Function.__dataclass_fields__)
    functions = [Function(**{k: v for k, v in f.items() if k in fields}) for f in payload["functions"]]
    run_fields = set(Run.__dataclass_fields__)
    runs = [Run(**{k: v for k, v in r.items() if k in run_fields}) for r in payload["runs"]]
    return runs, functions, payload["meta"], payload.get("witnesses") or []


def write_outputs(args: argparse.Namespace, runs: list[Run], functions: list[Function], meta: dict[str, Any],
                  witnesses: list[dict[str, Any]]) -> None:
    text = markdown(runs, functions, meta, witnesses)
    print(text)
    if args.out is None:
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    payload = {"meta": meta, "functions": [asdict(f) for f in functions],
               "goals": summary_rows(runs, functions, witnesses)[1], "grid_goals": grid_goals(runs, functions, witnesses),
               "witnesses": witnesses, "runs": [asdict(r) for r in runs]}
    args.json_out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out} and {args.json_out}", file=sys.stderr)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None,
                    help="write the page here (Markdown) and the runs beside it (.json); e.g. "
                         "benchmarks/results/thirdparty.md")
    ap.add_argument("--label", default="", help="a word for the page's title, e.g. 'before'")
    ap.add_argument("--only", default="",
                    help="comma-separated function names (default: all); with --grid, grid names (e.g. "
                         "dplloyd_empty_skip_k3) select grid rows")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per correct function (default 10; quick 1)")
    ap.add_argument("--buggy-seeds", type=int, default=GOAL_SEEDS,
                    help=f"seeds per buggy function (default {GOAL_SEEDS}: the goal is VIOLATION on each)")
    ap.add_argument("--correct-budget", type=float, default=0.0,
                    help="also audit every correct function on each seed with --time-budget SECONDS (e.g. 240)")
    ap.add_argument("--grid", action="store_true",
                    help="also the grid table: the diffprivlib and DPLloyd functions at k = 2, 3, 4 on blobs "
                         "data in [-1, 1]^d, d = 1, 2, 3 (--data, --bounds -1,1; seed 0)")
    ap.add_argument("--no-main", action="store_true", help="with --grid: the grid table only")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: --quick-args passed to dpaudit, seed 0 only, 200 witness fits")
    ap.add_argument("--quick-args", default=shlex.join(QUICK_ARGS),
                    help=f"what --quick passes to every estimate-eps run (default: {shlex.join(QUICK_ARGS)})")
    ap.add_argument("--audit", action="store_true", help="also run `dpaudit audit` on each function (seed 0)")
    ap.add_argument("--dpaudit-args", default="", help="more options for every estimate-eps run (one string)")
    ap.add_argument("--witness-fits", type=int, default=None,
                    help=f"fits per dataset of the known-pair witnesses (default {WITNESS_FITS}; quick 200; 0: none)")
    ap.add_argument("--venv", default=DEFAULT_VENV,
                    help=f"the third party's virtual environment, relative to the repository (default {DEFAULT_VENV})")
    ap.add_argument("--recreate", action="store_true", help="build the third party's environment afresh")
    ap.add_argument("--timeout", type=float, default=RUN_TIMEOUT, help="seconds per dpaudit run before it is stopped")
    ap.add_argument("--keep-json", type=Path, default=None, help="keep every run's --json file in this folder")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="no dpaudit runs: re-render the page from a JSON this script wrote (witnesses are run "
                         "when it has none and --witness-fits is not 0)")
    add_force(ap)
    args = ap.parse_args(argv)
    args.json_out = None if args.out is None else args.out.with_suffix(".json")
    return args


def _rerender(args: argparse.Namespace, venv_abs: Path, python_arg: str, witness_fits: int,
              shown_argv: list[str]) -> int:
    """``--from-json``: the page again from a JSON this script wrote (witnesses run when it has none)."""
    runs, functions, meta, witnesses = load_payload(args.from_json)
    if not witnesses and witness_fits > 0:
        ensure_venv(venv_abs, args.recreate)
        grid = {f.name for f in GRID_FUNCTIONS}
        names = [f.name for f in functions if not f.correct and f.name not in grid]
        names += [f"{fn.name}@{d}" for fn, d in grid_cells([f for f in functions if f.name in grid and not f.correct])]
        with tempfile.TemporaryDirectory(prefix="bench-thirdparty-") as tmp:
            witnesses = run_witnesses(python_arg, witness_fits, names, Path(tmp), args.timeout)
    meta["rendered_by"] = shlex.join(shown_argv)
    write_outputs(args, runs, functions, meta, witnesses)
    return 0


def _print_run(run: Run, where: str) -> None:
    print(f"{run.function:<30} {where}: {verdict_text(run):<18} ε_lb {fmt_num(run.epsilon_lower_bound):>6}  "
          f"{run.wall_seconds:6.1f} s  pair {pair_text(run)}"
          + (f"  findings {findings_text(run)}" if run.findings else "")
          + (f"\n    {run.error}" if run.error else ""), file=sys.stderr, flush=True)


def _grid_runs(args: argparse.Namespace, functions: list[Function], python_arg: str, scratch: Path,
               extra: list[str]) -> list[Run]:
    """Seed 0 of every grid cell: each k-variant on the blobs CSV of each dimension."""
    csvs = {d: blobs_csv(scratch, d) for d in GRID_DIMS}
    runs = []
    for fn, d in grid_cells(functions):
        run = estimate_run(fn, 0, python_arg, scratch, extra, args.timeout, data=csvs[d], d=d)
        runs.append(run)
        _print_run(run, f"d = {d}")
    return runs


def _audit_functions(args: argparse.Namespace, functions: list[Function], python_arg: str, scratch: Path,
                     seeds: int, buggy_seeds: int, extra: list[str]) -> list[Run]:
    """Every ``estimate-eps`` run (and with ``--audit`` the ``audit`` run) of each function, each printed."""
    runs: list[Run] = []
    for fn in functions:
        budgets = [None, *([args.correct_budget] if fn.correct and args.correct_budget > 0 else [])]
        for budget in budgets:
            for seed in range(seeds if fn.correct else buggy_seeds):
                run = estimate_run(fn, seed, python_arg, scratch, extra, args.timeout, time_budget=budget)
                runs.append(run)
                _print_run(run, f"seed {seed}" + (f" budget {budget:g}" if budget else ""))
        if args.audit:
            run = audit_run(fn, python_arg, scratch, args.timeout)
            runs.append(run)
            print(f"{fn.name:<30} audit : {verdict_text(run):<18} {run.wall_seconds:6.1f} s", file=sys.stderr,
                  flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    guard_outputs(args, "out", "json_out")
    seeds = args.seeds if args.seeds is not None else (1 if args.quick else 10)
    buggy_seeds = 1 if args.quick else args.buggy_seeds
    witness_fits = args.witness_fits if args.witness_fits is not None else (200 if args.quick else WITNESS_FITS)
    extra = [*(shlex.split(args.quick_args) if args.quick else ()), *shlex.split(args.dpaudit_args)]
    names = [n for n in args.only.split(",") if n]
    known = {f.name: f for f in FUNCTIONS}
    grid_known = {f.name: f for f in GRID_FUNCTIONS}
    unknown = [n for n in names if n not in known and not (args.grid and n in grid_known)]
    if unknown:
        print(f"Error: unknown function(s) {', '.join(unknown)}; known: {', '.join(known)}"
              + (f"; grid: {', '.join(grid_known)}" if args.grid else ""), file=sys.stderr)
        return 2
    if names:
        functions = [known[n] for n in names if n in known]
        grid_functions = [grid_known[n] for n in names if n in grid_known] if args.grid else []
        if args.grid and not grid_functions and not functions:
            grid_functions = list(GRID_FUNCTIONS)
    else:
        functions = list(FUNCTIONS)
        grid_functions = list(GRID_FUNCTIONS) if args.grid else []
    if args.no_main:
        functions = []
        grid_functions = grid_functions or (list(GRID_FUNCTIONS) if args.grid else [])
    shown_argv = ["python", "benchmarks/bench_thirdparty.py",
                  *(portable(a) for a in (argv if argv is not None else sys.argv[1:]))]

    venv = Path(args.venv)
    venv_abs = venv if venv.is_absolute() else ROOT / venv
    python_arg = str(venv_python(venv))  # as given (relative to the repository's root, where dpaudit runs)

    if args.from_json is not None:
        return _rerender(args, venv_abs, python_arg, witness_fits, shown_argv)

    versions = ensure_venv(venv_abs, args.recreate)
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-thirdparty-") as tmp:
        scratch = Path(tmp)
        witness_names = [f.name for f in functions if not f.correct]
        witness_names += [f"{fn.name}@{d}" for fn, d in grid_cells([f for f in grid_functions if not f.correct])]
        witnesses = run_witnesses(python_arg, witness_fits, witness_names, scratch, args.timeout)
        runs = _audit_functions(args, functions, python_arg, scratch, seeds, buggy_seeds, extra)
        runs += _grid_runs(args, grid_functions, python_arg, scratch, extra)
        if args.keep_json is not None:
            args.keep_json.mkdir(parents=True, exist_ok=True)
            for path in [*scratch.glob("*.json"), *scratch.glob("*.csv")]:
                shutil.copy(path, args.keep_json / path.name)
    total = time.perf_counter() - t_all
    functions = functions + grid_functions

    meta = {"label": args.label, "harness_command": shlex.join(shown_argv), "commit": git_commit(),
            "cores": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
            "venv_python": python_arg, "venv": versions, "extra": extra, "total_seconds": total,
            "claim": CLAIM, "functions_file": FUNCTIONS_FILE, "correct_budget": args.correct_budget,
            "grid": {"dims": list(GRID_DIMS), "records": GRID_RECORDS, "bounds": GRID_BOUNDS} if grid_functions else None}
    write_outputs(args, runs, functions, meta, witnesses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
