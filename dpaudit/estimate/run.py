"""``dpaudit estimate-eps``: build the mechanism, run :func:`dpaudit.attacks.epsilon.estimate_epsilon`,
return the results dict.

The estimator (DP-Sniper-style event selection on a separate sample, then a
Clopper–Pearson certificate on fresh samples) lives in :mod:`dpaudit.attacks.epsilon`;
this module only chooses the public box and the event-selection model and
adds what the run was (mechanism spec, parameters, data shape, where the code
ran — never records).  The mechanism runs where its recipe puts it
(:class:`~dpaudit.execution.MechanismRecipe`: a plug-in in a worker process
under the per-call timeout, a built-in in this process).  Code that produces no
usable release at all gives an inconclusive result with its findings
(``status`` ``"no usable release"``), not an error; code that breaks the estimate otherwise gives
one with ``status`` ``"failed"`` and an ``incomplete`` finding.  The results dict has the keys every
command's has (``kind``, ``title``, ``status``, ``mechanism``, ``conclusion``, ``warnings``), so the
command writes it as a report like any other (:mod:`dpaudit.report`).

Three things the user may state instead of leaving them to the estimator:

* **the pair** (``--pair D.csv D2.csv``): checked to be neighbours under the
  claim's relation (:func:`dpaudit.attacks.epsilon.pairs.neighbours.pair_from_datasets`) and
  certified on alone — no search, so the whole α goes to that pair;
* **the public box** (``--param bounds=...``): where canaries are placed (the
  estimator's ``bounds``); it is passed to the mechanism only if the
  mechanism takes a ``bounds`` parameter (a built-in, or a plug-in class
  whose constructor has one);
* **what is released** (``--access transcript``): every noisy statistic the
  mechanism drew (:class:`dpaudit.attacks.epsilon.selection.transcripts.TranscriptView`), audited on
  the worst-case constructions for its release kind
  (:func:`dpaudit.attacks.epsilon.pairs.constructions.worst_case_pairs`).

A **supervised** plug-in (``fit(X, y)``, ``fn(X, y, epsilon, rng)``) says so when
it is loaded; its records then carry the label as their last column
(:func:`dpaudit.data.labels.with_labels`), the public box gets the label's side,
and every pair the estimator builds changes a label with its record
(:mod:`dpaudit.mechanisms.supervised`).  The JSON says how (``supervision``).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Callable, cast

from dpaudit.data.datasets import Dataset
from dpaudit.data.labels import labelled_box, needed, supervision_summary, with_labels
from dpaudit.execution import NoUsableRelease, close_workers
from dpaudit.execution.findings import FindingRecord
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.base import InvalidInputError, Mechanism, PrivacyClaim, PrivacyLeakWarning, check_bounds
from dpaudit.result_shapes import ClaimRecord, DatasetRecord, claim_record
from dpaudit.run_shapes import RunResults

from .config import EstimateConfig

__all__ = ["build_mechanism", "interrupted_result", "public_box", "run_estimate", "selection_model"]


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
    epsilon = config.claim.epsilon
    try:
        return config.recipe(params).open(epsilon)
    except InvalidInputError as exc:
        if "bounds" in params or data.bounds is None or "bounds" not in str(exc):
            raise
        params["bounds"] = [data.bounds[0].tolist(), data.bounds[1].tolist()]
        notify(f"bounds: {config.target.mechanism} needs a public box; using the dataset's ({data.name}), "
               "which is not computed from the records")
        return config.recipe(params).open(epsilon)


def public_box(mech: Mechanism, data: Dataset, params: dict[str, Any], stated: Any = None
               ) -> tuple[tuple[Any, Any] | None, dict[str, Any]]:
    """The box canaries are placed in, and what the JSON says about it.

    In order: ``--bounds`` (the box the code works in, stated by the user),
    ``--param bounds``, the mechanism's own ``bounds``, the dataset's public
    box; else none (the estimator then uses the data range ± 10 %, which is
    not public: its values are not reported).
    """
    d = data.n_features
    for source, box in (("--bounds", stated), ("--param bounds", params.get("bounds")), ("the mechanism's bounds",
                                                                   getattr(mech, "bounds", None)),
                        ("the dataset's public box", data.bounds)):
        if box is not None:
            lo, hi = check_bounds(box, d, name="bounds")
            return (lo, hi), {"public": True, "source": source, "lo": lo.tolist(), "hi": hi.tolist()}
    return None, {"public": False, "source": "the data range widened by 10 % (values not reported)"}


def _user_pair(pair_data: tuple[Dataset, Dataset], relation: str) -> Any:
    from dpaudit.attacks.epsilon.pairs.neighbours import pair_from_datasets

    first, second = pair_data
    try:
        return pair_from_datasets(first.X, second.X, relation, name="user-pair",
                                  description=f"the pair given with --pair ({first.name}, {second.name})")
    except InvalidInputError as exc:
        raise InvalidInputError(f"--pair: {first.name} and {second.name} are not {relation} neighbours: {exc}"
                                ) from None


def _claim(config: EstimateConfig, mech: Mechanism, notify: Callable[[str], None]) -> PrivacyClaim:
    """The claim audited: the mechanism's own, restated by --neighbours / --delta / --eps where given
    (:meth:`~dpaudit.options.ClaimOptions.claim`).  A given --eps that differs from what the mechanism states is
    used for ε only, with a note.  A claim in a notion (--rho, --mu, --rdp, --profile: :mod:`dpaudit.claims`)
    replaces it, its (ε, δ) point at --delta."""
    own, stated = mech.claim, config.claim
    if stated.notion() is None and stated.epsilon is not None and float(stated.epsilon) != float(own.epsilon):
        notify(f"--eps {stated.epsilon:g} differs from the ε = {own.epsilon:g} {config.target.mechanism} states; "
               f"auditing against ε = {stated.epsilon:g}")
    return stated.claim(own, restate=True)


def run_estimate(config: EstimateConfig, data: Dataset, *, pair_data: tuple[Dataset, Dataset] | None = None,
                 progress: Any = True, notify: Callable[[str], None] = lambda message: None) -> RunResults:
    """Estimate and return the results dict: :meth:`dpaudit.attacks.epsilon.EpsilonEstimate.to_dict` plus
    ``mechanism`` (the spec), ``mechanism_name``, ``parameters``, ``dataset`` (shape, no box) and
    ``command``, ``release`` and ``box``.  The audited code failing is one
    :class:`InvalidInputError` line, no traceback.

    ``pair_data``: the two datasets of ``--pair``; checked to be neighbours under
    the claim's relation and certified on alone (``data`` is then their first).

    ``progress``: ``True`` (a bar on a terminal, plain lines elsewhere), a :mod:`dpaudit.progress`
    mode name, or ``False``.  The estimator reports finished chunks of releases but not how many
    there will be, so the display shows chunks done and the elapsed time, not a time left.
    """
    params = dict(config.target.params)
    if config.target.supervision is None:
        config = dataclasses.replace(config, target=config.target.with_supervision(data, config.data.bounds))
    try:
        return _run(config, data, params, pair_data, progress, notify)
    finally:
        close_workers()


def _run(config: EstimateConfig, data: Dataset, params: dict[str, Any],
         pair_data: tuple[Dataset, Dataset] | None, progress: bool, notify: Callable[[str], None]
         ) -> RunResults:
    mech = build_mechanism(config, data, params, notify)
    stated: tuple[Any, Any] | None = config.data.bounds
    if getattr(mech, "supervised", False):  # the label becomes the last column of every record
        supervision = needed(config.target.supervision, data)
        features = config.data.bounds if config.data.bounds is not None else params.get("bounds")
        if features is not None:  # the stated feature box (--bounds, else the code's --param bounds)
            stated = labelled_box(check_bounds(features, data.n_features, name="bounds"), supervision)
        data = with_labels(data, supervision)
        if pair_data is not None:
            pair_data = (with_labels(pair_data[0], supervision), with_labels(pair_data[1], supervision))
    box, box_info = public_box(mech, data, params, stated)
    claim = _claim(config, mech, notify)
    X, pairs, audited = data.X, None, mech
    if pair_data is not None:
        pair = _user_pair(pair_data, claim.neighbours)
        pairs = [pair]
        X = pair.D_prime if len(pair.D_prime) >= len(pair.D) else pair.D  # the release kind is probed on it
    if config.access == "transcript":
        from dpaudit.attacks.epsilon.pairs.constructions import worst_case_pairs
        from dpaudit.attacks.epsilon.selection.transcripts import TranscriptView

        if not callable(getattr(mech, "release_transcript", None)):
            raise InvalidInputError(f"--access transcript: {config.target.mechanism} does not expose a transcript "
                                    "(it has no release_transcript method); audit its final output with "
                                    "--access output")
        audited = TranscriptView(mech)
        if pairs is None:
            pairs = worst_case_pairs(mech, X, relation=claim.neighbours)
            if config.search.max_pairs is not None:
                pairs = pairs[:config.search.max_pairs]
    from dpaudit.attacks.epsilon import estimate_epsilon
    from dpaudit.attacks.epsilon.pairs.pair import NO_PUBLIC_BOX, NoPublicBoxWarning

    if box is None and pairs is None:
        notify(f"note: {NO_PUBLIC_BOX}")  # what the Python API warns (NoPublicBoxWarning), said once on stderr
    with warnings.catch_warnings():  # leak warnings are shown once, as a row of the result
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("ignore", NoPublicBoxWarning)
        from dpaudit.progress import RunProgress, short_label

        bar = RunProgress(short_label("estimate-eps", config.target.mechanism), mode="auto" if progress is True else
                          ("off" if not progress else str(progress)), unit="chunks of releases")
        bar.start("selecting and certifying")
        try:
            search = dataclasses.replace(config.search, pairs=pairs, bounds=box,
                                         classifier=selection_model(config.search.classifier, config.seed))
            res = estimate_epsilon(audited, X, claim, budget=config.budget, search=search,
                                   run=dataclasses.replace(config.run, notify=notify,
                                                           progress=bar if bar.mode != "off" else False),
                                   seed=config.seed)
        except NoUsableRelease as exc:  # a finding about the code, not the user's mistake
            out = _no_result(config, claim, str(exc), exc.findings.to_list())
            return _describe(out, config, audited, params, data, box_info, pair_data)
        except (InvalidInputError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - a finding and a report, whoever failed
            from dpaudit.attack.internal import INTERNAL, classify, internal_error, internal_message
            from dpaudit.execution import RunFindings
            from dpaudit.execution.untrusted import quoted

            ours = classify(exc) == INTERNAL  # not the audited code's failure: dpaudit's own, said so
            why = (internal_message(exc) if ours else
                   f"the estimate failed while running the audited code: {type(exc).__name__}: {quoted(exc)}")
            findings = RunFindings().add("ε estimation", getattr(exc, "findings", None))
            findings.incomplete("ε estimation (part)", 1, 1, "parts", why)
            out = _no_result(config, claim, why, findings.to_list(), status="failed")
            if ours:
                out["internal_errors"] = [internal_error(exc, "ε estimation")]
            return _describe(out, config, audited, params, data, box_info, pair_data)
        finally:
            bar.close()
    estimate = cast(RunResults, res.to_dict())  # the estimator's record (dataclasses.asdict): the schema's estimate
    return _describe(estimate, config, audited, params, data, box_info, pair_data)


def _describe(out: RunResults, config: EstimateConfig, mech: Mechanism, params: dict[str, Any],
              data: Dataset, box: dict[str, Any], pair_data: tuple[Dataset, Dataset] | None) -> RunResults:
    """What the run was, beside the estimate: spec, parameters, data shape, where the code ran,
    what was released (``output``/``transcript``), the canary box and who chose the pair."""
    from dpaudit.verdicts.estimate_conclusion import conclude

    out["kind"] = "estimate-eps"
    spec = config.target.mechanism
    out["title"] = f"Certified ε estimate of {spec}"
    out.setdefault("status", "complete")
    out["mechanism"] = {"spec": spec, "name": str(getattr(mech, "name", spec)),
                        "claim": out["claim"], "params": dict(params)}
    out["mechanism_name"] = out["mechanism"]["name"]
    out["parameters"] = dict(params)
    out["dataset"] = _without_box(data)
    out["execution"] = {"where": config.recipe(params).where, **config.isolation.to_dict(),
                        "scheduler": config.run.scheduler}
    out["command"] = "estimate-eps"
    out["access"] = config.access
    out["box"] = box
    out["pair_source"] = "user" if pair_data is not None else "estimator"
    out["randomness"] = ("its own (stated: not replayed; releases do not reproduce from --seed)"
                         if getattr(mech, "own_randomness", False) else "the generator dpaudit gives it (replayed)")
    supervision = config.target.supervision
    if getattr(mech, "supervised", False) and supervision is not None:
        out["supervision"] = supervision_summary(supervision, config.target.output, public_box=bool(box.get("public")))
    if pair_data is not None:
        out["pair_datasets"] = [_without_box(ds) for ds in pair_data]
    out["warnings"] = [{"category": "PrivacyLeakWarning", "message": m} for m in out.get("leak_warnings") or []]
    out["conclusion"] = conclude(out)
    return out


def _without_box(data: Dataset) -> DatasetRecord:
    """The data set's summary without its box (the result states the box apart, ``box``)."""
    summary = data.summary()
    summary.pop("bounds", None)
    return summary


def _no_result(config: EstimateConfig, claim: PrivacyClaim, why: str, findings: list[FindingRecord],
               status: str = "no usable release") -> RunResults:
    """The result of a run in which the code never produced a usable release (or broke the estimate
    otherwise, ``status`` ``failed``): nothing certified."""
    return {"status": status, "claim": claim_record(claim), "epsilon_lower_bound": 0.0,
            "verdict": Verdict.INCONCLUSIVE, "confidence": config.budget.confidence, "samples": 0,
            "selection_samples": 0,
            "guarantee": f"No bound was certified: {why}", "findings": findings, "leak_warnings": []}


def interrupted_result(config: EstimateConfig, data: Dataset) -> RunResults:
    """What ``results.json`` says of a run stopped by Ctrl-C or SIGTERM before it finished: status
    ``interrupted``, nothing certified."""
    from dpaudit.verdicts.ending import ending

    stated, spec = config.claim, config.target.mechanism
    claim: ClaimRecord = {"epsilon": stated.epsilon if stated.epsilon is not None else float("nan"),
             "delta": stated.delta or 0.0, "neighbours": stated.neighbours or "add-remove"}
    notion = stated.notion()
    if notion is not None:  # the claim stated in a notion: named in the conclusion
        claim["notion"] = notion.to_dict()
    return {"kind": "estimate-eps", "command": "estimate-eps", "title": f"Certified ε estimate of {spec}",
            "status": "interrupted", "claim": claim,
            "mechanism": {"spec": spec, "name": spec, "claim": claim},
            "dataset": _without_box(data), "verdict": Verdict.INCONCLUSIVE,
            "findings": [], "warnings": [],
            "conclusion": ending(Verdict.INCONCLUSIVE, "INCONCLUSIVE: the run was interrupted before a bound was certified.",
                                 incomplete=True, reasons=["interrupted"])}
