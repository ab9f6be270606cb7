"""What the audited code refuses: its domain, or a leak channel.

Real code raises on inputs it considers outside its domain — an empty dataset,
fewer records than clusters.  Under add-remove neighbours such a refusal tells
D from D′ perfectly (the code raises on D, releases on D′), and a certificate
built on it convicts correct code.  A DP claim is made for the datasets the code
accepts, so the pair search classifies every refusal it sees (:func:`classify`)
before any verdict rests on one:

* **A size threshold** — the code refuses every dataset below some size m and
  none at or above it (every probed dataset smaller than the smallest one it
  answered on was refused, whatever its records): that is its *domain*.  Pairs
  with a dataset below m are outside it and are not used; the report says
  "refuses datasets of fewer than m records".  ``min_records`` (``--min-records``)
  states the domain instead of reading it off the refusals.
* **Anything else** — a dataset refused at or above m while another of its size
  is answered, one side of a same-size pair refused, refusals that depend on the
  values — is a *leak channel*: whether the code raises is output.  The pair
  competes like any other and, if it wins, its event is the refusal itself and
  the conclusion says so in words (:attr:`Refusal.channel`); an exception never
  enters an event under another name.

A dataset counts as refused when every one of its probe calls failed
(:func:`~dpaudit.attacks.epsilon.selection.candidate.refusal`); code that fails one call in a
hundred refuses nothing.  A refused record beyond the public box (the
``outlier`` family) is a check of the record's domain and is set aside by
:func:`~dpaudit.attacks.epsilon.selection.candidate.refusal` already.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .pair import NeighbourPair

__all__ = ["Domain", "Refusal", "classify", "domain_checks", "domain_note"]

SMALL_SIZES = 4  # a threshold read off refusals is checked at every size below it up to this many, and the last


@dataclass(frozen=True)
class Refusal:
    """What one candidate pair's probe showed: the sizes of D and D′ and the sides refused as a whole, with
    the failure's reason (for example ``raises (ValueError)``)."""

    sizes: tuple[int, int]
    refused: tuple[int, ...]
    reason: str = ""

    @property
    def channel(self) -> str:
        """The refusal in words, for a conclusion that rests on it: "raises ValueError on D in every call,
        releases on D′"."""
        if len(self.refused) != 1:
            return ""
        side, other = ("D", "D′") if self.refused == (0,) else ("D′", "D")
        what = self.reason or "refuses"
        return f"{what} on {side} ({self.sizes[self.refused[0]]} records) in every call, releases on {other}"


@dataclass(frozen=True)
class Domain:
    """The datasets the code accepts, as far as the search can tell: every dataset of at least
    ``min_records`` records.  ``source``: ``stated`` (the user's), ``observed`` (read off refusals), or
    ``none`` (nothing refused for its size)."""

    min_records: int = 0
    source: str = "none"

    def excludes(self, sizes: Iterable[int]) -> bool:
        return any(int(n) < self.min_records for n in sizes)

    def describe(self) -> str:
        if self.min_records <= 0:
            return ""
        records = "record (an empty dataset)" if self.min_records == 1 else "records"
        if self.source == "stated":
            return f"datasets of fewer than {self.min_records} {records} are outside the stated domain (--min-records)"
        return f"refuses datasets of fewer than {self.min_records} {records}"

    def to_dict(self) -> dict[str, Any]:
        return {"min_records": self.min_records, "source": self.source, "text": self.describe()}


def classify(observed: Iterable[Refusal], stated: int | None = None) -> Domain:
    """The code's domain from what every probed pair showed (see the module doc).

    ``stated``: the user's ``min_records``, taken as it is.  Otherwise the domain starts at the smallest
    size the code answered on, when every smaller dataset probed was refused (a size threshold); with no
    refusal below it, or none at all, the domain is every size (``min_records`` 0) and every refusal seen
    is a leak channel.
    """
    if stated is not None:
        return Domain(int(stated), "stated")
    answered: set[int] = set()
    refused: set[int] = set()
    for r in observed:
        for side, n in enumerate(r.sizes):
            (refused if side in r.refused else answered).add(int(n))
    if not refused:
        return Domain()
    smallest = min(answered) if answered else max(refused) + 1
    if not any(n < smallest for n in refused):
        return Domain()
    return Domain(smallest, "observed")


def domain_note(domain: Domain) -> str:
    """A candidate's note when its pair lies outside the domain."""
    return f"outside the code's domain: it {domain.describe()}, not used" if domain.source == "observed" else (
        f"outside the stated domain: {domain.describe()}, not used")


def domain_checks(min_records: int, lo: np.ndarray, hi: np.ndarray) -> list[NeighbourPair]:
    """Add-remove pairs that check a size threshold read off refusals: D of each size below it (every size
    up to :data:`SMALL_SIZES`, and the one just below), its records at the box centre or at a corner, and D′
    one record more at the other place — so D′ of the last reaches the threshold itself.  Probed, they show
    whether the code refuses by size alone."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    mid = (lo + hi) / 2.0
    sizes = sorted({s for s in range(min(int(min_records), SMALL_SIZES))} | {int(min_records) - 1})
    pairs = []
    for m in sizes:
        for at, other, where in ((mid, lo, "centre"), (lo, hi, "corner")):
            D = np.repeat(at[None, :], m, axis=0)
            pairs.append(NeighbourPair(f"domain-check-{m}-{where}", D, np.vstack([D, other[None, :]]), "add-remove",
                                       m, other.copy(), None, description=f"{m} records at the box {where}, and one "
                                       "more: does the code refuse by size alone?", family="domain-check"))
    return pairs
