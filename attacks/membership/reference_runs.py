"""Reference runs for the per-record attacks (LiRA, RMIA): the mechanism itself, run as a black box
on reference datasets with and without each candidate record.

Carlini et al. (S&P 2022, §IV) train shadow models on random halves of a pool that
contains the target examples, so that every example is "in" about half of them; for a
mechanism the reference "model" is one call of the mechanism.  Here the pool is the
*candidates* — the records whose membership the attack guesses, which the attacker
knows as records (it queries them) but not as members.  Run k is the mechanism on
the candidates its own inclusion row selects: every candidate is in exactly ⌊K/2⌋ or
⌈K/2⌉ of the K runs, chosen at random (:func:`balanced_inclusion`), so a run holds
about half the candidates, like the target, whose members are the candidates that
won a fair coin.  Which runs hold a record is drawn from its values and the seed
alone, and each run's input is sorted, so the runs — and every score built on them —
do not depend on the order in which the candidates are given.  The inclusion rows and the runs' seeds come from the attack's own
seed, independent of the target's coins and release: per-record statistics built on
these runs are information independent of the membership coins, as the one-run bound
of Steinke, Nasr & Jagielski (2023) requires.

All runs are shared by every candidate (and by LiRA and RMIA when they run
together).  Each run is one call through the execution layer
(:func:`dpaudit.execution.release_once`: a private copy of the data, an opaque
generator, faults as findings), in chunks run by :func:`dpaudit.execution.map_seeds`
(in this process, on ``n_jobs`` local processes or a Dask cluster — the same numbers
on each).  A run whose call fails is dropped (its finding is recorded); fewer than
two usable runs is an error.  Each run keeps only the scores
(:func:`dpaudit.attacks.membership.record_scores.log_confidence`) of the candidates and of a
sample of *population* records (public records that are in no run and not in the
target: RMIA's z), not the release; vector releases are kept until the vector map is
fitted on them (:mod:`dpaudit.attacks.membership.vector_map`).
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from dpaudit.execution import MechanismBroken, MechanismFailure, map_seeds, recording, release_once
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import InvalidInputError, Mechanism, Release, Vector

from ..attack import Progress
from .record_scores import ScoreContext, log_confidence
from .vector_map import VectorMap, pad_vectors, release_values

# Scores are kept as float32: 16 runs × 2.5·10⁵ candidates × 8 views take 128 MB (the scale benchmark's
# 10⁶ records); the attacks compute in float64.
STORE = np.float32

__all__ = ["ReferenceRuns", "balanced_inclusion", "leave_one_out", "positions", "prepare", "record_keys",
           "run_references"]


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: uint64 → uniformly scrambled uint64 (vectorised, wraps modulo 2⁶⁴)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def record_keys(records: np.ndarray, seed: np.random.SeedSequence) -> np.ndarray:
    """One 64-bit key per record from its values and ``seed`` alone (equal records, equal keys)."""
    salt = seed.generate_state(2, dtype=np.uint64).tobytes()
    rows = np.ascontiguousarray(records, dtype=np.float64) + 0.0  # −0.0 and 0.0 hash alike
    return np.array([int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8, key=salt).digest(), "little")
                     for row in rows], dtype=np.uint64)


def balanced_inclusion(records: np.ndarray, n_runs: int, seed: np.random.SeedSequence) -> np.ndarray:
    """(n_runs, n_records) booleans: each record is in a random ⌊K/2⌋ or ⌈K/2⌉ of the K runs.

    A record's runs are a function of its values and ``seed`` only (:func:`record_keys`), so
    the design does not depend on the order the records come in.  With K odd a record gets the
    extra run with probability ½, so every run holds about half the records.
    """
    if n_runs < 2:
        raise InvalidInputError(f"need at least 2 reference runs, got {n_runs}")
    keys = record_keys(records, seed)
    with np.errstate(over="ignore"):
        draws = _mix(keys[None, :] + _GOLDEN * np.arange(1, n_runs + 2, dtype=np.uint64)[:, None])
    rank = np.argsort(np.argsort(draws[:n_runs], axis=0, kind="stable"), axis=0, kind="stable")
    size = np.full(len(keys), n_runs // 2)
    if n_runs % 2:
        size += (draws[n_runs] >> np.uint64(63)).astype(np.int64)
    return rank < size[None, :]


def _canonical(X: np.ndarray) -> np.ndarray:
    """The rows of X in lexicographic order: a run's input does not depend on the candidates' order."""
    return X[np.lexsort(X.T[::-1])] if len(X) else X


@dataclass(frozen=True, eq=False)
class ReferenceRuns:
    """The usable reference runs: who was in each, and the scores each gave (``log c``, see
    :mod:`dpaudit.attacks.membership.record_scores`).  Rows are runs; columns candidates or population records."""

    records: np.ndarray            # (m, d) the candidates, in the order of the columns
    inclusion: np.ndarray          # (K, m) bool: candidate i was in run k
    scores: np.ndarray             # (K, m, views) log c of each candidate under run k, per view
    population: np.ndarray         # (p, d) public records in no run
    population_scores: np.ndarray  # (K, p, views)
    context: ScoreContext
    kind: str
    calls: int                     # mechanism calls made (usable or not)

    @property
    def n_runs(self) -> int:
        return int(len(self.inclusion))

    @property
    def n_views(self) -> int:
        return int(self.scores.shape[2]) if self.scores.ndim == 3 else 1

    def view(self, j: int) -> "ReferenceRuns":
        """The runs with one view of the scores: (K, m) and (K, p) matrices, in float64."""
        return replace(self, scores=self.scores[:, :, j].astype(np.float64),
                       population_scores=self.population_scores[:, :, j].astype(np.float64))

    def score(self, release: Release, X: np.ndarray, *, inputs: np.ndarray | None = None) -> np.ndarray:
        """log c of the rows of X under ``release`` (the target's, or any other), as the runs were scored."""
        if release.kind != self.kind:
            raise InvalidInputError(f"the reference runs released {self.kind}, the target {release.kind}")
        return log_confidence(release, X, self.context, inputs=inputs)


class _Task:
    """One chunk of reference runs (picklable, for joblib or Dask): releases and their scores."""

    def __init__(self, mechanism: Mechanism, records: np.ndarray, population: np.ndarray,
                 context: ScoreContext) -> None:
        self.mechanism, self.records, self.population, self.context = mechanism, records, population, context

    def __call__(self, item: tuple[np.ndarray, np.ndarray, list[np.random.SeedSequence]]) -> dict[str, Any]:
        runs, inclusion, seeds = item
        out: dict[str, Any] = {"runs": [], "kinds": [], "candidate": [], "population": [], "values": [],
                               "failed": 0}
        with recording(propagate=False) as found:
            for k, row, run_seed in zip(runs, inclusion, seeds):
                inputs = _canonical(self.records[row])
                try:
                    release = release_once(self.mechanism, inputs, run_seed, call="reference run")
                except MechanismFailure:
                    out["failed"] += 1
                    continue
                out["runs"].append(int(k))
                out["kinds"].append(release.kind)
                if isinstance(release, Vector):
                    out["values"].append(release_values(release))
                    continue
                out["candidate"].append(log_confidence(release, self.records, self.context,
                                                       inputs=inputs).astype(STORE))
                out["population"].append(log_confidence(release, self.population, self.context,
                                                        inputs=inputs).astype(STORE))
        out["findings"] = found
        return out


def _stack(results: Sequence[dict[str, Any]], key: str) -> np.ndarray:
    """Stack the runs' score matrices, freeing each run's own as it is copied (half ``np.stack``'s peak)."""
    n = sum(len(r[key]) for r in results)
    out: np.ndarray | None = None
    i = 0
    for r in results:
        while r[key]:
            part = r[key].pop(0)
            if out is None:
                out = np.empty((n, *part.shape), dtype=STORE)
            out[i] = part
            i += 1
    if out is None:
        raise RuntimeError(f"no reference run holds {key!r} scores")
    return out


def _chunks(n_runs: int, n_jobs: int | None) -> list[np.ndarray]:
    """Runs split into one chunk per worker (one chunk in this process)."""
    parts = 1 if n_jobs in (None, 1) else (max(1, os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs))
    size = math.ceil(n_runs / max(1, min(parts, n_runs)))
    return [np.arange(s, min(s + size, n_runs)) for s in range(0, n_runs, size)]


def run_references(mechanism: Mechanism, records: np.ndarray, population: np.ndarray, n_runs: int,
                   seed: np.random.SeedSequence, context: ScoreContext, *, n_jobs: int | None = 1,
                   scheduler: Any = None, progress: Progress | None = None) -> ReferenceRuns:
    """``n_runs`` reference runs on the ``records`` (the candidates), scored on them and on ``population``.

    ``seed`` fixes the inclusion rows and every run's generator; chunking (``n_jobs``,
    ``scheduler``) never changes the numbers.  Findings of the calls go to the active
    :func:`~dpaudit.execution.recording`.
    """
    records = np.ascontiguousarray(records, dtype=np.float64)
    population = np.ascontiguousarray(population, dtype=np.float64)
    inclusion = balanced_inclusion(records, int(n_runs), Stream.REFERENCE_INCLUSION.of(seed))
    parts = _chunks(int(n_runs), n_jobs)
    run_seeds = [Stream.REFERENCE_RUN.of(seed, k) for k in range(int(n_runs))]  # run k's seed whatever the chunking
    items = [(idx, inclusion[idx], [run_seeds[k] for k in idx]) for idx in parts]
    done = [0]

    def tick(i: int, result: dict[str, Any]) -> None:
        done[0] += len(parts[i])
        if progress is not None:
            progress("reference runs", done[0], int(n_runs))

    with recording() as sink:
        try:
            results = map_seeds(_Task(mechanism, records, population, context), items, n_jobs=n_jobs,
                                scheduler=scheduler, on_result=tick)
        except MechanismBroken as exc:
            sink.merge(exc.findings)
            raise
        for r in results:
            sink.merge(r["findings"])
    return _assemble(results, records, population, inclusion, context, int(n_runs))


def _assemble(results: Sequence[dict[str, Any]], records: np.ndarray, population: np.ndarray,
              inclusion: np.ndarray, context: ScoreContext, n_runs: int) -> ReferenceRuns:
    runs = [k for r in results for k in r["runs"]]
    kinds = {kind for r in results for kind in r["kinds"]}
    if len(runs) < 2:
        failed = sum(r["failed"] for r in results)
        raise MechanismFailure({"kind": "raises", "call": "reference run",
                                "error": f"{failed} of {n_runs} reference runs gave no usable release; "
                                         "the per-record attacks need at least 2"})
    if len(kinds) != 1:
        raise InvalidInputError(f"the reference runs released different kinds: {', '.join(sorted(kinds))}")
    kind = kinds.pop()
    used = inclusion[runs]
    if kind == "vector":  # vectors of differing lengths: padded with "no answer" to the longest
        values = pad_vectors([v for r in results for v in r["values"]])
        vmap = VectorMap.fit(context.centre, [records[row] for row in used], values, scale_records=population)
        context = context.with_vector(vmap)
        cand = np.stack([log_confidence(Vector(v), records, context) for v in values])
        pop = np.stack([log_confidence(Vector(v), population, context) for v in values])
    else:
        cand = _stack(results, "candidate")
        pop = _stack(results, "population")
    return ReferenceRuns(records, used, cand, population, pop, context, kind, n_runs)



def positions(records: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Column of each row of X among ``records`` (by value); a row that is not a record is an error.

    Per-record attacks score only the records their runs were built on, in any order.
    """
    R = np.ascontiguousarray(records, dtype=np.float64)
    Q = np.ascontiguousarray(X, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[1] != R.shape[1]:
        raise InvalidInputError(f"records to score must be n×{R.shape[1]}, got shape {Q.shape}")
    index = {row.tobytes(): i for i, row in enumerate(R)}
    try:
        return np.fromiter((index[row.tobytes()] for row in Q), dtype=np.int64, count=len(Q))
    except KeyError:
        raise InvalidInputError("a per-record attack scores only the records its reference runs were built "
                                "on (fit it on these records)") from None


def leave_one_out(runs: ReferenceRuns, score: Any, max_runs: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, membership) with each of the first ``max_runs`` runs as a pseudo-target.

    ``score(others, candidate_log_c, population_log_c)`` scores the candidates of one release
    from the other runs' statistics; the pseudo-target's inclusion row is the truth.  This is
    calibration data from the attacker's own runs only (never the target's).
    """
    scores, truth = [], []
    for j in range(min(int(max_runs), runs.n_runs)):
        keep = np.arange(runs.n_runs) != j
        others = replace(runs, inclusion=runs.inclusion[keep], scores=runs.scores[keep],
                         population_scores=runs.population_scores[keep])
        scores.append(score(others, runs.scores[j], runs.population_scores[j]))
        truth.append(runs.inclusion[j].astype(np.int64))
    return np.concatenate(scores), np.concatenate(truth)


def prepare(mechanism: Mechanism, public: np.ndarray, records: np.ndarray, n_members: int, n_runs: int,
            seed: np.random.SeedSequence, *, population_size: int = 1000, n_jobs: int | None = 1,
            scheduler: Any = None, progress: Progress | None = None) -> ReferenceRuns:
    """Reference runs for ``records`` with the context and population drawn from ``public`` records.

    The distance scale and the population sample come from ``seed`` and the public records only.
    """
    public = np.asarray(public, dtype=np.float64)
    context = ScoreContext.from_public(public, n_members, np.random.default_rng(Stream.REFERENCE_CONTEXT.of(seed)))
    take = min(len(public), int(population_size))
    pick = np.random.default_rng(Stream.REFERENCE_POPULATION.of(seed))
    population = public[np.sort(pick.choice(len(public), take, replace=False))]
    return run_references(mechanism, records, population, n_runs, Stream.REFERENCE_DRAWS.of(seed), context, n_jobs=n_jobs,
                          scheduler=scheduler, progress=progress)
