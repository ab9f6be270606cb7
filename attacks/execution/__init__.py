"""The execution layer: every call into audited code, isolated, seeded and accounted for.

* :mod:`.seeds` — one ``SeedSequence`` per chunk (:func:`child_seed`,
  :func:`chunk_seeds`, :func:`chunk_sizes`) and the opaque generators handed to
  audited code (:class:`OpaqueSeeds`).
* :mod:`.backends` — :func:`map_seeds`: chunks in this process, on joblib
  processes or on a Dask cluster, same numbers on each; :class:`SchedulerError`.
* :mod:`.isolation` — :func:`draw_releases` / :func:`release_once`: a private
  copy of the data per call, faults turned into :class:`~mechanisms.base.Failed`
  outcomes or dropped releases, and the replay probe.
* :mod:`.findings` — :class:`Findings` (mergeable counts) and
  :func:`settle_verdict`, the one rule that turns findings into a verdict.
* :mod:`.engine` — where audited code runs for every command: :class:`MechanismRecipe`
  (built-ins in this process, anything else in a worker, :class:`Isolation` the
  per-call timeout, interpreter and memory limit) and the run-wide replay
  probe (:class:`ReplayProbe`).
* :mod:`.worker` — :class:`WorkerMechanism`: audited code in a worker process
  (optionally another interpreter) with per-call timeouts (:mod:`.process` starts
  the process, :mod:`.worker_draw` runs a draw through it); its other half,
  ``_worker_main.py``, needs only the standard library and numpy.
"""

from .engine import DEFAULT_TIMEOUT, Isolation, MechanismRecipe, ReplayProbe, close_workers, is_builtin, parse_memory
from .backends import DASK_CONNECT_TIMEOUT, SchedulerError, map_seeds, progress_bar
from .findings import (
    BLOCKING_KINDS,
    FINDING_KINDS,
    INCONCLUSIVE,
    NO_VIOLATION,
    VIOLATION,
    Finding,
    Findings,
    MechanismBroken,
    MechanismFailure,
    NoUsableRelease,
    RunFindings,
    settle_verdict,
)
from .isolation import (
    Draw,
    close_lanes,
    draw_releases,
    recording,
    release_digest,
    release_once,
    replay_findings,
)
from .seeds import OpaqueSeeds, child_seed, chunk_seeds, chunk_sizes, opaque_generator, seed_from_rng
from .worker import WorkerMechanism

__all__ = [
    "DEFAULT_TIMEOUT", "Isolation", "MechanismRecipe", "ReplayProbe", "RunFindings", "close_workers", "is_builtin",
    "parse_memory",
    "BLOCKING_KINDS", "DASK_CONNECT_TIMEOUT", "FINDING_KINDS", "INCONCLUSIVE", "NO_VIOLATION", "VIOLATION",
    "Draw", "Finding", "Findings", "close_lanes", "MechanismBroken", "MechanismFailure", "NoUsableRelease", "OpaqueSeeds",
    "SchedulerError", "WorkerMechanism", "child_seed", "chunk_seeds", "chunk_sizes", "draw_releases", "map_seeds",
    "opaque_generator", "progress_bar", "recording", "release_digest", "release_once", "replay_findings",
    "seed_from_rng", "settle_verdict",
]
