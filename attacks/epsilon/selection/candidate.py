"""One candidate neighbouring pair in the pair search, and how it is evaluated.

A :class:`Candidate` holds what the search learnt about one pair: its feature
layout, its selection sample kept as :class:`~dpaudit.attacks.epsilon.selection.evidence.Evidence`
(raw feature rows while its statistics are being fitted, counts after that),
the event chosen on it and the predictions that rank it.  :func:`evaluate`
gives a candidate more releases and re-selects its event; :func:`refusal`
reads its probe releases for a dataset the code refuses as a whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from dpaudit.execution import SchedulerError
from dpaudit.mechanisms.base import InvalidInputError, Release

from ..pairs.neighbours import NeighbourPair
from ..pairs.refusals import Refusal
from .binning import Binning
from .curve_selection import scaled_rank
from .evidence import Evidence
from .features import FeatureMap, compact
from .selection import EventSelector, SelectedEvent

__all__ = ["Candidate", "Sampler", "evaluate", "refusal", "refusal_reason"]


class Sampler(Protocol):
    """Draws releases for the search (implemented by :mod:`dpaudit.attacks.epsilon.sampling.sampling`), counting them in ``used``;
    ``refused`` maps ``id(pair)`` to the sides the code refused as a whole (set by :func:`evaluate`)."""

    used: int
    refused: dict[int, tuple[int, ...]]

    def probe(self, pair: NeighbourPair, key: tuple[int, ...]) -> tuple[list[Release], list[Release]]: ...

    def coupled(self, pair: NeighbourPair, key: tuple[int, ...], size: int, sides: tuple[int, ...] = (0, 1)
                ) -> list[tuple[list[Release], np.ndarray]]: ...  # D and D′ on shared streams (screening)

    def retain(self, pairs: list[NeighbourPair]) -> None: ...  # end the lanes of every other pair

    def rate(self, pair: NeighbourPair) -> float | None: ...  # releases per second on its datasets (None: not yet)

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
    evidence: Evidence | None = None  # its selection sample: raw rows to fit on, then counts (dpaudit.attacks.epsilon.selection.evidence)
    selected: SelectedEvent | None = None
    status: str = "pending"   # pending | ok | screened | unscreened | error | broken | outside-domain | skipped
    note: str = ""
    rounds: int = 0           # rounds it took part in
    refused: tuple[int, ...] = ()  # sides (0: D, 1: D′) the code refused as a whole (see refusal)
    slowdown: float = 1.0     # how much slower the code ran on its datasets than on the calibration data
    probed: Refusal | None = None  # what its probe showed: sizes, sides refused, why (dpaudit.attacks.epsilon.pairs.refusals)
    screen_calls: int = 0     # coupled screening releases per side it got (dpaudit.attacks.epsilon.search.screening)
    screen_score: float = 0.0  # its screening score: the standardised coupled difference, per unit of the claim
    answered: bool = False    # the code released something (not a failure, not an empty answer) on both sides

    def _per_unit(self, value: float) -> float:
        """A prediction per unit of the claim: an ε bound divided by the pair's scale; a notion's curve gap as it
        is, below every unscaled pair's on a scaled one (:func:`~.curve_selection.scaled_rank`)."""
        if self.selected is None:
            raise RuntimeError(f"the pair {self.pair.name} has no selected event to predict from")
        if self.selected.ranked_by == "curve gap":
            return scaled_rank(value, self.pair.scale)
        return value / self.pair.scale

    @property
    def rank(self) -> tuple[float, float]:
        """Validated expected bound (or a notion's curve gap) and point estimate, per unit of the claim."""
        if self.selected is None:
            return (-math.inf, -math.inf)
        pred, point = self.selected.rank
        return (self._per_unit(pred), point / self.pair.scale)

    @property
    def promise(self) -> float:
        """What it is likely to certify: its best candidate's prediction at the plain selection level (no
        discount for how many were compared), per unit of the claim.  Survival between rounds goes by it."""
        if self.selected is None:
            return -math.inf
        return self._per_unit(self.selected.likely)

    @property
    def optimistic(self) -> float:
        """The most its event's validation counts allow it to certify, per unit of the claim (racing)."""
        if self.selected is None:
            return -math.inf
        return self._per_unit(self.selected.optimistic)

    @property
    def channel(self) -> str:
        """The refusal this pair's evidence is, in words ("raises ValueError on D in every call, releases on
        D′"), when the code refused one side as a whole; empty otherwise."""
        return self.probed.channel if self.probed is not None and self.status == "ok" else ""

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

    def select(self, select: EventSelector, competitors: int = 1) -> None:
        """Choose and validate its event on everything it holds (a round of the search)."""
        if self.evidence is None:
            raise RuntimeError(f"the pair {self.pair.name} was not screened: no evidence to select on")
        self.selected = select(self.evidence, competitors)
        self.evidence.keep(self.selected.contenders)
        self.status = "ok"
        self.rounds += 1

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pair": self.pair.name, "family": self.pair.family, "status": self.status}
        if self.note:
            out["note" if self.status != "error" else "error"] = self.note
        if self.refused:
            out["refused"] = ["D" if side == 0 else "D′" for side in self.refused]
            if self.channel:
                out["refusal_channel"] = self.channel
        if self.slowdown > 1.0:
            out["slowdown"] = float(self.slowdown)
        if self.screen_calls:
            out["screening"] = {"calls_per_side": self.screen_calls, "score": float(self.screen_score),
                                "answered_both_sides": self.answered}
        if self.evidence is not None:
            out["samples_per_dataset"] = self.drawn
        if self.selected is not None:
            out.update({"expected_bound": float(self.rank[0]), "event": self.selected.event.describe()["text"],
                        "selection_counts": list(self.selected.selection_counts),
                        "samples_per_dataset": self.drawn,
                        "rounds": self.rounds, "statistics_scored": self.selected.candidates_scored})
            if self.selected.ranked_by != "epsilon":  # expected_bound is then the gap below the claimed curve
                out["ranked_by"] = self.selected.ranked_by
        return out


def _all_failed(releases: list[Release]) -> bool:
    return bool(releases) and all(r.kind == "failed" for r in releases)


def _reason(releases: list[Release]) -> str:
    """What a refused dataset's calls failed with: the failure kind and the exception's type."""
    first = releases[0]
    error = str(getattr(first, "error", ""))
    kind = error.split(":", 1)[0].strip() if ":" in error else ""
    return f"{getattr(first, 'reason', 'failed')}" + (f" ({kind})" if kind else "")


def refusal_reason(releases: list[Release]) -> str:
    """A refused dataset's failure in a few words (``raises LinAlgError``), as a refusal states it."""
    return _reason(releases).replace(" (", " ").rstrip(")")


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
             competitors: int = 1, sizer: Callable[[int], int] | None = None) -> None:
    """Give ``c`` ``size`` more releases per dataset (a probe first) and re-select its event.

    ``sizer(size)``, asked after the probe (which times the pair's own datasets): the draw it actually gets.

    Releases come back as raw feature rows while its statistics are still being fitted
    (:attr:`~dpaudit.attacks.epsilon.selection.evidence.Evidence.raw_room`), and as counts of the statistics still in the running
    after that (:meth:`Sampler.tally`)."""
    try:
        if c.fmap is None:
            rel_D, rel_Dp = sampler.probe(c.pair, (c.id,))
            c.refused, note = refusal(rel_D, rel_Dp, beyond_box=c.pair.family == "outlier")
            c.probed = Refusal((len(c.pair.D), len(c.pair.D_prime)), c.refused,
                               refusal_reason(rel_D if 0 in c.refused else rel_Dp) if c.refused else "")
            if c.refused:
                sampler.refused[id(c.pair)] = c.refused
            if c.refused == (0, 1):
                c.status, c.note = "outside-domain", note
                return
            c.note = note
            c.fmap = FeatureMap(c.pair, kind).fit_layout(rel_D + rel_Dp)
            c.evidence = select.evidence(c.fmap.names)
            c.evidence.add_raw([compact(c.fmap(rel_D))], [compact(c.fmap(rel_Dp))])
        if c.evidence is None:
            raise RuntimeError(f"the pair {c.pair.name} was screened without evidence")
        if sizer is not None:
            size = sizer(size)
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
    c.select(select, competitors)
