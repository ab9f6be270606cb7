"""Run many independent, seeded pieces of work in-process, on local processes
(joblib) or on a Dask cluster, with numbers that do not depend on which.

The unit of work is a *chunk*: ``fn(seed) -> result`` for one
:class:`numpy.random.SeedSequence`.  The caller decides the chunking from the
problem alone (e.g. 16,384 releases per chunk) and spawns one seed per chunk,
so chunk i always receives the same seed and computes the same numbers
whether it runs in this process, in one of J joblib workers or on a Dask
worker; :func:`map_seeds` returns the results in chunk order.

>>> import numpy as np
>>> seeds = chunk_seeds(np.random.SeedSequence(1), 3)
>>> [round(float(np.random.default_rng(s).random()), 3) for s in seeds] == \\
...     map_seeds(lambda s: round(float(np.random.default_rng(s).random()), 3), seeds)
True
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from mechanisms.base import InvalidInputError

__all__ = ["SchedulerError", "chunk_sizes", "chunk_seeds", "child_seed", "map_seeds", "progress_bar"]

T = TypeVar("T")

DASK_CONNECT_TIMEOUT = "10s"  # how long to wait for a Dask scheduler before a clear error


def child_seed(parent: np.random.SeedSequence, *keys: int) -> np.random.SeedSequence:
    """The child of ``parent`` at spawn path ``keys`` — stateless (unlike ``spawn``)."""
    return np.random.SeedSequence(parent.entropy, spawn_key=tuple(parent.spawn_key) + tuple(int(k) for k in keys),
                                  pool_size=parent.pool_size)


def chunk_seeds(parent: np.random.SeedSequence, n_chunks: int) -> list[np.random.SeedSequence]:
    """One independent seed per chunk, chunk i ↦ ``child_seed(parent, i)``."""
    return [child_seed(parent, i) for i in range(int(n_chunks))]


def chunk_sizes(total: int, chunk_size: int) -> list[int]:
    """Split ``total`` items into chunks of ``chunk_size`` (the last one smaller)."""
    if total <= 0:
        return []
    chunk_size = max(1, int(chunk_size))
    full, rest = divmod(int(total), chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def progress_bar(total: int, desc: str, enabled: bool | None = None) -> Any:
    """A tqdm bar on stderr; disabled when stderr is not a terminal unless ``enabled``."""
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, disable=not enabled, file=sys.stderr, leave=False,
                unit="chunk", dynamic_ncols=True)


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


def _run_pickled(item: Any, payload: bytes) -> Any:
    """Dask task: unpickle the chunk function (cloudpickle) and run it on one item."""
    import cloudpickle

    return cloudpickle.loads(payload)(item)


class SchedulerError(InvalidInputError):
    """The Dask scheduler cannot be reached: the user's setting, not the audited mechanism."""


def _dask_client(scheduler: Any) -> Any:
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


def map_seeds(fn: Callable[[np.random.SeedSequence], T], seeds: Sequence[np.random.SeedSequence], *,
              n_jobs: int = 1, scheduler: Any = None, progress: Any = None) -> list[T]:
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
    """
    seeds = list(seeds)
    if not seeds:
        return []
    tick = progress.update if progress is not None else (lambda n: None)
    if scheduler is not None:
        _register_plugins_by_value()
        client, owned = _dask_client(scheduler)
        try:
            import cloudpickle
            from dask.distributed import as_completed

            # Ship fn with cloudpickle ourselves: Dask tries plain pickle first, which
            # would send plug-in-file functions by reference to a module workers lack.
            payload = client.scatter(cloudpickle.dumps(fn), broadcast=True)
            futures = client.map(_run_pickled, seeds, payload=payload, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            out: list[Any] = [None] * len(seeds)
            for fut in as_completed(futures):
                out[index[fut.key]] = fut.result()
                tick(1)
            return out
        finally:
            if owned:
                client.close()
    if n_jobs is None or n_jobs == 1 or len(seeds) == 1:
        results = []
        for s in seeds:
            results.append(fn(s))
            tick(1)
        return results
    from joblib import Parallel, delayed

    _register_plugins_by_value()
    parallel = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator")
    results = []
    for r in parallel(delayed(fn)(s) for s in seeds):
        results.append(r)
        tick(1)
    return results
