"""``benchmarks/bench_house.py``: the house's numbers, read from the source — on this tree (structural facts
only, not counts that the refactor is meant to change) and on small trees whose counts are known."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchmarks import bench_house

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def modules() -> dict[str, tuple[Path, str, list[ast.AST]]]:
    return bench_house.sources(ROOT)


def test_the_layout_has_every_layer_and_its_subfolders_add_up(modules) -> None:
    rows = {folder: (count, lines) for folder, count, lines, _ in bench_house.layout(ROOT, modules)}
    assert [f for f in rows if f.count("/") == 1] == ["mechanisms/", "execution/", "attacks/", "dpaudit/"]
    assert sum(count for f, (count, _) in rows.items() if f.count("/") == 1) == len(modules)
    for folder, (count, lines) in rows.items():
        inner = [r for f, r in rows.items() if f.startswith(folder) and f.count("/") == folder.count("/") + 1]
        assert sum(c for c, _ in inner) <= count and sum(n for _, n in inner) <= lines, folder


def test_the_import_graph_is_the_layer_tests(modules) -> None:
    """The same graph tests/test_layers.py checks: no upward import, no cycle."""
    edges = bench_house.import_edges(modules)
    assert len(edges) > len(modules)
    assert not bench_house.cycles(edges)
    rank = list(bench_house.LAYERS.values()).index
    assert not [e for e in edges if rank(bench_house.layer(e[1])) > rank(bench_house.layer(e[0]))]
    assert ("dpaudit.commands.attack", "dpaudit.attack.run") in edges


def test_the_page_names_the_four_workflow_configs(tmp_path: Path) -> None:
    out = tmp_path / "house.md"
    bench_house.main(["--out", str(out)])
    text = out.read_text(encoding="utf-8")
    for section in ("## Layout", "## Weak types and guards", "## Seed streams named by numbers", "## Configs",
                    "## Import graph"):
        assert section in text
    for config in bench_house.WORKFLOW_CONFIGS:
        assert f"| `{config}` |" in text
    assert "in all four (" in text and "0 upward; 0 cycle(s)" in text
    with pytest.raises(SystemExit):  # a page that exists is replaced only with --force (checked before measuring)
        bench_house.main(["--out", str(out)])


SMALL_TREE = {
    "mechanisms/__init__.py": "",
    "mechanisms/base.py": ("from typing import Any\n"
                           "def f(x: dict[str, Any], y: 'dict[str, Any]') -> list[dict[str, Any]]:\n"
                           "    assert x\n    return [{'a': Any}]\n"
                           "def g():\n    from dpaudit.attacks import run\n"),
    "execution/__init__.py": "",
    "attacks/__init__.py": "",
    "attacks/run.py": ("import numpy as np\nfrom dpaudit.execution.seeds import child_seed\nPROBE = 2**31 - 2\n"
                       "def h(seed, parent):\n"
                       "    a = np.random.SeedSequence(seed, spawn_key=(3, seed))\n"
                       "    b = np.random.SeedSequence(seed, spawn_key=(PROBE,))\n"
                       "    c, d = parent.spawn(2)\n    return child_seed(parent, 7), child_seed(parent, seed)\n"),
    "execution/seeds.py": "from dpaudit.attacks import run\ndef child_seed(parent, *keys):\n    return parent\n",
    "dpaudit/__init__.py": "",
    "dpaudit/attack/__init__.py": "",
    "dpaudit/attack/config.py": ("from dataclasses import dataclass\nfrom typing import ClassVar\n"
                                 "from dpaudit.mechanisms.base import InvalidInputError\n"
                                 "@dataclass(frozen=True)\nclass AttackConfig:\n    seed: int = 0\n"
                                 "    samples: int | None = None\n    KIND: ClassVar[str] = 'attack'\n"
                                 "    def __post_init__(self):\n"
                                 "        raise InvalidInputError(f'--samples must be ≥ 100, got {self.samples}')\n"),
}


def test_the_counts_on_a_small_tree(tmp_path: Path) -> None:
    for name, text in SMALL_TREE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    mods = bench_house.sources(tmp_path)
    _, text, nodes = mods["dpaudit.mechanisms.base"]
    in_annotations = sum(bench_house.is_dict_str_any(n) for a in bench_house.annotation_exprs(nodes)
                         for n in ast.walk(a))
    # Any as a code token: the import, two annotations and a value (the quoted annotation is a string token)
    assert in_annotations == 3 and bench_house.any_tokens(text) == 4
    keys = bench_house.seed_keys(tmp_path, mods)
    assert keys["spawn_key= with an integer"] == ["attacks/run.py:5"]
    assert keys["child_seed/cell_seed with an integer key"] == ["attacks/run.py:8"]
    assert keys["constants passed as keys"] == ["attacks/run.py:3 PROBE"]
    assert keys[".spawn(n) (streams by position)"] == ["attacks/run.py:7"]
    assert keys["2**31 expressions"] == ["attacks/run.py:3"]
    _, _, config = mods["dpaudit.attack.config"]
    assert bench_house.config_fields(config) == {"AttackConfig": ["seed", "samples"]}
    assert bench_house.raises_invalid_input(config, naming_a_flag=True) == 1
    edges = bench_house.import_edges(mods)
    assert ("dpaudit.mechanisms.base", "dpaudit.attacks.run") in edges  # upward, inside a function
    assert bench_house.cycles(edges) == [["dpaudit.attacks.run", "dpaudit.execution.seeds"]]
