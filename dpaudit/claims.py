"""The notions a claim can be stated in besides (ε, δ), in one table: :data:`NOTIONS`.

Each entry is a notion as a run is told it: its ``name`` (the field of
:class:`~dpaudit.options.ClaimOptions` and the parameter of every command), its command-line ``flag``, the
``kind`` of value the option takes and its ``help``, the ``words`` a sentence names it with, and ``read``: the
value as given → the :class:`~dpaudit.mechanisms.notions.Notion` (its class checks it).  Adding a notion is
adding its class (:mod:`dpaudit.mechanisms.notions`) and an entry here: every command gets the option, every
config keeps its value, the reports name the notion by the class.

At most one notion per run; with none the claim is (ε, δ) as before.  A claim in a notion keeps an (ε, δ)
point — its ε at the run's δ (``--delta``, default :data:`~dpaudit.mechanisms.base.DEFAULT_POINT_DELTA`) — which
is reported beside the verdict on the whole curve (docs/notions.md).  Like the command line, this module loads
no numpy until a notion is read.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from dpaudit.mechanisms.base import PrivacyClaim
    from dpaudit.mechanisms.notions import Notion, PrivacyProfile, RenyiDP

__all__ = ["NOTIONS", "NotionOption", "notion_claim", "notion_from_options", "parse_rdp", "read_profile"]


def _invalid(message: str) -> Exception:
    from dpaudit.mechanisms.base import InvalidInputError

    return InvalidInputError(message)


def parse_rdp(text: str) -> RenyiDP:
    """``"A:E,A:E"`` — Rényi DP at order A with ε(A) = E — as a :class:`RenyiDP`."""
    from dpaudit.mechanisms.notions import RenyiDP

    orders, epsilons = [], []
    for item in (part.strip() for part in str(text).split(",")):
        if not item:
            continue
        order, sep, eps = item.partition(":")
        if not sep:
            raise _invalid(f'--rdp takes order:epsilon pairs like "2:0.5,8:1.9"; got {item!r}')
        try:
            orders.append(float(order))
            epsilons.append(float(eps))
        except ValueError:
            raise _invalid(f"--rdp: {item!r} is not order:epsilon in numbers") from None
    return RenyiDP(tuple(orders), tuple(epsilons))


def read_profile(path: Path | str) -> PrivacyProfile:
    """A CSV of ``epsilon,delta`` rows (a header row naming them is skipped; other columns are ignored)."""
    from dpaudit.mechanisms.notions import PrivacyProfile

    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = [row for row in csv.reader(handle) if row and any(cell.strip() for cell in row)]
    except OSError as err:
        raise _invalid(f"--profile: cannot read {path}: {err.strerror or err}") from None
    if rows and rows[0][0].strip().lower() in ("epsilon", "eps", "ε"):
        header = [cell.strip().lower() for cell in rows[0]]
        i_eps, i_delta = 0, header.index("delta") if "delta" in header else 1
        rows = rows[1:]
    else:
        i_eps, i_delta = 0, 1
    try:
        pairs = [(float(row[i_eps]), float(row[i_delta])) for row in rows]
    except (ValueError, IndexError):
        raise _invalid(f"--profile: {path} must hold epsilon,delta rows of numbers") from None
    if not pairs:
        raise _invalid(f"--profile: {path} holds no epsilon,delta row")
    return PrivacyProfile(tuple(e for e, _ in pairs), tuple(d for _, d in pairs))


def _zero_cdp(value: Any) -> Notion:
    from dpaudit.mechanisms.notions import ZeroCDP

    return ZeroCDP(value)


def _gaussian_dp(value: Any) -> Notion:
    from dpaudit.mechanisms.notions import GaussianDP

    return GaussianDP(value)


@dataclass(frozen=True)
class NotionOption:
    """A notion as a run is told it (the fields: see the module's docstring)."""

    name: str
    flag: str
    kind: type
    help: str
    words: str
    read: Callable[[Any], Notion]


NOTIONS: tuple[NotionOption, ...] = (
    NotionOption("rho", "--rho", float, "Claim: ρ-zero-concentrated DP (OpenDP's zCDP measurements); its whole "
                 "trade-off curve is tested.", "ρ-zCDP", _zero_cdp),
    NotionOption("mu", "--mu", float, "Claim: μ-Gaussian DP (f-DP); its whole trade-off curve is tested.",
                 "μ-GDP", _gaussian_dp),
    NotionOption("rdp", "--rdp", str, 'Claim: Rényi DP at orders, "A:E,A:E" (order α : ε(α), as Opacus and '
                 'TF-Privacy state it).', "Rényi DP", parse_rdp),
    NotionOption("profile", "--profile", Path, "Claim: a privacy profile, a CSV of epsilon,delta rows (as an "
                 "accountant prints them).", "a privacy profile", read_profile),
)


def notion_from_options(**values: Any) -> Notion | None:
    """The notion the options state by name (``rho=0.5``; None values are not stated; None: no notion, the claim
    is (ε, δ)); more than one is an error, as is a name :data:`NOTIONS` does not hold."""
    by_name = {n.name: n for n in NOTIONS}
    unknown = [name for name in values if name not in by_name]
    if unknown:
        known = ", ".join(f"{n.name} ({n.words})" for n in NOTIONS)
        raise _invalid(f"unknown notion {', '.join(unknown)}; the notions are {known}")
    given = [(option, values[option.name]) for option in NOTIONS if values.get(option.name) is not None]
    if len(given) > 1:
        raise _invalid(f"state the claim in one notion; got {', '.join(option.flag for option, _ in given)}")
    if not given:
        return None
    option, value = given[0]
    from dpaudit.mechanisms.base import InvalidInputError

    try:
        return option.read(value)
    except InvalidInputError as exc:  # the option named: "--mu: mu must be > 0 and finite, got -1.0"
        message = str(exc)
        raise _invalid(message if message.startswith("--") else f"{option.flag}: {message}") from None


def notion_claim(notion: Notion, *, delta: float | None = None, neighbours: str | None = None) -> PrivacyClaim:
    """The claim in ``notion``: its (ε, δ) point at ``delta`` (None: :data:`DEFAULT_POINT_DELTA`; it must be > 0),
    for ``neighbours`` (None: add-remove)."""
    from dpaudit.mechanisms.base import DEFAULT_POINT_DELTA, PrivacyClaim

    if delta is not None and not float(delta) > 0.0:
        raise _invalid(f"a claim in a notion is tested with its (ε, δ) point, which needs δ > 0; got --delta "
                       f"{float(delta):g} (leave it out for δ = {DEFAULT_POINT_DELTA:g})")
    return PrivacyClaim.stated(notion, delta=DEFAULT_POINT_DELTA if delta is None else float(delta),
                               neighbours=neighbours or "add-remove")
