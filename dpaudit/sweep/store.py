"""Durable storage of a sweep's finished cells: ``cells.jsonl``, one JSON line per cell.

Nothing is lost: every finished cell is appended (flushed and fsynced) as soon
as it is done; ``--resume`` reads the file back and runs only the missing cells.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import cast

from dpaudit.run_shapes import SweepCell

__all__ = ["CellStore"]


class CellStore:
    """Append-only ``cells.jsonl``: one finished cell per line, durable as soon as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[tuple[int, int], SweepCell]:
        """Finished cells by (ε index, repeat); a torn last line (killed mid-write) is ignored."""
        cells: dict[tuple[int, int], SweepCell] = {}
        if not self.path.is_file():
            return cells
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                cell = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(cell, dict) and "eps_index" in cell and "repeat" in cell:
                cells[(int(cell["eps_index"]), int(cell["repeat"]))] = cast(SweepCell, cell)  # a line append wrote
        return cells

    def append(self, cell: SweepCell) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        prefix = b""
        if self.path.is_file() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                prefix = b"" if fh.read(1) == b"\n" else b"\n"  # start fresh after a torn line
        with open(self.path, "ab") as fh:
            fh.write(prefix + json.dumps(cell, allow_nan=True).encode("utf-8") + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
