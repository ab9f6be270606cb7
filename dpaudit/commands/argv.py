"""The command line as typed, read the way its options are documented before click parses it: ``--pair`` takes
two files, spelt ``--pair D.csv D2.csv`` or ``--pair D.csv,D2.csv`` (:func:`pair_comma_form`)."""

from __future__ import annotations

__all__ = ["pair_comma_form"]


def pair_comma_form(args: list[str]) -> list[str]:
    """``--pair D.csv,D2.csv`` (or ``--pair=D.csv,D2.csv``) as ``--pair D.csv D2.csv``: the option takes two files,
    and either spelling names them."""
    out: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        value = token.partition("=")[2] if token.startswith("--pair=") else (
            args[i + 1] if token == "--pair" and i + 1 < len(args) else None)
        files = value.split(",") if value is not None and not value.startswith("-") else []
        if len(files) == 2 and all(files):
            out += ["--pair", *files]
            i += 1 if token.startswith("--pair=") else 2
            continue
        out.append(token)
        i += 1
    return out
