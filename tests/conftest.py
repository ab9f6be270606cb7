"""Shared fixtures.  Default-suite tests are deterministic: seeded Generators only."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

warnings.filterwarnings("ignore", module=r"art(\..*)?")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


@pytest.fixture
def blobs2d() -> np.ndarray:
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=200, centers=4, cluster_std=0.6, random_state=0)
    return X
