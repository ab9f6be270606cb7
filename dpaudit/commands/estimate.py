"""``dpaudit estimate-eps``: a certified lower bound on a mechanism's ε and a verdict against its claim.

Default data: 30 records of the thesis blobs (``blobs-2d``, 4 centres, std 0.6)
— small, so that clustering mechanisms run thousands of times in seconds;
``--dataset``/``--data`` and ``--records`` change it.  The workflow is :mod:`dpaudit.estimate`.
Like every command it writes a report folder (``--out``, default ``reports/<time>-estimate-eps-…``)
and ends in the ``Conclusion:`` line and exit status of :mod:`dpaudit.ending`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import List, Optional, Tuple

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
    scheduler_option,
    supervision_fields,
    time_budget_option,
    timeout_option,
    user_errors,
)

_LABELS = label_options()

DEFAULT_DATASET = "blobs-2d"  # the data when neither --dataset nor --data is given
DEFAULT_RECORDS = 30


def estimate_eps(
    mechanism: str = typer.Option(..., "--mechanism", "-m", help="Registered name, module:attr or file.py:attr."),
    eps: Optional[float] = typer.Option(None, "--eps", help="The ε the mechanism is run at and claims (optional "
                                                           "for a plug-in class that states its own claim)."),
    delta: Optional[float] = typer.Option(None, "--delta", help="The claim's δ (default: the mechanism's, 0 for plug-ins)."),
    neighbours: Optional[str] = typer.Option(None, "--neighbours", help="add-remove|replace|metric (default: the mechanism's claim; add-remove for plug-ins)."),
    distance: float = typer.Option(1.0, "--distance", help="Metric claims: how far the changed record moves; the bound is reported per unit distance."),
    output: str = typer.Option("points", "--output", help="Plug-in functions: points|centroids|labels|vector; "
                                                       "supervised estimator classes (fit(X, y)): parameters "
                                                       "(coef_, intercept_) or predictions (on a public grid)."),
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help=f"Built-in dataset (default {DEFAULT_DATASET} with {DEFAULT_RECORDS} records)."),
    data: Optional[Path] = typer.Option(None, "--data", help="A numeric CSV instead of --dataset."),
    pair: Optional[Tuple[Path, Path]] = typer.Option(
        None, "--pair", help="Two numeric CSVs D D′ that are neighbours under the claim's relation: certify on "
                             "this one pair (instead of --data/--dataset and the estimator's pair search)."),
    release: str = typer.Option("output", "--release",
                                help="What is audited: output (the final release) or transcript (every noisy "
                                     "statistic the mechanism drew; dpkccm, dpdbscan, dpfcm, dpfcm-corrected)."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="CSV column holding the labels "
                                               "(dropped from the records; a supervised plug-in gets it as y)."),
    classes: Optional[str] = _LABELS["classes"],
    label_range: Optional[str] = _LABELS["label_range"],
    label_anchors: bool = _LABELS["label_anchors"],
    own_randomness: bool = own_randomness_option(),
    records: Optional[int] = typer.Option(None, "--records", "-n", help="Records used (a seeded subset / generated)."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p", help="Mechanism parameter KEY=VALUE (JSON values; bounds=dataset for the data's public box)."),
    samples: Optional[int] = typer.Option(None, "--samples", help="Certification releases per dataset (D and D′ each), certified in one look at the full α (default: what the time budget leaves after selection, in looks)."),
    time_budget: float = time_budget_option(),
    releases: Optional[int] = releases_option(),
    bounds: Optional[str] = bounds_option(),
    selection_samples: Optional[int] = typer.Option(None, "--selection-samples", help="First-round selection releases per dataset per candidate pair (default: the selection budget spread over the search)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence of the certified bound."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of every random choice."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Local worker processes (-1: all cores)."),
    scheduler: Optional[str] = scheduler_option(),
    max_pairs: Optional[int] = typer.Option(None, "--max-pairs", help="Try at most this many candidate pairs."),
    classifier: str = typer.Option("logistic", "--classifier", help="Event-selection model: logistic, mlp or none (direct statistics only)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Report directory (default "
                                       "reports/<time>-estimate-eps-<mech>-eps<E>)."),
    force: bool = typer.Option(False, "--force", help="Replace the report already in --out."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Also write results.json here."),
    fail_on_violation: bool = fail_on_violation_option(),
    timeout: float = timeout_option(),
    python: Optional[str] = python_option(),
    memory_limit: Optional[str] = memory_limit_option(),
    progress: bool = typer.Option(True, "--progress/--no-progress",
                                  help="Progress on stderr: a bar on a terminal, plain lines otherwise."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no notes on stderr."),
) -> None:
    """Certified empirical lower bound on ε (DP-Sniper-style events, Clopper–Pearson), verdict vs the claim."""
    with user_errors():
        from dpaudit.data.inputs import load_data, parse_bounds, parse_params
        from dpaudit.data.limits import check_estimation_size
        from dpaudit.estimate.config import EstimateConfig
        from dpaudit.console import echo, key_value
        from dpaudit.estimate.output import summary_rows
        from dpaudit.estimate.run import interrupted_result, run_estimate
        from dpaudit.report import provenance, render_report, stamp_finished, write_json

        config = EstimateConfig(mechanism=mechanism, epsilon=eps, delta=delta, neighbours=neighbours,
                                distance=distance, output=output, samples=samples,
                                selection_samples=selection_samples, time_budget=time_budget, releases=releases,
                                confidence=confidence, seed=seed, n_jobs=n_jobs, scheduler=scheduler,
                                max_pairs=max_pairs, classifier=classifier, release=release,
                                own_randomness=own_randomness,
                                **supervision_fields(classes, label_range, label_anchors),
                                **isolation_options(timeout, python, memory_limit))
        out_dir = out if out is not None else default_out_dir("estimate-eps", mechanism,
                                                              "claim" if eps is None else f"{eps:g}")
        reads = input_files(data=data, mechanism=mechanism, python=python) + [
            p for f in pair or () for p in input_files(data=f)]
        check_not_input(out_dir, reads, directory=True, option="--out")  # before --force deletes anything
        check_not_input(json_path, reads, directory=False, option="--json")
        check_report_dir(out_dir, force=force)
        check_writable(json_path, directory=False, option="--json")
        pair_data = None
        if pair:
            pair_data = _load_pair(pair, dataset=dataset, data=data, records=records, label_column=label_column)
            ds = pair_data[0]
        else:
            default_data = dataset is None and data is None
            ds = load_data(dataset or (DEFAULT_DATASET if default_data else None), data, label_column=label_column,
                           records=records if records is not None else (DEFAULT_RECORDS if default_data else None),
                           seed=seed)
            check_estimation_size(ds.n_records, ds.n_features)
        config = dataclasses.replace(config, params=parse_params(param, ds),
                                     bounds=parse_bounds(bounds, ds.n_features))
        prov = provenance(seed=seed, parameters=dataclasses.asdict(config))

        def save(results: dict, formats: tuple = ("json", "md", "html", "csv")) -> dict:
            results["provenance"] = prov
            stamp_finished(prov)
            written = render_report(results, out_dir, formats)
            if json_path is not None:
                write_json(results, json_path)
            return written

        try:
            results = run_estimate(config, ds, pair_data=pair_data, progress=progress_mode(progress, quiet),
                                   notify=(lambda message: None) if quiet else info)
        except KeyboardInterrupt:
            save(interrupted_result(config, ds), ("json",))
            info(f"interrupted: status 'interrupted' written to {out_dir / 'results.json'}")
            raise
        written = save(results)  # first: whatever follows, the result is on disk
        echo(key_value(summary_rows(results)))
        report_findings(results.get("findings", []))
        if not quiet:
            info(files_written(out_dir, written, (json_path,)))
    finish(results, fail_on_violation=fail_on_violation)


def _load_pair(files: Tuple[Path, Path], *, dataset: Optional[str], data: Optional[Path],
               records: Optional[int], label_column: Optional[str]) -> tuple:
    """The two datasets of ``--pair``, each loaded and checked like ``--data`` (whether they are
    neighbours depends on the claim, and is checked once the mechanism is known)."""
    from dpaudit.data.inputs import load_data
    from dpaudit.data.limits import check_estimation_size
    from mechanisms.base import InvalidInputError

    if dataset is not None or data is not None:
        raise InvalidInputError("--pair gives both datasets itself; drop --data/--dataset")
    if records is not None:
        raise InvalidInputError("--records picks a subset, which would break the pair; drop it with --pair")
    loaded = tuple(load_data(None, path, label_column=label_column) for path in files)
    for ds in loaded:
        check_estimation_size(ds.n_records, ds.n_features)
    return loaded


EXAMPLES = (
    "dpaudit estimate-eps --mechanism ndlaplace-thesis --eps 1 --samples 20000   (a published flaw: VIOLATION)",
    "dpaudit estimate-eps -m their_code.py:fn --eps 1 --output centroids --bounds -1,1   (a plug-in function "
    "that releases cluster centres, clipping to [-1, 1])",
    "dpaudit estimate-eps -m dpkccm --eps 1 --release transcript --samples 500 --max-pairs 2   (every noisy "
    "statistic the mechanism drew, on its worst-case constructions)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        estimate_eps,
        audited=("mechanism", "eps", "delta", "neighbours", "distance", "output", "dataset", "data", "pair", "release",
                 "label_column", "records", "param", "bounds", "classes", "label_range",
                 "label_anchors"),
        budget=("samples", "time_budget", "releases", "selection_samples", "confidence", "max_pairs", "classifier"),
        execution=("seed", "n_jobs", "scheduler", "timeout", "python", "memory_limit", "own_randomness"),
        output=("out", "force", "json_path", "fail_on_violation", "progress", "quiet"))
    app.command("estimate-eps", epilog=epilog(*EXAMPLES))(command)
