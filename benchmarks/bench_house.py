"""The house in numbers, from the source text alone (``ast``, ``tokenize``; nothing of the project is imported):
what the house refactor (issue 40) is measured by, before and after.

* **layout**: modules and lines per layer folder and subfolder, and the modules over 400 lines;
* **weak types**: ``dict[str, Any]`` in annotations (parameters, returns, annotated assignments; a quoted
  annotation is parsed) and anywhere in code, the name ``Any`` as a code token (imports included; strings and
  comments not), and ``assert`` statements in the package (the tests live in ``tests/``, outside it);
* **seed streams named by numbers**: spawn keys written as integers — ``spawn_key=`` tuples holding one, and
  ``child_seed``/``cell_seed`` calls given one as a key —, the module constants passed as keys, the
  positional ``.spawn(n)`` calls, and every ``2**31`` (keys, and the integer range streams are collapsed to);
* **validation**: ``raise InvalidInputError`` per config module and per layer (and how many name a ``--flag``);
* **configs**: the fields of each ``*Config`` dataclass in ``dpaudit/``, and of the four workflow configs
  the fields all four declare and those only one does;
* **the import graph** between the project's modules (every import: module level, in functions, under
  ``TYPE_CHECKING``): edges between layer folders, upward ones, and cycles (strongly connected components of
  more than one module).

Usage: ``python benchmarks/bench_house.py [--root CHECKOUT] [--out benchmarks/results/house-before.md --force]``
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize
from collections import Counter
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._outputs import add_force, guard_outputs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"mechanisms": "dpaudit.mechanisms", "execution": "dpaudit.execution", "attacks": "dpaudit.attacks",
          "dpaudit": "dpaudit"}  # folder -> installed package, lowest layer first
WORKFLOW_CONFIGS = ("AttackConfig", "AuditConfig", "EstimateConfig", "SweepConfig")
SEED_HELPERS = ("child_seed", "cell_seed")  # (parent or seed, *keys): every argument after the first is a key
LONG_MODULE = 400
# installed dotted name -> (path, text, every node of its tree, walked once: the first is the module itself)
Modules = dict[str, tuple[Path, str, list[ast.AST]]]


def sources(root: Path) -> Modules:
    """Every module of the four layer folders (:data:`Modules`)."""
    out = {}
    for folder, package in LAYERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            text = path.read_text(encoding="utf-8")
            out[".".join([package, *parts])] = (path, text, list(ast.walk(ast.parse(text, filename=str(path)))))
    return out


def layout(root: Path, mods: Modules) -> list[tuple[str, int, int, int]]:
    """(folder, modules, lines, modules over :data:`LONG_MODULE` lines) per layer folder, each followed by its
    subfolders (a folder's counts include its subfolders')."""
    rows: dict[str, Counter[str]] = {}
    for path, text, _ in mods.values():
        folders = path.relative_to(root).parts[:-1]
        for depth in range(1, len(folders) + 1):
            row = rows.setdefault("/".join(folders[:depth]) + "/", Counter())
            row.update(modules=1, lines=len(text.splitlines()), long=len(text.splitlines()) > LONG_MODULE)
    order = sorted(rows, key=lambda f: (list(LAYERS).index(f.split("/")[0]), f))
    return [(f, rows[f]["modules"], rows[f]["lines"], rows[f]["long"]) for f in order]


def annotation_exprs(nodes: list[ast.AST]) -> Iterator[ast.expr]:
    """Every annotation expression of the module (a quoted one parsed)."""
    for node in nodes:
        found: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            found = [x.annotation for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x]
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found = [node.annotation]
        for expr in found:
            if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
                expr = ast.parse(expr.value, mode="eval").body
            if expr is not None:
                yield expr


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def is_dict_str_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Subscript) and _name(node.value) in ("dict", "Dict")
            and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2
            and _name(node.slice.elts[0]) == "str" and _name(node.slice.elts[1]) == "Any")


def any_tokens(text: str) -> int:
    return sum(1 for t in tokenize.generate_tokens(io.StringIO(text).readline)
               if t.type == tokenize.NAME and t.string == "Any")


def int_literal(node: ast.AST) -> bool:
    """An integer written out: ``3``, ``2**31 - 2``, ``-1``."""
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return all(int_literal(n) for n in ast.iter_child_nodes(node) if isinstance(n, ast.expr))
    return isinstance(node, ast.Constant) and type(node.value) is int


def key_arguments(nodes: list[ast.AST]) -> Iterator[tuple[ast.Call, list[ast.expr]]]:
    """Each seed call with the expressions it takes as spawn keys."""
    for node in (n for n in nodes if isinstance(n, ast.Call)):
        for kw in node.keywords:
            if kw.arg == "spawn_key":
                yield node, list(kw.value.elts) if isinstance(kw.value, ast.Tuple) else [kw.value]
        if _name(node.func) in SEED_HELPERS:
            yield node, list(node.args[1:])


def seed_keys(root: Path, mods: Modules) -> dict[str, list[str]]:
    """Sites (``file:line``) of each kind of numbered seed stream."""
    out: dict[str, list[str]] = {"spawn_key= with an integer": [], "child_seed/cell_seed with an integer key": [],
                                 "constants passed as keys": [], ".spawn(n) (streams by position)": [],
                                 "2**31 expressions": []}
    names: set[str] = set()
    for path, _, nodes in mods.values():
        where = path.relative_to(root).as_posix()
        for call, keys in key_arguments(nodes):
            names.update(k.id for k in keys if isinstance(k, ast.Name) and k.id.lstrip("_").isupper())
            if any(int_literal(k) for k in keys):
                kind = "spawn_key= with an integer" if _name(call.func) not in SEED_HELPERS else \
                    "child_seed/cell_seed with an integer key"
                out[kind].append(f"{where}:{call.lineno}")
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "spawn":
                out[".spawn(n) (streams by position)"].append(f"{where}:{node.lineno}")
            if isinstance(node, ast.BinOp) and ast.unparse(node) == "2 ** 31":
                out["2**31 expressions"].append(f"{where}:{node.lineno}")
    for path, _, nodes in mods.values():
        for node in nodes[0].body if isinstance(nodes[0], ast.Module) else []:
            if (isinstance(node, ast.Assign) and int_literal(node.value)
                    and any(isinstance(t, ast.Name) and t.id in names for t in node.targets)):
                name = next(t.id for t in node.targets if isinstance(t, ast.Name))
                out["constants passed as keys"].append(f"{path.relative_to(root).as_posix()}:{node.lineno} {name}")
    return {kind: sorted(sites, key=lambda s: (s.split(":")[0], int(s.split(":")[1].split()[0])))
            for kind, sites in out.items()}


def raises_invalid_input(nodes: list[ast.AST], *, naming_a_flag: bool = False) -> int:
    """``raise InvalidInputError(…)`` statements (``naming_a_flag``: those whose message names a ``--flag``)."""
    return sum(1 for n in nodes if isinstance(n, ast.Raise) and n.exc is not None
               and _name(n.exc.func if isinstance(n.exc, ast.Call) else n.exc) == "InvalidInputError"
               and (not naming_a_flag or re.search(r"--[a-z]", ast.unparse(n.exc)) is not None))


def config_fields(nodes: list[ast.AST]) -> dict[str, list[str]]:
    """``*Config`` dataclasses -> their field names (``ClassVar`` left out)."""
    out = {}
    for node in nodes:
        if isinstance(node, ast.ClassDef) and node.name.endswith("Config") and any(
                _name(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in node.decorator_list):
            out[node.name] = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                              and isinstance(s.target, ast.Name) and "ClassVar" not in ast.unparse(s.annotation)]
    return out


def import_edges(mods: Modules) -> set[tuple[str, str]]:
    """(importer, imported) between the project's modules; ``from p import m`` is an edge to ``p.m`` when that
    is a module, else to ``p``."""
    edges = set()
    for module, (path, _, nodes) in mods.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in nodes:
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
                base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                parts = target.split(".")
                found = next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in mods),
                             None)
                if found is not None and found != module:
                    edges.add((module, found))
    return edges


def layer(module: str) -> str:
    """The layer package a module belongs to (the rest of ``dpaudit`` is the application layer)."""
    return next((p for p in list(LAYERS.values())[:3] if module == p or module.startswith(p + ".")), "dpaudit")


def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module (a module is in one when it
    reaches itself; its component is what it reaches that reaches it back)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    reached: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in graph.get(todo.pop(), set()) - seen:
                seen.add(nxt)
                todo.append(nxt)
        reached[start] = seen
    found = {frozenset({n, *(m for m in reached[n] if n in reached.get(m, set()))}) for n in graph if n in reached[n]}
    return sorted(sorted(c) for c in found)


def commit_of(root: Path) -> str:
    """The measured checkout's commit ("unknown" outside a git checkout), marked when it has changes."""
    git = ["git", "-C", str(root)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + (" with uncommitted changes" if dirty.stdout.strip() else "")


def measure(root: Path) -> list[str]:
    """The page, as lines of Markdown."""
    mods = sources(root)
    lines = [f"# The house in numbers (commit {commit_of(root)})", "",
             "From the source text only: `python benchmarks/bench_house.py` (ast and tokenize; see its docstring "
             "for what each count is).", "", "## Layout", "", "| folder | modules | lines | modules > 400 lines |",
             "|---|---:|---:|---:|"]
    lines += [f"| `{f}` | {m} | {n:,} | {long} |" for f, m, n, long in layout(root, mods)]
    weak = Counter[str]()
    for module, (_, text, nodes) in mods.items():
        top = layer(module)
        weak[f"annot {top}"] += sum(is_dict_str_any(n) for a in annotation_exprs(nodes) for n in ast.walk(a))
        weak[f"code {top}"] += sum(is_dict_str_any(n) for n in nodes)
        weak[f"Any {top}"] += any_tokens(text)
        weak[f"assert {top}"] += sum(isinstance(n, ast.Assert) for n in nodes)
        weak[f"raise {top}"] += raises_invalid_input(nodes)
        weak[f"flag {top}"] += raises_invalid_input(nodes, naming_a_flag=True)
    lines += ["", "## Weak types and guards", "",
              "| layer | `dict[str, Any]` in annotations | `dict[str, Any]` anywhere in code | `Any` tokens "
              "| `assert` | `raise InvalidInputError` | … naming a flag |", "|---|---:|---:|---:|---:|---:|---:|"]
    for package in [*LAYERS.values(), "all"]:
        counts = [sum(weak[f"{kind} {p}"] for p in LAYERS.values() if package in ("all", p))
                  for kind in ("annot", "code", "Any", "assert", "raise", "flag")]
        lines.append(f"| {package} | " + " | ".join(map(str, counts)) + " |")
    lines += ["", "## Seed streams named by numbers", "", "| kind | count | where |", "|---|---:|---|"]
    lines += [f"| {kind} | {len(sites)} | {', '.join(sites)} |" for kind, sites in seed_keys(root, mods).items()]
    configs: dict[str, tuple[str, list[str], int]] = {}
    for module, (path, _, nodes) in mods.items():
        if layer(module) == "dpaudit":
            for name, fields in config_fields(nodes).items():
                configs[name] = (path.relative_to(root).as_posix(), fields, raises_invalid_input(nodes))
    lines += ["", "## Configs", "", "| config | module | fields | `raise InvalidInputError` in its module |",
              "|---|---|---:|---:|"]
    lines += [f"| `{name}` | `{where}` | {len(fields)} | {raises} |"
              for name, (where, fields, raises) in sorted(configs.items())]
    workflow = [set(configs[c][1]) for c in WORKFLOW_CONFIGS if c in configs]
    if len(workflow) == len(WORKFLOW_CONFIGS):
        shared = sorted(set.intersection(*workflow))
        owners = Counter(f for fields in workflow for f in fields)
        lines += ["", f"The four workflow configs ({', '.join(WORKFLOW_CONFIGS)}): {sum(map(len, workflow))} "
                  f"fields, {len(owners)} distinct names; {len(shared)} in all four ({', '.join(shared)}); "
                  f"{sum(1 for n in owners.values() if n == 1)} in one only."]
    edges = import_edges(mods)
    between = Counter((layer(a), layer(b)) for a, b in edges if layer(a) != layer(b))
    rank = list(LAYERS.values()).index
    upward = sorted(f"{a} -> {b}" for a, b in edges if rank(layer(b)) > rank(layer(a)))
    found = cycles(edges)
    lines += ["", "## Import graph", "", f"{len(mods)} modules, {len(edges)} import edges between them "
              f"({sum(between.values())} between layer folders); {len(upward)} upward; {len(found)} cycle(s).", "",
              "| importer \\ imported | " + " | ".join(LAYERS.values()) + " |", "|---|" + "---:|" * len(LAYERS)]
    lines += [f"| {a} | " + " | ".join(str(between[(a, b)]) if a != b else "–" for b in LAYERS.values()) + " |"
              for a in LAYERS.values()]
    lines += [f"* upward: {e}" for e in upward] + [f"* cycle: {', '.join(c)}" for c in found]
    return lines + [""]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--out", type=Path, help="write the Markdown page here (default: print it)")
    add_force(parser)
    args = parser.parse_args(argv)
    guard_outputs(args, "out")
    text = "\n".join(measure(args.root.resolve()))
    if args.out is None:
        return print(text, end="")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
