"""The certified ε estimate that ``dpaudit attack`` and ``dpaudit audit`` run, so that every command
reaches the verdict ``dpaudit estimate-eps`` reaches on the same code.

:func:`dpaudit.attacks.epsilon.estimate_epsilon` — a certified lower bound on ε for
the claim's own neighbour relation (per unit distance for metric claims),
the worst-case datasets and a pair search, event selection on one sample and
a Clopper–Pearson certificate on fresh ones, at the same default time budget
as ``estimate-eps`` — on a small seeded subset of the records (the
``estimate-eps`` default of 30: ε-DP must hold on every dataset, and a small
one lets a single record move the release most).  Its seed flows from the
run's seed but is disjoint from the repeats' streams.

It runs whenever the claim is finite: the membership attacks' one-run bounds
are weaker tests (and none applies to metric or replace claims or label
releases), so without it a command could call code consistent with a claim
that ``estimate-eps`` shows it breaks.  ``--epsilon-estimate off`` skips it;
the claim is then *not tested* (the verdict is inconclusive unless an attack
certified a violation), never "no violation found".
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Callable, cast

import numpy as np

from dpaudit.attacks.epsilon.pairs.pair import NoPublicBoxWarning
from dpaudit.attacks.epsilon.settings import Budget, RunSettings, SearchSpace
from dpaudit.execution.seeds import Stream
from dpaudit.mechanisms.base import InvalidInputError, Mechanism, PrivacyClaim, PrivacyLeakWarning
from dpaudit.result_shapes import ClaimRecord, EmbeddedEstimate, EstimateSummary, as_number

from .internal import INTERNAL, classify, internal_error, internal_message

__all__ = ["ESTIMATE_MODES", "ESTIMATE_RECORDS", "estimate_cost", "estimate_for_attack", "wants_estimate"]

ESTIMATE_MODES = ("auto", "on", "off")
ESTIMATE_RECORDS = 30      # records the estimate runs on (a seeded subset of the attack's data)


def wants_estimate(mode: str, claim: ClaimRecord, release_kind: str | None = None) -> bool:
    """Whether the estimate runs: whenever the claim is finite, unless ``mode`` is ``off``
    (``auto`` and ``on`` are the same; ``auto`` is kept for scripts written when it was narrower)."""
    if mode not in ESTIMATE_MODES:
        raise InvalidInputError(f"--epsilon-estimate must be one of {', '.join(ESTIMATE_MODES)}; got {mode!r}")
    return mode != "off" and math.isfinite(as_number(claim.get("epsilon", math.inf)))


def estimate_cost(mechanism: Mechanism, samples: int | None, time_budget: float | None = None) -> float:
    """Rough cost of the estimate in the progress plan's units (one unit ≈ Yeom on 2,000 records, ~2 s)."""
    if samples is None:
        vectorised = callable(getattr(mechanism, "release_many", None))
        return 4.0 if vectorised else max(2.0, float(time_budget or 60.0) / 2.0)
    vectorised = callable(getattr(mechanism, "release_many", None))
    return 2.0 if vectorised else max(2.0, samples / 50.0)


def estimate_for_attack(mechanism_factory: Callable[[], Mechanism], X: np.ndarray, *, seed: int, budget: Budget,
                        search: SearchSpace | None = None, run: RunSettings | None = None,
                        records: int = ESTIMATE_RECORDS, claim: PrivacyClaim | None = None) -> EmbeddedEstimate:
    """Run the estimate on a seeded subset of ``X``; a plain dict for ``results["epsilon_estimate"]``.

    ``budget``, ``search`` and ``run`` are :func:`~dpaudit.attacks.epsilon.estimate_epsilon`'s (estimate-eps's
    ``--samples``, ``--releases``, ``--time-budget``, ``--confidence``; the public box and ``--min-records``;
    processes and progress — a progress bar with a ``note`` method is told what a timed budget buys).
    ``claim``: the claim tested (None: the mechanism's own; a claim in a notion,
    :meth:`dpaudit.options.ClaimOptions.claim`).
    The audited code failing is recorded (``status`` ``"error"``) and makes the conclusion inconclusive;
    it never stops the report.  A failure inside dpaudit itself (:mod:`dpaudit.attack.internal`) is
    recorded the same way with ``internal`` true, and ``internal_error`` (message and traceback) for the
    caller to move into the run's ``internal_errors``.
    """
    from dpaudit.attacks.epsilon import estimate_epsilon

    run = run or RunSettings(progress=False)
    if run.notify is None and callable(getattr(run.progress, "note", None)):
        run = dataclasses.replace(run, notify=run.progress.note)
    n = len(X)
    chosen = np.sort(np.random.default_rng(Stream.ESTIMATE_RECORDS.of(seed)).choice(n, size=min(n, records),
                                                                                   replace=False))
    # An int, not the stream itself (that would change every number): the result states it as the estimate's seed.
    run_seed = int(Stream.ESTIMATE_SEED.of(seed).generate_state(1)[0])
    why = (f"a seeded subset of {len(chosen)} of the {n} records — as estimate-eps does by default: ε-DP must "
           "hold on every dataset, and on a small one a single record moves the release most and releases "
           "are cheap, so more of them fit the time budget")
    base: EmbeddedEstimate = {"records": int(len(chosen)), "records_rule": why if len(chosen) < n else f"all {n} records",
            "seed": run_seed}
    try:
        with warnings.catch_warnings(record=True) as caught:  # leaks are reported once, by the caller
            warnings.simplefilter("always", PrivacyLeakWarning)
            warnings.simplefilter("ignore", NoPublicBoxWarning)  # the result's notes say it
            result = estimate_epsilon(mechanism_factory(), X[chosen], claim, budget=budget, search=search, run=run,
                                      seed=run_seed)
        for w in caught:
            if not issubclass(w.category, PrivacyLeakWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    except KeyboardInterrupt:
        raise
    except InvalidInputError as exc:
        return {**base, "status": "error", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - a failure is recorded, whose it was said; the report goes on
        if classify(exc) == INTERNAL:  # a bug in dpaudit, not the audited code: the caller logs the traceback
            return {**base, "status": "error", "internal": True, "error": internal_message(exc),
                    "internal_error": internal_error(exc, "ε estimate")}
        return {**base, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    record = result.to_dict()
    record.pop("candidates", None)  # per-pair selection diagnostics: estimate-eps --json has them
    record["pair"] = {k: v for k, v in (record.get("pair") or {}).items() if not isinstance(v, (list, dict))}
    out = cast(EstimateSummary, record)  # the estimator's record (dataclasses.asdict): the schema's estimate
    out["leak_warnings"] = sorted(set(out.get("leak_warnings") or []) | {str(w.message) for w in caught
                                                                        if issubclass(w.category, PrivacyLeakWarning)})
    return {**base, "status": "ok", **out}
