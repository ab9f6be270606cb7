"""``dpaudit mechanisms`` and ``dpaudit datasets``: what can be audited, on what."""

from __future__ import annotations

import typer

from dpaudit.commands.support import user_errors


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*map(str, r)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def list_mechanisms() -> None:
    """List the registered mechanisms: name, claim, release kind, source."""
    with user_errors():
        import mechanisms

        rows = [[m.name, m.neighbours, m.release_kind, m.source, m.summary] for m in mechanisms.describe()]
        typer.echo(_table(rows, ["name", "claim", "release", "source", "summary"]))
        typer.echo("\nPlug-ins: --mechanism package.module:attr, path/to/file.py:attr, "
                   "or an entry point in group 'dpaudit.mechanisms'.")


def list_datasets() -> None:
    """List the built-in datasets (a CSV is given with --data FILE.csv)."""
    with user_errors():
        from dpaudit.data import datasets

        rows = []
        for ds in datasets.describe():
            n_classes = "-" if ds.n_classes is None else str(ds.n_classes)
            rows.append([ds.name, str(ds.n_records), str(ds.n_features), n_classes, ds.description])
        typer.echo(_table(rows, ["name", "records", "dims", "classes", "description"]))
        typer.echo("\nAny numeric CSV: --data FILE.csv [--label-column NAME].")


def register(app: typer.Typer) -> None:
    app.command("mechanisms")(list_mechanisms)
    app.command("datasets")(list_datasets)
