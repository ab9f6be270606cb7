"""Provenance of a run: what produced a report, on what, how long it took.

Every report carries this block: dpaudit version, the command
line, the seed, the parameters, the versions of the libraries the numbers
depend on, the machine, and the time each part took.  Privacy-leak warnings
raised while the run was going are captured here too, so a report shows when
a parameter was derived from the private data.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import shlex
import sys
import time
import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Iterator

from dpaudit.result_shapes import ProvenanceRecord, WarningRecord

__all__ = ["PACKAGES", "Timer", "capture_warnings", "command_line", "package_versions", "provenance",
           "stamp_finished"]

# The libraries whose versions can change a number in a report.
PACKAGES: tuple[str, ...] = ("numpy", "scipy", "scikit-learn", "pandas", "matplotlib",
                             "adversarial-robustness-toolbox", "joblib", "jinja2")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each package (``None`` when it is not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def command_line(argv: list[str] | None = None) -> str:
    """The command as typed, shell-quoted (``dpaudit sweep ...``)."""
    argv = list(sys.argv if argv is None else argv)
    if argv:
        argv[0] = "dpaudit" if argv[0].endswith(("dpaudit", "__main__.py", "-c")) else os.path.basename(argv[0])
    return shlex.join(argv)


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def provenance(*, seed: int | None, parameters: dict[str, Any] | None = None,
               durations: dict[str, float] | None = None, argv: list[str] | None = None,
               started: str | None = None) -> ProvenanceRecord:
    """The provenance block of ``results.json`` (plain JSON-able data)."""
    from dpaudit import __version__
    return {
        "dpaudit_version": __version__,
        "command": command_line(argv),
        "seed": seed,
        "parameters": dict(parameters or {}),
        "packages": {"python": platform.python_version(), **package_versions()},
        "machine": {"platform": platform.platform(), "processor": platform.machine(),
                    "cores": os.cpu_count()},
        "started": started or _utc_now(),
        "finished": _utc_now(),
        "durations_seconds": {k: round(float(v), 3) for k, v in (durations or {}).items()},
    }


def stamp_finished(prov: ProvenanceRecord | None) -> None:
    """Set ``finished`` to now: call it when the run (or the part whose results are being saved)
    ends — not when the provenance block is created, which is when the run starts."""
    if prov is not None:
        prov["finished"] = _utc_now()


class Timer:
    """Wall-clock durations of the named parts of a run.

    >>> t = Timer()
    >>> with t("sweep"):
    ...     pass
    >>> "sweep" in t.durations
    True
    """

    def __init__(self) -> None:
        self.durations: dict[str, float] = {}
        self.started = _utc_now()
        self._t0 = time.perf_counter()

    @contextlib.contextmanager
    def __call__(self, part: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.durations[part] = self.durations.get(part, 0.0) + time.perf_counter() - t0

    def total(self) -> float:
        return time.perf_counter() - self._t0


@contextlib.contextmanager
def capture_warnings(into: list[WarningRecord]) -> Iterator[list[WarningRecord]]:
    """Record the :class:`PrivacyLeakWarning` s raised inside the block.

    Each distinct message is appended once to ``into`` as
    ``{"category": "PrivacyLeakWarning", "message": ...}`` so the report can
    show it; other warnings are left to the normal filters.
    """
    from dpaudit.mechanisms.base import PrivacyLeakWarning

    seen = {(w["category"], w["message"]) for w in into}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        try:
            yield into
        finally:
            for w in caught:
                if not issubclass(w.category, PrivacyLeakWarning):
                    continue
                key = (w.category.__name__, str(w.message))
                if key not in seen:
                    seen.add(key)
                    into.append({"category": key[0], "message": key[1]})
