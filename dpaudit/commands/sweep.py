"""``dpaudit sweep``: privacy–utility sweep over ε × repeats (thesis §5.3), resumable."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, List, Optional

import typer

from dpaudit.commands.options import (
    DEFAULT_TIMEOUT,
    NOTION_OPTIONS,
    DataFile,
    DatasetName,
    JsonPath,
    LabelColumn,
    Mechanism,
    MemoryLimit,
    Neighbours,
    Progress,
    Python,
    Quiet,
    Scheduler,
    Timeout,
    attack_option,
    eps_option,
    force_option,
    n_jobs_option,
    out_option,
    output_option,
    panels,
    param_option,
    records_option,
    repeats_option,
    rescale_option,
    samples_option,
    seed_option,
    with_notion_options,
)
from dpaudit.commands.support import (
    check_outputs,
    default_out_dir,
    epilog,
    files_written,
    finish,
    info,
    input_files,
    parse_float_list,
    progress_mode,
    report_findings,
    user_errors,
)

if TYPE_CHECKING:  # annotations only: --help loads no heavy module
    from dpaudit.data.datasets import Dataset
    from dpaudit.run_shapes import RunResults
    from dpaudit.sweep.config import SweepConfig

EPS_HELP = "Comma-separated ε list (thesis: 0.05,0.1,0.5,1,2,3,5,7,9)."




def sweep(
    mechanism: Mechanism,
    eps: Annotated[str, eps_option(EPS_HELP)] = "0.05,0.1,0.5,1,2,3,5,7,9",
    repeats: Annotated[int, repeats_option("Repeats per ε (thesis: 10).", short=True)] = 10,
    dataset: DatasetName = None,
    data: DataFile = None,
    label_column: LabelColumn = None,
    records: Annotated[Optional[int], records_option("Number of records (thesis: 50/200/2000).")] = None,
    rescale: Annotated[str, rescale_option("none, or minmax: onto [-1,1] by the data's min/max (the thesis's RQ1 "
                                           "set-up; reported as a privacy leak).")] = "none",
    clusterers: Annotated[str, typer.Option("--clusterers", help="Clusterers run on released points (or "
                                                                 "'none').")] = "kmeans,affinity-propagation,dbscan",
    n_clusters: Annotated[Optional[int], typer.Option("--n-clusters", help="Clusters for the utility clusterers (default: number of classes, else 4).")] = None,
    attack: Annotated[Optional[str], attack_option("Membership attacks per cell, e.g. yeom,lira,rmia, or "
                                                   "all.")] = None,
    epsilon_bound: Annotated[bool, typer.Option("--epsilon-bound", help="Also estimate a certified ε lower bound "
                                                                        "per cell.")] = False,
    samples: Annotated[int, samples_option("--epsilon-bound: certification releases per dataset, per cell.")] = 1000,
    param: Annotated[Optional[List[str]], param_option("Mechanism parameter KEY=VALUE (repeatable); bounds=dataset "
                                                       "uses the dataset's public box.")] = None,
    seed: Annotated[int, seed_option("Root seed; cell (i, r) uses SeedSequence(seed, spawn_key=(i, r)).")] = 0,
    out: Annotated[Optional[Path], out_option("Run directory (default reports/<time>-sweep-...).")] = None,
    json_path: JsonPath = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the sweep in --out without redoing finished "
                                                          "cells.")] = False,
    n_jobs: Annotated[int, n_jobs_option("Parallel worker processes (joblib; -1: all cores).")] = 1,
    scheduler: Scheduler = None,
    output: Annotated[Optional[str], output_option("Plug-in functions: points|centroids|labels|vector.")] = None,
    neighbours: Neighbours = None,
    notions: Optional[dict[str, Any]] = None,  # --rho, --mu, … (with_notion_options)
    timeout: Timeout = DEFAULT_TIMEOUT,
    python: Python = None,
    memory_limit: MemoryLimit = None,
    force: Annotated[bool, force_option("Replace the sweep or report already in --out (start afresh).")] = False,
    progress: Progress = True,
    quiet: Quiet = False,
) -> None:
    """Sweep ε × repeats: release, cluster the release, measure utility and privacy; mean ± std per ε.

    A sweep certifies no verdict on the claim (its conclusion is NOT TESTED); exit status 3 when it
    is incomplete: a cell failed, was not run, or the audited code misbehaved (the findings say how).
    The report of what finished is written either way."""
    with user_errors():
        from dpaudit.attack.registry import MEMBERSHIP_ATTACKS
        from dpaudit.commands import build
        from dpaudit.data.inputs import parse_params
        from dpaudit.mechanisms.base import InvalidInputError
        from dpaudit.sweep.config import SweepConfig
        from dpaudit.utility import clusterers as cl

        run = build.run_settings(n_jobs=n_jobs, scheduler=scheduler)
        if resume and out is None:
            raise InvalidInputError("--resume needs --out DIR (the run directory to continue)")
        if resume and force:
            raise InvalidInputError("--resume continues the sweep in --out and --force replaces it; give one")
        epsilons = tuple(parse_float_list(eps, "--eps"))
        chosen = build.data_options(dataset, data, label_column=label_column, records=records, rescale=rescale)
        ds = chosen.load(seed)
        cfg = SweepConfig(
            target=build.target_options(mechanism, params=parse_params(param, ds), output=output),
            claim=build.claim_options(None, neighbours=neighbours, notions=notions), data=chosen,
            attack=build.attack_options(build.attack_names(attack, every=MEMBERSHIP_ATTACKS, empty=())),
            budget=build.budget(samples=samples),
            isolation=build.isolation(timeout=timeout, python=python, memory_limit=memory_limit), run=run,
            seed=seed, epsilons=epsilons, repeats=repeats, clusterers=cl.parse_clusterers(clusterers),
            n_clusters=n_clusters, epsilon_bound=epsilon_bound)
        if scheduler is not None and not scheduler.strip():
            raise InvalidInputError("--scheduler must be a Dask scheduler address, tcp://HOST:PORT")
        results = _sweep(cfg, ds, out=out, data=data, json_path=json_path, resume=resume, force=force,
                         progress=progress_mode(progress, quiet), quiet=quiet)
    finish(results, fail_on_violation=False)


def _sweep(cfg: SweepConfig, ds: Dataset, *, out: Optional[Path], data: Optional[Path], json_path: Optional[Path],
           resume: bool, force: bool, progress: str, quiet: bool) -> RunResults:
    """Name the data's leaks, check where the sweep writes, run it (resumable: what finished is kept on
    Ctrl-C), print the summary table and the diagnostics; the results."""
    from dpaudit.console import echo
    from dpaudit.execution import SchedulerError
    from dpaudit.report import provenance, write_json
    from dpaudit.sweep.output import summary_table
    from dpaudit.sweep.run import run_sweep

    for leak in ds.params.get("leaks", []):
        info(f"PrivacyLeakWarning: {leak}")
    out_dir = out or default_out_dir("sweep", cfg.target.mechanism, "list")
    check_outputs(out_dir, json_path, input_files(data=data, mechanism=cfg.target.mechanism,
                                                  python=cfg.isolation.python), force=force, resume=resume)
    prov = provenance(seed=cfg.seed, parameters={**cfg.to_dict(), "n_jobs": cfg.run.n_jobs,
                                                 "scheduler": cfg.run.scheduler})
    try:
        results = run_sweep(cfg, ds, out_dir, resume=resume, progress=progress, provenance=prov)
    except (KeyboardInterrupt, SchedulerError):
        info(f"partial report in {out_dir}; continue with --resume --out {out_dir}")
        raise
    if json_path is not None:
        write_json(results, json_path)
    echo(*summary_table(results))
    report_findings(results["findings"])
    if not quiet:
        info(files_written(out_dir, {p.name: p for p in sorted(out_dir.iterdir()) if p.is_file()}, (json_path,)))
    return results


EXAMPLES = (
    "dpaudit sweep --mechanism ndlaplace --eps 0.1,0.5,1,2,5 --repeats 3 --records 200 --attack yeom "
    "--clusterers kmeans   (a small privacy–utility sweep, 20 s)",
    "dpaudit sweep -m ndlaplace --eps 0.5,1 --repeats 2 --records 200 --clusterers kmeans --out reports/rq1 "
    "--resume   (--resume continues an interrupted sweep in --out without redoing finished cells)",
    "dpaudit sweep -m ndlaplace --eps 0.5,1,2 --repeats 3 --records 200 --clusterers kmeans --epsilon-bound "
    "--n-jobs 2   (a certified ε lower bound per cell, on two processes: the same numbers as on one)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        with_notion_options(sweep),
        audited=("mechanism", "eps", "dataset", "data", "label_column", "records", "rescale", "clusterers", "n_clusters",
                 "attack", "param", "output", "neighbours", *NOTION_OPTIONS),
        budget=("repeats", "epsilon_bound", "samples"),
        execution=("seed", "n_jobs", "scheduler", "timeout", "python", "memory_limit"),
        output=("out", "json_path", "resume", "force", "progress", "quiet"))
    app.command("sweep", epilog=epilog(*EXAMPLES, fail_on_violation=False))(command)
