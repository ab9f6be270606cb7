"""Replay: the same (X, seed) must give the same release — part of the mechanism contract.

:func:`replay_findings` draws a per-release draw again late in a run, in a
process whose history differs (a :func:`decoy` of the data first), and
compares the releases by :func:`release_digest`: any that differ are a
``nondeterministic`` finding (state kept between calls, or randomness not
drawn from the generator the code was given).  Code that states it draws its
own randomness is not replayed; an ``own-randomness`` note says so.
"""

from __future__ import annotations

import hashlib
from typing import Any, Hashable

import numpy as np

from dpaudit.mechanisms.base import Failed, InvalidInputError, Release, Spans

from .findings import Findings
from .isolation import Draw, draw_releases
from .seeds import Stream

__all__ = ["OWN_RANDOMNESS", "decoy", "release_digest", "replay_findings"]


def release_digest(release: Release) -> bytes:
    """A fingerprint of a release's values (exact: equal digests ⇔ equal releases)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(release.kind.encode())
    if isinstance(release, Failed):
        h.update(release.reason.encode())
        return h.digest()
    if isinstance(release, Spans):
        arrays = [release.origin, np.asarray([release.width]), np.asarray(release.shape), *release.cells]
    else:
        arrays = [np.asarray(v) for v in vars(release).values() if isinstance(v, np.ndarray)]
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.digest()


def decoy(X: np.ndarray) -> np.ndarray:
    """Data that differs from ``X`` in its values (one record fewer; two copies of a single record)."""
    return X[:-1] if len(X) >= 2 else np.concatenate([X, X])


OWN_RANDOMNESS = ("stated to draw its own randomness (not from the generator dpaudit gives it): the same-seed "
                  "replay is not run, so state kept between calls is looked for only by drawing each side of a "
                  "pair in its own processes, and these releases do not reproduce from --seed")


def replay_findings(mechanism: Any, X: np.ndarray, seed: np.random.SeedSequence, first: Draw, *,
                    lane: Hashable = None) -> Findings:
    """Replay the per-release draw ``first`` with the same (X, seed); ``nondeterministic`` if any differs.

    Run it late (after the bulk of the calls), so that state kept between
    calls — a call counter, a cache, global random numbers — has had time to
    change what the same call returns.

    ``lane``: the lane ``first`` was drawn in.  For code in workers the replay
    then runs in a lane of its own, ``(lane, "replay")``, whose process first
    draws on a :func:`decoy` of ``X``: the same (X, seed) must give the same
    release in a process whose history differs, which catches code that
    remembers its first input (a replay in ``first``'s own process could not:
    it remembers ``X`` there).  ``lane=None`` replays in the shared lane.

    Code that draws its own randomness (``mechanism.own_randomness``: stated by
    the user or by the code's shape) cannot give the same release twice: it is
    not replayed, and an ``own-randomness`` note says so instead.
    """
    replay_lane: Hashable = None
    findings = Findings()
    if getattr(mechanism, "own_randomness", False) is True:
        findings.add_calls(len(first.releases))
        findings.record("own-randomness", OWN_RANDOMNESS, count=len(first.releases))
        return findings
    if lane is not None and getattr(mechanism, "isolates_calls", False):
        replay_lane = (lane, "replay")
        try:
            findings.merge(draw_releases(mechanism, decoy(X), Stream.REPLAY_DECOY.of(seed), first.requested,
                                         per_release=True, lane=replay_lane).findings)
        except InvalidInputError:  # refuses the decoy: the replay's process has still seen it
            pass
    again = draw_releases(mechanism, X, seed, first.requested, per_release=True, lane=replay_lane)
    findings.merge(again.findings)
    before = {int(i): release_digest(r) for i, r in zip(first.indices, first.releases)}
    after = {int(i): release_digest(r) for i, r in zip(again.indices, again.releases)}
    common = sorted(set(before) & set(after))
    differ = [i for i in common if before[i] != after[i]]
    if differ:
        findings.record("nondeterministic", f"{len(differ)} of {len(common)} replayed calls returned a different "
                        "release for the same data and seed (state kept between calls, or randomness not "
                        "drawn from the generator it was given)", count=len(differ))
    return findings
