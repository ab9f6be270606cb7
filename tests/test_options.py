"""The parts a workflow is built from (dpaudit.options): each checks its fields once, in the library's words, and
the claim is built in one place."""

from __future__ import annotations

import dataclasses

import pytest

from dpaudit.attack.config import RECORD_KEYS as ATTACK_KEYS
from dpaudit.attack.config import AttackConfig
from dpaudit.attacks.epsilon import Budget
from dpaudit.audit.config import RECORD_KEYS as AUDIT_KEYS
from dpaudit.audit.config import AuditConfig
from dpaudit.claims import NOTIONS
from dpaudit.estimate.config import RECORD_KEYS as ESTIMATE_KEYS
from dpaudit.estimate.config import EstimateConfig
from dpaudit.mechanisms.base import PrivacyClaim
from dpaudit.mechanisms.notions import GaussianDP
from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, OptionError, TargetOptions, whole_number
from dpaudit.sweep.config import RECORD_KEYS as SWEEP_KEYS
from dpaudit.sweep.config import SweepConfig

LAPLACE = TargetOptions(mechanism="laplace")


@pytest.mark.parametrize("build, field, words", [
    (lambda: ClaimOptions(epsilon=0), "epsilon", "epsilon must be > 0"),
    (lambda: ClaimOptions(epsilon=1e-300), "epsilon", "epsilon = 1e-300 is below the smallest ε"),
    (lambda: ClaimOptions(delta=1.0), "delta", "delta must be a number in [0, 1)"),
    (lambda: ClaimOptions(neighbours="near"), "neighbours", "neighbours must be one of add-remove, replace, metric"),
    (lambda: DataOptions(records=1), "records", "records must be a whole number ≥ 2, got 1"),
    (lambda: DataOptions(bounds=([0.0], [0.0])), "bounds", "bounds must be (lo, hi) lists"),
    (lambda: AttackOptions(attacks=("magic",)), "attacks", "unknown attack magic"),
    (lambda: AttackOptions(repeats=0), "repeats", "repeats must be a whole number ≥ 1, got 0"),
    (lambda: AttackOptions(shadow_fraction=1.0), "shadow_fraction", "shadow_fraction must be in (0, 1)"),
    (lambda: TargetOptions(mechanism="m", output="spheres"), "output", "output must be one of"),
    (lambda: TargetOptions(mechanism="m", label_range=(1, 0)), "label_range", "label_range takes LO,HI"),
    (lambda: AttackConfig(target=LAPLACE, claim=ClaimOptions(), attack=AttackOptions(attacks=("yeom",))), "epsilon",
     "epsilon is required"),
    (lambda: AttackConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0)), "attacks", "at least one attack"),
    (lambda: AttackConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0), attack=AttackOptions(attacks=("yeom",)),
                          budget=Budget(time_budget=10**7)), "time_budget", "at most a week"),
    (lambda: EstimateConfig(target=TargetOptions(mechanism="ndlaplace")), "epsilon", "epsilon is required"),
    (lambda: SweepConfig(target=LAPLACE, epsilons=(1.0, 1.0)), "epsilons", "the ε list has duplicates"),
    (lambda: SweepConfig(target=LAPLACE, epsilons=(1.0,), attack=AttackOptions(attacks=("reconstruction",))),
     "attacks", "reconstruction is not one"),
    (lambda: SweepConfig(target=LAPLACE, epsilons=(1.0,), epsilon_bound=True), "samples", "samples must be given"),
    (lambda: AuditConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0), parts=("smoke", "fuzz")), "parts",
     "unknown audit part(s) fuzz"),
])
def test_each_mistake_names_its_field_in_the_library_s_words(build, field: str, words: str) -> None:
    with pytest.raises(OptionError) as caught:
        build()
    assert caught.value.field == field and words in str(caught.value), str(caught.value)


def test_one_check_per_kind_of_count() -> None:
    assert whole_number(3.0, "repeats", 1) == 3 and isinstance(whole_number(3.0, "repeats", 1), int)
    for bad in (True, 2.5, "3", None, float("inf")):
        with pytest.raises(OptionError, match="repeats must be a whole number ≥ 1"):
            whole_number(bad, "repeats", 1)


def test_the_claim_is_built_in_one_place() -> None:
    own = PrivacyClaim(2.0, 1e-6, "replace")
    assert ClaimOptions(epsilon=1.0, delta=0.0, neighbours="add-remove").claim(own) is own  # the mechanism's own
    assert ClaimOptions(epsilon=1.0, delta=0.0).claim(own, restate=True) == PrivacyClaim(1.0, 0.0, "replace")
    assert ClaimOptions().claim(own, restate=True) == own
    in_gdp = ClaimOptions(notions={"mu": 0.5, "rho": None}, neighbours="add-remove")
    assert in_gdp.notions == {"mu": 0.5} and in_gdp.notion() == GaussianDP(0.5)
    assert in_gdp.claim(own).neighbours == "replace" and in_gdp.claim(own, restate=True).neighbours == "add-remove"
    assert in_gdp.claim(own).notion == GaussianDP(0.5) and in_gdp.claim(own).delta == 1e-5
    assert list(in_gdp.stated()) == [n.name for n in NOTIONS]


def test_a_workflow_s_data_and_target() -> None:
    data = DataOptions()
    assert data.dataset == "blobs-2d" and data.selection() == {"dataset": "blobs-2d", "data": None, "records": None,
                                                               "rescale": "none"}
    assert DataOptions(data="some/where/d.csv").selection()["data"] == "d.csv"
    assert AttackOptions(candidates=1201).split_sizes(2000) == (800, 600)
    audit = AuditConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0))
    assert "attacks" not in audit.parts  # no attack named: no attacks part
    recipe = AuditConfig(target=TargetOptions(mechanism="x.py:f", output="vector"),
                         claim=ClaimOptions(epsilon=1.0, delta=1e-5, neighbours="replace")).recipe()
    assert (recipe.spec, recipe.output, recipe.neighbours, recipe.delta) == ("x.py:f", "vector", "replace", 1e-5)


@pytest.mark.parametrize("config, keys", [
    (AttackConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0), attack=AttackOptions(attacks=("yeom",))),
     ATTACK_KEYS),
    (AuditConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0)), AUDIT_KEYS),
    (EstimateConfig(target=LAPLACE, claim=ClaimOptions(epsilon=1.0)), ESTIMATE_KEYS),
    (SweepConfig(target=LAPLACE, epsilons=(1.0,)), SWEEP_KEYS),
])
def test_the_results_keep_the_flat_names_they_always_had(config, keys: tuple[str, ...]) -> None:
    """The JSON a run writes of its config is flat, in the order it always was, with every notion option."""
    flat = config.to_dict()
    assert tuple(flat) == keys and {n.name for n in NOTIONS} <= set(flat)
    assert len(keys) == {AttackConfig: 36, AuditConfig: 29, EstimateConfig: 32, SweepConfig: 20}[type(config)]
    assert dataclasses.replace(config).to_dict() == flat
