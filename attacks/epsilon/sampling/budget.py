"""The estimator's budget: how many releases, in which rounds and looks, and how α is spent over the looks.

Two kinds of budget, one plan:

* **A time budget** (the default, :data:`DEFAULT_TIME_BUDGET` seconds): the
  audited code's speed is measured on a few calibration draws, and the number
  of releases that fits in the budget becomes the plan's total
  (:func:`releases_for_time`), rounded *down* to a level of a fixed
  geometric series so that the small jitter of timings rarely changes it.
  Vectorised mechanisms that release vectors or points are capped at
  :func:`default_budget` (they reach it long before a minute), so for them
  the plan — and every number — is the same on any machine.
* **A release budget** (``releases`` / ``--releases``): the plan's total given
  directly.  A time-budgeted run records the total it used, so the same seed
  and that total reproduce its numbers on any machine and any worker count.

Given the total, everything else is a function of the problem only:
:data:`SELECTION_SHARE` of it goes to the pair search
(:mod:`dpaudit.attacks.epsilon.search.search`), the rest to certification, split evenly
between D and D′ and drawn in *looks* (:func:`look_plan`): cumulative sizes
n/64, n/16, n/4 and n per dataset, each look's statement certified at its own
share of α (:data:`LOOK_ALPHA_SHARES`, summing to one).  The run stops at the
first look whose bound exceeds the claim.  By the union bound every look's
statement holds at once with probability ≥ 1 − α, so stopping early (or
being cut by the deadline) leaves the certificate valid: this is α spent
over the looks, the standard remedy for optional stopping.  ``samples``
fixes the certification size instead: one look at the full α.

The plan of one estimate (:func:`make_plan`, a :class:`Plan`): how many releases in all, for
selection and for each certification look —

``samples``      the certification size per dataset is fixed: one look at the full α;
``releases``     the total number of releases (selection + certification) is fixed:
                 looks, α spent over them — the same numbers on any machine;
``time_budget``  seconds: the code's speed is measured (:func:`dpaudit.attacks.epsilon.sampling.calibration.measure_rate`) and the
                 total that fits becomes the plan, rounded down to the R10 series and
                 capped at :func:`default_budget` for vectorised vector/point mechanisms;
                 the plan records its total, which reproduces the run as ``releases``;
none of these    :func:`default_budget` as ``budget``.

Calibration draws run in this process on the audited data and are thrown away: they only
time the code (and the feature map) and take no part in any statement.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.mechanisms.base import InvalidInputError, Mechanism, Release

from ...bounds import best_ceiling

__all__ = ["Plan", "make_plan", "DEADLINE_FACTOR", "DEFAULT_TIME_BUDGET", "FAST_BUDGET", "FAST_FLOATS", "FAST_MIN_BUDGET",
           "LOOK_ALPHA_SHARES", "LOOK_FRACTIONS", "MIN_LOOK", "MIN_ROUND_FAST", "MIN_ROUND_PLANNED_SLOW", "MIN_ROUND_SLOW",
           "MIN_SELECTION", "MIN_JUDGE", "SLOWER_PAIR", "time_for_ceiling",
           "MIN_TIMED_BUDGET", "PROBE", "SEARCH_SHARE", "SEARCH_TRIALS", "SEARCH_TRIAL_SIZE", "SELECTION_SHARE",
           "SLOW_BUDGET", "TIMED_CAP", "default_budget", "default_chunk_size", "is_fast", "look_plan",
           "plan_chunk_size", "releases_for_time"]

DEFAULT_TIME_BUDGET = 60.0  # seconds an estimate spends by default (every command's ε part)
DEADLINE_FACTOR = 1.5       # a timed run is cut (at a look boundary) past this multiple of its budget
# Releases a timed plan gets at least, however slow the code (a note says so): a construction's screening and a
# first look.  Slower code gets its briefing (:meth:`Plan.briefing`) and keeps to about its budget.
MIN_TIMED_BUDGET = 100
TIMED_CAP = 50_000_000      # releases a timed plan gets at most (selection samples are kept in memory)
# Cumulative certification size of each look (share of the planned n per dataset) and the share of α its
# statement gets; the shares sum to one (union bound over the looks).  The last look keeps most of α, so a
# run that goes to the end loses little against one fixed-size statement; the early looks stop clear
# violations at a small fraction of the cost.
LOOK_FRACTIONS = (1 / 64, 1 / 16, 1 / 4, 1.0)
LOOK_ALPHA_SHARES = (1 / 16, 1 / 16, 1 / 8, 3 / 4)
MIN_LOOK = 200              # releases per dataset in a look, at least (smaller looks merge into the next)
_LEVELS = (1.0, 1.25, 1.6, 2.0, 2.5, 3.2, 4.0, 5.0, 6.3, 8.0)  # the R10 series: totals are rounded down to it

FAST_BUDGET = 2_000_000     # releases (selection + certification) for fast vectorised mechanisms, at most
FAST_MIN_BUDGET = 200_000   # ... at least
FAST_FLOATS = 2 ** 27       # ... and about this many released numbers in all
SLOW_BUDGET = 8_000         # releases for everything else (about today's cost of a clustering audit)
SELECTION_SHARE = 0.4       # of the budget, for the search
MIN_ROUND_FAST, MIN_ROUND_SLOW = 500, 40  # first-round releases per dataset per pair, at least
# ... for code called once per release under a planned budget (time or releases): below this a rare event
# (a few per cent of one dataset's releases, none of the other's) cannot be told from noise in round one, so
# the search keeps fewer pairs rather than spread them thinner.
MIN_ROUND_PLANNED_SLOW = 250
MIN_SELECTION = (12 * MIN_ROUND_FAST, 12 * MIN_ROUND_SLOW)  # selection budget when `samples` is given, at least
SEARCH_SHARE = 0.25         # of the selection budget, for the model-based search (fast mechanisms only)
SEARCH_TRIALS = 64          # model-based search trials, at most ...
SEARCH_TRIAL_SIZE = 1_000   # ... of this many releases per dataset each (the best go on to the full rounds)
PROBE = 16                  # probe releases per dataset per pair
# A first round of successive halving gives each candidate at least this many releases per dataset where the budget
# allows two candidates no more: enough to see a flagrant leak (a separation the claim forbids shows in a few
# dozen releases).
MIN_JUDGE = 64
# A timed run re-plans (:mod:`dpaudit.attacks.epsilon.search.search`) when a pair's own datasets run this much slower than the
# calibration data: its selection draws are cut to the time a pair at the calibrated speed would take, and the
# certification is sized by the winner's own speed.
SLOWER_PAIR = 2.0
LANE_START_MIN = 0.05  # seconds: a worker lane that starts faster costs the search nothing worth planning for


def default_chunk_size(mechanism: Mechanism, n_records: int, d: int) -> int:
    """Releases per chunk: a function of the problem only, never of the worker count."""
    if callable(getattr(mechanism, "release_many", None)):
        return int(max(64, min(65_536, 2 ** 21 // max(1, n_records * d))))
    return 64


def is_fast(mechanism: Mechanism, kind: str) -> bool:
    """A vectorised ``release_many`` (not a per-release loop behind one) releasing vectors or points."""
    return (callable(getattr(mechanism, "release_many", None)) and bool(getattr(mechanism, "vectorised", True))
            and kind in ("vector", "points"))


def _release_size(release: Release) -> int:
    for attr in ("values", "points", "centers", "labels"):
        if hasattr(release, attr):
            return int(np.asarray(getattr(release, attr)).size)
    return 1


def default_budget(mechanism: Mechanism, release: Release, n_features: int = 0) -> int:
    """Total releases (selection + certification) when ``samples`` is not given.

    A function of the mechanism's interface, the size of one release and the
    number of features it maps to only — never of measured timings, so the
    same seed gives the same numbers on any machine: fast mechanisms
    (:func:`is_fast`) get about :data:`FAST_FLOATS` released numbers and
    features, between :data:`FAST_MIN_BUDGET` and :data:`FAST_BUDGET`
    releases; others :data:`SLOW_BUDGET`.
    """
    if not is_fast(mechanism, release.kind):
        return SLOW_BUDGET
    per_release = max(1, _release_size(release) + int(n_features))
    return int(np.clip(FAST_FLOATS // per_release, FAST_MIN_BUDGET, FAST_BUDGET))


def releases_for_time(rate: float, seconds: float, *, cap: int | None = None) -> int:
    """Releases that fit in ``seconds`` at ``rate`` releases per second, rounded down to the R10 series
    (1, 1.25, 1.6, 2, …, 8 × 10^k: at most 20 % below the exact figure), between :data:`MIN_TIMED_BUDGET`
    and ``cap`` (default :data:`TIMED_CAP`)."""
    raw = max(float(rate), 0.0) * max(float(seconds), 0.0)
    cap = TIMED_CAP if cap is None else int(cap)
    if raw >= cap:
        return int(cap)
    if raw < MIN_TIMED_BUDGET:
        return min(MIN_TIMED_BUDGET, cap)
    decade = 10.0 ** math.floor(math.log10(raw))
    level = max(v for v in _LEVELS if v * decade <= raw * (1 + 1e-12))
    return int(min(cap, max(MIN_TIMED_BUDGET, round(level * decade))))


def look_plan(n: int, alpha: float, *, looks: bool = True) -> list[tuple[int, float]]:
    """``[(cumulative releases per dataset, α of the look's statement), …]`` for a certification of ``n``.

    With ``looks`` the sizes are :data:`LOOK_FRACTIONS` of ``n`` and the levels
    :data:`LOOK_ALPHA_SHARES` of α; a look smaller than :data:`MIN_LOOK` (or no
    larger than the one before) is merged into the next, which inherits its
    share of α, so the levels always sum to α.  Without: one look, ``n`` at α.
    """
    n = max(1, int(n))
    if not looks:
        return [(n, float(alpha))]
    plan: list[tuple[int, float]] = []
    carried = 0.0
    for fraction, share in zip(LOOK_FRACTIONS, LOOK_ALPHA_SHARES):
        size = n if fraction >= 1.0 else int(n * fraction)
        carried += share
        if fraction < 1.0 and (size < MIN_LOOK or (plan and size <= plan[-1][0])):
            continue
        plan.append((size, alpha * carried))
        carried = 0.0
    return plan


def plan_chunk_size(mechanism: Mechanism, n_records: int, d: int, total: int) -> int:
    """Releases per chunk of a plan of ``total`` releases: :func:`default_chunk_size` for vectorised
    mechanisms; for code called once per release, a power of two that makes about 2,000 chunks of the
    whole plan (64 to 4,096: fewer round trips for fast plain functions, progress for slow ones).
    A function of the plan only, so a recorded total reproduces the chunks and their seeds."""
    if callable(getattr(mechanism, "release_many", None)) and bool(getattr(mechanism, "vectorised", True)):
        return default_chunk_size(mechanism, n_records, d)
    per = max(1, int(total) // 2000)
    return int(min(4096, max(64, 2 ** int(math.floor(math.log2(per))) if per > 1 else 64)))


@dataclass
class Plan:
    """Releases in all (``total``), for the pair search (``selection``) and per certification look."""

    total: int
    selection: int
    certification: int                       # releases per dataset, last look
    looks: list[tuple[int, float]]           # (cumulative releases per dataset, α of the look)
    source: str                              # samples | releases | time | default
    time_budget: float | None = None
    rate: float | None = None                # releases per second measured (time budgets)
    deadlines: dict[str, float] = field(default_factory=dict)  # perf_counter values: selection, final
    note: str = ""
    alpha: float = 0.05
    replanned: list[str] = field(default_factory=list)  # what the run changed once pairs were timed (search)
    lane_start: float = 0.0                  # seconds a fresh worker lane takes to start (timed plans)
    chunk_overhead: float = 0.0              # seconds a draw costs whatever its size (timed plans)

    @property
    def lane_releases(self) -> int:
        """A fresh lane's start in releases of the calibrated speed: what the search counts against its budget
        for each side of each candidate pair (0 unless timed)."""
        if not self.rate or self.source != "time" or self.lane_start < LANE_START_MIN:
            return 0
        return int(self.lane_start * self.rate)

    @property
    def fixed_samples(self) -> bool:
        return self.source == "samples"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "releases": self.total,
                               "selection_releases": self.selection, "certification_per_dataset": self.certification,
                               "looks": [[n, a] for n, a in self.looks]}
        if self.time_budget is not None:
            out["time_budget_seconds"] = self.time_budget
        if self.rate is not None:
            out["releases_per_second"] = self.rate
        if self.note:
            out["note"] = self.note
        if self.lane_releases:
            out["lane_start_seconds"] = self.lane_start
        if self.rate:
            out["seconds_per_call"] = 1.0 / self.rate
            out["ceiling_at_plan"] = self.ceiling()
            out["briefing"] = self.briefing(None)
        if self.replanned:
            out["replanned"] = list(self.replanned)
        return out

    def certification_for(self, rate: float | None, used: int, share: float = 1.0) -> int:
        """Certification releases per dataset once ``used`` releases are spent: ``share`` of what the plan leaves
        (a half each when two pairs are certified: :mod:`..certification.certified_pairs`); in a timed run whose pair runs
        :data:`SLOWER_PAIR` times slower than the calibration data (rate ``rate``, releases per second on its
        own datasets), what fits in that share of the time left at that speed — so the looks are sized for the
        code as it runs on that pair and the last one is drawn."""
        n = max(1, int(share * (self.total - int(used))) // 2)
        end = self.deadlines.get("budget")
        if self.source != "time" or not self.rate or end is None:
            return n
        speed = rate if rate is not None and rate * SLOWER_PAIR < self.rate else self.rate
        left = share * max(end - time.perf_counter(), 0.1 * float(self.time_budget or 0.0))
        fits = max(MIN_JUDGE // 2, int(speed * left / 2))  # below MIN_LOOK: one look (look_plan merges them)
        if fits < 0.8 * n:  # the search cost more time than planned, or the winner runs slower: what fits
            why = (f"the winning pair's own speed ({speed:.3g} releases/s, {self.rate / speed:.1f}× slower than the "
                   "calibration data)" if speed < self.rate else f"the {left:.0f} s left")
            self.replanned.append(f"certification sized for {why}: {fits:,} releases per dataset instead of {n:,}")
            self.certification, self.looks = fits, look_plan(fits, self.alpha, looks=len(self.looks) > 1)
            return fits
        return n

    def ceiling(self, delta: float = 0.0) -> float:
        """The largest ε the planned certification size can certify (every release of one dataset in the event,
        none of the other's), at the plan's α: what the budget buys."""
        return best_ceiling(self.certification, alpha=self.alpha, delta=delta)[0]

    def briefing(self, claim_epsilon: float | None, delta: float = 0.0) -> str:
        """What a timed budget buys, said at the start of the run: time per call, certification releases per
        dataset, the ceiling they allow, and the ``--time-budget`` that would lift the ceiling above the claim
        (:func:`time_for_ceiling`) when this one does not reach well beyond it."""
        if self.source != "time" or not self.rate:
            return ""
        per_call = 1.0 / self.rate
        ceiling = self.ceiling(delta)
        text = (f"timed at {_duration(per_call)} a call: the {self.time_budget:g} s budget buys about "
                f"{self.certification:,} certification releases per dataset ({self.total:,} in all), which can "
                f"certify at most ε = {ceiling:.3g} at {(1 - self.alpha) * 100:.4g}% confidence")
        if self.lane_start >= 0.1:
            text += (f"; a fresh worker takes {_duration(self.lane_start)} to start (two per candidate pair, "
                     "counted in the search's budget)")
        target = _target_ceiling(claim_epsilon)
        if target is not None and ceiling < target:
            seconds = time_for_ceiling(target, self.rate, alpha=self.alpha, delta=delta)
            text += (f"; to certify up to ε = {target:.3g} (twice the claim), run with --time-budget "
                     f"{math.ceil(seconds):d}, or make a call cheaper (cache what does not depend on the data)")
        return text + "."


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1.0 else f"{seconds:.3g} s"


def _target_ceiling(claim_epsilon: float | None) -> float | None:
    """The ceiling a run should reach to convict a claim that is wrong by a factor of two (None: no claim)."""
    if claim_epsilon is None or not math.isfinite(claim_epsilon) or claim_epsilon <= 0:
        return None
    return max(2.0 * float(claim_epsilon), 1.0)


def time_for_ceiling(target: float, rate: float, *, alpha: float, delta: float = 0.0) -> float:
    """Seconds of a timed budget whose certification can reach ``target`` (perfect separation at level α) at
    ``rate`` releases per second: the smallest size n per dataset whose ceiling reaches it (doubling, then
    bisection), drawn on both datasets after the selection share."""
    lo, hi = 1, 2
    while best_ceiling(hi, alpha=alpha, delta=delta)[0] < target:
        lo, hi = hi, hi * 2
        if hi > 10 ** 12:
            return math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if best_ceiling(mid, alpha=alpha, delta=delta)[0] < target else (lo, mid)
    total = 2 * hi / (1.0 - SELECTION_SHARE)
    return total / max(float(rate), 1e-12)


def make_plan(mechanism: Mechanism, probe: Release, width: int, *, alpha: float, samples: int | None,
              releases: int | None, time_budget: float | None, claim_private: bool, t_start: float,
              calibrate: Any = None) -> Plan:
    """The :class:`Plan` (see the module doc).  ``width``: features per release; ``calibrate()`` returns the
    measured rate (called for time budgets only); ``claim_private``: looks stop early only against a claim."""
    fast = is_fast(mechanism, probe.kind)
    looks = claim_private
    if samples is not None:
        selection = (releases - 2 * samples) if releases else max(samples, MIN_SELECTION[0 if fast else 1])
        if selection < 2 * 10:
            raise InvalidInputError(f"releases {releases} leave no selection releases after 2 × {samples} "
                                    "certification releases")
        return Plan(2 * samples + selection, selection, samples, look_plan(samples, alpha, looks=False), "samples",
                    alpha=alpha)
    rate, note, source, lane_start, overhead = None, "", "default", 0.0, 0.0
    deadlines: dict[str, float] = {}
    if releases is not None:
        total, source = int(releases), "releases"
    elif time_budget is not None:
        measured = calibrate()
        rate, lane_start, overhead = ((float(measured[0]), float(measured[1]), float(measured[2]))
                                      if isinstance(measured, tuple) else (float(measured), 0.0, 0.0))
        left = max(0.0, float(time_budget) - (time.perf_counter() - t_start))
        cap = default_budget(mechanism, probe, width) if fast else TIMED_CAP
        total, source = releases_for_time(rate, left, cap=cap), "time"
        if total > rate * left * 1.05:
            note = (f"at {rate:.3g} releases/s the time budget allows about {int(rate * left)} releases; "
                    f"{total} were planned (the least an audit needs), which takes about {total / rate:.0f} s")
        now = time.perf_counter()
        expected = total / max(rate, 1e-9)
        deadlines = {"selection": now + DEADLINE_FACTOR * SELECTION_SHARE * max(expected, left),
                     "final": t_start + DEADLINE_FACTOR * max(float(time_budget), expected),
                     "budget": t_start + max(float(time_budget), expected)}
    else:
        total = default_budget(mechanism, probe, width)
    selection = int(SELECTION_SHARE * total)
    n = max(1, (total - selection) // 2)
    return Plan(total, selection, n, look_plan(n, alpha, looks=looks), source, time_budget, rate, deadlines, note,
                alpha=alpha, lane_start=lane_start if source == "time" else 0.0, chunk_overhead=overhead)
