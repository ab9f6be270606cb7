"""``dpaudit audit``: ε estimation, membership attacks, reconstruction and utility on third-party code."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from dpaudit.commands.support import (
    bounds_option,
    check_not_input,
    check_report_dir,
    default_out_dir,
    epilog,
    fail_on_violation_option,
    files_written,
    finish,
    info,
    input_files,
    isolation_options,
    label_options,
    memory_limit_option,
    own_randomness_option,
    panels,
    progress_mode,
    python_option,
    releases_option,
    report_findings,
    scheduler_option,
    supervision_fields,
    time_budget_option,
    timeout_option,
    user_errors,
)

_LABELS = label_options()

GENERATED_RECORDS = 200  # default --records of a generated dataset: small enough for a full battery in minutes


def audit(
    mechanism: str = typer.Option(..., "--mechanism", "-m", help="Registered name, module:attr or file.py:attr."),
    eps: float = typer.Option(..., "--eps", help="The ε the code is asked to honour (its claim)."),
    output: str = typer.Option("points", "--output", help="Plug-in functions: points|centroids|labels|vector; "
                               "supervised estimator classes: parameters|predictions."),
    neighbours: str = typer.Option("add-remove", "--neighbours", help="Plug-in claim: add-remove|replace|metric."),
    delta: float = typer.Option(0.0, "--delta", help="Plug-in claim δ."),
    python: Optional[str] = python_option(),
    timeout: float = timeout_option(),
    memory_limit: Optional[str] = memory_limit_option(),
    scheduler: Optional[str] = scheduler_option(),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Local worker processes for the ε estimation's chunks "
                               "and the attack repeats (-1: all cores); the numbers do not depend on it."),
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help="Built-in dataset (default blobs-2d)."),
    data: Optional[Path] = typer.Option(None, "--data", help="A numeric CSV instead of --dataset."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="CSV column holding class labels."),
    records: Optional[int] = typer.Option(None, "--records", "-n", help="Records used: a seeded subset, or how many "
                                          "to generate (default: 200 for generated sets, all otherwise)."),
    rescale: str = typer.Option("none", "--rescale", help="none, or minmax onto [-1,1] (reported as a leak)."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p", help="Constructor parameter KEY=VALUE "
                                              "(repeatable); bounds=dataset uses the dataset's public box."),
    samples: Optional[int] = typer.Option(None, "--samples", help="ε estimation: certification releases per dataset, "
                                          "in one look (default: the time budget decides)."),
    time_budget: float = time_budget_option(),
    releases: Optional[int] = releases_option(),
    bounds: Optional[str] = bounds_option(),
    classes: Optional[str] = _LABELS["classes"],
    label_range: Optional[str] = _LABELS["label_range"],
    label_anchors: bool = _LABELS["label_anchors"],
    own_randomness: bool = own_randomness_option(),
    attack: str = typer.Option("all", "--attack", help="shokri,yeom,label-only,reconstruction,lira,rmia,tracing, all or none."),
    attack_repeats: int = typer.Option(2, "--attack-repeats", help="Independent splits for the attacks."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of every random choice."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Report directory (default reports/<time>-audit-...)."),
    fail_on_violation: bool = fail_on_violation_option(),
    force: bool = typer.Option(False, "--force", help="Replace the report already in --out."),
    progress: bool = typer.Option(True, "--progress/--no-progress",
                                  help="Progress on stderr: a bar on a terminal, plain lines otherwise."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no file list on stderr."),
) -> None:
    """Audit third-party code: the full battery, a verdict table on top, findings instead of crashes."""
    with user_errors():
        from dpaudit.audit.config import PARTS, AuditConfig, parse_attacks
        from dpaudit.audit.output import verdict_table
        from dpaudit.console import echo
        from dpaudit.audit.run import run_audit
        from execution import SchedulerError
        from dpaudit.data import datasets
        from dpaudit.data.inputs import load_data, parse_bounds, parse_params
        from dpaudit.data.labels import supervision_for
        from dpaudit.data.limits import check_estimation_size
        from dpaudit.report import provenance
        from execution.untrusted import quoted

        attacks = parse_attacks(attack)
        parts = PARTS if attacks else tuple(p for p in PARTS if p != "attacks")
        if records is None and data is None and datasets.is_generated(dataset or "blobs-2d"):
            records = GENERATED_RECORDS
        ds = load_data(dataset, data, label_column=label_column, records=records, seed=seed, rescale=rescale)
        if "epsilon" in parts:
            check_estimation_size(ds.n_records, ds.n_features, "the audit's ε estimation")
        params = parse_params(param, ds)
        box = parse_bounds(bounds, ds.n_features)
        cfg = AuditConfig(mechanism=mechanism, epsilon=eps, output=output, neighbours=neighbours, delta=delta,
                          params=params, samples=samples, time_budget=time_budget, releases=releases,
                          bounds=box, scheduler=scheduler, n_jobs=n_jobs, own_randomness=own_randomness,
                          supervision=supervision_for(ds, bounds=box, **supervision_fields(classes, label_range,
                                                                                          label_anchors)),
                          attacks=attacks, attack_repeats=attack_repeats, seed=seed,
                          **isolation_options(timeout, python, memory_limit),
                          parts=parts, dataset={"dataset": None if data else (dataset or "blobs-2d"),
                                                "data": data.name if data else None, "records": records,
                                                "rescale": rescale})
        out_dir = out or default_out_dir("audit", mechanism, f"{eps:g}")
        check_not_input(out_dir, input_files(data=data, mechanism=mechanism, python=python), directory=True,
                        option="--out")  # before --force deletes anything
        check_report_dir(out_dir, force=force)
        prov = provenance(seed=seed, parameters=cfg.to_dict())
        try:
            results = run_audit(cfg, ds, out_dir, progress=progress_mode(progress, quiet), provenance=prov)
        except (KeyboardInterrupt, SchedulerError):
            info(f"partial report in {out_dir}")
            raise
        echo(*verdict_table(results))
        report_findings(results["findings"])
        for w in results["warnings"]:
            info(f"{w['category']}: {quoted(w['message'])}")
        if not quiet:
            info(files_written(out_dir, {p.name: p for p in sorted(out_dir.iterdir()) if p.is_file()}))
    finish(results, fail_on_violation=fail_on_violation)


EXAMPLES = (
    "dpaudit audit --mechanism examples/their_code.py:their_kmeans --eps 1 --output centroids   (third-party "
    "code: ε estimation, attacks, utility; it runs in a worker process)",
    "dpaudit audit -m their_code.py:fn --eps 1 --python their-venv/bin/python --timeout 30 --fail-on-violation   "
    "(in its own environment; exit 1 on a violation, for CI)",
    "dpaudit audit -m ndlaplace-thesis --eps 1 --attack none --releases 20000   (ε estimation and utility only, "
    "a fixed plan: the same numbers on any machine)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        audit,
        audited=("mechanism", "eps", "output", "neighbours", "delta", "dataset", "data", "label_column", "records",
                 "rescale", "param", "bounds", "attack", "classes", "label_range",
                 "label_anchors"),
        budget=("samples", "time_budget", "releases", "attack_repeats"),
        execution=("seed", "python", "timeout", "memory_limit", "scheduler", "n_jobs", "own_randomness"),
        output=("out", "force", "fail_on_violation", "progress", "quiet"))
    app.command("audit", epilog=epilog(*EXAMPLES))(command)
