"""numpy's legacy global random state and ``random``'s, seeded from one call's entropy for that call only.

Imported by ``_worker_calls.py`` (in the worker, possibly another
interpreter) and by :mod:`.isolation`: standard library and numpy only.

Coupled screening calls run D and D′ on the same entropy words, so that the
noise the code draws from its ``rng`` cancels.  Wrapped code often draws
from ``numpy.random.*`` or ``random.*`` instead; :class:`SeededGlobals`
seeds both from the call's words for the duration of the call, so those
draws are coupled too.  The seeds are a hash of the words
(BLAKE2b, personalised), never draws from the generator the code is given:
the code's own stream is unchanged, and the same words give the same global
streams in a worker and in this process.  The states held before are put
back afterwards, however the call ends.
"""

from __future__ import annotations

import hashlib
import random
from types import TracebackType
from typing import Any

import numpy as np

__all__ = ["SeededGlobals", "global_seed"]


def global_seed(words: Any) -> bytes:
    """32 bytes that seed the global generators of the call whose entropy is ``words`` (k little-endian uint32)."""
    data = np.ascontiguousarray(np.asarray(words, dtype="<u4")).tobytes()
    return hashlib.blake2b(data, digest_size=32, person=b"dpaudit-globals").digest()


class SeededGlobals:
    """``with SeededGlobals(words): call()`` — numpy's and ``random``'s global state seeded from ``words``."""

    def __init__(self, words: Any) -> None:
        self.seed = global_seed(words)
        self._numpy: Any = None
        self._random: Any = None

    def __enter__(self) -> "SeededGlobals":
        self._numpy, self._random = np.random.get_state(), random.getstate()
        np.random.seed(np.frombuffer(self.seed, dtype="<u4").astype(np.uint32))
        random.seed(int.from_bytes(self.seed, "little"))
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        np.random.set_state(self._numpy)
        random.setstate(self._random)
