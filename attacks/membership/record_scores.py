"""The per-record score of a release, for every release kind: how much the release looks as if a
record was in its input.

LiRA (Carlini et al., S&P 2022) and RMIA (Zarifzadeh et al., ICML 2024) were written
for classifiers, where a record's score is the model's confidence in its true label.
A clustering or perturbation mechanism releases points, centroids, spans, labels or
a vector instead; here each kind gets a *confidence* c(x; release) ∈ (0, 1] — higher
when the release leans towards x — returned as log c (:func:`log_confidence`), one
column per *view* (a kernel bandwidth for points and centroids, one view otherwise):

* ``points`` — c = 1 − exp(−κ), κ = Σ exp(−‖x − z‖/b) over the released points z
  near x (the 64 nearest): a kernel density of the release at x, which a member's own
  perturbed copy raises; for a bandwidth b from each of :data:`BANDWIDTHS` × h (the
  attack picks one on its own runs, never on the target);
* ``centroids`` — the same kernel over the released centres (members pull centres
  towards themselves);
* ``spans`` — c = κ/(κ + 1) with κ = 0.1 + Σ_cells exp(−‖x − cell centre‖²/2w²) over the
  spanned cells near x (w the cell width): a member adds to the noisy counts of
  every cell in its neighbourhood, so spans grow around it;
* ``labels`` — c = (s + 0.01)/1.01, s the share of the release's records that carry
  the label given to x (noise: 0).  A labels release has one label per input
  record, so the label "given to x" is the label of the input record nearest to x,
  as :class:`~dpaudit.attacks.targets.LabelLookupTarget` reads it: the attack then uses the
  input records and its one-run bound is no certificate
  (:func:`dpaudit.attacks.membership.metrics.one_run_comparison` says so);
* ``vector`` — c = sigmoid(t), t the tracing statistic of :mod:`dpaudit.attacks.membership.vector_map`.

h is a public distance scale (:meth:`ScoreContext.from_public`: the median
nearest-neighbour distance among as many public records as the target has
members).  LiRA fits Gaussians to logit(c) (:func:`logit_confidence`), the
transform Carlini et al. use for a classifier's confidence; RMIA uses c itself.
Every score is a function of the release, the public context and the scored
record alone, so it does not depend on the order of the scored records.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import logsumexp

from dpaudit.mechanisms.base import Centroids, InvalidInputError, Labels, Points, Release, Spans, Vector

from ..attack import NotApplicable
from .vector_map import VectorMap, release_values

__all__ = ["BANDWIDTHS", "KINDS", "ScoreContext", "log_confidence", "logit_confidence", "SCORE_WORDS",
           "view_names"]

KINDS = ("points", "centroids", "spans", "labels", "vector")
SCALE_SAMPLE = 2000        # public records the distance scale is measured on, at most
BANDWIDTHS = tuple(4.0 ** j for j in range(-3, 5))  # kernel bandwidths for points/centroids, × h
KERNEL_NEIGHBOURS = 64     # released points/centres each kernel sum runs over (the nearest)
QUERY_CHUNK = 32_768       # records per nearest-neighbour query (bounded memory)
SPAN_NEIGHBOURS = 25       # spanned cells near x that κ sums over (5 × 5 in 2-D)
SPAN_RADIUS = 2.5          # ... within this many cell widths
SPAN_PRIOR = 0.1           # κ's floor: x far from every span
LOG_FLOOR = 700.0          # log c ≥ −700 (c ≈ 1e-304: nothing in the release near x)
LABEL_PRIOR = 0.01
# What each kind's score measures, in the words the report uses.
SCORE_WORDS = {
    "points": "kernel density of the released points at the record (bandwidth chosen on the attacker's runs)",
    "centroids": "kernel density of the released centres at the record (bandwidth chosen on the attacker's runs)",
    "spans": "spanned grid cells around the record (a Gaussian kernel of the cell width)",
    "labels": "share of records given the record's label (the label of the nearest input record)",
    "vector": "tracing statistic ⟨x − μ, v − v̄⟩ (or a learned direction when v has another shape)",
}


@dataclass(frozen=True, eq=False)
class ScoreContext:
    """Public quantities the scores use: a distance scale and, for vector releases, the map."""

    scale: float
    centre: np.ndarray
    vector: VectorMap | None = None

    @classmethod
    def from_public(cls, public: np.ndarray, n_members: int, rng: np.random.Generator) -> "ScoreContext":
        """Scale h from public records: the median distance from one of them to its nearest neighbour
        among ``n_members`` others (the spacing of a dataset the target's size)."""
        X = np.asarray(public, dtype=np.float64)
        if len(X) < 3:
            raise InvalidInputError("need at least 3 public records for the score's distance scale")
        take = min(len(X), SCALE_SAMPLE, max(int(n_members), 2) + 1)
        sample = X[rng.choice(len(X), size=take, replace=False)]
        dist, _ = cKDTree(sample).query(sample, k=2)
        positive = dist[:, 1][dist[:, 1] > 0]
        span = float(np.max(np.ptp(X, axis=0))) or 1.0
        scale = float(np.median(positive)) if positive.size else 1e-6 * span
        return cls(max(scale, 1e-9 * span), X.mean(axis=0))

    def with_vector(self, vector: VectorMap) -> "ScoreContext":
        return replace(self, vector=vector)


def _kernel(reference: np.ndarray, X: np.ndarray, scale: float) -> np.ndarray:
    """log(1 − exp(−κ_b)) per row of X and bandwidth b = scale × :data:`BANDWIDTHS` (n × views).

    Rows are queried in chunks of :data:`QUERY_CHUNK`, so memory stays bounded at any size.
    """
    out = np.empty((len(X), len(BANDWIDTHS)))
    if len(reference) == 0:
        out.fill(-LOG_FLOOR)
        return out
    k = min(KERNEL_NEIGHBOURS, len(reference))
    tree = cKDTree(reference)
    for s in range(0, len(X), QUERY_CHUNK):
        dist, _ = tree.query(X[s:s + QUERY_CHUNK], k=k)
        dist = np.asarray(dist).reshape(-1, k)
        for j, b in enumerate(BANDWIDTHS):
            out[s:s + QUERY_CHUNK, j] = _log_one_minus_exp_neg(logsumexp(-dist / (b * scale), axis=1))
    return out


def _log_one_minus_exp_neg(log_kappa: np.ndarray) -> np.ndarray:
    """log(1 − e^(−κ)) from log κ, stable for tiny and large κ (floored at −LOG_FLOOR)."""
    kappa = np.exp(np.minimum(log_kappa, 700.0))
    small = log_kappa < -20.0  # 1 − e^(−κ) ≈ κ
    with np.errstate(divide="ignore"):
        big = np.log(-np.expm1(-kappa))
    return np.maximum(np.where(small, log_kappa, big), -LOG_FLOOR)


def _spans(release: Spans, X: np.ndarray) -> np.ndarray:
    cells = [np.asarray(c) for c in release.cells if len(c)]
    if not cells:
        return np.full(len(X), np.log(SPAN_PRIOR / (1.0 + SPAN_PRIOR)))
    w = float(release.width)
    centres = release.origin + (np.vstack(cells) + 0.5) * w
    k = min(SPAN_NEIGHBOURS, len(centres))
    dist, _ = cKDTree(centres).query(X, k=k, distance_upper_bound=SPAN_RADIUS * w * np.sqrt(X.shape[1]))
    dist = np.asarray(dist).reshape(len(X), k)
    kappa = SPAN_PRIOR + np.where(np.isfinite(dist), np.exp(-0.5 * (dist / w) ** 2), 0.0).sum(axis=1)
    return np.log(kappa) - np.log1p(kappa)


def _labels(release: Labels, X: np.ndarray, inputs: np.ndarray | None) -> np.ndarray:
    if inputs is None:
        raise InvalidInputError("a labels release is read through its input records")
    labels = np.asarray(release.labels, dtype=np.int64)
    if len(labels) != len(inputs):
        raise InvalidInputError(f"{len(labels)} labels for {len(inputs)} input records")
    given = labels[cKDTree(np.asarray(inputs, dtype=np.float64)).query(X, k=1)[1]]
    ids, counts = np.unique(labels[labels >= 0], return_counts=True)
    share = np.zeros(len(X))
    hit = np.isin(given, ids)
    share[hit] = counts[np.searchsorted(ids, given[hit])] / len(labels)
    return np.log((share + LABEL_PRIOR) / (1.0 + LABEL_PRIOR))


def view_names(kind: str) -> tuple[str, ...]:
    """The views (columns) of :func:`log_confidence` for a release kind."""
    if kind in ("points", "centroids"):
        return tuple(f"bandwidth {b:g} h" for b in BANDWIDTHS)
    return (kind,)


def log_confidence(release: Release, X: np.ndarray, context: ScoreContext, *,
                   inputs: np.ndarray | None = None) -> np.ndarray:
    """log c(x; release) ≤ 0 for every row x of X, one column per view (see the module docstring).

    ``inputs``: the records the release was computed from — read only for a labels release.
    """
    X = np.asarray(X, dtype=np.float64)
    if isinstance(release, Points):
        return _kernel(release.points, X, context.scale)
    if isinstance(release, Centroids):
        return _kernel(release.centers, X, context.scale)
    if isinstance(release, Spans):
        return _spans(release, X)[:, None]
    if isinstance(release, Labels):
        return _labels(release, X, inputs)[:, None]
    if isinstance(release, Vector):
        if context.vector is None:
            raise InvalidInputError("a vector release is scored through a vector map fitted on the attacker's runs")
        t = context.vector.statistic(X, release_values(release))
        return (-np.logaddexp(0.0, -t))[:, None]  # log sigmoid(t)
    raise NotApplicable(f"no per-record score for a {getattr(release, 'kind', type(release).__name__)} release")


def logit_confidence(log_c: np.ndarray) -> np.ndarray:
    """logit(c) = log c − log(1 − c) from log c, stable at both ends (LiRA's scale)."""
    log_c = np.clip(np.asarray(log_c, dtype=np.float64), -LOG_FLOOR, -1e-300)
    return log_c - np.log(-np.expm1(log_c))
