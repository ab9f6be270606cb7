"""Generators for audited code: ``default_rng(SeedSequence(entropy))``, built in bulk.

Imported by ``_worker_calls.py`` (in the worker, possibly another
interpreter) and by :mod:`dpaudit.execution.seeds`: standard library and numpy only.

Release ``i`` of a draw is seeded by 128 bits of entropy, sent as four
little-endian 32-bit words; its generator is
``default_rng(SeedSequence(int(words)))``.  Building one the plain way costs
~8 µs, more than a cheap plug-in function's own call, so
:class:`GeneratorBatch` runs ``SeedSequence``'s hashing vectorised over a
whole request and hands ``PCG64`` the seed words it would have computed: the
same numbers (checked once at import; on any mismatch every generator is built
the plain way), each generator a new object whose ``seed_seq`` is a
``SeedSequence`` reporting the same entropy and an empty spawn key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["GeneratorBatch", "entropy_int", "stream_words"]

_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _M32 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF


def _seed_words(words: np.ndarray) -> np.ndarray:
    """``SeedSequence(e).generate_state(4, uint64)`` for every row of 32-bit entropy words (k×4, little-endian).

    numpy's algorithm (pool of four words, ``mix_entropy``, ``generate_state``)
    on uint32 columns; an entropy of fewer than four words is the same as its
    zero-padded four.
    """
    h = _INIT_A
    sixteen = np.uint32(16)

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal h
        value = value ^ np.uint32(h)
        h = (h * _MULT_A) & _M32
        value = value * np.uint32(h)
        return value ^ (value >> sixteen)

    words = np.asarray(words, dtype=np.uint32).reshape(-1, 4)
    pool = [hashmix(words[:, i]) for i in range(4)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                mixed: np.ndarray = np.uint32(_MIX_L) * pool[dst] - np.uint32(_MIX_R) * hashmix(pool[src])
                pool[dst] = mixed ^ (mixed >> sixteen)
    out = np.empty((len(words), 8), dtype=np.uint32)
    h = _INIT_B
    for i in range(8):
        value = pool[i % 4] ^ np.uint32(h)
        h = (h * _MULT_B) & _M32
        value = value * np.uint32(h)
        out[:, i] = value ^ (value >> sixteen)
    return out.astype("<u4").view("<u8").astype(np.uint64)


def entropy_int(words: np.ndarray) -> int:
    """The 128-bit entropy that little-endian 32-bit ``words`` spell."""
    return sum(int(w) << (32 * i) for i, w in enumerate(np.asarray(words, dtype=np.uint32).ravel()))


class _OpaqueSeedSequence(np.random.SeedSequence):
    """A ``SeedSequence(entropy)`` whose seed words were computed in bulk; the real one is built on first need.

    ``PCG64`` asks it once for ``generate_state(4, uint64)`` and gets the
    precomputed words; anything else (``spawn``, ``pool``, another
    ``generate_state``) goes to a real ``SeedSequence(entropy)``.
    """

    def __init__(self, words: np.ndarray, state: np.ndarray) -> None:  # noqa: D107 - no super(): nothing to mix
        self._words = words
        self._state: np.ndarray | None = state
        self._real: np.random.SeedSequence | None = None

    def _sequence(self) -> np.random.SeedSequence:
        if self._real is None:
            self._real = np.random.SeedSequence(self.entropy)
        return self._real

    entropy = property(lambda self: entropy_int(self._words))
    spawn_key = property(lambda self: ())
    pool_size = property(lambda self: 4)
    n_children_spawned = property(lambda self: self._sequence().n_children_spawned)
    pool = property(lambda self: self._sequence().pool)
    state = property(lambda self: self._sequence().state)

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if self._state is not None and n_words == 4 and (dtype is np.uint64 or np.dtype(dtype) == np.uint64):
            state, self._state = self._state, None
            return state
        return self._sequence().generate_state(n_words, dtype)

    def spawn(self, n_children: int) -> list[Any]:  # plain SeedSequences (numpy types it list[Self])
        return self._sequence().spawn(n_children)

    def __repr__(self) -> str:
        return repr(self._sequence())

    def __reduce__(self) -> Any:
        return self._sequence().__reduce__()


def _plain(words: np.ndarray) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(entropy_int(words)))


class GeneratorBatch:
    """The generators of a request: ``batch[i]`` is ``default_rng(SeedSequence(entropy of words[i]))``, new each time."""

    fast = True  # set at import: False when the bulk path does not give numpy's numbers here

    def __init__(self, words: np.ndarray) -> None:
        self.words = np.ascontiguousarray(np.asarray(words, dtype=np.uint32).reshape(-1, 4))
        self.states = _seed_words(self.words) if GeneratorBatch.fast else None

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i: int) -> np.random.Generator:
        if self.states is None:
            return _plain(self.words[i])
        return np.random.Generator(np.random.PCG64(_OpaqueSeedSequence(self.words[i], self.states[i])))


def _self_check() -> bool:
    words = np.array([[0x9E3779B9, 0x7F4A7C15, 0xF39CC060, 0x5CEDC834], [7, 0, 0, 0]], dtype=np.uint32)
    try:
        batch = GeneratorBatch(words)
        return all(np.array_equal(batch[i].integers(0, 2**63, 4), _plain(words[i]).integers(0, 2**63, 4))
                   and getattr(batch[i].bit_generator.seed_seq, "entropy", None) == entropy_int(words[i])
                   for i in range(2))
    except Exception:  # noqa: BLE001 - another numpy: build generators the plain way
        return False


GeneratorBatch.fast = _self_check()


def stream_words(seed: np.random.SeedSequence, n_words: int) -> np.ndarray:
    """``seed.generate_state(n_words, np.uint32)``, vectorised (numpy loops over the words one by one).

    Word i hashes pool word ``i mod pool_size`` with the i-th and (i+1)-th
    powers of the multiplier: the stream is prefix-stable, as numpy's is.
    """
    pool = np.asarray(seed.pool, dtype=np.uint32)
    consts = np.full(n_words + 1, _MULT_B, dtype=np.uint32)
    consts[0] = _INIT_B
    consts = np.multiply.accumulate(consts, dtype=np.uint32)  # INIT_B · MULT_B^i, modulo 2^32
    value = np.resize(pool, n_words) ^ consts[:-1]
    value *= consts[1:]
    return value ^ (value >> np.uint32(16))
