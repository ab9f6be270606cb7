"""Loading the object a plug-in spec names — ``package.module:attr`` or ``path/to/file.py:attr`` — the part the
auditor's registry (:func:`dpaudit.mechanisms.registry.load_object`) and a worker in another interpreter
(:mod:`dpaudit.execution.worker_audited`) share.  Standard library only: a worker loads this file by path."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

__all__ = ["SpecError", "load_module_file", "load_spec", "resolve_attribute"]


def load_module_file(path: str, name: str) -> ModuleType:
    """The module of the Python file ``path``, executed under ``name`` (in ``sys.modules`` while it runs,
    removed again if it raises: the exception goes on)."""
    if not os.path.isfile(path):
        raise SpecError(f"plug-in file not found: {path}" if not os.path.isdir(path)
                        else f"{path} is a directory; name a Python file: path/to/file.py:attr")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"cannot load {path} as a Python module (name a .py file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise SpecError(f"{path} has a syntax error at line {exc.lineno}: {exc.msg}") from None
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


class SpecError(LookupError):
    """A spec that names nothing loadable (no such file, a syntax error, no such attribute): a user mistake.
    ``plain``: its message is the whole line (no exception type, no source location)."""

    plain = True


def resolve_attribute(module: Any, attr: str, where: str | None = None) -> Any:
    """``module.a.b`` for ``attr`` = ``"a.b"``; a missing part raises :class:`SpecError` naming it, what
    ``where`` (the module or file as the user wrote it) defines, and the closest names ("did you mean")."""
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SpecError(_forms().missing_attribute(obj, part, where or str(getattr(module, "__name__", "?"))
                                                       if obj is module else f"{where}:{part}")) from None
    return obj


def _forms() -> Any:
    """:mod:`dpaudit.mechanisms.plugin_forms` — imported as a sibling, or loaded by path beside this file (a worker)."""
    try:
        from . import plugin_forms
        return plugin_forms
    except ImportError:
        key = "_audit_worker_plugin_forms"
        if key not in sys.modules:
            load_module_file(os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin_forms.py"), key)
        return sys.modules[key]


def load_spec(spec: str, file_module_name: str) -> Any:
    """The object ``spec`` names: a module imported, or a file executed as ``file_module_name``
    (:data:`~dpaudit.mechanisms.plugin_forms.SPEC_FORMS` tells which)."""
    forms = _forms()
    parts = forms.split_spec(spec)
    if parts is None:
        raise ValueError(f"{spec!r} is not of the form module:attr or file.py:attr")
    left, attr = parts
    module = load_module_file(left, file_module_name) if forms.is_file_spec(left) else importlib.import_module(left)
    return resolve_attribute(module, attr, left)
