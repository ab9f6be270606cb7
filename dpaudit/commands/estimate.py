"""``dpaudit estimate-eps``: a certified lower bound on a mechanism's ε and a verdict against its claim.

Default data: 30 records of the thesis blobs (``blobs-2d``, 4 centres, std 0.6)
— small, so that clustering mechanisms run thousands of times in seconds;
``--dataset``/``--data`` and ``--records`` change it.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, List, Optional

import typer

import mechanisms
from dpaudit.cli_support import EXIT_VIOLATION, check_writable, info, user_errors
from dpaudit.inputs import load_data, parse_params
from mechanisms.base import NEIGHBOURS, InvalidInputError, PrivacyLeakWarning

DEFAULT_DATASET = "blobs-2d"
DEFAULT_RECORDS = 30
OUTPUTS = ("points", "centroids", "labels", "vector")
CLASSIFIERS = ("logistic", "mlp", "none")


def _classifier(name: str, seed: int) -> object:
    """The event-selection model (DP-Sniper uses logistic regression or a small MLP)."""
    if name != "mlp":
        return name
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32, 32), max_iter=300,
                                                         early_stopping=True, random_state=seed))


def _unit(claim: dict[str, Any]) -> str:
    return " per unit distance" if claim["neighbours"] == "metric" else ""


def _fmt_claim(claim: dict[str, Any]) -> str:
    return f"ε = {claim['epsilon']:g}{_unit(claim)} ({claim['neighbours']}, δ = {claim['delta']:g})"


def estimate_eps(
    mechanism: str = typer.Option(..., "--mechanism", "-m", help="Registered name, module:attr or file.py:attr."),
    eps: float = typer.Option(..., "--eps", help="The ε the mechanism is run at and claims."),
    delta: Optional[float] = typer.Option(None, "--delta", help="The claim's δ (default: the mechanism's, 0 for plug-ins)."),
    neighbours: Optional[str] = typer.Option(None, "--neighbours", help="add-remove|replace|metric (default: the mechanism's claim; add-remove for plug-ins)."),
    distance: float = typer.Option(1.0, "--distance", help="Metric claims: how far the changed record moves; the bound is reported per unit distance."),
    output: str = typer.Option("points", "--output", help="Plug-in functions: points|centroids|labels|vector."),
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help=f"Built-in dataset (default {DEFAULT_DATASET} with {DEFAULT_RECORDS} records)."),
    data: Optional[Path] = typer.Option(None, "--data", help="A numeric CSV instead of --dataset."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="CSV column to drop as labels."),
    records: Optional[int] = typer.Option(None, "--records", "-n", help="Records used (a seeded subset / generated)."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p", help="Mechanism parameter KEY=VALUE (JSON values; bounds=dataset for the data's public box)."),
    samples: Optional[int] = typer.Option(None, "--samples", help="Certification releases per dataset (D and D′ each; default: what the release budget leaves after selection)."),
    selection_samples: Optional[int] = typer.Option(None, "--selection-samples", help="First-round selection releases per dataset per candidate pair (default: the selection budget spread over the search)."),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence of the certified bound."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of every random choice."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Local worker processes (-1: all cores)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address tcp://HOST:PORT (needs dpaudit[dask])."),
    max_pairs: Optional[int] = typer.Option(None, "--max-pairs", help="Try at most this many candidate pairs."),
    classifier: str = typer.Option("logistic", "--classifier", help="Event-selection model: logistic, mlp or none (direct statistics only)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the result as JSON here."),
    fail_on_violation: bool = typer.Option(False, "--fail-on-violation", help="Exit 1 when the verdict is violation (for CI)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (only on a terminal)."),
) -> None:
    """Certified empirical lower bound on ε (DP-Sniper-style events, Clopper–Pearson), verdict vs the claim."""
    with user_errors():
        if neighbours is not None and neighbours not in NEIGHBOURS:
            raise InvalidInputError(f"--neighbours must be one of {', '.join(NEIGHBOURS)}; got {neighbours!r}")
        if classifier not in CLASSIFIERS:
            raise InvalidInputError(f"--classifier must be one of {', '.join(CLASSIFIERS)}; got {classifier!r}")
        if output not in OUTPUTS:
            raise InvalidInputError(f"--output must be one of {', '.join(OUTPUTS)}; got {output!r}")
        check_writable(json_path, directory=False, option="--json")
        default_data = dataset is None and data is None
        ds = load_data(dataset or (DEFAULT_DATASET if default_data else None), data, label_column=label_column,
                       records=records if records is not None else (DEFAULT_RECORDS if default_data else None),
                       seed=seed)
        params = parse_params(param, ds)
        plug = {"output": output, "neighbours": neighbours or "add-remove"}
        if delta is not None:
            plug["delta"] = delta
        try:
            mech = mechanisms.get(mechanism, epsilon=eps, **params, **plug)
        except InvalidInputError as exc:
            # A mechanism that requires a public box gets the dataset's (never computed from the records).
            if "bounds" in params or ds.bounds is None or "bounds" not in str(exc):
                raise
            params["bounds"] = [ds.bounds[0].tolist(), ds.bounds[1].tolist()]
            info(f"bounds: {mechanism} needs a public box; using the dataset's ({ds.name}), "
                 "which is not computed from the records")
            mech = mechanisms.get(mechanism, epsilon=eps, **params, **plug)
        box = getattr(mech, "bounds", None)
        if box is None and ds.bounds is not None:
            box = (ds.bounds[0], ds.bounds[1])
        from attacks.epsilon import estimate_epsilon

        with warnings.catch_warnings():  # leak warnings are shown once, as a row of the result
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            try:
                res = estimate_epsilon(mech, ds.X, samples=samples, selection_samples=selection_samples,
                                       confidence=confidence, neighbours=neighbours, delta=delta,
                                       distance=distance, bounds=box, seed=seed, n_jobs=n_jobs,
                                       scheduler=scheduler, progress=None if progress else False,
                                       max_pairs=max_pairs, classifier=_classifier(classifier, seed))
            except (InvalidInputError, KeyboardInterrupt):
                raise
            except Exception as exc:  # the audited code failed: one line, no traceback (locals hold records)
                raise InvalidInputError(f"{mechanism} failed while being audited: {type(exc).__name__}: {exc}") from None
        out = res.to_dict()
        out["mechanism"] = mechanism
        out["mechanism_name"] = res.mechanism
        out["parameters"] = dict(params)
        out["dataset"] = {k: v for k, v in ds.summary().items() if k != "bounds"}
        out["command"] = "estimate-eps"
        claim = out["claim"]
        evaluated = sum(1 for c in res.candidates if "expected_bound" in c)
        rows = [
            ("mechanism", mechanism),
            ("claim", _fmt_claim(claim)),
            ("data", f"{ds.name}: {ds.n_records} records × {ds.n_features} features"),
            ("ε lower bound", f"{res.epsilon_lower_bound:.4g}{_unit(claim)} (confidence {confidence:.0%})"),
            ("verdict", res.verdict.upper() if res.is_violation else res.verdict),
            ("ceiling", f"{res.ceiling:.4g} (largest ε {res.samples} samples per dataset can certify)"),
            ("pair", f"{res.pair['name']}: {res.pair['description']}"),
            ("event", res.event["text"]),
            ("samples", f"{res.samples} per dataset to certify; selection used {res.selection_samples} per "
                        f"dataset for each of {evaluated} candidate pair(s) = "
                        f"{res.selection_samples_total} releases"
                        + (f" ({len(res.candidates) - evaluated} pair(s) skipped or failed)"
                           if evaluated < len(res.candidates) else "")),
            ("elapsed", f"{res.elapsed_seconds:.1f} s"),
        ]
        for leak in res.leak_warnings:
            rows.append(("privacy leak", leak))
        width = max(len(k) for k, _ in rows)
        typer.echo("\n".join(f"{k:<{width}}  {v}" for k, v in rows))
        if json_path is not None:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(json.dumps(out, indent=2, default=_json_default), encoding="utf-8")
            info(f"wrote {json_path}")
    if fail_on_violation and res.is_violation:
        raise typer.Exit(code=EXIT_VIOLATION)


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def register(app: typer.Typer) -> None:
    app.command("estimate-eps")(estimate_eps)
