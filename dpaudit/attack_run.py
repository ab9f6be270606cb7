"""The ``dpaudit attack`` experiment: split, release, attack, score — repeated.

CLI input becomes an :class:`AttackConfig` at once; :func:`run_attack` takes
the config and returns a plain, JSON-ready dict (provenance, dataset summary —
never records —, one entry per attack, warnings, timings).

One repeat (:func:`run_repeat`) is the one-run auditing game of Steinke,
Nasr & Jagielski (NeurIPS 2023) on the thesis set-up (seed 000 §5.3.2 and its
public experiment code): shuffle the records; 75 % become the attacker's
public shadow data; the rest (an even number m of them) are *candidates*,
each a member by an independent fair coin drawn from the split seed.  The
target is the mechanism run on the members (about m/2 of them; the attacker
knows only m), turned into a classifier (:mod:`attacks.targets`).  Every
attack scores the candidates *the same way* (plain records; the thesis code
queried members with their perturbed copies, which rewards telling perturbed
from plain records apart rather than membership): Shokri and Yeom score all
of them, label-only the first ``2 × label_only_queries`` in the seeded
shuffle, a subset chosen without looking at the coins.  Thresholds come from
shadow targets, so each guess depends on the release and public data only,
and the one-run ε bound (:func:`attacks.bounds.epsilon_one_run`) is certified
per repeat and pooled over repeats.  Seeds: ``SeedSequence(seed).spawn(repeats)``;
inside a repeat each attack gets its own child, so the numbers do not depend
on which attacks run or on the worker count.
"""

from __future__ import annotations

import inspect
import math
import shlex
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

import mechanisms
from attacks.metrics import MembershipMetrics, MembershipScores, evaluate
from attacks.reconstruction import ReconstructionResult, default_radius, reconstruct
from attacks.shadow import AttackerKnowledge
from attacks.targets import Reference
from mechanisms.base import Centroids, InvalidInputError, Mechanism, Points, PrivacyLeakWarning, check_epsilon

from .data import datasets, inputs
from .attack_summary import package_versions, summarise

__all__ = ["ATTACKS", "AttackConfig", "Trial", "build_mechanism", "draw_split", "label_only_subset", "load_data", "prepare_trial",
           "run_attack",
           "run_repeat"]

ATTACKS: tuple[str, ...] = ("shokri", "yeom", "label-only", "reconstruction")
MEMBERSHIP_ATTACKS = ("shokri", "yeom", "label-only")
MIN_MEMBERS = 10


@dataclass(frozen=True)
class AttackConfig:
    """Everything ``dpaudit attack`` was asked to do (validated on construction)."""

    mechanism: str
    epsilon: float
    attacks: tuple[str, ...] = ATTACKS
    dataset: str | None = "blobs-2d"
    data: str | None = None
    label_column: str | None = None
    records: int | None = None
    repeats: int = 3
    seed: int = 0
    output: str | None = None
    neighbours: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    shadow_fraction: float = 0.75
    n_shadow: int = 3
    n_estimators: int = 100
    label_only_queries: int = 40
    alpha: float = 0.05

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, name="--eps"))
        attacks = tuple(dict.fromkeys(self.attacks))
        unknown = [a for a in attacks if a not in ATTACKS]
        if unknown or not attacks:
            raise InvalidInputError(
                f"unknown attack {', '.join(unknown) or '(none)'}; choose from {', '.join(ATTACKS)} or all")
        object.__setattr__(self, "attacks", attacks)
        if int(self.repeats) != self.repeats or self.repeats < 1:
            raise InvalidInputError(f"--repeats must be a whole number ≥ 1, got {self.repeats!r}")
        if self.records is not None and (int(self.records) != self.records or self.records < 2):
            raise InvalidInputError(f"--records must be a whole number ≥ 2, got {self.records!r}")
        if not 0.0 < self.shadow_fraction < 1.0:
            raise InvalidInputError(f"shadow fraction must be in (0, 1), got {self.shadow_fraction!r}")
        if (self.dataset is None) == (self.data is None):
            raise InvalidInputError("give either --dataset NAME or --data FILE.csv")
        if self.label_column is not None and self.data is None:
            raise InvalidInputError("--label-column names a column of a --data CSV; built-in datasets carry their own labels")
        if self.n_shadow < 1:
            raise InvalidInputError(f"need at least one shadow model, got {self.n_shadow}")

    @staticmethod
    def parse_attacks(text: str) -> tuple[str, ...]:
        names = tuple(a.strip() for a in text.split(",") if a.strip())
        return ATTACKS if names in ((), ("all",)) else names

    def split_sizes(self, n_records: int) -> tuple[int, int]:
        """(shadow records, m/2) for m candidates: the expected number of members (and of non-members)."""
        n_shadow = int(round(self.shadow_fraction * n_records))
        members = (n_records - n_shadow) // 2
        if members < MIN_MEMBERS or n_shadow < 2 * self.n_shadow:
            need = math.ceil(2 * MIN_MEMBERS / (1 - self.shadow_fraction))
            raise InvalidInputError(
                f"{n_records} records are too few for the attack split ({self.shadow_fraction:.0%} shadow data, "
                f"the rest ≥ {2 * MIN_MEMBERS} candidates, each a member by a fair coin); give at least {need}")
        return n_shadow, members


def load_data(config: AttackConfig) -> datasets.Dataset:
    """The dataset the config names (built-in or CSV), checked for the split."""
    ds = inputs.load_data(config.dataset, None if config.data is None else Path(config.data),
                          label_column=config.label_column, records=config.records, seed=config.seed)
    config.split_sizes(ds.n_records)
    return ds


def _mechanism_class(spec: str) -> Any:
    for info in mechanisms.describe():
        if info.name == spec and ":" in info.target:
            try:
                return mechanisms.registry.load_object(info.target)
            except InvalidInputError:
                return None
    return None


def mechanism_params(config: AttackConfig, ds: datasets.Dataset, k: int) -> dict[str, Any]:
    """Parameters for ``mechanisms.get``: ε and, where the class takes them, the public box and k.

    The dataset's public box goes to every mechanism with a ``bounds`` parameter (it is public,
    and a mechanism's default box may not contain the data); ``--param bounds=null`` restores the
    mechanism's own default (e.g. ``ndlaplace-thesis``'s data-derived box, a leak it is audited for).
    Explicit ``--param`` values always win.
    """
    params: dict[str, Any] = {"epsilon": config.epsilon}
    if config.output is not None:
        params["output"] = config.output
    if config.neighbours is not None:
        params["neighbours"] = config.neighbours
    cls = _mechanism_class(config.mechanism)
    if cls is not None and inspect.isclass(cls):
        sig = inspect.signature(cls).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.values())
        if ds.bounds is not None and ("bounds" in sig or takes_any):
            params["bounds"] = (ds.bounds[0], ds.bounds[1])
        for name in ("k", "n_clusters", "c"):
            if name in sig:
                params[name] = k
        if not takes_any:
            params = {key: v for key, v in params.items() if key in sig or key in ("output", "neighbours")}
    params.update(config.params)  # explicit --param values win
    if params.get("bounds", 0) is None:
        del params["bounds"]
    return params


def build_mechanism(config: AttackConfig, ds: datasets.Dataset, k: int) -> Mechanism:
    """The mechanism the config names, built with :func:`mechanism_params`."""
    return mechanisms.get(config.mechanism, **mechanism_params(config, ds, k))


# ---- one repeat ---------------------------------------------------------------------
@dataclass
class RepeatOutcome:
    """Per-attack results of one repeat: metrics, or the error the attack hit."""

    claim: dict[str, Any] = field(default_factory=dict)
    release_kind: str | None = None
    results: dict[str, MembershipMetrics | ReconstructionResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def label_only_subset(n_candidates: int, config: AttackConfig) -> np.ndarray:
    """Indices of the candidates label-only queries: the first 2q of the seeded shuffle.

    Depends on the candidate count and the config only, never on the coins.
    """
    return np.arange(min(n_candidates, 2 * config.label_only_queries))


def _membership(attack: str, knowledge: AttackerKnowledge, target: Any, trial: "Trial",
                rng: np.random.Generator, config: AttackConfig, claim: Any
                ) -> tuple[MembershipMetrics, dict[str, Any]]:
    """Fit the attack on shadow data, score the candidates, guess at the shadow-chosen threshold."""
    cand, coins = trial.candidates, trial.membership
    common = {"claimed_epsilon": claim.epsilon, "alpha": config.alpha, "delta": claim.delta,
              "candidates": len(cand)}
    if attack == "yeom":
        from attacks.yeom import YeomAttack
        yeom = YeomAttack(n_shadow=config.n_shadow).fit(knowledge, rng)
        scored = MembershipScores(yeom.infer(target, cand), coins)
        return (evaluate(scored, calibration=yeom.calibration_, abstain=True, **common),
                {"variant": yeom.variant_})
    if attack == "shokri":
        from attacks.shokri import ShokriAttack
        shokri = ShokriAttack(n_shadow=config.n_shadow).fit(knowledge, rng)
        scored = MembershipScores(shokri.infer(target, cand), coins)
        return (evaluate(scored, threshold=shokri.threshold, **common),
                {"variant": f"ART shadow models ({config.n_shadow}), attack model {shokri.attack_model_type}"})
    if attack == "label-only":
        from attacks.label_only import LabelOnlyAttack
        lo = LabelOnlyAttack(n_queries=config.label_only_queries).fit(knowledge, rng)
        idx = label_only_subset(len(cand), config)
        scored = MembershipScores(lo.infer(target, cand[idx], rng), coins[idx])
        return (evaluate(scored, calibration=lo.calibration_, threshold=lo.threshold_,
                         abstain=lo.calibration_ is not None, **common),
                {"variant": lo.method_})
    raise InvalidInputError(f"unknown membership attack {attack!r}")


@dataclass(frozen=True, eq=False)
class Trial:
    """One repeat's split, the attacker's knowledge and the target (built from the members).

    ``candidates`` in the seeded shuffle order; ``membership[i]`` is candidate i's coin
    (1 = member); ``members``/``non_members`` are the candidates split by their coins.
    """

    shadow: np.ndarray
    candidates: np.ndarray
    membership: np.ndarray
    members: np.ndarray
    non_members: np.ndarray
    knowledge: AttackerKnowledge
    target: Any  # a fitted attacks.targets.MechanismPipeline
    attack_seeds: dict[str, np.random.SeedSequence]


def draw_split(config: AttackConfig, n_records: int, split_seed: np.random.SeedSequence
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shadow indices, candidate indices in shuffle order, candidate coins) from the split seed.

    A uniform shuffle puts the first records into the shadow data and the next m into the
    candidates; then each candidate gets an independent fair coin (1 = member), drawn after
    the shuffle and used for nothing else.
    """
    n_shadow, half = config.split_sizes(n_records)
    gen = np.random.default_rng(split_seed)
    order = gen.permutation(n_records)
    candidates = order[n_shadow:n_shadow + 2 * half]
    return order[:n_shadow], candidates, gen.integers(0, 2, size=len(candidates))


def prepare_trial(config: AttackConfig, X: np.ndarray, k: int, seed: np.random.SeedSequence,
                  mechanism_factory: Callable[[], Mechanism],
                  bounds: tuple[np.ndarray, np.ndarray] | None = None) -> Trial:
    """Split the records, flip the candidates' membership coins, release the members.

    The shuffle and the coins come from the split seed only; the attacker's knowledge
    (shadow data, public reference, the expected member count m/2) does not depend on the coins.
    All m coins equal (probability 2^(1−m), m ≥ 20) leaves no members or no non-members;
    the attacks then record an error rather than redraw (a redraw would bias the coins).
    """
    split_seed, target_seed, ref_seed, *attack_seeds = seed.spawn(3 + len(ATTACKS))
    shadow_idx, candidate_idx, membership = draw_split(config, len(X), split_seed)
    half = config.split_sizes(len(X))[1]
    shadow, candidates = X[shadow_idx], X[candidate_idx]
    members, non_members = candidates[membership == 1], candidates[membership == 0]
    mechanism = mechanism_factory()
    reference = Reference.fit(shadow, k, int(ref_seed.generate_state(1)[0] >> 1))
    knowledge = AttackerKnowledge(mechanism, shadow, reference, half, bounds=bounds,
                                  n_estimators=config.n_estimators)
    target = knowledge.pipeline(int(target_seed.generate_state(1)[0] >> 1)).fit(members)
    return Trial(shadow, candidates, membership, members, non_members, knowledge, target,
                 dict(zip(ATTACKS, attack_seeds)))


def run_repeat(config: AttackConfig, X: np.ndarray, k: int, seed: np.random.SeedSequence,
               mechanism_factory: Callable[[], Mechanism],
               bounds: tuple[np.ndarray, np.ndarray] | None = None) -> RepeatOutcome:
    """One split, one target release, every requested attack (errors recorded per attack).

    ``bounds`` is the public box (ART's clip values for the label-only attack); without one
    the attacker uses the range of its shadow data.
    """
    out = RepeatOutcome()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        try:
            trial = prepare_trial(config, X, k, seed, mechanism_factory, bounds)
        except Exception as exc:  # audited code failed: every attack records it
            msg = f"the mechanism failed on the target's records: {type(exc).__name__}: {exc}"
            for name in config.attacks:
                out.errors[name] = msg
            out.warnings = sorted({str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)})
            return out
        mechanism, knowledge, target = trial.knowledge.mechanism, trial.knowledge, trial.target
        shadow, members, non_members = trial.shadow, trial.members, trial.non_members
        out.claim, out.release_kind = mechanism.claim.to_dict(), target.release_.kind
        for name in config.attacks:
            rng = np.random.default_rng(trial.attack_seeds[name])
            start = time.perf_counter()
            try:
                if name == "reconstruction" and not isinstance(target.release_, (Points, Centroids)):
                    out.not_applicable[name] = f"no reconstruction attack for a {target.release_.kind} release"
                elif name == "reconstruction":
                    radius = default_radius(shadow, rng)
                    out.results[name] = reconstruct(mechanism, target.release_, members, non_members,
                                                    shadow, radius, rng)
                else:
                    out.results[name], out.details[name] = _membership(
                        name, knowledge, target, trial, rng, config, mechanism.claim)
            except Exception as exc:  # one attack failing never stops the others
                out.errors[name] = f"{type(exc).__name__}: {exc}"
            out.seconds[name] = time.perf_counter() - start
    out.warnings = sorted({str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)})
    return out


def run_attack(config: AttackConfig, *, command: str = "", progress: bool = False,
               on_update: Callable[[dict[str, Any]], None] | None = None,
               dataset: datasets.Dataset | None = None) -> dict[str, Any]:
    """Run every repeat and return the results dict (``on_update`` sees each partial result).

    ``dataset``: the data ``config`` names, when the caller has already loaded it.
    """
    from . import __version__

    t0 = time.perf_counter()
    if dataset is None:
        ds = load_data(config)
    else:
        ds = dataset
        config.split_sizes(ds.n_records)
    k = ds.default_k
    mech = build_mechanism(config, ds, k)  # fail fast on a bad spec (exit 2)
    params = {key: (str(v) if isinstance(v, Path) else v) for key, v in asdict(config).items()}
    params["attacks"] = list(config.attacks)
    from .report.provenance import provenance

    started = provenance(seed=config.seed)["started"]
    results: dict[str, Any] = {
        "kind": "attack",
        "title": f"Attacks on {config.mechanism} at ε = {config.epsilon:g}",
        "status": "partial",
        "dpaudit_version": __version__,
        "command": command,
        "seed": config.seed,
        "parameters": params,
        "mechanism": {"spec": config.mechanism, "name": getattr(mech, "name", config.mechanism),
                      "repr": repr(mech), "claim": mech.claim.to_dict(),
                      "params": {key: (np.asarray(v).tolist() if key == "bounds" else v)
                                 for key, v in mechanism_params(config, ds, k).items()}},
        "dataset": ds.summary(),
        "setup": {"n_classes": k,
                  "split": {"shadow_records": config.split_sizes(ds.n_records)[0],
                            "candidates": 2 * config.split_sizes(ds.n_records)[1],
                            "membership": "independent fair coin per candidate (from the split seed)"},
                  "queries": "candidates queried with their plain records; shokri and yeom score every "
                             f"candidate, label-only the first {2 * config.label_only_queries} of the seeded "
                             "shuffle (chosen without looking at membership)",
                  "threshold": "chosen on shadow targets trained through the mechanism"},
        "notes": [
            "advantage = TPR − FPR at the threshold chosen on shadow data, mean over repeats; "
            "advantage_same_data is the optimistic maximum over thresholds on the scored data itself",
            f"epsilon_lower_bound: one-run bound (Steinke, Nasr & Jagielski 2023, Thm. 3.1) at confidence "
            f"{1 - config.alpha:.0%} from the correct member/non-member guesses at the shadow-chosen threshold, "
            "pooled over repeats (per repeat in epsilon_lower_bound_per_repeat); it bounds add/remove ε and "
            "is compared with the claim only where epsilon_lower_bound_comparable is true",
            "epsilon_lower_bound_abstaining (yeom; label-only on spans/labels): the same bound for guesses on the "
            "top/bottom shares of the ranked scores only, shares chosen on shadow data; each bound holds at the "
            "stated confidence on its own (the larger of the two at twice the error rate)",
            "advantage, AUC and TPR at low FPR describe the attack on the scored candidates; they are not "
            "certificates",
            "advantage_ceiling = (e^ε − 1)/(e^ε + 1) for the claimed ε; for a metric (d_x) claim it is the "
            "ceiling for two records at unit distance",
        ],
        "attacks": [],
        "warnings": [],
        "package_versions": package_versions(),
        "timings": {},
        "complete": False,
    }
    seeds = np.random.SeedSequence(config.seed).spawn(config.repeats)
    outcomes: list[RepeatOutcome] = []
    from tqdm.auto import tqdm
    bar = tqdm(total=config.repeats, desc=f"attack {config.mechanism} ε={config.epsilon:g}",
               unit="repeat", disable=not progress, leave=False)
    try:
        for r in range(config.repeats):
            outcomes.append(run_repeat(config, ds.X, k, seeds[r], lambda: build_mechanism(config, ds, k),
                                       ds.bounds))
            bar.update(1)
            results["attacks"] = [summarise(name, outcomes, config.alpha) for name in config.attacks]
            results["warnings"] = [{"category": "PrivacyLeakWarning", "message": w}
                                   for w in sorted({w for o in outcomes for w in o.warnings})]
            results["timings"] = {"total_seconds": time.perf_counter() - t0,
                                  "repeats_done": len(outcomes),
                                  "attack_seconds": {n: float(sum(o.seconds.get(n, 0.0) for o in outcomes))
                                                     for n in config.attacks}}
            results["provenance"] = provenance(seed=config.seed, parameters=params, started=started,
                                               durations=results["timings"]["attack_seconds"],
                                               argv=shlex.split(command) if command else None)
            if on_update is not None:
                on_update(results)
    except KeyboardInterrupt:
        results["status"] = "interrupted"
        if on_update is not None:
            on_update(results)
        raise
    finally:
        bar.close()
    results["complete"] = True
    results["status"] = "complete"
    if on_update is not None:
        on_update(results)
    return results
