"""The records a run works on and the public box the code works in: :class:`DataOptions`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.data.inputs import check_source, load_data

from .checks import OptionError, whole_number

if TYPE_CHECKING:
    from dpaudit.data.datasets import Dataset

__all__ = ["DEFAULT_DATASET", "DataOptions"]

DEFAULT_DATASET = "blobs-2d"  # the records when neither a dataset nor a file is named


@dataclass(frozen=True, kw_only=True)
class DataOptions:
    """A built-in ``dataset`` (default :data:`DEFAULT_DATASET`) or a numeric CSV file (``data``, with its
    ``label_column``), ``records`` of it (a seeded subset, or how many to generate; None: all, or the dataset's
    default), ``rescale`` ("none", or "minmax" onto [−1, 1] by the data's own min/max — a leak the report names)
    and ``bounds``, the public box the audited code works in, (lo, hi) per column (None: the mechanism's, the
    dataset's public box, else the data's range)."""

    dataset: str | None = None
    data: str | None = None
    label_column: str | None = None
    records: int | None = None
    rescale: str = "none"
    bounds: tuple[list[float], list[float]] | None = None

    def __post_init__(self) -> None:
        check_source(self.dataset, self.data, label_column=self.label_column, rescale=self.rescale)
        if self.dataset is None and self.data is None:
            object.__setattr__(self, "dataset", DEFAULT_DATASET)
        if self.data is not None:
            object.__setattr__(self, "data", str(self.data))
        if self.records is not None:
            object.__setattr__(self, "records", whole_number(self.records, "records", 2))
        if self.bounds is not None:
            self._check_box(self.bounds)

    @staticmethod
    def _check_box(bounds: Any) -> None:
        try:
            lo, hi = ([float(v) for v in side] for side in bounds)
            ok = len(lo) == len(hi) > 0 and all(math.isfinite(a) and math.isfinite(b) and a < b for a, b in zip(lo, hi))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise OptionError("bounds", f"bounds must be (lo, hi) lists of finite numbers with lo < hi, got {bounds!r}")

    def load(self, seed: int) -> Dataset:
        """The records (``seed`` draws a subset of ``records``)."""
        return load_data(None if self.data is not None else self.dataset, None if self.data is None else Path(self.data),
                         label_column=self.label_column, records=self.records, seed=seed, rescale=self.rescale)

    def selection(self) -> dict[str, Any]:
        """How the data was chosen, as a run's results show it (a file by its name only)."""
        return {"dataset": None if self.data else self.dataset, "data": Path(self.data).name if self.data else None,
                "records": self.records, "rescale": self.rescale}
