"""What every report figure shares: the :class:`Figure` record, sizes made to be read, PNG output.

Figures are at least :data:`MIN_WIDTH_PX` pixels wide with legends of at least
9 pt (:data:`STYLE`), saved at their own size (never cropped).
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = ["DPI", "Figure", "LEGEND_PT", "MIN_WIDTH_PX", "STYLE", "WIDTH_IN", "figure_style", "plt_module",
           "to_png"]

DPI = 100
MIN_WIDTH_PX = 800
WIDTH_IN = MIN_WIDTH_PX / DPI
LEGEND_PT = 9.5
STYLE = {"font.size": 10.5, "axes.titlesize": 11.5, "axes.labelsize": 10.5, "legend.fontsize": LEGEND_PT,
         "xtick.labelsize": 9.5, "ytick.labelsize": 9.5, "figure.dpi": DPI, "savefig.dpi": DPI}


@dataclass(frozen=True)
class Figure:
    name: str          # file stem: fig-<name>.png
    title: str
    caption: str
    png: bytes


def plt_module() -> Any:
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


@contextlib.contextmanager
def figure_style() -> Iterator[Any]:
    """pyplot with the report's sizes (fonts, dpi) for the figures made inside the block."""
    plt = plt_module()
    with plt.rc_context(STYLE):
        yield plt


def to_png(fig: Any) -> bytes:
    """The figure as PNG bytes at its own size (never cropped below :data:`MIN_WIDTH_PX`)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    plt_module().close(fig)
    return buf.getvalue()
