"""CLI sub-commands, thin typer adapters: options → config → workflow → console output → exit code.

Each module defines ``register(app: typer.Typer)`` and imports its workflow package
(:mod:`dpaudit.attack`, :mod:`dpaudit.estimate`, :mod:`dpaudit.sweep`, :mod:`dpaudit.audit`)
inside the command function, so ``--help`` stays fast; :mod:`~dpaudit.commands.support` holds
the shared plumbing (one-line errors, exit codes, writable-path checks, the default run directory).
"""
