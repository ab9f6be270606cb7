"""A verdict is compared as a :class:`~dpaudit.execution.verdict.Verdict` member, never as bare text.

Read from the source with ``ast`` (nothing is imported): in the package's four layers (``mechanisms/``,
``execution/``, ``attacks/``, ``dpaudit/``) no comparison (``==``, ``!=``, ``in``, ``not in``, ``is``) and no
``match`` case has as an operand a string literal — alone or inside a tuple, list or set literal — that is a
verdict's value (``"violation"``, ``"no violation found"``, …) or its word (``"VIOLATION"``, ``"Consistent"``,
…).  The vocabulary is one enum, so a new verdict or a changed word is one edit there; a comparison with
the text would silently stop matching.  The checker is itself tested on small sources.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpaudit.execution.verdict import Verdict

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("mechanisms", "execution", "attacks", "dpaudit")
VERDICT_TEXTS = frozenset({v.value for v in Verdict} | {v.word for v in Verdict})


def _literals(node: ast.AST) -> list[str]:
    """The string literals an operand holds: itself, or the elements of a tuple, list or set literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def bare_verdict_comparisons(source: str, where: str = "<source>") -> list[str]:
    """``where:line: text`` for each comparison or ``match`` case against a verdict's bare text."""
    found = []
    for node in ast.walk(ast.parse(source, filename=where)):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        for text in (t for operand in operands for t in _literals(operand)):
            if text in VERDICT_TEXTS:
                found.append(f"{where}:{node.lineno}: {text!r}")
    return found


def test_no_verdict_is_compared_as_bare_text() -> None:
    found = [hit for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))
             for hit in bare_verdict_comparisons(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not found, ("verdicts compared as bare text (compare with dpaudit.execution.verdict.Verdict members):\n"
                       + "\n".join(found))


@pytest.mark.parametrize("source, hits", [
    ('if v == "violation":\n    pass\n', 1),
    ('ok = "no violation found" != r.get("verdict")\n', 1),
    ('ok = word in ("VIOLATION", "Consistent")\n', 2),
    ('ok = v not in {"inconclusive"}\n', 1),
    ('match v:\n    case "not tested":\n        pass\n', 1),
    ('if v == Verdict.VIOLATION:\n    pass\n', 0),
    ('text = "VIOLATION: the claim"\nif kind == "violations":\n    pass\n', 0),  # a sentence, another word
])
def test_the_checker_finds_what_it_should(source: str, hits: int) -> None:
    assert len(bare_verdict_comparisons(source)) == hits
