"""``dpaudit attack``: attack one mechanism at one ε, print a table, write a report."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import List, Optional

import typer

from dpaudit.commands.support import (
    bounds_option,
    check_not_input,
    check_report_dir,
    check_writable,
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
    supervision_fields,
    time_budget_option,
    timeout_option,
    user_errors,
)

_LABELS = label_options()


def attack(
    mechanism: str = typer.Option(..., "--mechanism", "-m",
                                  help="Registered name, package.module:attr or path/to/file.py:attr."),
    eps: float = typer.Option(..., "--eps", help="The ε the mechanism is run at (and claims)."),
    attack_names: str = typer.Option("all", "--attack",
                                     help="Comma-separated: shokri, yeom, label-only, reconstruction, lira, rmia, "
                                          "tracing, or all."),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="Built-in dataset (default blobs-2d)."),
    data: Optional[Path] = typer.Option(None, "--data", help="A numeric CSV file instead of --dataset."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="CSV column holding labels."),
    records: Optional[int] = typer.Option(None, "--records", help="Number of records (thesis: 2000)."),
    repeats: int = typer.Option(3, "--repeats", help="Independent splits and releases."),
    candidates: Optional[int] = typer.Option(
        None, "--candidates", help="Records per repeat whose membership is a fair coin (default: a quarter of the "
        "records); more candidates resolve TPR at lower FPR (≥ 1,000 non-members for 0.1 %)."),
    reference_runs: int = typer.Option(16, "--reference-runs",
                                       help="LiRA/RMIA: mechanism runs per repeat with and without each candidate."),
    jobs: int = typer.Option(1, "--jobs", help="Local processes for the reference runs (-1: every core); the "
                                               "numbers do not depend on it."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of every random choice."),
    out: Optional[Path] = typer.Option(None, "--out", help="Report directory (default reports/<time>-attack-<mech>-eps<E>)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Also write results.json here."),
    output: Optional[str] = typer.Option(None, "--output", help="Plug-in functions: points|centroids|labels|vector; "
                                         "supervised estimator classes: parameters|predictions."),
    neighbours: Optional[str] = typer.Option(None, "--neighbours", help="Plug-in claim: add-remove|replace|metric."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p",
                                              help="Mechanism parameter KEY=VALUE (repeatable), e.g. alpha=0.5."),
    timeout: float = timeout_option(),
    python: Optional[str] = python_option(),
    memory_limit: Optional[str] = memory_limit_option(),
    fail_on_violation: bool = fail_on_violation_option(),
    epsilon_estimate: str = typer.Option(
        "on", "--epsilon-estimate", help="Certify an ε lower bound for the claim's own neighbour relation, as "
        "estimate-eps does (on 30 of the records): on (auto is the same), or off — the claim is then not tested."),
    estimate_samples: Optional[int] = typer.Option(None, "--samples", "--estimate-samples",
                                                   help="ε estimate: certification releases per dataset, in one "
                                                        "look (default: the time budget decides)."),
    time_budget: float = time_budget_option(),
    releases: Optional[int] = releases_option(),
    bounds: Optional[str] = bounds_option(),
    classes: Optional[str] = _LABELS["classes"],
    label_range: Optional[str] = _LABELS["label_range"],
    label_anchors: bool = _LABELS["label_anchors"],
    own_randomness: bool = own_randomness_option(),
    force: bool = typer.Option(False, "--force", help="Replace the report already in --out."),
    progress: bool = typer.Option(True, "--progress/--no-progress",
                                  help="Progress on stderr: a bar on a terminal, plain lines otherwise."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no file list on stderr."),
) -> None:
    """Attack a mechanism: membership inference (Shokri, Yeom, label-only, LiRA, RMIA, tracing) and reconstruction."""
    with user_errors():
        if data is not None and dataset is not None:
            raise typer.BadParameter("give either --dataset or --data, not both")
        from dpaudit.attack.config import AttackConfig
        from dpaudit.attack.output import console_parts
        from dpaudit.console import echo
        from dpaudit.attack.run import run_attack
        from dpaudit.data.inputs import load_data, parse_params
        from dpaudit.report import render_report, write_json
        from execution.untrusted import quoted

        public = None  # bounds=dataset stands for the data's public box: load the data to read it (run_attack reuses it)
        if any(p.replace(" ", "").replace("-", "_").startswith("bounds=") for p in param or []):
            public = load_data(None if data is not None else (dataset or "blobs-2d"), data,
                               label_column=label_column, records=records, seed=seed)
        config = AttackConfig(
            mechanism=mechanism, epsilon=eps, attacks=AttackConfig.parse_attacks(attack_names),
            dataset=None if data is not None else (dataset or "blobs-2d"),
            data=None if data is None else str(data), label_column=label_column, records=records,
            repeats=repeats, seed=seed, output=output, neighbours=neighbours, candidates=candidates,
            reference_runs=reference_runs, jobs=jobs,
            params=parse_params(param, public), epsilon_estimate=epsilon_estimate,
            estimate_samples=estimate_samples, estimate_time_budget=time_budget, estimate_releases=releases,
            estimate_bounds=_bounds(bounds, public, data, dataset, label_column, records, seed),
            own_randomness=own_randomness, **supervision_fields(classes, label_range, label_anchors),
            **isolation_options(timeout, python, memory_limit))
        out_dir = out if out is not None else default_out_dir("attack", mechanism, f"{config.epsilon:g}")
        reads = input_files(data=data, mechanism=mechanism, python=python)
        check_not_input(out_dir, reads, directory=True, option="--out")  # before --force deletes anything
        check_not_input(json_path, reads, directory=False, option="--json")
        check_report_dir(out_dir, force=force)
        check_writable(json_path, directory=False, option="--json")
        command = "dpaudit " + " ".join(shlex.quote(a) for a in sys.argv[1:])

        def save(results: dict) -> None:  # after every repeat: Ctrl-C leaves a valid partial results.json
            write_json(results, out_dir / "results.json")
            if json_path is not None:
                write_json(results, json_path)

        try:
            results = run_attack(config, command=command, on_update=save, dataset=public,
                                 progress=progress_mode(progress, quiet))
        except KeyboardInterrupt:
            if (out_dir / "results.json").is_file():
                info(f"partial results (finished repeats) in {out_dir / 'results.json'}")
            raise
        written = render_report(results, out_dir, ("md", "html", "csv"))  # results.json: written by save()
        echo(*console_parts(results))
        report_findings(results["findings"])
        for w in results["warnings"]:
            info(f"PrivacyLeakWarning: {quoted(w['message'])}")
        if not quiet:
            info(files_written(out_dir, {"json": out_dir / "results.json", **written}, (json_path,)))
        if not results["measured"]:
            info("no attack finished a single repeat: nothing was measured")
    finish(results, fail_on_violation=fail_on_violation)


def _bounds(text: Optional[str], public: object, data: Optional[Path], dataset: Optional[str],
            label_column: Optional[str], records: Optional[int], seed: int) -> object:
    """``--bounds`` checked against the data's number of columns (the data is loaded only when needed)."""
    if text is None:
        return None
    from dpaudit.data.inputs import load_data, parse_bounds

    ds = public if public is not None else load_data(None if data is not None else (dataset or "blobs-2d"), data,
                                                     label_column=label_column, records=records, seed=seed)
    return parse_bounds(text, ds.n_features)  # type: ignore[attr-defined]


EXAMPLES = (
    "dpaudit attack --mechanism ndlaplace --eps 1   (the main job: every attack and the certified ε estimate)",
    "dpaudit attack -m their_code.py:fn --eps 1 --output centroids --attack lira,rmia   (a plug-in function that "
    "releases cluster centres; the per-record attacks)",
    "dpaudit attack -m ndlaplace --eps 1 --candidates 1200 --records 2000   (more candidates: TPR at 0.1 % FPR)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        attack,
        audited=("mechanism", "eps", "attack_names", "dataset", "data", "label_column", "records", "output",
                 "neighbours", "param", "bounds", "classes", "label_range",
                 "label_anchors"),
        budget=("repeats", "candidates", "reference_runs", "epsilon_estimate", "estimate_samples", "time_budget",
                "releases"),
        execution=("seed", "jobs", "timeout", "python", "memory_limit", "own_randomness"),
        output=("out", "json_path", "force", "fail_on_violation", "progress", "quiet"))
    app.command("attack", epilog=epilog(*EXAMPLES))(command)
