"""Shared fixtures.  Default-suite tests are deterministic: seeded Generators only."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

warnings.filterwarnings("ignore", module=r"art(\..*)?")


def _unbind_absl_from_the_capture() -> None:
    """absl (imported by dp-accounting and riskcal, which the claim notions use) binds its log handler's
    stream to ``sys.stderr`` when first imported — under pytest's capture, the capture file.  A library that
    reconfigures logging later (``logging.config.dictConfig`` closes every handler) while a ``CliRunner`` has
    swapped ``sys.stderr`` makes absl close that file as "not the process's stderr", and pytest fails reading
    its capture ("I/O operation on closed file").  Outside pytest the stream *is* the process's stderr and is
    never closed; here it is pointed at the real one before any test runs."""
    try:
        import absl.logging
    except ImportError:
        return
    absl.logging.get_absl_handler().python_handler.stream = sys.__stderr__


_unbind_absl_from_the_capture()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


@pytest.fixture
def blobs2d() -> np.ndarray:
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(n_samples=200, centers=4, cluster_std=0.6, random_state=0)
    return X
