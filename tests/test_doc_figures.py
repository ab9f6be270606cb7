"""The figures the pages quote are the committed runs' figures.

The README and ``docs/`` quote numbers of runs whose results are committed: the main job's ``Conclusion:`` line
(``reports/examples/attack-ndlaplace``), the audit examples' bounds, ceilings, sample counts, verdicts and times
(``reports/examples/audit-*``), the thesis sweeps' tables (``reports/examples/sweep-*``) and the main job's time
(``benchmarks/results/first_minute.json``).  Each is read here from the committed results and compared with what
the page says, so a page cannot keep a figure its run no longer gives: re-run the command the page shows
(``--out reports/examples/… --force``), then write what it printed.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "reports" / "examples"
FIRST_MINUTE = REPO / "benchmarks" / "results" / "first_minute.json"


def _results(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / name / "results.json").read_text(encoding="utf-8"))


def _page(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def _table(text: str, first_header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header row starts with ``| first_header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header}"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _number(cell: str) -> float:
    return float(cell.replace("−", "-").replace(",", ""))


def _two(x: float) -> str:
    """How the pages write a mean to two decimals (a minus sign, not a hyphen; −0.00 as 0.00)."""
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text.replace("-", "−")


def test_the_conclusion_quoted_is_the_committed_main_jobs() -> None:
    """The README, getting-started and verdicts pages quote the main job's last line as its committed run ends."""
    line = "Conclusion: " + _results("attack-ndlaplace")["conclusion"]["text"]
    assert len(line) <= 160, line
    for page in ("README.md", "docs/getting-started.md", "docs/verdicts.md"):
        quoted = [q for q in re.findall(r"^Conclusion: Consistent with ε = 1 per unit distance.*$", _page(page), re.M)]
        assert quoted and all(q == line for q in quoted), (page, quoted, line)


@pytest.mark.parametrize("example, label", [("audit-ndlaplace-thesis", "`ndlaplace-thesis`"), ("audit-dpfcm", "`dpfcm`")])
def test_the_audit_examples_table_is_the_committed_audits(example: str, label: str) -> None:
    """docs/cli.md's audit table: each row's certified ε_lb, sample-size ceiling, samples, verdict and the
    parts' time are those of the committed report (ε_lb to three significant digits, the time to the second)."""
    row = next(r for r in _table(_page("docs/cli.md"), "example (seed 0") if r[0].startswith(label))
    data = _results(example)
    est = data["epsilon_estimate"]
    found = re.fullmatch(r"([\d.]+) \(sample-size ceiling ([\d.]+), ([\d,]+) samples\)", row[1])
    assert found, row
    assert found.group(1) == f"{est['epsilon_lower_bound']:.3g}" and found.group(2) == f"{est['ceiling']:.3g}", row
    assert _number(found.group(3)) == est["samples"], row
    assert row[3] == data["verdict"], row
    seconds = sum(data["provenance"]["durations_seconds"].values())
    assert row[4] == f"{seconds:.0f} s", (row, seconds)
    assert data.get("schema_version") and data.get("conclusion"), "re-rendered in the current results.json schema"


def _sweep_rows(example: str) -> dict[float, dict[str, Any]]:
    return {float(r["epsilon"]): r["metrics"] for r in _results(example)["sweep"]["summary"]}


@pytest.mark.parametrize("page_row, metric", [("mean displacement", "displacement"),
                                               ("KMeans ARI", "kmeans.ari"),
                                               ("AffinityPropagation ARI", "affinity-propagation.ari"),
                                               ("DBSCAN ARI", "dbscan.ari")])
def test_the_rq1_sweep_table_is_the_committed_sweeps(page_row: str, metric: str) -> None:
    rows = _table(_page("docs/cli.md"), "ε | 0.05")
    header = [_number(c) for c in _table_header(_page("docs/cli.md"), "ε | 0.05")]
    row = next(r for r in rows if r[0] == page_row)
    sweep = _sweep_rows("sweep-rq1-ndlaplace")
    assert row[1:] == [_two(sweep[e][metric]["mean"]) for e in header], (page_row, row)


def _table_header(text: str, first_header: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"| {first_header}"))
    return [cell.strip() for cell in line.strip().strip("|").split("|")][1:]


def test_the_rq2_sweep_row_is_the_committed_sweeps() -> None:
    text = _page("docs/cli.md")
    start = text.index("sweep-rq2-3d-ndlaplace")
    header = [_number(c) for c in _table_header(text[start:], "ε | 0.05")]
    row = next(r for r in _table(text[start:], "ε | 0.05") if r[0] == "KMeans ARI (ours)")
    sweep = _sweep_rows("sweep-rq2-3d-ndlaplace")
    assert row[1:] == [_two(sweep[e]["kmeans.ari"]["mean"]) for e in header], row


def _main_job_seconds() -> tuple[float, float, float]:
    """(quiet-machine seconds, loaded wall seconds, the load it was measured at) of the committed benchmark: the
    quiet run of the job before times the measured ratio after / before, the slowest wall time after, and the
    highest load average met during those runs."""
    data = json.loads(FIRST_MINUTE.read_text(encoding="utf-8"))
    after = data["after"]
    quiet = data["meta"]["quiet"]["after"]
    return quiet, max(r["wall_seconds"] for r in after), max(max(r["load_start"], r["load_end"]) for r in after)


def test_the_main_jobs_time_is_the_committed_benchmarks() -> None:
    """The README gives the main job one time, the benchmark's: on a quiet machine and at the load it was measured
    at; the tour's line says the same, and the first minute's goal (20 s on a quiet 2-core machine) holds."""
    quiet, loaded, load = _main_job_seconds()
    readme = _page("README.md")
    setup = next(line for line in readme.splitlines() if "run the main job" in line)  # the set-up command's comment
    assert f"then {quiet:.0f} s ({math.ceil(loaded)} s at load {load:.1f})" in setup, (setup, quiet, loaded, load)
    tour = next(line for line in readme.splitlines() if line.startswith("dpaudit attack --mechanism ndlaplace --eps 1 "))
    assert tour.rstrip().endswith(f"{quiet:.0f} s"), tour
    assert f"the main job {math.ceil(loaded)} s at load {load:.1f}" in " ".join(readme.split())
    assert quiet <= 20.0, f"the main job takes {quiet:.1f} s on a quiet machine: the first minute's goal is 20 s"


def _paragraph(text: str, start: str) -> str:
    at = text.index(start)
    return " ".join(text[at:text.index("\n\n", at)].split())


def test_the_sweeps_prose_is_the_committed_sweeps() -> None:
    """The figures docs/cli.md quotes in words for the second and third sweeps."""
    text = _page("docs/cli.md")
    mia = _sweep_rows("sweep-rq1-mia-ndlaplace")
    advantages = [m["mia.shokri.advantage"]["mean"] for m in mia.values()]
    stds = [m["mia.shokri.advantage"]["std"] for m in mia.values()]
    said = _paragraph(text, "The second command (Shokri")
    lowest = f"{min(advantages):.2g}".replace("-", "−")
    assert f"between {lowest} and {max(advantages):.2g} (std {min(stds):.2g}–{max(stds):.2g})" in said, said
    bounds = [m["mia.shokri.epsilon_lower_bound"]["mean"] for m in mia.values()]
    words = {7: "seven", 8: "eight", 9: "all nine"}
    zero = sum(b == 0 for b in bounds)
    assert f"is 0 at {words.get(zero, str(zero))}" in said, said
    if zero < len(bounds):
        assert f"{max(bounds):.2g} on average" in said, said
    trade = _sweep_rows("sweep-tradeoff-ndlaplace")
    said = _paragraph(text, "The third command puts utility")
    ari = {e: m["kmeans.ari_truth"]["mean"] for e, m in trade.items()}
    auc = {e: m["mia.yeom.auc"]["mean"] for e, m in trade.items()}
    adv = {e: m["mia.yeom.advantage"]["mean"] for e, m in trade.items()}
    lb = {e: m["mia.yeom.epsilon_lower_bound"]["mean"] for e, m in trade.items()}
    low = [e for e in trade if e <= 2]
    for figure in (f"{ari[0.1]:.2f} at ε = 0.1", f"{ari[2.0]:.2f} at ε = 2",
                   f"AUC {min(auc[e] for e in low):.2f}–{max(auc[e] for e in low):.2f}",
                   f"advantage ≤ {max(adv[e] for e in low):.2g}", f"ε_lb ≤ {max(lb[e] for e in low):.2g}",
                   f"({ari[5.0]:.2f} and {ari[9.0]:.2f};", f"AUC {auc[5.0]:.2f} and {auc[9.0]:.2f}",
                   f"advantage {adv[5.0]:.2f} and {adv[9.0]:.2f}", f"ε_lb {lb[5.0]:.2f} and {lb[9.0]:.2f}"):
        assert figure in said, (figure, said)
    baseline = _results("sweep-tradeoff-ndlaplace")["sweep"]["baseline"]["kmeans.ari_truth"]
    assert f"baseline is {baseline:.3g}" in said


def test_the_attack_output_shown_is_the_committed_runs() -> None:
    """docs/verdicts.md shows the main job's stdout as its committed run prints it (rendered from its
    results.json as the command renders it)."""
    from dpaudit.attack.output import format_table

    text = _page("docs/verdicts.md")
    start = text.index("```text\nAttacked  ndlaplace") + len("```text\n")
    shown = text[start:text.index("```", start)]
    assert shown == format_table(_results("attack-ndlaplace")).rstrip("\n") + "\n"
