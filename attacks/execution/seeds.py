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

import numpy as np

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


def _entropies(seed: np.random.SeedSequence, n: int) -> list[int]:
    """``n`` 128-bit integers from ``seed``'s output stream (a prefix of a longer draw: stable in ``n``)."""
    words = seed.generate_state(_WORDS * int(n), np.uint32).reshape(int(n), _WORDS)
    return [int.from_bytes(row.astype("<u4").tobytes(), "little") for row in words]


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
        self._release_cache: list[int] = []
        self._call_cache: list[int] = []

    def _get(self, cache: list[int], seed: np.random.SeedSequence, i: int) -> int:
        if i >= len(cache):
            cache[:] = _entropies(seed, max(2 * len(cache), i + 1, 16))
        return cache[i]

    def release_entropy(self, i: int) -> int:
        return self._get(self._release_cache, self._release_seed, int(i))

    def call_entropy(self, b: int) -> int:
        return self._get(self._call_cache, self._call_seed, int(b))

    def release(self, i: int) -> np.random.Generator:
        return opaque_generator(self.release_entropy(i))

    def call(self, b: int) -> np.random.Generator:
        return opaque_generator(self.call_entropy(b))
