"""Numbers in prose from one source (:mod:`rbmviz.reproduce.report`, *Numbers in prose from one
source*): the generated blocks and inline values of Markdown files and notebooks, looked up
(:func:`lookup`, :func:`evaluate`) in a run's summary and tables, checked (:func:`check`) and
rewritten (:func:`render`).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable

from ... import _files
from .claims import claim_rows, claims_markdown

__all__ = ["lookup", "evaluate", "check", "render"]

_BLOCK = re.compile(r"(<!-- generated: (?P<kind>\w+) (?P<arg>\S+) -->\n)(?P<body>.*?)"
                    r"(<!-- end generated -->)", re.S)
_VALUE = re.compile(r"<!--v (?P<file>\S+) (?P<path>\S+) (?P<fmt>\S*?) ?-->(?P<text>.*?)<!--/v-->",
                    re.S)
_SEG = re.compile(r"^(?P<name>[^\[\]]*)(?:\[(?P<sel>[^\]]*)\])?$")


def lookup(data: Any, path: str) -> Any:
    """The value at ``path`` in nested dicts and lists.

    Parameters
    ----------
    data : Any
        Parsed JSON.
    path : str
        Dot-separated keys, list indices, or selectors ``name[key=value,...]`` (the first
        list element whose ``key`` prints as ``value``; ``key>value``, ``key>=value``,
        ``key<value``, ``key<=value`` compare numbers: ``[n_hidden=100,unique_fraction>0.1]``
        is the first such row, as listed; ``key=max`` and ``key=min`` pick, among the elements
        the other conditions select, the one with the largest or smallest ``key``:
        ``[n_hidden=25,n_unique=max]``).

    Returns
    -------
    Any
        The value.

    Raises
    ------
    KeyError
        When a key, index or selector matches nothing.
    """
    cur = data
    for seg in re.split(r"\.(?![^\[]*\])", path):
        m = _SEG.match(seg)
        if m is None:
            raise KeyError(f"bad path segment {seg!r} in {path!r}")
        name, sel = m.group("name"), m.group("sel")
        if name:
            if isinstance(cur, list):
                try:
                    cur = cur[int(name)]
                except (ValueError, IndexError):
                    raise KeyError(f"no index {name!r} in {path!r}") from None
            elif isinstance(cur, dict) and name in cur:
                cur = cur[name]
            else:
                raise KeyError(f"no key {name!r} in {path!r}")
        if sel is not None:
            want = [_CONDITION.match(kv) for kv in sel.split(",") if kv]
            if not all(want):
                raise KeyError(f"bad selector [{sel}] in {path!r}")
            if not isinstance(cur, list):
                raise KeyError(f"selector [{sel}] on a non-list in {path!r}")
            extreme = [c for c in want if c["op"] == "=" and c["value"] in ("max", "min")]
            hits = [x for x in cur if isinstance(x, dict)
                    and all(_holds(x.get(c["key"]), c["op"], c["value"])
                            for c in want if c not in extreme)]
            for c in extreme:
                values = [float(x[c["key"]]) for x in hits if _holds(x.get(c["key"]), ">", "-inf")]
                best = (max if c["value"] == "max" else min)(values, default=None)
                hits = [x for x in hits if _holds(x.get(c["key"]), "=", str(best))]
            if not hits:
                raise KeyError(f"no element [{sel}] in {path!r}")
            cur = hits[0]
    return cur


_OPERAND = re.compile(r"\{([^{}]*)\}")


def _arith(node, names):
    """The value of an arithmetic expression's syntax tree (``+ - * /``, unary minus,
    ``abs``, ``min``, ``max``, numbers, the operand names of :func:`evaluate`)."""
    import ast
    import operator
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.USub: operator.neg, ast.UAdd: operator.pos}
    if isinstance(node, ast.Expression):
        return _arith(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        return ops[type(node.op)](_arith(node.left, names), _arith(node.right, names))
    if isinstance(node, ast.UnaryOp) and type(node.op) in ops:
        return ops[type(node.op)](_arith(node.operand, names))
    calls = {"abs": abs, "min": min, "max": max}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in calls and node.args and not node.keywords \
            and (node.func.id != "abs" or len(node.args) == 1):
        return calls[node.func.id](*(_arith(a, names) for a in node.args))
    raise ValueError(f"not arithmetic: {ast.dump(node)[:60]}")


def evaluate(path: str, load: Callable[[str | None], Any]) -> Any:
    """The value a marker's ``PATH`` names: :func:`lookup` of a path, or an arithmetic
    expression of paths in braces (``{a.b}-{c}``, ``{other.json:a.b}/{c}``).

    Parameters
    ----------
    path : str
        A path, or an expression (``+ - * /``, parentheses, ``abs``, ``min``, ``max``,
        numbers) whose operands are ``{PATH}`` or ``{FILE:PATH}``.
    load : callable
        ``load(file)``: the parsed source ``file`` names (None: the marker's own file).

    Returns
    -------
    Any
        The value.

    Raises
    ------
    KeyError
        When a path matches nothing.
    ValueError
        When the expression is not arithmetic of operands and numbers.
    TypeError
        When an operand is not a number.
    """
    if "{" not in path:
        return lookup(load(None), path)
    import ast
    names = {}

    def operand(m):
        file, _, sub = m.group(1).rpartition(":")
        value = lookup(load(file or None), sub)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{m.group(0)} is {value!r}, not a number")
        names[f"_v{len(names)}"] = value
        return f"_v{len(names) - 1}"
    expr = _OPERAND.sub(operand, path)
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ValueError(f"not an expression: {path!r}") from None
    return _arith(tree, names)


_CONDITION = re.compile(r"^(?P<key>[^=<>]+)(?P<op>>=|<=|=|>|<)(?P<value>.*)$")


def _holds(x, op, text):
    """Whether value ``x`` stands in relation ``op`` to what ``text`` names (``=``: see
    :func:`_matches`; an order compares numbers, and fails on anything else)."""
    if op == "=":
        return _matches(x, text)
    try:
        a, b = float(x), float(text)
    except (TypeError, ValueError):
        return False
    return not isinstance(x, bool) and {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[op]


def _matches(x, text):
    """Whether value ``x`` is what ``text`` names (numbers compare as numbers: 0 = 0.0)."""
    if str(x) == text:
        return True
    try:
        return not isinstance(x, bool) and float(x) == float(text)
    except (TypeError, ValueError):
        return False


def _number(text):
    try:
        x = float(text)
    except ValueError:
        return text
    return int(x) if x.is_integer() and "." not in text and "e" not in text.lower() else x


def _read(path):
    """A source file: JSON, or a CSV table as a list of rows (numbers converted)."""
    if path.suffix == ".csv":
        import csv
        with open(path, newline="", encoding="utf-8") as fh:
            return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    return json.loads(path.read_text(encoding="utf-8"))


def _format(value, fmt):
    if value is None:
        return "-"
    return format(value, fmt) if fmt else str(value)


def _same(a, b):
    norm = (lambda s: s.replace("\u2212", "-").replace("**", "").strip())
    return norm(a) == norm(b)


def _expand(text, base, cache):
    """``(new_text, problems)``: every marker of ``text`` with its source's content."""
    problems = []

    def load(name):
        p = (base / name).resolve()
        if p not in cache:
            cache[p] = _read(p) if p.is_file() else None
        if cache[p] is None:
            raise FileNotFoundError(f"{base / name} does not exist")
        return cache[p]

    def block(m):
        kind, arg = m.group("kind"), m.group("arg")
        try:
            if kind != "claims":
                raise ValueError(f"unknown generated block {kind!r}")
            body = claims_markdown(claim_rows(load(f"{arg}/summary.json")))
        except (OSError, ValueError, KeyError) as e:
            problems.append(f"block '{kind} {arg}': {e}")
            return m.group(0)
        if body != m.group("body"):
            problems.append(f"block '{kind} {arg}' differs from {arg}/summary.json")
        return m.group(1) + body + m.group(5)

    def value(m):
        where = f"{m.group('file')} {m.group('path')}"
        try:
            new = _format(evaluate(m.group("path"), lambda f: load(f or m.group("file"))),
                          m.group("fmt"))
        except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
            problems.append(f"value {where}: {e}")
            return m.group(0)
        old = m.group("text")
        if _same(old, new):
            return m.group(0)
        problems.append(f"value {where}: the text says {old!r}, the source gives {new!r}")
        if "\u2212" in old:
            new = new.replace("-", "\u2212")
        return m.group(0).replace(f"-->{old}<!--/v-->", f"-->{new}<!--/v-->")

    text = _BLOCK.sub(block, text)
    text = _VALUE.sub(value, text)
    return text, problems


def _notebook_cells(nb):
    return [c for c in nb.get("cells", []) if c.get("cell_type") == "markdown"]


def _process(path, write):
    """``problems`` of a Markdown file or a notebook's Markdown cells (rewritten when
    ``write``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    cache: dict = {}
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        new, problems = _expand(text, path.parent, cache)
        if write and new != text:
            _files.write_text(path, new, overwrite=True)
        return problems
    nb = json.loads(text)
    problems, changed = [], False
    for cell in _notebook_cells(nb):
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        new, probs = _expand(src, path.parent, cache)
        problems += probs
        if new != src:
            cell["source"] = new.splitlines(keepends=True)
            changed = True
    if write and changed:
        _files.write_text(path, json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                          overwrite=True)
    return problems


def check(path: str | os.PathLike) -> list[str]:
    """Where a Markdown file's (or a notebook's Markdown cells') generated blocks and inline
    values disagree with their sources.

    Parameters
    ----------
    path : str or os.PathLike
        The Markdown file, or a Jupyter notebook (``.ipynb``; sources relative to its folder).

    Returns
    -------
    list of str
        One line per disagreement (or unreadable source); empty when all agree.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    """
    return _process(path, write=False)


def render(path: str | os.PathLike) -> list[str]:
    """Rewrite a Markdown file's (or a notebook's Markdown cells') generated blocks and inline
    values from their sources.

    Parameters
    ----------
    path : str or os.PathLike
        The Markdown file, or a Jupyter notebook (``.ipynb``).

    Returns
    -------
    list of str
        What changed (the lines :func:`check` gave before).

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    """
    return _process(path, write=True)


if __name__ == "__main__":          # python -m rbmviz.reproduce.report [--check] FILE...
    import sys
    args = sys.argv[1:]
    only_check = "--check" in args
    bad = 0
    for f in (a for a in args if a != "--check"):
        out = check(f) if only_check else render(f)
        for line in out:
            print(f"{f}: {line}")
        bad += bool(out) and only_check
    sys.exit(1 if bad else 0)
