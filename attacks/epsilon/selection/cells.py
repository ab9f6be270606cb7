"""Statistics that are cells only (ratio order): repeated releases and patterns, and a vector's answers.

See :mod:`.binning` for what a binned statistic is.  Here:

:class:`RowAtomBins`
    Whole feature rows seen at least twice in training, each a cell, and one
    cell for the rest: the joint patterns of discrete outputs.  Over all
    columns, or over the discrete value columns alone — the pattern of a
    release's discrete part when another part is continuous (two sparse
    vectors side by side, one releasing its noisy answers).  Ratio order.
:class:`AnswerBins`
    For a vector with "no answer" entries: the position of the first (or the
    last) answered entry and the value there, jointly — per position
    equal-mass cells of the value with halving tail cells (Lyu et al.'s SVT
    releasing its answers; a numerical sparse vector).  Ratio order.

Both are fitted on the training part T and are then fixed maps from a
feature row to a cell, applied alike to releases of D and D′.
"""

from __future__ import annotations

import numpy as np

from .binning import Binning

__all__ = ["AnswerBins", "RowAtomBins", "answer_groups", "discrete_columns", "row_hash"]

MAX_ROW_ATOMS = 256     # repeated feature rows kept per row statistic
DISCRETE_VALUES = 16    # a column with at most this many distinct training values is discrete (row patterns)
VALUE_CELLS = 8         # equal-mass cells of an answered value per position ...
MIN_TAIL_CELL = 16      # ... plus halving tail cells (1/16, 1/32, … of the position's sample) down to this many


_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)


def row_hash(F: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's exact bit pattern (equal rows hash equal; −0.0 is normalised away)."""
    F = np.asarray(F, dtype=np.float64)
    h = np.full(len(F), np.uint64(0x632BE59BD9B4E019), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(F.shape[1]):  # column by column: contiguous in column-major samples
            h ^= np.ascontiguousarray(F[:, j] + 0.0).view(np.uint64)
            h *= _HASH_MULT
            h ^= h >> np.uint64(29)
    return h


class RowAtomBins(Binning):
    """Whole rows (of ``columns``; None: all) seen at least twice in training, one cell each, and one cell
    for every other row.  Rows are matched on a hash and then compared exactly, so a hash collision can
    never put a row in the wrong cell."""

    ratio_kind = "row ratio"
    orders = ("ratio",)

    def __init__(self, name: str, label: str, columns: np.ndarray | None, atoms: np.ndarray,
                 hashes: np.ndarray) -> None:
        self.name, self.label = name, label
        self.columns, self.atoms, self.hashes = columns, atoms, hashes  # hashes sorted, atoms in their order
        self.n_bins = len(atoms) + 1

    @classmethod
    def fit(cls, T_D: np.ndarray, T_Dp: np.ndarray, columns: np.ndarray | None = None, *, name: str,
            what: str) -> "RowAtomBins | None":
        both = np.vstack([T_D, T_Dp]) if columns is None else np.vstack([T_D[:, columns], T_Dp[:, columns]])
        hashes, first, counts = np.unique(row_hash(both), return_index=True, return_counts=True)
        repeated = np.flatnonzero(counts >= 2)
        if repeated.size == 0:
            return None  # no point mass
        if repeated.size > MAX_ROW_ATOMS:
            repeated = np.sort(repeated[np.argsort(-counts[repeated], kind="stable")[:MAX_ROW_ATOMS]])
        return cls(name, what, columns, both[first[repeated]] + 0.0, hashes[repeated])

    @property
    def needs(self) -> frozenset[int] | None:
        return None if self.columns is None else frozenset(int(j) for j in self.columns)

    @property
    def ratio_name(self) -> str:
        return self.name

    def ratio_label(self) -> str:
        unit = "release" if self.columns is None else "pattern"
        return f"likelihood-ratio cells of {self.label} ({len(self.atoms)} repeated {unit}(s); withheld)"

    def bins(self, F: np.ndarray) -> np.ndarray:
        rows = F if self.columns is None else F[:, self.columns]
        out = np.full(len(rows), len(self.atoms), dtype=np.int64)
        if len(rows) == 0 or len(self.atoms) == 0:
            return out
        h = row_hash(rows)
        pos = np.minimum(np.searchsorted(self.hashes, h), len(self.hashes) - 1)
        match = self.hashes[pos] == h
        for j in range(rows.shape[1]):
            match &= rows[:, j] == self.atoms[pos, j]
        out[match] = pos[match]
        return out


def discrete_columns(T_D: np.ndarray, T_Dp: np.ndarray, columns: list[int]) -> list[int]:
    """The columns among ``columns`` with at most :data:`DISCRETE_VALUES` distinct training values."""
    out = []
    for j in columns:
        if np.unique(np.concatenate([T_D[:, j], T_Dp[:, j]])).size <= DISCRETE_VALUES:
            out.append(j)
    return out


def answer_groups(names: list[str]) -> tuple[list[int], list[int]]:
    """(value columns v[j], status columns na[j]) of a vector layout, position by position; empty when the
    layout has no status columns (every entry always answered)."""
    values = {name[2:-1]: i for i, name in enumerate(names) if name.startswith("v[")}
    status = {name[3:-1]: i for i, name in enumerate(names) if name.startswith("na[")}
    common = [k for k in values if k in status]
    return [values[k] for k in common], [status[k] for k in common]


def _edge_ranks(size: int) -> np.ndarray:
    """Ranks of the cell edges in a sorted sample of ``size``: equal-mass cells, and in both tails cells that
    halve down to :data:`MIN_TAIL_CELL` releases — a sparse vector's largest ratios sit in a value tail."""
    levels = list(np.arange(1, VALUE_CELLS) / VALUE_CELLS)
    share = 1.0 / (2 * VALUE_CELLS)
    while share * size >= MIN_TAIL_CELL:
        levels += [share, 1.0 - share]
        share /= 2
    return np.unique((np.asarray(levels) * size).astype(np.int64).clip(0, size - 1))


def _answer_at(F: np.ndarray, values: np.ndarray, status: np.ndarray, which: str) -> tuple[np.ndarray, np.ndarray]:
    """(position + 1 of the first/last answered entry — 0 when nothing is answered —, the value there) per row."""
    answered = F[:, status] == 0.0
    any_answer = answered.any(axis=1)
    j = answered.argmax(axis=1) if which == "first" else answered.shape[1] - 1 - answered[:, ::-1].argmax(axis=1)
    value = F[np.arange(len(F)), values[j]]
    return np.where(any_answer, j + 1, 0), np.where(any_answer, value, 0.0)


class AnswerBins(Binning):
    """Cells of (position of the first/last answer, its value) — see the module doc."""

    ratio_kind = "answer cells"
    orders = ("ratio",)

    def __init__(self, values: np.ndarray, status: np.ndarray, which: str, edges: list[np.ndarray]) -> None:
        self.values, self.status, self.which = values, status, which
        self.edges = edges                               # per position ("none" first): value edges
        self.offsets = np.cumsum([0] + [e.size + 1 for e in edges])
        self.n_bins = int(self.offsets[-1])
        self.name = f"{which} answer"
        self.label = f"the {which} answer's position and value"

    @classmethod
    def fit(cls, values: list[int], status: list[int], which: str, T_D: np.ndarray, T_Dp: np.ndarray
            ) -> "AnswerBins | None":
        if len(values) < 2 or len(T_D) == 0:
            return None
        values_, status_ = np.asarray(values), np.asarray(status)
        pos, val = (np.concatenate(parts) for parts in zip(_answer_at(T_D, values_, status_, which),
                                                            _answer_at(T_Dp, values_, status_, which)))
        order = np.argsort(pos, kind="stable")
        groups = np.split(val[order], np.searchsorted(pos[order], np.arange(1, len(values) + 1)))
        edges = []
        for here in groups:  # each position's values
            here = np.sort(here)
            edges.append(np.unique(here[_edge_ranks(here.size)]) if here.size >= 2 * VALUE_CELLS else np.empty(0))
        stat = cls(values_, status_, which, edges)
        if stat.n_bins < 2 or np.unique(pos).size + sum(e.size for e in edges) < 2:
            return None
        return stat

    @property
    def needs(self) -> frozenset[int]:
        return frozenset(int(j) for j in np.concatenate([self.values, self.status]))

    @property
    def ratio_name(self) -> str:
        return self.name

    def ratio_label(self) -> str:
        return (f"likelihood-ratio cells of {self.label} ({len(self.values)} positions, {self.n_bins} cells; "
                "cells withheld)")

    def bins(self, F: np.ndarray) -> np.ndarray:
        """Cell per row: the position's offset plus the value's cell among that position's edges (rows
        grouped by position once: one pass over the rows, however many positions)."""
        pos, value = _answer_at(F, self.values, self.status, self.which)
        order = np.argsort(pos, kind="stable")
        starts = np.searchsorted(pos[order], np.arange(len(self.edges) + 1))
        out = np.empty(len(pos), dtype=np.int64)
        for p, e in enumerate(self.edges):
            rows = order[starts[p]:starts[p + 1]]
            out[rows] = self.offsets[p] + np.searchsorted(e, value[rows], side="right")
        return out
