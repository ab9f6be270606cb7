"""The seed table: every random stream of a run named, with the spawn key it has; and opaque generators.

Everything random in a run flows from one root ``SeedSequence`` (the command's ``--seed``, or the seed given
to :func:`~dpaudit.attacks.epsilon.estimate_epsilon`).  Each part of the run draws from a child of it named in
:class:`Stream` — ``Stream.AUDIT_SMOKE.of(seed)``, ``Stream.AUDIT_UTILITY.of(seed, r)`` — and this table is the
only place a spawn key is written (a test reads the source tree for any other).  A stream is addressed by
its spawn path (:func:`child_seed`, stateless), so chunk i of a draw gets the same seed whatever the backend
or the worker count, and a part's numbers do not depend on which other parts ran.

Audited code must not learn *which* sample it is drawing (selection or
certification, D or D′, which release): a generator seeded by a child
``SeedSequence`` carries that child's ``spawn_key`` in
``rng.bit_generator.seed_seq``.  :class:`OpaqueSeeds` therefore hands out
``default_rng(SeedSequence(e))`` where ``e`` is a 128-bit integer *drawn from*
the auditor's stream — fully determined by the audit seed, but with an empty
spawn key and entropy that looks like any other random number.
"""

from __future__ import annotations

import zlib
from enum import Enum
from typing import Sequence

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError

from .worker_rng import stream_words

__all__ = ["ATTACK_KEYS", "DOMAIN_CHECK_KEY", "REFUSAL_CERTIFICATION_KEY", "OpaqueSeeds", "Stream", "as_seed_sequence",
           "child_seed", "chunk_seeds", "chunk_sizes", "opaque_generator", "seed_from_rng", "seed_record"]

_WORDS = 4  # 32-bit words of entropy per opaque generator (128 bits, SeedSequence's pool size)

# The parents a stream is a child of (Stream.parent).
_RUN = "the run's seed"                          # a command's --seed
_REPEAT = "a repeat's seed"                      # Stream.REPEAT, or the seed a sweep cell draws for its attacks
_REFERENCES = "the reference runs' seed"         # Stream.REFERENCE_RUNS, or one a per-record attack draws alone
_REFERENCE_DRAWS = "the reference draws' seed"   # Stream.REFERENCE_DRAWS
_TARGET = "a target's seed"                      # MechanismPipeline.fit: SeedSequence([its seed, the data's digest])
_ESTIMATE = "the estimate's seed"                # estimate_epsilon's seed
_DRAW = "a draw's seed"                          # draw_releases's seed (a chunk's, a probe's)

# The attacks' keys under a repeat's seed: the positions the first releases gave them (3 + their place in the
# attack list then), kept so that every number stays the same.  A name not here keys its stream by the name
# itself (_name_key): adding an attack moves no other attack's seed.
ATTACK_KEYS = {"shokri": 3, "yeom": 4, "label-only": 5, "reconstruction": 6, "lira": 7, "rmia": 8, "tracing": 9}
DOMAIN_CHECK_KEY = 1_000_000     # under Stream.PAIR_PROBE: the pair key of domain check i is DOMAIN_CHECK_KEY + i
REFUSAL_CERTIFICATION_KEY = (2,)  # under Stream.CERTIFICATION: a refusal's, when a pair with releases is certified too


class Stream(Enum):
    """One named stream: ``(parent, spawn key, what it seeds)``.

    ``Stream.X.of(parent, *slots)`` is the ``SeedSequence`` at ``parent``'s spawn path ``key``: the key's
    named slots (strings) are filled by ``slots`` in order, and any further slots extend the key (a stream's
    own sub-streams: a pair, a side, a look).  An int slot is its own key; a name's key is :data:`ATTACK_KEYS`'
    or derived from the name (:func:`_name_key`).  Streams under one parent never share a key, except where a
    note says so: the keys are those of earlier releases, so the numbers stay the same at the same seed.
    """

    # ---- children of the run's seed ----
    REPEAT = (_RUN, ("repeat",), "attack repeat r (attack, audit): its split, target and attacks")
    ATTACK_REPLAY_PROBE = (_RUN, (2**31 - 2,), "attack: the replay probe's releases")
    ESTIMATE_RECORDS = (_RUN, (2**20, 0), "attack, audit: the records the ε estimate runs on")
    ESTIMATE_SEED = (_RUN, (2**20, 1), "attack, audit: the ε estimate's seed (an int, as estimate-eps takes)")
    AUDIT_SMOKE = (_RUN, (0,), "audit: the smoke part's release (the key of repeat 0, as it always was)")
    AUDIT_UTILITY = (_RUN, (3, "repeat"), "audit: the utility part's release r (a sweep cell's key: another command)")
    AUDIT_RELEASE_FIGURE = (_RUN, (4,), "audit: the 2-D release figure (the key of repeat 4, as it always was)")
    AUDIT_REPLAY_PROBE = (_RUN, (5,), "audit: the replay probe's releases (the key of repeat 5, as it always was)")
    SWEEP_CELL = (_RUN, ("ε index", "repeat"), "sweep: cell (i, r) — its release, clusterers and attacks")
    SWEEP_RELEASE_FIGURE = (_RUN, ("ε index", 2**31 - 1), "sweep: the 2-D release figure at ε index i")
    SWEEP_REPLAY_PROBE = (_RUN, (0, 2**31 - 3), "sweep: the replay probe's releases")
    SWEEP_REFERENCE_CLUSTERS = (_RUN, (2**31 - 1,), "sweep: the clusterers' seed on the plain data")
    # ---- children of a repeat's seed ----
    SPLIT = (_REPEAT, (0,), "the shuffle into shadow data and candidates, and the membership coins")
    TARGET_PIPELINE = (_REPEAT, (1,), "the target's seed (its release and classifier)")
    SHADOW_REFERENCE = (_REPEAT, (2,), "the reference clustering of the shadow data")
    ATTACK = (_REPEAT, ("attack",), "each attack's own generator, by the attack's name")
    REFERENCE_RUNS = (_REPEAT, (10,), "LiRA's and RMIA's shared reference runs")
    # ---- children of the reference runs' seed (attacks.membership.reference_runs) ----
    REFERENCE_CONTEXT = (_REFERENCES, (0,), "the distance scale of the scores")
    REFERENCE_POPULATION = (_REFERENCES, (1,), "the population records drawn from the public data")
    REFERENCE_DRAWS = (_REFERENCES, (2,), "the runs themselves")
    REFERENCE_INCLUSION = (_REFERENCE_DRAWS, (0,), "which candidates each run includes")
    REFERENCE_RUN = (_REFERENCE_DRAWS, (1, "run"), "run k's releases, whatever the chunking")
    # ---- children of a target's seed (attacks.targets.MechanismPipeline) ----
    TARGET_RELEASE = (_TARGET, (0,), "the target's one release")
    TARGET_MODEL = (_TARGET, (1,), "the classifier built from the release")
    # ---- children of the estimate's seed (attacks.epsilon) ----
    SELECTION_FEATURES = (_ESTIMATE, (0,), "selection releases of a pair's side, featurised (+ pair key, side)")
    CERTIFICATION = (_ESTIMATE, (1, "side"), "certification releases (+ look when > 0, + a second certification's key)")
    PROBE = (_ESTIMATE, (2,), "the first releases on X, and their replay at the end")
    PAIRS = (_ESTIMATE, (3,), "the candidate pairs (constructions, generic pairs)")
    WARM_UP = (_ESTIMATE, (3, 1), "the public dataset worker templates are warmed up on")
    MODEL_SEARCH = (_ESTIMATE, (4,), "the model-based search's optimiser")
    PAIR_PROBE = (_ESTIMATE, (5,), "a candidate pair's probe releases (+ pair key, side)")
    CERTIFICATION_SIZES = (_ESTIMATE, (6,), "the rate ratio's Poisson sample sizes")
    CALIBRATION = (_ESTIMATE, (7, "draw"), "the calibration's timed draws")
    CALIBRATION_START = (_ESTIMATE, (7, 99), "the calibration's first, untimed call")
    SELECTION_TALLY = (_ESTIMATE, (8,), "selection releases counted where they are drawn (+ pair key, side)")
    COUPLED_SCREENING = (_ESTIMATE, (10,), "coupled screening draws, D and D′ on shared streams (+ pair key)")
    TRACED_SCREENING = (_ESTIMATE, (11,), "traced coupled draws that name where a pair leaks (+ pair key)")
    # ---- children of a draw's seed (execution) ----
    OPAQUE_RELEASES = (_DRAW, (0,), "the entropies of the draw's single releases")
    OPAQUE_CALLS = (_DRAW, (1,), "the entropies of the draw's vectorised calls")
    REPLAY_DECOY = (_DRAW, (7,), "the decoy data the replay's process sees first")

    def __init__(self, parent: str, key: tuple[int | str, ...], seeds: str) -> None:
        self.parent = parent
        self.template = key
        self.seeds = seeds

    def key(self, *slots: int | str) -> tuple[int, ...]:
        """The spawn key under the parent: the template's named slots filled by ``slots``, the rest appended."""
        names = [k for k in self.template if isinstance(k, str)]
        if len(slots) < len(names):
            raise TypeError(f"Stream.{self.name} takes {', '.join(names)}; got {len(slots)} value(s)")
        given = iter(slots)
        filled = [_slot(next(given)) if isinstance(k, str) else k for k in self.template]
        return tuple(filled) + tuple(_slot(s) for s in given)

    def of(self, parent: np.random.SeedSequence | int, *slots: int | str) -> np.random.SeedSequence:
        """This stream of ``parent`` (a ``SeedSequence``, or the int seed one is made of)."""
        return child_seed(as_seed_sequence(parent), *self.key(*slots))


def _slot(value: int | str) -> int:
    return _name_key(value) if isinstance(value, str) else int(value)


def _name_key(name: str) -> int:
    """A name's key: :data:`ATTACK_KEYS`', else 2³² + CRC-32 of the name (above every numbered key)."""
    return ATTACK_KEYS.get(name, 2**32 + zlib.crc32(name.encode("utf-8")))


def as_seed_sequence(seed: np.random.SeedSequence | int) -> np.random.SeedSequence:
    """``seed`` itself when it is a ``SeedSequence``, else ``SeedSequence(seed)`` (a non-negative int)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise InvalidInputError(f"seed must be a non-negative int or a numpy.random.SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def seed_record(seed: np.random.SeedSequence) -> int | str:
    """How a result states the seed it ran from: the int of ``SeedSequence(int)``, else the expression that
    rebuilds the sequence (entropy, spawn key, pool size)."""
    entropy, key, pool = seed.entropy, tuple(int(k) for k in seed.spawn_key), int(seed.pool_size)
    if isinstance(entropy, int) and not key and pool == 4:
        return int(entropy)
    return f"SeedSequence({entropy!r}, spawn_key={key!r}" + (f", pool_size={pool})" if pool != 4 else ")")


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
        self._release_seed = Stream.OPAQUE_RELEASES.of(seed)
        self._call_seed = Stream.OPAQUE_CALLS.of(seed)
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
