"""numpy's legacy global random state and ``random``'s, seeded from one call's entropy for that call only.

Imported by ``_worker_calls.py`` (in the worker, possibly another
interpreter) and by :mod:`.isolation`: standard library and numpy only.

Coupled screening calls run D and D′ on the same entropy words, so that the
noise the code draws from its ``rng`` cancels.  Wrapped code often draws
from ``numpy.random.*`` or ``random.*`` instead; :func:`seed_globals`
seeds both from the call's words before the call, so those draws are coupled
too.  The seeds are a hash of the words (BLAKE2b, personalised), never draws
from the generator the code is given: the code's own stream is unchanged, and
the same words give the same global streams in a worker and in this process.

:class:`SavedGlobals` puts back the states held before a batch of such calls,
however it ends (saving and restoring numpy's state costs ~60 µs, seeding
~12 µs: a batch saves once); :class:`SeededGlobals` does both for one call.
"""

from __future__ import annotations

import hashlib
import random
from types import TracebackType
from typing import Any

import numpy as np

__all__ = ["SavedGlobals", "SeededGlobals", "global_seed", "seed_globals"]


def global_seed(words: Any) -> bytes:
    """32 bytes that seed the global generators of the call whose entropy is ``words`` (k little-endian uint32)."""
    data = np.ascontiguousarray(np.asarray(words, dtype="<u4")).tobytes()
    return hashlib.blake2b(data, digest_size=32, person=b"dpaudit-globals").digest()


def seed_globals(words: Any) -> None:
    """Seed numpy's legacy global state and ``random``'s from the entropy ``words`` of the call about to run."""
    seed = global_seed(words)
    np.random.seed(np.frombuffer(seed, dtype="<u4").astype(np.uint32))
    random.seed(int.from_bytes(seed, "little"))


class SavedGlobals:
    """``with SavedGlobals(): calls()`` — numpy's and ``random``'s global states as they were before, afterwards."""

    def __init__(self) -> None:
        self._numpy: Any = None
        self._random: Any = None

    def __enter__(self) -> "SavedGlobals":
        self._numpy, self._random = np.random.get_state(), random.getstate()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        np.random.set_state(self._numpy)
        random.setstate(self._random)


class SeededGlobals(SavedGlobals):
    """``with SeededGlobals(words): call()`` — one call with the global states seeded from ``words``, then put back."""

    def __init__(self, words: Any) -> None:
        super().__init__()
        self.words = words

    def __enter__(self) -> "SeededGlobals":
        super().__enter__()
        seed_globals(self.words)
        return self
