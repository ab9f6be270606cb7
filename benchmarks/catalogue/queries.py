"""How the catalogue's mechanisms read a dataset: query vectors with bounded
per-record contributions.

DP-Sniper (Bichsel et al., S&P 2021) and StatDP (Ding et al., CCS 2018) feed
their mechanisms a query-answer vector ``a`` directly and define neighbours on
``a``: *component-wise* (‖a − a′‖∞ ≤ 1, every answer moves by at most 1, in
either direction — the sparse-vector and report-noisy-max setting) or
*single-entry* (one answer moves by at most 1 — histograms, scalar queries).
dpaudit's mechanisms take a dataset X (n × d) and dpaudit chooses the
neighbouring datasets itself, so each catalogue mechanism computes its query
vector from X, and each query below bounds what one record can contribute so
that adding or removing one record is exactly one of those neighbour steps:

:class:`ClippedSums` (component-wise)
    q_i(X) = Σ_x clip(x_i, −1, 1) for i < m.  One record moves every q_i by at
    most 1, with changes of either sign: ‖Δq‖∞ ≤ 1.
:class:`Histogram` (single-entry)
    Record x falls in bin ⌊x₀⌋ clipped to [0, m − 1]; q_j counts the records
    in bin j.  One record moves one bin by 1: ‖Δq‖₁ ≤ 1.
:class:`StreamSums` (single-entry)
    Record x = (position, value) adds clip(value, −1, 1) to q at position
    ⌊x₀⌋ clipped to [0, m − 1] (the continual-counting stream of PrefixSum's
    paper).  ‖Δq‖₁ ≤ 1.
:class:`IntegerSum` (single-entry, one answer)
    v(X) = clip(Σ_x clip(round(x₀), lo, hi), lo_total, hi_total): an integer
    count with per-record contribution in [lo, hi] (|lo|, |hi| ≤ 1), e.g. the
    counting query of the truncated geometric mechanism or the value a RAPPOR
    client encodes.  |Δv| ≤ 1.

Each query also *realises* an answer vector as a dataset (:meth:`realise`)
and names the single record that moves the answer by a given step
(:meth:`record_for`); :mod:`benchmarks.catalogue.pairs` builds the papers'
input pairs from these.  Realised datasets always have at least two rows
(a record contributing 0 pads them), as dpaudit's data checks require.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

__all__ = ["ClippedSums", "Histogram", "IntegerSum", "Query", "StreamSums"]


class Query:
    """A query vector computed from a dataset, with its per-record sensitivity."""

    #: length of the answer vector
    size: int
    #: record dimension the query reads
    n_features: int
    #: "linf" (component-wise neighbours) or "l1" (single-entry neighbours)
    norm: str
    #: bound on ‖Δq‖ (in ``norm``) when one record is added or removed
    sensitivity: float = 1.0

    def answer(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def realise(self, a: np.ndarray) -> np.ndarray:
        """A dataset (≥ 2 rows) whose answer is exactly ``a``."""
        raise NotImplementedError

    def record_for(self, step: np.ndarray) -> np.ndarray | None:
        """The one record whose addition moves the answer by exactly ``step`` (None if none does)."""
        raise NotImplementedError

    def _check(self, X: np.ndarray) -> None:
        if X.shape[1] != self.n_features:
            raise InvalidInputError(
                f"{type(self).__name__} reads records of {self.n_features} feature(s); "
                f"the data has {X.shape[1]}")

    def describe(self) -> str:
        raise NotImplementedError


def _pad(rows: list[np.ndarray], d: int) -> np.ndarray:
    """Stack rows, padding with zero-contribution records up to two rows."""
    rows = list(rows)
    while len(rows) < 2:
        rows.append(np.zeros(d))
    return np.vstack(rows).astype(float)


@dataclass(frozen=True)
class ClippedSums(Query):
    """q_i = Σ_x clip(x_i, −1, 1), i < m: component-wise neighbours, ‖Δq‖∞ ≤ 1."""

    size: int
    norm: str = "linf"

    @property
    def n_features(self) -> int:  # type: ignore[override]
        return self.size

    def answer(self, X: np.ndarray) -> np.ndarray:
        self._check(X)
        return np.clip(X, -1.0, 1.0).sum(axis=0)

    def realise(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, float)
        if a.shape != (self.size,):
            raise InvalidInputError(f"expected an answer vector of length {self.size}, got shape {a.shape}")
        # ⌈|a_i|⌉ records per coordinate at most; a record carries up to ±1 in every coordinate.
        n_rows = int(np.max(np.ceil(np.abs(a)))) if a.size else 0
        rows = []
        rest = a.copy()
        for _ in range(n_rows):
            step = np.clip(rest, -1.0, 1.0)
            rows.append(step)
            rest = rest - step
        return _pad(rows, self.size)

    def record_for(self, step: np.ndarray) -> np.ndarray | None:
        step = np.asarray(step, float)
        return step.copy() if np.all(np.abs(step) <= 1.0) else None

    def describe(self) -> str:
        return f"q_i = Σ clip(x_i, −1, 1), i < {self.size} (component-wise: one record moves each q_i by ≤ 1)"


@dataclass(frozen=True)
class Histogram(Query):
    """Counts of records per bin ⌊x₀⌋ ∈ [0, m − 1]: single-entry neighbours, ‖Δq‖₁ ≤ 1."""

    size: int
    norm: str = "l1"
    n_features: int = 1

    def answer(self, X: np.ndarray) -> np.ndarray:
        self._check(X)
        bins = np.clip(np.floor(X[:, 0]), 0, self.size - 1).astype(np.int64)
        return np.bincount(bins, minlength=self.size).astype(float)

    def realise(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, float)
        if a.shape != (self.size,) or np.any(a < 0) or np.any(a != np.round(a)):
            raise InvalidInputError(f"a histogram needs {self.size} non-negative whole counts, got {a!r}")
        rows = [np.array([float(j)]) for j in range(self.size) for _ in range(int(a[j]))]
        if len(rows) < 2:
            raise InvalidInputError("a histogram dataset needs at least two records")
        return np.vstack(rows)

    def record_for(self, step: np.ndarray) -> np.ndarray | None:
        step = np.asarray(step, float)
        nz = np.flatnonzero(step)
        if nz.size == 1 and step[nz[0]] == 1.0:
            return np.array([float(nz[0])])
        return None

    def describe(self) -> str:
        return f"histogram of ⌊x₀⌋ over {self.size} bins (single-entry: one record moves one bin by 1)"


@dataclass(frozen=True)
class StreamSums(Query):
    """Record (position, value) adds clip(value, −1, 1) at one position: ‖Δq‖₁ ≤ 1."""

    size: int
    norm: str = "l1"
    n_features: int = 2

    def answer(self, X: np.ndarray) -> np.ndarray:
        self._check(X)
        pos = np.clip(np.floor(X[:, 0]), 0, self.size - 1).astype(np.int64)
        return np.bincount(pos, weights=np.clip(X[:, 1], -1.0, 1.0), minlength=self.size).astype(float)

    def realise(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, float)
        if a.shape != (self.size,):
            raise InvalidInputError(f"expected an answer vector of length {self.size}, got shape {a.shape}")
        rows = []
        for j in range(self.size):
            rest = a[j]
            while rest != 0.0:
                step = float(np.clip(rest, -1.0, 1.0))
                rows.append(np.array([float(j), step]))
                rest -= step
        return _pad(rows, 2)

    def record_for(self, step: np.ndarray) -> np.ndarray | None:
        step = np.asarray(step, float)
        nz = np.flatnonzero(step)
        if nz.size == 1 and abs(step[nz[0]]) <= 1.0:
            return np.array([float(nz[0]), float(step[nz[0]])])
        return None

    def describe(self) -> str:
        return (f"stream of {self.size} sums: record (position, value) adds clip(value, −1, 1) at one "
                "position (single-entry: ‖Δq‖₁ ≤ 1)")


@dataclass(frozen=True)
class IntegerSum(Query):
    """v = clip(Σ_x clip(round(x₀), lo, hi), total_lo, total_hi): one integer answer, |Δv| ≤ 1."""

    lo: int = -1
    hi: int = 1
    total_lo: float = -np.inf
    total_hi: float = np.inf
    size: int = 1
    norm: str = "l1"
    n_features: int = 1

    def __post_init__(self) -> None:
        if not (-1 <= self.lo <= 0 <= self.hi <= 1):
            raise InvalidInputError("per-record contributions must lie in [-1, 1] and include 0")

    def answer(self, X: np.ndarray) -> np.ndarray:
        self._check(X)
        total = np.clip(np.rint(X[:, 0]), self.lo, self.hi).sum()
        return np.array([float(np.clip(total, self.total_lo, self.total_hi))])

    def realise(self, a: np.ndarray) -> np.ndarray:
        v = float(np.asarray(a, float).reshape(-1)[0])
        if v != round(v) or not (self.total_lo <= v <= self.total_hi):
            raise InvalidInputError(f"cannot realise the answer {v!r}")
        unit = self.hi if v > 0 else self.lo
        if v != 0 and unit == 0:
            raise InvalidInputError(f"records contribute {self.lo}..{self.hi}; cannot reach {v:g}")
        rows = [np.array([float(unit)]) for _ in range(int(abs(v)))]
        return _pad(rows, 1)

    def record_for(self, step: np.ndarray) -> np.ndarray | None:
        s = float(np.asarray(step, float).reshape(-1)[0])
        return np.array([s]) if s == round(s) and self.lo <= s <= self.hi else None

    def describe(self) -> str:
        return (f"integer sum of round(x₀) clipped to [{self.lo}, {self.hi}] per record"
                + ("" if np.isinf(self.total_hi) else f", total clipped to [{self.total_lo:g}, {self.total_hi:g}]"))
