"""Screening: every pair built is screened on coupled releases before any is certified (attacks/epsilon/search/screening.py).

Each plug-in of tests/plugins/screening_cases.py stands for a class of real DP clustering code the search used
to give up on: an empty set of centres, NaN centres, a construction that crashes the code, code silent below a
hundred records, code that refuses the head of the list, a refusal beside a leak in what the code releases.
Budgets are small (a few thousand releases, fixed: the same numbers on any machine).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpaudit import Budget, RunSettings, SearchSpace, estimate_epsilon
from dpaudit.attacks.epsilon.pairs.neighbours import NeighbourPair
from dpaudit.attacks.epsilon.search.screening import coupled_effect, screening_pool
from dpaudit.attacks.epsilon.selection.candidate import Candidate
from dpaudit.cli import app
from dpaudit.execution import WorkerMechanism
from dpaudit.execution.verdict import Verdict
from dpaudit.mechanisms.plugins import FunctionMechanism

PLUGINS = Path(__file__).parent / "plugins"
sys.path.insert(0, str(PLUGINS))
import screening_cases as cases  # noqa: E402

X30 = np.random.default_rng(0).uniform(-1.0, 1.0, size=(30, 2))
BOX = SearchSpace(bounds=(-1.0, 1.0))
QUIET = RunSettings(progress=False)


def _estimate(fn, releases: int = 12_000, seed: int = 0, **kw):
    mech = fn if not callable(fn) or hasattr(fn, "release") else FunctionMechanism(fn, epsilon=1.0, output="centroids")
    return estimate_epsilon(mech, X30, budget=Budget(releases=releases), search=BOX, run=QUIET, seed=seed, **kw)


# --------------------------------------------------------------------------- #
# The score
# --------------------------------------------------------------------------- #
def test_the_coupled_score_reads_the_noise_that_cancels():
    """Additive Laplace noise of scale b on a difference Δ, coupled: the noise cancels and the score is
    Δ/(√2·b) up to the spread's sampling error (m = 400 streams: within 15 %, about 4 standard errors of a
    Laplace sample's standard deviation, whose relative error is ≈ √(5/4)/√m ≈ 5.6 %)."""
    rng = np.random.default_rng(1)
    noise = rng.laplace(scale=2.0, size=(400, 1))
    score = coupled_effect(3.0 + noise, 1.0 + noise)
    assert score == pytest.approx(2.0 / (np.sqrt(2) * 2.0), rel=0.15)
    independent = coupled_effect(3.0 + noise, 1.0 + rng.laplace(scale=2.0, size=(400, 1)))
    assert independent < score  # uncoupled, the noise of both sides is in the difference
    assert coupled_effect(np.zeros((8, 2)), np.zeros((8, 2))) == 0.0
    assert coupled_effect(np.zeros((8, 1)), np.ones((8, 1))) == np.inf  # deterministic and different
    assert coupled_effect(noise[:8], noise[:8]) == 0.0


def test_the_pool_keeps_first_tries_and_caps_refusals():
    """The head: the best pair on releases, the best refusal, every first try the code answered on; refusals
    at most a third of the places."""
    pair = NeighbourPair("p", np.zeros((1, 1)), np.zeros((2, 1)), "add-remove", 1, np.zeros(1))
    first = NeighbourPair("f", np.zeros((1, 1)), np.zeros((2, 1)), "add-remove", 1, np.zeros(1), first_try=True)
    found = [Candidate(i, pair, status="ok", screen_score=float(10 - i), refused=(0,) if i < 6 else ())
             for i in range(10)] + [Candidate(10, first, status="ok", screen_score=0.0),
                                    Candidate(11, first, status="ok", screen_score=0.0, refused=(1,))]
    pool, head = screening_pool(found, 6)
    assert [c.id for c in pool[:head]] == [6, 0, 10]  # a refused first try is no first try the code answered
    assert sum(1 for c in pool if c.refused) == 2 and [c.id for c in pool[head:]] == [1, 7, 8, 9]


# --------------------------------------------------------------------------- #
# Releases of any size, NaN included, and code that crashes on one construction
# --------------------------------------------------------------------------- #
def test_an_empty_set_of_centres_is_a_release_and_the_run_concludes():
    res = _estimate(cases.mean_or_nothing)
    assert res.verdict == Verdict.NO_VIOLATION, res.findings
    assert not any(f["kind"] == "wrong-shape" for f in res.findings)
    assert res.search["screening"]["answered_both_sides"] > 0


def test_nan_centres_are_releases_not_garbage():
    res = _estimate(cases.mean_over_noisy_count)
    assert res.verdict == Verdict.NO_VIOLATION
    assert [f["kind"] for f in res.findings] == ["non-finite"] and not res.findings[0]["blocking"]


def test_a_construction_that_crashes_the_code_is_its_finding_not_a_block():
    """Out of memory on the far outlier (every call on that dataset): that pair is set aside with a crash finding,
    and the leak every ordinary pair shows (noise scaled by the data's range) is certified on the others."""
    res = _estimate(cases.range_scaled_crashes_far)
    assert res.verdict == Verdict.VIOLATION and res.epsilon_lower_bound > 1.0
    assert "crash" in {f["kind"] for f in res.findings}
    set_aside = [c for c in res.candidates if c["status"] in ("broken", "error")]
    assert set_aside and all("outlier" in c["pair"] for c in set_aside)


# --------------------------------------------------------------------------- #
# Code silent below a size, code that refuses the head of the list
# --------------------------------------------------------------------------- #
def test_code_that_releases_nothing_below_100_records_is_grown_into_and_flagged():
    res = estimate_epsilon(FunctionMechanism(cases.silent_below_100, epsilon=1.0, output="centroids"), X30,
                           budget=Budget(time_budget=15.0), search=BOX, run=QUIET, seed=0)
    assert res.verdict == Verdict.VIOLATION, res.guarantee
    grown = res.search["screening"]["grown_to_records"]
    assert grown and grown[0] == 3 * 30  # from the audited data's size up
    assert res.pair["records_D"] >= 90 and res.pair["family"] == "grown"


def test_the_search_screens_past_a_refused_head_of_the_list():
    """Identical records are the head of the constructions; the code refuses them (both sides) and leaks on the
    pairs built from the user's own records: screened, found, certified."""
    res = _estimate(cases.refuses_identical)
    assert res.verdict == Verdict.VIOLATION and res.epsilon_lower_bound > 1.0
    assert res.pair["family"] not in ("degenerate",)
    refused = [c for c in res.candidates if c["status"] == "outside-domain"]
    assert refused and res.search["screening"]["screened"] == res.search["screening"]["pairs"]


def test_the_bound_on_releases_leads_over_a_refusal():
    """The code raises on one-record datasets (a refusal channel, infinite on screening) and leaks in what it
    releases: the conclusion rests on its releases, and the refusal stays a finding of the pairs beside it."""
    res = _estimate(cases.crashes_on_one_and_leaks)
    assert res.verdict == Verdict.VIOLATION and res.epsilon_lower_bound > 1.0
    assert "refusal" not in res.event, res.event  # the lead rests on what the code releases
    assert any(c.get("refusal_channel") for c in res.candidates)


def test_a_refusal_winner_is_certified_beside_the_best_pair_both_sides_answer():
    """Where the strongest evidence is a refusal (here: a correct count that raises on one record), the best pair
    both sides answer is certified too, each at α/2, and the conclusion says both."""
    res = _estimate(cases.count_refusing_one, releases=20_000)
    assert res.verdict == Verdict.VIOLATION and "refusal" in res.event
    (also,) = res.search["also_certified"]
    assert also["evidence"] == "releases" and not also["exceeds_claim"] and also["alpha"] == pytest.approx(0.025)
    assert res.search["certified_alpha_each"] == pytest.approx(0.025)


# --------------------------------------------------------------------------- #
# Coupling: checked, and refused where the code ignores its generator
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("fn, status", [(cases.correct_mean, "holds"), (cases.global_numpy_mean, "holds"),
                                        (cases.urandom_mean, "fails"), (cases.own_generator_mean, "fails")])
def test_coupling_is_checked(fn, status):
    res = _estimate(fn, releases=4_000)
    assert res.search["screening"]["coupling"]["status"] == status
    assert res.verdict != Verdict.VIOLATION


def test_the_line_that_leaks_is_named():
    """A branch on the data (identical records released without noise): the lines each side runs alone, in the
    plug-in's own file and function."""
    res = _estimate(cases.constant_data_branch)
    assert res.verdict == Verdict.VIOLATION
    sites = res.search["leak_sites"]
    assert sites and all(s["file"] == "screening_cases.py" for s in sites)
    lines = [s for s in sites if s["kind"] == "one-side"]
    assert lines and lines[0]["function"] == "constant_data_branch" and "only" in lines[0]["sentence"]


def test_the_noise_scale_that_leaks_is_named():
    """No branch, a σ read off the data: the draw, its call site and both scales (no record's value)."""
    res = _estimate(cases.data_scaled_noise_only)
    assert res.verdict == Verdict.VIOLATION
    scale = [s for s in res.search["leak_sites"] if s["kind"] == "noise-scale"]
    assert scale and "Gaussian noise (rng.normal)" in scale[0]["sentence"]
    assert scale[0]["function"] == "data_scaled_noise_only" and scale[0]["file"] == "screening_cases.py"


# --------------------------------------------------------------------------- #
# The command line: never exit 2 for code that answered
# --------------------------------------------------------------------------- #
def test_no_exit_2_for_code_that_answered(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["estimate-eps", "-m", f"{PLUGINS / 'screening_cases.py'}:refuses_identical",
                                   "--eps", "1", "--output", "centroids", "--bounds", "-1,1", "--releases", "6000",
                                   "--out", str(out), "--no-progress"])
    assert res.exit_code in (0, 3), res.output  # a verdict, or a finding: never "user mistake"
    assert "Conclusion: VIOLATION" in res.stdout


def test_screening_in_worker_lanes_forked_from_a_warm_template():
    """A plug-in in worker processes: its template is warmed up on a public dataset first, so the lanes of the
    many screened pairs start warm; coupling holds through the worker (the generator's entropy is the same)."""
    mech = WorkerMechanism(f"{PLUGINS / 'screening_cases.py'}:correct_mean", epsilon=1.0, output="centroids",
                           timeout=30)
    try:
        res = estimate_epsilon(mech, X30, budget=Budget(releases=4_000), search=BOX, run=QUIET, seed=0)
    finally:
        mech.close()
    assert res.search["screening"]["coupling"]["status"] == "holds" and res.verdict == Verdict.NO_VIOLATION


def _lane_start(mech, lane) -> float:
    import time

    from dpaudit.execution import draw_releases

    t0 = time.perf_counter()
    draw_releases(mech, X30, np.random.SeedSequence(1), 1, lane=lane)
    return time.perf_counter() - t0


def test_a_warm_template_forks_lanes_that_start_warm():
    """The template calls the code on a public dataset before forking: a memoised 0.5 s calibration is paid
    once there, not once per lane (two per screened pair)."""
    mech = WorkerMechanism(f"{PLUGINS / 'screening_cases.py'}:slow_first_call", epsilon=1.0, output="centroids",
                           timeout=30)
    try:
        assert _lane_start(mech, "cold") > 0.5  # forked before any warm-up: pays the calibration
        from dpaudit.execution import warm_lanes

        assert warm_lanes(mech, np.random.default_rng(0).uniform(-1, 1, (30, 2))) == ""
        assert _lane_start(mech, "warm") < 0.4
    finally:
        mech.close()


def test_a_warm_up_that_starts_threads_is_given_up_and_lanes_fork_cold():
    mech = WorkerMechanism(f"{PLUGINS / 'screening_cases.py'}:starts_a_thread", epsilon=1.0, output="centroids",
                           timeout=30)
    try:
        from dpaudit.execution import warm_lanes

        note = warm_lanes(mech, np.random.default_rng(0).uniform(-1, 1, (30, 2)))
        assert "threads" in note
        assert _lane_start(mech, "after") < 30  # a cold template forks a working lane
    finally:
        mech.close()
