"""``dpaudit mechanisms`` and ``dpaudit datasets``: what can be audited, on what."""

from __future__ import annotations

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
             "or an entry point in group 'dpaudit.mechanisms'.")


def list_datasets() -> None:
    """List the built-in datasets (a CSV is given with --data FILE.csv)."""
    with user_errors():
        from dpaudit.console import echo, table
        from dpaudit.data import datasets

        rows = []
        for ds in datasets.describe():
            n_classes = "-" if ds.n_classes is None else str(ds.n_classes)
            rows.append([ds.name, str(ds.n_records), str(ds.n_features), n_classes, ds.description])
        echo(table(["name", "records", "dims", "classes", "description"], rows, right=(1, 2, 3)), "",
             "Any numeric CSV: --data FILE.csv [--label-column NAME].")


def register(app: typer.Typer) -> None:
    app.command("mechanisms")(list_mechanisms)
    app.command("datasets")(list_datasets)
