"""Where it leaks (attacks/epsilon/result/leak_sites.py): the sites of coupled, traced calls that differ between D and
D′, ranked, in a maintainer's sentences — and the report's "Where it leaks" part beside a VIOLATION."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from dpaudit.attacks.epsilon.result.leak_sites import CallSide, CoupledCall, LeakSite, coupled_calls, leak_sites
from dpaudit.execution import Draw, Findings
from dpaudit.mechanisms.base import Failed, Vector
from dpaudit.report.render import render_report
from dpaudit.report.sections import build_sections


def _trace(lines: dict[int, int], draws: tuple[tuple[int, float], ...] = (), file: str = "their_kmeans.py",
           raised: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"lines": {file: [[k, v] for k, v in sorted(lines.items())]},
            "functions": {file: [["fit", 1, 200], ["fit.<locals>.step", 50, 60]]},
            "draws": [{"site": [file, line], "dist": "normal", "call": "rng.normal", "count": 1,
                       "params": {"scale": [s, s]}} for line, s in draws],
            "raised": raised}


def _coupled(d: dict[str, Any], d_prime: dict[str, Any], n: int = 10) -> list[CoupledCall]:
    return [CoupledCall(CallSide(d), CallSide(d_prime)) for _ in range(n)]


BASE = {10: 1, 11: 1, 12: 1, 20: 1, 40: 1}


def test_scales_then_one_side_lines_then_iteration_counts() -> None:
    d = _trace({**BASE, 30: 12, 31: 12, 88: 1}, draws=((88, 0.003),))
    d_prime = _trace({**BASE, 13: 1, 14: 1, 30: 13, 31: 13, 88: 1}, draws=((88, 0.21),))
    sites = leak_sites(_coupled(d, d_prime))
    assert [(s.kind, s.where, s.side) for s in sites] == [
        ("noise-scale", "their_kmeans.py:88", "both"),
        ("one-side", "their_kmeans.py:13–14", "D′"),
        ("count", "their_kmeans.py:30–31", "both")]
    assert sites[0].sentence == ("`their_kmeans.py:88` draws Gaussian noise (rng.normal) with scale 0.003 on D and "
                                 "0.21 on D′, in `fit` (10 of 10 streams)")
    assert sites[1].sentence == "`their_kmeans.py:13–14` run on D′ only, in `fit` (10 of 10 streams)"
    assert "12 on D, 13 on D′" in sites[2].what


def test_lines_merge_across_unexecuted_lines_but_not_across_functions_or_executed_ones() -> None:
    d = _trace({**BASE, 50: 1, 51: 1})
    d_prime = _trace({**BASE, 13: 1, 15: 1, 17: 1, 48: 1, 50: 1, 51: 1, 52: 1})
    where = [s.where for s in leak_sites(_coupled(d, d_prime))]
    assert where == ["their_kmeans.py:13–17", "their_kmeans.py:48", "their_kmeans.py:52"]  # 50–51 ran on both


def test_a_rare_difference_ranks_below_a_regular_one() -> None:
    regular = _coupled(_trace(BASE), _trace({**BASE, 14: 1}), n=8)
    rare = _coupled(_trace({**BASE, 99: 1}), _trace(BASE), n=1) + _coupled(_trace(BASE), _trace(BASE), n=7)
    raise_site = [CoupledCall(CallSide(_trace(BASE)), CallSide(None, "LinAlgError: SVD did not converge "
                                                                   "(at their_kmeans.py:61)"))] * 16
    sites = leak_sites(regular + rare + raise_site)
    assert [(s.kind, s.where, s.streams, s.compared) for s in sites] == [
        ("one-side", "their_kmeans.py:14", 8, 16), ("raises", "their_kmeans.py:61", 16, 32),
        ("one-side", "their_kmeans.py:99", 1, 16)]
    assert sites[1].sentence == "raises LinAlgError at `their_kmeans.py:61` on D′ only (16 of 32 streams)"
    assert "SVD" not in json.dumps([s.to_dict() for s in sites])  # an exception's message is never repeated


def test_a_traced_raise_names_the_audited_line_and_the_full_file_name() -> None:
    raised = {"type": "LinAlgError", "site": ["research/dp_kmeans.py", 61]}
    calls = [CoupledCall(CallSide(_trace(BASE, file="research/dp_kmeans.py")),
                         CallSide(_trace(BASE, file="research/dp_kmeans.py", raised=raised),
                                  "LinAlgError: Singular matrix (at linalg.py:112)"))]
    assert [s.where for s in leak_sites(calls)] == ["research/dp_kmeans.py:61"]
    untraced = [CoupledCall(CallSide(_trace(BASE, file="research/dp_kmeans.py")),
                            CallSide(None, "ValueError: bad (at dp_kmeans.py:7)"))]
    assert [s.where for s in leak_sites(untraced)] == ["research/dp_kmeans.py:7"]


def test_what_differs_between_two_calls_of_d_is_set_aside() -> None:
    d = _trace({**BASE, 70: 1}, draws=((88, 0.5),))
    d_prime = _trace({**BASE, 71: 1}, draws=((88, 0.7),))
    assert {s.where for s in leak_sites(_coupled(d, d_prime))} == {"their_kmeans.py:88", "their_kmeans.py:70",
                                                                   "their_kmeans.py:71"}
    control = _coupled(d, _trace({**BASE, 71: 1}, draws=((88, 0.6),)), n=3)  # D twice: 70/71 and 88 vary anyway
    assert leak_sites(_coupled(d, d_prime), control=control) == []


def test_the_list_is_short_and_identical_calls_give_none() -> None:
    many = _trace({**BASE, **{100 + 2 * i: 1 for i in range(20)}}, file="a.py")
    other = _trace({**BASE, **{101 + 2 * i: 1 for i in range(20)}}, file="a.py")
    assert len(leak_sites(_coupled(many, other))) == 5 and len(leak_sites(_coupled(many, other), limit=2)) == 2
    assert leak_sites(_coupled(_trace(BASE), _trace(BASE))) == []
    assert leak_sites([CoupledCall(CallSide(None), CallSide(None))]) == []


def test_coupled_calls_pair_two_draws_by_release_position() -> None:
    traces = [_trace(BASE), _trace({**BASE, 13: 1}), _trace({**BASE, 14: 1})]
    d = Draw([Vector(np.zeros(2))] * 3, Findings(), 3, np.array([0, 1, 2]), traces)
    d_prime = Draw([Vector(np.zeros(2)), Failed("raises", "KeyError: 'x' (at their_kmeans.py:5)")], Findings(), 3,
                   np.array([0, 2]), [_trace(BASE), None])  # release 1 dropped
    calls = coupled_calls(d, d_prime)
    assert calls == [CoupledCall(CallSide(traces[0]), CallSide(_trace(BASE))),
                     CoupledCall(CallSide(traces[2]), CallSide(None, "KeyError: 'x' (at their_kmeans.py:5)"))]
    nan = Draw([Failed("nan", "NaN in the release")], Findings(), 1, np.array([0]), [_trace(BASE)])
    assert coupled_calls(nan, nan)[0].d == CallSide(_trace(BASE), None)  # a malformed value ran to its end


def _results(verdict: str, sites: list[LeakSite] | None) -> dict[str, Any]:
    search: dict[str, Any] = {"rounds": 1}
    if sites is not None:
        search["leak_sites"] = [s.to_dict() for s in sites]
    return {"kind": "estimate-eps", "verdict": verdict, "epsilon_lower_bound": 2.0, "search": search,
            "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}}


SITES = leak_sites(_coupled(_trace({**BASE, 88: 1}, draws=((88, 0.003),)),
                            _trace({**BASE, 13: 1, 88: 1}, draws=((88, 0.21),))))


def test_the_report_says_where_it_leaks_beside_a_violation_only() -> None:
    def titles(results: dict[str, Any]) -> list[str]:
        return [s["title"] for s in build_sections(results)]

    assert titles(_results("violation", SITES)).count("Where it leaks") == 1
    part = next(s for s in build_sections(_results("violation", SITES)) if s["title"] == "Where it leaks")
    assert part["tables"][0]["rows"][0] == ["their_kmeans.py:88 (in fit)",
                                            "draws Gaussian noise (rng.normal) with scale 0.003 on D and 0.21 on D′",
                                            "10 of 10"]
    assert "Where it leaks" not in titles(_results("violation", None))
    assert "Where it leaks" not in titles(_results("violation", []))
    assert "Where it leaks" not in titles(_results("no violation found", SITES))
    audit = {"kind": "audit", "epsilon_estimate": _results("violation", SITES)}
    assert "Where it leaks" in titles(audit)


def test_both_formats_render_the_part(tmp_path: Any) -> None:
    written = render_report(_results("violation", SITES), tmp_path, formats=("md", "html"))
    md = written["md"].read_text(encoding="utf-8")
    html = written["html"].read_text(encoding="utf-8")
    assert "## Where it leaks" in md and "their\\_kmeans.py:13" in md
    assert "<h2>Where it leaks</h2>" in html and "their_kmeans.py:88 (in fit)" in html
