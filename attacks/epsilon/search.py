"""Adaptive search for the neighbouring pair to certify, within a stated
selection budget (all of it on selection samples: the search takes no share
of α, see :mod:`attacks.epsilon`).

1. **Probe.**  Each candidate pair (:func:`attacks.epsilon.neighbours.candidate_pairs`,
   in priority order) first gets a few releases of D and D′: they fix the
   feature layout (:meth:`attacks.epsilon.features.FeatureMap.fit_layout`) and show
   whether the mechanism refuses the pair (:func:`refusal`) — if it raises
   on every release of *both* datasets, the pair is outside the domain the
   code accepts (fewer records than clusters, say) and is set aside with a
   note; if it refuses one dataset only, that refusal is observable output
   and the pair competes like any other.  The probe releases join the
   pair's selection sample.
2. **Model-based search** (when the budget allows it, :func:`model_search`):
   a TPE optimiser (optuna, seeded) proposes small whole datasets — up to
   :data:`MAX_SEARCH_RECORDS` records around a centre anywhere in the box,
   with a spread from one point to the whole box, plus the canary
   (add-remove), the new place of record 0 (replace) or the direction it
   moves in (metric) — each scored by the bound its own selection sample
   predicts; the best few join the candidates with their samples.
3. **Successive halving with racing** (Jamieson & Talwalkar 2016;
   :func:`successive_halving`): every surviving candidate gets fresh releases
   of D and D′ (round r: s₀·ηʳ per dataset, added to what it has), its event
   is chosen and validated on everything it has
   (:func:`attacks.epsilon.selection.select_event`), and the best ⌈1/η⌉ by validated
   expected bound (per unit of the claim: divided by the pair's scale) go on
   — with up to as many *contenders* (:func:`_race`): candidates whose
   optimistic prediction still reaches the leader's conservative one, which
   a rare event's wide limits would otherwise drop in round one.  A
   contender gets a cheaper look (1/η of the round's size), so the search
   costs at most 1/η more than planned; the best after the last round wins.  Each round costs about the
   same, so the budget is spent where the expected bound is highest
   (:func:`plan_rounds` sets s₀ so the rounds spend the budget exactly).

Everything is deterministic: release seeds are keyed by (stage, candidate,
round, dataset), the optimiser is seeded, ties keep the priority order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from mechanisms.base import InvalidInputError, Release

from .binning import Binning
from execution import SchedulerError
from .evidence import Evidence
from .features import FeatureMap, compact
from .neighbours import NeighbourPair
from .selection import EventSelector, SelectedEvent

__all__ = ["Candidate", "MAX_SEARCH_RECORDS", "Sampler", "model_search", "plan_rounds", "refusal",
           "successive_halving"]

ETA = 3                    # successive halving keeps the best 1/ETA each round
MAX_SEARCH_RECORDS = 10    # datasets proposed by the model-based search have 0–10 records
MAX_SEARCH_DIM = 16        # ... in at most this many dimensions
SEARCH_KEEP = 3            # searched datasets that join the candidates


class Sampler(Protocol):
    """Draws releases for the search (implemented by :mod:`attacks.epsilon.sampling`), counting them in ``used``;
    ``refused`` maps ``id(pair)`` to the sides the code refused as a whole (set by :func:`evaluate`)."""

    used: int
    refused: dict[int, tuple[int, ...]]

    def probe(self, pair: NeighbourPair, key: tuple[int, ...]) -> tuple[list[Release], list[Release]]: ...

    def features(self, pair: NeighbourPair, fmap: FeatureMap, side: int, key: tuple[int, ...],
                 size: int) -> list[np.ndarray]: ...  # feature rows, in blocks

    def tally(self, pair: NeighbourPair, fmap: FeatureMap, side: int, key: tuple[int, ...], size: int,
              binnings: list[Binning]) -> tuple[list[np.ndarray], int]: ...  # counts per statistic, drawn


@dataclass(eq=False)
class Candidate:
    """One candidate pair and what the search learnt about it."""

    id: int
    pair: NeighbourPair
    fmap: FeatureMap | None = None
    evidence: Evidence | None = None  # its selection sample: raw rows to fit on, then counts (attacks.epsilon.evidence)
    selected: SelectedEvent | None = None
    status: str = "pending"   # pending | ok | error | outside-domain | skipped
    note: str = ""
    rounds: int = 0           # rounds it took part in
    refused: tuple[int, ...] = ()  # sides (0: D, 1: D′) the code refused as a whole (see refusal)

    @property
    def rank(self) -> tuple[float, float]:
        """Validated expected bound and point estimate, per unit of the claim."""
        if self.selected is None:
            return (-math.inf, -math.inf)
        pred, point = self.selected.rank
        return (pred / self.pair.scale, point / self.pair.scale)

    @property
    def promise(self) -> float:
        """What it is likely to certify: its best candidate's prediction at the plain selection level (no
        discount for how many were compared), per unit of the claim.  Survival between rounds goes by it."""
        if self.selected is None:
            return -math.inf
        return self.selected.likely / self.pair.scale

    @property
    def optimistic(self) -> float:
        """The most its event's validation counts allow it to certify, per unit of the claim (racing)."""
        if self.selected is None:
            return -math.inf
        return self.selected.optimistic / self.pair.scale

    @property
    def drawn(self) -> int:
        """Selection releases per dataset it holds."""
        return 0 if self.evidence is None else int(min(self.evidence.drawn))

    @property
    def separates(self) -> bool:
        """Did its event split D from D′ perfectly on the validation part?"""
        if self.selected is None:
            return False
        k_fav, k_oth, n = self.selected.selection_counts
        return n > 0 and k_fav == n and k_oth == 0

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pair": self.pair.name, "family": self.pair.family, "status": self.status}
        if self.note:
            out["note" if self.status != "error" else "error"] = self.note
        if self.refused:
            out["refused"] = ["D" if side == 0 else "D′" for side in self.refused]
        if self.selected is not None:
            out.update({"expected_bound": float(self.rank[0]), "event": self.selected.event.describe()["text"],
                        "selection_counts": list(self.selected.selection_counts),
                        "samples_per_dataset": self.drawn,
                        "rounds": self.rounds, "statistics_scored": self.selected.candidates_scored})
        return out


def _all_failed(releases: list[Release]) -> bool:
    return bool(releases) and all(r.kind == "failed" for r in releases)


def _reason(releases: list[Release]) -> str:
    """What a refused dataset's calls failed with: the failure kind and the exception's type."""
    first = releases[0]
    error = str(getattr(first, "error", ""))
    kind = error.split(":", 1)[0].strip() if ":" in error else ""
    return f"{getattr(first, 'reason', 'failed')}" + (f" ({kind})" if kind else "")


def refusal(rel_D: list[Release], rel_Dp: list[Release], *, beyond_box: bool = False
            ) -> tuple[tuple[int, ...], str]:
    """(sides refused as a whole, a note) from a pair's probe releases.

    Both refused: the pair is outside the code's domain (an input it rejects on
    both sides, e.g. fewer records than clusters) and is not used.  One refused:
    the refusal is observable output — whether the code raises tells D from D′
    — and the pair competes like any other with its failures as outcomes;
    except where D′ is refused and its changed record lies beyond the public
    box (``beyond_box``, the ``outlier`` family): code that refuses a record
    outside its domain is checking its input, and that pair is set aside like
    one refused on both sides.
    """
    refused = tuple(side for side, rel in enumerate((rel_D, rel_Dp)) if _all_failed(rel))
    if refused == (1,) and beyond_box:  # D′ holds the far record
        return (0, 1), (f"refused the dataset with a record beyond the public box ({_reason(rel_Dp)}): a check of "
                        "its domain, not used")
    if refused == (0, 1):
        a, b = _reason(rel_D), _reason(rel_Dp)
        why = a if a == b else f"{a} on D, {b} on D′"
        return refused, f"refused on both sides ({why}): outside the inputs the code accepts, not used"
    if refused:
        which, other = ("D", "D′") if refused == (0,) else ("D′", "D")
        rel = rel_D if refused == (0,) else rel_Dp
        return refused, (f"refused {which} on every probe call ({_reason(rel)}) and answered on {other}: the "
                         "refusal is observable output, used like any other")
    return (), ""


def evaluate(c: Candidate, sampler: Sampler, kind: str, size: int, key: tuple[int, ...], select: EventSelector,
             competitors: int = 1) -> None:
    """Give ``c`` ``size`` more releases per dataset (a probe first) and re-select its event.

    Releases come back as raw feature rows while its statistics are still being fitted
    (:attr:`~attacks.epsilon.evidence.Evidence.raw_room`), and as counts of the statistics still in the running
    after that (:meth:`Sampler.tally`)."""
    try:
        if c.fmap is None:
            rel_D, rel_Dp = sampler.probe(c.pair, (c.id,))
            c.refused, note = refusal(rel_D, rel_Dp, beyond_box=c.pair.family == "outlier")
            if c.refused:
                sampler.refused[id(c.pair)] = c.refused
            if c.refused == (0, 1):
                c.status, c.note = "outside-domain", note
                return
            c.note = note
            c.fmap = FeatureMap(c.pair, kind).fit_layout(rel_D + rel_Dp)
            c.evidence = select.evidence(c.fmap.names)
            c.evidence.add_raw([compact(c.fmap(rel_D))], [compact(c.fmap(rel_Dp))])
        assert c.evidence is not None
        raw = min(size, c.evidence.raw_room)
        if raw > 0:
            new = [sampler.features(c.pair, c.fmap, side, key, raw) for side in (0, 1)]
            c.evidence.add_raw(new[0], new[1])
        if size > raw and c.evidence.counted():
            counted = [sampler.tally(c.pair, c.fmap, side, key, size - raw, c.evidence.counted()) for side in (0, 1)]
            for side, (counts, drawn) in enumerate(counted):
                c.evidence.add_counts(side, counts, drawn)
    except SchedulerError:  # not the mechanism's fault: stop at once
        raise
    except (InvalidInputError, ValueError, RuntimeError) as exc:  # the mechanism refused this pair
        c.status, c.note = "error", f"{type(exc).__name__}: {exc}"
        return
    c.selected = select(c.evidence, competitors)
    c.evidence.keep(c.selected.contenders)
    c.status = "ok"
    c.rounds += 1


def _survivors(n_candidates: int) -> list[int]:
    """Candidates in each round of successive halving: P, ⌈P/η⌉, ⌈⌈P/η⌉/η⌉, ..., 1."""
    counts = [max(1, int(n_candidates))]
    while counts[-1] > 1:
        counts.append(int(math.ceil(counts[-1] / ETA)))
    return counts


def plan_rounds(n_candidates: int, budget: int, *, min_size: int, first_size: int | None = None
                ) -> tuple[int, list[int]]:
    """(candidates kept, per-round releases per dataset per survivor) for successive halving.

    Round r keeps the best ⌈·/η⌉ of the previous round and gives each
    s₀·ηʳ fresh releases per dataset, so every round costs about the same;
    the rounds together cost 2·s₀·Σ_r Pᵣ·ηʳ releases, which must fit in
    ``budget``.  With ``first_size`` s₀ is given (and the budget follows);
    otherwise candidates are dropped from the end of the priority list until
    s₀ ≥ ``min_size``.
    """
    P = max(1, int(n_candidates))
    while True:
        counts = _survivors(P)
        cost = sum(c * ETA ** r for r, c in enumerate(counts))
        s0 = int(first_size) if first_size else int(budget // (2 * cost))
        if first_size or s0 >= min_size or P == 1:
            break
        P -= 1
    s0 = max(s0, 1)
    return P, [s0 * ETA ** r for r in range(len(counts))]


def _order(candidates: list[Candidate], claim: float | None) -> list[Candidate]:
    """Best first by validated expected bound; where the claim is given, a candidate expected to exceed it
    on evidence other than a refusal goes before one whose evidence is that the code refused a dataset
    (both show a violation; the first says more about the code).  Stable: ties keep the priority order."""
    if claim is None or not math.isfinite(claim):
        return sorted(candidates, key=lambda c: c.rank, reverse=True)
    return sorted(candidates, key=lambda c: (c.rank[0] > claim and not c.refused, c.rank), reverse=True)


def _race(ranked: list[Candidate], keep: int, claim: float | None = None) -> tuple[list[Candidate], list[Candidate]]:
    """(leaders, contenders) after a round: the ``keep`` most promising (successive halving's ⌈P/η⌉, by
    :attr:`Candidate.promise`; where the claim is given, those expected to exceed it on evidence other than a
    refusal first), and up to ``keep`` *contenders* beyond them whose optimistic prediction (the most their
    validation counts allow) still reaches the best conservative one — they cannot be ruled out yet, and a
    rare event's wide limits would otherwise lose them in round one.  The most promising first.

    Promise, not the conservative prediction, decides who goes on: the conservative one discounts every
    candidate for the many it was compared with, which in round one buries a weak but real leak under the
    noise of a small validation part; the final choice (:func:`_order`) is still made on it."""
    leader = ranked[0].rank[0]
    exceeds = (lambda c: c.rank[0] > claim and not c.refused) if claim is not None and math.isfinite(claim) \
        else (lambda c: False)
    by_promise = sorted(ranked, key=lambda c: (exceeds(c), c.promise, c.rank), reverse=True)
    leaders = by_promise[:keep]
    contenders = [c for c in by_promise[keep:] if c.optimistic >= leader > -math.inf]
    return leaders, contenders[:keep]


def successive_halving(candidates: list[Candidate], sampler: Sampler, kind: str, sizes: list[int],
                       select: EventSelector, *, claim: float | None = None,
                       out_of_time: Callable[[], bool] | None = None,
                       enough: Callable[[Candidate], bool] | None = None) -> Candidate | None:
    """Run the rounds of :func:`plan_rounds`; returns the winner (None if every candidate failed).

    Candidates that already hold samples (from the model-based search) are
    topped up to round 0's size.  A candidate naming another in ``fallback_for`` is skipped
    when that one already separates D from D′ perfectly.  ``claim`` (per unit,
    None: nothing claimed) orders candidates expected to exceed it
    (:func:`_order`).  ``out_of_time()`` true: no further candidate is drawn
    (the rounds end with what they have); ``enough(leader)`` true after a
    round: the leader is certain enough of a violation that more rounds would
    only delay it, and the search stops.
    """
    active = list(candidates)
    contenders: set[int] = set()  # ids of this round's contenders: a cheaper look (1/η of the round's size)
    by_name = {c.pair.name: c for c in candidates}
    planned = _survivors(len(candidates))  # survivors planned per round; the sizes assume them
    ranked: list[Candidate] = []
    for r, size in enumerate(sizes):
        for c in active:
            if out_of_time is not None and out_of_time():
                break
            other = by_name.get(c.pair.fallback_for or "")
            if other is not None and other.separates:
                c.status, c.note = "skipped", f"{other.pair.name} already separates D from D′ perfectly"
                continue
            draw = max(1, size // ETA) if c.id in contenders else size
            if r == 0 and c.status == "ok":  # from the model-based search: top up to the round's size
                draw = size - c.drawn
                if draw <= 0:
                    continue
            evaluate(c, sampler, kind, draw, (1, c.id, r), select, competitors=len(active))
        ok = [c for c in active if c.status == "ok"]
        ranked = _order(ok, claim)
        if not ranked or (out_of_time is not None and out_of_time()) or (enough is not None and enough(ranked[0])):
            break
        if r + 1 < len(sizes):
            leaders, racing = _race(ranked, planned[min(r + 1, len(planned) - 1)], claim)
            active, contenders = leaders + racing, {c.id for c in racing}
            retain = getattr(sampler, "retain", None)
            if callable(retain):  # the dropped candidates' worker processes are not needed any more
                retain([c.pair for c in active])
    return ranked[0] if ranked else None


# --------------------------------------------------------------------------- #
# Model-based search over small whole datasets
# --------------------------------------------------------------------------- #
def _trial_pair(trial: Any, number: int, relation: str, lo: np.ndarray, hi: np.ndarray, distance: float,
                offsets: np.ndarray) -> NeighbourPair:
    """The dataset pair a trial proposes: m records around a centre, with a spread, and the change.

    Records are ``centre + spread·(hi − lo)·offsets[i]/2`` clipped to the box,
    the offsets a fixed standard-normal draw per search, so a trial is 2d + 2
    numbers (m, centre, spread, and the canary / new place / direction) — few
    enough for TPE to model — and spreads from one point to the whole box.
    """
    d = len(lo)
    m = trial.suggest_int("m", 0 if relation == "add-remove" else 1, MAX_SEARCH_RECORDS)
    centre = np.array([trial.suggest_float(f"centre_{j}", float(lo[j]), float(hi[j])) for j in range(d)])
    spread = trial.suggest_float("spread", 0.0, 1.0)
    D = np.clip(centre + spread * (hi - lo) * offsets[:m] / 2.0, lo, hi)
    name, text = f"search{number}", f"model-based search (TPE), trial {number}: {m} record(s)"
    if relation == "add-remove":
        canary = np.array([trial.suggest_float(f"c_{j}", float(lo[j]), float(hi[j])) for j in range(d)])
        return NeighbourPair(name, D, np.vstack([D, canary[None, :]]), relation, m, canary, None,
                             description=text + " and a canary", family="search")
    if relation == "replace":
        new = np.array([trial.suggest_float(f"c_{j}", float(lo[j]), float(hi[j])) for j in range(d)])
        scale = 1.0
    else:
        u = np.array([trial.suggest_float(f"u_{j}", -1.0, 1.0) for j in range(d)])
        norm = float(np.linalg.norm(u))
        u = u / norm if norm > 1e-9 else np.eye(d)[0]
        new = D[0] + distance * u
        scale = distance
    Dp = D.copy()
    Dp[0] = new
    return NeighbourPair(name, D, Dp, relation, 0, new, D[0].copy(), distance if relation == "metric" else 1.0,
                         scale, text + "; record 0 changed", family="search")


def model_search(sampler: Sampler, kind: str, relation: str, lo: np.ndarray, hi: np.ndarray, distance: float,
                 *, trials: int, size: int, seed: int, first_id: int, select: EventSelector) -> list[Candidate]:
    """TPE over small whole datasets; the :data:`SEARCH_KEEP` best trials, as evaluated candidates."""
    if trials < 1 or len(lo) > MAX_SEARCH_DIM:
        return []
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(4, trials // 3)))
    offsets = np.random.default_rng(seed).standard_normal((MAX_SEARCH_RECORDS, len(lo)))
    found: list[Candidate] = []
    for number in range(trials):
        trial = study.ask()
        cand = Candidate(first_id + number, _trial_pair(trial, number, relation, lo, hi, distance, offsets))
        evaluate(cand, sampler, kind, size, (2, cand.id), select, competitors=trials)
        value = cand.rank[0] if cand.status == "ok" else -math.inf
        study.tell(trial, float(value) if math.isfinite(value) else -10.0)
        if cand.status == "ok":
            found.append(cand)
    found.sort(key=lambda c: c.rank, reverse=True)
    return found[:SEARCH_KEEP]
