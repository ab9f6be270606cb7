"""The release drawn in 2-D over a public synthetic stand-in — never over the audited records.

The caller re-runs the mechanism on the stand-in and stores that release under
``release_2d`` (:mod:`dpaudit.report.standin`); a release that held an audited
record was withheld there (:mod:`dpaudit.report.guard`) and is not drawn.
"""

from __future__ import annotations

import numpy as np

from dpaudit.run_shapes import RunResults

from .drawing import WIDTH_IN, Figure, figure_style, to_png

__all__ = ["release_figure"]


def release_figure(results: RunResults) -> Figure | None:
    """A 2-D release drawn over the public stand-in; ``None`` without one (or when it was withheld)."""
    rel = results.get("release_2d")
    if not isinstance(rel, dict) or not rel.get("stand_in") or rel.get("withheld"):
        return None
    data = np.asarray(rel["stand_in"], float)
    if data.ndim != 2 or data.shape[1] != 2:
        return None
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 6.4), layout="constrained")
        ax.scatter(data[:, 0], data[:, 1], s=10, c="0.6", label="public stand-in data")
        kind = rel.get("kind")
        if kind == "points" and rel.get("points") is not None:  # any number of points, none included
            pts = np.asarray(rel["points"], float).reshape(-1, 2)
            ax.scatter(pts[:, 0], pts[:, 1], s=10, c="tab:red", alpha=0.6,
                       label="released points" if len(pts) else "released points (none)")
        elif kind == "centroids" and rel.get("centers") is not None:  # any number of centres, none included
            c = np.asarray(rel["centers"], float).reshape(-1, 2)
            ax.scatter(c[:, 0], c[:, 1], s=110, marker="X", c="tab:red", edgecolor="k",
                       label="released centres" if len(c) else "released centres (none)")
        elif kind == "labels" and rel.get("labels") is not None:
            lab = np.asarray(rel["labels"])
            ax.scatter(data[:, 0], data[:, 1], s=12, c=lab, cmap="tab10", label="released labels (colour)")
        elif kind == "spans" and rel.get("cells") is not None:
            from matplotlib.patches import Rectangle
            origin = np.asarray(rel["origin"], float)
            w = float(rel["width"])
            cmap = plt.get_cmap("tab10")
            for j, cells in enumerate(rel["cells"]):
                for cx, cy in np.asarray(cells, int).reshape(-1, 2):
                    ax.add_patch(Rectangle((origin[0] + cx * w, origin[1] + cy * w), w, w,
                                           color=cmap(j % 10), alpha=0.35, lw=0))
            ax.plot([], [], "s", color=cmap(0), alpha=0.35, label="released spans (one colour each)")
        ax.set_aspect("equal", adjustable="datalim")
        ax.legend(loc="best")
        ax.set_title(f"the mechanism at ε = {rel.get('epsilon', '?')}")
        png = to_png(fig)
    return Figure("release", "The release in 2-D (public stand-in)",
                  str(rel.get("description", "The mechanism run on a public synthetic stand-in, "
                                             "not on the audited records.")), png)
