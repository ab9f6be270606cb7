"""What every benchmark does with its output files: never replace one silently.

``benchmarks/results/`` holds committed results.  A benchmark asked to write a
file that exists stops before it runs and says so; ``--force`` replaces it.
Rows a benchmark could not run (a dataset file that is absent) are named in
the written file and on stderr, never dropped silently.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable

__all__ = ["add_force", "guard_outputs", "skipped_note", "write_page"]


def add_force(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true",
                        help="replace output files that exist (e.g. the committed results in benchmarks/results/)")


def guard_outputs(args: argparse.Namespace, *names: str) -> None:
    """Exit (code 2, one line) when an output file named by ``args.<name>`` exists and ``--force`` is off."""
    existing = [getattr(args, n) for n in names if getattr(args, n, None) is not None
                and Path(getattr(args, n)).exists()]
    if existing and not getattr(args, "force", False):
        print(f"Error: {', '.join(map(str, existing))} exists (committed results?); pass --force to replace it, "
              "or give another path", file=sys.stderr)
        raise SystemExit(2)


def skipped_note(skipped: Iterable[str]) -> str:
    """A line for the results file naming the rows that were not run (empty when none), echoed on stderr."""
    skipped = list(skipped)
    if not skipped:
        return ""
    note = "Skipped (data not found; give --datasets DIR): " + "; ".join(skipped)
    print(note, file=sys.stderr)
    return f"\n{note}\n"


REPOSITORY = Path(__file__).resolve().parents[1]


def portable(arg: str) -> str:
    """An argument as a committed page shows it: a path inside the repository relative to it, another
    absolute path by its last part only (no machine paths in committed results)."""
    path = Path(arg)
    if not path.is_absolute():
        return arg
    try:
        return path.resolve().relative_to(REPOSITORY).as_posix()
    except ValueError:
        return f"…/{path.name}"


def git_commit() -> str:
    """The checkout's commit, marked when it has uncommitted changes ("unknown" outside a git checkout)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPOSITORY, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPOSITORY,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def write_page(out: Path | None, text: str, payload: dict[str, Any], announce: bool = True) -> None:
    """A benchmark's page at ``out`` and its JSON beside it (same name, ``.json``); nothing is written without
    ``out``.  ``announce`` prints the page and says where it went (off for the rewrites a long run makes as it
    goes)."""
    if announce:
        print(text)
    if out is None:
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if announce:
        print(f"wrote {out} and {out.with_suffix('.json')}", file=sys.stderr)
