"""What a run works on: the records (a built-in dataset or a CSV, subset, rescaled) and the
mechanism parameters given with ``--param`` (``bounds=dataset`` reads the data's public box)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

from . import datasets
from .datasets import Dataset
from .limits import check_records_values

__all__ = ["RESCALE", "check_source", "load_data", "parse_bounds", "parse_params"]

RESCALE = ("none", "minmax")


def load_data(dataset: str | None, data: Path | None, *, label_column: str | None = None,
              records: int | None = None, seed: int = 0, rescale: str = "none") -> Dataset:
    """The records a run works on: a built-in dataset or a CSV, optionally rescaled.

    ``rescale="minmax"`` maps every feature onto [−1, 1] with the data's own
    min/max, as the thesis's RQ1 set-up did; that is a data-derived
    parameter, recorded under ``params['leaks']`` so the report lists it as a
    privacy-leak warning (the min/max themselves are never written anywhere).
    """
    check_source(dataset, data, label_column=label_column, rescale=rescale)
    if data is not None:
        ds = _checked(datasets.load_csv(data, label_column=label_column))
        if records is not None:
            ds = ds.subset(int(records), np.random.default_rng(seed))
    else:
        ds = datasets.load(dataset or "blobs-2d", records=records, seed=seed)
    if rescale == "minmax":
        msg = ("data rescaled to [-1, 1] with its own min/max (the thesis's set-up); "
               "the scaling parameters come from the private data")
        lo, hi = ds.X.min(axis=0), ds.X.max(axis=0)
        X = 2.0 * (ds.X - lo) / np.where(hi > lo, hi - lo, 1.0) - 1.0
        box = (np.full(ds.n_features, -1.0), np.full(ds.n_features, 1.0))
        ds = Dataset(ds.name, X, ds.y, box, ds.description + ", rescaled to [-1, 1] by min/max",
                     {**ds.params, "rescale": "minmax", "leaks": [msg]})
    return ds


def check_source(dataset: str | None, data: Path | str | None, *, label_column: str | None = None,
                 rescale: str = "none") -> None:
    """Where the records come from, refused before anything is read: a built-in dataset or a CSV (not both), a
    label column only of a CSV, a known rescaling."""
    if dataset and data:
        raise InvalidInputError("give either --dataset or --data, not both")
    if label_column is not None and data is None:
        raise InvalidInputError("--label-column names a column of a --data CSV; built-in datasets carry their own labels")
    if rescale not in RESCALE:
        raise InvalidInputError(f"--rescale must be one of {', '.join(RESCALE)}; got {rescale!r}")


def _checked(ds: Dataset) -> Dataset:
    check_records_values(ds.X, ds.name)
    return ds


def parse_params(items: list[str] | None, ds: Dataset | None = None) -> dict[str, Any]:
    """``["n_clusters=4", "bounds=[-1,1]", "domain=clip"]`` → dict; values are JSON when they parse.

    ``bounds=dataset`` stands for the dataset's public box (never computed from the records).
    """
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InvalidInputError(f"--param takes KEY=VALUE, got {item!r}")
        if key == "bounds" and raw.strip() == "dataset":
            if ds is None or ds.bounds is None:
                raise InvalidInputError("bounds=dataset: this data has no public box; give bounds=[lo,hi]")
            out[key] = [ds.bounds[0].tolist(), ds.bounds[1].tolist()]
            continue
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    if "epsilon" in out:
        raise InvalidInputError("give ε with --eps, not --param epsilon=...")
    return out


def parse_bounds(text: str | None, d: int) -> tuple[list[float], list[float]] | None:
    """``--bounds``: ``LO,HI`` for every column, or ``LO1,HI1;LO2,HI2;…`` one pair per column → (lo, hi) lists.

    The public box the audited code works in (the domain it clips to), stated by the user: the estimator
    places its worst-case datasets and canaries in it.  Refused unless every limit is a finite number and
    LO < HI in every column, with one pair or ``d`` pairs.
    """
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(";") if p.strip()]
    pairs = []
    for part in parts:
        bits = [b.strip() for b in part.split(",")]
        try:
            lo, hi = (float(b) for b in bits) if len(bits) == 2 else (None, None)
        except ValueError:
            lo = hi = None
        if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
            raise InvalidInputError(f"--bounds takes LO,HI (or LO1,HI1;LO2,HI2;… per column) with finite numbers, "
                                    f"got {text!r}")
        if not lo < hi:
            raise InvalidInputError(f"--bounds: LO must be below HI, got {part!r}")
        pairs.append((lo, hi))
    if len(pairs) == 1:
        pairs = pairs * int(d)
    if len(pairs) != int(d):
        raise InvalidInputError(f"--bounds gives {len(parts)} column ranges; the data has {d} columns (give one "
                                "LO,HI for all, or one per column)")
    return [p[0] for p in pairs], [p[1] for p in pairs]
