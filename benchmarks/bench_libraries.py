"""The DP libraries people ship, audited as they ship them: a standing panel with reproductions.

    python benchmarks/bench_libraries.py --out benchmarks/results/libraries.md --force   # the whole panel
    python benchmarks/bench_libraries.py --only opendp                                   # one library's rows
    python benchmarks/bench_libraries.py --quick --only diffprivlib.tools.mean           # a smoke run

Each library gets its own virtual environment, created from the registry by this script under
``benchmarks/.venvs/libraries/<library>/`` (gitignored): IBM diffprivlib 0.6.6 (with scikit-learn
< 1.8, which it needs), the fork diffprivlib-fix 0.6.7 (twice: with the scikit-learn it was made for
and as pip resolves it), OpenDP 0.16.0, python-dp 1.1.5 (Google's library), pipeline-dp 0.3.1, and
two small registry packages, diffpriv-pure 0.1.0 and diff-priv-laplace-python 1.0.5.  By default
every environment is built afresh (``--reuse-venvs`` keeps one whose library version is right).  Every
row of ``benchmarks/libraries/catalogue.py`` is then audited by the ``dpaudit`` command line in a
subprocess, at its defaults, exactly as a user runs it::

    dpaudit estimate-eps -m <plug-in> --eps 1 <the row's options> --python <the library's interpreter> --json …

— run as ``python -m dpaudit`` with this checkout first on ``PYTHONPATH`` (the page records where dpaudit
was imported from), and with ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` = 1 unless
already set (dpaudit runs a process per lane; BLAS threads on top of them only contend on a small machine).

The plug-ins (``benchmarks/libraries/diffprivlib_plugins.py``, ``opendp_plugins.py``, ``pydp_plugins.py``,
``pipelinedp_plugins.py``, ``smallpkg_plugins.py``) are plain functions — or the library's estimator class
itself — using the library's documented parameters and nothing of its internals.  Wall time is the
subprocess's: a user's, start-up included.  Each row has a budget for the whole command (1.5 × its time
budget + 30 s, ``Row.wall_budget``): a row that takes longer says so on the page and is never counted as
"no violation"; the harness stops it at twice its budget.

Then, for every row that is expected to be violated *or* that dpaudit flags, the row's reproduction
(``benchmarks/reproductions/``: numpy, scipy and the library only; two datasets, one event, counts, a
Clopper–Pearson bound, the library line) runs in the same interpreter.  A row is called a violation
only when its reproduction shows it (ε ≥ … > 1 at 95 %); a dpaudit VIOLATION without one is shown as
unconfirmed, a reproduced violation dpaudit missed as missed.  Each reproduction's control — the same
script with ``--patched``: the library line patched as the finding's report proposes — runs right after it,
and the page counts a violation its control does not remove.  The upstream status of every finding (its
library's public tracker, searched by hand) comes from ``benchmarks/libraries/upstream.py``; the reports
for the findings not known upstream are under ``docs/findings/``.

Output: a Markdown page (``--out``) and a JSON file beside it (same name, ``.json``) with every
command line, the dpaudit commit, the core count, the machine's load average before and after, the
environments' package versions and every wall time.  ``--from-json`` re-renders the page from such a
file.  An existing output file is never replaced without ``--force``.  ``--quick`` (a smoke run for
the slow-tier test) passes ``--releases 600 --max-pairs 2`` to dpaudit and runs 100 fits per
reproduction; its verdicts mean little.
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

from benchmarks._outputs import add_force, git_commit, guard_outputs, portable, write_page  # noqa: E402
from benchmarks.libraries.catalogue import CLAIM, ENVIRONMENTS, ROWS, Environment, Reproduction, Row, Run  # noqa: E402
from benchmarks.libraries.page import markdown, row_status  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENVS = "benchmarks/.venvs/libraries"
QUICK_ARGS = ("--releases", "600", "--max-pairs", "2")
QUICK_FITS = 100
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
RUN_TIMEOUT = 900.0  # seconds per dpaudit run before the harness stops it (the row says so)
REPRODUCTION_FITS = {  # fits per dataset: enough for a bound far above the claim in well under a minute
    "benchmarks/reproductions/diffprivlib_kmeans_empty_cluster.py": 2000,
    "benchmarks/reproductions/diffprivlib_gaussian_nb_classes.py": 2000,
    "benchmarks/reproductions/diffprivlib_linear_regression.py": 300,
    "benchmarks/reproductions/diffprivlib_classes_from_labels.py": 300,
    "benchmarks/reproductions/diffpriv_pure_count.py": 2000,
}
CONTROL_FLAG = "--patched"  # every reproduction's control: the library line patched, the same pair and event


# ---------------------------------------------------------------------------------------------
# Environments
# ---------------------------------------------------------------------------------------------
def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


_PROBE = ("import json, platform, importlib.metadata as m\n"
          "out = {'python': platform.python_version()}\n"
          "for name in NAMES:\n"
          "    try:\n        out[name] = m.version(name)\n"
          "    except m.PackageNotFoundError:\n        pass\n"
          "print(json.dumps(out))")


def package_versions(python: Path, names: list[str]) -> dict[str, str] | None:
    """Python's version and those of the installed ``names`` in ``python`` (None: the interpreter does not run)."""
    try:
        out = subprocess.run([str(python), "-c", _PROBE.replace("NAMES", repr(names))], capture_output=True, text=True,
                             timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    found: dict[str, str] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def versions_of(python: Path, env: Environment) -> dict[str, str] | None:
    """Python and the packages that matter in ``python`` (None: it does not run, or lacks the library)."""
    found = package_versions(python, [env.distribution, "numpy", "scipy", "scikit-learn"])
    return found if found is not None and found.get(env.distribution) == env.version else None


def ensure_venv(env: Environment, root: Path, reuse: bool) -> tuple[dict[str, str], float]:
    """Build (or reuse) ``env``'s virtual environment from the registry: (package versions, seconds)."""
    t0 = time.perf_counter()
    venv = root / env.key
    python = venv_python(venv)
    if reuse and python.exists():
        found = versions_of(python, env)
        if found is not None:
            return found, time.perf_counter() - t0
        print(f"{venv} is incomplete; building it afresh", file=sys.stderr)
    make_venv(venv, env.requirements)
    found = versions_of(python, env)
    if found is None:
        raise SystemExit(f"Error: {python} lacks {env.distribution}=={env.version} after pip install")
    return found, time.perf_counter() - t0


def make_venv(venv: Path, requirements: tuple[str, ...], base: str = sys.executable) -> Path:
    """``venv`` afresh from the registry: ``base -m venv``, then ``pip install requirements``; its interpreter."""
    if venv.exists():
        shutil.rmtree(venv)
    print(f"creating {venv.relative_to(ROOT) if venv.is_relative_to(ROOT) else venv}: python -m venv, "
          f"pip install {' '.join(requirements)}", file=sys.stderr, flush=True)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python = venv_python(venv)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    return python


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------
def dpaudit_executable() -> list[str]:
    """This checkout's dpaudit: ``python -m dpaudit`` with the repository first on the import path (see
    :func:`run_environment`).  An installed ``dpaudit`` script may import another checkout's code."""
    return [sys.executable, "-m", "dpaudit"]


def run_environment(audit: bool) -> dict[str, str]:
    """The environment of every subprocess: BLAS/OpenMP thread counts 1 unless set (one core per process on a
    shared machine: dpaudit already runs a process per lane); for dpaudit runs, this checkout first on
    PYTHONPATH.  dpaudit's workers start from a scrubbed environment (thread counts kept, PYTHONPATH not), so
    the library's interpreter never sees the repository."""
    env = dict(os.environ)
    for key in THREAD_VARIABLES:
        env.setdefault(key, "1")
    if audit:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return env


def dpaudit_source() -> str:
    """Where the dpaudit that the runs use is imported from (relative to the repository: it must be this one)."""
    out = subprocess.run([*dpaudit_executable()[:1], "-c", "import dpaudit.attacks; print(dpaudit.__file__); "
                          "print(dpaudit.attacks.__file__)"], cwd=ROOT, env=run_environment(True), capture_output=True,
                         text=True, check=True)
    paths = [Path(p) for p in out.stdout.split()]
    if not all(p.resolve().is_relative_to(ROOT) for p in paths):
        raise SystemExit(f"Error: dpaudit would be imported from outside this checkout: {out.stdout.strip()}")
    return ", ".join(p.resolve().relative_to(ROOT).as_posix() for p in paths)


def _shown(argv: list[str], scratch: Path, head: str) -> str:
    return shlex.join([head, *argv]).replace(str(scratch), "$SCRATCH")


def _tail(text: str, lines: int = 6) -> str:
    return scrub("\n".join(text.strip().splitlines()[-lines:]))


def scrub(text: str | None) -> str | None:
    """A message as the results keep it: paths inside the repository relative to it, no other machine's paths."""
    if text is None:
        return None
    return text.replace(str(ROOT) + os.sep, "").replace(str(ROOT), ".").replace(tempfile.gettempdir() + os.sep, "…/")


def execute(cmd: list[str], timeout: float, audit: bool = False) -> tuple[int, float, str]:
    """``cmd`` from the repository's root: (exit code, -1 when stopped at ``timeout``; seconds; stderr and stdout's tail)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=run_environment(audit), capture_output=True, text=True,
                              timeout=timeout)
        code, err = proc.returncode, proc.stderr + proc.stdout[-2000:]
    except subprocess.TimeoutExpired as exc:
        code = -1
        err = (exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")) + \
            f"\n(harness: no answer within {timeout:.0f} s; stopped)"
    return code, time.perf_counter() - t0, err


def audit_row(row: Row, python: str | None, scratch: Path, extra: list[str], timeout: float) -> Run:
    """``dpaudit estimate-eps`` on one row, in a subprocess from the repository's root (``python`` None: no
    ``--python``, the workers run in dpaudit's own interpreter — a row that is a program, ``cmd:…``)."""
    out = scratch / ("".join(c if c.isalnum() or c in "._-" else "-" for c in row.name) + ".json")
    argv = ["estimate-eps", "-m", row.spec, "--eps", f"{CLAIM:g}", *row.options,
            *(["--python", python] if python else []), *extra,
            "--no-progress", "--json", str(out), "--out", str(out.with_suffix("")), "--force"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    code, wall, err = execute([*dpaudit_executable(), *argv], timeout, audit=True)
    run = Run(row.name, _shown(argv, scratch, "dpaudit"), code, wall, load_before=load)
    if not out.exists():
        run.error = _tail(err) or f"exit code {code}, no JSON written"
        return run
    res = json.loads(out.read_text(encoding="utf-8"))
    pair = res.get("pair") or {}
    run.verdict = res.get("verdict")
    run.epsilon_lower_bound = res.get("epsilon_lower_bound")
    run.ceiling = res.get("ceiling")
    run.samples = res.get("samples")
    run.pair = {k: pair.get(k) for k in ("name", "family", "relation", "records_D", "records_D_prime", "description")}
    run.event = (res.get("event") or {}).get("text")
    run.counts = res.get("counts") or None
    run.findings = [{k: (scrub(f.get(k)) if k == "error" else f.get(k)) for k in ("kind", "count", "calls", "blocking",
                                                                               "error")}
                    for f in res.get("findings") or []]
    run.leak_warnings = list(res.get("leak_warnings") or [])
    run.randomness = res.get("randomness")
    run.supervision = {k: v for k, v in (res.get("supervision") or {}).items() if k != "grid"} or None
    run.dpaudit_seconds = res.get("elapsed_seconds")
    run.budget = ((res.get("search") or {}).get("plan") or {}).get("releases")
    run.leak_sites = [{k: site.get(k) for k in ("kind", "file", "first_line", "last_line", "where", "sentence")}
                      for site in ((res.get("search") or {}).get("leak_sites") or [])[:3]]
    if code not in (0, 1, 3):
        run.error = _tail(err)
    return run


def reproduce(script: str, env_key: str, python: str, fits: int, scratch: Path, timeout: float,
              control: bool = True, args: tuple[str, ...] = ()) -> Reproduction:
    """A reproduction (a script and its arguments) in the library's interpreter, then its control (the same
    with ``--patched``: the library line patched); both JSONs read back.  ``args`` follow the script's own (an
    R reproduction's ``--library DIR``)."""
    words = [*shlex.split(script), *args]
    stem = "-".join(Path(w).stem for w in shlex.split(script))
    out = scratch / f"repro-{env_key}-{stem}.json"
    argv = [*words, *(["--fits", str(fits)] if fits else []), "--json", str(out)]  # 0: the script's own default
    code, wall, err = execute([python, *argv], timeout)
    rep = Reproduction(script, env_key, _shown(argv, scratch, python), code, wall)
    if out.exists():
        rep.result = json.loads(out.read_text(encoding="utf-8"))
    else:
        rep.error = _tail(err) or f"exit code {code}, no JSON written"
    if control:
        out_c = scratch / f"control-{env_key}-{stem}.json"
        argv_c = [*words, CONTROL_FLAG, "--fits", str(fits), "--json", str(out_c)]
        code_c, wall_c, err_c = execute([python, *argv_c], timeout)
        rep.control_command = _shown(argv_c, scratch, python)
        rep.control_seconds = wall_c
        if out_c.exists():
            rep.control = json.loads(out_c.read_text(encoding="utf-8"))
        else:
            rep.control_error = _tail(err_c) or f"exit code {code_c}, no JSON written"
    return rep


# ---------------------------------------------------------------------------------------------
# Provenance
# ---------------------------------------------------------------------------------------------


def load_average() -> list[float] | None:
    return [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None


# ---------------------------------------------------------------------------------------------
def select_rows(only: str) -> list[Row]:
    names = [n.strip() for n in only.split(",") if n.strip()]
    if not names:
        return list(ROWS)
    picked = [r for r in ROWS if r.name in names or r.env in names]
    unknown = [n for n in names if not any(r.name == n or r.env == n for r in ROWS)]
    if unknown:
        raise SystemExit(f"Error: unknown row(s) or library {', '.join(unknown)}; rows: "
                         f"{'; '.join(r.name for r in ROWS)}; libraries: {', '.join(ENVIRONMENTS)}")
    return picked


def write_outputs(args: argparse.Namespace, payload: dict[str, Any]) -> None:
    write_page(args.out, markdown(payload), payload)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None,
                    help="write the page here (Markdown) and the runs beside it (.json), e.g. "
                         "benchmarks/results/libraries.md")
    ap.add_argument("--only", default="", help="comma-separated row names or library keys (default: every row)")
    ap.add_argument("--venvs", default=DEFAULT_VENVS, help=f"where the environments go (default {DEFAULT_VENVS})")
    ap.add_argument("--reuse-venvs", action="store_true",
                    help="keep an environment whose library version is right instead of building it afresh")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: {shlex.join(QUICK_ARGS)} passed to dpaudit, {QUICK_FITS} fits per reproduction")
    ap.add_argument("--dpaudit-args", default="", help="more options for every estimate-eps run (one string)")
    ap.add_argument("--no-reproductions", action="store_true", help="audit only (the page then confirms nothing)")
    ap.add_argument("--timeout", type=float, default=RUN_TIMEOUT,
                    help="seconds per run before it is stopped (at most twice the row's budget)")
    ap.add_argument("--from-json", type=Path, default=None, help="re-render the page from a JSON this script wrote")
    add_force(ap)
    args = ap.parse_args(argv)
    args.json_out = None if args.out is None else args.out.with_suffix(".json")
    guard_outputs(args, "out", "json_out")
    shown_argv = ["python", "benchmarks/bench_libraries.py",
                  *(portable(a) for a in (argv if argv is not None else sys.argv[1:]))]
    if args.from_json is not None:
        payload = json.loads(args.from_json.read_text(encoding="utf-8"))
        payload["meta"]["rendered_by"] = shlex.join(shown_argv)
        payload["status"] = {row["name"]: row_status(row, run, payload["reproductions"])  # derived: recomputed
                             for row, run in zip(payload["rows"], payload["runs"])}
        write_outputs(args, payload)
        return 0

    rows = select_rows(args.only)
    extra = [*(QUICK_ARGS if args.quick else ()), *shlex.split(args.dpaudit_args)]
    venvs = Path(args.venvs)
    venvs_abs = venvs if venvs.is_absolute() else ROOT / venvs
    t_all = time.perf_counter()
    load_start = load_average()
    commit = git_commit()  # the code that runs (before anything is written)
    source = dpaudit_source()
    environments: dict[str, Any] = {}
    for key in dict.fromkeys(r.env for r in rows):
        versions, seconds = ensure_venv(ENVIRONMENTS[key], venvs_abs, args.reuse_venvs)
        environments[key] = {"title": ENVIRONMENTS[key].title, "requirements": list(ENVIRONMENTS[key].requirements),
                             "python": str(venv_python(venvs / key)), "versions": versions,
                             "setup_seconds": seconds, "reused": bool(args.reuse_venvs)}
    runs: list[Run] = []
    reproductions: list[Reproduction] = []
    with tempfile.TemporaryDirectory(prefix="bench-libraries-") as tmp:
        scratch = Path(tmp)
        for row in rows:
            run = audit_row(row, environments[row.env]["python"], scratch, extra, min(args.timeout, 2 * row.wall_budget))
            run.wall_budget = row.wall_budget
            runs.append(run)
            print(f"{row.name:<52} {str(run.verdict or 'failed'):<20} ε_lb {run.epsilon_lower_bound or 0:6.3g}  "
                  f"{run.wall_seconds:6.1f} s" + (f"\n    {run.error}" if run.error else ""), file=sys.stderr, flush=True)
        if not args.no_reproductions:
            wanted = {(r.reproduction, r.env) for r, run in zip(rows, runs)
                      if r.reproduction and (r.expected == "violated" or run.verdict == "violation")}
            for script, env_key in sorted(wanted):
                fits = QUICK_FITS if args.quick else REPRODUCTION_FITS.get(shlex.split(script)[0], 1000)
                rep = reproduce(script, env_key, environments[env_key]["python"], fits, scratch, args.timeout)
                reproductions.append(rep)
                bound = (rep.result or {}).get("epsilon_lower_bound")
                c_bound = (rep.control or {}).get("epsilon_lower_bound")
                print(f"reproduction {Path(script).name} ({env_key}): ε ≥ {bound if bound is None else round(bound, 2)}"
                      f"  {rep.wall_seconds:.0f} s; control ε ≥ {c_bound if c_bound is None else round(c_bound, 2)}"
                      + (f"\n    {rep.error}" if rep.error else "")
                      + (f"\n    control: {rep.control_error}" if rep.control_error else ""), file=sys.stderr,
                      flush=True)
    threads = {k: v for k, v in run_environment(False).items() if k in THREAD_VARIABLES}
    meta = {"harness_command": shlex.join(shown_argv), "commit": commit, "dpaudit_source": source,
            "thread_variables": threads, "cores": os.cpu_count(),
            "machine": platform.machine(), "python": platform.python_version(), "extra": extra,
            "total_seconds": time.perf_counter() - t_all, "load_average_start": load_start,
            "load_average_end": load_average(), "claim": CLAIM, "environments": environments, "quick": bool(args.quick)}
    payload = {"meta": meta, "rows": [asdict(r) for r in rows], "runs": [asdict(r) for r in runs],
               "reproductions": [asdict(r) for r in reproductions]}
    payload["status"] = {row["name"]: row_status(row, run, payload["reproductions"])
                         for row, run in zip(payload["rows"], payload["runs"])}
    write_outputs(args, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
