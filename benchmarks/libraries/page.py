"""The Markdown page of ``benchmarks/bench_libraries.py``: the panel's table, the reproductions, every command.

Works on the JSON payload the harness writes (``meta``, ``rows``, ``runs``, ``reproductions``), so a
page can be re-rendered from a committed JSON file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.libraries.catalogue import CLAIM
from benchmarks.libraries.upstream import CHECKED, FINDINGS, upstream_of


def row_status(row: dict[str, Any], run: dict[str, Any], reproductions: list[dict[str, Any]]) -> dict[str, Any]:
    """What the panel calls a row: dpaudit's verdict confirmed (or not) by the row's reproduction."""
    rep = next((r for r in reproductions if r["script"] == row.get("reproduction") and r["env"] == row["env"]), None)
    bound = ((rep or {}).get("result") or {}).get("epsilon_lower_bound")
    reproduced = bound is not None and float(bound) > CLAIM
    control = ((rep or {}).get("control") or {}).get("epsilon_lower_bound")
    controlled = control is not None and float(control) <= CLAIM  # the patched library: the violation is gone
    verdict = run.get("verdict")
    budget = run.get("wall_budget")
    over = budget is not None and run.get("wall_seconds", 0.0) > budget
    if verdict == "violation":
        panel = "VIOLATION" if reproduced else "flagged, not reproduced"
    elif reproduced:
        panel = "MISSED by dpaudit (reproduced)"
    elif verdict is None:
        panel = "failed" if run.get("exit_code") != -1 else f"timed out (stopped after {run.get('wall_seconds', 0):.0f} s)"
    elif over:  # never counted as "no violation"
        panel = f"over budget ({run.get('wall_seconds', 0):.0f} s > {budget:.0f} s): {verdict}, not counted"
    else:
        panel = verdict
    if row["expected"] == "broken":
        as_expected = verdict in (None, "inconclusive")
    elif over and panel != "VIOLATION":
        as_expected = False
    else:
        as_expected = (panel == "VIOLATION") == (row["expected"] == "violated")
    return {"panel": panel, "reproduced": reproduced, "reproduction_bound": bound, "control_bound": control,
            "controlled": controlled, "over_budget": over, "as_expected": as_expected}


def num(v: Any, digits: int = 3) -> str:
    return "–" if v is None else f"{float(v):.{digits}g}"


def cell(text: Any) -> str:
    return "–" if text in (None, "") else str(text).replace("|", "\\|").replace("\n", " ")


def pair_text(run: dict[str, Any]) -> str:
    p = run.get("pair") or {}
    blocking = [f for f in run.get("findings") or [] if f.get("blocking")]
    if not p.get("name"):
        if blocking:
            f = blocking[0]
            return f"nothing released: {f['kind']} in {f.get('count')} of {f.get('calls')} calls: {f.get('error')}"
        return "–"
    if p.get("records_D") is None:  # nothing was certified: no pair decided
        return p.get("description") or "no pair was certified"
    return f"`{p['name']}` ({p.get('records_D')} vs {p.get('records_D_prime')} records): {p.get('description', '')}"


def counts_text(run: dict[str, Any]) -> str:
    c = run.get("counts") or {}
    if "favoured_in_event" not in c:
        return f"; stopped: {c['stopped']}" if c.get("stopped") else ""
    fav = c.get("favoured_dataset", "?")
    return (f"; {c['favoured_in_event']:,}/{c['n_favoured']:,} releases of {fav} vs "
            f"{c['other_in_event']:,}/{c['n_other']:,} of the other")


def reproduction_text(rep: dict[str, Any] | None) -> str:
    if rep is None:
        return "–"
    res = rep.get("result")
    if not res:
        return f"failed: {cell(rep.get('error'))}"
    return (f"{res['in_event_D']:,}/{res['fits']:,} vs {res['in_event_D_prime']:,}/{res['fits']:,}: "
            f"ε ≥ {res['epsilon_lower_bound']:.2f}")


def findings_text(run: dict[str, Any]) -> str:
    return ", ".join(f"{f['kind']}" + ("" if f.get("blocking") else " (note)") for f in run.get("findings") or []) or "–"


def _libraries(meta: dict[str, Any]) -> int:
    """Distinct libraries (a library installed two ways, as the fork is, counts once)."""
    return len({env["requirements"][0].split("==")[0] for env in meta["environments"].values()})


def _head(meta: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """The title, the harness and machine, and the environments' table."""
    lines = ["# The DP libraries people ship, audited as they ship them" + (" (quick smoke run)" if meta.get("quick")
                                                                           else ""), "",
             f"Harness: `{meta['harness_command']}` — {len(rows)} releases of {_libraries(meta)} libraries "
             f"({len(meta['environments'])} environments) in {meta['total_seconds'] / 60:.1f} min, environments "
             "built from the registry included.", "",
             f"dpaudit commit {meta['commit']}; {meta['cores']} logical cores ({meta['machine']}, Python "
             f"{meta['python']}), shared with other jobs: load average (1, 5, 15 min) {meta['load_average_start']} at "
             f"the start, {meta['load_average_end']} at the end."
             + (f"  dpaudit imported from this checkout ({meta['dpaudit_source']})." if meta.get("dpaudit_source")
                else "")
             + (f"  Thread counts in every subprocess: "
                f"{', '.join(f'{k}={v}' for k, v in meta['thread_variables'].items())}."
                if meta.get("thread_variables") else "")
             + "  What each row means, and why: [docs/libraries.md](../../docs/libraries.md).", ""]
    lines += ["| library | environment (from the registry) | versions | set-up s |", "|---|---|---|---:|"]
    for env in meta["environments"].values():
        lines.append(f"| {env['title']} | `pip install {' '.join(env['requirements'])}` | "
                     f"{', '.join(f'{k} {v}' for k, v in env['versions'].items())} | {env['setup_seconds']:.0f} |")
    return lines


def _panel(rows: list[dict[str, Any]], status: dict[str, dict[str, Any]], by_name: dict[str, dict[str, Any]],
           rep_of: dict[tuple[Any, Any], dict[str, Any]]) -> list[str]:
    """The panel: what every row ran, the tally of violations, and one table line per row."""
    flagged_correct = [r["name"] for r in rows if r["expected"] == "holds" and status[r["name"]]["panel"] == "VIOLATION"]
    confirmed = [r["name"] for r in rows if status[r["name"]]["panel"] == "VIOLATION"]
    missed = [r["name"] for r in rows if status[r["name"]]["panel"].startswith("MISSED")]
    unconfirmed = [r["name"] for r in rows if status[r["name"]]["panel"] == "flagged, not reproduced"]
    over = [r["name"] for r in rows if status[r["name"]].get("over_budget")]
    uncontrolled = [r["name"] for r in rows if status[r["name"]]["panel"] == "VIOLATION"
                    and not status[r["name"]].get("controlled")]
    lines = ["", f"Every row: `dpaudit estimate-eps -m <plug-in> --eps {CLAIM:g} <options> --python <the library's "
             "interpreter> --json …` at dpaudit's defaults (a 60 s time budget, 95 % confidence, 30 records of "
             "blobs-2d clipped to the box [-1, 1]² the code states) unless its command says otherwise (rows with "
             "`--time-budget 45`), in a subprocess: wall time is a user's, start-up included.  A row's budget for "
             "the whole command is 1.5 × its time budget + 30 s of start-up; a row that takes longer says so and "
             "is never counted as no violation, and the harness stops it at twice that.  The budget plans the releases at the rate measured at the start; a run whose "
             "code turns out slower is cut at 1.5 × max(budget, the time its plan was expected to take), checked "
             "between batches of releases, so a wall time up to about 90 s (more for very slow code) is the "
             "budget at work, not a hang.  "
             "A row is a **VIOLATION** only when dpaudit certifies one and the row's reproduction "
             "(`benchmarks/reproductions/`, numpy, scipy and the library only) shows it too.", "",
             f"**{len(confirmed)} violation(s)** confirmed by their reproductions; {len(missed)} reproduced "
             f"violation(s) dpaudit missed{' (' + ', '.join(missed) + ')' if missed else ''}; "
             f"{len(unconfirmed)} dpaudit flag(s) without a reproduction"
             f"{' (' + ', '.join(unconfirmed) + ')' if unconfirmed else ''}; releases the library implements "
             f"correctly that were flagged: {len(flagged_correct)}"
             f"{' (' + ', '.join(flagged_correct) + ')' if flagged_correct else ''}; violations whose control (the "
             f"library line patched) did not remove them: {len(uncontrolled)}"
             f"{' (' + ', '.join(uncontrolled) + ')' if uncontrolled else ''}; rows over their budget (shown, never "
             f"counted as no violation): {len(over)}{' (' + ', '.join(over) + ')' if over else ''}.", "",
             "| library | release | claim | expected | dpaudit | ε_lb | ceiling | deciding pair and event | wall s | "
             "reproduction (in the event: D vs D′) | panel | upstream |",
             "|---|---|---|---|---|---:|---:|---|---:|---|---|---|"]
    for row in rows:
        run = by_name.get(row["name"], {})
        st = status[row["name"]]
        rep = rep_of.get((row.get("reproduction"), row["env"]))
        event = f"; event: {cell(run.get('event'))}" if run.get("event") and (run.get("pair") or {}).get(
            "records_D") is not None else ""
        lines.append(
            f"| {row['env']} | **{row['name']}**: {row['release']} | ε = {CLAIM:g}, {row['neighbours']} | "
            f"{row['expected']} | {cell(run.get('verdict') or 'failed')} | {num(run.get('epsilon_lower_bound'))} | "
            f"{num(run.get('ceiling'))} | {cell(pair_text(run) + event + counts_text(run))} | "
            f"{run.get('wall_seconds', 0):.0f} | {cell(reproduction_text(rep))} | "
            f"{'**' + st['panel'] + '**' if st['panel'] in ('VIOLATION',) or st['panel'].startswith('MISSED') else st['panel']} | "
            f"{cell(_upstream_short(row['name']))} |")
    return lines


def _upstream_short(name: str) -> str | None:
    finding = upstream_of(name)
    if finding is None:
        return None
    report = finding.get("report")
    return finding["short"] + (f" ([report](../../{report}))" if report else "")


def _upstream(rows: list[dict[str, Any]]) -> list[str]:
    """Every finding, with what its library's public tracker already has."""
    names = {r["name"] for r in rows}
    lines = ["", f"## Findings and their upstream status (trackers checked {CHECKED})", "",
             "| finding | rows | upstream | searched for | report |", "|---|---|---|---|---|"]
    for f in FINDINGS:
        shown = [n for n in f["rows"] if n in names]
        if not shown:
            continue
        lines.append(f"| {cell(f['title'])} | {cell('; '.join(shown))} | {cell(f['status'])} | "
                     f"{cell('; '.join(repr(q) for q in f['searched']))} | "
                     f"{('[' + Path(f['report']).name + '](../../' + f['report'] + ')') if f.get('report') else '–'} |")
    return lines


def _reproductions(reps: list[dict[str, Any]]) -> list[str]:
    """The reproductions' section: one table line per script."""
    lines = ["", "## Reproductions", "",
             "Each runs in the library's own interpreter: two datasets, one event read off the bug, the fits "
             "counted, ε ≥ ln(p_lo/q_hi) with Clopper–Pearson limits at 2.5 % each (95 % together).  The "
             "harness then runs each script's control, `--patched`: the same pair and event with the library line "
             "patched (the installed method's source, edited as the proposed patch says, run in its own module), "
             "which must bring the bound to the claim or below (the scripts' docstrings say how).", "",
             "| script | library | D | D′ | event (favours) | in the event: D | D′ | ε ≥ | control (`--patched`): D vs D′, "
             "ε ≥ | the line | s |",
             "|---|---|---|---|---|---:|---:|---:|---|---|---:|"]
    for rep in reps:
        res = rep.get("result") or {}
        lines.append(f"| `{Path(rep['script']).name}` | {cell(res.get('library', rep['env']))} | {cell(res.get('D'))} "
                     f"| {cell(res.get('D_prime'))} | {cell(res.get('event'))} ({cell(res.get('favours'))}) | "
                     f"{res.get('in_event_D', '–')}/{res.get('fits', '–')} | "
                     f"{res.get('in_event_D_prime', '–')}/{res.get('fits', '–')} | "
                     f"{num(res.get('epsilon_lower_bound'))} | {cell(_control_text(rep))} | "
                     f"{cell(res.get('line'))}: `{cell(res.get('line_text'))}` "
                     f"| {rep['wall_seconds'] + (rep.get('control_seconds') or 0):.0f} |")
    return lines


def _control_text(rep: dict[str, Any]) -> str:
    ctl = rep.get("control")
    if not ctl:
        return f"failed: {rep['control_error']}" if rep.get("control_error") else "–"
    verdict = "gone" if float(ctl["epsilon_lower_bound"]) <= CLAIM else "STILL THERE"
    return (f"{ctl['in_event_D']:,}/{ctl['fits']:,} vs {ctl['in_event_D_prime']:,}/{ctl['fits']:,}: "
            f"ε ≥ {ctl['epsilon_lower_bound']:.2f} ({verdict})")


def _why(rows: list[dict[str, Any]], by_name: dict[str, dict[str, Any]]) -> list[str]:
    """Why each row is expected to hold or fail."""
    lines = ["", "## Rows: why each is expected to hold or fail", ""]
    for row in rows:
        run = by_name.get(row["name"], {})
        extra = []
        if row.get("supervised"):
            extra.append(f"supervised: {row['supervised']}")
        if run.get("randomness", "").startswith("its own"):
            extra.append("draws its own randomness (not replayed; an own-randomness note)")
        if row.get("line"):
            extra.append(f"line: {row['line']}")
        lines.append(f"- **{row['name']}** ({row['env']}; claim ε = {CLAIM:g}, {row['neighbours']}; expected "
                     f"{row['expected']}): {row['why']}" + (f" ({'; '.join(extra)})" if extra else ""))
    return lines


def _commands(runs: list[dict[str, Any]], reps: list[dict[str, Any]]) -> list[str]:
    """Every command: the dpaudit runs, then the reproductions."""
    lines = ["", "## Every command", "", "| row | verdict | findings | budget (releases) | dpaudit s | wall s | "
             "load at start | command |", "|---|---|---|---:|---:|---:|---:|---|"]
    for run in runs:
        lines.append(f"| {run['row']} | {cell(run.get('verdict') or 'failed')} | {findings_text(run)} | "
                     f"{run.get('budget') or '–'} | {num(run.get('dpaudit_seconds'))} | {run['wall_seconds']:.1f} | "
                     f"{num(run.get('load_before'))} | `{run['command']}` |")
    for rep in reps:
        lines.append(f"| reproduction | {reproduction_text(rep)} | – | – | – | {rep['wall_seconds']:.1f} | – | "
                     f"`{rep['command']}` |")
        if rep.get("control_command"):
            lines.append(f"| control | {_control_text(rep)} | – | – | – | {rep.get('control_seconds') or 0:.1f} | – | "
                         f"`{rep['control_command']}` |")
    return lines


def markdown(payload: dict[str, Any]) -> str:
    meta, rows, runs, reps = payload["meta"], payload["rows"], payload["runs"], payload["reproductions"]
    status = payload.get("status") or {r["name"]: row_status(r, run, reps) for r, run in zip(rows, runs)}
    by_name = {run["row"]: run for run in runs}
    rep_of = {(r["script"], r["env"]): r for r in reps}
    lines = _head(meta, rows)
    lines += _panel(rows, status, by_name, rep_of)
    lines += _upstream(rows)
    if reps:
        lines += _reproductions(reps)
    lines += _why(rows, by_name)
    lines += _commands(runs, reps)
    errors = [r for r in runs if r.get("error")] + [r for r in reps if r.get("error")]
    if errors:
        lines += ["", "Errors (stderr's last lines):", ""]
        lines += [f"- {cell(r.get('row') or r.get('script'))}: {cell(r.get('error'))}" for r in errors]
    if meta.get("rendered_by"):
        lines += ["", f"(Re-rendered from the JSON by `{meta['rendered_by']}`.)"]
    return "\n".join(lines) + "\n"
