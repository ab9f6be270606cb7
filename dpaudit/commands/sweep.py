"""``dpaudit sweep``: privacy–utility sweep over ε × repeats (thesis §5.3), resumable."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from dpaudit.commands.support import (
    check_not_input,
    check_report_dir,
    default_out_dir,
    epilog,
    files_written,
    finish,
    info,
    input_files,
    isolation_options,
    memory_limit_option,
    panels,
    parse_float_list,
    progress_mode,
    python_option,
    report_findings,
    scheduler_option,
    timeout_option,
    user_errors,
)

EPS_HELP = "Comma-separated ε list (thesis: 0.05,0.1,0.5,1,2,3,5,7,9)."


def sweep(
    mechanism: str = typer.Option(..., "--mechanism", "-m", help="Registered name, module:attr or file.py:attr."),
    eps: str = typer.Option("0.05,0.1,0.5,1,2,3,5,7,9", "--eps", help=EPS_HELP),
    repeats: int = typer.Option(10, "--repeats", "-r", help="Repeats per ε (thesis: 10)."),
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help="Built-in dataset (default blobs-2d)."),
    data: Optional[Path] = typer.Option(None, "--data", help="A numeric CSV instead of --dataset."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="CSV column holding class labels."),
    records: Optional[int] = typer.Option(None, "--records", "-n", help="Number of records (thesis: 50/200/2000)."),
    rescale: str = typer.Option("none", "--rescale", help="none, or minmax: onto [-1,1] by the data's min/max "
                                "(the thesis's RQ1 set-up; reported as a privacy leak)."),
    clusterers: str = typer.Option("kmeans,affinity-propagation,dbscan", "--clusterers",
                                   help="Clusterers run on released points (or 'none')."),
    k: Optional[int] = typer.Option(None, "--k", help="KMeans k (default: number of classes, else 4)."),
    attack: Optional[str] = typer.Option(None, "--attack", help="Membership attacks per cell, e.g. yeom,lira,rmia, or all."),
    epsilon_bound: bool = typer.Option(False, "--epsilon-bound", help="Also estimate a certified ε lower bound per cell."),
    epsilon_samples: int = typer.Option(1000, "--epsilon-samples", help="Certification samples per cell for --epsilon-bound."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p", help="Mechanism parameter KEY=VALUE (repeatable); "
                                              "bounds=dataset uses the dataset's public box."),
    seed: int = typer.Option(0, "--seed", min=0, help="Root seed; cell (i, r) uses SeedSequence(seed, spawn_key=(i, r))."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Run directory (default reports/<time>-sweep-...)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the sweep in --out without redoing finished cells."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Parallel worker processes (joblib; -1: all cores)."),
    scheduler: Optional[str] = scheduler_option(),
    output: Optional[str] = typer.Option(None, "--output", help="Plug-in functions: points|centroids|labels|vector."),
    neighbours: Optional[str] = typer.Option(None, "--neighbours", help="Plug-in claim: add-remove|replace|metric."),
    timeout: float = timeout_option(),
    python: Optional[str] = python_option(),
    memory_limit: Optional[str] = memory_limit_option(),
    force: bool = typer.Option(False, "--force", help="Replace the sweep or report already in --out (start afresh)."),
    progress: bool = typer.Option(True, "--progress/--no-progress",
                                  help="Progress on stderr: a bar on a terminal, plain lines otherwise."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no file list on stderr."),
) -> None:
    """Sweep ε × repeats: release, cluster the release, measure utility and privacy; mean ± std per ε.

    A sweep certifies no verdict on the claim (its conclusion is NOT TESTED); exit status 3 when it
    is incomplete: a cell failed, was not run, or the audited code misbehaved (the findings say how).
    The report of what finished is written either way."""
    with user_errors():
        from dpaudit.data.inputs import load_data, parse_params
        from dpaudit.report import provenance
        from dpaudit.sweep.config import SweepConfig
        from dpaudit.console import echo
        from dpaudit.sweep.output import summary_table
        from dpaudit.sweep.privacy import parse_attacks
        from execution import SchedulerError
        from dpaudit.sweep.run import run_sweep
        from dpaudit.utility import clusterers as cl
        from mechanisms.base import InvalidInputError

        if n_jobs < 1 and n_jobs != -1:
            raise InvalidInputError(f"--n-jobs must be ≥ 1, or -1 for every core; got {n_jobs}")
        if resume and out is None:
            raise InvalidInputError("--resume needs --out DIR (the run directory to continue)")
        if resume and force:
            raise InvalidInputError("--resume continues the sweep in --out and --force replaces it; give one")
        epsilons = tuple(parse_float_list(eps, "--eps"))
        ds = load_data(dataset, data, label_column=label_column, records=records, seed=seed, rescale=rescale)
        params = parse_params(param, ds)
        cfg = SweepConfig(mechanism=mechanism, epsilons=epsilons, repeats=repeats, params=params,
                          clusterers=cl.parse_clusterers(clusterers), k=k, attacks=parse_attacks(attack),
                          epsilon_bound=epsilon_bound, epsilon_samples=epsilon_samples, seed=seed,
                          dataset={"dataset": None if data else (dataset or "blobs-2d"),
                                   "data": data.name if data else None, "records": records, "rescale": rescale},
                          output=output, neighbours=neighbours, **isolation_options(timeout, python, memory_limit))
        if scheduler is not None and not scheduler.strip():
            raise InvalidInputError("--scheduler must be a Dask scheduler address, tcp://HOST:PORT")
        for leak in ds.params.get("leaks", []):
            info(f"PrivacyLeakWarning: {leak}")
        out_dir = out or default_out_dir("sweep", mechanism, "list")
        check_not_input(out_dir, input_files(data=data, mechanism=mechanism, python=python), directory=True,
                        option="--out")  # before --force deletes anything
        check_report_dir(out_dir, force=force, resume=resume)
        prov = provenance(seed=seed, parameters={**cfg.to_dict(), "n_jobs": n_jobs, "scheduler": scheduler})
        try:
            results = run_sweep(cfg, ds, out_dir, resume=resume, n_jobs=n_jobs, scheduler=scheduler,
                                progress=progress_mode(progress, quiet), provenance=prov)
        except (KeyboardInterrupt, SchedulerError):
            info(f"partial report in {out_dir}; continue with --resume --out {out_dir}")
            raise
        echo(*summary_table(results))
        report_findings(results["findings"])
        if not quiet:
            info(files_written(out_dir, {p.name: p for p in sorted(out_dir.iterdir()) if p.is_file()}))
    finish(results, fail_on_violation=False)


EXAMPLES = (
    "dpaudit sweep --mechanism ndlaplace --eps 0.1,0.5,1,2,5 --repeats 3 --records 200 --attack yeom "
    "--clusterers kmeans   (a small privacy–utility sweep, 20 s)",
    "dpaudit sweep -m ndlaplace --repeats 10 --out reports/rq1 --resume   (the thesis grid; --resume continues "
    "an interrupted sweep without redoing finished cells)",
    "dpaudit sweep -m ndlaplace --eps 0.5,1,2 --repeats 3 --records 200 --clusterers kmeans --epsilon-bound "
    "--n-jobs 2   (a certified ε lower bound per cell, on two processes: the same numbers as on one)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        sweep,
        audited=("mechanism", "eps", "dataset", "data", "label_column", "records", "rescale", "clusterers", "k",
                 "attack", "param", "output", "neighbours"),
        budget=("repeats", "epsilon_bound", "epsilon_samples"),
        execution=("seed", "n_jobs", "scheduler", "timeout", "python", "memory_limit"),
        output=("out", "resume", "force", "progress", "quiet"))
    app.command("sweep", epilog=epilog(*EXAMPLES))(command)
