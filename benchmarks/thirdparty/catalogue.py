"""The audited functions (what is wrong with each, its true ε) and one audit run's record.

Harness-side: ``functions.py`` beside this file is the third party's code and imports nothing of
this; ``benchmarks/bench_thirdparty.py`` runs it and ``page.py`` writes what the runs said.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FUNCTIONS_FILE = "benchmarks/thirdparty/functions.py"  # relative to the repository: commands stay portable
GAUSSIAN_FILE = "benchmarks/thirdparty/gaussian_functions.py"  # the (ε, δ) k-means with dp_accounting
CLAIM = 1.0


@dataclass(frozen=True)
class Function:
    """One audited function: whether it is correct, its true ε and what is wrong (or why it is right)."""

    name: str
    correct: bool
    true_eps: str
    what: str
    min_records: int = 0  # it raises on fewer records (a refusal of the input, not its privacy bug)
    delta: float = 0.0  # the claim's δ (passed as --delta when positive)
    bounds: str | None = None  # the public box the code clips to, passed as --bounds (None: dpaudit's default)
    file: str = FUNCTIONS_FILE  # the file that defines it


FUNCTIONS: tuple[Function, ...] = (
    Function("their_kmeans_honest", True, "≤ 1",
             "copy of examples/their_code.py: public box [-15, 15]^d, uniform start, 3 iterations of noisy "
             "sums and counts at ε/3 with L1 sensitivity 15d + 1"),
    Function("dplloyd_correct", True, "≤ 1",
             "DPLloyd, K = 2, T = 5, box [-1, 1]^d (clipped), fixed start; every cluster's sum and count noised "
             "in every iteration, Lap((d + 1)T/ε)"),
    Function("diffprivlib_kmeans_bounded", False, "∞",
             "diffprivlib 0.6.6 KMeans(n_clusters=2, bounds=(-1, 1)): an empty cluster is skipped (no noise, "
             "keeps its start centre, which lies inside the box)", min_records=2),
    Function("diffprivlib_kmeans_unbounded", False, "∞",
             "the same without bounds: diffprivlib takes them from the data (min/max, PrivacyLeakWarning); "
             "every centre lies within the data's range", min_records=2),
    Function("their_kmeans", False, "∞",
             "copy of examples/their_code.py: start centres are records, Lloyd steps un-noised, Lap(1/ε) on "
             "the result, data not clipped", min_records=4),
    Function("dplloyd_empty_skip", False, "∞",
             "DPLloyd that skips empty clusters: a centre that never owned a record is released exactly at "
             "its start point"),
    Function("dplloyd_unclipped", False, "∞",
             "DPLloyd with noise for [-1, 1]^d but neither records nor means clipped: a far record moves "
             "its centre without bound"),
    Function("kmeans_noisy_centres_over_n", False, "≥ n·ε/4 (unbounded)",
             "Lloyd, then Laplace on the centres for a 'sensitivity of a mean' of 2d/n: a lone record is a "
             "whole cluster"),
    Function("dplloyd_correct_raises_empty", True, "≤ 1",
             "dplloyd_correct that raises ValueError on an empty dataset (its domain is n ≥ 1)", min_records=1),
    Function("gaussian_kmeans_accounted", True, "≤ 1 (δ = 10⁻⁶)",
             "k = 2, 3 iterations, records clipped to the L2 ball of radius 1, fixed start; Gaussian noisy sums and "
             "counts for every cluster, a noisy record count that may release one centre only; σ calibrated with "
             "dp_accounting (PLD) for the whole composition at (ε, 10⁻⁶)", min_records=1, delta=1e-6,
             bounds="-1,1", file=GAUSSIAN_FILE),
    Function("gaussian_kmeans_accounted_10x", False, "≈ 10 (δ = 10⁻⁶)",
             "the same code calibrated at 10·ε while claiming ε (the budget of ten releases spent on one)",
             min_records=1, delta=1e-6, bounds="-1,1", file=GAUSSIAN_FILE),
)

GRID_KS = (2, 3, 4)
GRID_DIMS = (1, 2, 3)
GRID_RECORDS = 30  # records of the grid's blobs datasets
GRID_BOUNDS = "-1,1"
_GRID_BASES: tuple[tuple[str, bool, str, str], ...] = (
    ("diffprivlib_kmeans_bounded", False, "∞",
     "diffprivlib 0.6.6 KMeans(n_clusters=k, bounds=(-1, 1)): empty clusters skipped, keep their start centre"),
    ("dplloyd_correct", True, "≤ 1", "DPLloyd, every cluster noised in every iteration, box [-1, 1]^d"),
    ("dplloyd_empty_skip", False, "∞", "DPLloyd that skips empty clusters"),
    ("dplloyd_unclipped", False, "∞", "DPLloyd that clips neither records nor means"),
)
GRID_FUNCTIONS: tuple[Function, ...] = tuple(
    Function(f"{base}_k{k}", correct, true_eps, f"{what}; k = {k}",
             min_records=k if base.startswith("diffprivlib") else 0, bounds=GRID_BOUNDS)
    for base, correct, true_eps, what in _GRID_BASES for k in GRID_KS)
GOAL_FRACTION = 0.8  # a buggy function's ε_lb must reach this share of the known-pair witness's bound
GOAL_SEEDS = 3  # a buggy function of the main table must be VIOLATION on seeds 0 … GOAL_SEEDS − 1


@dataclass
class Run:
    """One ``dpaudit`` run of one function at one seed, and what it said."""

    function: str
    correct: bool
    command_name: str  # estimate-eps or audit
    seed: int
    command: str  # as typed from the repository's root (the scratch path shown as $SCRATCH)
    exit_code: int
    wall_seconds: float
    verdict: str | None = None
    epsilon_lower_bound: float | None = None
    ceiling: float | None = None
    samples: int | None = None
    selection_releases: int | None = None
    dpaudit_seconds: float | None = None
    pair: dict[str, Any] | None = None
    event: str | None = None
    counts: dict[str, Any] | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    leak_warnings: list[str] = field(default_factory=list)
    status: str | None = None
    error: str | None = None  # stderr's tail when the run failed or timed out
    parts: list[dict[str, Any]] = field(default_factory=list)  # audit: each part's value and verdict
    time_budget: float | None = None  # --time-budget given to estimate-eps (None: its default)
    d: int | None = None  # grid runs: the dimension of the --data CSV (None: the main table's default data)

    @property
    def is_violation(self) -> bool:
        return (self.verdict or "").lower() == "violation"


def refused_side(run: Run, fn: Function) -> bool:
    """Whether the deciding pair holds a dataset smaller than the function accepts: a violation
    certified there may show the refusal (raise on few records), not the function's privacy bug."""
    p = run.pair or {}
    sizes = [v for v in (p.get("records_D"), p.get("records_D_prime")) if isinstance(v, int)]
    return bool(sizes) and min(sizes) < fn.min_records
