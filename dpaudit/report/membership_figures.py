"""Membership-inference figures: ROC curves with Clopper–Pearson bands, member vs non-member scores.

ROC curves are drawn only where the sample resolves them: each attack's curve
starts at FPR 1/n_non-members (the grid points every repeat resolves,
:mod:`dpaudit.attacks.membership.roc`), with its pointwise two-sided Clopper–Pearson band on the
TPR shaded; nothing is drawn in the low-FPR region the non-members cannot
see.  The score histograms show where the attack's scores of members and of
non-members fall (shares of each group per bin), as ML Privacy Meter and
TensorFlow Privacy show them beside a ROC curve.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.attack.registry import attack_words
from dpaudit.run_shapes import RunResults

from .drawing import WIDTH_IN, Figure, figure_style, to_png

__all__ = ["histogram_figure", "roc_curves", "roc_figure"]


def roc_curves(results: RunResults) -> list[dict[str, Any]]:
    """Plot-ready curves: ``{label, fpr, tpr, tpr_low?, tpr_high?, cut?}`` (fpr, tpr as arrays)."""
    curves = []
    sources: list[tuple[str, object]] = [(str(c.get("label", "")), c) for c in results.get("roc_curves") or []]
    sources += [(attack_words(str(a.get("name", ""))), a.get("roc")) for a in results.get("attacks") or []
                if isinstance(a, dict)]
    for label, roc in sources:
        if not isinstance(roc, dict) or "fpr" not in roc or "tpr" not in roc:
            continue
        fpr, tpr = np.asarray(roc["fpr"], float), np.asarray(roc["tpr"], float)
        if fpr.size < 2 or fpr.size != tpr.size:
            continue
        curve: dict[str, Any] = {"label": label, "fpr": fpr, "tpr": tpr, "cut": roc.get("cut_at_fpr"),
                                 "confidence": roc.get("confidence")}
        if len(roc.get("tpr_low") or []) == fpr.size and len(roc.get("tpr_high") or []) == fpr.size:
            curve["tpr_low"], curve["tpr_high"] = (np.asarray(roc["tpr_low"], float),
                                                   np.asarray(roc["tpr_high"], float))
        curves.append(curve)
    return curves


def roc_figure(results: RunResults) -> Figure | None:
    """Log–log ROC curves, cut at 1/n_non-members, with Clopper–Pearson bands on the TPR."""
    curves = roc_curves(results)
    if not curves:
        return None
    positive = [c["fpr"][c["fpr"] > 0].min() for c in curves if np.any(c["fpr"] > 0)]
    left = 10 ** math.floor(math.log10(min(positive))) if positive else 1e-3
    floor = left  # TPRs below the axis's left end are drawn on it (stated in the caption)
    banded = any("tpr_low" in c for c in curves)
    confidence = next((c["confidence"] for c in curves if c.get("confidence")), None)
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 6.0), layout="constrained")
        for c in curves:
            fpr = np.maximum(c["fpr"], floor)
            line, = ax.plot(fpr, np.maximum(c["tpr"], floor), lw=1.6, label=c["label"])
            if "tpr_low" in c:
                ax.fill_between(fpr, np.maximum(c["tpr_low"], floor), np.maximum(c["tpr_high"], floor),
                                color=line.get_color(), alpha=0.18, lw=0)
        grid = np.geomspace(left, 1.0, 50)
        ax.plot(grid, grid, "k:", lw=1, label="guessing (TPR = FPR)")
        for f, text in ((0.01, "1 % FPR"), (0.001, "0.1 % FPR")):
            if f > left:
                ax.axvline(f, color="0.6", lw=0.8, ls="--")
                ax.annotate(text, (f, 1.0), textcoords="offset points", xytext=(3, -12), fontsize=8.5, color="0.35")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(left, 1)
        ax.set_ylim(floor, 1.05)
        ax.set_xlabel("false-positive rate (non-members flagged)")
        ax.set_ylabel("true-positive rate (members flagged)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="lower right")
        png = to_png(fig)
    band = (f" Shaded: pointwise two-sided Clopper–Pearson band on the TPR at {float(confidence) * 100:.4g}%."
            if banded and confidence else "")
    return Figure("roc", "ROC curves (log–log)",
                  "Each curve starts at the smallest FPR every repeat's non-members resolve (1/n_non-members): "
                  f"nothing is drawn below it.{band} TPRs below {left:g} are drawn at {left:g}.", png)


def _histograms(results: RunResults) -> tuple[list[tuple[str, dict[str, Any]]], bool]:
    """(name, histogram) per membership attack, and whether they are all pooled over the repeats: they are
    unless one attack's repeats have bins of their own (no pooled histogram) — then every panel shows the
    first repeat, so the panels are never a mix of the two."""
    attacks = [a for a in results.get("attacks") or [] if isinstance(a, dict)
               and (isinstance(a.get("score_histogram"), dict) or a.get("score_histogram_per_repeat"))]
    pooled = all(isinstance(a.get("score_histogram"), dict) for a in attacks)
    out = []
    for a in attacks:
        per = a.get("score_histogram_per_repeat") or []
        hist = a.get("score_histogram") if pooled or not per else per[0]
        if isinstance(hist, dict) and len(hist.get("edges") or []) >= 2:
            out.append((attack_words(str(a.get("name", ""))), hist))
    return out, pooled or not any(a.get("score_histogram_per_repeat") for a in attacks)


# The histogram panels' y axis reaches this many times the tallest bar: the legend's two rows (about a sixth
# of a 3.4-inch panel each) fit above the bars.
LEGEND_HEADROOM = 1.6


def histogram_figure(results: RunResults) -> Figure | None:
    """Member vs non-member score histograms, one panel per membership attack (shares of each group)."""
    panels, pooled = _histograms(results)
    if not panels:
        return None
    ncol = min(3, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    with figure_style() as plt:
        fig, axes = plt.subplots(nrow, ncol, figsize=(max(WIDTH_IN, 3.8 * ncol), 3.4 * nrow), squeeze=False,
                                 layout="constrained")
        for ax, (name, hist) in zip(axes.flat, panels):
            edges = np.asarray(hist["edges"], float)
            top = 0.0
            for key, label, color in (("members", "members", "tab:red"), ("non_members", "non-members", "tab:blue")):
                counts = np.asarray(hist.get(key) or [], float)
                outside = sum(hist.get(f"{key}_outside") or (0, 0))
                total = counts.sum() + outside
                if counts.size != edges.size - 1 or total <= 0:
                    continue
                ax.stairs(counts / total, edges, color=color, lw=1.6, label=f"{label} (n = {int(total)})")
                top = max(top, float(np.max(counts / total, initial=0.0)))
            ax.set_title(name)
            ax.set_xlabel("attack score (higher: member)")
            ax.set_ylabel("share of the group")
            ax.grid(alpha=0.3)
            # the legend sits in head-room above the tallest bar (LEGEND_HEADROOM), never over the bars
            ax.set_ylim(0.0, (top or 1.0) * LEGEND_HEADROOM)
            ax.legend(loc="upper center", borderaxespad=0.3)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        png = to_png(fig)
    which = ("pooled over the repeats" if pooled else
             "in the first repeat, in every panel (one attack's repeats scored on bins of their own, which do not "
             "pool)")
    return Figure("scores", "Attack scores of members and non-members",
                  f"Share of members and of non-members per score bin, {which}; scores outside the bins count in "
                  "the shares but are not drawn. The further apart the two, the more the attack learns; overlapping "
                  "histograms mean it cannot tell members from non-members.", png)
