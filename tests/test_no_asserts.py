"""No ``assert`` statement guards a production path.

``python -O`` strips asserts, so a check written as one is no check at all there, and an ``AssertionError``
says nothing of whose mistake it was.  In the package's four layers (``mechanisms/``, ``execution/``,
``attacks/``, ``dpaudit/``) a user's mistake raises :class:`~dpaudit.mechanisms.base.InvalidInputError`,
a broken invariant of dpaudit's own raises ``RuntimeError`` (which :func:`dpaudit.attack.internal.classify`
reports as an internal error), and a type that only needs narrowing is narrowed by an ``if``.  Read from the
source with ``ast``; the checker is itself tested on small sources.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("mechanisms", "execution", "attacks", "dpaudit")


def assert_statements(source: str, where: str = "<source>") -> list[str]:
    """``where:line: assert …`` for each assert statement in ``source``."""
    return [f"{where}:{node.lineno}: {ast.unparse(node)[:100]}" for node in ast.walk(ast.parse(source, filename=where))
            if isinstance(node, ast.Assert)]


def test_no_assert_in_production_code() -> None:
    found = [hit for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))
             for hit in assert_statements(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not found, ("assert statements in production code (raise InvalidInputError for a user's mistake, "
                       "RuntimeError for a broken invariant, or narrow with an if):\n" + "\n".join(found))


@pytest.mark.parametrize("source, hits", [
    ("assert x is not None\n", 1),
    ("def f(x):\n    if x:\n        assert x > 0, 'positive'\n", 1),
    ("if x is None:\n    raise RuntimeError('x')\n", 0),
    ("text = 'assert x'\n", 0),
])
def test_the_checker_finds_what_it_should(source: str, hits: int) -> None:
    assert len(assert_statements(source)) == hits
