"""Label-only membership inference: only the target's predicted label is used.

Two scores (higher = member; 1 = member):

* ``boundary`` — Choquette-Choo et al. (ICML 2021) §4 / Li & Zhang (CCS 2021)
  "boundary attack": members sit farther from the decision boundary.  The
  distance is found with ART's ``LabelOnlyDecisionBoundary`` (HopSkipJump,
  the estimator's ``clip_values`` set from the public box); ART's
  ``calibrate_distance_threshold`` chooses the threshold τ on a *shadow*
  target's members and non-members, and the score is ART's membership
  probability sigmoid(distance − τ), monotone in the distance.
  HopSkipJump draws from NumPy's global generator and from unseeded
  ``RandomState()`` objects; the attack seeds both from its own generator
  for the duration of the call and restores everything afterwards.
* ``consistency`` — Choquette-Choo et al. §4 "data augmentation" attack,
  for label releases and spans where a boundary search is moot (the label is
  piecewise constant on grid cells): the share of ``n_augment`` Gaussian
  perturbations x + σ·N(0, I) whose label equals the record's reference label
  (noise = −1 counts as a miss).  σ is public (a scale of the shadow data).
  Its threshold is chosen on shadow targets.

``auto`` uses ``boundary`` for points and centroid releases, ``consistency``
for spans and labels.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Iterator

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError, Labels, Spans

from ..attack import Attack, Progress, check_count
from ..targets import MechanismPipeline
from .exposure import PROBABILITY_BINS
from .metrics import MembershipScores
from .shadow import AttackerKnowledge, train_shadow_targets

__all__ = ["LabelOnlyAttack", "QueryBudgetExceeded"]

# ART's HopSkipJump can loop forever: its step-size search halves ε "until the
# step is adversarial", which never happens when the binary search's end point
# is not adversarial (float32 rounding on a degenerate boundary).  Every
# boundary attack therefore runs against a model that allows this many calls
# per queried record — about 5× what max_iter = 5, max_eval = 200 normally
# take — and then stops the attack with QueryBudgetExceeded.
HSJ_CALLS_PER_RECORD = 2000
# Records per HopSkipJump call when scoring: progress is reported between calls.  Each record's
# search is independent and draws from the same seeded streams in the same order, so the
# scores do not depend on this number.
RECORDS_PER_CALL = 16


class QueryBudgetExceeded(RuntimeError):
    """ART's boundary search used up its model-query budget (it would not have stopped)."""


class _QueryBudget:
    """Forwards ``predict``/``predict_proba`` to ``model`` and counts the calls."""

    def __init__(self, model: Any, max_calls: int) -> None:
        self._model = model
        self._max_calls = int(max_calls)
        self._calls = 0

    def _spend(self) -> None:
        self._calls += 1
        if self._calls > self._max_calls:
            raise QueryBudgetExceeded(
                f"ART HopSkipJump made more than {self._max_calls} model queries without finishing "
                "(its step-size search does not terminate on this decision boundary); label-only "
                "boundary attack stopped")

    def predict(self, X: np.ndarray) -> np.ndarray:
        self._spend()
        return self._model.predict(X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        self._spend()
        return self._model.predict_proba(X)

    def __getattr__(self, name: str) -> Any:  # classes_, n_features_in_, ... for ART
        return getattr(self._model, name)

METHODS = ("auto", "boundary", "consistency")


class _Forward:
    """Attribute access forwarded to ``target`` except for the names in ``overrides``."""

    def __init__(self, target: Any, **overrides: Any) -> None:
        self._target, self._overrides = target, overrides

    def __getattr__(self, name: str) -> Any:
        return self._overrides[name] if name in self._overrides else getattr(self._target, name)


@contextlib.contextmanager
def _seeded_global_numpy(rng: np.random.Generator) -> Iterator[None]:
    """Make ART's HopSkipJump reproducible from ``rng``, and leave no trace.

    HopSkipJump draws from NumPy's global state (seeded here, restored after)
    and from ``np.random.RandomState()`` created without a seed (OS entropy).
    Inside the block, and only in ART's hop_skip_jump module, that class is
    replaced by one whose unseeded instances take seeds spawned from ``rng``.
    """
    from art.attacks.evasion import hop_skip_jump as hsj_module

    seeds = np.random.SeedSequence(int(rng.integers(2**63 - 1)))

    def random_state(seed: Any = None) -> np.random.RandomState:
        if seed is None:
            seed = int(seeds.spawn(1)[0].generate_state(1)[0])
        return np.random.RandomState(seed)

    saved_state = np.random.get_state()
    saved_np = hsj_module.np
    np.random.seed(int(rng.integers(2**32 - 1)))
    hsj_module.np = _Forward(np, random=_Forward(np.random, RandomState=random_state))
    try:
        yield
    finally:
        hsj_module.np = saved_np
        np.random.set_state(saved_state)


def hard_labels(model: MechanismPipeline, X: np.ndarray) -> np.ndarray:
    """The label a label-only attacker sees: argmax, or −1 where the target abstains (uniform)."""
    p = model.predict_proba(X)
    lab = np.argmax(p, axis=1)
    lab[np.ptp(p, axis=1) <= 1e-12] = -1
    return lab


class LabelOnlyAttack(Attack):
    """Label-only membership inference (decision-boundary distance or augmentation consistency).

    Parameters
    ----------
    method : {"auto", "boundary", "consistency"}
    n_queries : int
        Shadow members and non-members used to calibrate (each).
    n_augment : int
        Perturbations per record for ``consistency``.
    max_iter, max_eval, init_eval : int
        HopSkipJump budget per record for ``boundary`` (kept small: it is
        the expensive part).

    Cost is linear in the queried records (2 × ``n_queries`` to calibrate plus
    the scored ones) and independent of the data size beyond training the
    shadow target.  Scores lie in [0, 1]; ``score_bins_`` are 20 equal bins.
    """

    attack_params = ("method", "n_queries", "n_augment", "max_iter", "max_eval", "init_eval")

    def __init__(self, method: str = "auto", n_queries: int = 40, n_augment: int = 64, max_iter: int = 5,
                 max_eval: int = 200, init_eval: int = 20) -> None:
        self.method = method
        self.n_queries = n_queries
        self.n_augment = n_augment
        self.max_iter = max_iter
        self.max_eval = max_eval
        self.init_eval = init_eval
        self._check_params()

    def _check_params(self) -> None:
        if self.method not in METHODS:
            raise InvalidInputError(f"method must be one of {', '.join(METHODS)}; got {self.method!r}")
        for name in ("n_queries", "n_augment", "max_iter", "max_eval", "init_eval"):
            check_count(getattr(self, name), name)

    # ---- scores -------------------------------------------------------------------
    def _resolve(self, model: MechanismPipeline) -> str:
        if self.method != "auto":
            return self.method
        return "consistency" if isinstance(model.release_, (Spans, Labels)) else "boundary"

    def _consistency(self, model: MechanismPipeline, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        y = model.reference.predict(X)
        n, d = X.shape
        noisy = X[:, None, :] + self.sigma_ * rng.standard_normal((n, self.n_augment, d))
        lab = hard_labels(model, noisy.reshape(-1, d)).reshape(n, self.n_augment)
        return np.mean(lab == y[:, None], axis=1)

    def _art_boundary(self, model: MechanismPipeline, n_records: int) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from art.attacks.inference.membership_inference import LabelOnlyDecisionBoundary
            from art.estimators.classification.scikitlearn import ScikitlearnClassifier
        budgeted = _QueryBudget(model, HSJ_CALLS_PER_RECORD * max(1, n_records))
        clf = ScikitlearnClassifier(model=budgeted, clip_values=self.clip_values_)
        return LabelOnlyDecisionBoundary(clf)

    def _hsj_kwargs(self) -> dict[str, Any]:
        return {"max_iter": self.max_iter, "max_eval": self.max_eval, "init_eval": self.init_eval,
                "init_size": 50, "verbose": False}

    def _boundary(self, model: MechanismPipeline, X: np.ndarray, rng: np.random.Generator,
                  progress: Progress | None = None) -> np.ndarray:
        k = model.reference.n_classes
        y = np.eye(k)[model.reference.predict(X)]
        X32 = X.astype(np.float32)
        out = np.empty(len(X))
        with _seeded_global_numpy(rng), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for s in range(0, len(X), RECORDS_PER_CALL):
                part = slice(s, s + RECORDS_PER_CALL)
                attack = self._art_boundary(model, len(X32[part]))
                attack.distance_threshold_tau = self.tau_
                p = attack.infer(X32[part], y[part], probabilities=True, **self._hsj_kwargs())
                out[part] = np.asarray(p)[:, 1]
                if progress is not None:
                    progress("label-only: boundary distances", min(s + RECORDS_PER_CALL, len(X)), len(X))
        return out

    # ---- API ----------------------------------------------------------------------
    def fit(self, knowledge: AttackerKnowledge, rng: np.random.Generator, *,
            progress: Progress | None = None) -> "LabelOnlyAttack":
        """Calibrate on one shadow target trained through the mechanism."""
        from ..reconstruction import default_radius

        run = train_shadow_targets(knowledge, 1, rng)[0]
        if progress is not None:
            progress("label-only: calibrating on a shadow target", 0, 1)
        q = self.n_queries
        members, non_members = run.members[:q], run.non_members[:q]
        self.sigma_ = default_radius(knowledge.shadow_X, rng)
        self.clip_values_ = knowledge.clip_values
        self.method_ = self._resolve(run.model)
        if self.method_ == "boundary":
            attack = self._art_boundary(run.model, len(members) + len(non_members))
            k = knowledge.reference.n_classes
            ym = np.eye(k)[knowledge.reference.predict(members)]
            yn = np.eye(k)[knowledge.reference.predict(non_members)]
            with _seeded_global_numpy(rng), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                attack.calibrate_distance_threshold(members.astype(np.float32), ym,
                                                    non_members.astype(np.float32), yn, **self._hsj_kwargs())
            self.tau_ = max(float(attack.distance_threshold_tau), 1e-12)
            # τ was chosen on the shadow target: score ≥ 0.5 ⇔ distance ≥ τ.
            self.calibration_ = None
            self.threshold_: float | None = 0.5
        else:
            member_s = self._consistency(run.model, members, rng)
            non_s = self._consistency(run.model, non_members, rng)
            self.calibration_, self.threshold_ = MembershipScores.from_groups(member_s, non_s), None
        self.score_bins_ = PROBABILITY_BINS
        if progress is not None:
            progress("label-only: calibrating on a shadow target", 1, 1)
        return self

    def infer(self, target: MechanismPipeline, X: np.ndarray, rng: np.random.Generator, *,
              progress: Progress | None = None) -> np.ndarray:
        """Label-only membership scores for X (higher = member; 1 = member)."""
        if not hasattr(self, "method_"):
            raise InvalidInputError("call fit() before infer()")
        X = np.asarray(X, dtype=np.float64)
        if self.method_ == "boundary":
            return self._boundary(target, X, rng, progress)
        return self._consistency(target, X, rng)
