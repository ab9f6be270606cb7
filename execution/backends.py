"""Run many independent, seeded pieces of work in-process, on local processes
(joblib) or on a Dask cluster, with numbers that do not depend on which.

The unit of work is a *chunk*: ``fn(seed) -> result`` for one
:class:`numpy.random.SeedSequence` (or any picklable task holding one).  The
caller decides the chunking from the problem alone (e.g. 16,384 releases per
chunk) and spawns one seed per chunk, so chunk i always receives the same seed
and computes the same numbers whether it runs in this process, in one of J
joblib workers or on a Dask worker; :func:`map_seeds` returns the results in
chunk order.

When a run cannot finish — the Dask scheduler is unreachable or lost, no chunk
finishes for ``stall_timeout`` seconds (a frozen worker), or a chunk raises —
the exception carries ``partial_results``: ``{chunk index: result}`` for every
chunk that did finish, so a caller can keep what was computed.

>>> import numpy as np
>>> from dpaudit.execution.seeds import chunk_seeds
>>> seeds = chunk_seeds(np.random.SeedSequence(1), 3)
>>> [round(float(np.random.default_rng(s).random()), 3) for s in seeds] == \\
...     map_seeds(lambda s: round(float(np.random.default_rng(s).random()), 3), seeds)
True
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from concurrent.futures import CancelledError
from typing import Any, Callable, Iterator, Sequence, TypeVar

from dpaudit.mechanisms.base import InvalidInputError

from .findings import Findings, MechanismBroken

__all__ = ["DASK_CONNECT_TIMEOUT", "DASK_STALL_TIMEOUT", "SchedulerError", "map_seeds", "progress_bar"]

T = TypeVar("T")

DASK_CONNECT_TIMEOUT = "10s"  # how long to wait for a Dask scheduler before a clear error
DASK_STALL_TIMEOUT = 120.0    # seconds with no chunk finishing before the cluster is declared stuck
STALL_FACTOR = 10.0          # ... or this many times the slowest chunk so far, if longer
_INLINE_PAYLOAD = 1 << 20     # bytes: a chunk function up to this size travels inside every task


def progress_bar(total: int, desc: str, enabled: bool | None = None) -> Any:
    """A tqdm bar on stderr; disabled when stderr is not a terminal unless ``enabled``."""
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, disable=not enabled, file=sys.stderr, leave=False,
                unit="chunk", dynamic_ncols=True)


class SchedulerError(InvalidInputError):
    """The Dask cluster cannot run the work (unreachable, lost, stuck): the user's setting, not the audited code.

    ``partial_results`` maps chunk index → result for the chunks that finished.
    """

    def __init__(self, message: str, partial_results: dict[int, Any] | None = None) -> None:
        super().__init__(message)
        self.partial_results = dict(partial_results or {})


def _keep_partial(exc: BaseException, done: dict[int, Any]) -> BaseException:
    """Attach the finished chunks to an exception leaving :func:`map_seeds` (where Python allows it)."""
    holder: Any = exc  # any exception: the attribute is added to it here
    try:
        holder.partial_results = dict(done)
    except AttributeError:  # pragma: no cover - built-in exception types without a __dict__
        pass
    return exc


def _register_plugins_by_value() -> None:
    """Let worker processes unpickle functions from plug-in files.

    Plug-ins loaded from ``path/to/file.py`` live in a module that worker
    processes cannot import; cloudpickle must ship such modules by value.
    """
    modules = [m for name, m in list(sys.modules.items()) if name.startswith("dpaudit_plugin_")]
    if not modules:
        return
    picklers = []
    try:
        import cloudpickle  # used by dask
        picklers.append(cloudpickle)
    except ImportError:  # pragma: no cover - cloudpickle ships with dask
        pass
    try:
        from joblib.externals import cloudpickle as joblib_cloudpickle  # used by loky
        picklers.append(joblib_cloudpickle)
    except ImportError:  # pragma: no cover
        pass
    for pickler in picklers:
        for module in modules:
            try:
                pickler.register_pickle_by_value(module)
            except (ValueError, AttributeError):  # already registered / old cloudpickle
                pass


# --------------------------------------------------------------------------- #
# Dask
# --------------------------------------------------------------------------- #
def _payload(data: bytes) -> bytes:
    """Dask task holding the pickled chunk function (the chunks depend on it)."""
    return data


def _run_pickled(item: Any, payload: bytes) -> tuple[Any, float]:
    """Dask task: unpickle the chunk function (cloudpickle), run it on one item, time it."""
    import cloudpickle

    t0 = time.perf_counter()
    result = cloudpickle.loads(payload)(item)
    return result, time.perf_counter() - t0


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Keep Dask's own tracebacks (reconnect attempts, lost comms) off the user's terminal."""
    loggers = [logging.getLogger("distributed")] + [
        logger for name, logger in logging.root.manager.loggerDict.items()
        if name.startswith("distributed.") and isinstance(logger, logging.Logger) and logger.level]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _dask_client(scheduler: Any) -> tuple[Any, bool]:
    try:
        from dask.distributed import Client
    except ImportError:
        raise InvalidInputError(
            "running on a Dask cluster needs dask.distributed: pip install 'dpaudit[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT), True
    except (OSError, TimeoutError, ValueError, TypeError) as exc:  # ValueError: a malformed address
        raise SchedulerError(f"cannot connect to the Dask scheduler at {scheduler!r} "
                             f"(expected tcp://HOST:PORT): {exc}") from None


def _map_dask(fn: Callable[[Any], T], items: list[Any], scheduler: Any, tick: Callable[[int, Any], Any],
              stall_timeout: float | None) -> list[T]:
    import cloudpickle
    from dask.distributed import KilledWorker, wait

    _register_plugins_by_value()
    done: dict[int, Any] = {}
    with _quiet_dask():
        client, owned = _dask_client(scheduler)
        futures: list[Any] = []
        try:
            # Ship fn with cloudpickle ourselves: Dask tries plain pickle first, which
            # would send plug-in-file functions by reference to a module workers lack.
            # No blocking scatter (it waits for every worker, a frozen one too): a small function travels
            # inside each task; a large one once, as the result of a task the chunks depend on.  Either
            # way a frozen worker can only stall the wait below, which times out.
            pickled = cloudpickle.dumps(fn)
            payload = (pickled if len(pickled) <= _INLINE_PAYLOAD
                       else client.submit(_payload, pickled, pure=False))
            futures = client.map(_run_pickled, items, payload=payload, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            pending = set(futures)
            slowest = 0.0
            while pending:
                limit = stall_timeout if stall_timeout is not None else max(DASK_STALL_TIMEOUT,
                                                                            STALL_FACTOR * slowest)
                try:
                    finished, pending = wait(pending, timeout=limit, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    raise SchedulerError(
                        f"no chunk finished on the Dask cluster for {limit:g} s ({len(done)} of {len(items)} "
                        "done): a worker is frozen or lost, or a chunk is much slower than the others", done) from None
                for fut in sorted(finished, key=lambda f: index[f.key]):
                    if fut.cancelled():
                        raise CancelledError("scheduler-connection-lost")
                    try:
                        result, seconds = fut.result()
                    except KilledWorker as exc:
                        findings = Findings()
                        findings.record("crash", f"a chunk killed its Dask worker repeatedly: {exc}", dropped=1)
                        raise _keep_partial(MechanismBroken("the audited code kills the Dask worker process that "
                                                            "runs it", findings), done) from None
                    done[index[fut.key]] = result
                    slowest = max(slowest, seconds)
                    tick(index[fut.key], result)
        except (CancelledError, OSError) as exc:
            detail = (str(exc).strip().splitlines() or [""])[0]
            raise SchedulerError(f"lost the connection to the Dask scheduler ({len(done)} of {len(items)} chunks "
                                 f"done): {type(exc).__name__}: {detail}", done) from None
        except BaseException as exc:
            if not isinstance(exc, SchedulerError):
                _keep_partial(exc, done)
            raise
        finally:
            if futures:
                with contextlib.suppress(Exception):
                    client.cancel(futures)
            if owned:
                with contextlib.suppress(Exception):
                    client.close(timeout=5)
    return [done[i] for i in range(len(items))]


def _indexed(fn: Callable[[Any], T], i: int, item: Any) -> tuple[int, T]:
    return i, fn(item)


# --------------------------------------------------------------------------- #
# The entry point
# --------------------------------------------------------------------------- #
def map_seeds(fn: Callable[[Any], T], seeds: Sequence[Any], *, n_jobs: int | None = 1, scheduler: Any = None,
              progress: Any = None, stall_timeout: float | None = None,
              on_result: Callable[[int, T], Any] | None = None) -> list[T]:
    """``[fn(s) for s in seeds]``, possibly in parallel; results in seed order.

    Parameters
    ----------
    fn
        A picklable function of one seed (a top-level function or a
        :func:`functools.partial` of one).
    n_jobs
        Local worker processes (joblib/loky); 1 runs in this process, −1 uses
        every core.  Ignored when ``scheduler`` is given.
    scheduler
        A Dask scheduler address (``tcp://host:port``) or a
        ``dask.distributed.Client``; needs the ``dask`` extra.
    progress
        Anything with ``update(n)`` (a tqdm bar), advanced once per chunk.
    on_result
        ``on_result(i, result)`` in this process as soon as chunk i finishes
        (in completion order), e.g. to store it; an exception it raises stops
        the run like a failing chunk.
    stall_timeout
        Dask only: seconds without any chunk finishing before
        :class:`SchedulerError` (default: :data:`DASK_STALL_TIMEOUT`, or ten
        times the slowest chunk so far if that is longer).

    Raises
    ------
    SchedulerError
        The Dask cluster is unreachable, was lost or is stuck (one line, no
        Dask traceback).  Any exception leaving this function carries
        ``partial_results`` (chunk index → result of the chunks that finished).
    """
    items = list(seeds)
    if not items:
        return []

    def tick(i: int, result: Any) -> None:
        if on_result is not None:
            on_result(i, result)
        if progress is not None:
            progress.update(1)

    if scheduler is not None:
        return _map_dask(fn, items, scheduler, tick, stall_timeout)
    done: dict[int, Any] = {}
    try:
        if n_jobs is None or n_jobs == 1 or len(items) == 1:
            for i, item in enumerate(items):
                done[i] = fn(item)
                tick(i, done[i])
        else:
            from joblib import Parallel, delayed

            _register_plugins_by_value()
            # Unordered: a chunk that fails does not hide the ones that finished after an earlier, slower one.
            parallel = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")
            for i, result in parallel(delayed(_indexed)(fn, i, item) for i, item in enumerate(items)):
                done[i] = result
                tick(i, result)
    except BaseException as exc:
        _keep_partial(exc, done)
        raise
    return [done[i] for i in range(len(items))]
