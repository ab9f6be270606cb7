"""``dpaudit audit``: the full battery on someone else's code, with a verdict on top.

The parts (:mod:`dpaudit.audit.parts`: smoke, ε estimation, attacks, utility)
run on the mechanism the config's recipe builds (:class:`~dpaudit.execution.MechanismRecipe`:
third-party code in a worker process under a per-call timeout, optionally in
its own interpreter; dpaudit's built-ins in this process); ``results.json`` is
rewritten as soon as each part finishes.  With ``scheduler`` the ε estimation's
chunks and the attack repeats run on a Dask cluster, with the same numbers.

Misbehaviour of the audited code (raises, hangs, NaN, wrong shape, crash,
nondeterminism) becomes a *finding* (per part, with its share of calls); the
part it broke is marked failed and the audit goes on.  An error inside dpaudit
itself (:mod:`dpaudit.attack.internal`) marks the part failed with words that
say it is dpaudit's, never the audited code's; its traceback is kept in
``results.internal_errors`` and written to ``dpaudit-errors.log``.  The top-level verdict
is :func:`dpaudit.verdicts.audit_conclusion.overall_verdict`.  A lost Dask cluster
(:class:`~dpaudit.execution.SchedulerError`) ends the audit: the parts that
finished are written (status ``interrupted``) and the error propagates.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from dpaudit.attack.internal import INTERNAL, classify, internal_error, internal_message
from dpaudit.data.datasets import Dataset
from dpaudit.execution import (
    Findings,
    NoUsableRelease,
    ReplayProbe,
    RunFindings,
    SchedulerError,
    check_unstated_output,
    close_workers,
    recording,
)
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import Failed, InvalidInputError, Mechanism
from dpaudit.progress import RunProgress, short_label
from dpaudit.report import capture_warnings, render_report, stamp_finished
from dpaudit.report.standin import release_2d
from dpaudit.result_shapes import ProvenanceRecord, claim_record
from dpaudit.verdicts.attack_rule import deciding_tests
from dpaudit.verdicts.audit_conclusion import NOTHING_RELEASED, conclude, overall_verdict

from . import parts
from .config import AuditConfig
from .results import AuditResults

__all__ = ["run_audit"]

PART_NAMES = {"smoke": "smoke", "epsilon": "ε estimation", "attacks": "attacks", "utility": "utility"}


def _progress(cfg: AuditConfig, progress: Any) -> RunProgress:
    """The audit's progress display and its plan (rough costs; measured time recalibrates the ETA)."""
    from dpaudit.attack.run import repeat_costs

    mode = progress if isinstance(progress, str) else ("auto" if progress else "off")
    bar = RunProgress(short_label("audit", cfg.target.mechanism), mode=mode)
    samples, time_budget = cfg.budget.samples, cfg.budget.time_budget
    for part in cfg.parts:
        if part == "attacks":  # repeats may run in parallel (joblib, Dask): one step, counted per repeat
            cost = sum(repeat_costs(cfg).values())
            bar.add(part, cost * 0.3 * cfg.attack.repeats)  # the audit's data is small
        else:
            eps_cost = 2.0 + samples / 100.0 if samples else 2.0 + (time_budget or 60.0) / 2.0
            bar.add(part, {"smoke": 0.1, "epsilon": eps_cost, "utility": 0.5}[part])
    return bar


def run_audit(cfg: AuditConfig, data: Dataset, out_dir: str | Path, *, progress: Any = True,
              provenance: ProvenanceRecord | None = None,
              mechanism_factory: Callable[[], Mechanism] | None = None) -> AuditResults:
    """Run the battery into ``out_dir``; ``results.json`` is rewritten after every part.

    On Ctrl-C or a lost Dask cluster the parts that finished are rendered
    (status ``interrupted``) before the exception propagates.
    """
    out_dir = Path(out_dir)
    recipe = cfg.recipe()
    try:
        mech = (mechanism_factory or (lambda: recipe.open(cfg.epsilon)))()
        if getattr(mech, "supervised", False):  # its records carry the label as their last column
            from dpaudit.data.labels import labelled_box, needed, with_labels

            supervision = needed(cfg.target.supervision, data)
            box = None if cfg.data.bounds is None else labelled_box(cfg.data.bounds, supervision)
            cfg = replace(cfg, data=replace(cfg.data, bounds=None if box is None else (box[0].tolist(),
                                                                                       box[1].tolist())))
            data = with_labels(data, supervision)
        return _run(cfg, data, out_dir, mech, recipe.where, progress, provenance)
    finally:
        close_workers()


def _run(cfg: AuditConfig, data: Dataset, out_dir: Path, mech: Mechanism, where: str, progress: bool,
         provenance: ProvenanceRecord | None) -> AuditResults:
    """The parts in turn, ``results.json`` rewritten after each, then the replay and the 2-D figure; the
    whole report at the end (also when interrupted, with the parts that did not run marked so)."""
    prov = provenance if provenance is not None else ProvenanceRecord()
    prov.setdefault("durations_seconds", {})
    findings = RunFindings()
    probe, tests, not_deciding = _first_look(cfg, mech, data)
    alpha = cfg.alpha / max(1, len(tests))  # α only to the tests that can decide
    results = _results(cfg, data, mech, where, prov, alpha)
    results.confidence.update({"certified_tests": len(tests), "tests": tests, "not_deciding": not_deciding})
    nothing = _nothing_released(probe)

    def save(formats: tuple[str, ...] = ("json",)) -> None:
        results.findings = findings.to_list()
        results.verdict = overall_verdict(results.to_dict())
        results.conclusion = conclude(results.to_dict())
        stamp_finished(prov)  # the parts saved so far ended now
        render_report(results.to_dict(), out_dir, formats)

    bar = _progress(cfg, progress)
    runners: dict[str, Callable[[], Findings]] = {
        "smoke": lambda: parts.smoke(cfg, mech, data, results),
        "epsilon": lambda: parts.epsilon(cfg, mech, data, results, bar, alpha),
        "attacks": lambda: parts.attacks(cfg, mech, data, results, bar, alpha),
        "utility": lambda: parts.utility(cfg, mech, data, results),
    }
    try:
        findings.parts["replay probe"] = probe.findings  # the same object: finish() adds the replay to it
        if nothing is not None:  # the code released nothing: said once, every part skipped, none run
            _skip_every_part(cfg, results, findings, nothing)
        else:
            for part in cfg.parts:
                _label(mech, PART_NAMES[part])
                bar.start(part)
                t0 = time.perf_counter()
                _run_part(cfg, part, runners[part], results, findings)
                prov["durations_seconds"][part] = round(time.perf_counter() - t0, 3)
                save()
            probe.finish()  # late: state kept between calls has had time to show
            if len(data.X[0]) == 2:
                with recording() as calls, capture_warnings(results.warnings):
                    results.release_2d = release_2d(mech, data.bounds, cfg.epsilon, np.random.default_rng(
                        Stream.AUDIT_RELEASE_FIGURE.of(cfg.seed)), records=data.X)
                findings.add("figure", calls)
        results.status = "complete"
    except (KeyboardInterrupt, SchedulerError):
        results.status = "interrupted"
        for part in cfg.parts:  # what did not run cannot vouch for the claim
            results.parts.setdefault(part, "not run: the audit was interrupted")
        save(("json", "md", "html", "csv"))
        raise
    finally:
        bar.close()
    save(("json", "md", "html", "csv"))
    return results


def _results(cfg: AuditConfig, data: Dataset, mech: Mechanism, where: str, prov: ProvenanceRecord,
             alpha: float) -> AuditResults:
    """The results before the first part: what is audited, where it runs, on what data, at which
    confidence; the data's own leaks as warnings."""
    results = AuditResults(
        title=f"Audit of {cfg.target.mechanism} at claimed ε = {cfg.epsilon:g}",
        mechanism={"spec": cfg.target.mechanism, "name": getattr(mech, "name", cfg.target.mechanism),
                   "claim": claim_record(cfg.claim.claim(mech.claim)), "params": cfg.target.params,
                   "plugin_kind": getattr(mech, "plugin_kind", "built-in"),
                   "randomness": ("its own (stated: not replayed)" if getattr(mech, "own_randomness", False)
                                  else "the generator dpaudit gives it"),
                   "interpreter": cfg.isolation.python or "this one", "timeout_seconds": cfg.isolation.timeout},
        execution={"where": where, **cfg.isolation.to_dict(), "scheduler": cfg.run.scheduler},
        dataset={**data.summary(), "selection": cfg.data.selection()},
        confidence={"overall": cfg.budget.confidence, "per_test": 1.0 - alpha,
                    "rule": "Bonferroni over the m tests that can decide (from the release kind and the claim, "
                            "before any test's sample is drawn): each at α/m, so the verdict errs with probability "
                            "≤ α; every figure of the attacks is computed at the per-test level"},
        provenance=prov)
    if getattr(mech, "supervised", False) and cfg.target.supervision is not None:
        from dpaudit.data.labels import supervision_summary

        results.mechanism["supervision"] = supervision_summary(cfg.target.supervision, cfg.target.output)
    for leak in data.params.get("leaks", []):
        results.warnings.append({"category": "PrivacyLeakWarning", "message": leak})
    return results


def _run_part(cfg: AuditConfig, part: str, runner: Callable[[], Findings], results: AuditResults,
              findings: RunFindings) -> None:
    """One part: its status in ``results.parts`` (ok, skipped or failed — one part failing never
    stops the audit), its calls' findings, and what it left incomplete."""
    with recording() as calls:
        try:
            with capture_warnings(results.warnings):
                calls.merge(runner())
            results.parts[part] = attacks_status(results, cfg.attack.repeats) if part == "attacks" else "ok"
        except (KeyboardInterrupt, SchedulerError):
            raise
        except ModuleNotFoundError as exc:
            results.parts[part] = f"skipped: {exc}"
        except (NoUsableRelease, parts.MechanismPartFailure) as exc:  # a finding, not the user's mistake
            calls.merge(exc.findings)
            results.parts[part] = f"failed: {exc}"
        except parts.InternalPartFailure as exc:  # dpaudit's bug; its traceback is already kept
            results.parts[part] = f"failed: {exc}"
        except InvalidInputError as exc:  # the set-up does not allow this part (e.g. too few records)
            results.parts[part] = f"skipped: {exc}"
        except Exception as exc:  # noqa: BLE001 - one part failing never stops the audit
            if classify(exc) == INTERNAL:  # a bug in dpaudit, never reported as the audited code's failure
                results.internal_errors.append(internal_error(exc, f"{PART_NAMES[part]} part"))
                results.parts[part] = f"failed: {internal_message(exc)}"
            else:
                results.parts[part] = f"failed: {_reason(exc)}"
    findings.add(PART_NAMES[part], calls)
    failed_repeats = sum((results.attack_repeats_failed or {}).values()) if part == "attacks" else 0
    if failed_repeats:  # an attack that failed in some repeats: the verdict cannot be clean
        findings.incomplete("attack repeats", failed_repeats, cfg.attack.repeats * len(cfg.attack.attacks),
                            "repeats", str(results.attack_repeats_error))
    if results.parts[part] != "ok":
        findings.incomplete(f"{PART_NAMES[part]} (part)", 1, 1, "parts", results.parts[part])


def _first_look(cfg: AuditConfig, mech: Mechanism, data: Dataset) -> tuple[ReplayProbe, list[str], dict[str, str]]:
    """The run's first calls (the replay probe, the smoke part's), and the tests that can decide
    (:func:`~dpaudit.verdicts.attack_rule.deciding_tests`) with why the others cannot — before any test draws."""
    _label(mech, PART_NAMES["smoke"])
    probe = ReplayProbe(mech, data.X, Stream.AUDIT_REPLAY_PROBE.of(cfg.seed))
    check_unstated_output(mech, probe.findings)  # --output forgotten, the first calls' shape tells: exit 2
    claim = cfg.claim.claim(mech.claim)
    tests, not_deciding = deciding_tests(cfg.attack.attacks if "attacks" in cfg.parts else (), claim_record(claim),
                                         stated_release_kind(cfg, mech) or _probe_kind(probe),
                                         "epsilon" in cfg.parts and math.isfinite(claim.epsilon))
    return probe, tests, not_deciding


def _nothing_released(probe: ReplayProbe) -> str | None:
    """``kind: error`` of the first failure, in full, when none of the probe's calls released anything (the
    code raised, hung, crashed or returned garbage every time); None when one did."""
    if not probe.broken and _probe_kind(probe) is not None:
        return None
    worst = next(iter(probe.findings.blocking), None) or next(iter(probe.findings), None)
    return f"{worst.kind}: {worst.error}" if worst is not None else "no release"


def _skip_every_part(cfg: AuditConfig, results: AuditResults, findings: RunFindings, why: str) -> None:
    """The audit of code that releases nothing: the smoke part failed with the first error in full, every other
    part skipped (none could run), one finding for them all."""
    from dpaudit.execution.untrusted import printable

    first = printable(why)
    for part in cfg.parts:
        results.parts[part] = (f"failed: {NOTHING_RELEASED} ({first})" if part == "smoke"
                               else f"skipped: {NOTHING_RELEASED} (the smoke part says how)")
    findings.incomplete("audit parts", len(cfg.parts), len(cfg.parts), "parts",
                        f"not run: {NOTHING_RELEASED} ({first})")


def stated_release_kind(cfg: AuditConfig, mech: Mechanism) -> str | None:
    """The release kind known without a call: a built-in's (the registry), a plug-in function's or estimator's
    ``--output`` (parameters and predictions are vectors); None for a plug-in mechanism class."""
    import dpaudit.mechanisms

    spec, output = cfg.target.mechanism, cfg.target.output
    if dpaudit.mechanisms.is_builtin(spec):
        return next((i.release_kind for i in dpaudit.mechanisms.describe() if i.name == spec), None)
    kind = getattr(mech, "plugin_kind", None)
    if kind == "function":
        return output or "points"
    if kind == "estimator":
        output = output or "centroids"
        return "vector" if output in ("parameters", "predictions") else output
    return None


def _probe_kind(probe: ReplayProbe) -> str | None:
    """The kind of the replay probe's first usable release (the run's first calls; no test has drawn yet)."""
    releases = probe.first.releases if probe.first is not None else []
    kind = getattr(releases, "kind", None)
    if isinstance(kind, str):
        return kind
    return next((str(r.kind) for r in releases if not isinstance(r, Failed)), None)


def attacks_status(results: AuditResults, repeats: int) -> str:
    """The attacks part's status in the part list: ``ok``, or which attacks failed in how many repeats, with the
    first error in full (``failed`` when none finished a repeat, ``partly failed`` otherwise)."""
    from dpaudit.execution.untrusted import printable

    failed = [a for a in results.attacks or [] if a.get("status") == "error" or a.get("repeats_failed")]
    if not failed:
        return "ok"
    every = all(a.get("status") == "error" for a in results.attacks or [] if a.get("status") != "not-applicable")
    names = ", ".join(f"{a.get('name')} ({a.get('repeats_failed', repeats)} of {repeats} repeats)" for a in failed)
    first = next((str(e) for a in failed for e in a.get("errors") or []), "no reason recorded")
    return f"{'failed' if every else 'partly failed'}: {names}; first error: {printable(first)}"


def _label(mech: Mechanism, part: str) -> None:
    """Tell a worker mechanism which part of the audit its calls belong to (its hang budget is per part)."""
    if getattr(mech, "isolates_calls", False) and hasattr(mech, "part"):
        mech.part = part


def _reason(exc: Exception) -> str:
    """Why a part failed, in one line: the failing call and how, else the exception."""
    finding = getattr(exc, "finding", None)
    if isinstance(finding, dict):  # MechanismFailure: the call that failed, and how
        return f"{finding['kind']} in {finding.get('call', 'release')}: {finding['error']}"
    return f"{type(exc).__name__}: {exc}"
