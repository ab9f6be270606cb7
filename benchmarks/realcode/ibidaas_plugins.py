"""ibidaas/knowledge_repository's DP k-means for the COMPSs platform (``dpkmeans.py``) as a plain plug-in.

The code is written for PyCOMPSs (its ``@task`` decorators, ``compss_wait_on``, ``INOUT``) and dislib's
``Dataset`` (an iterable of subsets with ``samples`` and ``set_label``, and ``n_features``/``sparse``).  A user
without a COMPSs cluster runs it locally with the platform shimmed: ``@task`` returns the function unchanged,
``compss_wait_on`` returns its argument — PyCOMPSs' own sequential semantics — and the records are one subset.
Its randomness is numpy's global state, which the code seeds itself from ``random_state`` (drawn here from
dpaudit's generator).  Records are clipped to the public box [-1, 1]².
"""

import sys
import types

import numpy as np

K = 2
BOX = (-1.0, 1.0)


def shim_pycompss():
    """Stand-ins for the three PyCOMPSs names dpkmeans.py imports (sequential execution)."""
    if "pycompss.api.task" in sys.modules:
        return
    names = ("pycompss", "pycompss.api", "pycompss.api.api", "pycompss.api.parameter", "pycompss.api.task")
    modules = {name: types.ModuleType(name) for name in names}
    modules["pycompss.api.api"].compss_wait_on = lambda obj, *args, **kwargs: obj
    modules["pycompss.api.parameter"].INOUT = "INOUT"
    modules["pycompss.api.task"].task = lambda *args, **kwargs: (lambda function: function)
    sys.modules.update(modules)


class Subset:
    """dislib's ``Subset``: the records and their labels."""

    def __init__(self, samples):
        self.samples = samples
        self.labels = np.full(len(samples), -1)

    def set_label(self, index, label):
        self.labels[index] = label


class Dataset(list):
    """dislib's ``Dataset``: a list of subsets that knows its number of features."""

    def __init__(self, X):
        super().__init__([Subset(X)])
        self.n_features = X.shape[1]
        self.sparse = False


def dp_kmeans(X, epsilon, rng):
    """``DPKMeans(n_clusters=2, epsilon=epsilon, random_state=…).fit(dataset)``: ``centers``."""
    shim_pycompss()
    from dpkmeans import DPKMeans

    X = np.clip(np.asarray(X, dtype=float), *BOX)
    model = DPKMeans(n_clusters=K, epsilon=epsilon, random_state=int(rng.integers(2**31 - 1)))
    model.fit(Dataset(X))
    return np.asarray(model.centers, dtype=float)
