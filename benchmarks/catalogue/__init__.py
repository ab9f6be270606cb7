"""The peers' catalogue: DP-Sniper's and StatDP's small mechanisms, correct and
deliberately wrong, with known true ε, as dpaudit plug-ins.

Every entry is a :class:`~dpaudit.mechanisms.base.Mechanism` on a dataset (its query
vector is computed from the records with bounded per-record contributions,
:mod:`.queries`), with the papers' input pairs as neighbouring datasets
(:mod:`.pairs`) and the peers' published results beside it (:mod:`.reference`).

Families: :mod:`.histograms` (NoisyHist1/2), :mod:`.noisy_max`
(ReportNoisyMax1–4), :mod:`.sparse_vector` (SVT1–6, NumericalSVT,
SVT34Parallel), :mod:`.counting` (Laplace, LaplaceParallel, PrefixSum,
TruncatedGeometric), :mod:`.rappor` (RAPPOR, one-time RAPPOR).

Use one with the CLI as ``--mechanism benchmarks.catalogue.sparse_vector:SparseVectorTechnique3``
(from the repository root), or through :data:`CATALOGUE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dpaudit.attacks.epsilon.pairs.neighbours import NeighbourPair

from .base import CatalogueMechanism
from .counting import LaplaceMechanism, LaplaceParallel, PrefixSum, PrefixSumStream, TruncatedGeometric
from .histograms import NoisyHist1, NoisyHist2
from .noisy_max import ReportNoisyMax1, ReportNoisyMax2, ReportNoisyMax3, ReportNoisyMax4
from .pairs import pattern_pairs
from .rappor import OneTimeRappor, Rappor
from .reference import PEERS, PeerResult
from .sparse_vector import (
    NumericalSVT,
    SparseVectorTechnique1,
    SparseVectorTechnique2,
    SparseVectorTechnique3,
    SparseVectorTechnique4,
    SparseVectorTechnique5,
    SparseVectorTechnique6,
    SVT34Parallel,
)

__all__ = ["CATALOGUE", "CatalogueMechanism", "Entry", "entry"]


@dataclass(frozen=True)
class Entry:
    """One row of the catalogue benchmark.

    ``samples`` / ``selection_samples`` are the default sample sizes per
    dataset (certification; selection per candidate pair), sized for
    10–45 s per audit with 2 workers on a 2-core machine (budget: 60 s); rows
    whose event is rare or whose ratio is close to its pair's exact ε get
    more certification releases (SVT3, SVT4, NumericalSVT: the selection
    counts its releases where they are drawn, so the search costs what
    drawing costs and the rest of the minute goes to certification);
    ``family`` groups rows in the report; ``component_wise``
    says which StatDP patterns DP-Sniper's evaluation gave the mechanism
    (all eight, or only "one above"/"one below").
    """

    name: str
    family: str
    build: Callable[[], CatalogueMechanism]
    samples: int
    selection_samples: int
    component_wise: bool = True  # which StatDP patterns DP-Sniper used for it

    def mechanism(self) -> CatalogueMechanism:
        return self.build()

    def pairs(self) -> list[NeighbourPair]:
        return pattern_pairs(self.build().query, self.component_wise)

    @property
    def peer(self) -> PeerResult | None:
        return PEERS.get(self.name)


M = 1_000_000
CATALOGUE: tuple[Entry, ...] = (
    Entry("LaplaceMechanism", "scalar", LaplaceMechanism, 50 * M, 50 * M // 10, False),
    Entry("TruncatedGeometric", "scalar", TruncatedGeometric, 100 * M, 100 * M // 10, False),
    Entry("LaplaceParallel", "scalar", LaplaceParallel, 10 * M, 10 * M // 10, False),
    Entry("NoisyHist1", "histogram", NoisyHist1, 20 * M, 20 * M // 10, False),
    Entry("NoisyHist2", "histogram", NoisyHist2, 10 * M, 10 * M // 10, False),
    Entry("ReportNoisyMax1", "report-noisy-max", ReportNoisyMax1, 20 * M, 20 * M // 10),
    Entry("ReportNoisyMax2", "report-noisy-max", ReportNoisyMax2, 20 * M, 20 * M // 10),
    Entry("ReportNoisyMax3", "report-noisy-max", ReportNoisyMax3, 20 * M, 20 * M // 10),
    Entry("ReportNoisyMax4", "report-noisy-max", ReportNoisyMax4, 20 * M, 20 * M // 10),
    Entry("SparseVectorTechnique1", "sparse-vector", SparseVectorTechnique1, 8 * M, 8 * M // 10),
    Entry("SparseVectorTechnique2", "sparse-vector", SparseVectorTechnique2, 8 * M, 8 * M // 10),
    Entry("SparseVectorTechnique3", "sparse-vector", SparseVectorTechnique3, 16 * M, 8 * M // 10),
    Entry("SparseVectorTechnique4", "sparse-vector", SparseVectorTechnique4, 64 * M, 6 * M // 10),
    Entry("SparseVectorTechnique5", "sparse-vector", SparseVectorTechnique5, 8 * M, 8 * M // 10),
    Entry("SparseVectorTechnique6", "sparse-vector", SparseVectorTechnique6, 8 * M, 8 * M // 10),
    Entry("NumericalSVT", "sparse-vector", NumericalSVT, 16 * M, 6 * M // 10),
    Entry("SVT34Parallel", "sparse-vector", SVT34Parallel, 4 * M, 4 * M // 10),
    Entry("PrefixSum", "prefix-sum", PrefixSum, 6 * M, 6 * M // 10),
    Entry("PrefixSum-stream", "prefix-sum", PrefixSumStream, 6 * M, 6 * M // 10, False),
    Entry("Rappor", "rappor", Rappor, 16 * M, 16 * M // 10, False),
    Entry("OneTimeRappor", "rappor", OneTimeRappor, 40 * M, 1 * M, False),  # cheap releases: certification-heavy
)


def entry(name: str) -> Entry:
    """The catalogue entry called ``name`` (case-insensitive)."""
    for e in CATALOGUE:
        if e.name.lower() == name.lower():
            return e
    raise KeyError(f"no catalogue mechanism {name!r}; known: {', '.join(e.name for e in CATALOGUE)}")
