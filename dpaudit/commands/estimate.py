"""``dpaudit estimate-eps``: a certified lower bound on a mechanism's ε and a verdict against its claim.

Default data: 30 records of the thesis blobs (``blobs-2d``, 4 centres, std 0.6)
— small, so that clustering mechanisms run thousands of times in seconds;
``--dataset``/``--data`` and ``--records`` change it.  The workflow is :mod:`dpaudit.estimate`.
Like every command it writes a report folder (``--out``, default ``reports/<time>-estimate-eps-…``)
and ends in the ``Conclusion:`` line and exit status of :mod:`dpaudit.verdicts`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, List, Optional, Tuple

import typer

from dpaudit.commands.options import (
    DEFAULT_TIME_BUDGET,
    DEFAULT_TIMEOUT,
    NOTION_OPTIONS,
    Bounds,
    Classes,
    DataFile,
    FailOnViolation,
    Force,
    JsonPath,
    LabelAnchors,
    LabelRange,
    Mechanism,
    MemoryLimit,
    MinRecords,
    OwnRandomness,
    Progress,
    Python,
    Releases,
    Scheduler,
    Seed,
    TimeBudget,
    Timeout,
    dataset_option,
    delta_option,
    eps_option,
    label_column_option,
    n_jobs_option,
    neighbours_option,
    out_option,
    output_option,
    panels,
    param_option,
    quiet_option,
    records_option,
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
    from dpaudit.data.datasets import Dataset
    from dpaudit.estimate.config import EstimateConfig
    from dpaudit.run_shapes import RunResults

DEFAULT_DATASET = "blobs-2d"  # the data when neither --dataset nor --data is given
DEFAULT_RECORDS = 30
MAX_PAIRS_HELP = "Try at most this many candidate pairs."
CLASSIFIER_HELP = "Event-selection model: logistic, mlp or none (direct statistics only)."


OUT_HELP = "Report directory (default reports/<time>-estimate-eps-<mech>-eps<E>)."




def estimate_eps(
    mechanism: Mechanism,
    eps: Annotated[Optional[float], eps_option("The ε the mechanism is run at and claims (optional for a plug-in "
                                               "class that states its own claim).")] = None,
    delta: Annotated[Optional[float], delta_option("The claim's δ (default: the mechanism's, 0 for "
                                                   "plug-ins).")] = None,
    neighbours: Annotated[Optional[str], neighbours_option("add-remove|replace|metric (default: the mechanism's "
                                                           "claim; add-remove for plug-ins).")] = None,
    notions: Optional[dict[str, Any]] = None,  # --rho, --mu, … (with_notion_options)
    distance: Annotated[float, typer.Option("--distance", help="Metric claims: how far the changed record moves; "
                                            "the bound is reported per unit distance.")] = 1.0,
    output: Annotated[Optional[str], output_option(
        "Plug-in functions: points|centroids|labels|vector (not stated: points, and a first release of another "
        "shape is refused); supervised estimator classes (fit(X, y)): parameters (coef_, intercept_) or "
        "predictions (on a public grid).")] = None,
    dataset: Annotated[Optional[str], dataset_option(f"Built-in dataset (default {DEFAULT_DATASET} with "
                                                     f"{DEFAULT_RECORDS} records).")] = None,
    data: DataFile = None,
    pair: Annotated[Optional[Tuple[Path, Path]], typer.Option(
        "--pair", metavar="D.csv D2.csv", help="Two numeric CSVs D and D′ that are neighbours under the claim's "
        "relation (--pair D.csv D2.csv, or --pair D.csv,D2.csv): certify on this one pair (instead of "
        "--data/--dataset and the estimator's pair search).")] = None,
    access: Annotated[str, typer.Option(
        "--access", help="What the auditor sees: output (the final release) or transcript (every noisy statistic the "
        "mechanism drew; dpkccm, dpdbscan, dpfcm, dpfcm-corrected).")] = "output",
    label_column: Annotated[Optional[str], label_column_option("CSV column holding the labels (dropped from the "
                                                               "records; a supervised plug-in gets it as y).")] = None,
    classes: Classes = None,
    label_range: LabelRange = None,
    label_anchors: LabelAnchors = True,
    own_randomness: OwnRandomness = False,
    records: Annotated[Optional[int], records_option("Records used (a seeded subset / generated).")] = None,
    param: Annotated[Optional[List[str]], param_option("Mechanism parameter KEY=VALUE (JSON values; bounds=dataset "
                                                       "for the data's public box).")] = None,
    samples: Annotated[Optional[int], samples_option(
        "Certification releases per dataset (D and D′ each), certified in one look at the full α (default: what "
        "the time budget leaves after selection, in looks).")] = None,
    time_budget: TimeBudget = DEFAULT_TIME_BUDGET,
    releases: Releases = None,
    bounds: Bounds = None,
    selection_samples: Annotated[Optional[int], typer.Option(
        "--selection-samples", help="First-round selection releases per dataset per candidate pair (default: the "
        "selection budget spread over the search).")] = None,
    confidence: Annotated[float, typer.Option("--confidence", help="Confidence of the certified bound.")] = 0.95,
    seed: Seed = 0,
    n_jobs: Annotated[int, n_jobs_option("Local worker processes (-1: all cores).")] = 1,
    scheduler: Scheduler = None,
    max_pairs: Annotated[Optional[int], typer.Option("--max-pairs", help=MAX_PAIRS_HELP)] = None,
    min_records: MinRecords = None,
    classifier: Annotated[str, typer.Option("--classifier", help=CLASSIFIER_HELP)] = "logistic",
    out: Annotated[Optional[Path], out_option(OUT_HELP)] = None,
    force: Force = False,
    json_path: JsonPath = None,
    fail_on_violation: FailOnViolation = False,
    timeout: Timeout = DEFAULT_TIMEOUT,
    python: Python = None,
    memory_limit: MemoryLimit = None,
    progress: Progress = True,
    quiet: Annotated[bool, quiet_option("No progress and no notes on stderr.")] = False,
) -> None:
    """Certified empirical lower bound on ε (DP-Sniper-style events, Clopper–Pearson), verdict vs the claim."""
    with user_errors():
        config = _estimate_config(
            mechanism=mechanism, output=output, own_randomness=own_randomness, classes=classes, label_range=label_range,
            label_anchors=label_anchors, eps=eps, delta=delta, neighbours=neighbours, notions=notions, dataset=dataset,
            data=data, pair=pair, label_column=label_column, records=records, samples=samples, time_budget=time_budget,
            releases=releases, selection_samples=selection_samples, confidence=confidence, distance=distance,
            max_pairs=max_pairs, min_records=min_records, classifier=classifier, timeout=timeout, python=python,
            memory_limit=memory_limit, n_jobs=n_jobs, scheduler=scheduler, seed=seed, access=access)
        out_dir = out or default_out_dir("estimate-eps", mechanism, "claim" if eps is None else f"{eps:g}")
        check_outputs(out_dir, json_path, input_files(data=data, mechanism=mechanism, python=python) + [
            p for f in pair or () for p in input_files(data=f)], force=force)
        ds, pair_data = _estimate_data(pair, dataset=dataset, data=data, records=records, label_column=label_column,
                                       seed=seed)
        results = _estimate(config, ds, pair_data, param=param, bounds=bounds, out_dir=out_dir,
                            json_path=json_path, progress=progress_mode(progress, quiet), quiet=quiet)
    finish(results, fail_on_violation=fail_on_violation)


def _estimate_config(*, mechanism: str, output: Optional[str], own_randomness: bool, classes: Any, label_range: Any,
                     label_anchors: bool, eps: Optional[float], delta: Optional[float], neighbours: Optional[str],
                     notions: Optional[dict[str, Any]], dataset: Optional[str], data: Optional[Path],
                     pair: Optional[Tuple[Path, Path]], label_column: Optional[str], records: Optional[int],
                     samples: Optional[int], time_budget: Optional[float], releases: Optional[int],
                     selection_samples: Optional[int], confidence: float, distance: float, max_pairs: Optional[int],
                     min_records: Optional[int], classifier: str, timeout: float, python: Optional[str],
                     memory_limit: Any, n_jobs: int, scheduler: Optional[str], seed: int, access: str
                     ) -> EstimateConfig:
    """The command's flat options as an :class:`~dpaudit.estimate.config.EstimateConfig`, each group built by
    its builder (:mod:`dpaudit.commands.build`); ``--pair``: its first dataset is the data."""
    from dpaudit.commands import build
    from dpaudit.estimate.config import EstimateConfig

    return EstimateConfig(
        target=build.target_options(mechanism, output=output, own_randomness=own_randomness, classes=classes,
                                    label_range=label_range, label_anchors=label_anchors),
        claim=build.claim_options(eps, delta=delta, neighbours=neighbours, notions=notions),
        data=build.data_options(None if pair else dataset, pair[0] if pair else data, label_column=label_column,
                                records=None if pair else records),
        budget=build.budget(samples=samples, time_budget=time_budget, releases=releases,
                            selection_samples=selection_samples, confidence=confidence),
        search=build.search(distance=distance, max_pairs=max_pairs, min_records=min_records, classifier=classifier),
        isolation=build.isolation(timeout=timeout, python=python, memory_limit=memory_limit),
        run=build.run_settings(n_jobs=n_jobs, scheduler=scheduler), seed=seed, access=access)


def _estimate_data(pair: Optional[Tuple[Path, Path]], *, dataset: Optional[str], data: Optional[Path],
                   records: Optional[int], label_column: Optional[str], seed: int
                   ) -> tuple[Dataset, Optional[tuple[Dataset, Dataset]]]:
    """The data the estimate runs on, and the ``--pair`` (None without one): its first dataset is the data."""
    from dpaudit.data.inputs import load_data
    from dpaudit.data.limits import check_estimation_size

    if pair:
        pair_data = _load_pair(pair, dataset=dataset, data=data, records=records, label_column=label_column)
        return pair_data[0], pair_data
    default_data = dataset is None and data is None
    ds = load_data(dataset or (DEFAULT_DATASET if default_data else None), data, label_column=label_column,
                   records=records if records is not None else (DEFAULT_RECORDS if default_data else None),
                   seed=seed)
    check_estimation_size(ds.n_records, ds.n_features)
    return ds, None


def _estimate(config: EstimateConfig, ds: Dataset, pair_data: Optional[tuple[Dataset, Dataset]], *,
              param: Optional[List[str]], bounds: Optional[str], out_dir: Path, json_path: Optional[Path],
              progress: str, quiet: bool) -> RunResults:
    """Run the estimate on ``ds`` (its ``--param`` and ``--bounds`` read against it), write the report
    (status ``interrupted`` on Ctrl-C), print the summary and the diagnostics; the results."""
    from dpaudit.console import echo, key_value
    from dpaudit.data.inputs import parse_bounds, parse_params
    from dpaudit.estimate.output import summary_rows
    from dpaudit.estimate.run import interrupted_result, run_estimate
    from dpaudit.report import provenance, render_report, stamp_finished, write_json

    config = dataclasses.replace(config, target=dataclasses.replace(config.target, params=parse_params(param, ds)),
                                 data=dataclasses.replace(config.data, bounds=parse_bounds(bounds, ds.n_features)))
    prov = provenance(seed=config.seed, parameters=config.to_dict())

    def save(results: RunResults, formats: tuple[str, ...] = ("json", "md", "html", "csv")) -> dict[str, Path]:
        results["provenance"] = prov
        stamp_finished(prov)
        written = render_report(results, out_dir, formats)
        if json_path is not None:
            write_json(results, json_path)
        return written

    try:
        results = run_estimate(config, ds, pair_data=pair_data, progress=progress,
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
    return results


def _load_pair(files: Tuple[Path, Path], *, dataset: Optional[str], data: Optional[Path],
               records: Optional[int], label_column: Optional[str]) -> tuple[Dataset, Dataset]:
    """The two datasets of ``--pair``, each loaded and checked like ``--data`` (whether they are
    neighbours depends on the claim, and is checked once the mechanism is known)."""
    from dpaudit.data.inputs import load_data
    from dpaudit.data.limits import check_estimation_size
    from dpaudit.mechanisms.base import InvalidInputError

    if dataset is not None or data is not None:
        raise InvalidInputError("--pair gives both datasets itself; drop --data/--dataset")
    if records is not None:
        raise InvalidInputError("--records picks a subset, which would break the pair; drop it with --pair")
    first, second = (load_data(None, path, label_column=label_column) for path in files)
    for ds in (first, second):
        check_estimation_size(ds.n_records, ds.n_features)
    return first, second


EXAMPLES = (
    "dpaudit estimate-eps --mechanism ndlaplace-thesis --eps 1 --samples 20000   (a published flaw: VIOLATION)",
    "dpaudit estimate-eps -m examples/their_code.py:their_kmeans_honest --eps 1 --output centroids --bounds=-15,15"
    "   (a plug-in function that releases cluster centres, clipping to its public box [-15, 15])",
    "dpaudit estimate-eps -m dpkccm --eps 1 --access transcript --samples 500 --max-pairs 2   (every noisy "
    "statistic the mechanism drew, on its worst-case constructions)",
    "dpaudit estimate-eps -m laplace --eps 1 --mu 0.5 --releases 4000   (a claim in μ-GDP, as --rho, --rdp and "
    "--profile state one in other notions: its whole trade-off curve is tested, and the report draws it)",
)


def register(app: typer.Typer) -> None:
    command = panels(
        with_notion_options(estimate_eps),
        audited=("mechanism", "eps", "delta", "neighbours", *NOTION_OPTIONS, "distance", "output", "dataset", "data", "pair", "access",
                 "label_column", "records", "param", "bounds", "classes", "label_range",
                 "label_anchors"),
        budget=("samples", "time_budget", "releases", "selection_samples", "confidence", "max_pairs", "min_records",
                "classifier"),
        execution=("seed", "n_jobs", "scheduler", "timeout", "python", "memory_limit", "own_randomness"),
        output=("out", "force", "json_path", "fail_on_violation", "progress", "quiet"))
    app.command("estimate-eps", epilog=epilog(*EXAMPLES))(command)
