"""The Markdown page of ``benchmarks/bench_thirdparty.py``: the goal table, the known-pair witnesses,
``dpaudit audit``'s column, every run with its command, and fixed notes (diffprivlib's line numbers)."""

from __future__ import annotations

import shlex
import statistics
from typing import Any

from benchmarks.thirdparty.catalogue import FUNCTIONS_FILE, Function, Run, refused_side

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


def _cell(text: str | None) -> str:
    return "–" if not text else text.replace("|", "\\|").replace("\n", " ")


def summary_rows(runs: list[Run], functions: list[Function]) -> tuple[list[str], dict[str, Any]]:
    lines = ["| function | correct? | true ε | verdict (seed 0) | ε_lb (seed 0) | ceiling | VIOLATION / seeds | "
             "max ε_lb over seeds | wall s (seed 0) | median wall s | deciding pair (seed 0) | findings (seed 0) |"
             " meets the goal |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"]
    goals: dict[str, Any] = {}
    for fn in functions:
        mine = [r for r in runs if r.function == fn.name and r.command_name == "estimate-eps"]
        if not mine:
            continue
        first = next((r for r in mine if r.seed == 0), mine[0])
        flagged = sum(r.is_violation for r in mine)
        bounds = [r.epsilon_lower_bound for r in mine if r.epsilon_lower_bound is not None]
        on_refused = first.is_violation and refused_side(first, fn)
        ok = flagged == 0 if fn.correct else first.is_violation and not on_refused
        goals[fn.name] = {"correct": fn.correct, "seeds": len(mine), "violations": flagged, "meets_goal": ok,
                          "decided_on_refused_input": on_refused}
        pair = pair_text(first) + (f" — below the {fn.min_records} records it accepts" if on_refused else "")
        lines.append(
            f"| `{fn.name}` | {'correct' if fn.correct else 'buggy'} | {fn.true_eps} | {verdict_text(first)} | "
            f"{fmt_num(first.epsilon_lower_bound)} | {fmt_num(first.ceiling)} | {flagged} / {len(mine)} | "
            f"{fmt_num(max(bounds) if bounds else None)} | {first.wall_seconds:.1f} | "
            f"{statistics.median(r.wall_seconds for r in mine):.1f} | {_cell(pair)} | "
            f"{_cell(findings_text(first))} | {'yes' if ok else '**no**'} |")
    return lines, goals


def witness_rows(witnesses: list[dict[str, Any]], runs: list[Run]) -> list[str]:
    """The known-pair table: what reading the code buys at the same sample size, beside dpaudit's seed 0."""
    seed0 = {r.function: r for r in runs if r.command_name == "estimate-eps" and r.seed == 0}
    lines = ["| function | D | D′ | event (favours) | in the event: D | D′ | ε ≥ (95 %) | "
             "dpaudit's ε_lb (seed 0) | why |", "|---|---|---|---|---:|---:|---:|---:|---|"]
    for w in witnesses:
        mine = seed0.get(w["function"])
        lines.append(f"| `{w['function']}` | {w['D']} | {w['D_prime']} | {w['event']} ({w['favours']}) | "
                     f"{w['in_event_D']:,}/{w['fits']:,} | {w['in_event_D_prime']:,}/{w['fits']:,} | "
                     f"{w['epsilon_lower_bound']:.2f} | "
                     f"{fmt_num(None if mine is None else mine.epsilon_lower_bound)} | "
                     f"{_cell(w['why'])} |")
    return lines


def markdown(runs: list[Run], functions: list[Function], meta: dict[str, Any],
             witnesses: list[dict[str, Any]] | None = None) -> str:
    rows, goals = summary_rows(runs, functions)
    buggy = [g for g in goals.values() if not g["correct"]]
    correct = [g for g in goals.values() if g["correct"]]
    title = "Third-party DP k-means functions audited at defaults" + (f" — {meta['label']}" if meta["label"] else "")
    lines = [f"# {title}", "",
             f"Harness: `{meta['harness_command']}` (total {meta['total_seconds'] / 60:.1f} min).", "",
             f"dpaudit commit {meta['commit']}; {meta['cores']} logical cores ({meta['machine']}, Python "
             f"{meta['python']}), shared with other jobs: compare times within this page.  The audited code runs in "
             f"its own interpreter (`--python {meta['venv_python']}`: Python {meta['venv']['python']}, numpy "
             f"{meta['venv']['numpy']}, scikit-learn {meta['venv']['scikit-learn']}, diffprivlib "
             f"{meta['venv']['diffprivlib']}, nothing else of the project).", "",
             f"Every run: `dpaudit estimate-eps -m {FUNCTIONS_FILE}:<function> --eps 1 --output centroids --python "
             f"<that interpreter> [--seed S]{' ' + shlex.join(meta['extra']) if meta['extra'] else ''} --json …`, "
             "at dpaudit's defaults (30 records of blobs-2d, 95 %, claim ε = 1 add/remove), in a subprocess: the "
             "wall time is a user's (start-up and the worker's imports included).  The exact command of every run "
             "is in the table of runs below.", "",
             "Goal: every buggy function VIOLATION at seed 0; no correct one VIOLATION at any seed.  A VIOLATION "
             "certified on a pair with a dataset smaller than the function accepts (diffprivlib raises below k "
             "records, `their_kmeans` below its k) shows that refusal, not the bug, and does not count.", "",
             *rows, "",
             f"Buggy functions VIOLATION at seed 0 (on datasets they accept): "
             f"{sum(g['meets_goal'] for g in buggy)} / {len(buggy)}"
             + ("" if all(g["meets_goal"] for g in buggy) else " (missed: " + ", ".join(
                 n for n, g in goals.items() if not g["correct"] and not g["meets_goal"]) + ")") + ".  "
             f"Correct functions VIOLATION: {sum(g['violations'] for g in correct)} in "
             f"{sum(g['seeds'] for g in correct)} audits.", ""]
    audits = [r for r in runs if r.command_name == "audit"]
    if audits:
        lines += ["`dpaudit audit` at its defaults (seed 0, 200 records of blobs-2d; every part, attacks "
                  "included):", "",
                  "| function | verdict | ε_lb (ε estimation part) | pair | parts that found a violation | wall s | "
                  "dpaudit's parts s | findings | command |",
                  "|---|---|---:|---|---|---:|---:|---|---|"]
        lines += [f"| `{r.function}` | {verdict_text(r)} | {fmt_num(r.epsilon_lower_bound)} | {_cell(pair_text(r))} | "
                  + (", ".join(p["part"] for p in r.parts if p.get("verdict") == "violation") or "–")
                  + f" | {r.wall_seconds:.1f} | {fmt_num(r.dpaudit_seconds)} | {_cell(findings_text(r))} | "
                  f"`{r.command}` |"
                  for r in audits]
        lines.append("")
    if witnesses:
        lines += ["What a skilled auditor certifies knowing each bug: one pair and one event read off the code "
                  f"(no search), the function run {witnesses[0]['fits']:,} times on each dataset in the third "
                  "party's interpreter, ε ≥ ln(p_lo/q_hi) with Clopper–Pearson limits at 2.5 % each — the bar "
                  "an "
                  f"estimator working blind should reach at its defaults (`{meta['venv_python']} "
                  f"benchmarks/thirdparty/witnesses.py --fits {witnesses[0]['fits']}`):", "",
                  *witness_rows(witnesses, runs), ""]
    lines += ["What each function does wrong (or right); the docstrings of "
              f"`{FUNCTIONS_FILE}` give the argument and a pair that shows it:", ""]
    lines += [f"- `{fn.name}` ({'correct' if fn.correct else 'buggy'}, true ε {fn.true_eps}): {fn.what}"
              + (f"; raises on fewer than {fn.min_records} records" if fn.min_records else "") + "."
              for fn in functions if fn.name in goals]
    lines += ["", "## Every run", "",
              "| function | seed | verdict | ε_lb | ceiling | samples / dataset | selection releases | wall s | "
              "dpaudit's elapsed s | pair | event | in the event (favoured vs other) | findings | leak warnings | "
              "command |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|---|---|---|"]
    for r in runs:
        if r.command_name != "estimate-eps":
            continue
        lines.append(
            f"| `{r.function}` | {r.seed} | {verdict_text(r)} | {fmt_num(r.epsilon_lower_bound)} | "
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
        lines += ["", f"(Page re-rendered from the runs' JSON by `{meta['rendered_by']}`; the runs are the harness "
                      "line's.)"]
    return "\n".join(lines) + "\n\n" + NOTES
