"""CLI sub-commands.  Each module defines ``register(app: typer.Typer)``."""
