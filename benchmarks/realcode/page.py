"""The Markdown page of ``benchmarks/bench_realcode.py``: the corpus's table, the misses and why, every command.

Works on the JSON payload the harness writes (``meta``, ``rows``, ``runs`` — one per row and seed —,
``reproductions``, ``status``, and ``twin`` when two copies ran side by side), so a page can be re-rendered from
a committed JSON file.  A run is called as the library panel calls one (``benchmarks/libraries/page.py``'s
``row_status``): a VIOLATION only when the row's reproduction shows it too.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from benchmarks.libraries.page import cell, counts_text, findings_text, num, pair_text, reproduction_text, row_status

VERDICT_CLASSES = ("violation", "no violation found", "inconclusive")


def run_status(row: dict[str, Any], run: dict[str, Any], reproductions: list[dict[str, Any]]) -> dict[str, Any]:
    """The library panel's call of a run, stricter for correct code: any VIOLATION of a row that holds is a false
    alarm (the panel's "flagged, not reproduced"), never as expected."""
    status = row_status(row, run, reproductions)
    if row["expected"] == "holds":
        status["as_expected"] = run.get("verdict") not in ("violation", None) and not status.get("over_budget")
    return status


def verdict_class(run: dict[str, Any]) -> str:
    """A run's verdict as the load comparison reads it: violation, no violation found, inconclusive or failed."""
    verdict = run.get("verdict")
    return verdict if verdict in VERDICT_CLASSES else "failed"


def compare_twins(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two payloads of the same selection (run side by side): the verdict class of every (row, seed) in each."""
    seen = {(r["row"], r["seed"]): verdict_class(r) for r in b["runs"]}
    lines = [{"row": r["row"], "seed": r["seed"], "alone": verdict_class(r), "twin": seen.get((r["row"], r["seed"]))}
             for r in a["runs"]]
    same = sum(1 for line in lines if line["alone"] == line["twin"])
    text = [f"Side by side with a second copy of itself: the same verdict class on {same} of {len(lines)} runs.", "",
            "| row | seed | this copy | the other copy | same |", "|---|---:|---|---|---|"]
    text += [f"| {cell(x['row'])} | {x['seed']} | {x['alone']} | {x['twin'] or 'not run'} | "
             f"{'yes' if x['alone'] == x['twin'] else '**no**'} |" for x in lines]
    return {"runs": lines, "same": same, "total": len(lines), "text": "\n".join(text)}


def _head(meta: dict[str, Any], rows: list[dict[str, Any]], runs: list[dict[str, Any]]) -> list[str]:
    seeds = sorted({r["seed"] for r in runs})
    state = "" if meta.get("complete", True) else " (**incomplete**: the harness was stopped or is still running)"
    lines = [f"# Real DP code, audited as a user audits it{' (quick smoke run)' if meta.get('quick') else ''}{state}",
             "", f"Harness: `{meta['harness_command']}` — {len(rows)} rows, seeds {', '.join(map(str, seeds)) or '–'}, "
             f"time budget {meta['time_budget']:g} s"
             + (f", shard {meta['shard']}" if meta.get("shard") else "")
             + (f", in {meta['total_seconds'] / 60:.1f} min" if meta.get("total_seconds") else "") + ".", "",
             f"dpaudit commit {meta['commit']} (imported from {meta.get('dpaudit_source', '?')}); {meta['cores']} "
             f"logical cores ({meta['machine']}, Python {meta['python']}), shared: load average (1, 5, 15 min) "
             f"{meta['load_average_start']} at the start, {meta.get('load_average_end', '–')} at the end; thread "
             f"counts {', '.join(f'{k}={v}' for k, v in (meta.get('thread_variables') or {}).items())}."
             + ("  A second copy of the same command ran beside this one (`--pair-load`)." if meta.get("pair_load")
                else ""), "",
             "Every run: `python -m dpaudit estimate-eps -m <wrapper.py:fn> --eps 1 <the row's options> --python <its "
             "interpreter> --seed S --json …` (an R row: `-m \"cmd:Rscript <wrapper.R> <fn> --library <its R "
             "library>\"`, a program speaking dpaudit/1, no `--python`) at dpaudit's defaults otherwise (30 records "
             "of blobs-2d, 95 % confidence), one at a time.  A run's budget for the whole command is 2 × its time "
             "budget; one that takes longer says so and is never counted as no violation.  A row is a **VIOLATION** "
             "only when dpaudit certifies one and the row's reproduction (numpy — or R — and the library only) shows "
             "it too.", "",
             "## Environments", "", "| key | what | requirements (pip; apt: Debian's) | versions | source (repository "
             "@ commit) | mutant: the patched line | set-up s |", "|---|---|---|---|---|---|---:|"]
    for key, env in meta["environments"].items():
        src = env.get("source") or {}
        patch = env.get("patch") or {}
        lines.append(f"| {key} | {cell(env['title'])} | `{' '.join(env.get('requirements') or ['(the base’s)'])}` | "
                     f"{cell(', '.join(f'{k} {v}' for k, v in (env.get('versions') or {}).items()))} | "
                     f"{cell(src.get('repo') and src['repo'] + ' @ ' + src['commit'][:12] + ': ' + ', '.join(src['files']))}"
                     f" | {cell(patch.get('where'))} | {env.get('setup_seconds', 0):.0f} |")
    return lines


def _seed_cell(run: dict[str, Any], status: dict[str, Any]) -> str:
    mark = "" if status["as_expected"] else " ✗"
    over = " (over budget)" if status.get("over_budget") else ""
    return (f"s{run['seed']}: {run.get('verdict') or 'exit ' + str(run.get('exit_code'))} "
            f"{num(run.get('epsilon_lower_bound'))}, {run['wall_seconds']:.0f} s{over}{mark}")


def _table(rows: list[dict[str, Any]], by_row: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]],
           reps: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    lines = ["", "## The corpus", "", "| kind | row | claim | expected | reproduction: D vs D′ in the event | dpaudit "
             "per seed: verdict ε_lb, wall | as expected | the line that leaks | dpaudit names (seeds naming it) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        runs = by_row.get(row["name"], [])
        ok = sum(1 for _, st in runs if st["as_expected"])
        rep = reps.get((row["reproduction"], row["env"]))
        line = ((rep or {}).get("result") or {}).get("line") or row.get("line")
        lines.append(f"| {row['kind']} | **{cell(row['name'])}** ({row['env']}): {cell(row['release'])} | ε = 1"
                     f"{', δ = ' + row['options'][row['options'].index('--delta') + 1] if '--delta' in row['options'] else ''}"
                     f", {row['neighbours']} | {row['expected']} | {cell(reproduction_text(rep))} | "
                     f"{'; '.join(_seed_cell(r, st) for r, st in runs) or '–'} | {ok}/{len(runs)} | {cell(line)} | "
                     f"{cell(named_cell([r for r, _ in runs], line))} |")
    return lines


def names_line(site: dict[str, Any], line: str | None, slack: int = 3) -> bool:
    """Whether a leak site dpaudit reported points at the known line (``file.py:N`` or ``file.py:N-M``): the same
    file name and a line range within ``slack`` lines of it (a statement spans lines; a draw follows the
    computation of its scale)."""
    found = re.search(r"([\w./-]+\.py):(\d+)(?:[-–](\d+))?", line or "")
    if not found or not site.get("file"):
        return False
    name, lo = found.group(1), int(found.group(2))
    hi = int(found.group(3) or lo)
    same = str(site["file"]).endswith(name.split("/")[-1]) and (name.endswith(str(site["file"]))
                                                                or str(site["file"]).endswith(name))
    first, last = int(site.get("first_line") or 0), int(site.get("last_line") or site.get("first_line") or 0)
    return same and first - slack <= hi and lo <= last + slack


def named_cell(runs: list[dict[str, Any]], line: str | None) -> str:
    """The first site dpaudit reported beside a violation, and on how many seeds a site points at the known line."""
    flagged = [r for r in runs if r.get("verdict") == "violation"]
    sites = [s for r in flagged for s in (r.get("leak_sites") or [])]
    if not sites:
        return "–"
    hits = sum(1 for r in flagged if any(names_line(s, line) for s in r.get("leak_sites") or []))
    first = next(s for r in flagged for s in (r.get("leak_sites") or []))
    return f"{first.get('sentence') or first.get('where')} ({hits}/{len(flagged)})"


def _tally(rows: list[dict[str, Any]], pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[str]:
    kind = {r["name"]: r["kind"] for r in rows}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run, st in pairs:
        counts[kind[run["row"]]][0] += st["as_expected"]
        counts[kind[run["row"]]][1] += 1
    exit2 = sum(1 for run, _ in pairs if run.get("exit_code") == 2)
    inconclusive = sum(1 for run, _ in pairs if run.get("verdict") == "inconclusive")
    over = sum(1 for _, st in pairs if st.get("over_budget"))
    text = "; ".join(f"{k}: {v[0]}/{v[1]} runs as expected" for k, v in sorted(counts.items()))
    return ["", f"**{text or 'no runs'}.**  Exit 2: {exit2}; INCONCLUSIVE: {inconclusive}; over 2 × the budget: {over}."
            "  (Correct rows are as expected when not flagged; broken rows and mutants when VIOLATION, reproduced.)"]


def _misses(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[str]:
    """Every run not as expected, with what its JSON says of why."""
    out = ["", "## Runs not as expected, and why (from each run's JSON)", ""]
    for run, st in pairs:
        if st["as_expected"]:
            continue
        why = [pair_text(run) + counts_text(run)]
        if run.get("findings"):
            why.append("findings: " + "; ".join(f"{f['kind']} ({f.get('count')}/{f.get('calls')} calls"
                                                f"{', blocking' if f.get('blocking') else ''}): {f.get('error') or ''}"
                                                for f in run["findings"]))
        if run.get("error"):
            why.append(f"stderr: {run['error']}")
        out.append(f"- **{cell(run['row'])}**, seed {run['seed']}: {st['panel']} (exit {run.get('exit_code')}, "
                   f"ε_lb {num(run.get('epsilon_lower_bound'))}, {run['wall_seconds']:.0f} s of "
                   f"{run.get('wall_budget') or 0:.0f}) — {cell(' — '.join(w for w in why if w))}")
    return out if len(out) > 3 else []


def _why(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["", "## Rows: what each is, and its truth", ""]
    lines += [f"- **{row['name']}** ({row['kind']}; `{row['spec']}`; expected {row['expected']}): {row['why']}"
              + (f" Upstream: {row['upstream']}" + (f" ([report](../../{row['report']}))" if row.get("report") else "")
                 + "." if row.get("upstream") else "") for row in rows]
    return lines


def _commands(runs: list[dict[str, Any]], reps: list[dict[str, Any]]) -> list[str]:
    lines = ["", "## Every command", "", "| row | seed | verdict | findings | dpaudit s | wall s | load at start | "
             "command |", "|---|---:|---|---|---:|---:|---:|---|"]
    lines += [f"| {cell(r['row'])} | {r['seed']} | {cell(r.get('verdict') or 'failed')} | {findings_text(r)} | "
              f"{num(r.get('dpaudit_seconds'))} | {r['wall_seconds']:.1f} | {num(r.get('load_before'))} | "
              f"`{r['command']}` |" for r in runs]
    lines += [f"| reproduction | – | {cell(reproduction_text(rep))} | – | – | {rep['wall_seconds']:.1f} | – | "
              f"`{rep['command']}` |" for rep in reps]
    return lines


def markdown(payload: dict[str, Any]) -> str:
    meta, rows, runs, reps = payload["meta"], payload["rows"], payload["runs"], payload["reproductions"]
    by_name = {r["name"]: r for r in rows}
    statuses = payload.get("status") or [run_status(by_name[run["row"]], run, reps) for run in runs]
    pairs = list(zip(runs, statuses))
    by_row: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for run, st in pairs:
        by_row[run["row"]].append((run, st))
    lines = _head(meta, rows, runs)
    lines += _tally(rows, pairs)
    lines += _table(rows, by_row, {(r["script"], r["env"]): r for r in reps})
    lines += _misses(pairs)
    if payload.get("twin"):
        lines += ["", "## The same corpus beside a second copy of itself", "", payload["twin"]["text"]]
    lines += _why(rows)
    lines += _commands(runs, reps)
    if meta.get("rendered_by"):
        lines += ["", f"(Re-rendered from the JSON by `{meta['rendered_by']}`.)"]
    return "\n".join(lines) + "\n"
