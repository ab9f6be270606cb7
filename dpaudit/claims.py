"""A claim from the command line's notion options: ``--rho``, ``--mu``, ``--rdp "A:E,A:E"``, ``--profile FILE``.

At most one notion per run; with none the claim is (ε, δ) as before.  A claim in a notion keeps an (ε, δ)
point — its ε at the run's δ (``--delta``, default :data:`~dpaudit.mechanisms.base.DEFAULT_POINT_DELTA`) — which
is reported beside the verdict on the whole curve (docs/notions.md).

Every command's config carries the four options as given (``rho``, ``mu``, ``rdp``, ``profile``: what its
provenance shows) and checks them on construction (:func:`check_notion_options`); the run builds the claim with
:func:`notion_claim`.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from dpaudit.mechanisms.base import DEFAULT_POINT_DELTA, InvalidInputError, PrivacyClaim
from dpaudit.mechanisms.notions import GaussianDP, Notion, PrivacyProfile, RenyiDP, ZeroCDP

__all__ = ["check_notion_options", "config_notion", "notion_claim", "notion_from_options", "parse_rdp",
           "read_profile"]


def parse_rdp(text: str) -> RenyiDP:
    """``"A:E,A:E"`` — Rényi DP at order A with ε(A) = E — as a :class:`RenyiDP`."""
    orders, epsilons = [], []
    for item in (part.strip() for part in str(text).split(",")):
        if not item:
            continue
        order, sep, eps = item.partition(":")
        if not sep:
            raise InvalidInputError(f'--rdp takes order:epsilon pairs like "2:0.5,8:1.9"; got {item!r}')
        try:
            orders.append(float(order))
            epsilons.append(float(eps))
        except ValueError:
            raise InvalidInputError(f"--rdp: {item!r} is not order:epsilon in numbers") from None
    return RenyiDP(tuple(orders), tuple(epsilons))


def read_profile(path: Path) -> PrivacyProfile:
    """A CSV of ``epsilon,delta`` rows (a header row naming them is skipped; other columns are ignored)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = [row for row in csv.reader(handle) if row and any(cell.strip() for cell in row)]
    except OSError as err:
        raise InvalidInputError(f"--profile: cannot read {path}: {err.strerror or err}") from None
    if rows and rows[0][0].strip().lower() in ("epsilon", "eps", "ε"):
        header = [cell.strip().lower() for cell in rows[0]]
        i_eps, i_delta = 0, header.index("delta") if "delta" in header else 1
        rows = rows[1:]
    else:
        i_eps, i_delta = 0, 1
    try:
        pairs = [(float(row[i_eps]), float(row[i_delta])) for row in rows]
    except (ValueError, IndexError):
        raise InvalidInputError(f"--profile: {path} must hold epsilon,delta rows of numbers") from None
    if not pairs:
        raise InvalidInputError(f"--profile: {path} holds no epsilon,delta row")
    return PrivacyProfile(tuple(e for e, _ in pairs), tuple(d for _, d in pairs))


def notion_from_options(rho: float | None = None, mu: float | None = None, rdp: str | None = None,
                        profile: Path | None = None) -> Notion | None:
    """The notion the options state (None: none, the claim is (ε, δ)); more than one is an error."""
    given = {name: value for name, value in (("--rho", rho), ("--mu", mu), ("--rdp", rdp), ("--profile", profile))
             if value is not None}
    if len(given) > 1:
        raise InvalidInputError(f"state the claim in one notion; got {', '.join(given)}")
    try:
        if rho is not None:
            return ZeroCDP(rho)
        if mu is not None:
            return GaussianDP(mu)
        if rdp is not None:
            return parse_rdp(rdp)
        if profile is not None:
            return read_profile(Path(profile))
    except InvalidInputError as exc:  # the option named: "--mu: mu must be > 0 and finite, got -1.0"
        message = str(exc)
        raise InvalidInputError(message if message.startswith("--") else f"{next(iter(given))}: {message}") from None
    return None


def config_notion(config: Any) -> Notion | None:
    """The notion a command's config states through its ``rho``, ``mu``, ``rdp`` and ``profile`` fields."""
    return notion_from_options(rho=config.rho, mu=config.mu, rdp=config.rdp,
                               profile=None if config.profile is None else Path(config.profile))


def notion_claim(notion: Notion, *, delta: float | None = None, neighbours: str | None = None) -> PrivacyClaim:
    """The claim in ``notion``: its (ε, δ) point at ``delta`` (None: :data:`DEFAULT_POINT_DELTA`; it must be > 0),
    for ``neighbours`` (None: add-remove)."""
    if delta is not None and not float(delta) > 0.0:
        raise InvalidInputError(f"a claim in a notion is tested with its (ε, δ) point, which needs δ > 0; got --delta "
                                f"{float(delta):g} (leave it out for δ = {DEFAULT_POINT_DELTA:g})")
    return PrivacyClaim.stated(notion, delta=DEFAULT_POINT_DELTA if delta is None else float(delta),
                               neighbours=neighbours or "add-remove")


def check_notion_options(config: Any, *, delta: float | None = None, neighbours: str | None = None
                         ) -> Notion | None:
    """At a config's construction: the notion options read (one notion at most, each value valid, a profile file
    that reads) and, when one is given, its claim made once (a δ its point has an ε at; not a metric claim).
    The notion (None: the claim is (ε, δ))."""
    notion = config_notion(config)
    if notion is not None:
        notion_claim(notion, delta=delta, neighbours=neighbours)
    return notion
