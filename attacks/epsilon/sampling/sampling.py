"""Releases for the ε estimator: chunked, seeded draws through the execution layer, and their findings.

Every release goes through :func:`~dpaudit.execution.draw_releases`: a private
copy of the data per call, an opaque generator, failures as
:class:`~dpaudit.mechanisms.base.Failed` outcomes (a feature like any other) and
releases lost to timeouts or crashes left out and counted as findings.  The
chunk functions are top-level (picklable for joblib and Dask); a chunk's seed
is a function of (stage, candidate, round or look, dataset, chunk) only, so the
same seed gives the same releases on any backend and worker count.

:class:`Sampler` draws for the pair search (probes and selection samples, see
:class:`dpaudit.attacks.epsilon.selection.candidate.Sampler`) and for certification
(:class:`dpaudit.attacks.epsilon.certification.certification.CountSampler`), and keeps the findings of each
dataset of each pair apart: a dataset the code refuses as a whole (every call
raised) gives *refusal* notes, not faults (:meth:`Sampler.settle`).  Each side
of each pair is drawn in a lane of its own (:meth:`Sampler.lane`, see
:mod:`execution`): audited code that keeps state between calls has
only ever seen that side's dataset, as in a run of its own.
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import Any, Callable, Hashable

import numpy as np

from dpaudit.execution import (
    Findings,
    MechanismBroken,
    chunk_seeds,
    chunk_sizes,
    close_lanes,
    draw_releases,
    quiet,
)
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import Mechanism, PrivacyLeakWarning, Release

from ..pairs.neighbours import NeighbourPair
from ..selection.binning import Binning, all_needs
from ..selection.events import BinEvent, ThresholdEvent
from ..selection.evidence import COUNTED_PARTS, PARTS
from ..selection.features import FeatureMap, compact
from .budget import PROBE

__all__ = ["CERT_BATCHES", "aligned", "PROBE_CALLS", "PROBE_LANE", "Sampler", "count_chunk", "coupled_chunk",
           "features_chunk", "probe_chunk", "probe_releases", "tally_chunk", "tasks"]

PROBE_CALLS = 3     # single releases on X drawn first (the release kind) and replayed last (same seed ⇒ same release)
PROBE_LANE = "probe"  # the lane of those calls (the pairs' sides each have their own lanes)
CERT_BATCHES = 16  # a look's chunks are run in about this many batches, the deadline checked between them
PROBE_WARM_UP = 4   # a probe's first releases, in a chunk of their own: they start the side's lane (untimed)
TIMED_SECONDS = 0.25  # a pair's speed is read off its draws once they have taken this long …
TIMED_CALL = 1e-3     # … or this long a release (a probe of code this slow times the code, not the round trip)


def _draw(mechanism: Mechanism, data: np.ndarray, seed: np.random.SeedSequence, size: int, lane: Hashable
          ) -> Any:
    return quiet(functools.partial(draw_releases, lane=lane), mechanism, data, seed, size)


def probe_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                lane: Hashable = None) -> tuple[list[Release], Findings]:
    seed, size = task
    draw = _draw(mechanism, data, seed, size, lane)
    return list(draw.releases), draw.findings


def coupled_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                  lane: Hashable = None, trace: bool = False) -> tuple[list[Release], np.ndarray, Findings, Any]:
    """One chunk of a coupled screening draw: its releases, the positions kept (dropped ones left out), its
    findings and (``trace``) each kept call's trace.  The same task on D and on D′ gives both the same
    generators, release by release, and seeds numpy's and ``random``'s global state from them too (wrapped
    code often draws from those)."""
    seed, size = task
    draw = quiet(functools.partial(draw_releases, lane=lane, seed_globals=True, trace=trace), mechanism, data, seed,
                 size)
    return list(draw.releases), np.asarray(draw.indices, dtype=np.int64), draw.findings, draw.traces


def features_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                   fmap: FeatureMap, lane: Hashable = None) -> tuple[np.ndarray, Findings]:
    """Features of one chunk's isolated releases (dropped ones left out), and the chunk's findings.

    Sent back as float32 when that is exact (discrete outputs: flags, counts, small integers):
    half the bytes through the worker pipe, the same numbers on arrival.
    """
    seed, size = task
    draw = _draw(mechanism, data, seed, size, lane)
    features = quiet(fmap, draw.releases) if draw.n else np.empty((0, len(fmap.names)))
    return compact(features), draw.findings


def tally_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                fmap: FeatureMap, binnings: list[Binning], lane: Hashable = None
                ) -> tuple[list[np.ndarray], int, Findings]:
    """One chunk of a pair's selection sample as counts: its releases are drawn, featurised and binned here,
    release i going to part ``COUNTED_PARTS[i mod 4]`` (:mod:`dpaudit.attacks.epsilon.selection.evidence`), and only the (PARTS, n_bins) counts of each
    statistic come back."""
    seed, size = task
    draw = _draw(mechanism, data, seed, size, lane)
    F = quiet(fmap, draw.releases, all_needs(binnings)) if draw.n else np.empty((0, len(fmap.names)))
    part = COUNTED_PARTS[np.arange(len(F)) % COUNTED_PARTS.size]
    out = []
    for b in binnings:
        cells = part * b.n_bins + b.bins(F) if len(F) else np.empty(0, dtype=np.int64)
        out.append(np.bincount(cells, minlength=PARTS * b.n_bins).reshape(PARTS, b.n_bins))
    return out, draw.n, draw.findings


def count_chunk(task: tuple[np.random.SeedSequence, int], mechanism: Mechanism, data: np.ndarray,
                fmap: FeatureMap, event: BinEvent | ThresholdEvent, lane: Hashable = None
                ) -> tuple[int, int, Findings, np.ndarray | None]:
    """(releases in the event, releases drawn, findings, releases per bin of a binned event's statistic — the
    cells of the trade-off curve and the Rényi bound — or None) for one certification chunk."""
    seed, size = task
    draw = _draw(mechanism, data, seed, size, lane)
    if isinstance(event, BinEvent):
        n_bins = event.binning.n_bins
        cells = (np.bincount(event.binning.bins(quiet(fmap, draw.releases, event.needs)), minlength=n_bins)
                 if draw.n else np.zeros(n_bins, dtype=np.int64))
        return int(cells[event.members].sum()), draw.n, draw.findings, cells
    hits = int(np.count_nonzero(event(quiet(fmap, draw.releases, event.needs)))) if draw.n else 0
    return hits, draw.n, draw.findings, None


def tasks(parent: np.random.SeedSequence, total: int, chunk: int) -> list[tuple[np.random.SeedSequence, int]]:
    """``total`` releases in chunks of ``chunk``, chunk i seeded by ``chunk_seeds(parent, n)[i]``."""
    sizes = chunk_sizes(total, chunk)
    return list(zip(chunk_seeds(parent, len(sizes)), sizes))


class Sampler:
    """Selection and certification releases, seeded by key, counted in ``used``.

    ``run(fn, tasks)`` maps chunk functions (this process, joblib or Dask);
    ``root`` is the estimate's seed; ``chunk`` releases per chunk.
    """

    def __init__(self, mechanism: Mechanism, run: Callable[..., list[Any]], root: np.random.SeedSequence,
                 chunk: int) -> None:
        self.mechanism, self.run, self.root, self.chunk = mechanism, run, root, chunk
        self.used = 0
        self._findings: dict[tuple[int, int], Findings] = {}  # (id of the pair, side) -> findings
        self._pairs: dict[int, NeighbourPair] = {}
        self._lanes: dict[int, int] = {}                        # id of the pair -> its number among the lanes
        self.refused: dict[int, tuple[int, ...]] = {}          # id of the pair -> sides refused as a whole
        self._clock: dict[int, list[float]] = {}               # id of the pair -> [seconds, releases, draws]
        self._warm: set[tuple[int, int]] = set()               # lanes that have drawn (their start is paid)
        self.overhead = 0.0  # seconds a draw costs whatever its size (the plan's calibration says; see rate)
        self.certifying: tuple[NeighbourPair, FeatureMap, BinEvent | ThresholdEvent] | None = None
        self.cert_key: tuple[int, ...] = ()  # a second certification's streams (dpaudit.attacks.epsilon.certification.certified_pairs)
        # Releases of D and D′ per bin of the certified event's statistic, over every look so far (binned events).
        self.cells: list[np.ndarray | None] = [None, None]

    # ---- lanes: each side of each pair in workers that have never seen the other side ----
    def lane(self, pair: NeighbourPair, side: int) -> tuple[int, int]:
        """The lane of one side of ``pair``: (the pair's number, side), numbered in the order pairs are first
        drawn (the same on every run)."""
        number = self._lanes.setdefault(id(pair), len(self._lanes))
        self._pairs[id(pair)] = pair
        return (number, int(side))

    def retain(self, pairs: list[NeighbourPair]) -> None:
        """End the worker processes of every pair's lanes but these (candidates the search dropped)."""
        keep = [self.lane(p, side) for p in pairs for side in (0, 1)]
        close_lanes(self.mechanism, keep)

    # ---- findings, per dataset of each pair ----
    def _note(self, pair: NeighbourPair, side: int, findings: Findings) -> None:
        self._pairs[id(pair)] = pair
        self._findings.setdefault((id(pair), side), Findings()).merge(findings)

    def settle(self) -> Findings:
        """Every draw's findings; a dataset refused as a whole (:attr:`refused`) counts as refusal notes."""
        out = Findings()
        for (pid, side), found in self._findings.items():
            out.merge(found.as_refusals() if side in self.refused.get(pid, ()) else found)
        return out

    # ---- how fast the code runs on each pair's own datasets ----
    def _clocked(self, pair: NeighbourPair, t0: float, releases: int, chunks: int) -> None:
        clock = self._clock.setdefault(id(pair), [0.0, 0.0, 0.0])
        clock[0] += time.perf_counter() - t0
        clock[1] += releases
        clock[2] += chunks

    def rate(self, pair: NeighbourPair) -> float | None:
        """Releases per second on this pair's datasets (its lanes warm), each draw's fixed cost
        (:attr:`overhead`, measured at calibration) taken off first; None until the draws' time beyond that
        fixed cost reaches :data:`TIMED_SECONDS` or :data:`TIMED_CALL` a release — before that they time the
        round trips, not the code."""
        seconds, releases, chunks = self._clock.get(id(pair), (0.0, 0.0, 0.0))
        working = seconds - chunks * self.overhead
        if releases <= 0 or working <= 0 or (working < TIMED_SECONDS and working / releases < TIMED_CALL):
            return None
        return releases / working

    # ---- the pair search ----
    def probe(self, pair: NeighbourPair, key: tuple[int, ...]) -> tuple[list[Release], list[Release]]:
        out = []
        for side, data in enumerate((pair.D, pair.D_prime)):
            fn = functools.partial(probe_chunk, mechanism=self.mechanism, data=data, lane=self.lane(pair, side))
            # The first chunk starts the side's lane (a worker process and the code's imports): untimed; the
            # rest times the code on this dataset (Sampler.rate).
            parent = Stream.PAIR_PROBE.of(self.root, *key, side)
            warm, timed = zip(chunk_seeds(parent, 2), (PROBE_WARM_UP, PROBE - PROBE_WARM_UP))
            parts = self.run(fn, [warm])
            t0 = time.perf_counter()
            parts += self.run(fn, [timed])
            self._clocked(pair, t0, PROBE - PROBE_WARM_UP, 1)
            self._note(pair, side, Findings.merged(f for _, f in parts))
            out.append([r for releases, _ in parts for r in releases])
            self.used += PROBE
        if min(len(o) for o in out) == 0:
            raise RuntimeError("no probe release was drawn (timeouts or crashes)")
        return out[0], out[1]

    def coupled(self, pair: NeighbourPair, key: tuple[int, ...], size: int, sides: tuple[int, ...] = (0, 1)
                ) -> list[tuple[list[Release], np.ndarray]]:
        """``size`` releases of each of ``sides`` (0: D, 1: D′) on the *same* random streams — screening: noise
        drawn the same way cancels in the difference of D's and D′'s — each side in its own lane, with the
        streams each kept (dropped ones left out; :func:`aligned` pairs them up).  Drawn again with one side,
        the same key gives that side its streams once more (the coupling check).  A side's first draw starts
        its lane (untimed); later draws time the code on the pair's datasets (:meth:`rate`)."""
        parent = Stream.COUPLED_SCREENING.of(self.root, *key)  # no side: D and D′ share streams
        todo = tasks(parent, size, self.chunk)
        out: list[tuple[list[Release], np.ndarray]] = []
        for side in sides:
            lane = self.lane(pair, side)
            fn = functools.partial(coupled_chunk, mechanism=self.mechanism, data=pair.D if side == 0 else pair.D_prime,
                                   lane=lane)
            t0 = time.perf_counter()
            parts = self.run(fn, todo)
            if lane in self._warm:
                self._clocked(pair, t0, size, len(todo))
            self._warm.add(lane)
            self._note(pair, side, Findings.merged(f for _, _, f, _ in parts))
            releases: list[Release] = []
            kept: list[np.ndarray] = []
            offset = 0
            for (rel, idx, _, _), (_, n) in zip(parts, todo):
                releases += rel
                kept.append(idx + offset)
                offset += n
            out.append((releases, np.concatenate(kept) if kept else np.empty(0, dtype=np.int64)))
            self.used += size
        return out

    def traced(self, pair: NeighbourPair, key: tuple[int, ...], size: int) -> list[tuple[list[Release], list[Any]]]:
        """``size`` coupled, traced calls of D, of D′ and of D once more (the control: what differs between two
        calls of D on one stream is randomness the coupling missed), each as (releases, traces) on the streams
        kept by all three — for :func:`~dpaudit.attacks.epsilon.result.leak_sites.leak_sites`."""
        parent = Stream.TRACED_SCREENING.of(self.root, *key)
        todo = tasks(parent, size, self.chunk)
        drawn = []
        for side in (0, 1, 0):
            fn = functools.partial(coupled_chunk, mechanism=self.mechanism, data=pair.D if side == 0 else pair.D_prime,
                                   lane=self.lane(pair, side), trace=True)
            parts = self.run(fn, todo)
            self.used += size
            rows: dict[int, tuple[Release, Any]] = {}
            offset = 0
            for (rel, idx, _, traces), (_, n) in zip(parts, todo):  # (their findings: screening's, not the run's)
                for j, i in enumerate(idx):
                    rows[int(i) + offset] = (rel[j], None if traces is None else traces[j])
                offset += n
            drawn.append(rows)
        common = sorted(set(drawn[0]) & set(drawn[1]) & set(drawn[2]))
        return [([d[i][0] for i in common], [d[i][1] for i in common]) for d in drawn]

    def features(self, pair: NeighbourPair, fmap: FeatureMap, side: int, key: tuple[int, ...], size: int
                 ) -> list[np.ndarray]:
        data = pair.D if side == 0 else pair.D_prime
        fn = functools.partial(features_chunk, mechanism=self.mechanism, data=data, fmap=fmap,
                               lane=self.lane(pair, side))
        t0 = time.perf_counter()
        todo = tasks(Stream.SELECTION_FEATURES.of(self.root, *key, side), size, self.chunk)
        parts = self.run(fn, todo)
        self._clocked(pair, t0, size, len(todo))
        self.used += size
        self._note(pair, side, Findings.merged(f for _, f in parts))
        blocks = [features for features, _ in parts]
        if sum(len(b) for b in blocks) < min(2, size):  # (nearly) every release was dropped
            raise RuntimeError("too few releases drawn (timeouts or crashes)")
        return blocks

    def tally(self, pair: NeighbourPair, fmap: FeatureMap, side: int, key: tuple[int, ...], size: int,
              binnings: list[Binning]) -> tuple[list[np.ndarray], int]:
        """``size`` selection releases of one side, counted by ``binnings`` where they are drawn
        (:func:`tally_chunk`): (the summed (PARTS, n_bins) counts per statistic, releases drawn)."""
        data = pair.D if side == 0 else pair.D_prime
        fn = functools.partial(tally_chunk, mechanism=self.mechanism, data=data, fmap=fmap, binnings=binnings,
                               lane=self.lane(pair, side))
        t0 = time.perf_counter()
        todo = tasks(Stream.SELECTION_TALLY.of(self.root, *key, side), size, self.chunk)
        parts = self.run(fn, todo)
        self._clocked(pair, t0, size, len(todo))
        self.used += size
        self._note(pair, side, Findings.merged(f for _, _, f in parts))
        drawn = sum(m for _, m, _ in parts)
        if drawn < min(2, size):  # (nearly) every release was dropped
            raise RuntimeError("too few releases drawn (timeouts or crashes)")
        counts = [np.sum([c[i] for c, _, _ in parts], axis=0) for i in range(len(binnings))]
        return counts, drawn

    # ---- certification ----
    def count(self, side: int, look: int, size: int, deadline: float | None) -> tuple[int, int] | None:
        """Fresh releases of one side of the pair being certified (set :attr:`certifying` first)."""
        if self.certifying is None:
            raise RuntimeError("count() before the pair being certified was set")
        pair, fmap, event = self.certifying
        data = pair.D if side == 0 else pair.D_prime
        # Look 0 is seeded as a single-look certification always was; later looks by their number.
        parent = (Stream.CERTIFICATION.of(self.root, side, *self.cert_key) if look == 0
                  else Stream.CERTIFICATION.of(self.root, side, look, *self.cert_key))
        todo = tasks(parent, size, self.chunk)
        fn = functools.partial(count_chunk, mechanism=self.mechanism, data=data, fmap=fmap, event=event,
                               lane=self.lane(pair, side))
        step = max(1, -(-len(todo) // CERT_BATCHES)) if deadline is not None else max(1, len(todo))
        hits = drawn = 0
        findings = Findings()
        for start in range(0, len(todo), step):
            if deadline is not None and start and time.perf_counter() > deadline:
                self._note(pair, side, findings)
                return None
            parts = self.run(fn, todo[start:start + step])
            hits += sum(part[0] for part in parts)
            drawn += sum(part[1] for part in parts)  # timeouts and crashes drop releases: certify on what is there
            findings.merge(Findings.merged(part[2] for part in parts))
            for part in parts:
                if part[3] is not None:
                    self.cells[side] = part[3] if self.cells[side] is None else self.cells[side] + part[3]
        self._note(pair, side, findings)
        self.used += size
        return hits, drawn


def aligned(a: tuple[list[Release], np.ndarray], b: tuple[list[Release], np.ndarray]
            ) -> tuple[list[Release], list[Release]]:
    """The releases of two coupled draws (:meth:`Sampler.coupled`) on the streams both kept, stream by stream."""
    _, at_a, at_b = np.intersect1d(a[1], b[1], assume_unique=True, return_indices=True)
    return [a[0][i] for i in at_a], [b[0][i] for i in at_b]


def probe_releases(mechanism: Mechanism, X: np.ndarray, probe_seed: np.random.SeedSequence
           ) -> tuple[Any, MechanismBroken | None, list[str]]:
    """A few single releases on X (the release kind now, a replay at the end); PrivacyLeakWarnings once."""
    first, broken = None, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        try:
            first = draw_releases(mechanism, X, probe_seed, PROBE_CALLS, per_release=True, lane=PROBE_LANE)
        except MechanismBroken as exc:
            broken = exc
    leaks = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)))
    for w in caught:  # anything else is passed on unchanged
        if not issubclass(w.category, PrivacyLeakWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for message in leaks:  # once, not once per release
        warnings.warn(message, PrivacyLeakWarning, stacklevel=3)
    return first, broken, leaks
