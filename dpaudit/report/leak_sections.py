"""The report's "Where it leaks" part: the audited code's lines and noise draws that differ between D and D′.

Read from the ε estimate's ``search["leak_sites"]`` — the
:class:`~dpaudit.attacks.epsilon.result.leak_sites.LeakSite` dicts of the coupled,
traced screening runs — and drawn beside a VIOLATION only: on code whose claim
holds, a line that runs differently on D and D′ is no finding.  Nothing is
drawn when the key is absent or empty.  A site holds file names, line
numbers, counts and noise scales, never a record.
"""

from __future__ import annotations

from dpaudit.execution.verdict import Verdict
from dpaudit.result_shapes import EmbeddedEstimate
from dpaudit.run_shapes import RunResults

from .section import Section

__all__ = ["leak_section"]

INTRO = ("Where the audited code behaves differently on the two datasets of a pair, traced on coupled screening "
         "runs (D and D′ called on the same random streams, so that noise drawn the same way cancels), most telling "
         "first. These sites point a maintainer at the code to fix; the certified bound above rests on fresh, "
         "uncoupled releases alone.")


def _estimate(results: RunResults) -> RunResults | EmbeddedEstimate | None:
    est = results if results.get("kind") == "estimate-eps" else results.get("epsilon_estimate")
    return est if isinstance(est, dict) else None


def leak_section(results: RunResults) -> Section | None:
    """``{"title": "Where it leaks", "text", "tables"}`` beside a VIOLATION of the ε estimate; None otherwise."""
    est = _estimate(results)
    if est is None or est.get("verdict") != Verdict.VIOLATION.value:
        return None
    search = est.get("search")
    sites = search.get("leak_sites") if isinstance(search, dict) else None
    if not isinstance(sites, list):
        return None
    rows = []
    for site in sites:
        if not isinstance(site, dict) or not site.get("where"):
            continue
        function = f" (in {site['function']})" if site.get("function") else ""
        rows.append([f"{site['where']}{function}", str(site.get("what", "")),
                     f"{site.get('streams', '?')} of {site.get('compared', '?')}"])
    if not rows:
        return None
    return {"title": "Where it leaks", "text": [INTRO],
            "tables": [{"header": ["where", "what differs between D and D′", "streams"], "rows": rows}]}
