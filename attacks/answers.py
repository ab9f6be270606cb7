"""Joint events over a structured release: where it answers, and what it answers there.

A sparse-vector output is a sequence of "no answer" entries (NaN, ⊥) and
answers, cut short where the mechanism aborts; what distinguishes D from D′
is often the *pair* (position of an answer, its value) — which query crossed
the threshold, and by how much — not any one coordinate.  Thresholds on a
single feature see one position at a time; a linear score mixes them.  The
two statistics here estimate the likelihood ratio of such joint outcomes on
the training part of a selection sample (like :mod:`attacks.statistics`,
fitted on T, thresholded on A, validated on B; never on certification
samples):

:class:`AnswerCellStatistic`
    For a vector release with status columns: the position of the first (or
    the last) answered entry — −1 when there is none — and the value there.
    Each position gets its own equal-mass cells of the value (fitted on T),
    so a cell is "the first answer is at query j and lies in [a, b)": the
    abort position and the released answer, jointly (Lyu et al.'s SVT with
    released answers; a numerical sparse vector; the abort position alone for
    ⊤/⊥ outputs).  Each cell scores log((c_D + ½)/(c_D′ + ½)).
:class:`ScoreCellStatistic`
    The same cells over another statistic's score (a classifier's): a
    threshold on the score is monotone in it, a threshold on its cells is a
    union of score ranges ordered by their estimated likelihood ratio — the
    optimal event where the ratio is not monotone in the score (the extreme
    ⊤/⊥ patterns of a sparse vector without cut-off).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .statistics import cell_counts, cell_log_ratios

__all__ = ["AnswerCellStatistic", "ScoreCellStatistic", "answer_groups"]

VALUE_CELLS = 8     # equal-mass cells of the answered value, per position ...
MIN_TAIL_CELL = 16  # ... plus halving tail cells (1/16, 1/32, … of the position's sample) down to this many releases
SCORE_CELLS = 32    # equal-mass cells of a score (distinct values kept as cells of their own up to this many)


def _edge_ranks(size: int) -> np.ndarray:
    """Ranks of the cell edges in a sorted sample of ``size``: equal-mass cells, and in both tails cells that
    halve down to :data:`MIN_TAIL_CELL` releases — a sparse vector's largest ratios sit in a value tail."""
    levels = list(np.arange(1, VALUE_CELLS) / VALUE_CELLS)
    share = 1.0 / (2 * VALUE_CELLS)
    while share * size >= MIN_TAIL_CELL:
        levels += [share, 1.0 - share]
        share /= 2
    return np.unique((np.asarray(levels) * size).astype(np.int64).clip(0, size - 1))


def answer_groups(names: list[str]) -> tuple[list[int], list[int]]:
    """(value columns v[j], status columns na[j]) of a vector layout, position by position; empty when the
    layout has no status columns (every entry always answered)."""
    values = {name[2:-1]: i for i, name in enumerate(names) if name.startswith("v[")}
    status = {name[3:-1]: i for i, name in enumerate(names) if name.startswith("na[")}
    common = [k for k in values if k in status]
    return [values[k] for k in common], [status[k] for k in common]


def _answer_at(F: np.ndarray, values: np.ndarray, status: np.ndarray, which: str) -> tuple[np.ndarray, np.ndarray]:
    """(position + 1 of the first/last answered entry — 0 when nothing is answered —, the value there) per row."""
    answered = F[:, status] == 0.0
    any_answer = answered.any(axis=1)
    j = answered.argmax(axis=1) if which == "first" else answered.shape[1] - 1 - answered[:, ::-1].argmax(axis=1)
    value = F[np.arange(len(F)), values[j]]
    return np.where(any_answer, j + 1, 0), np.where(any_answer, value, 0.0)


def _by_position(pos: np.ndarray, value: np.ndarray, n_positions: int) -> list[np.ndarray]:
    """The values at each position 0 … n_positions − 1 (one sort, not one scan per position)."""
    order = np.argsort(pos, kind="stable")
    return np.split(value[order], np.searchsorted(pos[order], np.arange(1, n_positions)))


class AnswerCellStatistic:
    """Likelihood-ratio cells of (position of the first/last answer, its value) — see the module doc."""

    kind = "answer cells"

    def __init__(self, values: np.ndarray, status: np.ndarray, which: str, edges: list[np.ndarray]) -> None:
        self.values, self.status, self.which = values, status, which
        self.edges = edges                                   # per position (and "none" first): value edges
        self.offsets = np.cumsum([0] + [e.size + 1 for e in edges])
        self.log_ratio = np.zeros(int(self.offsets[-1]))
        self.label = (f"likelihood-ratio cells of the {which} answer's position and value ({len(values)} positions, "
                      f"{int(self.offsets[-1])} cells; cells withheld)")

    def _locate(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _answer_at(F, self.values, self.status, self.which)

    @classmethod
    def fit(cls, values: list[int], status: list[int], which: str, T_D: np.ndarray, T_Dp: np.ndarray
            ) -> "AnswerCellStatistic | None":
        if len(values) < 2 or len(T_D) == 0:
            return None
        values_, status_ = np.asarray(values), np.asarray(status)
        pos_D, val_D = _answer_at(T_D, values_, status_, which)
        pos_Dp, val_Dp = _answer_at(T_Dp, values_, status_, which)
        pos, val = np.concatenate([pos_D, pos_Dp]), np.concatenate([val_D, val_Dp])
        edges = []
        for here in _by_position(pos, val, len(values) + 1):  # each position's values, sorted
            here = np.sort(here)
            edges.append(np.unique(here[_edge_ranks(here.size)]) if here.size >= 2 * VALUE_CELLS else np.empty(0))
        stat = cls(values_, status_, which, edges)
        n = stat.log_ratio.size
        cells_D, cells_Dp = stat._cells(pos_D, val_D), stat._cells(pos_Dp, val_Dp)
        if n < 2 or np.count_nonzero(sum(cell_counts(cells_D, cells_Dp, n))) < 2:
            return None
        stat.log_ratio = cell_log_ratios(cells_D, cells_Dp, n)
        return stat

    def _cells(self, pos: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Cell index per row: the position's offset plus the value's cell among that position's edges
        (rows grouped by position once: one pass over the rows, however many positions)."""
        order = np.argsort(pos, kind="stable")
        starts = np.searchsorted(pos[order], np.arange(len(self.edges) + 1))
        out = np.empty(len(pos), dtype=np.int64)
        for p, e in enumerate(self.edges):
            rows = order[starts[p]:starts[p + 1]]
            out[rows] = self.offsets[p] + np.searchsorted(e, value[rows], side="right")
        return out

    def scores(self, F: np.ndarray) -> np.ndarray:
        return self.log_ratio[self._cells(*self._locate(F))]


class ScoreCellStatistic:
    """Likelihood-ratio cells of another fitted statistic's score — see the module doc."""

    kind = "score cells"

    def __init__(self, base: Any, edges: np.ndarray, atoms: np.ndarray, name: str) -> None:
        self.base, self.edges, self.atoms = base, edges, atoms
        self.log_ratio = np.zeros(atoms.size + edges.size + 1)
        self.label = f"likelihood-ratio cells of the {name} ({self.log_ratio.size} cells; cells withheld)"

    @classmethod
    def fit(cls, base: Any, name: str, T_D: np.ndarray, T_Dp: np.ndarray) -> "ScoreCellStatistic | None":
        s_D, s_Dp = base.scores(T_D), base.scores(T_Dp)
        pooled = np.concatenate([s_D, s_Dp])
        distinct, counts = np.unique(pooled, return_counts=True)
        if distinct.size <= SCORE_CELLS:  # a discrete score (a linear score of bits): one cell per value
            atoms, edges = distinct, np.empty(0)
        else:
            atoms = np.empty(0)
            qs = np.quantile(pooled, np.linspace(0.0, 1.0, SCORE_CELLS + 1)[1:-1])
            edges = np.unique(qs)
        stat = cls(base, edges, atoms, name)
        if stat.log_ratio.size < 2:
            return None
        n = stat.log_ratio.size
        stat.log_ratio = cell_log_ratios(stat._cells(s_D), stat._cells(s_Dp), n)
        return stat

    def _cells(self, s: np.ndarray) -> np.ndarray:
        if self.atoms.size:
            pos = np.clip(np.searchsorted(self.atoms, s), 0, self.atoms.size - 1)
            exact = self.atoms[pos] == s
            return np.where(exact, pos, self.atoms.size + np.searchsorted(self.edges, s, side="right"))
        return np.searchsorted(self.edges, s, side="right")

    def scores(self, F: np.ndarray) -> np.ndarray:
        return self.log_ratio[self._cells(self.base.scores(F))]
