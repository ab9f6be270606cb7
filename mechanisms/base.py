"""Core types shared by every mechanism under test.

A mechanism is a black box: ``release(X, rng)`` returns one of a few release
kinds (:class:`Points`, :class:`Centroids`, :class:`Spans`, :class:`Labels`,
:class:`Vector`), and its authors' promise is a :class:`PrivacyClaim`.  A
mechanism may also expose its *transcript* (:class:`Transcript`: every noisy
statistic one run drew; :class:`TranscriptMechanism`).  All
randomness comes from the :class:`numpy.random.Generator` passed in, so the same
seed gives the same release.

The release kinds and their batches live in :mod:`dpaudit.mechanisms.releases` and the
validation helpers in :mod:`dpaudit.mechanisms.validation`; both are re-exported here.
The helpers (:func:`check_data`, :func:`check_epsilon`, ...) raise
:class:`InvalidInputError` (a ``ValueError``) with a message a user can act on;
the CLI turns it into one line and exit code 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Protocol, Sequence, runtime_checkable

import numpy as np

from .notions import ApproxDP, Notion, notion_from_dict
from .releases import (  # noqa: F401 - the release types are part of the base API
    RELEASE_KINDS,
    RELEASE_TYPES,
    Centroids,
    Failed,
    Labels,
    Points,
    Release,
    ReleaseBatch,
    Spans,
    Transcript,
    TranscriptBatch,
    Vector,
)
from .validation import (
    InvalidInputError,
    PrivacyLeakWarning,
    check_bounds,
    check_clusters,
    check_data,
    check_epsilon,
    check_positive,
    check_rng,
    random_state_from,
    warn_privacy_leak,
)

__all__ = [
    "NEIGHBOURS",
    "RELEASE_KINDS",
    "Centroids",
    "Failed",
    "InvalidInputError",
    "Labels",
    "Mechanism",
    "Points",
    "PrivacyClaim",
    "DEFAULT_POINT_DELTA",
    "PrivacyLeakWarning",
    "Release",
    "Spans",
    "Transcript",
    "TranscriptBatch",
    "TranscriptMechanism",
    "Vector",
    "check_bounds",
    "check_clusters",
    "check_data",
    "check_epsilon",
    "check_positive",
    "check_rng",
    "random_state_from",
    "ReleaseBatch",
    "release_many",
    "warn_privacy_leak",
]

Neighbours = Literal["add-remove", "replace", "metric"]
NEIGHBOURS: tuple[str, ...] = ("add-remove", "replace", "metric")
DEFAULT_POINT_DELTA = 1e-5  # the δ of a notion claim's (ε, δ) point when none is given


# --------------------------------------------------------------------------- #
# The claim
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class PrivacyClaim:
    """What a mechanism's authors promise.

    ``neighbours``: ``add-remove`` (one record added or removed), ``replace``
    (one record changed) or ``metric`` (d_x-privacy: outputs for x and x'
    differ by at most a factor exp(ε·‖x − x'‖₂)).  ``epsilon = inf`` marks a
    non-private baseline (no claim).  A claim stated in another notion (ρ-zCDP, μ-GDP, Rényi DP, a privacy
    profile; :mod:`dpaudit.mechanisms.notions`) carries it as ``notion`` and is made by :meth:`stated`.
    """

    epsilon: float
    delta: float = 0.0
    neighbours: str = "add-remove"
    notion: Notion | None = None  # the notion the claim is stated in, when not (ε, δ) (dpaudit.mechanisms.notions)

    @classmethod
    def stated(cls, notion: Notion, *, delta: float = DEFAULT_POINT_DELTA, neighbours: str = "add-remove"
               ) -> PrivacyClaim:
        """A claim in ``notion`` (ρ-zCDP, μ-GDP, Rényi, a profile): ``epsilon``/``delta`` are its (ε, δ) point at
        ``delta`` (:meth:`Notion.point_epsilon`), tested as before; the notion's whole curve is tested beside it."""
        if isinstance(notion, ApproxDP):
            return cls(notion.epsilon, notion.delta, neighbours)
        if neighbours == "metric":
            raise InvalidInputError("a metric (d_x-privacy) claim is stated in ε only")
        delta = float(delta)
        epsilon = notion.point_epsilon(delta)
        if not math.isfinite(epsilon):
            raise InvalidInputError(f"{notion.text()} has no finite ε at δ = {delta:g}: give its (ε, δ) point a δ > 0")
        return cls(epsilon, delta, neighbours, notion)

    @property
    def curve(self) -> Notion | None:
        """The notion whose trade-off curve the claim implies: its own, or (ε, δ)-DP's; None without one (no claim,
        or a metric claim, whose ε scales with the pair's distance)."""
        if self.notion is not None:
            return self.notion
        if not self.is_private or self.neighbours == "metric":
            return None
        return ApproxDP(self.epsilon, self.delta)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, allow_inf=True))
        try:
            delta = float(self.delta)
        except (TypeError, ValueError):
            raise InvalidInputError(f"delta must be a number, got {self.delta!r}") from None
        if not (0.0 <= delta < 1.0):
            raise InvalidInputError(f"delta must be in [0, 1), got {self.delta!r}")
        object.__setattr__(self, "delta", delta)
        if self.neighbours not in NEIGHBOURS:
            raise InvalidInputError(
                f"neighbours must be one of {', '.join(NEIGHBOURS)}; got {self.neighbours!r}")
        if self.notion is not None and not isinstance(self.notion, Notion):
            raise InvalidInputError(f"notion must be a privacy notion (dpaudit.mechanisms.notions), got {self.notion!r}")

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.epsilon)

    def epsilon_at(self, distance: float = 1.0) -> float:
        """The ε the claim allows for a pair at ``distance`` (metric claims scale)."""
        return self.epsilon * distance if self.neighbours == "metric" else self.epsilon

    def advantage_ceiling(self) -> float:
        """Largest membership advantage TPR − FPR an ε-DP mechanism allows: (e^ε − 1)/(e^ε + 1)."""
        return math.tanh(self.epsilon / 2.0) if self.is_private else 1.0

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"epsilon": self.epsilon, "delta": self.delta, "neighbours": self.neighbours}
        if self.notion is not None:
            out["notion"] = self.notion.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrivacyClaim:
        """The claim :meth:`to_dict` wrote."""
        notion = data.get("notion")
        return cls(float(data["epsilon"]), float(data.get("delta", 0.0)), str(data.get("neighbours", "add-remove")),
                   notion_from_dict(notion) if isinstance(notion, dict) else None)


# --------------------------------------------------------------------------- #
# The mechanism protocol
# --------------------------------------------------------------------------- #
@runtime_checkable
class Mechanism(Protocol):
    """A mechanism under test.

    ``release(X, rng)`` must draw all randomness from ``rng``.  Mechanisms may
    also define ``release_many(X, rng, n) -> ReleaseBatch`` for vectorised
    repeated runs; :func:`release_many` falls back to a loop.  A clustering
    mechanism states its number of clusters as ``n_clusters`` (the one name,
    whatever its paper's symbol: DP-KCCM's k, DP-FCM's c); the auditor reads
    no other.
    """

    name: str
    claim: PrivacyClaim

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Release: ...


@runtime_checkable
class TranscriptMechanism(Mechanism, Protocol):
    """A mechanism that can also release its transcript (issue 10).

    ``release_transcript(X, rng)`` draws exactly the noise ``release(X, rng)``
    draws for the same generator state and returns it as a :class:`Transcript`;
    ``release_from_transcript(transcript, X)`` is the release that run would
    have made.  When that release is post-processing of the transcript (it
    ignores ``X``), ``transcript_covers_release`` is True; mechanisms that
    compute their release from the raw records as well (DP-FCM as published,
    label releases) set it False, and a transcript audit then speaks for the
    draws only.  ``release_transcript_many(X, rng, n)`` (optional) returns a
    :class:`TranscriptBatch` of ``n`` independent runs.
    """

    transcript_covers_release: bool

    def release_transcript(self, X: np.ndarray, rng: np.random.Generator) -> Transcript: ...

    def release_from_transcript(self, transcript: Transcript, X: np.ndarray | None = None) -> Release: ...


def release_many(mechanism: Mechanism, X: np.ndarray, rng: np.random.Generator, n: int
                 ) -> Sequence[Release]:
    """``n`` independent releases of ``mechanism`` on ``X`` from one generator.

    Uses the mechanism's own vectorised ``release_many`` when it has one and
    otherwise loops; fixed-shape results come back as a :class:`ReleaseBatch`.
    """
    fast = getattr(mechanism, "release_many", None)
    if callable(fast):
        return fast(X, rng, n)
    return ReleaseBatch.stack([mechanism.release(X, rng) for _ in range(n)])
