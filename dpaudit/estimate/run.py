"""``dpaudit estimate-eps``: build the mechanism, run :func:`attacks.epsilon.estimate_epsilon`,
return the results dict.

The estimator (DP-Sniper-style event selection on a separate sample, then a
Clopper–Pearson certificate on fresh samples) lives in :mod:`attacks.epsilon`;
this module only chooses the public box and the event-selection model and
adds what the run was (mechanism spec, parameters, data shape, where the code
ran — never records).  The mechanism runs where its recipe puts it
(:class:`~attacks.execution.MechanismRecipe`: a plug-in in a worker process
under the per-call timeout, a built-in in this process).  Code that produces no
usable release at all gives an inconclusive result with its findings
(``status`` ``"no usable release"``), not an error.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from attacks.execution import INCONCLUSIVE, NoUsableRelease, close_workers
from dpaudit.data.datasets import Dataset
from mechanisms.base import InvalidInputError, Mechanism, PrivacyLeakWarning

from .config import EstimateConfig

__all__ = ["build_mechanism", "run_estimate", "selection_model"]


def selection_model(name: str, seed: int) -> object:
    """The event-selection model (DP-Sniper uses logistic regression or a small MLP)."""
    if name != "mlp":
        return name
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32, 32), max_iter=300,
                                                         early_stopping=True, random_state=seed))


def build_mechanism(config: EstimateConfig, data: Dataset, params: dict[str, Any],
                    notify: Callable[[str], None]) -> Mechanism:
    """The mechanism the config names.  One that requires a public box and was given none gets
    the dataset's (never computed from the records): ``params["bounds"]`` is set and ``notify`` told."""
    try:
        return config.recipe(params).open(config.epsilon)
    except InvalidInputError as exc:
        if "bounds" in params or data.bounds is None or "bounds" not in str(exc):
            raise
        params["bounds"] = [data.bounds[0].tolist(), data.bounds[1].tolist()]
        notify(f"bounds: {config.mechanism} needs a public box; using the dataset's ({data.name}), "
               "which is not computed from the records")
        return config.recipe(params).open(config.epsilon)


def run_estimate(config: EstimateConfig, data: Dataset, *, progress: Any = True,
                 notify: Callable[[str], None] = lambda message: None) -> dict[str, Any]:
    """Estimate and return the results dict: :meth:`attacks.epsilon.EpsilonEstimate.to_dict` plus
    ``mechanism`` (the spec), ``mechanism_name``, ``parameters``, ``dataset`` (shape, no box) and
    ``command``.  The audited code failing is one :class:`InvalidInputError` line, no traceback.

    ``progress``: ``True`` (a bar on a terminal, plain lines elsewhere), a :mod:`dpaudit.progress`
    mode name, or ``False``.  The estimator reports finished chunks of releases but not how many
    there will be, so the display shows chunks done and the elapsed time, not a time left.
    """
    params = dict(config.params)
    try:
        return _run(config, data, params, progress, notify)
    finally:
        close_workers()


def _run(config: EstimateConfig, data: Dataset, params: dict[str, Any], progress: bool,
         notify: Callable[[str], None]) -> dict[str, Any]:
    mech = build_mechanism(config, data, params, notify)
    box = getattr(mech, "bounds", None)
    if box is None and data.bounds is not None:
        box = (data.bounds[0], data.bounds[1])
    from attacks.epsilon import estimate_epsilon

    with warnings.catch_warnings():  # leak warnings are shown once, as a row of the result
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        from dpaudit.progress import RunProgress, short_label

        bar = RunProgress(short_label("estimate-eps", config.mechanism), mode="auto" if progress is True else
                          ("off" if not progress else str(progress)), unit="chunks of releases")
        bar.start("selecting and certifying")
        try:
            res = estimate_epsilon(mech, data.X, samples=config.samples, selection_samples=config.selection_samples,
                                   confidence=config.confidence, neighbours=config.neighbours, delta=config.delta,
                                   distance=config.distance, bounds=box, seed=config.seed, n_jobs=config.n_jobs,
                                   scheduler=config.scheduler, progress=bar if bar.mode != "off" else False,
                                   max_pairs=config.max_pairs,
                                   classifier=selection_model(config.classifier, config.seed))
        except NoUsableRelease as exc:  # a finding about the code, not the user's mistake
            out = _no_result(config, mech, str(exc), exc.findings.to_list())
            return _describe(out, config, mech, params, data)
        except (InvalidInputError, KeyboardInterrupt):
            raise
        except Exception as exc:  # the audited code failed: one line, no traceback (locals hold records)
            raise InvalidInputError(f"{config.mechanism} failed while being audited: "
                                    f"{type(exc).__name__}: {exc}") from None
        finally:
            bar.close()
    return _describe(res.to_dict(), config, mech, params, data)


def _describe(out: dict[str, Any], config: EstimateConfig, mech: Mechanism, params: dict[str, Any],
              data: Dataset) -> dict[str, Any]:
    """What the run was, beside the estimate: spec, parameters, data shape, where the code ran."""
    out["mechanism"] = config.mechanism
    out["mechanism_name"] = str(getattr(mech, "name", config.mechanism))
    out["parameters"] = dict(params)
    out["dataset"] = {k: v for k, v in data.summary().items() if k != "bounds"}
    out["execution"] = {"where": config.recipe(params).where,
                        **config.recipe(params).isolation.to_dict(), "scheduler": config.scheduler}
    out["command"] = "estimate-eps"
    return out


def _no_result(config: EstimateConfig, mech: Mechanism, why: str, findings: list[dict[str, Any]]) -> dict[str, Any]:
    """The result of a run in which the code never produced a usable release: nothing certified."""
    return {"status": "no usable release", "claim": mech.claim.to_dict(), "epsilon_lower_bound": 0.0,
            "verdict": INCONCLUSIVE, "confidence": config.confidence, "samples": 0, "selection_samples": 0,
            "guarantee": f"No bound was certified: {why}", "findings": findings, "leak_warnings": []}
