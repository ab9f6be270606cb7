"""``dpaudit audit``: ε estimation, membership attacks, reconstruction and utility on third-party code."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, List, Optional

import typer

from dpaudit.attack.registry import ATTACKS
from dpaudit.commands.options import (
    DEFAULT_TIME_BUDGET,
    DEFAULT_TIMEOUT,
    NOTION_OPTIONS,
    Bounds,
    Classes,
    DataFile,
    DatasetName,
    FailOnViolation,
    Force,
    JsonPath,
    LabelAnchors,
    LabelColumn,
    LabelRange,
    Mechanism,
    MemoryLimit,
    MinRecords,
    OwnRandomness,
    Progress,
    Python,
    Quiet,
    Releases,
    Scheduler,
    Seed,
    TimeBudget,
    Timeout,
    attack_option,
    delta_option,
    eps_option,
    n_jobs_option,
    neighbours_option,
    out_option,
    output_option,
    panels,
    param_option,
    records_option,
    repeats_option,
    rescale_option,
    samples_option,
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
    progress_mode,
    report_findings,
    user_errors,
)

if TYPE_CHECKING:  # annotations only: --help loads no heavy module
    from dpaudit.audit.config import AuditConfig
    from dpaudit.data.datasets import Dataset
    from dpaudit.run_shapes import RunResults

DEFAULT_DATASET = "blobs-2d"  # the data when neither --dataset nor --data is given
GENERATED_RECORDS = 200  # default --records of a generated dataset: small enough for a full battery in minutes




def audit(
    mechanism: Mechanism,
    eps: Annotated[float, eps_option("The ε the code is asked to honour (its claim).")],
    output: Annotated[Optional[str], output_option()] = None,
    neighbours: Annotated[str, neighbours_option()] = "add-remove",
    notions: Optional[dict[str, Any]] = None,  # --rho, --mu, … (with_notion_options)
    delta: Annotated[float, delta_option("Plug-in claim δ.")] = 0.0,
    python: Python = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    memory_limit: MemoryLimit = None,
    scheduler: Scheduler = None,
    n_jobs: Annotated[int, n_jobs_option("Local worker processes for the ε estimation's chunks and the attack "
                                         "repeats (-1: all cores); the numbers do not depend on it.")] = 1,
    dataset: DatasetName = None,
    data: DataFile = None,
    label_column: LabelColumn = None,
    records: Annotated[Optional[int], records_option("Records used: a seeded subset, or how many to generate "
                                                     "(default: 200 for generated sets, all otherwise).")] = None,
    rescale: Annotated[str, rescale_option("none, or minmax onto [-1,1] (reported as a leak).")] = "none",
    param: Annotated[Optional[List[str]], param_option("Constructor parameter KEY=VALUE (repeatable); "
                                                       "bounds=dataset uses the dataset's public box.")] = None,
    samples: Annotated[Optional[int], samples_option("ε estimation: certification releases per dataset, in one look "
                                                     "(default: the time budget decides).")] = None,
    time_budget: TimeBudget = DEFAULT_TIME_BUDGET,
    releases: Releases = None,
    min_records: MinRecords = None,
    bounds: Bounds = None,
    classes: Classes = None,
    label_range: LabelRange = None,
    label_anchors: LabelAnchors = True,
    own_randomness: OwnRandomness = False,
    attack: Annotated[str, attack_option(f"{','.join(ATTACKS)}, all or none.")] = "all",
    repeats: Annotated[int, repeats_option("Independent splits and releases of the attacks.", short=True)] = 2,
    seed: Seed = 0,
    out: Annotated[Optional[Path], out_option("Report directory (default reports/<time>-audit-...).")] = None,
    json_path: JsonPath = None,
    fail_on_violation: FailOnViolation = False,
    force: Force = False,
    progress: Progress = True,
    quiet: Quiet = False,
) -> None:
    """Audit third-party code: the full battery, a verdict table on top, findings instead of crashes."""
    with user_errors():
        from dpaudit.audit.config import PARTS, AuditConfig
        from dpaudit.commands import build
        from dpaudit.data import datasets
        from dpaudit.data.inputs import parse_bounds, parse_params
        from dpaudit.data.limits import check_estimation_size

        if records is None and data is None and datasets.is_generated(dataset or DEFAULT_DATASET):
            records = GENERATED_RECORDS
        chosen = build.data_options(dataset, data, label_column=label_column, records=records, rescale=rescale)
        ds = chosen.load(seed)
        check_estimation_size(ds.n_records, ds.n_features, "the audit's ε estimation")
        box = parse_bounds(bounds, ds.n_features)
        target = build.target_options(mechanism, params=parse_params(param, ds), output=output,
                                      own_randomness=own_randomness, classes=classes, label_range=label_range,
                                      label_anchors=label_anchors)
        cfg = AuditConfig(
            target=target.with_supervision(ds, box),
            claim=build.claim_options(eps, delta=delta or None, neighbours=neighbours,  # --delta 0: none stated
                                      notions=notions),
            data=dataclasses.replace(chosen, bounds=box),
            attack=build.attack_options(build.attack_names(attack, every=ATTACKS, empty=ATTACKS), repeats=repeats),
            budget=build.budget(samples=samples, time_budget=time_budget, releases=releases),
            search=build.search(min_records=min_records),
            isolation=build.isolation(timeout=timeout, python=python, memory_limit=memory_limit),
            run=build.run_settings(n_jobs=n_jobs, scheduler=scheduler), seed=seed, parts=PARTS)
        results = _audit(cfg, ds, out=out, data=data, json_path=json_path, force=force,
                         progress=progress_mode(progress, quiet), quiet=quiet)
    finish(results, fail_on_violation=fail_on_violation)


def _audit(cfg: AuditConfig, ds: Dataset, *, out: Optional[Path], data: Optional[Path], json_path: Optional[Path],
           force: bool, progress: str, quiet: bool) -> RunResults:
    """Check where the audit writes, run it into its folder (the parts that finished are written on
    Ctrl-C), print the verdict table and the diagnostics; the results."""
    from dpaudit.audit.output import verdict_table
    from dpaudit.audit.run import run_audit
    from dpaudit.console import echo
    from dpaudit.execution import SchedulerError
    from dpaudit.execution.untrusted import quoted
    from dpaudit.report import provenance, write_json

    out_dir = out or default_out_dir("audit", cfg.target.mechanism, f"{cfg.epsilon:g}")
    check_outputs(out_dir, json_path, input_files(data=data, mechanism=cfg.target.mechanism,
                                                  python=cfg.isolation.python), force=force)
    prov = provenance(seed=cfg.seed, parameters=cfg.to_dict())
    try:
        results = run_audit(cfg, ds, out_dir, progress=progress, provenance=prov).to_dict()
    except (KeyboardInterrupt, SchedulerError):
        info(f"partial report in {out_dir}")
        raise
    if json_path is not None:
        write_json(results, json_path)
    echo(*verdict_table(results))
    report_findings(results["findings"])
    for w in results["warnings"]:
        info(f"{w['category']}: {quoted(w['message'])}")
    if not quiet:
        info(files_written(out_dir, {p.name: p for p in sorted(out_dir.iterdir()) if p.is_file()}, (json_path,)))
    return results


EXAMPLES = (
    "dpaudit audit --mechanism examples/their_code.py:their_kmeans --eps 1 --output centroids   (third-party "
    "code: ε estimation, attacks, utility; it runs in a worker process)",
    "dpaudit audit -m examples/their_code.py:their_kmeans --eps 1 --output centroids --python .venv/bin/python "
    "--timeout 30 --attack none --fail-on-violation   (in the interpreter of an environment of its own, here the "
    "README's .venv; exit 1 on a violation, for CI)",
    "dpaudit audit -m ndlaplace-thesis --eps 1 --attack none --releases 20000   (ε estimation and utility only, "
    "a fixed plan: the same numbers on any machine)",
    "dpaudit audit -m laplace --eps 1 --profile examples/privacy-profile.csv --attack none --releases 4000   (the "
    "claim as a privacy profile, epsilon,delta rows as an accountant prints them)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        with_notion_options(audit),
        audited=("mechanism", "eps", "output", "neighbours", *NOTION_OPTIONS, "delta", "dataset", "data", "label_column", "records",
                 "rescale", "param", "bounds", "attack", "classes", "label_range",
                 "label_anchors"),
        budget=("samples", "time_budget", "releases", "min_records", "repeats"),
        execution=("seed", "python", "timeout", "memory_limit", "scheduler", "n_jobs", "own_randomness"),
        output=("out", "json_path", "force", "fail_on_violation", "progress", "quiet"))
    app.command("audit", epilog=epilog(*EXAMPLES))(command)
