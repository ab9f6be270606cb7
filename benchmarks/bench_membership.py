"""Membership inference at an equal number of mechanism calls: Shokri, Yeom, label-only against LiRA, RMIA.

Every setting is ``dpaudit attack``'s one-run game (:func:`dpaudit.attack.repeat.run_repeat`):
per repeat, ``--candidates`` records (2,400) are candidates, each a member by a fair coin, the
rest is the attacker's public data; the target is the mechanism on the members.  Each attack
gets about ``--calls`` (8) mechanism calls per repeat: Shokri and Yeom 8 shadow targets (Shokri
one more, ART's template), LiRA and RMIA 8 reference runs (shared), label-only one shadow target
(its cost is in queries; it scores the first 250 candidates).  Per attack: TPR at 1 % and 0.1 %
FPR (mean over repeats; n/a where a repeat has too few non-members), AUC, and the one-run ε
lower bound (Steinke, Nasr & Jagielski 2023) pooled over repeats, at 95 % — all guesses, and in
brackets the abstaining variant.

Settings: ``ndlaplace`` at ε = 0.5, 1, 2, 4, ``dpkccm``, ``dpdbscan`` (spans) and
``diffprivlib-kmeans`` at ε = 1, on blobs-2d (8,000 records, box [−15, 15]²) and on the Cluto
t4 set (8,000 records, the DP-DBSCAN benchmark's box [0, 850] × [0, 500], read from
``../shared/datasets`` or ``--datasets DIR`` and skipped when absent).  nD-Laplace is read in
two views: its own *metric* claim (ε per unit distance), which bounds no membership (the
one-run bound is not comparable), and the *add-remove* view the thesis's advantage ceiling
takes (ε as if it were a membership ε).  Under an add/remove ε the hypothesis-testing region
of ε-DP caps the TPR at FPR f at min(e^ε·f, 1 − e^(−ε)(1 − f)) (Kairouz, Oh & Viswanath
2015): the summary table says where that ceiling rules out a 2× gain.

Leaks: mechanisms that break a stated add/remove ε = 1 — noiseless releases (the records
themselves, DP-KCCM without noise, k-means with 100 centres, a clipped sum of 64-pixel digits
with 200 candidates) and the thesis's flawed nD-Laplace — where
LiRA's and RMIA's one-run ε_lb must exceed the claim.

Usage::

    python benchmarks/bench_membership.py [--repeats 3] [--calls 8] [--n-jobs 2] \\
        [--datasets ../shared/datasets] [--out benchmarks/results/membership.md] \\
        [--json benchmarks/results/membership.json] [--force]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _outputs import add_force, guard_outputs, portable, skipped_note  # noqa: E402

OLD = ("shokri", "yeom", "label-only")
NEW = ("lira", "rmia")
BLOBS_BOX = ((-15.0, -15.0), (15.0, 15.0))
CLUTO_BOX = ((0.0, 0.0), (850.0, 500.0))
SKIPPED: list[str] = []


class ClaimAs:
    """A mechanism audited against a stated add/remove claim (the leaks section)."""

    def __init__(self, inner: Any, epsilon: float, label: str) -> None:
        from dpaudit.mechanisms.base import PrivacyClaim
        self.inner, self.name, self.claim = inner, label, PrivacyClaim(epsilon)

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Any:
        return self.inner.release(X, rng)


class NoiselessSum:
    """The per-feature sum of the records clipped to the box: a vector release with no noise."""

    name = "noiseless-sum"

    def __init__(self, box: float) -> None:
        from dpaudit.mechanisms.base import PrivacyClaim
        self.box, self.claim = box, PrivacyClaim(float("inf"))

    def release(self, X: np.ndarray, rng: np.random.Generator) -> Any:
        from dpaudit.mechanisms.base import Vector
        return Vector(np.clip(X, -self.box, self.box).sum(axis=0))


def load_sets(root: Path) -> dict[str, tuple[np.ndarray, int, tuple]]:
    from dpaudit.data import datasets
    out = {"blobs-2d": (datasets.load("blobs-2d", records=8000).X, 4, BLOBS_BOX)}
    data = root / "chameleon_t4_8k.data.gz"
    if data.is_file():
        with gzip.open(data, "rt") as fh:
            out["cluto-t4"] = (np.loadtxt(fh), 6, CLUTO_BOX)
    else:
        SKIPPED.append(f"cluto-t4 ({data.name} not found under {root})")
    return out


def settings(names: list[str]) -> list[dict[str, Any]]:
    """(dataset, mechanism, ε, parameters, views) of every membership setting."""
    out = []
    for ds in names:
        for eps in (0.5, 1.0, 2.0, 4.0):
            out.append({"dataset": ds, "mechanism": "ndlaplace", "epsilon": eps, "params": {},
                        "views": ("metric", "add-remove")})
        dbscan = {"alpha": 0.3, "min_pts": 8} if ds == "blobs-2d" else {"alpha": 20.0, "min_pts": 8}
        for mech, params in (("dpkccm", {"n_clusters": None}), ("dpdbscan", dbscan), ("diffprivlib-kmeans", {"n_clusters": None})):
            out.append({"dataset": ds, "mechanism": mech, "epsilon": 1.0, "params": params, "views": ("add-remove",)})
    return out


def leak_settings(names: list[str]) -> list[dict[str, Any]]:
    out = [{"dataset": "blobs-2d", "mechanism": "identity", "epsilon": 1.0, "leak": "records released as they are"},
           {"dataset": "blobs-2d", "mechanism": "dpkccm", "epsilon": 1.0, "leak": "DP-KCCM without its noise",
            "params": {"noise": False}},
           {"dataset": "blobs-2d", "mechanism": "kmeans", "epsilon": 1.0, "params": {"n_clusters": 100},
            "leak": "non-private k-means, 100 centres"},
           {"dataset": "digits", "mechanism": "noiseless-sum", "epsilon": 1.0, "leak": "a clipped sum, no noise",
            "candidates": 200}]
    if "cluto-t4" in names:
        out.append({"dataset": "cluto-t4", "mechanism": "ndlaplace-thesis", "epsilon": 1.0,
                    "leak": "the thesis's nD-Laplace as printed, read as add/remove ε"})
    return out


def _mechanism(setting: dict[str, Any], k: int, box: tuple) -> Any:
    import dpaudit.mechanisms
    name, eps = setting["mechanism"], setting["epsilon"]
    if name == "noiseless-sum":
        return ClaimAs(NoiselessSum(16.0), eps, name)
    params = {key: (k if v is None else v) for key, v in (setting.get("params") or {}).items()}
    if name in ("identity", "kmeans"):  # non-private baselines: no ε, no box
        mech = dpaudit.mechanisms.get(name, **params)
    else:
        params.setdefault("bounds", (np.asarray(box[0]), np.asarray(box[1])))
        mech = dpaudit.mechanisms.get(name, epsilon=eps, **params)
    return ClaimAs(mech, eps, name) if "leak" in setting else mech


def run_cell(setting: dict[str, Any], data: tuple, repeat: int, seed: np.random.SeedSequence,
             args: argparse.Namespace) -> Any:
    """One repeat of one setting (a joblib task)."""
    warnings.simplefilter("ignore")
    from dpaudit.attack.repeat import run_repeat
    from dpaudit.options import AttackOptions
    X, k, box = data
    attacks = setting.get("attacks", OLD + NEW)
    options = AttackOptions(attacks=attacks, repeats=1, n_shadow=args.calls, reference_runs=args.calls,
                            candidates=min(setting.get("candidates", args.candidates), len(X) // 2))
    t0 = time.perf_counter()
    out = run_repeat(options, X, k, seed, lambda: _mechanism(setting, k, box), (np.asarray(box[0]), np.asarray(box[1])),
                     alpha=0.05)
    out.seconds["total"] = time.perf_counter() - t0
    return out


def ceiling_at(eps: float, fpr: float) -> float:
    """Largest TPR at FPR ``fpr`` an add/remove ε-DP mechanism allows (Kairouz, Oh & Viswanath 2015)."""
    return float(min(1.0, math.exp(eps) * fpr, 1.0 - math.exp(-eps) * (1.0 - fpr)))


def summarise_setting(setting: dict[str, Any], outcomes: list[Any]) -> dict[str, Any]:
    from dpaudit.attack.summary import summarise
    keep = ("status", "reason", "errors", "auc", "auc_std", "tpr_at_1pct_fpr", "tpr_at_1pct_fpr_std",
            "tpr_at_1pct_fpr_reason", "tpr_at_0_1pct_fpr", "tpr_at_0_1pct_fpr_reason", "tpr_at_1pct_fpr_band",
            "tpr_at_0_1pct_fpr_band", "advantage", "epsilon_lower_bound", "epsilon_lower_bound_abstaining",
            "counts", "mechanism_calls_per_repeat", "variant", "chance")
    attacks = {}
    for name in setting.get("attacks", OLD + NEW):
        entry = summarise(name, outcomes, 0.05)
        attacks[name] = {k: entry[k] for k in keep if k in entry}
    kind = next((o.release_kind for o in outcomes if o.release_kind), None)
    return {**{k: v for k, v in setting.items() if k != "attacks"}, "release": kind, "attacks": attacks,
            "seconds": float(sum(o.seconds.get("total", 0.0) for o in outcomes))}


def _best(row: dict[str, Any], names: tuple[str, ...], key: str = "tpr_at_1pct_fpr") -> tuple[str | None, float | None]:
    vals = [(row["attacks"][n].get(key), n) for n in names if row["attacks"].get(n, {}).get(key) is not None]
    if not vals:
        return None, None
    v, n = max(vals)
    return n, float(v)


def verdict_row(row: dict[str, Any]) -> dict[str, Any]:
    """Best classic vs best per-record attack at 1 % FPR, their ratio, and what the ε-DP ceiling says.

    The ceiling rules a 2× gain out only where the claim is add/remove ε-DP (2 × the best classic
    TPR above it).  nD-Laplace's metric claim bounds no membership: its add/remove view is a
    reading, not a promise, and a measured TPR above that view's ceiling shows it does not hold.
    """
    old_name, old = _best(row, OLD)
    new_name, new = _best(row, NEW)
    ceiling = ceiling_at(row["epsilon"], 0.01)
    out = {"old": old, "old_name": old_name, "new": new, "new_name": new_name, "ceiling": ceiling,
           "ratio": (new / old if old and new is not None else (math.inf if new else None))}
    metric = row["mechanism"] == "ndlaplace"
    top = max((a.get("tpr_at_1pct_fpr") or 0.0) for a in row["attacks"].values())
    if old is None or new is None:
        out["outcome"] = "not measured"
    elif all(a.get("chance") for a in row["attacks"].values() if a.get("status") == "ok"):
        out["outcome"] = "every attack at chance (AUC within 2 s.e. of 0.5): no ratio to read"
    elif new >= 2 * old:
        out["outcome"] = f"{new_name} ≥ 2× {old_name}"
    elif not metric and 2 * old > ceiling:
        out["outcome"] = f"2× {old_name} = {2 * old:.3g} > ceiling {ceiling:.3g}: no attack on an ε-DP mechanism can"
    elif metric:
        out["outcome"] = ("< 2×; the metric claim sets no membership ceiling" + (
            f" (the add/remove view's {ceiling:.3g} is exceeded: TPR {top:.3g})" if top > ceiling else ""))
    else:
        out["outcome"] = f"< 2× (the ceiling {ceiling:.3g} does not rule 2× out)"
    return out


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def _tpr(a: dict[str, Any], key: str) -> str:
    if a.get(key) is None:
        return "n/a"
    band = a.get(f"{key}_band")
    return _fmt(a[key]) + (f" [{_fmt(band['low'], 2)}, {_fmt(band['high'], 2)}]" if isinstance(band, dict) else "")


def _bound(a: dict[str, Any]) -> str:
    if a.get("epsilon_lower_bound") is None:
        return "n/a"
    ab = a.get("epsilon_lower_bound_abstaining")
    return _fmt(a["epsilon_lower_bound"]) + (f" ({_fmt(ab)})" if ab is not None else "")


def setting_label(row: dict[str, Any]) -> str:
    return f"{row['mechanism']} ε = {row['epsilon']:g}"


def markdown(rows: list[dict[str, Any]], leaks: list[dict[str, Any]], args: argparse.Namespace, seconds: float,
             load: str) -> str:
    lines = [f"# Membership inference at {args.calls} mechanism calls per attack ({args.repeats} repeats)", "",
             f"`python benchmarks/bench_membership.py --repeats {args.repeats} --calls {args.calls} --n-jobs {args.n_jobs}` — "
             f"Python {platform.python_version()}, numpy {np.__version__}; {seconds / 60:.1f} min wall on the shared "
             f"2-core machine (load before the run: {load}).", "",
             f"Per repeat {args.candidates} candidates (a fair coin each), the rest of the 8,000 records public. "
             "TPR at 1 % / 0.1 % FPR: mean over repeats, with the pooled Clopper–Pearson 95 % band in brackets "
             "(n/a: a repeat had too few non-members — label-only scores 250 candidates). ε_lb: one-run bound "
             "pooled over repeats, 95 %, all guesses (abstaining variant in brackets). calls: mechanism calls per "
             "repeat (Shokri: shadow models + ART's template).", ""]
    lines += ["## Summary: the per-record attacks against the best classic attack at 1 % FPR", "",
              "| dataset | setting | release | best classic | best LiRA/RMIA | ratio | TPR ceiling at 1 % FPR "
              "(add/remove ε) | outcome |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        v = row["verdict"]
        lines.append(f"| {row['dataset']} | {setting_label(row)} | {row['release']} | "
                     f"{_fmt(v['old'])} ({v['old_name']}) | {_fmt(v['new'])} ({v['new_name']}) | {_fmt(v['ratio'])} | "
                     f"{_fmt(v['ceiling'])} | {v['outcome']} |")
    lines += ["", "The ceiling is min(e^ε·0.01, 1 − e^(−ε)·0.99), the largest TPR at 1 % FPR any attack can have "
              "against an add/remove ε-DP mechanism (Kairouz, Oh & Viswanath 2015): where twice the best classic "
              "TPR is above it, no attack can double it. nD-Laplace claims ε per unit distance (metric), which "
              "bounds no membership: its ceiling is only that of the add/remove view (ε read as a membership ε, as "
              "the thesis's advantage ceiling reads it), a reading the mechanism does not promise — a TPR above it "
              "shows the view does not hold, not an unsound attack.", ""]
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        lines += [f"## {ds}", "", "| setting | attack | calls | AUC | TPR @ 1 % FPR | TPR @ 0.1 % FPR | ε_lb (abstaining) "
                  "| vs claim |", "|---|---|---|---|---|---|---|---|"]
        for row in (r for r in rows if r["dataset"] == ds):
            for name, a in row["attacks"].items():
                if a.get("status") != "ok":
                    lines.append(f"| {setting_label(row)} | {name} | | {a.get('status')}: "
                                 f"{a.get('reason') or '; '.join(a.get('errors') or [])} | | | | |")
                    continue
                calls = ",".join(str(c) for c in sorted(set(a.get("mechanism_calls_per_repeat") or [])))
                lines.append(f"| {setting_label(row)} | {name} | {calls} | {_fmt(a.get('auc'))}"
                             f"{' ~' if a.get('chance') else ''} | {_tpr(a, 'tpr_at_1pct_fpr')} | "
                             f"{_tpr(a, 'tpr_at_0_1pct_fpr')} | {_bound(a)} | {_vs(row, a)} |")
        lines.append("")
    lines += ["~ = chance: AUC within two standard errors of 0.5, or advantage ≤ 0.", "",
              "## Leaks: mechanisms that break a stated add/remove ε = 1", "",
              "| dataset | mechanism | what leaks | attack | AUC | TPR @ 1 % FPR | ε_lb (abstaining) | exceeds ε = 1 |",
              "|---|---|---|---|---|---|---|---|"]
    for row in leaks:
        for name, a in row["attacks"].items():
            if a.get("status") != "ok":
                lines.append(f"| {row['dataset']} | {row['mechanism']} | {row['leak']} | {name} | {a.get('status')} "
                             f"| | | |")
                continue
            best = max(a.get("epsilon_lower_bound") or 0.0, a.get("epsilon_lower_bound_abstaining") or 0.0)
            lines.append(f"| {row['dataset']} | {row['mechanism']} | {row['leak']} | {name} | {_fmt(a.get('auc'))} | "
                         f"{_tpr(a, 'tpr_at_1pct_fpr')} | {_bound(a)} | {'yes' if best > 1.0 else 'no'} |")
    return "\n".join(lines) + "\n" + skipped_note(SKIPPED)


def _vs(row: dict[str, Any], a: dict[str, Any]) -> str:
    bound = max(a.get("epsilon_lower_bound") or 0.0, a.get("epsilon_lower_bound_abstaining") or 0.0)
    add_remove = "EXCEEDS" if bound > row["epsilon"] else "within"
    if row["mechanism"] == "ndlaplace":
        return f"metric: n/c; add/remove view: {add_remove}"
    return add_remove


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, default=8, help="mechanism calls per attack and repeat")
    parser.add_argument("--candidates", type=int, default=2400)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=None, help="comma-separated mechanisms to run (default: all)")
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    add_force(parser)
    args = parser.parse_args()
    guard_outputs(args, "out", "json")
    from joblib import Parallel, delayed

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    t0 = time.perf_counter()
    sets = load_sets(args.datasets)
    from dpaudit.data import datasets
    sets["digits"] = (datasets.load("digits").X, 10, ((0.0,) * 64, (16.0,) * 64))
    main_settings = settings([n for n in sets if n != "digits"])
    leaks = [dict(s, attacks=("lira", "rmia", "tracing") if s["mechanism"] == "noiseless-sum" else NEW)
             for s in leak_settings(list(sets))]
    todo = main_settings + leaks
    if args.only:
        keep = set(args.only.split(","))
        todo = [s for s in todo if s["mechanism"] in keep]
    cells = [(i, r, seed) for i, setting in enumerate(todo)
             for r, seed in enumerate(np.random.SeedSequence([args.seed, i]).spawn(args.repeats))]
    print(f"{len(todo)} settings × {args.repeats} repeats on {args.n_jobs} processes", file=sys.stderr)
    done = Parallel(n_jobs=args.n_jobs, backend="loky", verbose=5)(
        delayed(run_cell)(todo[i], sets[todo[i]["dataset"]], r, seed, args) for i, r, seed in cells)
    by_setting: dict[int, list[Any]] = {}
    for (i, _, _), outcome in zip(cells, done):
        by_setting.setdefault(i, []).append(outcome)
    rows = [summarise_setting(todo[i], by_setting[i]) for i in range(len(todo))]
    main_rows = [r for r in rows if "leak" not in r]
    for r in main_rows:
        r["verdict"] = verdict_row(r)
    leak_rows = [r for r in rows if "leak" in r]
    seconds = time.perf_counter() - t0
    text = markdown(main_rows, leak_rows, args, seconds, load)
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    if args.json is not None:
        args.json.write_text(json.dumps({"settings": main_rows, "leaks": leak_rows, "seconds": seconds,
                                         "load_before": load, "args": {k: portable(str(v)) for k, v in vars(args).items()}},
                                        indent=1, default=float), encoding="utf-8")


if __name__ == "__main__":
    main()
