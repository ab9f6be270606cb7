"""``dpaudit attack``: attack one mechanism at one ε, print a table, write a report."""

from __future__ import annotations

import shlex
import sys
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
    FailOnViolation,
    Force,
    JsonPath,
    LabelAnchors,
    LabelRange,
    MemoryLimit,
    Neighbours,
    OwnRandomness,
    Progress,
    Python,
    Quiet,
    Releases,
    Seed,
    TimeBudget,
    Timeout,
    attack_option,
    data_option,
    dataset_option,
    eps_option,
    label_column_option,
    mechanism_option,
    n_jobs_option,
    out_option,
    output_option,
    panels,
    param_option,
    records_option,
    repeats_option,
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
    from dpaudit.attack.config import AttackConfig
    from dpaudit.data.datasets import Dataset
    from dpaudit.run_shapes import RunResults

DEFAULT_DATASET = "blobs-2d"  # the data when neither --dataset nor --data is given




def attack(
    mechanism: Annotated[str, mechanism_option("Registered name, package.module:attr, path/to/file.py:attr, or "
                                               "\"cmd:COMMAND\": a program in any language that speaks dpaudit's "
                                               "protocol (docs/executables.md).")],
    eps: Annotated[float, eps_option("The ε the mechanism is run at (and claims).")],
    attack_names: Annotated[str, attack_option(f"Comma-separated: {', '.join(ATTACKS)}, or all.")] = "all",
    dataset: Annotated[Optional[str], dataset_option()] = None,
    data: Annotated[Optional[Path], data_option("A numeric CSV file instead of --dataset.")] = None,
    label_column: Annotated[Optional[str], label_column_option("CSV column holding labels.")] = None,
    records: Annotated[Optional[int], records_option("Number of records (thesis: 2000).")] = None,
    repeats: Annotated[int, repeats_option("Independent splits and releases.", short=True)] = 3,
    candidates: Annotated[Optional[int], typer.Option(
        "--candidates", help="Records per repeat whose membership is a fair coin (default: a quarter of the "
        "records); more candidates resolve TPR at lower FPR (≥ 1,000 non-members for 0.1 %).")] = None,
    reference_runs: Annotated[int, typer.Option(
        "--reference-runs", help="LiRA/RMIA: mechanism runs per repeat with and without each candidate.")] = 16,
    n_jobs: Annotated[int, n_jobs_option("Local processes for the reference runs (-1: every core); the numbers do "
                                         "not depend on it.")] = 1,
    seed: Seed = 0,
    out: Annotated[Optional[Path], out_option("Report directory (default reports/<time>-attack-<mech>-eps<E>).")
                   ] = None,
    json_path: JsonPath = None,
    output: Annotated[Optional[str], output_option()] = None,
    neighbours: Neighbours = None,
    notions: Optional[dict[str, Any]] = None,  # --rho, --mu, … (with_notion_options)
    param: Annotated[Optional[List[str]], param_option("Mechanism parameter KEY=VALUE (repeatable), e.g. "
                                                       "alpha=0.5.")] = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    python: Python = None,
    memory_limit: MemoryLimit = None,
    fail_on_violation: FailOnViolation = False,
    epsilon_estimate: Annotated[str, typer.Option(
        "--epsilon-estimate", help="Certify an ε lower bound for the claim's own neighbour relation, as "
        "estimate-eps does (on 30 of the records): on (auto is the same), or off — the claim is then not "
        "tested.")] = "on",
    samples: Annotated[Optional[int], samples_option(
        "ε estimate: certification releases per dataset, in one look (default: the time budget decides).")] = None,
    time_budget: TimeBudget = DEFAULT_TIME_BUDGET,
    releases: Releases = None,
    bounds: Bounds = None,
    classes: Classes = None,
    label_range: LabelRange = None,
    label_anchors: LabelAnchors = True,
    own_randomness: OwnRandomness = False,
    force: Force = False,
    progress: Progress = True,
    quiet: Quiet = False,
) -> None:
    """Attack a mechanism: membership inference (Shokri, Yeom, label-only, LiRA, RMIA, tracing) and reconstruction."""
    with user_errors():
        if data is not None and dataset is not None:
            raise typer.BadParameter("give either --dataset or --data, not both")
        from dpaudit.attack.config import AttackConfig
        from dpaudit.commands import build
        from dpaudit.data.inputs import parse_params

        public = _public_data(param, dataset, data, label_column, records, seed)
        config = AttackConfig(
            target=build.target_options(mechanism, params=parse_params(param, public), output=output,
                                        own_randomness=own_randomness, classes=classes, label_range=label_range,
                                        label_anchors=label_anchors),
            claim=build.claim_options(eps, neighbours=neighbours, notions=notions),
            data=build.data_options(None if data is not None else (dataset or DEFAULT_DATASET), data,
                                    label_column=label_column, records=records,
                                    bounds=_bounds(bounds, public, data, dataset, label_column, records, seed)),
            attack=build.attack_options(build.attack_names(attack_names, every=ATTACKS, empty=ATTACKS),
                                        repeats=repeats, candidates=candidates, reference_runs=reference_runs),
            budget=build.budget(samples=samples, time_budget=time_budget, releases=releases),
            isolation=build.isolation(timeout=timeout, python=python, memory_limit=memory_limit),
            run=build.run_settings(n_jobs=n_jobs), seed=seed, epsilon_estimate=epsilon_estimate)
        results = _attack(config, public, out=out, json_path=json_path, force=force,
                          progress=progress_mode(progress, quiet), quiet=quiet)
    finish(results, fail_on_violation=fail_on_violation)


def _public_data(param: Optional[List[str]], dataset: Optional[str], data: Optional[Path],
                 label_column: Optional[str], records: Optional[int], seed: int) -> Optional[Dataset]:
    """The data, loaded before the run only when ``--param bounds=dataset`` stands for its public box
    (:func:`~dpaudit.attack.run.run_attack` reuses it); else None."""
    if not any(p.replace(" ", "").replace("-", "_").startswith("bounds=") for p in param or []):
        return None
    from dpaudit.data.inputs import load_data

    return load_data(None if data is not None else (dataset or DEFAULT_DATASET), data,
                     label_column=label_column, records=records, seed=seed)


def _attack(config: AttackConfig, public: Optional[Dataset], *, out: Optional[Path], json_path: Optional[Path],
            force: bool, progress: str, quiet: bool) -> RunResults:
    """Check where the run writes, run it (``results.json`` rewritten after every repeat), write the
    report and print the table and the diagnostics; the results."""
    from dpaudit.attack.output import console_parts
    from dpaudit.attack.run import run_attack
    from dpaudit.console import echo
    from dpaudit.execution.untrusted import quoted
    from dpaudit.report import render_report, write_json

    spec, data = config.target.mechanism, config.data.data
    out_dir = out if out is not None else default_out_dir("attack", spec, f"{config.epsilon:g}")
    check_outputs(out_dir, json_path, input_files(data=None if data is None else Path(data), mechanism=spec,
                                                  python=config.isolation.python), force=force)
    command = "dpaudit " + " ".join(shlex.quote(a) for a in sys.argv[1:])

    def save(results: RunResults) -> None:  # after every repeat: Ctrl-C leaves a valid partial results.json
        write_json(results, out_dir / "results.json")
        if json_path is not None:
            write_json(results, json_path)

    try:
        results = run_attack(config, command=command, on_update=save, dataset=public, progress=progress).to_dict()
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
    return results


def _bounds(text: Optional[str], public: Optional[Dataset], data: Optional[Path], dataset: Optional[str],
            label_column: Optional[str], records: Optional[int], seed: int
            ) -> Optional[tuple[list[float], list[float]]]:
    """``--bounds`` checked against the data's number of columns (the data is loaded only when needed)."""
    if text is None:
        return None
    from dpaudit.data.inputs import load_data, parse_bounds

    ds = public if public is not None else load_data(None if data is not None else (dataset or DEFAULT_DATASET),
                                                     data, label_column=label_column, records=records, seed=seed)
    return parse_bounds(text, ds.n_features)


EXAMPLES = (
    "dpaudit attack --mechanism ndlaplace --eps 1   (the main job: every attack and the certified ε estimate)",
    "dpaudit attack -m examples/their_code.py:their_kmeans --eps 1 --output centroids --attack lira,rmia -r 1   "
    "(a plug-in function that releases cluster centres; the per-record attacks, one repeat)",
    "dpaudit attack -m ndlaplace --eps 1 --attack yeom --candidates 1200 --records 2000 -r 1   (more candidates: "
    "TPR at 0.1 % FPR)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        with_notion_options(attack),
        audited=("mechanism", "eps", "attack_names", "dataset", "data", "label_column", "records", "output",
                 "neighbours", *NOTION_OPTIONS, "param", "bounds", "classes", "label_range",
                 "label_anchors"),
        budget=("repeats", "candidates", "reference_runs", "epsilon_estimate", "samples", "time_budget",
                "releases"),
        execution=("seed", "n_jobs", "timeout", "python", "memory_limit", "own_randomness"),
        output=("out", "json_path", "force", "fail_on_violation", "progress", "quiet"))
    app.command("attack", epilog=epilog(*EXAMPLES))(command)
