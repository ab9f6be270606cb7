"""Loading the object a plug-in spec names — ``package.module:attr`` or ``path/to/file.py:attr`` — the part the
auditor's registry (:func:`dpaudit.mechanisms.registry.load_object`) and a worker in another interpreter
(:mod:`dpaudit.execution._worker_audited`) share.  Standard library only: a worker loads this file by path."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any

__all__ = ["is_file_spec", "load_module_file", "load_spec", "resolve_attribute", "split_spec"]


def split_spec(spec: str) -> tuple[str, str] | None:
    """``(module or file, attribute path)`` of ``spec``; None when it is not of the form ``left:attr``."""
    left, sep, attr = str(spec).rpartition(":")
    return (left, attr) if sep and left and attr else None


def is_file_spec(left: str) -> bool:
    """Whether the left side of a spec names a Python file (``.py``, or any path) rather than a module."""
    return left.endswith(".py") or "/" in left or "\\" in left


def load_module_file(path: str, name: str) -> ModuleType:
    """The module of the Python file ``path``, executed under ``name`` (in ``sys.modules`` while it runs,
    removed again if it raises: the exception goes on)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def resolve_attribute(module: Any, attr: str) -> Any:
    """``module.a.b`` for ``attr`` = ``"a.b"`` (AttributeError names the missing part)."""
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_spec(spec: str, file_module_name: str) -> Any:
    """The object ``spec`` names: a module imported, or a file executed as ``file_module_name``."""
    parts = split_spec(spec)
    if parts is None:
        raise ValueError(f"{spec!r} is not of the form module:attr or file.py:attr")
    left, attr = parts
    module = load_module_file(left, file_module_name) if is_file_spec(left) else importlib.import_module(left)
    return resolve_attribute(module, attr)
