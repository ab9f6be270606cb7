"""Whose code a frame runs: dpaudit's own, the interpreter's, a numerical library's, or the audited code's.

Imported by ``_worker_calls.py`` and ``worker_trace.py`` (in the worker,
possibly another interpreter): standard library only.  The one place that
decides which source files are *the audited code*:

* **dpaudit's own** (:func:`is_dpaudit_file`): a file in one of
  :data:`OWN_FOLDERS` (this package's folder and its siblings ``mechanisms``,
  ``attacks``, ``dpaudit``, or a folder inside them), or a pseudo-file such as ``<frozen …>`` or
  ``<string>``.  An error message never points there unless ``--debug``
  asks (:func:`~dpaudit.execution._worker_calls.describe_exception`).
* **Not audited** (:func:`audited_name` is None): dpaudit's own, the standard
  library (a file under the interpreter's ``stdlib`` folders that is not in a
  ``site-packages`` / ``dist-packages`` folder), and the Python source of
  :data:`LIBRARIES` (numpy, scipy, sympy, mpmath, absl: their lines say how a computation is done or logged,
  not where the audited code branches on the data).
* **Audited**: everything else — the plug-in's own files, and the packages
  it uses (diffprivlib, scikit-learn, …): a leak may sit in a library the
  plug-in calls.

An audited file is *shown* as a maintainer reads it: relative to the longest
folder that holds it among the tracer's roots (the plug-in's folder), the
``site-packages`` folders and the entries of ``sys.path`` —
``diffprivlib/models/k_means.py``, ``their_kmeans.py`` — else by its base name.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from typing import Any, Iterable

__all__ = ["LIBRARIES", "OWN_FOLDERS", "FrameRule", "defining_folders", "is_dpaudit_file"]

# dpaudit's own folders (this package's and its siblings'): a frame there is dpaudit's, not the audited code's.
OWN_FOLDERS = frozenset(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name)
                        for name in ("execution", "mechanisms", "attacks", "dpaudit"))
LIBRARIES = ("numpy", "scipy", "sympy", "mpmath", "absl")  # packages whose own Python frames are never the audited code's
_SITE_WORDS = ("site-packages", "dist-packages")


def is_dpaudit_file(filename: str) -> bool:
    """Whether ``filename`` (a code object's ``co_filename``) is dpaudit's own or the interpreter's pseudo-file."""
    if filename.startswith("<"):
        return True
    path = os.path.abspath(filename)
    return any(_within(path, folder) for folder in OWN_FOLDERS)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _in_site_folder(path: str) -> bool:
    return any(word in path.split(os.sep) for word in _SITE_WORDS)


class FrameRule:
    """Which files are the audited code's, and their names as shown (cached per file name).

    ``roots``: further folders names are shown relative to (the plug-in's own
    folder, for a ``file.py:attr`` spec).  The standard library's and the
    libraries' folders are read when the rule is built (the libraries', from
    the ones already imported then, and again for a file not yet classified).
    """

    def __init__(self, roots: Iterable[str] = ()) -> None:
        paths = sysconfig.get_paths()
        self._stdlib = tuple({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if paths.get(k)})
        folders = [*roots, *_site_folders(), *(p for p in sys.path if p)]
        real = {os.path.realpath(os.path.abspath(f)) for f in folders}
        self._roots = sorted((f for f in real if os.path.isdir(f)), key=len, reverse=True)
        self._names: dict[str, str | None] = {}

    def _library_folders(self) -> list[str]:
        out = []
        for name in LIBRARIES:
            module = sys.modules.get(name)
            file = getattr(module, "__file__", None)
            if file:
                out.append(os.path.dirname(os.path.realpath(file)))
        return out

    def audited_name(self, filename: str) -> str | None:
        """How the audited file ``filename`` is shown; None when it is not the audited code's."""
        try:
            return self._names[filename]
        except KeyError:
            pass
        name = self._classify(filename)
        self._names[filename] = name
        return name

    def _classify(self, filename: str) -> str | None:
        if is_dpaudit_file(filename):
            return None
        path = os.path.realpath(os.path.abspath(filename))
        if is_dpaudit_file(path):  # reached through a symbolic link
            return None
        if not _in_site_folder(path) and any(_within(path, lib) for lib in self._stdlib):
            return None
        if any(_within(path, lib) for lib in self._library_folders()):
            return None
        for root in self._roots:
            if _within(path, root) and path != root:
                return os.path.relpath(path, root).replace(os.sep, "/")
        return os.path.basename(path)


def defining_folders(obj: Any) -> tuple[str, ...]:
    """The folder of the module that defines ``obj``'s class (an in-process mechanism): its files are named from there."""
    module = sys.modules.get(getattr(type(obj), "__module__", ""))
    file = getattr(module, "__file__", None)
    return (os.path.dirname(os.path.abspath(file)),) if file else ()


def _site_folders() -> list[str]:
    """The interpreter's ``site-packages`` folders (the user's too, when it has one)."""
    out: list[str] = []
    try:
        out += site.getsitepackages()
    except AttributeError:  # an old virtualenv's site module
        pass
    user = getattr(site, "getusersitepackages", None)
    if user is not None:
        try:
            out.append(user())
        except (AttributeError, OSError):
            pass
    return out
