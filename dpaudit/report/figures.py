"""Report figures (matplotlib, Agg backend), each drawn only when its data is present.

Every figure function takes the plain results dict and returns a
:class:`~dpaudit.report.drawing.Figure` (name, title, caption, PNG bytes) or
``None``.  Figures are made to be read (:mod:`dpaudit.report.drawing`: at least
800 px wide, legends of at least 9 pt), with legends and axis labels in words
(:mod:`dpaudit.report.labels`).

This module draws the sweep and ε figures (utility, privacy–utility
trade-off, advantage, certified vs claimed ε, displacement);
:mod:`dpaudit.report.curve_sections` the trade-off curve of a claim in a notion;
:mod:`dpaudit.report.membership_figures` the ROC curves and score
histograms; :mod:`dpaudit.report.release_figure` the release on a public
stand-in (never the audited records).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from dpaudit.attack.registry import attack_words
from dpaudit.result_shapes import as_number
from dpaudit.run_shapes import RunResults

from .curve_sections import curve_figure
from .drawing import MIN_WIDTH_PX, WIDTH_IN, Figure, figure_style, to_png
from .labels import CLUSTERER_WORDS, UTILITY_WORDS, metric_words
from .membership_figures import histogram_figure, roc_figure
from .release_figure import release_figure

__all__ = ["Figure", "MIN_WIDTH_PX", "UTILITY_METRICS", "all_figures"]

UTILITY_METRICS = UTILITY_WORDS  # panels of the utility figure, in this order
def summary_series(results: RunResults, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
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


def sweep_metrics(results: RunResults) -> list[str]:
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


def utility_figure(results: RunResults) -> Figure | None:
    """Utility vs ε: one panel per utility metric, one line per clusterer (thesis Fig. 5.3–5.4)."""
    panels: dict[str, list[str]] = {}
    for name in sweep_metrics(results):
        head, _, metric = name.rpartition(".")
        if head and metric in UTILITY_METRICS and not head.startswith("mia"):
            panels.setdefault(metric, []).append(name)
    if not panels:
        return None
    keys = [k for k in UTILITY_METRICS if k in panels]
    ncol = min(3, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    with figure_style() as plt:
        fig, axes = plt.subplots(nrow, ncol, figsize=(max(WIDTH_IN, 3.8 * ncol), 3.2 * nrow), squeeze=False,
                                 layout="constrained")
        for ax, key in zip(axes.flat, keys):
            for name in panels[key]:
                series = summary_series(results, name)
                if series is None:  # every name sweep_metrics lists has a mean at some ε
                    raise RuntimeError(f"sweep_metrics listed {name}, which has no mean at any ε")
                eps, mean, std = series
                head = name.rpartition(".")[0]
                ax.errorbar(eps, mean, yerr=std, marker="o", ms=4, capsize=2, lw=1.2,
                            label=CLUSTERER_WORDS.get(head, head))
                _eps_axis(ax, eps)
            ax.set_title(UTILITY_METRICS[key])
            ax.legend()
        for ax in list(axes.flat)[len(keys):]:
            ax.set_visible(False)
        png = to_png(fig)
    return Figure("utility", "Utility vs ε", "Mean ± standard deviation over repeats; ARI/AMI vs non-private "
                  "compare the clustering of the release with the same clusterer on the plain data.", png)


def _privacy_axes(results: RunResults) -> list[tuple[str, list[str]]]:
    """The privacy measures a trade-off plot can use: (axis label, sweep metric names)."""
    names = sweep_metrics(results)
    out = []
    for suffix, label in ((".auc", "attack AUC (0.5 = guessing)"), (".advantage", "attack advantage (TPR − FPR)")):
        found = [n for n in names if n.startswith("mia.") and n.endswith(suffix)]
        if found:
            out.append((label, found))
    if "epsilon_lower_bound" in names:
        out.append(("certified ε lower bound", ["epsilon_lower_bound"]))
    return out


def _utility_for_tradeoff(results: RunResults) -> str | None:
    names = sweep_metrics(results)
    for metric in ("ari_truth", "ari", "f_measure", "ami"):
        found = [n for n in names if n.endswith(f".{metric}") and not n.startswith("mia.")]
        if found:
            return found[0]
    return None


def tradeoff_figure(results: RunResults) -> Figure | None:
    """Privacy–utility trade-off: utility against each privacy measure, one point per ε, and the
    non-private baseline as a horizontal line (where the sweep measured it)."""
    utility = _utility_for_tradeoff(results)
    axes_spec = _privacy_axes(results)
    if utility is None or not axes_spec:
        return None
    u = summary_series(results, utility)
    if u is None:
        return None
    baseline = ((results.get("sweep") or {}).get("baseline") or {}).get(utility)
    if baseline is None and utility.endswith((".ari", ".ami")):
        baseline = 1.0  # the same clusterer on the plain data agrees with itself
    with figure_style() as plt:
        fig, axes = plt.subplots(1, len(axes_spec), figsize=(max(WIDTH_IN, 4.2 * len(axes_spec)), 4.0),
                                 squeeze=False, layout="constrained")
        for ax, (label, names) in zip(axes.flat, axes_spec):
            for name in names:
                p = summary_series(results, name)
                if p is None:
                    continue
                common = [e for e in p[0] if e in set(u[0])]
                x = np.array([p[1][list(p[0]).index(e)] for e in common])
                y = np.array([u[1][list(u[0]).index(e)] for e in common])
                legend = attack_words(name.split(".")[1]) if name.startswith("mia.") else "ε estimate"
                ax.plot(x, y, "-o", ms=5, lw=1.2, label=legend)
                for e, xi, yi in zip(common, x, y):
                    ax.annotate(f"ε={e:g}", (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=8.5)
            if baseline is not None and math.isfinite(float(baseline)):
                ax.axhline(float(baseline), color="k", ls="--", lw=1, label="non-private baseline")
            if "AUC" in label:
                ax.axvline(0.5, color="0.5", ls=":", lw=1, label="guessing")
            ax.set_xlabel(label)
            ax.set_ylabel(metric_words(utility))
            ax.margins(0.12)
            ax.grid(alpha=0.3)
            ax.legend()
        png = to_png(fig)
    return Figure("tradeoff", "Privacy–utility trade-off",
                  f"{metric_words(utility)} against what an attacker achieves, one point per claimed ε (means over "
                  "repeats). Up and to the left is better: useful and private. The dashed line is the same "
                  "clustering on the plain data.", png)


def advantage_figure(results: RunResults) -> Figure | None:
    """MIA advantage vs ε with std error bars and the advantage ceiling (e^ε − 1)/(e^ε + 1)."""
    names = [n for n in sweep_metrics(results) if n.startswith("mia.") and n.endswith(".advantage")]
    if not names:
        return None
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.6), layout="constrained")
        lo, hi = math.inf, 0.0
        for name in names:
            series = summary_series(results, name)
            if series is None:  # every name sweep_metrics lists has a mean at some ε
                raise RuntimeError(f"sweep_metrics listed {name}, which has no mean at any ε")
            eps, mean, std = series
            lo, hi = min(lo, eps.min()), max(hi, eps.max())
            ax.errorbar(eps, mean, yerr=std, marker="o", ms=4, capsize=2, lw=1.2, label=attack_words(name.split(".")[1]))
        grid = np.geomspace(lo, hi, 200) if lo > 0 and hi / lo > 20 else np.linspace(lo, hi, 200)
        ax.plot(grid, np.tanh(grid / 2.0), "k--", lw=1, label="advantage ceiling (e^ε−1)/(e^ε+1)")
        _eps_axis(ax, grid)
        ax.set_ylabel("advantage (TPR − FPR)")
        ax.legend()
        png = to_png(fig)
    return Figure("advantage", "Membership-inference advantage vs ε",
                  "Mean ± standard deviation over repeats; dashed: the largest advantage any ε-DP mechanism "
                  "allows.", png)


def _certified_points(results: RunResults) -> tuple[float, float, float | None] | None:
    from .sections import estimate_of

    est = estimate_of(results)
    if (not isinstance(est, dict) or est.get("epsilon_lower_bound") is None or not est.get("claim")
            or est.get("status") in ("error", "failed", "no usable release", "interrupted")):
        return None
    claim, lb = as_number(est["claim"]["epsilon"]), as_number(est["epsilon_lower_bound"])
    if not (math.isfinite(claim) and math.isfinite(lb)):  # a non-private baseline has no diagonal point
        return None
    ceiling = est.get("ceiling")
    return claim, lb, float(ceiling) if isinstance(ceiling, (int, float)) and math.isfinite(ceiling) else None


def certified_figure(results: RunResults) -> Figure | None:
    """Certified ε lower bound vs claimed ε, the diagonal (above it = violation) and the sample-size
    ceiling (the largest bound the sample could certify)."""
    names = [n for n in sweep_metrics(results) if n.endswith("epsilon_lower_bound")]
    claim = (results.get("mechanism") or {}).get("claim") or {}
    if claim.get("neighbours", "add-remove") != "add-remove":
        # Membership attacks certify add/remove ε (one-run bound): no diagonal to compare with here.
        names = [n for n in names if not n.startswith("mia.")]
    point = _certified_points(results)
    if not names and point is None:
        return None
    if not names and point is not None:
        return _single_certified_figure(*point, metric=claim.get("neighbours") == "metric")
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.2), layout="constrained")
        top = 0.0
        for name in names:
            series = summary_series(results, name)
            if series is None:  # every name sweep_metrics lists has a mean at some ε
                raise RuntimeError(f"sweep_metrics listed {name}, which has no mean at any ε")
            eps, mean, std = series
            label = "ε estimate (certified)" if name == "epsilon_lower_bound" else metric_words(name)
            ax.errorbar(eps, mean, yerr=std, marker="o", ms=4, capsize=2, lw=1.2, label=label)
            top = max(top, float(np.nanmax(np.concatenate([eps, mean + std]))))
            ceiling = summary_series(results, "epsilon_ceiling") if name == "epsilon_lower_bound" else None
            if ceiling is not None:
                ax.plot(ceiling[0], ceiling[1], ":", color="tab:gray", lw=1.5, marker="_", ms=10,
                        label="sample-size ceiling")
        if point is not None:
            c, lb, ceiling_value = point
            ax.plot([c], [lb], "s", color="tab:red", ms=8, label="ε estimate (certified)")
            top = max(top, c, lb)
            if ceiling_value is not None:
                ax.axhline(ceiling_value, color="tab:gray", ls=":", lw=1.5,
                           label=f"sample-size ceiling ({ceiling_value:.3g})")
                top = max(top, ceiling_value)
        top = top * 1.1 if math.isfinite(top) and top > 0 else 1.0
        ax.plot([0, top], [0, top], "k--", lw=1, label="claim = bound (above: violation)")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel("claimed ε" + (" (per unit distance)" if claim.get("neighbours") == "metric" else ""))
        ax.set_ylabel("certified ε lower bound")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
        png = to_png(fig)
    return Figure("certified", "Certified ε vs claimed ε",
                  "A bound above the dashed diagonal is a violation of the claim (metric claims: per unit "
                  "distance). The dotted line is the sample-size ceiling: the largest bound the certification "
                  "sample could certify, so a bound there means “at least this much”.", png)


SINGLE_RANGE_FACTOR = 1.6  # a single-ε figure's axis ends this far beyond the larger of claim and bound


def single_axis_end(claim: float, bound: float, ceiling: float | None) -> tuple[float, bool]:
    """Where the single-ε figure's ε axis ends, and whether the ceiling is drawn on it: the claim
    and the bound fill most of the axis; a ceiling far beyond them is named, not drawn."""
    end = SINGLE_RANGE_FACTOR * max(claim, bound, 1e-9)
    if ceiling is not None and ceiling <= 2.0 * end:
        return max(end, 1.08 * ceiling), True
    return end, False


def _single_certified_figure(claim: float, bound: float, ceiling: float | None, *, metric: bool) -> Figure:
    """One claim, one certified bound: a bar from 0 to ε_lb against the claimed ε (a line), with the
    sample-size ceiling — a strip, not a square that is almost all empty."""
    end, ceiling_drawn = single_axis_end(claim, bound, ceiling)
    violation = bound > claim
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.6), layout="constrained")
        ax.barh([0], [bound], height=0.5, color="tab:red" if violation else "tab:blue",
                label=f"certified ε lower bound ({bound:.3g})")
        ax.axvline(claim, color="k", ls="--", lw=1.5, label=f"claimed ε ({claim:g}): a bar past it is a violation")
        if ceiling is not None and ceiling_drawn:
            ax.axvline(ceiling, color="tab:gray", ls=":", lw=1.5, label=f"sample-size ceiling ({ceiling:.3g})")
        elif ceiling is not None:
            ax.annotate(f"sample-size ceiling {ceiling:.3g} →", (1.0, 0.02), xycoords="axes fraction",
                        ha="right", va="bottom", fontsize=9, color="0.35")
        ax.set_xlim(0, end)
        ax.set_ylim(-0.6, 0.6)
        ax.set_yticks([])
        ax.set_xlabel("ε" + (" (per unit distance)" if metric else ""))
        ax.grid(alpha=0.3, axis="x")
        fig.legend(loc="outside lower center", ncol=2)
        png = to_png(fig)
    return Figure("certified", "Certified ε vs claimed ε",
                  "The bar is the certified lower bound on ε; past the dashed claim it is a violation (metric claims: "
                  "per unit distance). The sample-size ceiling is the largest bound the certification sample could "
                  "certify, so a bar at it means “at least this much”; a ceiling far off the scale is named at the "
                  "right.", png)


def displacement_figure(results: RunResults) -> Figure | None:
    """Mean displacement ‖z − x‖ vs ε (thesis Fig. 5.6)."""
    series = summary_series(results, "displacement")
    if series is None:
        return None
    eps, mean, std = series
    dims = (results.get("dataset") or {}).get("n_features")
    mech = str((results.get("mechanism") or {}).get("name", ""))
    domain = ((results.get("mechanism") or {}).get("params") or {}).get("domain", "none")
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.6), layout="constrained")
        ax.errorbar(eps, mean, yerr=std, marker="o", ms=4, capsize=2, lw=1.2, label="measured")
        if dims and mech == "ndlaplace" and domain in (None, "none"):
            ax.plot(eps, dims / eps, "k--", lw=1, label=f"d/ε (the Gamma({dims}, 1/ε) radius mean)")
        _eps_axis(ax, eps)
        if mean.min() > 0:
            ax.set_yscale("log")
        ax.set_ylabel("mean displacement ‖z − x‖")
        ax.legend()
        png = to_png(fig)
    return Figure("displacement", "Mean displacement vs ε",
                  "Mean Euclidean distance between each record and its release, mean ± standard deviation over "
                  "repeats.", png)


FIGURES: tuple[Callable[[RunResults], Figure | None], ...] = (
    utility_figure, tradeoff_figure, advantage_figure, roc_figure, histogram_figure, certified_figure,
    curve_figure, displacement_figure, release_figure)


def all_figures(results: RunResults) -> list[Figure]:
    """Every figure whose data is present in ``results``, in report order."""
    out = []
    for make in FIGURES:
        fig = make(results)
        if fig is not None:
            out.append(fig)
    return out
