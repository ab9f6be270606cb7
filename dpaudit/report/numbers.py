"""How numbers are written in every table, console and report alike: three significant digits.

>>> [sig(x) for x in (0.031984, 0.5, -0.0152, 12.345, 1057.2, 2.0e-05, 0.0, float("inf"))]
['0.032', '0.5', '-0.0152', '12.3', '1,057', '2e-05', '0', '∞']
>>> pm(0.0321, 0.0497), pm(0.5, 0.0), pm(None, None)
('0.0321 ± 0.05', '0.5', '–')
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["DIGITS", "MISSING", "fmt", "pm", "sig"]

DIGITS = 3
MISSING = "–"


def sig(value: Any, digits: int = DIGITS) -> str:
    """``value`` to ``digits`` significant digits; whole thousands with separators; ∞ and – for gaps."""
    if value is None:
        return MISSING
    if isinstance(value, str):
        try:
            value = float(value)  # results.json writes ±inf as "inf" / "-inf"
        except ValueError:
            return value
    x = float(value)
    if math.isnan(x):
        return MISSING
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if abs(x) < 1e-12:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    text = f"{x:.{digits}g}"
    return text


def pm(mean: Any, std: Any, digits: int = DIGITS) -> str:
    """``mean ± std``: the mean to ``digits`` significant digits, the spread to two (the std is
    dropped when it is 0 or missing: one repeat)."""
    if mean is None:
        return MISSING
    if std is None or (isinstance(std, (int, float)) and (std == 0 or math.isnan(std))):
        return sig(mean, digits)
    return f"{sig(mean, digits)} ± {sig(std, 2)}"


def fmt(value: Any) -> str:
    """A table cell: numbers by :func:`sig`, booleans as yes/no, lists and dicts as compact JSON."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        return sig(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(", ", ": "), ensure_ascii=False, default=str)
    return str(value)
