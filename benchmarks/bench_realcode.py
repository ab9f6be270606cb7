"""Real DP clustering and statistics code nobody here wrote, audited as a user audits it: the real-code corpus.

    python benchmarks/bench_realcode.py --sources DIR --out benchmarks/results/realcode.md --force   # every row, seeds 0-2
    python benchmarks/bench_realcode.py --sources DIR --only google-dp --seeds 10                  # one implementation
    python benchmarks/bench_realcode.py --sources DIR --quick --only "diffprivlib tools.mean"       # a smoke run

The corpus (``benchmarks/realcode/catalogue.py``): Google's ``learning/clustering``, CEDSKMeans, ibidaas's COMPSs
dpkmeans, EMMC, DpDBSCAN (public repositories, copied from checkouts under ``--sources DIR``, one per repository,
``DIR/<owner>+<name>/`` at the commit the catalogue pins: this script downloads no code), diffprivlib and python-dp
(registry packages), and the R package diffpriv (brubinstein/diffpriv, installed from its checkout by ``R CMD
INSTALL`` into an R library folder; R and its r-cran-* packages from Debian); for every correct implementation,
planted mutants (10·ε; a noise scale from the data; a data-dependent branch), patched into a copy of the code in
the cache or written in the wrapper.  Each environment is built under ``benchmarks/.venvs/realcode/`` (gitignored;
``--reuse-venvs`` keeps one built from the same requirements and commit).  Every row is one command, at dpaudit's
defaults otherwise::

    python -m dpaudit estimate-eps -m <wrapper.py:fn> --eps 1 <the row's options> --python <its interpreter> --seed S --json …
    python -m dpaudit estimate-eps -m "cmd:Rscript <wrapper.R> <fn> --library <its R library>" --eps 1 <options> --seed S …

run with this checkout first on ``PYTHONPATH`` and BLAS/OpenMP threads at 1, one at a time, on seeds 0…S−1
(``--seeds S``, default 3; ``--seeds 0,4`` lists them).  ``--time-budget T`` passes a time budget (default
dpaudit's 60 s); a run's budget for the whole command is 2·T: a run that takes longer says so and is never
counted as "no violation", and the harness stops it at 4·T.  Then every row's reproduction
(``benchmarks/realcode/reproductions/``, numpy — or R — and the library only: one pair, ≥ 2,000 fits a side, one
event, Clopper–Pearson at 95 %) runs in the row's interpreter (``Rscript`` for an R row): a VIOLATION counts only
where it reproduces, and a correct row's reproduction shows what its pair certifies (at most the claim).

``--kinds correct,broken,mutant`` picks rows by kind; ``--shard K/N`` runs every N-th (row, seed) job from the
K-th (two shards side by side share the machine).  ``--pair-load`` runs the same selection twice at once — a
second copy of this command in a subprocess, beside the first — and adds the comparison of their verdict
classes per row and seed to the page (``--compare A.json B.json`` compares two files written before).

Output: a Markdown page (``--out``) and a JSON beside it (``.json``) with every command line, the dpaudit commit,
the machine's load before and after, package versions, repository commits, the mutants' patched lines and every
wall time; the JSON is rewritten after every run, so a stopped run keeps what it did.  ``--from-json`` re-renders
the page.  An existing output is never replaced without ``--force``.  ``--quick`` (the slow-tier test's smoke run)
passes ``--releases 600 --max-pairs 2`` to dpaudit and runs 100 fits per reproduction; its verdicts mean little.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._outputs import add_force, git_commit, guard_outputs, portable, write_page  # noqa: E402
from benchmarks.bench_libraries import (  # noqa: E402
    QUICK_ARGS,
    QUICK_FITS,
    THREAD_VARIABLES,
    audit_row,
    dpaudit_source,
    load_average,
    reproduce,
    run_environment,
    scrub,
)
from benchmarks.realcode.catalogue import CLAIM, R_ENVIRONMENTS, Row, select_rows  # noqa: E402
from benchmarks.realcode.environments import build_all  # noqa: E402
from benchmarks.realcode.page import compare_twins, markdown, run_status  # noqa: E402
from benchmarks.realcode.r_environment import build_r_all  # noqa: E402

DEFAULT_VENVS = "benchmarks/.venvs/realcode"
DEFAULT_BUDGET = 60.0


def parse_seeds(text: str) -> list[int]:
    """``3`` → seeds 0, 1, 2; ``0,4,7`` → those."""
    return [int(s) for s in text.split(",")] if "," in text else list(range(int(text)))


def jobs_of(rows: list[Row], seeds: list[int], shard: str | None) -> list[tuple[Row, int]]:
    jobs = [(row, seed) for row in rows for seed in seeds]
    if not shard:
        return jobs
    k, n = (int(v) for v in shard.split("/"))
    if not 1 <= k <= n:
        raise SystemExit(f"Error: --shard {shard}: K must be between 1 and N")
    return jobs[k - 1::n]


def status_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The panel's call of every run (derived: recomputed when a page is re-rendered)."""
    rows = {r["name"]: r for r in payload["rows"]}
    return [run_status(rows[run["row"]], run, payload["reproductions"]) for run in payload["runs"]]


def write_outputs(args: argparse.Namespace, payload: dict[str, Any], final: bool = True) -> None:
    payload["status"] = status_of(payload)
    write_page(args.out, markdown(payload), payload, announce=final)


def as_run(row: Row, env: dict[str, Any]) -> Row:
    """The row as its command runs it: a program of an R environment is told where the environment's library is
    (``--library``; dpaudit's workers give a program a scrubbed environment, so no variable would reach it)."""
    return replace(row, spec=f"{row.spec} --library {shlex.quote(env['library'])}") if env.get("library") else row


def environments_of(rows: list[Row], root: Path, sources: Path | None, reuse: bool) -> dict[str, Any]:
    """Every environment the rows name, built (or reused): the venvs, then the R libraries."""
    keys = list(dict.fromkeys(r.env for r in rows))
    return {**build_all([k for k in keys if k not in R_ENVIRONMENTS], root, sources, reuse),
            **build_r_all([k for k in keys if k in R_ENVIRONMENTS], root, sources, reuse)}


def audit_jobs(args: argparse.Namespace, payload: dict[str, Any], jobs: list[tuple[Row, int]], extra: list[str],
               budget: float, scratch: Path) -> None:
    """Every (row, seed) job, one at a time; the payload rewritten after each."""
    envs = payload["meta"]["environments"]
    for row, seed in jobs:
        run = audit_row(as_run(row, envs[row.env]), envs[row.env]["python"], scratch, [*extra, "--seed", str(seed)],
                        min(args.timeout, 4 * budget))
        run.wall_budget = 2 * budget
        run.command = scrub(run.command) or run.command
        payload["runs"].append({**asdict(run), "seed": seed, "time_budget": budget})
        print(f"{row.name:<58} seed {seed}  {str(run.verdict or 'failed'):<20} ε_lb {run.epsilon_lower_bound or 0:6.3g}"
              f"  {run.wall_seconds:6.1f} s" + (f"\n    {run.error}" if run.error else ""), file=sys.stderr, flush=True)
        write_outputs(args, payload, final=False)


def run_reproductions(args: argparse.Namespace, payload: dict[str, Any], rows: list[Row], scratch: Path) -> None:
    envs = payload["meta"]["environments"]
    for script, env_key in dict.fromkeys((r.reproduction, r.env) for r in rows):
        fits = QUICK_FITS if args.quick else args.fits  # 0: the script's own default (the fits its pair needs)
        env = envs[env_key]
        rep = reproduce(script, env_key, env.get("interpreter") or env["python"], fits, scratch, args.timeout,
                        control=False, args=("--library", env["library"]) if env.get("library") else ())
        payload["reproductions"].append(asdict(rep))
        bound = (rep.result or {}).get("epsilon_lower_bound")
        print(f"reproduction {script} ({env_key}): ε ≥ {bound if bound is None else round(bound, 2)}  "
              f"{rep.wall_seconds:.0f} s" + (f"\n    {rep.error}" if rep.error else ""), file=sys.stderr, flush=True)
        write_outputs(args, payload, final=False)


def twin_command(argv: list[str], twin_out: Path) -> list[str]:
    """This command again, without ``--pair-load`` and writing to ``twin_out``."""
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--out", "--pair-load"):
            skip = a == "--out"
            continue
        rest.append(a)
    return [sys.executable, str(Path(__file__).resolve()), *rest, "--out", str(twin_out), "--force"]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="the page (Markdown); the runs go beside it (.json)")
    ap.add_argument("--sources", type=Path, default=None,
                    help="a folder of checkouts, DIR/<owner>+<name>/ per repository, at the catalogue's commits")
    ap.add_argument("--only", default="", help="comma-separated row names or environment keys (default: every row)")
    ap.add_argument("--kinds", default="", help="comma-separated kinds: correct, broken, mutant (default: all)")
    ap.add_argument("--seeds", default="3", help="S (seeds 0…S−1) or a comma-separated list (default 3)")
    ap.add_argument("--time-budget", type=float, default=None, help="dpaudit's --time-budget (default: its 60 s)")
    ap.add_argument("--shard", default=None, help="K/N: run every N-th (row, seed) job from the K-th")
    ap.add_argument("--pair-load", action="store_true", help="run a second copy of this command beside it, compare")
    ap.add_argument("--compare", type=Path, nargs=2, default=None, metavar=("A", "B"),
                    help="compare the verdict classes of two JSON files this script wrote, and exit")
    ap.add_argument("--venvs", default=DEFAULT_VENVS, help=f"the environments' cache (default {DEFAULT_VENVS})")
    ap.add_argument("--reuse-venvs", action="store_true", help="keep an environment built from the same pins")
    ap.add_argument("--quick", action="store_true", help=f"smoke run: {shlex.join(QUICK_ARGS)}, {QUICK_FITS} fits")
    ap.add_argument("--fits", type=int, default=0, help="fits per reproduction (default: each script's own)")
    ap.add_argument("--no-reproductions", action="store_true", help="audit only (the page then confirms nothing)")
    ap.add_argument("--dpaudit-args", default="", help="more options for every estimate-eps run (one string)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a run is stopped (at most 4·budget)")
    ap.add_argument("--from-json", type=Path, default=None, help="re-render the page from a JSON this script wrote")
    add_force(ap)
    args = ap.parse_args(argv)
    args.json_out = None if args.out is None else args.out.with_suffix(".json")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    raw = list(argv if argv is not None else sys.argv[1:])
    if args.compare:
        print(compare_twins(*(json.loads(p.read_text(encoding="utf-8")) for p in args.compare))["text"])
        return 0
    guard_outputs(args, "out", "json_out")
    shown = shlex.join(["python", "benchmarks/bench_realcode.py", *(portable(a) for a in raw)])
    if args.from_json is not None:
        payload = json.loads(args.from_json.read_text(encoding="utf-8"))
        payload["meta"]["rendered_by"] = shown
        write_outputs(args, payload)
        return 0
    rows = select_rows(args.only, args.kinds)
    budget = args.time_budget or DEFAULT_BUDGET
    extra = [*(QUICK_ARGS if args.quick else ()), *(["--time-budget", f"{budget:g}"] if args.time_budget else []),
             *shlex.split(args.dpaudit_args)]
    jobs = jobs_of(rows, parse_seeds(args.seeds), args.shard)
    venvs = Path(args.venvs)
    t0, load_start, commit, source = time.perf_counter(), load_average(), git_commit(), dpaudit_source()
    environments = environments_of(rows, venvs if venvs.is_absolute() else Path(__file__).resolve().parents[1] / venvs,
                                   args.sources, args.reuse_venvs)
    twin = None
    if args.pair_load and args.out is not None:
        twin_out = args.out.with_name(args.out.stem + "-twin.md")
        twin = subprocess.Popen(twin_command([*raw, "--reuse-venvs"], twin_out), env=run_environment(False),
                                stdout=subprocess.DEVNULL)
    threads = {k: v for k, v in run_environment(False).items() if k in THREAD_VARIABLES}
    payload: dict[str, Any] = {
        "meta": {"harness_command": shown, "commit": commit, "dpaudit_source": source, "thread_variables": threads,
                 "cores": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
                 "extra": extra, "claim": CLAIM, "time_budget": budget, "shard": args.shard, "quick": args.quick,
                 "pair_load": bool(twin), "load_average_start": load_start, "environments": environments,
                 "complete": False},
        "rows": [asdict(r) | {"wall_budget": 2 * budget} for r in rows], "runs": [], "reproductions": []}
    with tempfile.TemporaryDirectory(prefix="bench-realcode-") as tmp:
        audit_jobs(args, payload, jobs, extra, budget, Path(tmp))
        if not args.no_reproductions:
            run_reproductions(args, payload, [r for r in rows if any(j[0] is r for j in jobs)], Path(tmp))
    if twin is not None:
        twin.wait()
        payload["twin"] = compare_twins(payload, json.loads(args.out.with_name(args.out.stem + "-twin.json")
                                                             .read_text(encoding="utf-8")))
    payload["meta"].update(total_seconds=time.perf_counter() - t0, load_average_end=load_average(), complete=True)
    write_outputs(args, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
