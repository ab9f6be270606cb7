"""Nothing taken from a release reaches a report when it holds one of the audited records.

Reports store and draw a few things that come from releases — chiefly the
release of the mechanism run on a public stand-in (:mod:`dpaudit.report.standin`).
A correct mechanism cannot put an audited record there: it was given only the
stand-in.  A stateful or hostile one can — it may keep the records it saw in
earlier calls and echo them later.  So every array taken from a release is
compared with the input records before it is stored or drawn: a row equal to a
record, to the precision a report keeps (4 decimals), withholds the whole item,
and the report says why instead of showing it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["STORED_DECIMALS", "WITHHELD", "contains_records", "withhold_records"]

STORED_DECIMALS = 4  # reports round release values to this many decimals
WITHHELD = ("withheld: the release contained one of the audited records (the audited code may keep records "
            "between calls); it is neither stored nor drawn")


def contains_records(values: Any, records: Any, decimals: int = STORED_DECIMALS) -> bool:
    """Whether any row of ``values`` equals a row of ``records`` within rounding to ``decimals``.

    Rows are compared whole (every coordinate within 10^−decimals, the largest change rounding
    for storage makes, plus 10^−9 relative slack); a k-d tree keeps it O((n + m) log n).
    """
    v = np.asarray(values, dtype=np.float64)
    r = np.asarray(records, dtype=np.float64)
    if v.size == 0 or r.size == 0:
        return False
    if v.ndim == 1:
        v = v.reshape(-1, r.shape[1] if r.ndim == 2 else 1)
    if r.ndim == 1:
        r = r.reshape(-1, 1)
    if v.shape[1] != r.shape[1]:
        return False
    v, r = v[np.all(np.isfinite(v), axis=1)], r[np.all(np.isfinite(r), axis=1)]
    if not len(v) or not len(r):
        return False
    from scipy.spatial import cKDTree

    tol = 10.0 ** -decimals + 1e-9 * float(np.max(np.abs(r)))
    distance, _ = cKDTree(r).query(v, k=1, p=np.inf, distance_upper_bound=tol)
    return bool(np.any(np.isfinite(distance)))


def withhold_records(described: dict[str, Any], records: Any, keys: tuple[str, ...] = ("points", "centers")
                     ) -> dict[str, Any]:
    """``described`` unchanged, or with ``keys`` removed and ``withheld`` set when any holds a record."""
    if records is None:
        return described
    if any(described.get(k) is not None and contains_records(described[k], records) for k in keys):
        kept = {k: v for k, v in described.items() if k not in keys}
        kept["withheld"] = WITHHELD
        return kept
    return described
