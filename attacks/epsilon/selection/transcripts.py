"""The transcript threat model (issue 10): audit every noisy statistic a mechanism drew.

An iterative mechanism's final output hides most of its composed budget, so a
bound certified on it cannot approach the claim even for a perfect test.  A
*transcript* (:class:`dpaudit.mechanisms.base.Transcript`) is everything the
mechanism drew — per-iteration noisy sums and counts, the noisy histogram —
and auditing it checks the mechanism's accounting the way white-box audits of
DP-SGD do with all iterates: a wrong sensitivity, a wrong ε split or a skipped
noise draw shows up at full strength.  For a mechanism whose release is
post-processing of its transcript (``transcript_covers_release``) the
transcript's ε is at least the release's, so a transcript bound is a bound
on what the mechanism's analysis must cover, not on the release alone.

* :class:`TranscriptView` wraps a mechanism with ``release_transcript`` into
  one whose release *is* the transcript, so the ordinary estimator audits it:
  ``estimate_epsilon(TranscriptView(mech), X, search=SearchSpace(pairs=...))``.
* :class:`TranscriptFeatureMap` (what :class:`dpaudit.attacks.epsilon.selection.features.FeatureMap`
  builds for ``transcript`` releases): the auditor knows D and D′, and a
  replay (:mod:`dpaudit.mechanisms.replays`) recomputes every draw's exact statistic
  under each and scores the draw's log-likelihood ratio.  Features: the
  total ratio (the privacy loss when the replay is exact — the most powerful
  threshold test), the ratio per group (iteration, statistic), and summaries
  of the raw statistics.  All are fixed functions of the release, chosen with
  the pair before any sample is drawn, so every threshold on them is a valid
  event: an approximate or wrong replay weakens the test and never makes the
  certified bound unsound.
* :func:`dpaudit.attacks.epsilon.estimate_transcript_epsilon` — the Python entry point.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence, cast

import numpy as np

from dpaudit.mechanisms.base import (
    InvalidInputError,
    Mechanism,
    Release,
    Transcript,
    TranscriptBatch,
    TranscriptMechanism,
    check_rng,
)
from dpaudit.mechanisms.replays import Replay, replay_for

from ..pairs.neighbours import NeighbourPair

__all__ = ["TranscriptFeatureMap", "TranscriptView"]

_SUMMARIES = ("mean", "min", "max", "nan_share")
_INFINITE = 1e12      # stands in for ±∞ log-likelihood ratios
_RAW_VALUES = 64   # the first this-many values of a transcript are features too (padded with 0)


class TranscriptView:
    """A mechanism whose release is the wrapped mechanism's transcript.

    ``name`` is the mechanism's with ``[transcript]`` appended; ``claim`` and
    ``bounds`` are the mechanism's.  ``release_many`` uses the mechanism's
    vectorised ``release_transcript_many`` when it has one.
    """

    def __init__(self, mechanism: Mechanism) -> None:
        if not callable(getattr(mechanism, "release_transcript", None)):
            raise InvalidInputError(
                f"{getattr(mechanism, 'name', type(mechanism).__name__)} does not expose a transcript "
                "(it needs a release_transcript(X, rng) method)")
        self.mechanism = cast(TranscriptMechanism, mechanism)  # it has release_transcript (checked above)
        self.name = f"{getattr(mechanism, 'name', type(mechanism).__name__)}[transcript]"
        self.claim = mechanism.claim
        self.bounds = getattr(mechanism, "bounds", None)

    def __repr__(self) -> str:
        return f"TranscriptView({self.mechanism!r})"

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Transcript:
        out = self.mechanism.release_transcript(X, rng)
        if not isinstance(out, Transcript):
            raise InvalidInputError(f"{self.name}: release_transcript returned {type(out).__name__}, "
                                    "not a Transcript")
        return out

    def release_many(self, X: np.ndarray, rng: np.random.Generator, n: int
                     ) -> TranscriptBatch | list[Release]:
        fast = getattr(self.mechanism, "release_transcript_many", None)
        if callable(fast):
            return fast(X, rng, n)
        rng = check_rng(rng)
        return TranscriptBatch.stack([self.release(X, rng) for _ in range(int(n))])


def _as_batch(releases: TranscriptBatch | Sequence[Release]) -> TranscriptBatch | list[Transcript]:
    if isinstance(releases, TranscriptBatch):
        return releases
    items = list(releases)
    transcripts = [r for r in items if isinstance(r, Transcript)]
    if len(transcripts) != len(items):
        kinds = sorted({getattr(r, "kind", type(r).__name__) for r in items})
        raise InvalidInputError(f"expected transcript releases, got {', '.join(kinds)}")
    stacked = TranscriptBatch.stack(transcripts)
    return stacked if isinstance(stacked, TranscriptBatch) else transcripts


class TranscriptFeatureMap:
    """Features of transcripts for one neighbouring pair (picklable; no sample-dependent state).

    With a built-in replay for the transcripts' ``source``: ``llr`` (the summed
    log-likelihood ratio ln f(T | D) − ln f(T | D′)), ``llr[group]`` and
    ``llr[group:j]`` per group and column.  Always: per statistic its mean,
    min, max and NaN share, and the transcript's first 64 values (statistics
    in name order, flattened, padded with 0 — the same columns for every
    release, ragged ones included).  ``names`` is fixed by the first call (the
    replay's groups depend on the configuration) and checked on later calls.
    """

    def __init__(self, pair: NeighbourPair, kind: str = "transcript") -> None:
        if kind != "transcript":
            raise InvalidInputError(f"TranscriptFeatureMap featurises transcripts, not {kind!r} releases")
        self.pair = pair
        self.kind = kind
        self.names: list[str] = []
        self._replays: dict[tuple[str, str], Replay | None] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_replays"] = {}            # rebuilt from (source, config) on the other side
        return state

    def _replay(self, source: str, config: dict[str, Any]) -> Replay | None:
        key = (source, repr(sorted(config.items())))
        if key not in self._replays:
            self._replays[key] = replay_for(source, config)
        return self._replays[key]

    def fit_layout(self, releases: Sequence[Release]) -> "TranscriptFeatureMap":
        """Fix ``names`` from the usable transcripts among ``releases`` (the estimator's probe releases)."""
        usable = [r for r in releases if isinstance(r, Transcript)]
        if usable and not self.names:
            self(usable)
        return self

    def __call__(self, releases: TranscriptBatch | Sequence[Release], needs: frozenset[int] | None = None
                 ) -> np.ndarray:
        """(m, f) float matrix; NaN → 0, ±∞ → ±10¹²; the last column flags a release that is not a
        transcript (a :class:`~dpaudit.mechanisms.base.Failed` outcome of the execution layer: 1)."""
        if not isinstance(releases, TranscriptBatch):
            items = list(releases)
            good = np.array([isinstance(r, Transcript) for r in items], dtype=bool)
            if not good.all():
                if not good.any() and not self.names:
                    raise InvalidInputError("no transcripts to featurise")
                F_good = self._transcripts([r for r, g in zip(items, good) if g]) if good.any() else None
                F = np.zeros((len(items), len(self.names)))
                if F_good is not None:
                    F[good] = F_good
                F[~good, -1] = 1.0
                return F
            releases = items
        return self._transcripts(releases)

    def _transcripts(self, releases: TranscriptBatch | Sequence[Release]) -> np.ndarray:
        batch = _as_batch(releases)
        if isinstance(batch, TranscriptBatch):
            names, F = self._features(batch, batch.source, dict(batch.config), batch.statistics)
        else:   # ragged transcripts (e.g. a sparse histogram): one at a time, the same function
            if not batch:
                raise InvalidInputError("no transcripts to featurise")
            rows = []
            names = []
            for t in batch:
                names, row = self._features([t], t.source, dict(t.config),
                                            {k: v[None] for k, v in t.statistics.items()})
                rows.append(row[0])
            F = np.vstack(rows)
        names = names + ["failed"]
        F = np.hstack([F, np.zeros((len(F), 1))])
        if not self.names:
            self.names = names
        elif names != self.names:
            raise InvalidInputError("transcripts on D and D′ differ in structure; nothing to compare "
                                    f"({len(names)} features vs {len(self.names)})")
        # ±∞ (a transcript impossible under one hypothesis) becomes ±10¹²: still beyond every
        # finite ratio, and small enough for classifiers to standardise without overflow.
        return np.nan_to_num(np.clip(F, -_INFINITE, _INFINITE), nan=0.0)

    def _features(self, batch: Any, source: str, config: dict[str, Any], stats: dict[str, np.ndarray]
                  ) -> tuple[list[str], np.ndarray]:
        m = len(next(iter(stats.values()))) if stats else 0
        names: list[str] = []
        cols: list[np.ndarray] = []
        replay = self._replay(source, config)
        if replay is not None:
            groups = replay.llr(batch, self.pair.D, self.pair.D_prime)
            total = np.zeros(m)
            for group, values in groups.items():
                values = np.asarray(values, dtype=np.float64).reshape(m, -1)   # may hold ±∞ (impossible)
                with np.errstate(invalid="ignore"):                              # ∞ − ∞: NaN → 0 below
                    group_sum = values.sum(axis=1)
                    total = total + group_sum
                names.append(f"llr[{group}]")
                cols.append(group_sum[:, None])
                if values.shape[1] > 1:
                    names += [f"llr[{group}:{j}]" for j in range(values.shape[1])]
                    cols.append(values)
            names.insert(0, "llr")
            cols.insert(0, total[:, None])
        flat = []
        for key in sorted(stats):
            V = np.asarray(stats[key], dtype=np.float64).reshape(m, -1)
            flat.append(V)
            finite = np.where(np.isfinite(V), V, np.nan)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN rows give NaN (→ 0)
                summary = [np.nanmean(finite, axis=1), np.nanmin(finite, axis=1), np.nanmax(finite, axis=1),
                           np.isnan(finite).mean(axis=1)] if V.shape[1] else [np.zeros(m)] * 4
            names += [f"{key}:{s}" for s in _SUMMARIES]
            cols.append(np.column_stack(summary))
        # The first values of the statistics (sorted by name, flattened), padded with 0: the same
        # columns whatever the transcript's size, so ragged transcripts get the same function.
        values = np.hstack(flat)[:, :_RAW_VALUES] if flat else np.zeros((m, 0))
        names += [f"value[{j}]" for j in range(_RAW_VALUES)]
        cols.append(np.pad(values, ((0, 0), (0, _RAW_VALUES - values.shape[1]))))
        return names, np.hstack(cols) if cols else np.zeros((m, 0))
