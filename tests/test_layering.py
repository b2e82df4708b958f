"""The package is built in floors (README, *What is in the box*): a module imports from its own
floor and the floors below it, never from above — imports inside functions included.

The floors are written here once, from the top; the README's diagram must list the same
packages in the same order, so the diagram and the code cannot drift apart silently.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rbmviz"

#: from the top; each entry one floor
FLOORS = [
    ["cli"],
    ["reproduce", "app"],
    ["viz"],
    ["live", "sweep"],
    ["settings", "estimator"],
    ["runs", "bias", "dbm"],
    ["algorithms", "evaluate", "presets"],
    ["tap"],
    ["units", "model", "checkpoints"],
    ["kernels", "datasets", "_blas"],
    ["errors", "bounds", "_validation", "_files", "_seeds", "_numerics"],
]
FLOOR = {name: i for i, names in enumerate(FLOORS) for name in names}
#: the package's own entry points sit above every floor
TOP = {"__init__", "__main__"}


def _part(path: Path) -> str:
    """The floor entry a file belongs to: its top-level package or module below rbmviz/."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path):
    """``(line, target entry)`` for every import of an rbmviz module in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(ROOT).with_suffix("")
    package = list(rel.parts[:-1])         # the package a relative import starts from
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "rbmviz" and len(parts) > 1:
                    yield node.lineno, parts[1]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                parts = base + (node.module.split(".") if node.module else [])
            else:
                parts = (node.module or "").split(".")
            if not parts or parts[0] != "rbmviz":
                continue
            if len(parts) > 1:
                yield node.lineno, parts[1]
            else:                                   # from rbmviz import x, y
                for alias in node.names:
                    yield node.lineno, alias.name


def _files():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_part_of_the_package_has_a_floor():
    parts = {_part(p) for p in _files()} - TOP
    missing = sorted(parts - set(FLOOR))
    assert not missing, f"give these a floor in FLOORS and the README's diagram: {missing}"


def test_no_import_goes_up_a_floor():
    upward = []
    for path in _files():
        src = _part(path)
        if src in TOP:
            continue
        for line, target in _imports(path):
            if target not in FLOOR:         # a name re-exported by rbmviz/__init__.py
                continue
            if FLOOR[target] < FLOOR[src]:
                upward.append(f"{path.relative_to(ROOT)}:{line} ({src}, floor {FLOOR[src]}) "
                              f"imports {target} (floor {FLOOR[target]})")
    assert not upward, "imports going up a floor:\n" + "\n".join(upward)


def test_the_check_sees_an_upward_import():
    """The scan is shown to find an import from a lower floor to a higher one."""
    fake = PACKAGE / "kernels" / "_layering_probe.py"
    assert not fake.exists()
    fake.write_text("def f():\n    from ..app import explorer\n", encoding="utf-8")
    try:
        hits = [t for _, t in _imports(fake)]
        assert hits == ["app"]
        assert FLOOR["app"] < FLOOR[_part(fake)]
    finally:
        fake.unlink()


def _readme_diagram_names():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"rbmviz is one package built in floors.*?```\n(.*?)```", text, re.S)
    assert m, "README: the floor diagram of 'What is in the box' is missing"
    names = []
    for line in m.group(1).splitlines():
        column = line[:25]
        for token in column.split():
            token = token.rstrip("/")
            token = token[:-3] if token.endswith(".py") else token
            names.append(token)
    return names


def test_the_readme_diagram_lists_the_floors_in_order():
    assert _readme_diagram_names() == [n for floor in FLOORS for n in floor]


def _module_level_edges():
    """``{entry: {entries it imports at module level}}`` (imports inside functions left out:
    they run after every module has loaded)."""
    edges = {}
    for path in _files():
        src = _part(path)
        if src in TOP:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside.update(id(n) for n in ast.walk(node) if n is not node)
        lines = {n.lineno for n in ast.walk(tree)
                 if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in inside}
        for line, target in _imports(path):
            if line in lines and target in FLOOR and target != src:
                edges.setdefault(src, set()).add(target)
    return edges


def _cycle(edges):
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        state[n] = 2
        stack.pop()
        return None

    for n in sorted(edges):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_no_import_goes_in_a_circle():
    cycle = _cycle(_module_level_edges())
    assert cycle is None, "module-level imports in a circle: " + " -> ".join(cycle)


def test_the_circle_check_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None
