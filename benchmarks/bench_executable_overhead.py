"""What auditing a program (``cmd:COMMAND``) costs per release, against the same code's own loop.

    python benchmarks/bench_executable_overhead.py [--records 1000] [--repeats 5] [--seconds 0.5] [--out FILE.md]

The issue's goal: a batched program is audited at most 2× the time its code spends per release in its own loop.
The code is ``benchmarks/executables/overhead.c`` (compiled here with the system's cc) and ``overhead.R`` (when
Rscript and R's jsonlite are installed): a replace-DP mean recomputed from the records for each release, and a
DP k-means (k = 3, five noisy Lloyd steps), on ``--records`` records × 2 dims.

* **own** — the program's ``--own N`` mode: one request read, N releases computed in its own loop for seeds 1..N (after N/10 untimed),
  timed by its own clock (nothing parsed or written per release);
* **audited** — :func:`dpaudit.execution.draw_releases` of a :class:`dpaudit.execution.WorkerMechanism` on
  ``cmd:…`` (warm: program started, data sent, batch size settled), wall time in this process: everything the
  audit does per release — the seeds, the JSON request and reply, the program's parsing and printing, the
  worker's framing, the checks here.

Both in µs per release, wall and CPU time (every process involved: the program alone; the auditor, the worker
and its program), medians of ``--repeats`` rounds taken in turn (own, audited, own, …), each round about
``--seconds`` long.  The second table is what a *lane* costs: the first
release in a new lane, which starts the lane's own program (forked worker + the program's start-up).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _outputs import add_force, guard_outputs, skipped_note  # noqa: E402  (benchmarks/_outputs.py)

from dpaudit.execution import WorkerMechanism, draw_releases  # noqa: E402

HERE = Path(__file__).resolve().parent
CODE = HERE / "executables"


def programs(build: Path) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """``(language, command prefix)`` of each program that can run here, and the rows that cannot (and why)."""
    found, skipped = [], []
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        skipped.append("C (no cc or gcc)")
    else:
        binary = build / "overhead"
        subprocess.run([cc, "-O2", "-o", str(binary), str(CODE / "overhead.c"), "-lm"], check=True)
        found.append(("C", [str(binary)]))
    rscript = shutil.which("Rscript")
    if rscript is None or subprocess.run([rscript, "-e", "library(jsonlite)"], capture_output=True).returncode:
        skipped.append("R (Rscript with jsonlite: apt-get install r-base-core r-cran-jsonlite)")
    else:
        found.append(("R", [rscript, str(CODE / "overhead.R")]))
    return found, skipped


def request(X: np.ndarray) -> str:
    """One request line on ``X``, as the auditor writes it (its seeds are not used by ``--own``)."""
    return json.dumps({"op": "release", "epsilon": 1.0, "count": 1, "seeds": [1], "n": len(X), "d": X.shape[1],
                       "params": {}, "data": X.tolist()}) + "\n"


def own_us(command: list[str], mechanism: str, line: str, n: int) -> tuple[float, float]:
    """Wall and CPU µs per release of the code in its own loop (its own clocks)."""
    out = subprocess.run([*command, mechanism, "--own", str(n)], input=line, capture_output=True, text=True,
                         check=True)
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def audit_cpu(mech: WorkerMechanism) -> float:
    """CPU seconds so far of this process, the worker of the shared lane and that worker's program."""
    worker = mech.lane_pids()[None]
    with open(f"/proc/{worker}/task/{worker}/children") as f:
        programs = [int(p) for p in f.read().split()]
    return time.process_time() + sum(cpu_seconds(pid) for pid in [worker, *programs])


def row(language: str, command: list[str], mechanism: str, X: np.ndarray, repeats: int, seconds: float
        ) -> dict[str, Any]:
    line = request(X)
    pilot = own_us(command, mechanism, line, 50)[0]
    n = int(np.clip(seconds / (pilot * 1e-6 + 5e-6), 50, 200_000))  # about `seconds` audited
    spec = "cmd:" + " ".join([*command, mechanism])
    mech = WorkerMechanism(spec, epsilon=1.0, neighbours="replace", output_stated=False, timeout=120)
    draw_releases(mech, X, np.random.SeedSequence(99), min(n, 4000))  # warm: started, data sent, batch settled
    owns, audits, own_cpus, audit_cpus = [], [], [], []
    for r in range(repeats):
        wall, cpu = own_us(command, mechanism, line, n)
        owns.append(wall)
        own_cpus.append(cpu)
        t0, c0 = time.perf_counter(), audit_cpu(mech)
        draw = draw_releases(mech, X, np.random.SeedSequence(r), n)
        audits.append((time.perf_counter() - t0) / n * 1e6)
        audit_cpus.append((audit_cpu(mech) - c0) / n * 1e6)
        assert not list(draw.findings), list(draw.findings)
    firsts = []
    for lane in range(5):
        t0 = time.perf_counter()
        draw_releases(mech, X, np.random.SeedSequence(0), 1, lane=lane)
        firsts.append((time.perf_counter() - t0) * 1e3)
    mech.close()
    own, audit = statistics.median(owns), statistics.median(audits)
    own_cpu, audited_cpu = statistics.median(own_cpus), statistics.median(audit_cpus)
    return {"language": language, "mechanism": mechanism, "output": mech.output, "releases": n, "own": own,
            "audit": audit, "ratio": audit / own, "own_cpu": own_cpu, "audit_cpu": audited_cpu,
            "overhead_cpu": audited_cpu - own_cpu, "ratio_cpu": audited_cpu / own_cpu,
            "lane_ms": statistics.median(firsts)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.5, help="about how long one audited round takes")
    ap.add_argument("--out", type=Path, default=None, help="also write the tables as Markdown")
    add_force(ap)
    args = ap.parse_args()
    guard_outputs(args, "out")
    X = np.random.default_rng(0).normal(scale=3.0, size=(args.records, 2))
    with tempfile.TemporaryDirectory() as build:
        found, skipped = programs(Path(build))
        rows = [row(language, command, mechanism, X, args.repeats, args.seconds)
                for language, command in found for mechanism in ("mean", "kmeans")]
    table = ["| code | release | releases per round | own wall | audited wall | ratio | own CPU | audited CPU "
             "| overhead CPU | ratio CPU |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    table += [f"| {r['language']} {r['mechanism']} | {r['output']} | {r['releases']} | {r['own']:.2f} | "
              f"{r['audit']:.2f} | {r['ratio']:.2f} | {r['own_cpu']:.2f} | {r['audit_cpu']:.2f} | "
              f"{r['overhead_cpu']:.2f} | {r['ratio_cpu']:.2f} |" for r in rows]
    lanes = ["| code | first release in a new lane (ms) |", "|---|---:|"]
    lanes += [f"| {r['language']} {r['mechanism']} | {r['lane_ms']:.1f} |" for r in rows]
    text = (f"{args.records} records × 2 dims; µs per release, medians of {args.repeats} interleaved rounds; "
            "ratio = audited ÷ own (the goal: at most 2). Wall: elapsed time; CPU: the CPU time of every process "
            "involved (own: the program; audited: the auditor, the worker and the worker's program, which run side "
            "by side), the measure a machine shared with other work leaves fair; overhead CPU = audited − own.\n\n"
            + "\n".join(table) + "\n\nWhat a lane costs "
            "(the median of 5 new lanes; each starts the lane's own program and makes its first call):\n\n"
            + "\n".join(lanes) + "\n" + skipped_note(skipped) + "\n"
            f"Machine: {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}; "
            "a shared machine: compare ratios, not microseconds.\n")
    print(text)
    if args.out is not None:
        command = (f"python benchmarks/bench_executable_overhead.py --records {args.records} --repeats "
                   f"{args.repeats} --seconds {args.seconds:g} --out {args.out.as_posix()} --force")
        args.out.write_text(f"# Auditing a program (cmd:COMMAND): cost per release\n\n`{command}`\n\n{text}",
                            encoding="utf-8")


if __name__ == "__main__":
    main()
