"""The main job's ETA is never off by more than 2× once past 20 %: the progress plan replayed on a fake clock
with the step times two real runs of ``dpaudit attack --mechanism ndlaplace --eps 1`` measured on a 2-core
machine (39 s nearly idle, 78 s at load 3; ``results.json``'s ``timings``).

Checked at every step's start and, for the steps that report their progress (the attacks), at quarters inside
them; the timed ε estimate reports none (its releases come in chunks without a total), so inside it the ETA
is only checked where the step starts.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import dpaudit.mechanisms
from dpaudit.attack.config import AttackConfig
from dpaudit.attack.registry import ATTACKS
from dpaudit.attack.run import ESTIMATE_STEP, estimate_weight, progress_for
from dpaudit.attacks.epsilon import Budget
from dpaudit.options import AttackOptions, ClaimOptions, TargetOptions
from dpaudit.progress import RunProgress

# results.json "timings" of the two runs
RUNS = {
    "idle": {"total": 39.6, "estimate": 8.63, "attacks": {"shokri": 2.98, "yeom": 2.24, "label-only": 20.71,
                                                         "reconstruction": 0.28, "lira": 1.98, "rmia": 0.86,
                                                         "tracing": 0.0}},
    "load 3": {"total": 78.3, "estimate": 19.46, "attacks": {"shokri": 6.57, "yeom": 3.77, "label-only": 37.73,
                                                            "reconstruction": 0.60, "lira": 3.43, "rmia": 1.76,
                                                            "tracing": 0.0}},
}


@pytest.mark.parametrize("run", list(RUNS))
def test_the_main_job_s_eta_is_within_2x_past_20_percent(run: str) -> None:
    timing = RUNS[run]
    config = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=1.0),
                          attack=AttackOptions(attacks=ATTACKS))
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    now = [0.0]
    bar = progress_for(RunProgress("main job", mode="off", clock=lambda: now[0]), config,
                       SimpleNamespace(n_records=2000), mech)
    repeats = config.attack.repeats
    overhead = (timing["total"] - timing["estimate"] - sum(timing["attacks"].values())) / repeats
    seconds = {name: (timing["estimate"] if name == ESTIMATE_STEP else overhead if name.endswith("· target")
                      else timing["attacks"][name.split(" · ")[-1]] / repeats)
               for name, _ in bar.steps}
    assert abs(sum(seconds.values()) - timing["total"]) < 0.5
    off = []

    def check(where: str) -> None:
        eta, left = bar.eta(), timing["total"] - now[0]
        if bar.fraction() >= 0.2 and eta is not None and left > 1.0 and not 0.5 <= eta / left <= 2.0:
            off.append(f"{where}: {bar.fraction():.0%} done at {now[0]:.1f} s, ETA {eta:.1f} s, {left:.1f} s left")

    for name, _ in bar.steps:
        bar.start(name)
        check(f"start of {name}")
        quarters = 1 if name == ESTIMATE_STEP else 4
        for k in range(1, quarters + 1):
            now[0] += seconds[name] / quarters
            if name != ESTIMATE_STEP:
                bar.advance(k / quarters)
                check(f"{name} {k}/4")
        bar.finish()
    assert not off, "\n".join(off)


def test_a_timed_estimate_gets_its_share_of_the_plan() -> None:
    mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
    def config(budget: Budget) -> AttackConfig:
        return AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=1.0),
                            attack=AttackOptions(attacks=ATTACKS), budget=budget)

    assert estimate_weight(mech, config(Budget(time_budget=60.0))) >= 15.0
    assert estimate_weight(mech, config(Budget(samples=1000))) < 15.0
