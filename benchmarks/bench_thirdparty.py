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
from benchmarks.thirdparty.runs import (
    RUN_TIMEOUT,
    audit_run,
    blobs_csv,
    ensure_venv,
    estimate_run,
    run_witnesses,
    venv_python,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = "benchmarks/.venvs/thirdparty"
QUICK_ARGS = ("--samples", "200", "--selection-samples", "100", "--max-pairs", "2")
WITNESS_FITS = 2000  # fits per dataset of the known-pair witnesses (≈ the default certification sample)


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
    ap.add_argument("--note", default=None, help="a paragraph for the page's head (kept in its JSON; with "
                    "--from-json it replaces the stored one)")
    ap.add_argument("--label", default="", help="a word for the page's title, e.g. 'before'")
    ap.add_argument("--only", default="",
                    help="comma-separated function names (default: all); with --grid, grid names (e.g. "
                         "dplloyd_empty_skip_k3) select grid rows")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per correct function (default 10; quick 1)")
    ap.add_argument("--buggy-seeds", type=int, default=GOAL_SEEDS,
                    help=f"seeds per buggy function (default {GOAL_SEEDS}: the goal is VIOLATION on each)")
    ap.add_argument("--correct-budget", type=float, default=0.0,
                    help="also audit every correct function on each seed with --time-budget SECONDS (e.g. 240)")
    ap.add_argument("--longer-budget-only", action="store_true",
                    help="with --correct-budget: only the longer-budget runs of the correct functions (no runs at "
                         "the default budget; the buggy functions are not run)")
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
    if args.note is not None:
        meta["note"] = args.note
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
        if args.longer_budget_only:
            budgets = budgets[1:]
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
    if args.longer_budget_only:
        if args.correct_budget <= 0:
            print("Error: --longer-budget-only needs --correct-budget SECONDS", file=sys.stderr)
            return 2
        functions = [f for f in functions if f.correct]
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
            "grid": {"dims": list(GRID_DIMS), "records": GRID_RECORDS, "bounds": GRID_BOUNDS} if grid_functions else None,
            "note": args.note}
    write_outputs(args, runs, functions, meta, witnesses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
