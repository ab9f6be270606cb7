"""Report figures (matplotlib, Agg backend), each drawn only when its data is present.

Every figure function takes the plain results dict and returns a
:class:`Figure` (name, title, caption, PNG bytes) or ``None``.  Figures are
small on purpose (modest size and dpi, no PNG metadata beyond the format).

The 2-D release figure never draws the audited records: the caller re-runs
the mechanism on a public synthetic stand-in and stores that release under
``release_2d`` (see :mod:`dpaudit.report.standin`); the figure says so.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Figure", "UTILITY_METRICS", "all_figures"]

UTILITY_METRICS: dict[str, str] = {
    "ari": "ARI vs non-private", "ami": "AMI vs non-private", "ari_truth": "ARI vs ground truth",
    "silhouette": "silhouette", "calinski_harabasz": "Calinski–Harabasz",
    "davies_bouldin": "Davies–Bouldin", "nicv": "NICV", "f_measure": "F-measure",
}
_DPI = 90


@dataclass(frozen=True)
class Figure:
    name: str          # file stem: fig-<name>.png
    title: str
    caption: str
    png: bytes


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def _to_png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight", metadata={"Software": None})
    _plt().close(fig)
    return buf.getvalue()


def _summary_series(results: dict[str, Any], metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(ε, mean, std) of one sweep metric over the ε grid, skipping missing cells."""
    rows = (results.get("sweep") or {}).get("summary") or []
    eps, mean, std = [], [], []
    for row in rows:
        m = (row.get("metrics") or {}).get(metric)
        if m is None or m.get("mean") is None:
            continue
        eps.append(float(row["epsilon"]))
        mean.append(float(m["mean"]))
        std.append(float(m.get("std") or 0.0))
    if not eps:
        return None
    return np.asarray(eps), np.asarray(mean), np.asarray(std)


def _sweep_metrics(results: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for row in (results.get("sweep") or {}).get("summary") or []:
        for name in row.get("metrics") or {}:
            if name not in names:
                names.append(name)
    return names


def _eps_axis(ax: Any, eps: np.ndarray) -> None:
    if eps.size and eps.min() > 0 and eps.max() / eps.min() > 20:
        ax.set_xscale("log")
    ax.set_xlabel("claimed ε")
    ax.grid(alpha=0.3)


def utility_figure(results: dict[str, Any]) -> Figure | None:
    """Utility vs ε: one panel per utility metric, one line per clusterer (thesis Fig. 5.3–5.4)."""
    names = _sweep_metrics(results)
    panels: dict[str, list[str]] = {}
    for name in names:
        head, _, metric = name.rpartition(".")
        if head and metric in UTILITY_METRICS and not head.startswith("mia"):
            panels.setdefault(metric, []).append(name)
    if not panels:
        return None
    plt = _plt()
    keys = [k for k in UTILITY_METRICS if k in panels]
    ncol = min(3, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.4 * ncol, 2.7 * nrow), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        for name in panels[key]:
            series = _summary_series(results, name)
            if series is None:
                continue
            eps, mean, std = series
            ax.errorbar(eps, mean, yerr=std, marker="o", ms=3, capsize=2, lw=1,
                        label=name.rpartition(".")[0])
            _eps_axis(ax, eps)
        ax.set_title(UTILITY_METRICS[key], fontsize=9)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    fig.tight_layout()
    return Figure("utility", "Utility vs ε", "Mean ± std over repeats; ARI/AMI compare the clustering of "
                  "the release with the same clusterer on the plain data.", _to_png(fig))


def advantage_figure(results: dict[str, Any]) -> Figure | None:
    """MIA advantage vs ε with std error bars and the ε-DP ceiling (e^ε − 1)/(e^ε + 1)."""
    names = [n for n in _sweep_metrics(results) if n.startswith("mia.") and n.endswith(".advantage")]
    if not names:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    lo, hi = math.inf, 0.0
    for name in names:
        eps, mean, std = _summary_series(results, name)  # type: ignore[misc]
        lo, hi = min(lo, eps.min()), max(hi, eps.max())
        ax.errorbar(eps, mean, yerr=std, marker="o", ms=3, capsize=2, lw=1, label=name.split(".")[1])
    grid = np.geomspace(lo, hi, 200) if hi / lo > 20 else np.linspace(lo, hi, 200)
    ax.plot(grid, np.tanh(grid / 2.0), "k--", lw=1, label="ε-DP ceiling (e^ε−1)/(e^ε+1)")
    _eps_axis(ax, grid)
    ax.set_ylabel("advantage TPR − FPR")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return Figure("advantage", "Membership-inference advantage vs ε",
                  "Mean ± std over repeats; dashed: the largest advantage any ε-DP mechanism allows.",
                  _to_png(fig))


def _roc_curves(results: dict[str, Any]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    curves = []
    for c in results.get("roc_curves") or []:
        curves.append((str(c.get("label", "")), np.asarray(c["fpr"], float), np.asarray(c["tpr"], float)))
    for a in results.get("attacks") or []:
        roc = a.get("roc") if isinstance(a, dict) else None
        if isinstance(roc, dict) and "fpr" in roc and "tpr" in roc:
            curves.append((str(a.get("name", "")), np.asarray(roc["fpr"], float), np.asarray(roc["tpr"], float)))
    return [c for c in curves if c[1].size > 1 and c[1].size == c[2].size]


def roc_figure(results: dict[str, Any]) -> Figure | None:
    """Log–log ROC curves (the low-FPR regime is where membership leaks show)."""
    curves = _roc_curves(results)
    if not curves:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.2, 3.8))
    floor = 1e-4
    for label, fpr, tpr in curves:
        ax.plot(np.maximum(fpr, floor), np.maximum(tpr, floor), lw=1.2, label=label)
    ax.plot([floor, 1], [floor, 1], "k:", lw=1, label="chance")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor, 1)
    ax.set_ylim(floor, 1)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return Figure("roc", "ROC curves (log–log)", f"Rates below {floor:g} are drawn at {floor:g}.", _to_png(fig))


def certified_figure(results: dict[str, Any]) -> Figure | None:
    """Certified ε lower bound vs claimed ε, with the diagonal (above it = violation)."""
    names = [n for n in _sweep_metrics(results) if n.endswith("epsilon_lower_bound")]
    claim = (results.get("mechanism") or {}).get("claim") or {}
    if claim.get("neighbours", "add-remove") != "add-remove":
        # Membership attacks certify add/remove ε (one-run bound): no diagonal to compare with here.
        names = [n for n in names if not n.startswith("mia.")]
    points: list[tuple[float, float]] = []
    est = results.get("epsilon_estimate")
    if isinstance(est, dict) and est.get("epsilon_lower_bound") is not None and est.get("claim"):
        point = (float(est["claim"]["epsilon"]), float(est["epsilon_lower_bound"]))
        if all(math.isfinite(v) for v in point):  # a non-private baseline (claim ε = ∞) has no diagonal point
            points.append(point)
    if not names and not points:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.4, 3.8))
    top = 0.0
    for name in names:
        eps, mean, std = _summary_series(results, name)  # type: ignore[misc]
        ax.errorbar(eps, mean, yerr=std, marker="o", ms=3, capsize=2, lw=1,
                    label=name.replace(".epsilon_lower_bound", "") or "ε estimate")
        vals = np.concatenate([eps, np.where(np.isfinite(std), mean + std, mean)])
        vals = vals[np.isfinite(vals)]
        top = max(top, float(vals.max())) if vals.size else top
    for claim, lb in points:
        ax.plot([claim], [lb], "rs", ms=7, label="ε estimate (certified)")
        top = max(top, claim, lb)
    top = top * 1.1 if math.isfinite(top) and top > 0 else 1.0
    ax.plot([0, top], [0, top], "k--", lw=1, label="claim = bound")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("claimed ε")
    ax.set_ylabel("certified ε lower bound")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return Figure("certified", "Certified ε vs claimed ε",
                  "A bound above the dashed diagonal is a violation of the claim "
                  "(metric claims: per unit distance).", _to_png(fig))


def displacement_figure(results: dict[str, Any]) -> Figure | None:
    """Mean displacement ‖z − x‖ vs ε (thesis Fig. 5.6)."""
    series = _summary_series(results, "displacement")
    if series is None:
        return None
    eps, mean, std = series
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    ax.errorbar(eps, mean, yerr=std, marker="o", ms=3, capsize=2, lw=1, label="measured")
    dims = (results.get("dataset") or {}).get("n_features")
    mech = str((results.get("mechanism") or {}).get("name", ""))
    domain = ((results.get("mechanism") or {}).get("params") or {}).get("domain", "none")
    if dims and mech == "ndlaplace" and domain in (None, "none"):
        ax.plot(eps, dims / eps, "k--", lw=1, label=f"d/ε (Gamma({dims}, 1/ε) mean)")
    _eps_axis(ax, eps)
    if mean.min() > 0:
        ax.set_yscale("log")
    ax.set_ylabel("mean displacement")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return Figure("displacement", "Mean displacement vs ε",
                  "Mean Euclidean distance between each record and its release, mean ± std over repeats.",
                  _to_png(fig))


def release_figure(results: dict[str, Any]) -> Figure | None:
    """A 2-D release drawn over a public synthetic stand-in (never the audited records)."""
    rel = results.get("release_2d")
    if not isinstance(rel, dict) or not rel.get("stand_in"):
        return None
    data = np.asarray(rel["stand_in"], float)
    if data.ndim != 2 or data.shape[1] != 2:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ax.scatter(data[:, 0], data[:, 1], s=6, c="0.6", label="stand-in data")
    kind = rel.get("kind")
    if kind == "points" and rel.get("points") is not None:
        pts = np.asarray(rel["points"], float)
        ax.scatter(pts[:, 0], pts[:, 1], s=6, c="tab:red", alpha=0.6, label="released points")
    elif kind == "centroids" and rel.get("centers") is not None:
        c = np.asarray(rel["centers"], float)
        ax.scatter(c[:, 0], c[:, 1], s=80, marker="X", c="tab:red", edgecolor="k", label="released centres")
    elif kind == "labels" and rel.get("labels") is not None:
        lab = np.asarray(rel["labels"])
        ax.scatter(data[:, 0], data[:, 1], s=8, c=lab, cmap="tab10", label="released labels")
    elif kind == "spans" and rel.get("cells") is not None:
        from matplotlib.patches import Rectangle
        origin = np.asarray(rel["origin"], float)
        w = float(rel["width"])
        cmap = plt.get_cmap("tab10")
        for j, cells in enumerate(rel["cells"]):
            for cx, cy in np.asarray(cells, int).reshape(-1, 2):
                ax.add_patch(Rectangle((origin[0] + cx * w, origin[1] + cy * w), w, w,
                                       color=cmap(j % 10), alpha=0.35, lw=0))
        ax.plot([], [], "s", color=cmap(0), alpha=0.35, label="released spans")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(f"ε = {rel.get('epsilon', '?')}", fontsize=9)
    fig.tight_layout()
    return Figure("release", "The release in 2-D (public stand-in)",
                  str(rel.get("description", "The mechanism run on a public synthetic stand-in, "
                                             "not on the audited records.")), _to_png(fig))


FIGURES: tuple[Callable[[dict[str, Any]], Figure | None], ...] = (
    utility_figure, advantage_figure, roc_figure, certified_figure, displacement_figure, release_figure)


def all_figures(results: dict[str, Any]) -> list[Figure]:
    """Every figure whose data is present in ``results``, in report order."""
    out = []
    for make in FIGURES:
        fig = make(results)
        if fig is not None:
            out.append(fig)
    return out
