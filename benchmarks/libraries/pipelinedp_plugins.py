"""pipeline-dp 0.3.1's local engine as plain plug-ins, the way its documentation runs an aggregation.

Each function runs one ``DPEngine.aggregate`` on the ``LocalBackend`` with a
``NaiveBudgetAccountant(total_epsilon=ε, total_delta=0)``, Laplace noise and one metric
(``COUNT``, ``SUM`` or ``MEAN``), over the records as (privacy id, partition, value) rows: every
record is its own privacy unit (its index), the partition is the sign of the record's second
feature (two *public* partitions, 0 and 1, so no partition selection is involved), the value is
the first feature.  Contribution bounding is the engine's: ``max_partitions_contributed=1``,
``max_contributions_per_partition=1``, and for SUM and MEAN ``min_value=-1``, ``max_value=1`` (the
engine clamps the values).  The release is the metric of both partitions, partition 0 first.

The engine draws its noise through python-dp (Google's secure generator) and takes no seed: the
functions have the shape ``fn(X, epsilon)`` — dpaudit then knows they draw their own randomness.
"""

import numpy as np
import pipeline_dp

PARTITIONS = (0, 1)


def _aggregate(X, epsilon, metric):
    X = np.asarray(X, dtype=float)
    rows = [(i, int(X[i, 1] > 0.0) if X.shape[1] > 1 else 0, float(X[i, 0])) for i in range(len(X))]
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=float(epsilon), total_delta=0.0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=[metric],
                                         max_partitions_contributed=1, max_contributions_per_partition=1,
                                         min_value=-1.0, max_value=1.0)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    result = engine.aggregate(rows, params, extractors, public_partitions=list(PARTITIONS))
    accountant.compute_budgets()
    by_partition = {key: value[0] for key, value in result}
    return np.array([float(by_partition[p]) for p in PARTITIONS])


def count(X, epsilon):
    """``Metrics.COUNT`` per public partition (Laplace, one contribution per privacy unit)."""
    return _aggregate(X, epsilon, pipeline_dp.Metrics.COUNT)


def sum_(X, epsilon):
    """``Metrics.SUM`` of the first feature per public partition, values clamped to [-1, 1]."""
    return _aggregate(X, epsilon, pipeline_dp.Metrics.SUM)


def mean(X, epsilon):
    """``Metrics.MEAN`` of the first feature per public partition, values clamped to [-1, 1]."""
    return _aggregate(X, epsilon, pipeline_dp.Metrics.MEAN)
