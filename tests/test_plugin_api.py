"""Plug-ins as Python objects: ``dpaudit.plugin`` takes what ``--mechanism`` names, with the command line's keywords
(epsilon, output, neighbours, delta, bounds), and the auditing functions take such objects as the command line does."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpaudit
from dpaudit import InvalidInputError, PrivacyClaim
from dpaudit.attacks.targets import Reference

X = np.random.default_rng(1).normal(scale=0.3, size=(30, 2))
FAST = dpaudit.Budget(releases=4000)


def mean(X, epsilon, rng):
    X = np.clip(X, -1.0, 1.0)
    return X.mean(axis=0) + rng.laplace(scale=4.0 / (len(X) * epsilon), size=X.shape[1])


def swapped(X, rng, epsilon):
    return X


class Boxless:
    """A mechanism class that takes neither ε nor a box and states its own claim."""

    name = "boxless"
    claim = PrivacyClaim(1.0, 0.0, "replace")

    def release(self, X, rng):
        return dpaudit.mechanisms.base.Vector(np.array([X.mean() + rng.laplace(scale=2.0 / len(X))]))


class Clusters:
    """An estimator class: fit(X) sets cluster_centers_."""

    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon, self.random_state = epsilon, random_state

    def fit(self, X):
        self.cluster_centers_ = X[:2] + np.random.default_rng(self.random_state).laplace(size=(2, X.shape[1]))
        return self


def test_a_function_with_the_command_lines_keywords() -> None:
    mech = dpaudit.plugin(mean, epsilon=2.0, output="vector", neighbours="replace", delta=1e-6, bounds=(-1, 1))
    assert mech.claim == PrivacyClaim(2.0, 1e-6, "replace") and mech.bounds == (-1, 1)
    assert mech.release(X, np.random.default_rng(0)).kind == "vector"


def test_an_estimator_a_class_an_instance_and_a_spec() -> None:
    est = dpaudit.plugin(Clusters, epsilon=1.0, output="centroids")
    assert est.release(X, np.random.default_rng(0)).kind == "centroids"
    boxed = dpaudit.plugin(Boxless, bounds=(-1.0, 1.0))  # the box is the auditor's: kept beside the object
    assert boxed.bounds == (-1.0, 1.0) and boxed.claim.neighbours == "replace" and boxed.name == "boxless"
    assert dpaudit.plugin(Boxless()).claim.epsilon == 1.0
    spec = dpaudit.plugin("examples/their_code.py:noisy_count", epsilon=1.0, output="vector")
    assert spec.release(X, np.random.default_rng(0)).kind == "vector"
    assert dpaudit.plugin("ndlaplace", epsilon=1.0).claim.neighbours == "metric"


def test_mistakes_are_one_clear_error() -> None:
    with pytest.raises(InvalidInputError, match="swapped"):
        dpaudit.plugin(swapped, epsilon=1.0)
    with pytest.raises(InvalidInputError, match="give the epsilon"):
        dpaudit.plugin(mean)
    with pytest.raises(InvalidInputError, match="states its own claim"):
        dpaudit.plugin(Boxless(), epsilon=2.0)
    with pytest.raises(InvalidInputError, match=r"dpaudit.plugin\(mean, epsilon=…, output=…"):
        dpaudit.estimate_epsilon(mean, X)
    with pytest.raises(InvalidInputError, match=r"--output vector"), warnings.catch_warnings():
        warnings.simplefilter("error")  # read as points, the first call's shape tells: the mistake is said alone
        dpaudit.estimate_epsilon(mean, X, PrivacyClaim(1.0, 0.0, "replace"), budget=FAST)


def test_estimate_takes_the_wrapped_function_and_warns_without_a_box() -> None:
    mech = dpaudit.plugin(mean, epsilon=1.0, output="vector", neighbours="replace")
    with pytest.warns(dpaudit.NoPublicBoxWarning, match="much weaker bound"):
        result = dpaudit.estimate_epsilon(mech, X, budget=FAST, seed=0)
    assert result.notes and "--bounds" in result.notes[0] and result.to_dict()["notes"] == result.notes
    boxed = dpaudit.plugin(mean, epsilon=1.0, output="vector", neighbours="replace", bounds=(-1.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpaudit.NoPublicBoxWarning)
        result = dpaudit.estimate_epsilon(boxed, X, budget=FAST, seed=0)
    assert result.notes == [] and result.verdict in ("no violation found", "violation")


def test_the_attacks_take_a_plugin() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(scale=3.0, size=(300, 2))
    shadow, members = data[:200], data[200:250]
    reference = Reference.fit(shadow, 3, seed=0)
    with pytest.raises(InvalidInputError, match="dpaudit.plugin"):
        dpaudit.AttackerKnowledge(mean, shadow, reference, n_members=50)
    mech = dpaudit.plugin(lambda X, epsilon, rng: X + rng.laplace(size=X.shape), epsilon=1.0, bounds=(-10.0, 10.0))
    knowledge = dpaudit.AttackerKnowledge(mech, shadow, reference, n_members=50)
    assert knowledge.clip_values == (-10.0, 10.0)  # the box stated to dpaudit.plugin
    attack = dpaudit.YeomAttack(n_shadow=2).fit(knowledge, rng)
    scores = attack.infer(knowledge.pipeline(seed=1).fit(members), data[200:])
    assert scores.shape == (100,) and np.all(np.isfinite(scores))
