"""The ``dpaudit attack`` experiment: build the mechanism, run the repeats, gather the results dict.

:func:`run_attack` takes an :class:`~dpaudit.attack.config.AttackConfig` and
returns a plain, JSON-ready dict (provenance, dataset summary — never
records —, one entry per attack (:mod:`dpaudit.attack.summary`), warnings,
timings).  Each repeat is :func:`dpaudit.attack.repeat.run_repeat`; the
one-run ε bound is pooled over repeats.  Repeat r's seed is
``Stream.REPEAT.of(seed, r)`` (:mod:`dpaudit.execution.seeds`), so the numbers do not depend on the
worker count.

The mechanism runs where :class:`~dpaudit.execution.MechanismRecipe` puts it
(built-ins in this process, anything else in a worker process under the
config's timeout).  What the audited code did wrong is in ``findings``: the
calls of every repeat, the replay probe (:class:`~dpaudit.execution.ReplayProbe`,
three releases drawn before the repeats and again after them) and the repeats
each attack could not finish; what failed inside dpaudit itself is in
``internal_errors`` (:mod:`dpaudit.attack.internal`), with tracebacks that the
report folder's ``dpaudit-errors.log`` shows.  ``verdict`` is :mod:`dpaudit.verdicts.attack_rule`'s;
``measured`` is false when no attack finished a single repeat.
"""

from __future__ import annotations

import dataclasses
import inspect
import shlex
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import dpaudit.mechanisms
from dpaudit.attack.internal import in_repeat
from dpaudit.attacks.epsilon import RunSettings
from dpaudit.data import datasets
from dpaudit.execution import (
    Findings,
    MechanismRecipe,
    ReplayProbe,
    RunFindings,
    check_unstated_output,
    close_workers,
)
from dpaudit.execution.seeds import Stream
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import InvalidInputError, Mechanism, PrivacyLeakWarning
from dpaudit.options import AttackingWorkflow
from dpaudit.progress import RunProgress, short_label
from dpaudit.result_shapes import InternalError, claim_record
from dpaudit.run_shapes import RunResults
from dpaudit.verdicts.attack_conclusion import conclude
from dpaudit.verdicts.attack_rule import attack_verdict, statement_count

from .certify import estimate_cost, estimate_for_attack, wants_estimate
from .config import AttackConfig
from .registry import step_cost
from .repeat import RepeatOutcome, run_repeat
from .results import AttackResults, Timings
from .summary import package_versions, run_notes, run_setup, summarise

__all__ = ["ESTIMATE_STEP", "TARGET_COST", "build_mechanism", "estimate_weight", "load_data", "mechanism_params",
           "mechanism_recipe", "progress_for", "repeat_costs", "run_attack"]

def load_data(config: AttackConfig) -> datasets.Dataset:
    """The dataset the config names (built-in or CSV), checked for the split."""
    ds = config.data.load(config.seed)
    config.attack.split_sizes(ds.n_records)
    return ds


def _mechanism_class(spec: str) -> Any:
    for info in dpaudit.mechanisms.describe():
        if info.name == spec and ":" in info.target:
            try:
                return dpaudit.mechanisms.registry.load_object(info.target)
            except InvalidInputError:
                return None
    return None


def mechanism_params(config: AttackConfig, ds: datasets.Dataset, k: int) -> dict[str, Any]:
    """Parameters for ``dpaudit.mechanisms.get``: ε and, where the class takes them, the public box and the number of clusters.

    The dataset's public box goes to every mechanism with a ``bounds`` parameter (it is public,
    and a mechanism's default box may not contain the data); ``--param bounds=null`` restores the
    mechanism's own default (e.g. ``ndlaplace-thesis``'s data-derived box, a leak it is audited for).
    Explicit ``--param`` values always win.
    """
    params: dict[str, Any] = {"epsilon": config.epsilon}
    if config.target.output is not None:
        params["output"] = config.target.output
    if config.claim.neighbours is not None:
        params["neighbours"] = config.claim.neighbours
    cls = _mechanism_class(config.target.mechanism)
    if cls is not None and inspect.isclass(cls):
        sig = inspect.signature(cls).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.values())
        if ds.bounds is not None and ("bounds" in sig or takes_any):
            params["bounds"] = (ds.bounds[0], ds.bounds[1])
        if "n_clusters" in sig:
            params["n_clusters"] = k
        if not takes_any:
            params = {key: v for key, v in params.items() if key in sig or key in ("output", "neighbours")}
    params.update(config.target.params)  # explicit --param values win
    if params.get("bounds", 0) is None:
        del params["bounds"]
    return params


def mechanism_recipe(config: AttackConfig, ds: datasets.Dataset, k: int) -> MechanismRecipe:
    """Where and how the mechanism is built: :func:`mechanism_params` (``--param output=…`` and
    ``neighbours=…`` included), the config's isolation, and how a supervised plug-in gets its labels
    (:meth:`~dpaudit.options.TargetOptions.with_supervision`)."""
    params = mechanism_params(config, ds, k)
    params.pop("epsilon")
    output, neighbours = params.pop("output", None), params.pop("neighbours", None)
    target = config.target.with_supervision(ds, config.data.bounds)
    return dataclasses.replace(target.recipe(config.claim, config.isolation, params), output=output,
                               neighbours=neighbours)


def build_mechanism(config: AttackConfig, ds: datasets.Dataset, k: int) -> Mechanism:
    """The mechanism the config names (in this process or a shared worker, see :func:`mechanism_recipe`)."""
    return mechanism_recipe(config, ds, k).open(config.epsilon)


def _findings(probe: Findings, calls: Findings, outcomes: list[RepeatOutcome], config: AttackConfig,
              not_run: int = 0) -> RunFindings:
    """The run's findings: release calls (probe and repeats), then each attack's unfinished repeats."""
    run = RunFindings().add("release calls", Findings().merge(probe).merge(calls))
    for name in config.attack.attacks:
        errors = [o.errors[name] for o in outcomes if name in o.errors]
        if errors or not_run:
            run.incomplete(f"{name} repeats", len(errors) + not_run, len(outcomes) + not_run, "repeats",
                           errors[0] if errors else "not run: every probe call timed out or crashed")
    return run


ESTIMATE_STEP = "ε estimate"
# Relative cost of building a repeat's target on 2,000 records (the attacks': their registry entries); the ETA
# is recalibrated by the measured time as steps finish (dpaudit.progress).
TARGET_COST = 0.3


def repeat_costs(config: AttackingWorkflow) -> dict[str, float]:
    """A repeat's steps in the progress plan: building the target, then each attack (its registry cost)."""
    return {"target": TARGET_COST, **{name: step_cost(name, config.attack.label_only_queries)
                                      for name in config.attack.attacks}}


def _step_name(repeat: int, config: AttackConfig, name: str) -> str:
    return f"repeat {repeat + 1}/{config.attack.repeats} · {name}"


def progress_for(progress: Any, config: AttackConfig, ds: datasets.Dataset, mech: Mechanism) -> RunProgress:
    """The run's progress display with its plan: every repeat's steps, then the ε estimate."""
    if isinstance(progress, RunProgress):
        bar = progress
    else:
        bar = RunProgress(f"{short_label('attack', config.target.mechanism)} ε={config.epsilon:g}",
                          mode="auto" if progress is True else "off" if not progress else str(progress))
    scale = max(ds.n_records, 200) / 2000.0
    for r in range(config.attack.repeats):
        for name, cost in repeat_costs(config).items():
            bar.add(_step_name(r, config, name), cost * scale)
    if config.epsilon_estimate != "off":
        bar.add(ESTIMATE_STEP, estimate_weight(mech, config))
    return bar


# A timed ε estimate in the progress plan: it stops once more looks would add little, and the main job's used about a
# third of its 60 s budget (19 s of 78 s at load 3 on 2 cores), while a plan unit (Yeom on 2,000 records) took
# 1.3 s there; planned at a quarter of the budget in units, the ETA stays within 2× of what it took.
TIMED_ESTIMATE_UNITS_PER_SECOND = 0.25


def estimate_weight(mech: Mechanism, config: AttackConfig) -> float:
    """The ε estimate's share of the progress plan: :func:`~dpaudit.attack.certify.estimate_cost`, and for a timed
    estimate (no ``--samples``/``--releases``) at least :data:`TIMED_ESTIMATE_UNITS_PER_SECOND` × its budget."""
    budget = config.budget
    cost = estimate_cost(mech, budget.samples, budget.time_budget)
    if budget.samples is None and budget.releases is None and budget.time_budget:
        return max(cost, float(budget.time_budget) * TIMED_ESTIMATE_UNITS_PER_SECOND)
    return cost


def run_attack(config: AttackConfig, *, command: str = "", progress: Any = False,
               on_update: Callable[[RunResults], None] | None = None,
               dataset: datasets.Dataset | None = None) -> AttackResults:
    """Run every repeat and return the results (``on_update`` sees each partial result, serialised).

    ``dataset``: the data ``config`` names, when the caller has already loaded it.
    ``progress``: a :class:`~dpaudit.progress.RunProgress`, ``True`` (bar on a terminal, lines
    elsewhere), a mode name, or ``False`` (nothing).
    """
    t0 = time.perf_counter()
    run = _AttackRun(config, _open(config, dataset), command=command, progress=progress, on_update=on_update, t0=t0)
    try:
        run.probe_and_repeat()
    except KeyboardInterrupt:
        run.publish(status="interrupted")
        raise
    finally:
        run.bar.close()
        close_workers()
    run.results.complete = True
    run.publish(status="complete")
    return run.results


@dataclass
class _Opened:
    """A run's data (checked for the split), its ``k``, the recipe, the mechanism at the config's ε,
    and the box the ε estimate works in."""

    ds: datasets.Dataset
    k: int
    recipe: MechanismRecipe
    mech: Mechanism
    bounds: tuple[list[float], list[float]] | None


def _open(config: AttackConfig, dataset: datasets.Dataset | None) -> _Opened:
    """Load (or check) the data and open the mechanism — fail fast on a bad spec or a plug-in that does
    not load (exit 2); a supervised mechanism's records and box carry the label as their last column."""
    if dataset is None:
        ds = load_data(config)
    else:
        ds = dataset
        config.attack.split_sizes(ds.n_records)
    k = ds.default_k
    recipe = mechanism_recipe(config, ds, k)
    mech = recipe.open(config.epsilon)
    bounds = config.data.bounds
    if getattr(mech, "supervised", False):
        from dpaudit.data.labels import labelled_box, with_labels

        ds = with_labels(ds, recipe.supervision)
        box = None if bounds is None else labelled_box(bounds, recipe.supervision)
        bounds = None if box is None else (box[0].tolist(), box[1].tolist())
    return _Opened(ds, k, recipe, mech, bounds)


def _results(config: AttackConfig, opened: _Opened, *, command: str, params: dict[str, Any]) -> AttackResults:
    """The results before the first repeat: what is run, on what, how; nothing measured yet."""
    from dpaudit import __version__

    ds, mech = opened.ds, opened.mech
    spec = config.target.mechanism
    return AttackResults(
        title=f"Attacks on {spec} at ε = {config.epsilon:g}", command=command, seed=config.seed,
        dpaudit_version=__version__, parameters=params,
        mechanism={"spec": spec, "name": getattr(mech, "name", spec),
                   "repr": repr(mech), "claim": claim_record(config.claim.claim(mech.claim)),
                   "params": {key: (np.asarray(v).tolist() if key == "bounds" else v)
                              for key, v in mechanism_params(config, ds, opened.k).items()}},
        dataset=ds.summary(), setup=run_setup(config, ds.n_records, opened.k), notes=run_notes(config),
        execution={"where": opened.recipe.where, **config.isolation.to_dict()},
        package_versions=package_versions())


class _AttackRun:
    """One attack run under way: the results so far, the repeats' outcomes and the findings, which
    :meth:`publish` turns into a verdict and hands to ``on_update``."""

    def __init__(self, config: AttackConfig, opened: _Opened, *, command: str, progress: Any,
                 on_update: Callable[[RunResults], None] | None, t0: float) -> None:
        from dpaudit.report.provenance import provenance

        self.config, self.opened, self.command, self.on_update, self.t0 = config, opened, command, on_update, t0
        self.ds, self.mech = opened.ds, opened.mech
        self.params = config.to_dict()
        self.started = provenance(seed=config.seed)["started"]
        self.results = _results(config, opened, command=command, params=self.params)
        self.claim = self.results.mechanism["claim"]
        self.outcomes: list[RepeatOutcome] = []
        self.bar = progress_for(progress, config, self.ds, self.mech)
        self.calls = Findings()
        self.probe_findings = Findings()
        self.estimate_internal: list[InternalError] = []  # the ε estimate's internal error, if it hit one

    def internal_errors(self) -> list[InternalError]:
        """dpaudit's own errors so far (:mod:`dpaudit.attack.internal`): each repeat's, then the estimate's."""
        return ([in_repeat(e, r + 1) for r, o in enumerate(self.outcomes) for e in o.internal]
                + self.estimate_internal)

    def publish(self, not_run: int = 0, notify: bool = True, status: str = "partial") -> None:
        """Findings, verdict, conclusion, timings and provenance of the results so far (``on_update`` sees them)."""
        from dpaudit.report.provenance import provenance

        config, results = self.config, self.results
        run = _findings(self.probe_findings, self.calls, self.outcomes, config, not_run)
        results.findings = run.to_list()
        results.internal_errors = self.internal_errors()
        verdict = attack_verdict(self.outcomes, config.attack.attacks, self.claim, config.alpha, run,
                                 estimate=results.epsilon_estimate, estimate_off=config.epsilon_estimate == "off")
        results.verdict, results.verdict_basis = verdict["verdict"], verdict["basis"]
        if status == "interrupted" and verdict["verdict"] != Verdict.VIOLATION:  # what did not run cannot vouch
            results.verdict = Verdict.INCONCLUSIVE
            results.verdict_basis += "; the run was interrupted before every part ran"
        results.verdict_tests = verdict["tests"]
        results.measured = any(a.get("status") == "ok" for a in results.attacks)
        results.status = status
        results.timings.total_seconds = time.perf_counter() - self.t0
        results.provenance = provenance(seed=config.seed, parameters=self.params, started=self.started,
                                        durations=results.timings.durations(),
                                        argv=shlex.split(self.command) if self.command else None)
        results.conclusion = conclude(results.to_dict())
        if notify and self.on_update is not None:
            self.on_update(results.to_dict())

    def probe_and_repeat(self) -> None:
        """The replay probe's early draws, the repeats, the ε estimate, then the probe's late replay."""
        config = self.config
        with warnings.catch_warnings():  # the repeats record the mechanism's leak warnings themselves
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            probe = ReplayProbe(self.mech, self.ds.X, Stream.ATTACK_REPLAY_PROBE.of(config.seed))
        self.probe_findings = probe.findings
        check_unstated_output(self.mech, probe.findings)  # --output forgotten, the first calls' shape tells: exit 2
        if probe.broken:  # every probe call hung or crashed: the repeats would only repeat it
            first = next(iter(probe.findings), None)
            why = (f"every one of {probe.findings.calls} calls timed out or crashed"
                   + (f" ({first.kind}: {first.error})" if first else ""))
            repeats = config.attack.repeats
            self.results.attacks = [{"name": name, "status": "error", "repeats_ok": 0, "repeats_failed": repeats,
                                     "errors": [why]} for name in config.attack.attacks]
            self.publish(not_run=repeats, notify=False)
            return
        self.repeats()
        kind = next((o.release_kind for o in self.outcomes if o.release_kind), None)
        if wants_estimate(config.epsilon_estimate, self.claim, kind):
            self.estimate()
        else:
            self.bar.skip(ESTIMATE_STEP)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            self.probe_findings = probe.finish()  # the replay, late: state has had time to show
        self.publish(notify=False)

    def repeats(self) -> None:
        """Every repeat in turn, the results published after each."""
        config, results, bar, recipe = self.config, self.results, self.bar, self.opened.recipe
        seeds = [Stream.REPEAT.of(config.seed, r) for r in range(config.attack.repeats)]
        for r in range(config.attack.repeats):
            def on_step(name: str, r: int = r) -> None:
                bar.start(_step_name(r, config, name))

            outcome = run_repeat(config.attack, self.ds.X, self.opened.k, seeds[r],
                                 lambda: recipe.open(config.epsilon), self.ds.bounds, alpha=config.alpha,
                                 n_jobs=config.run.n_jobs, on_step=on_step, progress=bar.hook)
            bar.finish()
            self.outcomes.append(outcome)
            self.calls.merge(outcome.findings)
            outcomes = self.outcomes
            results.attacks = [summarise(name, outcomes, config.alpha) for name in config.attack.attacks]
            results.warnings = [{"category": "PrivacyLeakWarning", "message": w}
                                for w in sorted({w for o in outcomes for w in o.warnings})]
            results.timings = Timings(total_seconds=time.perf_counter() - self.t0, repeats_done=len(outcomes),
                                      attack_seconds={n: float(sum(o.seconds.get(n, 0.0) for o in outcomes))
                                                      for n in config.attack.attacks})
            self.publish()

    def estimate(self) -> None:
        """The certified ε estimate beside the attacks, at the share of α its statement gets."""
        config, results, bar, ds = self.config, self.results, self.bar, self.ds
        share = statement_count(self.outcomes, config.attack.attacks, self.claim, with_estimate=True)
        bar.start(ESTIMATE_STEP, weight=estimate_weight(self.mech, config))
        t_est = time.perf_counter()
        bounds = self.opened.bounds
        estimate = estimate_for_attack(
            lambda: self.opened.recipe.open(config.epsilon), ds.X, seed=config.seed,
            budget=dataclasses.replace(config.budget, confidence=1.0 - config.alpha / share),
            search=dataclasses.replace(config.search, bounds=bounds if bounds is not None else ds.bounds),
            run=RunSettings(progress=bar), claim=config.claim.claim(self.mech.claim))
        internal = estimate.pop("internal_error", None)
        if internal is not None:
            self.estimate_internal.append(internal)
        results.epsilon_estimate = estimate
        results.timings.estimate_seconds = time.perf_counter() - t_est
        results.add_warnings(list(estimate.get("leak_warnings") or []))
        self.calls.merge(Findings.from_list(estimate.get("findings") or []))
        bar.finish()
