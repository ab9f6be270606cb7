"""Datasets dpaudit runs on: the seed papers' synthetic sets, scikit-learn's
bundled real sets, and any numeric CSV.

Every dataset carries a *public* box ``bounds`` (per feature) that is not
computed from the records: for generated sets it follows from the generator's
parameters, for the bundled real sets it is the measurement domain stated in
the dataset's documentation, rounded outward.  A CSV has no public box; a
mechanism that needs one must be given it.

Nothing here downloads anything: scikit-learn ships iris, wine, breast cancer
and digits inside the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError, check_data
from dpaudit.result_shapes import DatasetRecord

__all__ = ["Dataset", "available", "describe", "is_generated", "load", "load_csv"]


@dataclass(frozen=True, eq=False)
class Dataset:
    """Records ``X`` (n×d), optional ground-truth labels ``y``, a public box."""

    name: str
    X: np.ndarray
    y: np.ndarray | None
    bounds: tuple[np.ndarray, np.ndarray] | None
    description: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_records(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int | None:
        """How many distinct labels ``y`` holds (None without labels)."""
        return None if self.y is None else int(len(np.unique(self.y)))

    @property
    def default_k(self) -> int:
        """Clusters to ask for when none is given: the class count, else 4 (the thesis blobs, §5.3.1)."""
        return self.n_classes or 4

    def subset(self, records: int, rng: np.random.Generator) -> "Dataset":
        """A uniformly drawn subset of ``records`` rows (labels follow)."""
        if records > self.n_records:
            raise InvalidInputError(f"{self.name} has {self.n_records} records; cannot take {records}")
        idx = np.sort(rng.choice(self.n_records, size=records, replace=False))
        return Dataset(self.name, self.X[idx], None if self.y is None else self.y[idx], self.bounds,
                       self.description, {**self.params, "records": records})

    def summary(self) -> DatasetRecord:
        """What reports show about the data: never the records themselves."""
        return {"name": self.name, "n_records": self.n_records, "n_features": self.n_features,
                "n_classes": self.n_classes,
                "bounds": None if self.bounds is None else
                [self.bounds[0].tolist(), self.bounds[1].tolist()],
                "description": self.description, "params": self.params}


def _box(lo: float | list[float], hi: float | list[float], d: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.broadcast_to(np.asarray(lo, float), (d,)).copy(),
            np.broadcast_to(np.asarray(hi, float), (d,)).copy())


def _standardise(X: np.ndarray) -> np.ndarray:
    from sklearn.preprocessing import StandardScaler
    return StandardScaler().fit_transform(X)


# ---- generated sets ---------------------------------------------------------------
def _thesis_blobs(d: int) -> Callable[[int | None], Dataset]:
    def make(records: int | None) -> Dataset:
        from sklearn.datasets import make_blobs
        n = 2000 if records is None else records
        X, y = make_blobs(n_samples=n, centers=4, n_features=d, cluster_std=0.6, random_state=0)
        # make_blobs draws centres in (-10, 10); 0.6·8 covers the tails (P[|N| > 8σ] < 1e-14).
        return Dataset(f"blobs-{d}d", X, y, _box(-15.0, 15.0, d),
                       f"thesis blobs: make_blobs({n}, centers=4, std=0.6, {d} dims, random_state=0)",
                       {"records": n, "dims": d})
    return make


def _dbscan_shape(kind: str) -> Callable[[int | None], Dataset]:
    def make(records: int | None) -> Dataset:
        from sklearn import datasets as skd
        n = 2000 if records is None else records
        if kind == "moons":
            X, y = skd.make_moons(n, noise=0.05, random_state=30)
        elif kind == "circles":
            X, y = skd.make_circles(n, noise=0.05, factor=0.5, random_state=30)
        else:
            X, y = skd.make_blobs(n, centers=[(1, 1), (-1, -1), (1.5, -1.5)],
                                  cluster_std=[0.4, 0.1, 0.75], random_state=30)
        X = _standardise(X)
        # Standard-scaled as in the DP-DBSCAN paper's set-up (part of the benchmark's
        # definition); the public box (-3, 3) is the one the paper's API example uses.
        return Dataset(kind if kind != "blobs" else "dbscan-blobs", X, y, _box(-3.0, 3.0, 2),
                       f"DP-DBSCAN paper {kind} ({n} points, standard-scaled, random_state=30)",
                       {"records": n})
    return make


# ---- bundled real sets ------------------------------------------------------------
# Public boxes: measurement domains from each dataset's documentation, rounded outward.
_IRIS_BOX = ([0, 0, 0, 0], [10, 5, 8, 3])
_WINE_BOX = ([10, 0, 1, 10, 60, 0, 0, 0, 0, 1, 0, 1, 250],
             [15, 6, 4, 31, 170, 4, 6, 1, 4, 14, 2, 4.5, 1700])
_BREAST_CANCER_BOX = (
    [0.0] * 30,
    [30, 40, 200, 2600, 0.2, 0.4, 0.5, 0.25, 0.35, 0.1,
     3, 5, 25, 600, 0.035, 0.15, 0.4, 0.06, 0.08, 0.03,
     40, 50, 260, 4300, 0.25, 1.1, 1.3, 0.3, 0.7, 0.21])


def _sklearn_real(name: str) -> Callable[[int | None], Dataset]:
    def make(records: int | None) -> Dataset:
        from sklearn import datasets as skd
        loader = {"iris": skd.load_iris, "wine": skd.load_wine,
                  "breast-cancer": skd.load_breast_cancer, "digits": skd.load_digits}[name]
        bunch = loader()
        X, y = bunch.data.astype(float), bunch.target
        d = X.shape[1]
        boxes: dict[str, tuple[Any, Any]] = {"iris": _IRIS_BOX, "wine": _WINE_BOX,
                                             "breast-cancer": _BREAST_CANCER_BOX, "digits": (0.0, 16.0)}
        box = boxes[name]
        return Dataset(name, X, y, _box(box[0], box[1], d),
                       f"scikit-learn bundled {name} ({X.shape[0]}×{d}, {len(np.unique(y))} classes)",
                       {"records": X.shape[0]})
    return make


_GENERATED = {"blobs-2d", "blobs-3d", "blobs-5d", "moons", "circles", "dbscan-blobs"}
_REGISTRY: dict[str, Callable[[int | None], Dataset]] = {
    "blobs-2d": _thesis_blobs(2),
    "blobs-3d": _thesis_blobs(3),
    "blobs-5d": _thesis_blobs(5),
    "moons": _dbscan_shape("moons"),
    "circles": _dbscan_shape("circles"),
    "dbscan-blobs": _dbscan_shape("blobs"),
    "iris": _sklearn_real("iris"),
    "wine": _sklearn_real("wine"),
    "breast-cancer": _sklearn_real("breast-cancer"),
    "digits": _sklearn_real("digits"),
}
_ALIASES = {"blobs": "blobs-2d", "breast_cancer": "breast-cancer"}


def available() -> list[str]:
    return sorted(_REGISTRY)


def is_generated(name: str) -> bool:
    """Whether the named dataset is generated (any number of records) rather than a fixed real set."""
    return _ALIASES.get(name, name) in _GENERATED


def describe() -> list[Dataset]:
    """One small instance of each dataset (for ``dpaudit datasets``)."""
    return [_REGISTRY[n](None) for n in available()]


def load(name: str, *, records: int | None = None, seed: int | np.random.Generator = 0) -> Dataset:
    """Load a built-in dataset by name.

    ``records``: for generated sets, how many points to generate (thesis: 50 or
    2000); for real sets, a seeded uniform subset of that size.
    """
    key = _ALIASES.get(name, name)
    if key not in _REGISTRY:
        raise InvalidInputError(
            f"unknown dataset {name!r}; choose one of {', '.join(available())}, or give --data FILE.csv")
    if records is not None and (int(records) != records or records < 2):
        raise InvalidInputError(f"records must be a whole number ≥ 2, got {records!r}")
    if key in _GENERATED:
        return _REGISTRY[key](records)
    data = _REGISTRY[key](None)
    if records is None or records == data.n_records:
        return data
    return data.subset(int(records), np.random.default_rng(seed))


# What a file that is not a CSV starts with, by its first bytes: --data names it, instead of "no records".
_NOT_CSV = ((b"{", "JSON"), (b"[", "JSON"), (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook?)"),
            (b"PAR1", "Parquet"), (b"\x93NUMPY", "a NumPy .npy array"), (b"\x89HDF", "HDF5"),
            (b"\xd0\xcf\x11\xe0", "an Excel .xls workbook"), (b"%PDF", "a PDF"), (b"\x1f\x8b", "gzip-compressed"))


def _check_csv_like(path: Path) -> None:
    """Refuse a --data file that is plainly not a CSV (JSON, a spreadsheet, binary), naming what it looks like."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    kind = next((what for magic, what in _NOT_CSV if start.startswith(magic)), None)
    if kind is None and b"\x00" in head:
        kind = "a binary file"
    if kind is not None:
        raise InvalidInputError(f"{path} is not a CSV file (it looks like {kind}); --data takes a comma-separated "
                                "file with a header row — export it as CSV first")


def load_csv(path: str | Path, *, label_column: str | None = None,
             bounds: tuple[object, object] | None = None) -> Dataset:
    """Load a numeric CSV (:mod:`dpaudit.data.csvtable`: a header row, or none when the first row is numbers);
    ``label_column`` becomes ``y`` (``column 2`` names a headerless file's second column).

    Labels are numbered 0, 1, ... in order of first appearance.
    """
    import csv

    from .csvtable import read_table

    path = Path(path)
    if path.is_dir():
        raise InvalidInputError(f"{path} is a directory; --data takes a CSV file")
    if not path.is_file():
        raise InvalidInputError(f"data file not found: {path}")
    _check_csv_like(path)
    try:
        table = read_table(path)
    except (ValueError, csv.Error, OSError) as exc:  # malformed, not UTF-8, or unreadable
        raise InvalidInputError(f"cannot read {path} as CSV: {exc}") from None
    if table.n_rows == 0:
        raise InvalidInputError(f"{path} has no records")
    columns = table.columns
    y = None
    if label_column is not None:
        if label_column not in table.names:
            raise InvalidInputError(
                f"label column {label_column!r} not in {path.name}; columns are {', '.join(table.names)}")
        labels = columns[table.names.index(label_column)]
        columns = [c for c in columns if c is not labels]
        if labels.missing.any():
            raise InvalidInputError(f"{path.name}: label column {label_column!r} has missing values; "
                                    "give every record a label")
        raw = labels.values if labels.numeric else labels.tokens
        if raw is None:
            raise RuntimeError(f"label column {label_column!r} has neither values nor tokens")
        y = _first_appearance_codes(raw)
    non_numeric = [c.name for c in columns if not c.numeric]
    if non_numeric and len(columns) == 1 and any(sep in non_numeric[0] for sep in ";\t|"):
        raise InvalidInputError(f"{path.name} is not comma-separated (its header is {non_numeric[0]!r}); "
                                "save it with commas between the columns")
    if non_numeric:
        raise InvalidInputError(
            f"{path.name} has non-numeric column(s) {', '.join(non_numeric)}; "
            "drop them or name the label with --label-column")
    missing = [c.name for c in columns if c.missing.any()]
    if missing:
        raise InvalidInputError(f"{path.name} has missing values (NaN) in column {missing[0]!r}; clean the file first")
    values = (np.column_stack([c.values for c in columns if c.values is not None]) if columns  # all numeric here
              else np.empty((table.n_rows, 0)))
    X = check_data(values, name=path.name)
    box = None
    if bounds is not None:
        from dpaudit.mechanisms.base import check_bounds
        box = check_bounds(bounds, X.shape[1])
    shown = ", ".join(table.names[:5]) + (", …" if len(table.names) > 5 else "")
    header = (f"the first row names the columns ({shown})" if table.header else
              f"none: the first row holds numbers only, so it is a record; the columns are named "
              f"{table.names[0]} … {table.names[-1]}")
    return Dataset(path.stem, X, y, box, f"CSV file {path.name} ({X.shape[0]}×{X.shape[1]}"
                   + ("" if table.header else ", no header row: every row is a record") + ")",
                   {"label_column": label_column, "header": header})


def _first_appearance_codes(values: np.ndarray) -> np.ndarray:
    """0, 1, ... for the distinct values in order of first appearance (as ``pandas.factorize``)."""
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.intp)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse.reshape(-1)]
