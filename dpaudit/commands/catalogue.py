"""``dpaudit mechanisms`` and ``dpaudit datasets``: what can be audited, on what."""

from __future__ import annotations

import textwrap
from typing import Any

import typer

from dpaudit.commands.support import user_errors


def list_mechanisms() -> None:
    """List the registered mechanisms: name, claim, release kind, source."""
    with user_errors():
        import dpaudit.mechanisms
        from dpaudit.console import echo, table

        rows = [[m.name, m.neighbours, m.release_kind, m.source, m.summary] for m in dpaudit.mechanisms.describe()]
        echo(table(["name", "claim", "release", "source", "summary"], rows), "",
             "Plug-ins: --mechanism package.module:attr, path/to/file.py:attr, "
             "or an entry point in group 'dpaudit.mechanisms'; a program in any language (C, R, Octave, "
             "JavaScript, …): --mechanism \"cmd:COMMAND\", speaking dpaudit's protocol (docs/executables.md).")


def list_datasets() -> None:
    """List the built-in datasets (a CSV is given with --data FILE.csv)."""
    with user_errors():
        from dpaudit.console import echo, table
        from dpaudit.data import datasets

        rows = []
        for ds in datasets.describe():
            n_classes = "-" if ds.n_classes is None else str(ds.n_classes)
            rows.append([ds.name, str(ds.n_records), str(ds.n_features), n_classes, box_text(ds.bounds),
                         ds.description])
        echo(table(["name", "records", "dims", "classes", "public box", "description"], rows, right=(1, 2, 3)), "",
             textwrap.fill("public box: the domain the data is public to lie in (never computed from the records) — "
                           "where the ε estimate places its canaries, what a plug-in that takes bounds is given, and "
                           "what a plug-in that clips should clip to. Any numeric CSV: --data FILE.csv "
                           "[--label-column NAME]; it has no public box: state one with --bounds LO,HI.", width=100))


def box_text(bounds: Any) -> str:
    """A dataset's public box in a few characters: ``[-15, 15]²`` when every feature has the same range, else the
    first features' ranges (``[0, 10]×[0, 5]×…``); ``none`` without one."""
    if bounds is None:
        return "none"
    lo, hi = (list(map(float, b)) for b in bounds)
    if len(set(lo)) == 1 and len(set(hi)) == 1:
        power = "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(len(lo)))
        return f"[{lo[0]:g}, {hi[0]:g}]{power if len(lo) > 1 else ''}"
    shown = "×".join(f"[{a:g}, {b:g}]" for a, b in list(zip(lo, hi))[:2])
    return shown + ("×…" if len(lo) > 2 else "")


def register(app: typer.Typer) -> None:
    app.command("mechanisms")(list_mechanisms)
    app.command("datasets")(list_datasets)
