"""A plug-in function whose release kind was not stated: its first calls tell what it returns.

A plain function cannot say what its array is; the caller states it (``--output``, ``output=``), and when the
caller does not, the array is read as points — the input's shape.  A first release of another shape (a 2-vector
of means, k × d centres) is then the caller's mistake, not the code's: :func:`check_unstated_output` reads the
findings of a run's first calls (its probe) and raises :class:`~dpaudit.mechanisms.base.InvalidInputError`
naming the ``--output`` that reads the array, before anything else runs.  No call of its own: whatever else the
code does (it raises, hangs, returns NaN) stays the run's finding.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from dpaudit.mechanisms.base import InvalidInputError

from .findings import Finding

__all__ = ["check_unstated_output", "output_suggestion"]

_SHAPE = re.compile(r"returned shape \(([\d, ]*)\); a points release must have the input's shape \((\d+), (\d+)\)")


def output_suggestion(shape: tuple[int, ...], n: int, d: int) -> str:
    """The ``--output`` that reads an array of ``shape`` released on an n × d input."""
    if len(shape) == 2 and shape[1] == d:
        return f"--output centroids if its {shape[0]} rows are cluster centres, else --output vector"
    if len(shape) == 1 and shape[0] == n:
        return "--output labels if they are cluster labels (one per record), else --output vector"
    return "--output vector (any fixed-shape statistic)"


def check_unstated_output(mechanism: Any, findings: Iterable[Finding]) -> None:
    """Raise :class:`InvalidInputError` when ``mechanism`` is a plug-in function whose output was not stated
    (``output_stated`` false) and ``findings`` (of its first calls) hold a release not of the points shape."""
    if getattr(mechanism, "plugin_kind", None) != "function" or getattr(mechanism, "output_stated", True):
        return
    for finding in findings:
        found = _SHAPE.search(finding.error) if finding.kind == "wrong-shape" else None
        if found is None:
            continue
        shape = tuple(int(v) for v in found.group(1).replace(" ", "").split(",") if v)
        n, d = int(found.group(2)), int(found.group(3))
        name = getattr(mechanism, "name", "the plug-in")
        raise InvalidInputError(
            f"{name} returned an array of shape {shape} on {n} × {d} data, not a points release (the input's "
            f"shape, what a plug-in function is read as when --output is not given): state what it returns, "
            f"{output_suggestion(shape, n, d)} (in Python: dpaudit.plugin(fn, output=…))")
