"""Third-party DP k-means functions audited at dpaudit's defaults, as a user runs them.

    python benchmarks/bench_thirdparty.py [--out benchmarks/results/thirdparty.md] [--force]
    python benchmarks/bench_thirdparty.py --quick                    # a smoke run: small samples, seed 0
    python benchmarks/bench_thirdparty.py --only dplloyd_correct --seeds 3

The functions are plain ``fn(X, epsilon, rng) -> centroids`` plug-ins written the way outside
code is written (``benchmarks/thirdparty/functions.py``: numpy, and diffprivlib 0.6.6 for two of
them): two correct ones and six with real bugs (see ``FUNCTIONS`` for what is wrong with each
and its true ε).  Each is audited by the ``dpaudit`` command line in a subprocess, exactly as a
user would::

    dpaudit estimate-eps -m benchmarks/thirdparty/functions.py:<fn> --eps 1 --output centroids \\
        --python benchmarks/.venvs/thirdparty/bin/python --seed S --json <scratch>/<fn>-seedS.json

with ``--python`` the interpreter of a virtual environment that holds only the third party's
packages from the registry (``numpy``, ``diffprivlib==0.6.6``, ``scikit-learn<1.8``).  The
harness creates it under ``benchmarks/.venvs/thirdparty/`` (gitignored) on its first run and
reuses it after (``--recreate`` builds it afresh; ``--venv DIR`` puts it elsewhere).  Wall time is
the subprocess's: a user's wall time, the auditor's start-up and the worker's imports included.

Correct functions are audited with seeds 0…S−1 (``--seeds``, default 10) and must never be
VIOLATION; buggy ones with seeds 0…B−1 (``--buggy-seeds``, default 1) and must be VIOLATION at
seed 0.  ``--audit`` adds a second column: ``dpaudit audit`` on the same function (seed 0, its
defaults, report in a scratch folder).  ``--quick`` is a smoke run (``--samples 200
--selection-samples 100 --max-pairs 2`` passed to dpaudit, seed 0 only) for the slow-tier test;
its verdicts mean little.  ``--dpaudit-args "..."`` passes more options to every
``estimate-eps`` run (they are shown in every command).

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
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _outputs import add_force, guard_outputs  # noqa: E402  (benchmarks/_outputs.py)

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS_FILE = "benchmarks/thirdparty/functions.py"  # relative to ROOT: commands stay machine-independent
DEFAULT_VENV = "benchmarks/.venvs/thirdparty"
REQUIREMENTS = ("numpy", "diffprivlib==0.6.6", "scikit-learn<1.8")
CLAIM = 1.0
QUICK_ARGS = ("--samples", "200", "--selection-samples", "100", "--max-pairs", "2")
RUN_TIMEOUT = 1800.0  # seconds per dpaudit run before the harness gives up on it (a row says so)


@dataclass(frozen=True)
class Function:
    """One audited function: whether it is correct, its true ε and what is wrong (or why it is right)."""

    name: str
    correct: bool
    true_eps: str
    what: str
    min_records: int = 0  # it raises on fewer records (a refusal of the input, not its privacy bug)


FUNCTIONS: tuple[Function, ...] = (
    Function("their_kmeans_honest", True, "≤ 1",
             "copy of examples/their_code.py: public box [-15, 15]^d, uniform start, 3 iterations of noisy "
             "sums and counts at ε/3 with L1 sensitivity 15d + 1"),
    Function("dplloyd_correct", True, "≤ 1",
             "DPLloyd, K = 2, T = 5, box [-1, 1]^d (clipped), fixed start; every cluster's sum and count noised "
             "in every iteration, Lap((d + 1)T/ε)"),
    Function("diffprivlib_kmeans_bounded", False, "∞",
             "diffprivlib 0.6.6 KMeans(n_clusters=2, bounds=(-1, 1)): an empty cluster is skipped (no noise, "
             "keeps its start centre, which lies inside the box)", min_records=2),
    Function("diffprivlib_kmeans_unbounded", False, "∞",
             "the same without bounds: diffprivlib takes them from the data (min/max, PrivacyLeakWarning); "
             "every centre lies within the data's range", min_records=2),
    Function("their_kmeans", False, "∞",
             "copy of examples/their_code.py: start centres are records, Lloyd steps un-noised, Lap(1/ε) on "
             "the result, data not clipped", min_records=4),
    Function("dplloyd_empty_skip", False, "∞",
             "DPLloyd that skips empty clusters: a centre that never owned a record is released exactly at "
             "its start point"),
    Function("dplloyd_unclipped", False, "∞",
             "DPLloyd with noise for [-1, 1]^d but neither records nor means clipped: a far record moves "
             "its centre without bound"),
    Function("kmeans_noisy_centres_over_n", False, "≥ n·ε/4 (unbounded)",
             "Lloyd, then Laplace on the centres for a 'sensitivity of a mean' of 2d/n: a lone record is a "
             "whole cluster"),
)


@dataclass
class Run:
    """One ``dpaudit`` run of one function at one seed, and what it said."""

    function: str
    correct: bool
    command_name: str  # estimate-eps or audit
    seed: int
    command: str  # as typed from the repository's root (the scratch path shown as $SCRATCH)
    exit_code: int
    wall_seconds: float
    verdict: str | None = None
    epsilon_lower_bound: float | None = None
    ceiling: float | None = None
    samples: int | None = None
    selection_releases: int | None = None
    dpaudit_seconds: float | None = None
    pair: dict[str, Any] | None = None
    event: str | None = None
    counts: dict[str, Any] | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    leak_warnings: list[str] = field(default_factory=list)
    status: str | None = None
    error: str | None = None  # stderr's tail when the run failed or timed out
    parts: list[dict[str, Any]] = field(default_factory=list)  # audit: each part's value and verdict

    @property
    def is_violation(self) -> bool:
        return (self.verdict or "").lower() == "violation"


# ---------------------------------------------------------------------------------------------
# The third party's interpreter
# ---------------------------------------------------------------------------------------------

def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def packages_of(python: Path) -> dict[str, str] | None:
    """Versions of Python, numpy, scikit-learn and diffprivlib in ``python`` (None: it lacks one)."""
    probe = ("import json, platform, numpy, sklearn, diffprivlib; print(json.dumps({'python': "
             "platform.python_version(), 'numpy': numpy.__version__, 'scikit-learn': sklearn.__version__, "
             "'diffprivlib': diffprivlib.__version__}))")
    try:
        out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=120)
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
        proc = subprocess.run([*dpaudit_executable(), *argv], cwd=ROOT, capture_output=True, text=True,
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


def estimate_run(fn: Function, seed: int, python: str, scratch: Path, extra: list[str], timeout: float) -> Run:
    out = scratch / f"{fn.name}-seed{seed}.json"
    argv = ["estimate-eps", "-m", f"{FUNCTIONS_FILE}:{fn.name}", "--eps", f"{CLAIM:g}", "--output", "centroids",
            "--python", python, *(["--seed", str(seed)] if seed else []), *extra, "--json", str(out)]
    code, wall, err = execute(argv, scratch, timeout)
    run = Run(fn.name, fn.correct, "estimate-eps", seed, shown(argv, scratch), code, wall)
    if not out.exists():
        run.error = _tail(err) or f"exit code {code}, no JSON written"
        return run
    res = json.loads(out.read_text(encoding="utf-8"))
    pair = res.get("pair") or None
    run.verdict = res.get("verdict")
    run.epsilon_lower_bound = res.get("epsilon_lower_bound")
    run.ceiling = res.get("ceiling")
    run.samples = res.get("samples")
    run.selection_releases = res.get("selection_samples_total")
    run.dpaudit_seconds = res.get("elapsed_seconds")
    run.pair = None if pair is None else {k: pair.get(k) for k in ("name", "family", "relation", "records_D",
                                                                    "records_D_prime", "description")}
    run.event = (res.get("event") or {}).get("text")
    run.counts = res.get("counts") or None
    run.findings = _findings_of(res)
    run.leak_warnings = list(res.get("leak_warnings") or [])
    run.status = res.get("status")
    if code not in (0, 1, 3):
        run.error = _tail(err)
    return run


def audit_run(fn: Function, python: str, scratch: Path, timeout: float) -> Run:
    """``dpaudit audit`` at its defaults (seed 0) into a scratch report folder."""
    out = scratch / f"audit-{fn.name}"
    argv = ["audit", "-m", f"{FUNCTIONS_FILE}:{fn.name}", "--eps", f"{CLAIM:g}", "--output", "centroids",
            "--python", python, "--out", str(out)]
    code, wall, err = execute(argv, scratch, timeout)
    run = Run(fn.name, fn.correct, "audit", 0, shown(argv, scratch), code, wall)
    results = out / "results.json"
    if not results.exists():
        run.error = _tail(err) or f"exit code {code}, no results.json written"
        return run
    res = json.loads(results.read_text(encoding="utf-8"))
    run.verdict = res.get("verdict")
    est = res.get("epsilon_estimate") or {}
    run.epsilon_lower_bound = est.get("epsilon_lower_bound")
    run.ceiling = est.get("ceiling")
    run.samples = est.get("samples")
    pair = est.get("pair") or None
    run.pair = None if pair is None else {k: pair.get(k) for k in ("name", "family", "relation", "records_D",
                                                                    "records_D_prime", "description")}
    run.event = (est.get("event") or {}).get("text")
    run.counts = est.get("counts") or None
    run.findings = _findings_of(res)
    run.leak_warnings = list(est.get("leak_warnings") or [])
    run.parts = [{k: row.get(k) for k in ("part", "value", "verdict")} for row in res.get("verdict_table") or []]
    run.dpaudit_seconds = sum((res.get("provenance") or {}).get("durations_seconds", {}).values()) or None
    if code not in (0, 1, 3):
        run.error = _tail(err)
    return run


# ---------------------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------------------

def _portable(arg: str) -> str:
    """An argument as the page shows it: a path inside the repository relative to it, another absolute
    path by its last part only (no machine paths in committed results)."""
    path = Path(arg)
    if not path.is_absolute():
        return arg
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return f"…/{path.name}"


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def _num(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def _verdict(run: Run) -> str:
    if run.verdict is None:
        return "**failed**" if run.exit_code != -1 else "**timed out**"
    return run.verdict.upper() if run.is_violation else run.verdict


def _findings(run: Run) -> str:
    if not run.findings:
        return "–"
    return ", ".join(f"{f.get('kind')} ×{f.get('count')}" for f in run.findings)


def _pair(run: Run) -> str:
    if not run.pair:
        return "–"
    p = run.pair
    return f"{p['name']} ({p.get('records_D')} vs {p.get('records_D_prime')} records)"


def refused_side(run: Run, fn: Function) -> bool:
    """Whether the deciding pair holds a dataset smaller than the function accepts: a violation
    certified there may show the refusal (raise on few records), not the function's privacy bug."""
    p = run.pair or {}
    sizes = [v for v in (p.get("records_D"), p.get("records_D_prime")) if isinstance(v, int)]
    return bool(sizes) and min(sizes) < fn.min_records


def _counts(run: Run) -> str:
    c = run.counts or {}
    if "favoured_in_event" not in c:
        return "–"
    return f"{c['favoured_in_event']:,}/{c['n_favoured']:,} vs {c['other_in_event']:,}/{c['n_other']:,}"


def _cell(text: str | None) -> str:
    return "–" if not text else text.replace("|", "\\|").replace("\n", " ")


def summary_rows(runs: list[Run], functions: list[Function]) -> tuple[list[str], dict[str, Any]]:
    lines = ["| function | correct? | true ε | verdict (seed 0) | ε_lb (seed 0) | ceiling | VIOLATION / seeds | "
             "max ε_lb over seeds | wall s (seed 0) | median wall s | deciding pair (seed 0) | findings (seed 0) |"
             " meets the goal |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"]
    goals: dict[str, Any] = {}
    for fn in functions:
        mine = [r for r in runs if r.function == fn.name and r.command_name == "estimate-eps"]
        if not mine:
            continue
        first = next((r for r in mine if r.seed == 0), mine[0])
        flagged = sum(r.is_violation for r in mine)
        bounds = [r.epsilon_lower_bound for r in mine if r.epsilon_lower_bound is not None]
        on_refused = first.is_violation and refused_side(first, fn)
        ok = flagged == 0 if fn.correct else first.is_violation and not on_refused
        goals[fn.name] = {"correct": fn.correct, "seeds": len(mine), "violations": flagged, "meets_goal": ok,
                          "decided_on_refused_input": on_refused}
        pair = _pair(first) + (f" — below the {fn.min_records} records it accepts" if on_refused else "")
        lines.append(
            f"| `{fn.name}` | {'correct' if fn.correct else 'buggy'} | {fn.true_eps} | {_verdict(first)} | "
            f"{_num(first.epsilon_lower_bound)} | {_num(first.ceiling)} | {flagged} / {len(mine)} | "
            f"{_num(max(bounds) if bounds else None)} | {first.wall_seconds:.1f} | "
            f"{statistics.median(r.wall_seconds for r in mine):.1f} | {_cell(pair)} | "
            f"{_cell(_findings(first))} | {'yes' if ok else '**no**'} |")
    return lines, goals


def markdown(runs: list[Run], functions: list[Function], meta: dict[str, Any]) -> str:
    rows, goals = summary_rows(runs, functions)
    buggy = [g for g in goals.values() if not g["correct"]]
    correct = [g for g in goals.values() if g["correct"]]
    title = "Third-party DP k-means functions audited at defaults" + (f" — {meta['label']}" if meta["label"] else "")
    lines = [f"# {title}", "",
             f"Harness: `{meta['harness_command']}` (total {meta['total_seconds'] / 60:.1f} min).", "",
             f"dpaudit commit {meta['commit']}; {meta['cores']} logical cores ({meta['machine']}, Python "
             f"{meta['python']}), shared with other jobs: compare times within this page.  The audited code runs in "
             f"its own interpreter (`--python {meta['venv_python']}`: Python {meta['venv']['python']}, numpy "
             f"{meta['venv']['numpy']}, scikit-learn {meta['venv']['scikit-learn']}, diffprivlib "
             f"{meta['venv']['diffprivlib']}, nothing else of the project).", "",
             f"Every run: `dpaudit estimate-eps -m {FUNCTIONS_FILE}:<function> --eps 1 --output centroids --python "
             f"<that interpreter> [--seed S]{' ' + shlex.join(meta['extra']) if meta['extra'] else ''} --json …`, "
             "at dpaudit's defaults (30 records of blobs-2d, 95 %, claim ε = 1 add/remove), in a subprocess: the "
             "wall time is a user's (start-up and the worker's imports included).  The exact command of every run "
             "is in the table of runs below.", "",
             "Goal: every buggy function VIOLATION at seed 0; no correct one VIOLATION at any seed.  A VIOLATION "
             "certified on a pair with a dataset smaller than the function accepts (diffprivlib raises below k "
             "records, `their_kmeans` below its k) shows that refusal, not the bug, and does not count.", "",
             *rows, "",
             f"Buggy functions VIOLATION at seed 0 (on datasets they accept): "
             f"{sum(g['meets_goal'] for g in buggy)} / {len(buggy)}"
             + ("" if all(g["meets_goal"] for g in buggy) else " (missed: " + ", ".join(
                 n for n, g in goals.items() if not g["correct"] and not g["meets_goal"]) + ")") + ".  "
             f"Correct functions VIOLATION: {sum(g['violations'] for g in correct)} in "
             f"{sum(g['seeds'] for g in correct)} audits.", ""]
    audits = [r for r in runs if r.command_name == "audit"]
    if audits:
        lines += ["`dpaudit audit` at its defaults (seed 0, 200 records of blobs-2d; every part, attacks "
                  "included):", "",
                  "| function | verdict | ε_lb (ε estimation part) | pair | parts that found a violation | wall s | "
                  "dpaudit's parts s | findings | command |",
                  "|---|---|---:|---|---|---:|---:|---|---|"]
        lines += [f"| `{r.function}` | {_verdict(r)} | {_num(r.epsilon_lower_bound)} | {_cell(_pair(r))} | "
                  + (", ".join(p["part"] for p in r.parts if p.get("verdict") == "violation") or "–")
                  + f" | {r.wall_seconds:.1f} | {_num(r.dpaudit_seconds)} | {_cell(_findings(r))} | `{r.command}` |"
                  for r in audits]
        lines.append("")
    lines += ["What each function does wrong (or right); the docstrings of "
              f"`{FUNCTIONS_FILE}` give the argument and a pair that shows it:", ""]
    lines += [f"- `{fn.name}` ({'correct' if fn.correct else 'buggy'}, true ε {fn.true_eps}): {fn.what}"
              + (f"; raises on fewer than {fn.min_records} records" if fn.min_records else "") + "."
              for fn in functions if fn.name in goals]
    lines += ["", "## Every run", "",
              "| function | seed | verdict | ε_lb | ceiling | samples / dataset | selection releases | wall s | "
              "dpaudit's elapsed s | pair | event | in the event (favoured vs other) | findings | leak warnings | "
              "command |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|---|---|---|"]
    for r in runs:
        if r.command_name != "estimate-eps":
            continue
        lines.append(
            f"| `{r.function}` | {r.seed} | {_verdict(r)} | {_num(r.epsilon_lower_bound)} | {_num(r.ceiling)} | "
            f"{_num(r.samples, 6)} | {_num(r.selection_releases, 6)} | {r.wall_seconds:.1f} | "
            f"{_num(r.dpaudit_seconds)} | {_cell(_pair(r))} | {_cell(r.event)} | {_counts(r)} | "
            f"{_cell(_findings(r))} | {'yes' if r.leak_warnings else '–'} | `{r.command}` |")
    failed = [r for r in runs if r.error]
    if failed:
        lines += ["", "Errors (stderr's last lines):", ""]
        lines += [f"- `{r.function}` seed {r.seed} ({r.command_name}, exit {r.exit_code}): "
                  f"{_cell(r.error)}" for r in failed]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None,
                    help="write the page here (Markdown) and the runs beside it (.json); e.g. "
                         "benchmarks/results/thirdparty.md")
    ap.add_argument("--label", default="", help="a word for the page's title, e.g. 'before'")
    ap.add_argument("--only", default="", help="comma-separated function names (default: all)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per correct function (default 10; quick 1)")
    ap.add_argument("--buggy-seeds", type=int, default=1, help="seeds per buggy function (default 1)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: " + " ".join(QUICK_ARGS) + " passed to dpaudit, seed 0 only")
    ap.add_argument("--audit", action="store_true", help="also run `dpaudit audit` on each function (seed 0)")
    ap.add_argument("--dpaudit-args", default="", help="more options for every estimate-eps run (one string)")
    ap.add_argument("--venv", default=DEFAULT_VENV,
                    help=f"the third party's virtual environment, relative to the repository (default {DEFAULT_VENV})")
    ap.add_argument("--recreate", action="store_true", help="build the third party's environment afresh")
    ap.add_argument("--timeout", type=float, default=RUN_TIMEOUT, help="seconds per dpaudit run before it is stopped")
    ap.add_argument("--keep-json", type=Path, default=None, help="keep every run's --json file in this folder")
    add_force(ap)
    args = ap.parse_args(argv)
    args.json_out = None if args.out is None else args.out.with_suffix(".json")
    guard_outputs(args, "out", "json_out")
    seeds = args.seeds if args.seeds is not None else (1 if args.quick else 10)
    buggy_seeds = 1 if args.quick else args.buggy_seeds
    extra = [*(QUICK_ARGS if args.quick else ()), *shlex.split(args.dpaudit_args)]
    names = [n for n in args.only.split(",") if n]
    known = {f.name: f for f in FUNCTIONS}
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"Error: unknown function(s) {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    functions = [known[n] for n in names] if names else list(FUNCTIONS)

    venv = Path(args.venv)
    venv_abs = venv if venv.is_absolute() else ROOT / venv
    versions = ensure_venv(venv_abs, args.recreate)
    python_arg = str(venv_python(venv))  # as given (relative to the repository's root, where dpaudit runs)

    t_all = time.perf_counter()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="bench-thirdparty-") as tmp:
        scratch = Path(tmp)
        for fn in functions:
            for seed in range(seeds if fn.correct else buggy_seeds):
                run = estimate_run(fn, seed, python_arg, scratch, extra, args.timeout)
                runs.append(run)
                print(f"{fn.name:<30} seed {seed}: {_verdict(run):<18} ε_lb {_num(run.epsilon_lower_bound):>6}  "
                      f"{run.wall_seconds:6.1f} s  pair {_pair(run)}"
                      + (f"  findings {_findings(run)}" if run.findings else "")
                      + (f"\n    {run.error}" if run.error else ""), file=sys.stderr, flush=True)
            if args.audit:
                run = audit_run(fn, python_arg, scratch, args.timeout)
                runs.append(run)
                print(f"{fn.name:<30} audit : {_verdict(run):<18} {run.wall_seconds:6.1f} s", file=sys.stderr,
                      flush=True)
        if args.keep_json is not None:
            args.keep_json.mkdir(parents=True, exist_ok=True)
            for path in scratch.glob("*.json"):
                shutil.copy(path, args.keep_json / path.name)
    total = time.perf_counter() - t_all

    harness = ["python", "benchmarks/bench_thirdparty.py",
               *(_portable(a) for a in (argv if argv is not None else sys.argv[1:]))]
    meta = {"label": args.label, "harness_command": shlex.join(harness), "commit": git_commit(),
            "cores": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
            "venv_python": python_arg, "venv": versions, "extra": extra, "total_seconds": total,
            "claim": CLAIM, "functions_file": FUNCTIONS_FILE}
    text = markdown(runs, functions, meta)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        payload = {"meta": meta, "functions": [asdict(f) for f in functions],
                   "goals": summary_rows(runs, functions)[1], "runs": [asdict(r) for r in runs]}
        args.json_out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out} and {args.json_out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
