"""The Markdown page of ``benchmarks/bench_thirdparty.py``: the goal table, the known-pair witnesses,
``dpaudit audit``'s column, every run with its command, and fixed notes (diffprivlib's line numbers)."""

from __future__ import annotations

import shlex
import statistics
from typing import Any

from benchmarks.thirdparty.catalogue import (
    FUNCTIONS_FILE,
    GAUSSIAN_FILE,
    GOAL_FRACTION,
    GOAL_SEEDS,
    GRID_FUNCTIONS,
    Function,
    Run,
    refused_side,
)

_GRID_NAMES = {f.name for f in GRID_FUNCTIONS}

NOTES = """\
## Notes

- **diffprivlib 0.6.6's empty-cluster bug** is in `diffprivlib/models/k_means.py`, `KMeans._update_centers`
  (line 229): lines 243–244, `if cluster not in labels: continue`, skip a cluster that owns no record — no
  noise is drawn and it keeps its start centre from `_init_centers` (lines 174–218), which confines the start
  centres to the inside of the box (lines 186–197).  Reproduced without dpaudit by
  `benchmarks/.venvs/thirdparty/bin/python benchmarks/thirdparty/repro_diffprivlib.py` (k = 2, d = 1, bounds
  (0, 1); 10 records at 0 vs the same plus one at 1; event "every centre < 0.375"; `random_state` i and
  10⁶ + i): 0/10,000 vs 1,913/10,000 fits, ε ≥ 6.21 at 95 % (two Clopper–Pearson limits at 2.5 % each)
  against a claim of 1.
- **Without `bounds`** (lines 144–148) diffprivlib takes the bounds from the data (`np.min(X, axis=0)`,
  `np.max(X, axis=0)`) after a `PrivacyLeakWarning` (line 145); `_check_bounds` widens a zero-width range to
  ±5·10⁻⁶.  Every centre lies within the bounds, so the centres' range is the data's: a black box shows it
  (all records at one point: every centre within 10⁻⁵ of it in every fit; one more record elsewhere: almost
  never).  dpaudit reports the warning (`leak warnings` column).
- **Refusals.** diffprivlib raises `ValueError` on fewer records than clusters (lines 139–140; scikit-learn's
  validation on 0 records), `their_kmeans` on fewer than its k = 4.  dpaudit counts such calls as
  `refuses-input` notes, not faults: a pair refused on both sides is outside the code's domain and set aside,
  a refusal of one side only is observable output, used only where no other evidence exceeds the claim.  A
  VIOLATION decided on such a small dataset would show the refusal, not the bug; the goal column does not
  count it (no row above is decided that way).
- **More in diffprivlib's `k_means.py`, not used as witnesses:** the number of iterations comes from the
  number of records (line 142, `_calc_iters(n_dims, n_samples)`, lines 293–301), private under add/remove;
  and `_split_epsilon` (lines 263–291) returns its two budgets in the opposite order to the one its caller
  unpacks (line 238), so the count gets the per-dimension share and each dimension the count's: an
  iteration spends (1 + d·c)/(d + c)·ε/T with c = (4dρ²)^(1/3), ρ = 0.225 — less than ε/T for d ≤ 4, more
  for d ≥ 5 (1.21·ε in all at d = 10, 2.09·ε at d = 50, measured by recording the ε of every noise
  mechanism it builds).  At d = 2 it under-spends.
- **Bugs deliberately not in the benchmark:** a DPLloyd that spends the full ε in each of its T iterations,
  or calibrates each coordinate's noise for sensitivity 1 instead of the sum's L1 sensitivity d.  Both
  break the privacy of the transcript, but the release is the final centres, which carry mostly the last
  iteration (on a pair D = ∅, D′ = {x} the last iteration alone loses at most the claimed ε), so
  their true ε *of the release* is not known to exceed the claim, and expecting VIOLATION from them would
  reward an unsound estimator.
"""


def fmt_num(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def verdict_text(run: Run) -> str:
    if run.verdict is None:
        return "**failed**" if run.exit_code != -1 else "**timed out**"
    return run.verdict.upper() if run.is_violation else run.verdict


def findings_text(run: Run) -> str:
    if not run.findings:
        return "–"
    return ", ".join(f"{f.get('kind')} ×{f.get('count')}" for f in run.findings)


def pair_text(run: Run) -> str:
    if not run.pair:
        return "–"
    p = run.pair
    return f"{p['name']} ({p.get('records_D')} vs {p.get('records_D_prime')} records)"


def _counts(run: Run) -> str:
    c = run.counts or {}
    if "favoured_in_event" not in c:
        return "–"
    return f"{c['favoured_in_event']:,}/{c['n_favoured']:,} vs {c['other_in_event']:,}/{c['n_other']:,}"


def _setting(run: Run) -> str:
    """How a run differs from the defaults: its time budget, its grid dimension."""
    parts = ([f"--time-budget {run.time_budget:g}"] if run.time_budget else []) + \
        ([f"grid, d = {run.d}"] if run.d is not None else [])
    return ", ".join(parts) or "defaults"


def _cell(text: str | None) -> str:
    return "–" if not text else text.replace("|", "\\|").replace("\n", " ")


def _main_runs(runs: list[Run], name: str, budget: bool = False) -> list[Run]:
    """The main table's estimate-eps runs of ``name`` (at the defaults, or with the extra time budget)."""
    return [r for r in runs if r.function == name and r.command_name == "estimate-eps" and r.d is None
            and (r.time_budget is not None) == budget]


def witness_bound(witnesses: list[dict[str, Any]], name: str, d: int | None = None) -> float | None:
    """The known-pair witness's bound for ``name`` (the main table's when ``d`` is None, else the grid cell's)."""
    for w in witnesses:
        if w["function"] == name and bool(w.get("grid")) == (d is not None) and (d is None or w.get("d") == d):
            return float(w["epsilon_lower_bound"])
    return None


def _reaches(run: Run, witness: float | None) -> bool:
    """VIOLATION, and (when a witness is known) ε_lb at least GOAL_FRACTION of the witness's bound."""
    if not run.is_violation:
        return False
    return witness is None or (run.epsilon_lower_bound or 0.0) >= GOAL_FRACTION * witness


def summary_rows(runs: list[Run], functions: list[Function],
                 witnesses: list[dict[str, Any]] | None = None) -> tuple[list[str], dict[str, Any]]:
    """The main table (one row per function) and each function's goal record."""
    witnesses = witnesses or []
    budget = next((r.time_budget for r in runs if r.time_budget), None)
    lines = [("| function | correct? | true ε | verdict (seed 0) | ε_lb (seed 0) | ceiling | VIOLATION / seeds | "
             "max ε_lb over seeds | wall s (seed 0) | median wall s | deciding pair (seed 0) | findings (seed 0) |"
             f" witness ε ≥ | min ε_lb / witness | VIOLATION / seeds at "
              f"{'--time-budget ' + fmt_num(budget) if budget else 'a longer --time-budget'} |"
             " meets the goal |"),
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---|"]
    goals: dict[str, Any] = {}
    for fn in functions:
        if fn.name in _GRID_NAMES:
            continue
        timed = _main_runs(runs, fn.name, budget=True)
        at_defaults = _main_runs(runs, fn.name)
        mine = at_defaults or timed  # --longer-budget-only: the longer budget's runs are the row's
        if not mine:
            continue
        first = next((r for r in mine if r.seed == 0), mine[0])
        flagged = sum(r.is_violation for r in mine)
        flagged_timed = sum(r.is_violation for r in timed)
        bounds = [r.epsilon_lower_bound for r in mine if r.epsilon_lower_bound is not None]
        witness = witness_bound(witnesses, fn.name)
        goal_runs = [r for r in mine if r.seed < GOAL_SEEDS]
        on_refused = any(r.is_violation and refused_side(r, fn) for r in goal_runs)
        ratio = None if not witness or not goal_runs else min((r.epsilon_lower_bound or 0.0) for r in goal_runs) / witness
        if fn.correct:
            ok = flagged == 0 and flagged_timed == 0
        else:
            ok = all(_reaches(r, witness) for r in goal_runs) and not on_refused
        goals[fn.name] = {"correct": fn.correct, "seeds": len(mine), "default_seeds": len(at_defaults),
                          "violations": flagged,
                          "budget_seeds": len(timed), "budget_violations": flagged_timed, "witness": witness,
                          "min_ratio_to_witness": ratio, "meets_goal": ok, "decided_on_refused_input": on_refused}
        pair = pair_text(first) + (f" — below the {fn.min_records} records it accepts"
                                   if first.is_violation and refused_side(first, fn) else "")
        lines.append(
            f"| `{fn.name}` | {'correct' if fn.correct else 'buggy'} | {fn.true_eps} | {verdict_text(first)} | "
            f"{fmt_num(first.epsilon_lower_bound)} | {fmt_num(first.ceiling)} | {flagged} / {len(mine)} | "
            f"{fmt_num(max(bounds) if bounds else None)} | {first.wall_seconds:.1f} | "
            f"{statistics.median(r.wall_seconds for r in mine):.1f} | {_cell(pair)} | "
            f"{_cell(findings_text(first))} | {fmt_num(witness)} | {fmt_num(ratio)} | "
            f"{f'{flagged_timed} / {len(timed)}' if timed else '–'} | {'yes' if ok else '**no**'} |")
    return lines, goals


def grid_goals(runs: list[Run], functions: list[Function],
               witnesses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Each grid cell's goal record, keyed ``<function>@d<d>``."""
    witnesses = witnesses or []
    goals: dict[str, Any] = {}
    by_name = {f.name: f for f in functions}
    for r in runs:
        if r.d is None or r.command_name != "estimate-eps" or r.function not in by_name:
            continue
        fn = by_name[r.function]
        witness = witness_bound(witnesses, fn.name, r.d)
        ok = not r.is_violation if fn.correct else _reaches(r, witness) and not refused_side(r, fn)
        goals[f"{fn.name}@d{r.d}"] = {
            "correct": fn.correct, "d": r.d, "verdict": r.verdict, "epsilon_lower_bound": r.epsilon_lower_bound,
            "witness": witness, "ratio_to_witness": None if not witness or r.epsilon_lower_bound is None
            else r.epsilon_lower_bound / witness, "meets_goal": ok}
    return goals


def grid_rows(runs: list[Run], functions: list[Function], witnesses: list[dict[str, Any]]) -> list[str]:
    """The grid table: one row per (function, d) at seed 0."""
    goals = grid_goals(runs, functions, witnesses)
    by_cell = {(r.function, r.d): r for r in runs if r.d is not None and r.command_name == "estimate-eps"}
    lines = [("| function | correct? | d | verdict | ε_lb | witness ε ≥ | ε_lb / witness | deciding pair | wall s | "
             "meets the goal |"), "|---|---|---:|---|---:|---:|---:|---|---:|---|"]
    for fn in functions:
        for d in sorted({d for (name, d) in by_cell if name == fn.name}):
            r, g = by_cell[(fn.name, d)], goals[f"{fn.name}@d{d}"]
            lines.append(f"| `{fn.name}` | {'correct' if fn.correct else 'buggy'} | {d} | {verdict_text(r)} | "
                         f"{fmt_num(r.epsilon_lower_bound)} | {fmt_num(g['witness'])} | "
                         f"{fmt_num(g['ratio_to_witness'])} | {_cell(pair_text(r))} | {r.wall_seconds:.1f} | "
                         f"{'yes' if g['meets_goal'] else '**no**'} |")
    return lines


def witness_rows(witnesses: list[dict[str, Any]], runs: list[Run], grid: bool = False) -> list[str]:
    """The known-pair table: what reading the code buys, beside dpaudit's seed 0 (the main table's witnesses,
    or with ``grid`` the grid cells', with their dimension)."""
    seed0 = {(r.function, r.d): r for r in runs
             if r.command_name == "estimate-eps" and r.seed == 0 and r.time_budget is None}
    lines = ["| function | D | D′ | event (favours) | in the event: D | D′ | ε ≥ (95 %) | "
             "dpaudit's ε_lb (seed 0) | why |" + (" d |" if grid else ""),
             "|---|---|---|---|---:|---:|---:|---:|---|" + ("---:|" if grid else "")]
    for w in witnesses:
        if bool(w.get("grid")) != grid:
            continue
        mine = seed0.get((w["function"], w.get("d") if grid else None))
        delta = f" (δ = {w['delta']:g})" if w.get("delta") else ""
        lines.append(f"| `{w['function']}` | {w['D']} | {w['D_prime']} | {w['event']} ({w['favours']}) | "
                     f"{w['in_event_D']:,}/{w['fits']:,} | {w['in_event_D_prime']:,}/{w['fits']:,} | "
                     f"{w['epsilon_lower_bound']:.2f}{delta} | "
                     f"{fmt_num(None if mine is None else mine.epsilon_lower_bound)} | "
                     f"{_cell(w['why'])} |" + (f" {w.get('d')} |" if grid else ""))
    return lines


def _grid_section(runs: list[Run], functions: list[Function], witnesses: list[dict[str, Any]],
                  meta: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if any(r.d is not None for r in runs):
        grid = meta.get("grid") or {}
        cells = grid_goals(runs, functions, witnesses)
        lines += ["## Grid: k × d", "",
                  (f"The diffprivlib and DPLloyd functions at k = 2, 3, 4 on blobs data in [-1, 1]^d, seed 0: "
                  f"`dpaudit estimate-eps -m {FUNCTIONS_FILE}:<function>_k<k> --eps 1 --bounds "
                  f"{grid.get('bounds', '-1,1')} --output centroids --data $SCRATCH/blobs-<d>d.csv --python "
                  "<that interpreter> --json …`; the CSV is written by the harness "
                  f"({grid.get('records', 30)} records around three centres drawn uniformly in [-0.6, 0.6]^d, "
                  "standard deviation 0.15, clipped into the box; generator seeded with (0, d)).  Goal per cell: "
                  f"buggy VIOLATION with ε_lb ≥ {GOAL_FRACTION:g} × the witness's bound, correct not VIOLATION."), "",
                  *grid_rows(runs, functions, witnesses), "",
                  f"Cells meeting the goal: {sum(g['meets_goal'] for g in cells.values())} / {len(cells)}.", ""]
        if any(w.get("grid") for w in witnesses):
            lines += ["The grid's known-pair witnesses (`witnesses.py --only NAME@D`):", "",
                      *witness_rows(witnesses, runs, grid=True), ""]
    return lines


def _audit_section(runs: list[Run]) -> list[str]:
    lines: list[str] = []
    audits = [r for r in runs if r.command_name == "audit"]
    if audits:
        lines += [("`dpaudit audit` at its defaults (seed 0, 200 records of blobs-2d; every part, attacks "
                  "included):"), "",
                  ("| function | verdict | ε_lb (ε estimation part) | pair | parts that found a violation | wall s | "
                  "dpaudit's parts s | findings | command |"),
                  "|---|---|---:|---|---|---:|---:|---|---|"]
        lines += [f"| `{r.function}` | {verdict_text(r)} | {fmt_num(r.epsilon_lower_bound)} | {_cell(pair_text(r))} | "
                  + (", ".join(p["part"] for p in r.parts if p.get("verdict") == "violation") or "–")
                  + f" | {r.wall_seconds:.1f} | {fmt_num(r.dpaudit_seconds)} | {_cell(findings_text(r))} | "
                  f"`{r.command}` |"
                  for r in audits]
        lines.append("")
    return lines


def _witness_section(runs: list[Run], witnesses: list[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    main_witnesses = [w for w in witnesses if not w.get("grid")]
    if main_witnesses:
        fits = min(w["fits"] for w in main_witnesses)
        lines += [("What a skilled auditor certifies knowing each bug: one pair and one event read off the code "
                  f"(no search), the function run {fits:,} times on each dataset in the third "
                  "party's interpreter (the Gaussian 10x function 2.5 times as often), ε ≥ ln((p_lo − δ)/q_hi) "
                  "with Clopper–Pearson limits at 2.5 % each — the bar an "
                  f"estimator working blind should reach at its defaults (`{meta['venv_python']} "
                  f"benchmarks/thirdparty/witnesses.py --fits {fits}`):"), "",
                  *witness_rows(witnesses, runs), ""]
    return lines


def _functions_section(functions: list[Function], goals: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    lines += [("What each function does wrong (or right); the docstrings of "
              f"`{FUNCTIONS_FILE}` and `{GAUSSIAN_FILE}` give the argument and a pair that shows it:"), ""]
    lines += [f"- `{fn.name}` ({'correct' if fn.correct else 'buggy'}, true ε {fn.true_eps}): {fn.what}"
              + (f"; raises on fewer than {fn.min_records} records" if fn.min_records else "") + "."
              for fn in functions if fn.name in goals]
    return lines


def _every_run_section(runs: list[Run], meta: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    lines += ["", "## Every run", "",
              ("| function | seed | setting | verdict | ε_lb | ceiling | samples / dataset | selection releases | wall s | "
              "dpaudit's elapsed s | pair | event | in the event (favoured vs other) | findings | leak warnings | "
              "command |"),
              "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|---|---|"]
    for r in runs:
        if r.command_name != "estimate-eps":
            continue
        lines.append(
            f"| `{r.function}` | {r.seed} | {_setting(r)} | {verdict_text(r)} | {fmt_num(r.epsilon_lower_bound)} | "
            f"{fmt_num(r.ceiling)} | "
            f"{fmt_num(r.samples, 6)} | {fmt_num(r.selection_releases, 6)} | {r.wall_seconds:.1f} | "
            f"{fmt_num(r.dpaudit_seconds)} | {_cell(pair_text(r))} | {_cell(r.event)} | {_counts(r)} | "
            f"{_cell(findings_text(r))} | {'yes' if r.leak_warnings else '–'} | `{r.command}` |")
    failed = [r for r in runs if r.error]
    if failed:
        lines += ["", "Errors (stderr's last lines):", ""]
        lines += [f"- `{r.function}` seed {r.seed} ({r.command_name}, exit {r.exit_code}): "
                  f"{_cell(r.error)}" for r in failed]
    if meta.get("rendered_by"):
        lines += ["", (f"(Page re-rendered from the runs' JSON by `{meta['rendered_by']}`; the runs are the harness "
                      "line's.)")]
    return lines


def markdown(runs: list[Run], functions: list[Function], meta: dict[str, Any],
             witnesses: list[dict[str, Any]] | None = None) -> str:
    """The page: its head and main table, the grid, the audits, the witnesses, the functions, every run."""
    witnesses = witnesses or []
    rows, goals = summary_rows(runs, functions, witnesses)
    buggy = [g for g in goals.values() if not g["correct"]]
    correct = [g for g in goals.values() if g["correct"]]
    title = "Third-party DP k-means functions audited at defaults" + (f" — {meta['label']}" if meta["label"] else "")
    lines = [f"# {title}", "",
             f"Harness: `{meta['harness_command']}` (total {meta['total_seconds'] / 60:.1f} min).", "",
             (f"dpaudit commit {meta['commit']}; {meta['cores']} logical cores ({meta['machine']}, Python "
             f"{meta['python']}), shared with other jobs: compare times within this page.  The audited code runs in "
             f"its own interpreter (`--python {meta['venv_python']}`: Python {meta['venv']['python']}, numpy "
             f"{meta['venv']['numpy']}, scikit-learn {meta['venv']['scikit-learn']}, diffprivlib "
             f"{meta['venv']['diffprivlib']}, nothing else of the project)."), "",
             *([f"**Note.** {meta['note']}", ""] if meta.get("note") else []),
             (f"Every run: `dpaudit estimate-eps -m <its file>:<function> --eps 1 [--delta 1e-06 --bounds -1,1] "
             f"--output centroids --python <that interpreter> [--seed S] [--time-budget B]"
             f"{' ' + shlex.join(meta['extra']) if meta['extra'] else ''} --json …`, "
             "at dpaudit's defaults (30 records of blobs-2d, 95 %, claim ε = 1 add/remove; the Gaussian functions "
             "claim δ = 10⁻⁶ and state their public box), in a subprocess: the "
             "wall time is a user's (start-up and the worker's imports included).  The exact command of every run "
             "is in the table of runs below."), "",
             (f"Goal: every buggy function VIOLATION on each of seeds 0–{GOAL_SEEDS - 1} with ε_lb at least "
             f"{GOAL_FRACTION:g} × the known-pair witness's bound (below the table); no correct function VIOLATION "
             "on any seed, at the defaults and with the longer time budget (when run).  A VIOLATION "
             "certified on a pair with a dataset smaller than the function accepts (diffprivlib raises below k "
             "records, `their_kmeans` below its k, the Gaussian functions on no records) shows that refusal, not the "
             "bug, and does not count."), "",
             *rows, "",
             f"Buggy functions meeting the goal: "
             f"{sum(g['meets_goal'] for g in buggy)} / {len(buggy)}"
             + ("" if all(g["meets_goal"] for g in buggy) else " (missed: " + ", ".join(
                 n for n, g in goals.items() if not g["correct"] and not g["meets_goal"]) + ")") + ".  "
             "Correct functions VIOLATION: " + "; ".join(
                 ([f"{sum(g['violations'] for g in correct)} in {sum(g['seeds'] for g in correct)} audits at the "
                   "defaults"] if any(g.get("default_seeds", g["seeds"]) for g in correct) or not correct else [])
                 + ([f"{sum(g['budget_violations'] for g in correct)} in {sum(g['budget_seeds'] for g in correct)} "
                     f"with --time-budget {fmt_num(meta.get('correct_budget'))}"]
                    if any(g['budget_seeds'] for g in correct) else [])) + ".", ""]
    lines += _grid_section(runs, functions, witnesses, meta)
    lines += _audit_section(runs)
    lines += _witness_section(runs, witnesses, meta)
    lines += _functions_section(functions, goals)
    lines += _every_run_section(runs, meta)
    return "\n".join(lines) + "\n\n" + NOTES
