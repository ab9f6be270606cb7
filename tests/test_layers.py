"""The layer rule ``dpaudit -> dpaudit.attacks -> dpaudit.execution -> dpaudit.mechanisms``, read from the
source with ``ast`` (nothing is imported).  The repository keeps the lower layers as top-level folders
(``mechanisms/``, ``execution/``, ``attacks/``) that install as ``dpaudit.mechanisms`` and so on
(``pyproject.toml``, ``package-dir``): module names here are the installed ones.

* ``dpaudit.mechanisms`` imports none of the others; ``dpaudit.execution`` imports neither the attacks nor
  the application (the rest of ``dpaudit``); ``dpaudit.attacks`` does not import the application;
* no import cycle among the modules of any package (strongly connected components of the module graph),
  and none among the attack families (``dpaudit.attacks.membership``, ``dpaudit.attacks.reconstruction``,
  ``dpaudit.attacks.epsilon``): what they share (``dpaudit.attacks.attack``, ``dpaudit.attacks.bounds``, ``dpaudit.attacks.targets``, ``dpaudit.attacks.flat_forest``)
  imports none of them;
* only the command line (``dpaudit.cli``, ``dpaudit.__main__``, ``dpaudit.commands``) imports
  ``dpaudit.commands`` or ``dpaudit.cli`` — the workflows never reach back into their adapters;
* the ε estimator's stage packages import one way, ``pairs -> selection -> sampling -> certification ->
  search -> result`` (:data:`EPSILON_STAGES`): no stage imports a later one, none imports the estimator that
  composes them, and every module of ``dpaudit.attacks.epsilon`` is in a stage or is that composition.

Every import counts: module level, inside functions, under ``if TYPE_CHECKING``.  Relative
imports are resolved; ``from package import name`` is an edge to ``package.name`` when that is
a module, else to ``package``.  A failure names the offending edge with its file and line.
The checker is itself tested on small trees that break each rule.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"mechanisms": "dpaudit.mechanisms", "execution": "dpaudit.execution", "attacks": "dpaudit.attacks",
           "dpaudit": "dpaudit"}  # the repository's folder -> the package it installs as
PACKAGES = ("dpaudit.mechanisms", "dpaudit.execution", "dpaudit.attacks", "dpaudit")
# lowest first: a module imports only its layer or below; "dpaudit" is the application (the rest of the package)
LAYERS = ("dpaudit.mechanisms", "dpaudit.execution", "dpaudit.attacks", "dpaudit")
FAMILIES = ("dpaudit.attacks.membership", "dpaudit.attacks.reconstruction", "dpaudit.attacks.epsilon")
CLI = ("dpaudit.cli", "dpaudit.__main__", "dpaudit.commands")
# The ε estimator's stages in the order they may import each other, lowest first (attacks/epsilon/__init__.py says
# why the search sits above selection and certification), and the modules that compose them.
EPSILON_STAGES = tuple(f"dpaudit.attacks.epsilon.{stage}"
                       for stage in ("pairs", "selection", "sampling", "certification", "search", "result"))
EPSILON_COMPOSITION = ("dpaudit.attacks.epsilon", "dpaudit.attacks.epsilon.estimator",
                       "dpaudit.attacks.epsilon.settings")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} ({self.path}:{self.line})"


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([FOLDERS[parts[0]], *parts[1:]])


def _modules(root: Path, folders: tuple[str, ...] = tuple(FOLDERS)) -> dict[str, Path]:
    """Every module under the package folders of ``root``: installed dotted name → file."""
    return {_module_name(root, path): path
            for folder in folders for path in sorted((root / folder).rglob("*.py"))}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module ``name`` starts with (None: outside the checked packages)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def import_edges(root: Path) -> list[Edge]:
    """Every import between the package's modules, with where it is written (each edge once per line)."""
    known = _modules(root)
    edges: dict[Edge, None] = {}
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        where = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=where)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = module.split(".")
                    up = node.level - (1 if is_package else 0)
                    if up > len(anchor) - 1:
                        raise AssertionError(f"{where}:{node.lineno}: relative import beyond the top-level package")
                    base = ".".join(anchor[:len(anchor) - up] if up else anchor)
                    base = f"{base}.{node.module}" if node.module else base
                else:
                    base = node.module or ""
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                           for alias in node.names]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved is not None and resolved != module:
                    edges[Edge(module, resolved, where, node.lineno)] = None
    return list(edges)


def _layer(name: str) -> int:
    return next(i for i, package in enumerate(LAYERS) if _within(name, package))  # the lowest layer first


def _family(name: str) -> str | None:
    return next((f for f in FAMILIES if _within(name, f)), None)


def layer_violations(edges: list[Edge]) -> list[str]:
    """Imports against ``dpaudit -> attacks -> execution -> mechanisms``, from what the attack families share
    into a family, and into the command line."""
    out = []
    for e in edges:
        if _layer(e.target) > _layer(e.source):
            out.append(f"{LAYERS[_layer(e.source)]} must not import {LAYERS[_layer(e.target)]}: {e}")
        elif (_within(e.source, "dpaudit.attacks") and _family(e.source) is None and _family(e.target) is not None
              and e.source != "dpaudit.attacks"):
            out.append(f"what the attack families share must not import a family: {e}")
        elif (_layer(e.source) == len(LAYERS) - 1 and not any(_within(e.source, c) for c in CLI)
              and any(_within(e.target, c) for c in CLI)):
            out.append(f"only the command line imports dpaudit.cli / dpaudit.commands: {e}")
    return out


def _stage(name: str) -> int | None:
    return next((i for i, stage in enumerate(EPSILON_STAGES) if _within(name, stage)), None)


def stage_violations(edges: list[Edge]) -> list[str]:
    """Imports of the ε estimator's stages against their order: into a later stage, or into the composition."""
    out = []
    for e in edges:
        source, target = _stage(e.source), _stage(e.target)
        if source is None or not _within(e.target, "dpaudit.attacks.epsilon"):
            continue
        if target is None:
            out.append(f"a stage of the ε estimator must not import what composes the stages: {e}")
        elif target > source:
            out.append(f"{EPSILON_STAGES[source]} must not import the later stage {EPSILON_STAGES[target]}: {e}")
    return out


def outside_the_stages(modules: list[str]) -> list[str]:
    """The modules of ``dpaudit.attacks.epsilon`` that are neither in a stage package nor the composition."""
    return [m for m in modules if _within(m, "dpaudit.attacks.epsilon") and _stage(m) is None
            and m not in EPSILON_COMPOSITION]


def family_edges(edges: list[Edge]) -> list[Edge]:
    """The edges between attack families, as edges between the families themselves."""
    return [Edge(_family(e.source), _family(e.target), e.path, e.line) for e in edges  # type: ignore[arg-type]
            if _family(e.source) and _family(e.target) and _family(e.source) != _family(e.target)]


def cycles(edges: list[Edge], package: str = "dpaudit") -> list[str]:
    """One message per import cycle among ``package``'s modules, listing the cycle's edges.

    Tarjan's strongly connected components (iterative: no recursion limit on deep graphs).
    """
    graph: dict[str, list[Edge]] = {}
    for e in edges:
        if _within(e.source, package) and _within(e.target, package):
            graph.setdefault(e.source, []).append(e)
            graph.setdefault(e.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            out = graph[node]
            if i < len(out):
                work.append((node, i + 1))
                nxt = out[i].target
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return ["import cycle among " + ", ".join(sorted(c)) + ": "
            + "; ".join(str(e) for e in edges if e.source in c and e.target in c) for c in components]


# ---- the project -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def project_edges() -> list[Edge]:
    edges = import_edges(ROOT)
    assert len({e.source for e in edges}) > 40, "the import graph looks empty: is ROOT the project?"
    return edges


def test_layers_point_one_way(project_edges: list[Edge]) -> None:
    violations = layer_violations(project_edges)
    assert not violations, "\n".join(violations)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(project_edges: list[Edge], package: str) -> None:
    found = cycles(project_edges, package)
    assert not found, "\n".join(found)


def test_no_cycle_among_the_attack_families(project_edges: list[Edge]) -> None:
    found = cycles(family_edges(project_edges), "dpaudit.attacks")
    assert not found, "\n".join(found)


def test_the_epsilon_stages_import_in_order(project_edges: list[Edge]) -> None:
    violations = stage_violations(project_edges)
    assert not violations, "\n".join(violations)
    # the order is the graph's, not a list that happens to pass: each stage but the lowest imports the one below
    reached = {(_stage(e.source), _stage(e.target)) for e in project_edges}
    for upper in range(1, len(EPSILON_STAGES)):
        assert (upper, upper - 1) in reached, f"{EPSILON_STAGES[upper]} does not import {EPSILON_STAGES[upper - 1]}"


def test_every_epsilon_module_is_in_a_stage() -> None:
    modules = sorted(_modules(ROOT, ("attacks",)))
    assert len([m for m in modules if _stage(m) is not None]) > 30, "the stage packages look empty"
    assert not outside_the_stages(modules), outside_the_stages(modules)
    assert outside_the_stages(["dpaudit.attacks.epsilon.binning", "dpaudit.attacks.epsilon.selection.binning",
                               "dpaudit.attacks.epsilon.estimator"]) == ["dpaudit.attacks.epsilon.binning"]


def test_the_workflows_are_imported_by_the_commands(project_edges: list[Edge]) -> None:
    """The graph is the one the rules are about: commands reach each workflow (lazily, in-function)."""
    reached = {(e.source, e.target) for e in project_edges}
    for workflow in ("attack.run", "estimate.run", "sweep.run", "audit.run"):
        command = "dpaudit.commands." + workflow.split(".")[0]
        assert (command, f"dpaudit.{workflow}") in reached, f"{command} does not import dpaudit.{workflow}"


# ---- the checker on trees that break each rule ------------------------------------------
def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in FOLDERS:
        (root / folder).mkdir(exist_ok=True)
        (root / folder / "__init__.py").touch()
    return root


BROKEN_TREES = {
    "layer violations": (
        {"mechanisms/base.py": "def f():\n    from dpaudit.attacks import metrics\n",
         "attacks/metrics.py": "import dpaudit.report\n",
         "dpaudit/report.py": ""},
        layer_violations,
        ["dpaudit.mechanisms must not import dpaudit.attacks: dpaudit.mechanisms.base -> dpaudit.attacks.metrics "
         "(mechanisms/base.py:2)",
         "dpaudit.attacks must not import dpaudit: dpaudit.attacks.metrics -> dpaudit.report (attacks/metrics.py:1)"],
        []),
    "a cycle through relative and TYPE_CHECKING imports": (
        {"dpaudit/sweep/__init__.py": "",
         "dpaudit/sweep/run.py": "from .report import write\n",
         "dpaudit/sweep/report.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import run\n",
         "dpaudit/sweep/config.py": "from ..sweep import run\n"},
        cycles,
        ["import cycle among dpaudit.sweep.report, dpaudit.sweep.run",
         "dpaudit.sweep.run -> dpaudit.sweep.report (dpaudit/sweep/run.py:1)",
         "dpaudit.sweep.report -> dpaudit.sweep.run (dpaudit/sweep/report.py:3)"],
        ["config"]),  # config -> run leads into the cycle but is not part of it
    "a cycle between attack families": (
        {"attacks/epsilon/__init__.py": "", "attacks/epsilon/features.py": "from ..membership import roc\n",
         "attacks/membership/__init__.py": "", "attacks/membership/roc.py": "from dpaudit.attacks.epsilon import features\n"},
        lambda edges: cycles(family_edges(edges), "dpaudit.attacks"),
        ["import cycle among dpaudit.attacks.epsilon, dpaudit.attacks.membership"], []),
    "shared attack modules importing a family": (
        {"attacks/bounds.py": "from dpaudit.attacks.epsilon import features\n",
         "attacks/epsilon/__init__.py": "", "attacks/epsilon/features.py": "", "execution/__init__.py": "",
         "execution/worker.py": "import dpaudit.attacks.bounds\n"},
        layer_violations,
        ["dpaudit.attacks.bounds -> dpaudit.attacks.epsilon.features (attacks/bounds.py:1)",
         "dpaudit.execution must not import dpaudit.attacks: dpaudit.execution.worker -> dpaudit.attacks.bounds "
         "(execution/worker.py:1)"], []),
    "ε stages importing a later stage or the estimator": (
        {"attacks/epsilon/__init__.py": "", "attacks/epsilon/estimator.py": "from .search import search\n",
         "attacks/epsilon/pairs/__init__.py": "",
         "attacks/epsilon/pairs/pair.py": "def f():\n    from ..selection.features import FeatureMap\n",
         "attacks/epsilon/selection/__init__.py": "", "attacks/epsilon/selection/features.py": "from .. import estimator\n",
         "attacks/epsilon/search/__init__.py": "",
         "attacks/epsilon/search/search.py": "from ..pairs.pair import f\nfrom ..selection import features\n"},
        stage_violations,
        ["dpaudit.attacks.epsilon.pairs must not import the later stage dpaudit.attacks.epsilon.selection: "
         "dpaudit.attacks.epsilon.pairs.pair -> dpaudit.attacks.epsilon.selection.features "
         "(attacks/epsilon/pairs/pair.py:2)",
         "must not import what composes the stages: dpaudit.attacks.epsilon.selection.features -> "
         "dpaudit.attacks.epsilon.estimator (attacks/epsilon/selection/features.py:1)"],
        ["search.search"]),  # the search importing pairs and selection below it is in order
    "a workflow importing the commands": (
        {"dpaudit/cli.py": "from .commands import attack\n",
         "dpaudit/commands/__init__.py": "",
         "dpaudit/commands/attack.py": "def f():\n    from dpaudit.attack.run import run\n",
         "dpaudit/commands/support.py": "",
         "dpaudit/attack/__init__.py": "",
         "dpaudit/attack/run.py": "from dpaudit.commands.support import info\n"},
        layer_violations,
        ["dpaudit.attack.run -> dpaudit.commands.support (dpaudit/attack/run.py:1)"], []),
}


@pytest.mark.parametrize("case", sorted(BROKEN_TREES))
def test_checker_names_the_offending_edges(tmp_path: Path, case: str) -> None:
    files, check, expected, absent = BROKEN_TREES[case]
    found = check(import_edges(_tree(tmp_path, files)))
    assert len(found) == (1 if "cycle" in case else len(expected)), found  # one message per cycle, per edge otherwise
    text = "\n".join(found)
    for edge in expected:
        assert edge in text, (edge, found)
    for word in absent:
        assert word not in text, (word, found)
