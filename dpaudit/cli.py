"""The ``dpaudit`` command line (typer).

One root app; each area registers its commands from :mod:`dpaudit.commands`.
"""

from __future__ import annotations

import os
from typing import Optional

import typer

from .commands import attack, audit, catalogue, estimate, report, sweep
from .commands.support import OneLineErrorGroup

app = typer.Typer(
    name="dpaudit",
    cls=OneLineErrorGroup,
    help="Privacy attacks and empirical ε audits for DP clustering and perturbation mechanisms.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode="rich",  # option panels and epilogs; a literal "[" in a help text is written "\\["
)


def _version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"dpaudit {__version__}")
        raise typer.Exit()


@app.callback()
def root(version: Optional[bool] = typer.Option(
        None, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
         debug: bool = typer.Option(False, "--debug", help="Messages also name dpaudit's own source locations "
                                    "(for a bug report): dpaudit --debug COMMAND …")) -> None:
    """dpaudit treats each mechanism as a black box: what does an attacker learn, can the claimed ε hold?"""
    if debug:
        os.environ["DPAUDIT_DEBUG"] = "1"  # read where errors are described, here and in this run's workers


for _module in (catalogue, attack, report, sweep, audit, estimate):
    _module.register(app)


def main() -> None:  # console-script entry point
    app()


if __name__ == "__main__":
    main()
