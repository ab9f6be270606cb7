"""The seed table (:mod:`dpaudit.execution.seeds`): every stream keeps the spawn key it had, streams under one
parent do not share a key but where the table says so, and the table is the only place a key is written.

The keys below are the literals the code used before the table (``SeedSequence(seed, spawn_key=(3, r))`` and
the like): a change to any of them changes every number of a run at the same seed, so it fails here first.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import dpaudit.mechanisms
from dpaudit.attack.registry import ATTACKS
from dpaudit.attacks.epsilon import Budget, EpsilonEstimate, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.execution.seeds import (
    ATTACK_KEYS,
    DOMAIN_CHECK_KEY,
    REFUSAL_CERTIFICATION_KEY,
    Stream,
    as_seed_sequence,
    seed_record,
)
from dpaudit.mechanisms.base import InvalidInputError

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("mechanisms", "execution", "attacks", "dpaudit")
TABLE = ROOT / "execution" / "seeds.py"
# A call that passes a spawn on without choosing a key: the audited code's own generator spawning children.
PASSED_ON = {("execution/worker_rng.py", "spawn")}

# Stream -> (slots, the spawn key it had), as the code wrote it before the table.
TODAY = {
    Stream.REPEAT: ((4,), (4,)),                                   # SeedSequence(seed).spawn(repeats)[4]
    Stream.ATTACK_REPLAY_PROBE: ((), (2**31 - 2,)),                 # attack/run.py PROBE_KEY
    Stream.ESTIMATE_RECORDS: ((), (2**20, 0)),                      # attack/certify.py _SEED_KEY, spawn(2)[0]
    Stream.ESTIMATE_SEED: ((), (2**20, 1)),                         # ... spawn(2)[1]
    Stream.AUDIT_SMOKE: ((), (0,)),
    Stream.AUDIT_UTILITY: ((2,), (3, 2)),
    Stream.AUDIT_RELEASE_FIGURE: ((), (4,)),
    Stream.AUDIT_REPLAY_PROBE: ((), (5,)),
    Stream.SWEEP_CELL: ((1, 7), (1, 7)),                            # cell_seed(seed, i, r)
    Stream.SWEEP_RELEASE_FIGURE: ((1,), (1, 2**31 - 1)),            # cell_seed(seed, i, 2**31 - 1)
    Stream.SWEEP_REPLAY_PROBE: ((), (0, 2**31 - 3)),                # cell_seed(seed, 0, PROBE_CELL)
    Stream.SWEEP_REFERENCE_CLUSTERS: ((), (2**31 - 1,)),
    Stream.SPLIT: ((), (0,)),                                       # seed.spawn(4 + len(ATTACKS))[0]
    Stream.TARGET_PIPELINE: ((), (1,)),
    Stream.SHADOW_REFERENCE: ((), (2,)),
    Stream.ATTACK: (("rmia",), (8,)),
    Stream.REFERENCE_RUNS: ((), (10,)),                             # ... [-1]
    Stream.REFERENCE_CONTEXT: ((), (0,)),                           # reference_runs.prepare: seed.spawn(3)
    Stream.REFERENCE_POPULATION: ((), (1,)),
    Stream.REFERENCE_DRAWS: ((), (2,)),
    Stream.REFERENCE_INCLUSION: ((), (0,)),                         # run_references: seed.spawn(2)[0]
    Stream.REFERENCE_RUN: ((5,), (1, 5)),                           # chunk_seeds(spawn(2)[1], n)[5]
    Stream.TARGET_RELEASE: ((), (0,)),                              # MechanismPipeline.fit: ss.spawn(2)
    Stream.TARGET_MODEL: ((), (1,)),
    Stream.SELECTION_FEATURES: ((3, 1, 0), (0, 3, 1, 0)),           # child_seed(root, 0, *key, side)
    Stream.CERTIFICATION: ((1, 2, 2), (1, 1, 2, 2)),                # child_seed(root, 1, side, look, *cert_key)
    Stream.PROBE: ((), (2,)),
    Stream.PAIRS: ((), (3,)),
    Stream.WARM_UP: ((), (3, 1)),
    Stream.MODEL_SEARCH: ((), (4,)),
    Stream.PAIR_PROBE: ((DOMAIN_CHECK_KEY + 2, 1), (5, 1_000_002, 1)),
    Stream.CERTIFICATION_SIZES: ((), (6,)),
    Stream.CALIBRATION: ((3,), (7, 3)),
    Stream.CALIBRATION_START: ((), (7, 99)),
    Stream.SELECTION_TALLY: ((2, 0, 1), (8, 2, 0, 1)),
    Stream.COUPLED_SCREENING: ((4, 0), (10, 4, 0)),                 # sampling.COUPLED_STAGE
    Stream.TRACED_SCREENING: ((4, 0), (11, 4, 0)),                  # sampling.TRACED_STAGE
    Stream.OPAQUE_RELEASES: ((), (0,)),
    Stream.OPAQUE_CALLS: ((), (1,)),
    Stream.REPLAY_DECOY: ((), (7,)),
}
# Streams that share another stream's key under the same parent, as they always did (the numbers stay the same):
# three audit parts and the audit's repeats 0, 4 and 5 (a smoke release, a figure, the replay probe: none of them
# a test's sample), and the utility releases of audit and the cells of sweep (two commands: never in one run).
SHARED = {frozenset({"AUDIT_SMOKE", "REPEAT"}), frozenset({"AUDIT_RELEASE_FIGURE", "REPEAT"}),
          frozenset({"AUDIT_REPLAY_PROBE", "REPEAT"}), frozenset({"AUDIT_UTILITY", "SWEEP_CELL"})}


def test_every_stream_has_the_key_it_had() -> None:
    assert set(TODAY) == set(Stream), "a stream without its key in TODAY (or one removed from the table)"
    for stream, (slots, key) in TODAY.items():
        assert stream.key(*slots) == key, stream.name
    assert REFUSAL_CERTIFICATION_KEY == (2,) and DOMAIN_CHECK_KEY == 1_000_000


def test_a_stream_is_the_sequence_numpy_spawned() -> None:
    """``of`` gives the very SeedSequence ``spawn`` did (same entropy, key and pool, hence the same states)."""
    spawned = np.random.SeedSequence(11).spawn(5)[4]
    mine = Stream.REPEAT.of(11, 4)
    assert (mine.entropy, mine.spawn_key, mine.pool_size) == (spawned.entropy, spawned.spawn_key, spawned.pool_size)
    assert np.array_equal(mine.generate_state(8), spawned.generate_state(8))
    split, target, ref, *attacks, reference = spawned.spawn(4 + len(ATTACKS))  # prepare_trial, before the table
    for name, old in zip(ATTACKS, attacks):
        assert Stream.ATTACK.of(spawned, name).spawn_key == old.spawn_key, name
    assert Stream.REFERENCE_RUNS.of(spawned).spawn_key == reference.spawn_key
    assert Stream.SPLIT.of(spawned).spawn_key == split.spawn_key and Stream.SHADOW_REFERENCE.of(spawned).spawn_key \
        == ref.spawn_key and Stream.TARGET_PIPELINE.of(spawned).spawn_key == target.spawn_key


def test_attacks_are_keyed_by_name() -> None:
    assert set(ATTACK_KEYS) == set(ATTACKS)
    other = {stream.key() for stream in Stream if stream.parent == Stream.ATTACK.parent and stream is not Stream.ATTACK}
    new = [Stream.ATTACK.key(name) for name in ("membership-by-margin", "gradient", "shokri-2")]
    legacy = [Stream.ATTACK.key(name) for name in ATTACKS]
    assert len(set(new + legacy)) == len(new) + len(legacy) and not other & set(new + legacy)
    assert all(key[0] >= 2**32 for key in new)  # above every numbered key


def _keys_under(parent: str) -> dict[str, set[tuple[int, ...]]]:
    """Every key each stream under ``parent`` takes for slots 0 … 11 (and the attacks' names)."""
    out: dict[str, set[tuple[int, ...]]] = {}
    for stream in Stream:
        if stream.parent != parent:
            continue
        slots = sum(isinstance(k, str) for k in stream.template)
        values: list[tuple[int | str, ...]] = ([(name,) for name in ATTACKS] if stream is Stream.ATTACK else
                                               [tuple(int(v) for v in np.unravel_index(i, (12,) * slots))
                                                for i in range(12 ** slots)])
        out[stream.name] = {stream.key(*v) for v in values}
    return out


@pytest.mark.parametrize("parent", sorted({s.parent for s in Stream}))
def test_streams_under_one_parent_do_not_share_keys(parent: str) -> None:
    keys = _keys_under(parent)
    names = sorted(keys)
    shared = {frozenset({a, b}) for i, a in enumerate(names) for b in names[i + 1:] if keys[a] & keys[b]}
    assert shared <= SHARED, f"streams sharing a key under {parent}: {sorted(map(sorted, shared - SHARED))}"


def test_slots_are_checked() -> None:
    with pytest.raises(TypeError, match="SWEEP_CELL takes ε index, repeat"):
        Stream.SWEEP_CELL.key(1)
    for bad in (True, -1, 1.5, "7"):
        with pytest.raises(InvalidInputError, match="seed must be"):
            as_seed_sequence(bad)


def test_a_result_states_its_seed() -> None:
    assert seed_record(np.random.SeedSequence(5)) == 5
    assert seed_record(np.random.SeedSequence(5, spawn_key=(1, 2))) == "SeedSequence(5, spawn_key=(1, 2))"
    shown = seed_record(np.random.SeedSequence([3, 4], pool_size=8))
    assert shown == "SeedSequence([3, 4], spawn_key=(), pool_size=8)"


def _numbers(result: EpsilonEstimate) -> object:
    """The result as JSON without what the clock says (``*_seconds``) or the seed it states."""
    def drop(x: object) -> object:
        if isinstance(x, dict):
            return {k: drop(v) for k, v in x.items() if not str(k).endswith("seconds") and k != "seed"}
        return [drop(v) for v in x] if isinstance(x, list) else x
    return drop(json.loads(json.dumps(result.to_dict(), default=str)))


def test_estimate_epsilon_takes_a_seed_sequence() -> None:
    """An int s and SeedSequence(s) are the same run; a stream of the caller's is used as it is."""
    mech = dpaudit.mechanisms.get("laplace", epsilon=1.0)
    X = np.array([[0.1], [0.4], [0.9]])
    kw = dict(budget=Budget(samples=400, selection_samples=100), search=SearchSpace(bounds=(0.0, 1.0)),
              run=RunSettings(progress=False))
    by_int = estimate_epsilon(mech, X, seed=5, **kw)
    by_sequence = estimate_epsilon(mech, X, seed=np.random.SeedSequence(5), **kw)
    assert _numbers(by_int) == _numbers(by_sequence) and by_int.seed == by_sequence.seed == 5
    stream = Stream.SWEEP_CELL.of(5, 0, 1)
    first = estimate_epsilon(mech, X, seed=stream, **kw)
    again = estimate_epsilon(mech, X, seed=Stream.SWEEP_CELL.of(5, 0, 1), **kw)
    assert _numbers(first) == _numbers(again) and first.seed == "SeedSequence(5, spawn_key=(0, 1))"
    assert stream.n_children_spawned == 0  # the caller's sequence is left as it was


# ---------------------------------------------------------------- the table is the only place a key is written
def _written_keys(path: Path, source: str | None = None) -> list[str]:
    """Calls in ``path`` that choose a spawn key: ``SeedSequence(..., spawn_key=…)``, ``x.spawn(n)``, ``child_seed(…)``."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    rel = path.relative_to(ROOT).as_posix()
    enclosing: dict[ast.AST, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                enclosing.setdefault(inner, node.name)
    hits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if ((any(k.arg == "spawn_key" for k in node.keywords) or name in ("spawn", "child_seed"))
                and (rel, enclosing.get(node, "")) not in PASSED_ON):
            hits.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return hits


def test_the_seed_table_is_the_only_place_a_spawn_key_is_written() -> None:
    found = [hit for folder in LIBRARY for path in sorted((ROOT / folder).rglob("*.py"))
             if path != TABLE and ".venvs" not in path.parts for hit in _written_keys(path)]
    assert not found, "spawn keys written outside execution/seeds.py (name the stream in Stream):\n" + "\n".join(found)


@pytest.mark.parametrize("source, expected", [
    ("s = np.random.SeedSequence(seed, spawn_key=(4,))\n", 1),
    ("a, b = root.spawn(2)\n", 1),
    ("x = child_seed(root, 7, i)\n", 1),
    ("x = Stream.PROBE.of(root)\ns = np.random.SeedSequence(int(rng.integers(2**31 - 1)))\n", 0),
    ("h = 'SeedSequence(seed, spawn_key=(i, r))'\n", 0),  # a help text names it: not a key chosen
])
def test_the_key_check_catches_what_it_should(source: str, expected: int) -> None:
    assert len(_written_keys(ROOT / "dpaudit" / "sweep" / "_probe.py", source)) == expected
