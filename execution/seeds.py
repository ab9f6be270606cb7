"""Seeds: one :class:`numpy.random.SeedSequence` per chunk, and opaque generators for audited code.

Everything random in a run flows from one root ``SeedSequence``.  Chunks are
addressed by a spawn path (:func:`child_seed`), so chunk i gets the same seed
whatever the backend or the worker count.

Audited code must not learn *which* sample it is drawing (selection or
certification, D or D′, which release): a generator seeded by a child
``SeedSequence`` carries that child's ``spawn_key`` in
``rng.bit_generator.seed_seq``.  :class:`OpaqueSeeds` therefore hands out
``default_rng(SeedSequence(e))`` where ``e`` is a 128-bit integer *drawn from*
the auditor's stream — fully determined by the audit seed, but with an empty
spawn key and entropy that looks like any other random number.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .worker_rng import stream_words

__all__ = ["OpaqueSeeds", "child_seed", "chunk_seeds", "chunk_sizes", "opaque_generator", "seed_from_rng"]

_WORDS = 4  # 32-bit words of entropy per opaque generator (128 bits, SeedSequence's pool size)


def child_seed(parent: np.random.SeedSequence, *keys: int) -> np.random.SeedSequence:
    """The child of ``parent`` at spawn path ``keys`` — stateless (unlike ``spawn``)."""
    return np.random.SeedSequence(parent.entropy, spawn_key=tuple(parent.spawn_key) + tuple(int(k) for k in keys),
                                  pool_size=parent.pool_size)


def chunk_seeds(parent: np.random.SeedSequence, n_chunks: int) -> list[np.random.SeedSequence]:
    """One independent seed per chunk, chunk i ↦ ``child_seed(parent, i)``."""
    return [child_seed(parent, i) for i in range(int(n_chunks))]


def chunk_sizes(total: int, chunk_size: int) -> list[int]:
    """Split ``total`` items into chunks of ``chunk_size`` (the last one smaller)."""
    if total <= 0:
        return []
    chunk_size = max(1, int(chunk_size))
    full, rest = divmod(int(total), chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def _entropy_words(seed: np.random.SeedSequence, n: int) -> np.ndarray:
    """``n`` 128-bit entropies from ``seed``'s output stream as rows of four little-endian 32-bit words
    (a prefix of a longer draw: stable in ``n``)."""
    return stream_words(seed, _WORDS * int(n)).reshape(int(n), _WORDS)


def _as_int(words: np.ndarray) -> int:
    return int.from_bytes(np.asarray(words, dtype="<u4").tobytes(), "little")


def opaque_generator(entropy: int) -> np.random.Generator:
    """``default_rng(SeedSequence(entropy))``: no spawn key, nothing but the number itself."""
    return np.random.default_rng(np.random.SeedSequence(int(entropy)))


def seed_from_rng(rng: np.random.Generator) -> np.random.SeedSequence:
    """A seed drawn from a caller's generator (for single releases outside chunked runs)."""
    return np.random.SeedSequence(int.from_bytes(rng.bytes(16), "little"))


class OpaqueSeeds:
    """The opaque generators of one draw of releases, all derived from ``seed``.

    ``release(i)`` seeds release i when the audited code is called once per
    release; ``call(b)`` seeds the b-th vectorised ``release_many`` call.
    Both streams are prefix-stable, so release i gets the same generator
    whether 10 or 10,000 releases are drawn, in one call or in batches.
    """

    def __init__(self, seed: np.random.SeedSequence) -> None:
        self.seed = seed
        self._release_seed = child_seed(seed, 0)
        self._call_seed = child_seed(seed, 1)
        self._release_cache = np.empty((0, _WORDS), dtype=np.uint32)
        self._call_cache = np.empty((0, _WORDS), dtype=np.uint32)

    def _words(self, which: str, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        cache, seed = ((self._release_cache, self._release_seed) if which == "release"
                       else (self._call_cache, self._call_seed))
        index = np.asarray(positions, dtype=np.int64)
        top = int(index.max()) + 1 if index.size else 0
        if top > len(cache):
            cache = _entropy_words(seed, max(2 * len(cache), top, 16))
            setattr(self, f"_{which}_cache", cache)
        return cache[index]

    def release_words(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The entropies of releases ``positions`` as k×4 little-endian uint32 words (what a worker is sent)."""
        return self._words("release", positions)

    def call_words(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The entropies of vectorised calls ``positions``, as :meth:`release_words`."""
        return self._words("call", positions)

    def release_entropy(self, i: int) -> int:
        return _as_int(self.release_words([int(i)])[0])

    def call_entropy(self, b: int) -> int:
        return _as_int(self.call_words([int(b)])[0])

    def release(self, i: int) -> np.random.Generator:
        return opaque_generator(self.release_entropy(i))

    def call(self, b: int) -> np.random.Generator:
        return opaque_generator(self.call_entropy(b))
