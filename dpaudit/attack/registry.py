"""Every attack a run can run, in one table: :data:`REGISTRY`.

An entry says what the workflows, the reports and the facade need to know of an attack: its ``name``
(the command line's and the JSON's), its ``words`` (the reports'), what release it ``needs`` (a
classifier, a vector, points or centroids, any), whether it infers ``membership`` and scores each
record with ``per_record`` reference runs, its ``cost`` in the progress plan, the public class the
facade exports (``api``) and its
``run``: how one repeat runs it (:func:`dpaudit.attack.repeat.run_repeat` calls it with the repeat's
:class:`Call`).  Adding an attack is adding its class (under :mod:`dpaudit.attacks`) and an entry
here; the command line, the reports and ``dpaudit.<Class>`` read the table.

A repeat's seeds are keyed by name: each attack draws from ``Stream.ATTACK.of(repeat seed, name)``
(:mod:`dpaudit.execution.seeds`, the one seed table), so adding an attack moves no other attack's numbers.

The runners load their attack when called: this module imports nothing heavy (the command line's
``--help`` and ``import dpaudit`` read the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    import numpy as np

    from dpaudit.attacks.attack import Progress

__all__ = ["ATTACKS", "MEMBERSHIP_ATTACKS", "NEEDS", "PER_RECORD_ATTACKS", "REGISTRY",
           "AttackEntry", "Call", "applies_to", "attack_words", "check_table", "entry", "facade", "label_only_subset",
           "not_scored", "step_cost"]


class RepeatOptions(Protocol):
    """What a runner reads of the attack options (:class:`dpaudit.options.AttackOptions`)."""

    @property
    def n_shadow(self) -> int: ...

    @property
    def label_only_queries(self) -> int: ...

    @property
    def reference_runs(self) -> int: ...


@dataclass(frozen=True)
class Call:
    """What one attack in one repeat is given besides the trial: the options, its own generator, what
    :func:`~dpaudit.attacks.membership.metrics.evaluate` certifies against (``claimed_epsilon``, ``alpha``,
    ``delta``, ``candidates``), the processes its reference runs may use and the progress hook."""

    options: RepeatOptions
    rng: np.random.Generator
    common: dict[str, Any]
    n_jobs: int = 1
    progress: Progress | None = None


Runner = Callable[[Any, Call], "tuple[Any, dict[str, Any] | None]"]

# What an attack needs of the release: (a test of the release kind before any draw, why not — planned; the
# run-time refusal once the target is built). ``{name}``/``{kind}`` are filled in.
NEEDS: dict[str, tuple[Callable[[str], bool], str, str]] = {
    "classifier": (lambda kind: kind != "vector",
                   "not applicable to a vector release (it queries a classifier; a vector is not one)",
                   "they query a classifier; a {kind} release is not one"),
    "vector": (lambda kind: kind == "vector", "not applicable to a {kind} release ({name} scores vector releases)",
               "vector releases only (this one: {kind})"),
    "points or centroids": (lambda kind: kind in ("points", "centroids"),
                            "not applicable to a {kind} release ({name} needs points or centroids)",
                            "no {name} attack for a {kind} release"),
    "any": (lambda kind: True, "", ""),
}


@dataclass(frozen=True)
class AttackEntry:
    """One attack (see the module's docstring for each field)."""

    name: str
    words: str
    needs: str
    cost: float
    run: Runner
    membership: bool = True
    per_record: bool = False
    per_query: bool = False  # ``cost`` is per label-only query
    api: str | None = None   # "module:Class" exported as dpaudit.<Class>


# --------------------------------------------------------------------------- #
# Runners: one repeat of each attack
# --------------------------------------------------------------------------- #
def _scores(trial: Any, scores: Any, rows: Any = None) -> Any:
    from dpaudit.attacks.membership.metrics import MembershipScores

    if rows is None:
        return MembershipScores(scores, trial.membership, trial.candidate_ids)
    return MembershipScores(scores, trial.membership[rows], trial.candidate_ids[rows])


def _shokri(trial: Any, call: Call) -> tuple[Any, dict[str, Any]]:
    from dpaudit.attacks.membership.metrics import evaluate
    from dpaudit.attacks.membership.shokri import ShokriAttack

    n_shadow = call.options.n_shadow
    shokri = ShokriAttack(n_shadow=n_shadow).fit(trial.knowledge, call.rng, progress=call.progress)
    scored = _scores(trial, shokri.infer(trial.target, trial.candidates))
    return (evaluate(scored, threshold=shokri.threshold, **call.common),
            {"variant": f"ART shadow models ({n_shadow}), attack model {shokri.attack_model_type}",
             "mechanism_calls": n_shadow + 1})


def _yeom(trial: Any, call: Call) -> tuple[Any, dict[str, Any]]:
    from dpaudit.attacks.membership.metrics import evaluate
    from dpaudit.attacks.membership.yeom import YeomAttack

    yeom = YeomAttack(n_shadow=call.options.n_shadow).fit(trial.knowledge, call.rng, progress=call.progress)
    scored = _scores(trial, yeom.infer(trial.target, trial.candidates))
    return (evaluate(scored, calibration=yeom.calibration_, abstain=True, **call.common),
            {"variant": yeom.variant_, "mechanism_calls": call.options.n_shadow})


def label_only_subset(n_candidates: int, options: RepeatOptions) -> Any:
    """Indices of the candidates label-only queries: the first 2q of the seeded shuffle.

    Depends on the candidate count and the options only, never on the coins.
    """
    import numpy as np

    return np.arange(min(n_candidates, 2 * options.label_only_queries))


def _label_only(trial: Any, call: Call) -> tuple[Any, dict[str, Any]]:
    from dpaudit.attacks.membership.label_only import LabelOnlyAttack
    from dpaudit.attacks.membership.metrics import evaluate

    lo = LabelOnlyAttack(n_queries=call.options.label_only_queries).fit(trial.knowledge, call.rng,
                                                                        progress=call.progress)
    idx = label_only_subset(len(trial.candidates), call.options)
    scored = _scores(trial, lo.infer(trial.target, trial.candidates[idx], call.rng, progress=call.progress), idx)
    return (evaluate(scored, calibration=lo.calibration_, threshold=lo.threshold_,
                     abstain=lo.calibration_ is not None, **call.common),
            {"variant": lo.method_, "mechanism_calls": 1})


def _reconstruction(trial: Any, call: Call) -> tuple[Any, None]:
    from dpaudit.attacks.reconstruction import default_radius, reconstruct

    radius = default_radius(trial.shadow, call.rng)
    return (reconstruct(trial.knowledge.mechanism, trial.target.release_, trial.members, trial.non_members,
                        trial.shadow, radius, call.rng, progress=call.progress), None)


def _references(trial: Any, call: Call) -> Any:
    """The repeat's reference runs on its candidates, drawn once and shared by the per-record attacks."""
    if "references" not in trial.cache:
        from dpaudit.attacks.membership.reference_runs import prepare

        knowledge = trial.knowledge
        trial.cache["references"] = prepare(knowledge.mechanism, knowledge.shadow_X, trial.candidates,
                                            knowledge.n_members, call.options.reference_runs, trial.reference_seed,
                                            n_jobs=call.n_jobs, progress=call.progress)
    return trial.cache["references"]


def _per_record(model_class: Any, unit: Callable[[Any], str]) -> Runner:
    """The runner of a per-record likelihood-ratio attack (``unit``: what its score is, given the fitted model)."""
    def run(trial: Any, call: Call) -> tuple[Any, dict[str, Any]]:
        from dpaudit.attacks.membership.metrics import evaluate
        from dpaudit.attacks.membership.record_scores import SCORE_WORDS

        runs = _references(trial, call)
        model = model_class()(n_reference=runs.n_runs)
        model.fit(trial.knowledge, call.rng, trial.candidates, references=runs)
        scored = _scores(trial, model.infer(trial.target, trial.candidates))
        view = f", {model.view_name_}" if runs.n_views > 1 else ""
        details = {"variant": f"{model.mode}, {runs.n_runs} reference runs{view}", "mechanism_calls": runs.calls,
                   "score": SCORE_WORDS.get(runs.kind, runs.kind), "score_unit": unit(model)}
        return (evaluate(scored, calibration=model.calibration_, abstain=True, score_bins=model.score_bins_,
                         **call.common), details)
    return run


def _lira() -> Any:
    from dpaudit.attacks.membership.lira import LiRAAttack

    return LiRAAttack


def _rmia() -> Any:
    from dpaudit.attacks.membership.rmia import RMIAAttack

    return RMIAAttack


def _tracing(trial: Any, call: Call) -> tuple[Any, dict[str, Any]]:
    from dpaudit.attacks.membership.metrics import evaluate
    from dpaudit.attacks.membership.tracing import TracingAttack

    tracing = TracingAttack(n_shadow=max(3, call.options.n_shadow)).fit(trial.knowledge, call.rng,
                                                                         progress=call.progress)
    scored = _scores(trial, tracing.infer(trial.target, trial.candidates))
    return (evaluate(scored, calibration=tracing.calibration_, abstain=True, score_bins=tracing.score_bins_,
                     **call.common),
            {"variant": "learned direction" if tracing.map_.learned else "⟨x − μ, v − v̄⟩",
             "mechanism_calls": tracing.n_shadow})


# --------------------------------------------------------------------------- #
# The table
# --------------------------------------------------------------------------- #
# Listed in the order reports and ``all`` list them.  Costs: seconds of a repeat on 2,000 records on a 2-core
# machine, roughly (the progress plan's units; measured time recalibrates the ETA, dpaudit.progress).
REGISTRY: tuple[AttackEntry, ...] = (
    AttackEntry("shokri", "Shokri", "classifier", 1.6, _shokri,
                api="dpaudit.attacks.membership.shokri:ShokriAttack"),
    AttackEntry("yeom", "Yeom", "classifier", 0.9, _yeom, api="dpaudit.attacks.membership.yeom:YeomAttack"),
    AttackEntry("label-only", "label-only", "classifier", 0.09, _label_only, per_query=True,
                api="dpaudit.attacks.membership.label_only:LabelOnlyAttack"),
    AttackEntry("reconstruction", "reconstruction", "points or centroids", 0.2, _reconstruction,
                membership=False, api="dpaudit.attacks.reconstruction:reconstruct"),
    AttackEntry("lira", "LiRA", "any", 0.5,
                _per_record(_lira, lambda m: "log-likelihood ratio" if m.online
                            else "standard score vs runs without the record"),
                per_record=True, api="dpaudit.attacks.membership.lira:LiRAAttack"),
    AttackEntry("rmia", "RMIA", "any", 0.2, _per_record(_rmia, lambda m: "share of population records dominated"),
                per_record=True, api="dpaudit.attacks.membership.rmia:RMIAAttack"),
    AttackEntry("tracing", "tracing", "vector", 0.2, _tracing,
                api="dpaudit.attacks.membership.tracing:TracingAttack"),
)

ATTACKS: tuple[str, ...] = tuple(e.name for e in REGISTRY)
MEMBERSHIP_ATTACKS: tuple[str, ...] = tuple(e.name for e in REGISTRY if e.membership)
PER_RECORD_ATTACKS: tuple[str, ...] = tuple(e.name for e in REGISTRY if e.per_record)  # share reference runs
_BY_NAME = {e.name: e for e in REGISTRY}


def entry(name: str) -> AttackEntry:
    """The registered attack called ``name`` (a KeyError names the unknown one)."""
    return _BY_NAME[name]


def attack_words(name: str) -> str:
    """The reports' words for an attack (an unknown name: itself)."""
    found = _BY_NAME.get(name)
    return found.words if found is not None else name


def applies_to(name: str, release_kind: str) -> str | None:
    """Why attack ``name`` scores nothing on a ``release_kind`` release, or None when it applies — known before any
    release is drawn (the classifier attacks query what the release becomes, which a vector is not; tracing
    scores vector releases only; LiRA and RMIA score every kind)."""
    found = entry(name)
    scores, why, _ = NEEDS[found.needs]
    return None if scores(release_kind) else why.format(name=found.name, kind=release_kind)


def not_scored(found: AttackEntry, target: Any) -> str | None:
    """Why ``found`` cannot score this built ``target`` (a fitted mechanism pipeline), or None when it can."""
    kind = target.release_.kind
    if found.needs == "classifier" and not target.is_classifier:
        return NEEDS["classifier"][2].format(name=found.name, kind=kind)
    if found.needs == "vector" and target.is_classifier:
        return NEEDS["vector"][2].format(name=found.name, kind=kind)
    if found.needs == "points or centroids":
        from dpaudit.mechanisms.base import Centroids, Points

        if not isinstance(target.release_, (Points, Centroids)):
            return NEEDS["points or centroids"][2].format(name=found.name, kind=kind)
    return None


def step_cost(name: str, label_only_queries: int) -> float:
    """An attack's share of a repeat in the progress plan (1.0 for a name the table does not hold)."""
    found = _BY_NAME.get(name)
    if found is None:
        return 1.0
    return found.cost * label_only_queries if found.per_query else found.cost


def facade() -> dict[str, tuple[str, str]]:
    """``dpaudit.<Class>`` of every attack that exports one: public name → (module, attribute)."""
    out = {}
    for e in REGISTRY:
        if e.api is not None:
            module, attr = e.api.split(":")
            out[attr] = (module, attr)
    return out


def check_table(table: tuple[AttackEntry, ...]) -> None:
    """Names are unique and every ``needs`` is known (checked when this module loads: a bad entry fails at once,
    not in some repeat)."""
    names = [e.name for e in table]
    if len(set(names)) != len(names) or any(e.needs not in NEEDS for e in table):
        raise RuntimeError(f"dpaudit.attack.registry: names must be unique, needs one of {', '.join(NEEDS)}")


check_table(REGISTRY)
