"""CLI sub-commands, thin typer adapters: options → config → workflow → console output → exit code.

Each module defines ``register(app: typer.Typer)`` and imports its workflow package
(:mod:`dpaudit.attack`, :mod:`dpaudit.estimate`, :mod:`dpaudit.sweep`, :mod:`dpaudit.audit`)
inside the command function, so ``--help`` stays fast; :mod:`~dpaudit.commands.options` holds
the options the commands share (each defined once) and the panels of their ``--help``, and
:mod:`~dpaudit.commands.support` the shared plumbing (one-line errors, exit codes, writable-path
checks, the default run directory).
"""
