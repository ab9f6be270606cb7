"""The papers' input pairs as neighbouring datasets.

StatDP (Ding et al., CCS 2018, §5 "input generation") and DP-Sniper
(``dpsniper/input/pattern_generator.py``, a modification of StatDP's
``generate_database``) test every mechanism on a few fixed patterns of query
answers (a1, a2) — "one above", "one below", and, for component-wise
neighbours, "one above rest below", "one below rest above", "half half",
"all above", "all below" and "X shape" (names as in that code; the vectors
are in :func:`statdp_patterns`).

Each pattern becomes a pair of datasets (D, D′) that are neighbours under
add-remove — D′ is D plus one record, as :class:`~dpaudit.attacks.epsilon.pairs.neighbours.NeighbourPair`
expects — and whose answers under the mechanism's query are exactly a1 and
a2 (or a2 and a1 when the step from a1 to a2 removes a record's contribution;
the estimator certifies both directions, so orientation does not matter).
:func:`write_pair_csv` writes a pair as the two CSV files ``dpaudit
estimate-eps --pair D.csv D2.csv`` takes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpaudit.attacks.epsilon.pairs.neighbours import NeighbourPair
from dpaudit.mechanisms.base import InvalidInputError

from .queries import Query

__all__ = ["pattern_pair", "pattern_pairs", "statdp_patterns", "write_pair_csv"]

#: names in the order the papers' generator yields them
SINGLE_ENTRY = ("one above", "one below")
COMPONENT_WISE = SINGLE_ENTRY + ("one above rest below", "one below rest above", "half half", "all above",
                                 "all below", "X shape")


def statdp_patterns(m: int, component_wise: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """StatDP's answer patterns (name, a1, a2) for m answers (DP-Sniper's ``_get_raw_inputs``)."""
    ones = np.ones(m)
    h = m // 2
    pats = [("one above", ones, np.r_[0.0, np.ones(m - 1)]),
            ("one below", ones, np.r_[2.0, np.ones(m - 1)])]
    if component_wise:
        pats += [("one above rest below", ones, np.r_[2.0, np.zeros(m - 1)]),
                 ("one below rest above", ones, np.r_[0.0, np.full(m - 1, 2.0)]),
                 ("half half", ones, np.r_[np.full(h, 2.0), np.zeros(m - h)]),
                 ("all above", ones, np.full(m, 2.0)),
                 ("all below", ones, np.zeros(m)),
                 ("X shape", np.r_[np.ones(h), np.zeros(m - h)], np.r_[np.zeros(h), np.ones(m - h)])]
    return [(name, a1.astype(float), a2.astype(float)) for name, a1, a2 in pats]


def _fmt(a: np.ndarray) -> str:
    return "[" + " ".join(f"{v:g}" for v in a) + "]"


def pattern_pair(query: Query, name: str, a1: np.ndarray, a2: np.ndarray) -> NeighbourPair:
    """(D, D′) with D′ = D ∪ {one record} and answers {a1, a2} under ``query``."""
    a1, a2 = np.asarray(a1, float), np.asarray(a2, float)
    record = query.record_for(a2 - a1)
    small, big = a1, a2
    if record is None:
        record = query.record_for(a1 - a2)
        small, big = a2, a1
    if record is None:
        raise InvalidInputError(f"pattern {name!r} ({_fmt(a1)} vs {_fmt(a2)}) is not one record apart "
                                f"under {type(query).__name__}")
    D = query.realise(small)
    D_prime = np.vstack([D, record[None, :]])
    return NeighbourPair(name, D, D_prime, "add-remove", len(D), np.asarray(record, float), None,
                         description=f"StatDP/DP-Sniper pattern '{name}': answers {_fmt(small)} on D, "
                                     f"{_fmt(big)} on D′ (one record added)")


def pattern_pairs(query: Query, component_wise: bool | None = None,
                  names: tuple[str, ...] | None = None) -> list[NeighbourPair]:
    """Every pattern pair for ``query`` (component-wise patterns when its norm is L∞)."""
    if component_wise is None:
        component_wise = query.norm == "linf"
    pats = statdp_patterns(query.size, component_wise)
    if names is not None:
        pats = [p for p in pats if p[0] in names]
    return [pattern_pair(query, *p) for p in pats]


def write_pair_csv(pair: NeighbourPair, directory: str | Path, stem: str) -> tuple[Path, Path]:
    """Write D and D′ as ``<stem>_D.csv`` and ``<stem>_D2.csv`` (header x0, x1, …)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    header = ",".join(f"x{j}" for j in range(pair.D.shape[1]))
    paths = (directory / f"{stem}_D.csv", directory / f"{stem}_D2.csv")
    for data, path in zip((pair.D, pair.D_prime), paths):
        np.savetxt(path, data, delimiter=",", header=header, comments="", fmt="%.17g")
    return paths
