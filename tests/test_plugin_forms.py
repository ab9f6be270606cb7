"""The plug-in forms registry (:mod:`dpaudit.mechanisms.plugin_forms`): one table of what a ``--mechanism`` spec
names and what the loaded object is, read by this process (:mod:`dpaudit.mechanisms.registry`) and by the worker
(:mod:`dpaudit.execution.worker_audited`) — each adapts exactly the forms of the table, and a form is told apart
from every other without calling the code."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dpaudit.execution import worker_audited
from dpaudit.mechanisms import plugin_forms, registry
from dpaudit.mechanisms.base import InvalidInputError, Points, PrivacyClaim
from dpaudit.mechanisms.plugin_forms import (
    ACCEPTED,
    FORMS,
    OWN_PACKAGES,
    PLUGIN_ROOT,
    SPEC_FORMS,
    PluginFormError,
    form_of,
    recognised_form,
    spec_form,
)


def noisy(X, epsilon, rng):
    return X + rng.laplace(scale=1 / epsilon, size=X.shape)


class Mech:
    claim = PrivacyClaim(1.0)

    def release(self, X, rng):
        return Points(X + rng.laplace(size=X.shape))


class CallableMech(Mech):
    def __call__(self, X):
        return X


class Estimator:
    def __init__(self, epsilon, random_state=None):
        self.epsilon = epsilon

    def fit(self, X):
        self.cluster_centers_ = X[:2]
        return self


class FitWithoutEpsilon:
    def fit(self, X):
        return self


class Nothing:
    pass


@pytest.mark.parametrize("obj, expected", [
    (noisy, "function"), (lambda X, epsilon: X, "function"), (Mech, "mechanism class"),
    (Mech(), "mechanism object"), (CallableMech(), "mechanism object"), (Estimator, "estimator class"),
    (FitWithoutEpsilon, None), (Nothing, None), (3, None), ("ndlaplace", None),
])
def test_every_object_has_at_most_one_form(obj, expected) -> None:
    matching = [form.name for form in FORMS if form.recognises(obj)]
    assert matching == ([] if expected is None else [expected])
    assert getattr(recognised_form(obj), "name", None) == expected


def test_an_object_of_no_form_is_told_the_accepted_forms() -> None:
    with pytest.raises(PluginFormError, match="neither release"):
        form_of(Nothing, "plug.py:Nothing")
    with pytest.raises(PluginFormError, match="is a int, not a plug-in; accepted: a function fn"):
        form_of(3, "plug.py:K")
    assert all(form.told in ACCEPTED for form in FORMS)


def test_both_sides_adapt_exactly_the_forms_of_the_table() -> None:
    names = {form.name for form in FORMS}
    assert set(registry.ADAPTERS) == names == set(worker_audited.Audited.ADOPT)
    assert {form.kind for form in FORMS} <= {"function", "mechanism", "estimator", "executable"}  # how replies are read
    loaded = {form.name for form in SPEC_FORMS} - {"registered"}  # registered names: the registry builds them
    assert set(registry.SPEC_LOADERS) == loaded == set(worker_audited.SPEC_LOADERS)


@pytest.mark.parametrize("spec, expected, needs", [
    ("ndlaplace", "registered", (OWN_PACKAGES,)), ("examples/their_code.py:their_kmeans", "file", ()),
    ("plug.py:K", "file", ()), (r"dir\plug:K", "file", ()), ("pkg.mod:Class.attr", "module", (PLUGIN_ROOT,)),
    ("mod:", None, ()), (":attr", None, ()), ("cmd:Rscript their_kmeans.R", "command", ()), ("cmd:./dp_mean", "command", ()),
])
def test_a_spec_has_one_form(spec, expected, needs) -> None:
    assert [form.name for form in SPEC_FORMS if form.recognises(spec)] == ([] if expected is None else [expected])
    form = spec_form(spec)  # the first that recognises it (these three forms exclude one another)
    assert getattr(form, "name", None) == expected and getattr(form, "needs", ()) == needs


def test_the_worker_reads_the_same_table() -> None:
    """The worker loads this file by path, under its own name: the same entries, in the same order."""
    theirs = sys.modules["_audit_worker_plugin_forms"]  # as worker_audited loaded it
    assert theirs is not plugin_forms and theirs.__file__ == plugin_forms.__file__
    assert [f.name for f in theirs.FORMS] == [f.name for f in FORMS] and theirs.ACCEPTED == ACCEPTED


@pytest.mark.parametrize("obj, params, kind", [
    (noisy, {"epsilon": 1.0}, "function"), (Mech, {}, None), (Mech(), {}, None),
    (Estimator, {"epsilon": 1.0, "output": "centroids"}, "estimator"),
])
def test_each_form_is_adapted_in_this_process(obj, params, kind) -> None:
    mech = registry.plugin(obj, **params)
    assert getattr(mech, "plugin_kind", None) == kind
    assert mech.release(np.zeros((4, 2)), np.random.default_rng(0)).kind in ("points", "centroids")


@pytest.mark.parametrize("obj", [noisy, Estimator])
def test_a_form_that_needs_epsilon_says_so(obj) -> None:
    with pytest.raises(InvalidInputError, match="give the epsilon it should honour"):
        registry.plugin(obj)
