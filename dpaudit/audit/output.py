"""Console output of ``dpaudit audit``: the verdict table (one row per part that ran)."""

from __future__ import annotations

import textwrap
from typing import Any

from dpaudit.console import MAX_WIDTH, render, table
from dpaudit.execution.verdict import Verdict
from dpaudit.report.numbers import fmt
from dpaudit.report.sections import verdict_word
from dpaudit.result_shapes import AuditConfidence
from dpaudit.run_shapes import RunResults

__all__ = ["format_verdict_table", "verdict_table"]


def verdict_table(results: RunResults) -> list[Any]:
    """``part  statistic  value  claim  verdict`` rows (violations in bold red on a terminal), then
    the confidence the rows are certified at, and the parts that did not finish — their reason,
    the audited code's text, as a quoted line of its own."""
    from dpaudit.execution.untrusted import quoted

    rows, failed = [], []
    for r in results["verdict_table"]:
        value = r["value"]
        if r.get("verdict") == Verdict.INCONCLUSIVE and isinstance(value, str):  # a failure's text: below
            failed.append(f"  {r['part']}: {quoted(value, 80)}")
            value = "failed (below)"
        rows.append([r["part"], r.get("statistic", ""), fmt(value), r["claim"], verdict_word(r["verdict"])])
    styles = ["bold red" if r[-1] == Verdict.VIOLATION.word else None for r in rows]
    if not rows:  # no part reached a test (the code released nothing): no empty table, no confidence line
        return ["No certified test ran: the parts that make them could not run (see the findings)."]
    out: list[Any] = [table(["part", "statistic", "value", "claim", "verdict"], rows, right=(2,), row_styles=styles)]
    found = results.get("confidence")
    conf = found if isinstance(found, dict) else AuditConfidence()
    if conf.get("certified_tests"):
        m, per_test, overall = int(conf["certified_tests"]), float(conf["per_test"]) * 100, float(conf["overall"])
        tests = ", ".join(str(t) for t in conf.get("tests") or ())
        split = (f"the audit's {overall:.0%} split over the {m} tests that can decide ({tests}; Bonferroni)" if m > 1
                 else f"the audit's whole {overall:.0%}: it is the only test that can decide ({tests})" if tests
                 else f"the audit's whole {overall:.0%}")
        others = sorted(conf.get("not_deciding") or {})
        rest = (f"; {', '.join(others)} cannot decide for this release and claim and take no share of α" if others
                else "")
        out.append(textwrap.fill(f"Each certified test runs at {per_test:.4g} % confidence: {split}{rest}; the "
                                 f"verdict errs with probability at most {1 - overall:.2g}.", width=MAX_WIDTH))
    out += failed
    return out


def format_verdict_table(results: RunResults) -> str:
    """:func:`verdict_table` as plain text."""
    return render(*verdict_table(results))
