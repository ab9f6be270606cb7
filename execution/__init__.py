"""The execution layer: every call into audited code, isolated, seeded and accounted for.

The contract
============

**What runs where.**  dpaudit's own built-in mechanisms (trusted code) run in
this process, still through the layer (:func:`draw_releases`: a private copy
of the data per call, opaque generators, faults as findings) but with no
timeout.  Anything else — ``module:attr``, ``file.py:attr``, another
package's entry point, and every mechanism under ``--python`` — runs in
worker processes (:class:`WorkerMechanism`), optionally in another
interpreter, with a per-call timeout; a crash, hang or malformed release is a
finding, never a traceback (:mod:`.findings` says what each kind does to a
verdict).

**Lanes: how state is handled.**  Audited code may keep state between calls
(a counter, a cache, the first input it saw).  Every draw names a *lane*
(``draw_releases(..., lane=key)``, any hashable key; ``None``: the shared
lane), and a worker mechanism keeps one worker process per lane: a lane's
process only ever receives data drawn in that lane.  The ε estimator draws
each side of each candidate pair in a lane of its own (``lane=(pair_id,
side)``, selection and certification alike) and its probe in ``"probe"``, so
**each side of a pair is drawn in workers that have never seen the other
side**: a plug-in that remembers its first input releases D's values for D and
D′'s for D′, as it would in two separate runs, instead of hiding the
difference.  On Linux a new lane is forked from a *template* — a worker that
loaded the code and never called it or received data — in milliseconds;
elsewhere (or for code that starts threads when imported) a lane is a fresh
interpreter.  A lane whose process timed out, crashed, was closed
(:meth:`WorkerMechanism.close_lanes`, :func:`close_lanes`) or evicted (at
most :attr:`WorkerMechanism.MAX_LANES` live, least recently used first) gets a
*new* process when used again — never another lane's.  A pickled worker
mechanism (joblib, Dask chunks) starts its own processes, per lane, where it
is unpickled.  In-process built-ins ignore lanes.  The replay probe
(:class:`ReplayProbe`, :func:`replay_findings`) draws a few releases in its
own lane early and replays them late in a further lane whose process has first
drawn on other data: a different answer for the same (data, seed) is a
``nondeterministic`` finding — state kept between calls, code that remembers
its first input, randomness not drawn from the generator it was given.

**Timeouts: about one per part.**  Callers label the phases of a run through
:attr:`WorkerMechanism.part` (the audit: its smoke test with the probe, ε
estimation, attacks, utility; other commands are one part).  A request that
times out kills its lane's process (a request of several releases is then
redone one release at a time, to find the one responsible).  When a single
release times out and the code has not answered any request in time in the
current part, the code is *broken for the part* at once:
:class:`MechanismBroken` is raised now and on every later draw of that part,
without calling the code again (code that did answer in an earlier part gets
one retry first: it may hang only sometimes; each part starts with
single-release requests, so a first hang costs one timeout).  Code that has answered in this
part keeps the per-release rule: the release is retried once in a fresh
process, then dropped, and :data:`~.isolation.MAX_CONSECUTIVE_DROPS` drops in
a row break it for the part too.  A hang is therefore per mechanism, not per
lane, and code that never answers costs about one timeout per part.  Copies
of a mechanism in one process (joblib or Dask chunks, pickled up front) share
its budget (:class:`~.worker.HangBudget`): each such process may spend one
timeout of its own, in parallel, so the wall time stays about one timeout.

**Batching.**  A plain function is called once per release, many releases
per request (as many as take about a quarter of the timeout, at most
:data:`~.worker_draw.MAX_BATCH`), the next request sent before the last reply
is checked.  In the worker each call gets a new generator
``default_rng(SeedSequence(entropy))`` (built in bulk, the same numbers:
:mod:`.worker_rng`) and the worker's private copy of the data, compared after
the call and replaced when written into (a ``mutates-input`` note; no later
call sees the write).  Same-shape results come back stacked in one array and
are checked and wrapped in one vectorised step
(:func:`~.validate.wrap_rows`); an exception, NaN or wrong shape is the
:class:`~dpaudit.mechanisms.base.Failed` outcome of its own release, wherever it falls
in a batch.  Mechanisms with a vectorised ``release_many`` run in fixed
batches of :attr:`WorkerMechanism.VECTOR_BATCH`.  None of this changes the
numbers: release i of a draw is the same in any batch, lane or process.

Modules
=======

* :mod:`.seeds` — the seed table: every stream of a run named, with its spawn key
  (:class:`Stream`); one ``SeedSequence`` per chunk (:func:`child_seed`,
  :func:`chunk_seeds`, :func:`chunk_sizes`) and the opaque generators handed to
  audited code (:class:`OpaqueSeeds`).
* :mod:`.backends` — :func:`map_seeds`: chunks in this process, on joblib
  processes or on a Dask cluster, same numbers on each; :class:`SchedulerError`.
* :mod:`.isolation` — :func:`draw_releases` / :func:`release_once`: a private
  copy of the data per call, faults turned into :class:`~dpaudit.mechanisms.base.Failed`
  outcomes or dropped releases, lanes passed on, templates warmed; :mod:`.replay` — the same (X, seed)
  replayed late: :func:`replay_findings`; :mod:`.output_form` — a plug-in function's unstated output told by
  its first call (:func:`check_unstated_output`).
* :mod:`.findings` — :class:`Findings` (mergeable counts); :mod:`.verdict` — the verdict vocabulary
  (:class:`Verdict`) and :func:`settle_verdict`, the one rule that turns findings into a verdict.
* :mod:`.engine` — where audited code runs for every command: :class:`MechanismRecipe`
  (built-ins in this process, anything else in a worker, :class:`Isolation` the
  per-call timeout, interpreter and memory limit) and the run-wide replay
  probe (:class:`ReplayProbe`).
* :mod:`.worker` — :class:`WorkerMechanism`: audited code in worker processes
  (optionally another interpreter), one per lane (:mod:`.lanes`), with per-call
  timeouts and the per-part hang budget (:mod:`.process` starts the processes,
  :mod:`.worker_draw` runs a draw through them); its other half,
  ``_worker_main.py`` (protocol, fork server) with ``_worker_calls.py``,
  ``worker_audited.py`` and ``worker_rng.py``, needs only the standard
  library and numpy.
"""

from .backends import DASK_CONNECT_TIMEOUT, SchedulerError, map_seeds, progress_bar
from .engine import (
    DEFAULT_TIMEOUT,
    STATE_HANDLING,
    Isolation,
    MechanismRecipe,
    ReplayProbe,
    close_workers,
    is_builtin,
    parse_memory,
)
from .findings import (
    BLOCKING_KINDS,
    FINDING_KINDS,
    Finding,
    Findings,
    MechanismBroken,
    MechanismFailure,
    NoUsableRelease,
    RunFindings,
)
from .isolation import (
    Draw,
    close_lanes,
    draw_releases,
    quiet,
    recording,
    release_once,
    warm_lanes,
)
from .output_form import check_unstated_output
from .replay import release_digest, replay_findings
from .seeds import OpaqueSeeds, Stream, child_seed, chunk_seeds, chunk_sizes, opaque_generator, seed_from_rng
from .verdict import Verdict, settle_verdict
from .worker import WorkerMechanism

__all__ = [
    "Verdict", "DEFAULT_TIMEOUT", "STATE_HANDLING", "Isolation", "MechanismRecipe", "ReplayProbe", "RunFindings", "close_workers", "is_builtin",
    "parse_memory",
    "BLOCKING_KINDS", "DASK_CONNECT_TIMEOUT", "FINDING_KINDS", "Draw", "Finding", "Findings", "close_lanes", "MechanismBroken", "MechanismFailure", "NoUsableRelease", "OpaqueSeeds",
    "SchedulerError", "Stream", "WorkerMechanism", "check_unstated_output", "child_seed", "chunk_seeds", "chunk_sizes", "draw_releases", "map_seeds",
    "opaque_generator", "progress_bar", "quiet", "recording", "release_digest", "release_once", "replay_findings",
    "seed_from_rng", "settle_verdict", "warm_lanes",
]
