"""What a program's reply line says (``cmd:COMMAND``, :mod:`dpaudit.mechanisms.executable_protocol`): the releases
it holds, each checked on its own, as the worker sends them (a meta and its arrays), or stacked when they all have
one shape.  Standard library and numpy only: a worker in another interpreter loads this file by path.

A line that is not a reply — not JSON, not an object, the wrong number of releases, too long — is
:class:`Unframed` (the program is out of step: it is restarted); ``{"error": …}`` for the whole request is
:class:`RequestFailed`.  Within a well-framed reply each release stands alone: ``{"error": …}`` is that release's
failure (``raises``), a value that is not numbers of the handshake's kind its ``wrong-shape``, ``null`` a value the
program has no answer for (NaN, part of the release).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple, Union

import numpy as np

__all__ = ["Entry", "RequestFailed", "Stacked", "Unframed", "decode", "entries", "shown"]

# One release as the worker sends it, a meta and its arrays (typing's names: a worker may run in an older
# interpreter, where these aliases are evaluated too).
Entry = Tuple[Dict[str, Any], Dict[str, np.ndarray]]
ERROR_CHARS = 500  # of a program's error text kept in a finding


class Unframed(Exception):
    """A reply line that is not a reply: not JSON, not an object, the wrong number of releases, too long."""


class RequestFailed(Exception):
    """The program answered ``{"error": …}`` to a whole request."""


class Stacked:
    """A whole batch of same-shape releases of one kind, stacked on a first axis (``value``)."""

    def __init__(self, kind: str, value: np.ndarray) -> None:
        self.kind, self.value = kind, value


def shown(raw: bytes, limit: int = 80) -> str:
    """A line a program wrote, quoted and cut for a message."""
    text = raw.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")


def decode(raw: bytes, count: int, output: str, d: int, limit: int) -> Union[Stacked, List[Entry]]:
    """The ``count`` releases of kind ``output`` (on d-dimensional data) in the reply line ``raw``, read with a
    limit of ``limit`` bytes: stacked when every one is numbers of one shape, else one entry per release."""
    if not raw.endswith(b"\n") and len(raw) >= limit:
        raise Unframed(f"the program wrote a reply line of more than {limit} bytes")
    try:
        reply = json.loads(raw)
    except ValueError:
        raise Unframed(f"the program wrote {shown(raw)}, not a JSON reply (stdout carries only protocol "
                       "lines: write anything else to stderr)") from None
    if isinstance(reply, dict) and "releases" not in reply and "error" in reply:
        raise RequestFailed(f"the program answered an error: {str(reply['error'])[:ERROR_CHARS]}")
    releases = reply.get("releases") if isinstance(reply, dict) else None
    if not isinstance(releases, list) or len(releases) != count:
        got = f"{len(releases)} releases" if isinstance(releases, list) else shown(raw)
        raise Unframed(f"the program answered {got} to a request for {count}")
    together = _stacked(releases, output, d)
    return together if together is not None else [_one(r, output, d) for r in releases]


def entries(stacked: Stacked) -> List[Entry]:
    """A stacked batch as one entry per release."""
    return [({"kind": stacked.kind}, {"value": row}) for row in stacked.value]


def _whole(value: np.ndarray) -> bool:
    return bool(np.isfinite(value).all() and (value == np.round(value)).all())


def _stacked(releases: List[Any], output: str, d: int) -> Union[Stacked, None]:
    """All releases as one array when they have one shape and every value is a number (or null)."""
    try:
        value = np.array(releases, dtype=np.float64)
    except (ValueError, TypeError):
        return None
    m = len(releases)
    if output == "vector" and value.ndim == 1:
        value = value.reshape(m, 1)
    elif output == "centroids" and value.size == 0:
        value = value.reshape(m, 0, d)
    elif output == "labels":
        if value.ndim != 2 or not _whole(value):
            return None
        value = value.astype(np.int64)
    return Stacked(output, value) if value.ndim >= 2 else None


def _one(release: Any, output: str, d: int) -> Entry:
    """One release of a reply as the worker's meta and arrays (a failed one: its ``failed`` meta)."""
    if isinstance(release, dict) and "error" in release:
        return {"kind": "failed", "reason": "raises",
                "error": f"the program answered an error: {str(release['error'])[:ERROR_CHARS]}"}, {}
    try:
        value = np.array(release, dtype=np.float64)
    except (ValueError, TypeError):
        return {"kind": "failed", "reason": "wrong-shape",
                "error": f"the program released {shown(json.dumps(release).encode())}, not {output}"}, {}
    if output == "vector":
        value = np.atleast_1d(value)
    elif output == "centroids" and value.size == 0:
        value = value.reshape(0, d)
    elif output == "labels":
        if not _whole(value):
            return {"kind": "failed", "reason": "wrong-shape",
                    "error": "the program released labels that are not whole numbers"}, {}
        value = value.astype(np.int64)
    return {"kind": output}, {"value": value}
