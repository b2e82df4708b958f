"""The shared report of every reproduction: claim rows, claims tables, and numbers in prose
that come from a run's summary file.

One claim row
    Every claim check of :mod:`rbmviz.reproduce` returns its verdicts as dicts made by
    :func:`make_claim`: ``claim`` (the paper's statement), ``paper`` (the paper's value or
    wording), ``measured`` (what the run shows, in words), ``verdict`` (one of
    :data:`VERDICTS`, optionally followed by a reason in parentheses), ``criterion`` (the
    test applied, in words, with its thresholds) and ``judged`` (the number, or numbers,
    the verdict was decided on).  A row may carry ``note`` (e.g. that agreement is circular
    because a data set was fitted to the paper's number).

Scorecards
    :func:`claim_rows` turns a summary's claims into uniform rows (claim, paper, ours,
    verdict, criterion, status) whatever the study; :func:`results_rows` does so for a
    results directory (its ``summary.json``), :func:`claims_markdown` renders rows as a
    Markdown table.  A per-paper scorecard is ``claims_markdown(results_rows(directory))``.

The report of a run
    :func:`summary_tail` writes the end of every study's printed summary (its claims with
    verdict, measurement and criterion, then the run time); :func:`save` writes a study's
    tables (CSV), its summary (JSON) and its figure (HTML) into an output directory, each
    file whole or not at all (:mod:`rbmviz._files`), after refusing a directory whose
    results it would replace.

Numbers in prose from one source
    A Markdown file (a results README, a documentation page) or the Markdown cells of a
    notebook hold two kinds of markers:

    * a generated block, replaced whole by :func:`render`::

          <!-- generated: claims dc-small-full -->
          ... (the claims table of dc-small-full/summary.json)
          <!-- end generated -->

      (``claims DIR``: the claims table of ``DIR/summary.json``, ``DIR`` relative to the
      Markdown file; ``.`` for its own directory);
    * an inline value::

          bound − bias <!--v full-k1/summary.json final[dataset=diag].gap .5f-->0.00144<!--/v-->

      ``FILE PATH FORMAT``: ``FILE`` a JSON file relative to the Markdown file (or a CSV
      table, read as a list of rows: ``curves.csv [n_hidden=100,epoch=10].n_unique d``),
      ``PATH`` dot-separated keys, list indices or list selectors ``name[key=value,...]``
      (the first element whose ``key`` prints as ``value``), ``FORMAT`` a :func:`format`
      specification (``,.0f``, ``.1%``, ...).  The text between the markers is the formatted
      value (a typographic minus − and an ASCII one count as the same);
    * an inline value computed from sourced numbers (a difference, a ratio)::

          <!--v summary.json {final.1.bound}/{final.0.bound} .1f-->4.4<!--/v-->

      ``PATH`` an arithmetic expression (``+ - * /``, parentheses, ``abs``, ``min``, ``max``,
      numbers) whose operands are paths in braces: ``{PATH}`` in ``FILE``, or
      ``{OTHER:PATH}`` in another file ``OTHER`` (relative to the Markdown file like
      ``FILE``); no spaces.

    :func:`check` lists every place where the text differs from what its source gives (a
    test asserts it is empty for every results README); :func:`render` rewrites them.
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import _files
from . import _io

__all__ = ["VERDICTS", "make_claim", "status", "claim_rows", "results_rows", "claims_markdown",
           "lookup", "evaluate", "check", "render", "judged_text", "summary_tail", "save",
           "study_summary", "study_saver"]

#: the verdicts a claim check can return (a reason in parentheses may follow)
VERDICTS = ("agrees", "differs", "inconclusive", "not run", "not comparable")

_BLOCK = re.compile(r"(<!-- generated: (?P<kind>\w+) (?P<arg>\S+) -->\n)(?P<body>.*?)"
                    r"(<!-- end generated -->)", re.S)
_VALUE = re.compile(r"<!--v (?P<file>\S+) (?P<path>\S+) (?P<fmt>\S*?) ?-->(?P<text>.*?)<!--/v-->",
                    re.S)
_SEG = re.compile(r"^(?P<name>[^\[\]]*)(?:\[(?P<sel>[^\]]*)\])?$")


def status(verdict: str) -> str:
    """The verdict's kind: the entry of :data:`VERDICTS` it starts with.

    Parameters
    ----------
    verdict : str
        A verdict, e.g. ``"inconclusive (run shorter than 30,000 epochs)"``.

    Returns
    -------
    str
        One of :data:`VERDICTS`.

    Raises
    ------
    ValueError
        When the verdict starts with none of them.
    """
    text = str(verdict).strip().strip("*")
    for v in VERDICTS:
        if text == v or text.startswith(v + " "):
            return v
    raise ValueError(f"verdict {verdict!r} starts with none of {VERDICTS}")


def make_claim(claim: str, verdict: str, *, criterion: str, judged: Any, measured: str = "",
               paper: str | None = None, note: str | None = None) -> dict:
    """One claim row (the form every claim check of :mod:`rbmviz.reproduce` returns).

    Parameters
    ----------
    claim : str
        The paper's statement.
    verdict : str
        One of :data:`VERDICTS`, optionally followed by a reason in parentheses.
    criterion : str
        The test applied, in words, with its thresholds.
    judged : Any
        The number (or a short text of numbers) the verdict was decided on; None when
        nothing could be judged.
    measured : str
        What the run shows, in words.
    paper : str
        The paper's value or wording.
    note : str
        A caveat a reader must see beside the verdict.

    Returns
    -------
    dict
        ``claim, paper, measured, verdict, criterion, judged`` (and ``note`` when given).

    Raises
    ------
    ValueError
        For an unknown verdict or an empty criterion.
    """
    status(verdict)
    if not str(criterion).strip():
        raise ValueError(f"claim {claim!r} has no criterion")
    if isinstance(judged, float) and math.isnan(judged):
        judged = None
    row = dict(claim=claim, paper=paper, measured=measured, verdict=verdict,
               criterion=criterion, judged=judged)
    if note:
        row["note"] = note
    return row


def judged_text(x: Any) -> str:
    """A judged value as short text (numbers to 4 significant digits, dicts and lists joined).

    Parameters
    ----------
    x : Any
        The ``judged`` entry of a claim row.

    Returns
    -------
    str
        The text ("-" for None).
    """
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, dict):
        return ", ".join(f"{k}: {judged_text(v)}" for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return ", ".join(judged_text(v) for v in x)
    return str(x)


def claim_rows(summary: dict) -> list[dict]:
    """The claims of a summary as uniform scorecard rows.

    Parameters
    ----------
    summary : dict
        A reproduction's summary (its ``claims`` list; a summary written before claims
        carried a ``verdict``, with ``holds`` True / False / None, is read too).

    Returns
    -------
    list of dict
        ``claim``, ``paper`` (the paper's value, "" when not recorded), ``ours`` (the number
        judged, or the measured text when no number was recorded), ``measured``,
        ``verdict``, ``criterion`` ("" when not recorded), ``status`` (one of
        :data:`VERDICTS`), ``note``.

    Raises
    ------
    ValueError
        When the summary has no claims list or a claim has no verdict.
    """
    claims = summary.get("claims") if isinstance(summary, dict) else None
    if not isinstance(claims, list):
        raise ValueError("the summary has no list of claims")
    rows = []
    for c in claims:
        verdict = c.get("verdict")
        if verdict is None and "holds" in c:
            verdict = {True: "agrees", False: "differs", None: "inconclusive"}[c["holds"]]
        if verdict is None:
            raise ValueError(f"claim {c.get('claim')!r} has no verdict")
        measured = c.get("measured") or c.get("observed") or ""
        judged = c.get("judged")
        rows.append(dict(claim=c["claim"], paper=c.get("paper") or "",
                         ours=judged_text(judged) if "judged" in c else measured,
                         measured=measured, verdict=verdict, criterion=c.get("criterion", ""),
                         status=status(verdict), note=c.get("note") or ""))
    return rows


def results_rows(directory: str | os.PathLike) -> list[dict]:
    """The scorecard rows of one results directory (:func:`claim_rows` of its
    ``summary.json``).

    Parameters
    ----------
    directory : str or os.PathLike
        A directory holding ``summary.json``.

    Returns
    -------
    list of dict
        The rows of :func:`claim_rows`.

    Raises
    ------
    FileNotFoundError
        When the directory has no ``summary.json``.
    """
    path = Path(directory) / "summary.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    return claim_rows(json.loads(path.read_text(encoding="utf-8")))


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_markdown(rows: Iterable[dict]) -> str:
    """Scorecard rows as a Markdown table: claim, paper, ours (the judged number and what the
    run shows), verdict, criterion.

    Parameters
    ----------
    rows : iterable of dict
        Rows of :func:`claim_rows`.

    Returns
    -------
    str
        The table, ending with a newline.
    """
    lines = ["| claim | paper | ours | verdict | criterion |", "|---|---|---|---|---|"]
    for r in rows:
        ours = r["ours"]
        if r["measured"] and r["measured"] != ours:
            ours = f"{ours} ({r['measured']})"
        verdict = r["verdict"] if r["status"] != "differs" else f"**{r['verdict']}**"
        crit = r["criterion"] + (f" *{r['note']}*" if r["note"] else "")
        lines.append("| " + " | ".join(_cell(x) for x in (r["claim"], r["paper"], ours,
                                                          verdict, crit)) + " |")
    return "\n".join(lines) + "\n"


_HOLDS = {True: "yes", False: "NO", None: "n/a"}


def summary_tail(summary: dict, *, heading: str = "the paper's claims:", form: str = "verdict",
                 before_time: Sequence[str] = ()) -> list[str]:
    """The end of a study's printed summary: a blank line, ``heading``, every claim, then
    ``before_time`` and the run time (``summary["elapsed_seconds"]``, when recorded).

    Parameters
    ----------
    summary : dict
        The study's summary (its ``claims`` list and ``elapsed_seconds``).
    heading : str
        The line above the claims.
    form : {"verdict", "holds"}
        ``"verdict"``: each claim as ``[verdict] claim`` with its ``measured`` text and its
        criterion (claim rows of :func:`make_claim`); ``"holds"``: as ``[yes|NO|n/a] claim —
        paper: ...`` with ``this run: observed`` (the claim rows of
        :mod:`rbmviz.reproduce.tap_summary`, which carry ``holds`` and ``observed``).
    before_time : sequence of str
        Lines printed after the claims, before the run time.

    Returns
    -------
    list of str
        The lines.

    Raises
    ------
    ValueError
        For an unknown ``form``.
    """
    if form not in ("verdict", "holds"):
        raise ValueError(f"form must be 'verdict' or 'holds', got {form!r}")
    lines = ["", heading]
    for c in summary.get("claims") or []:
        if form == "verdict":
            lines.append(f"  [{c['verdict']}] {c['claim']}")
            if c["measured"]:
                lines.append(f"      measured: {c['measured']}")
            indent = "      "
        else:
            lines.append(f"  [{_HOLDS[c['holds']]:>3}] {c['claim']} — paper: {c['paper']}")
            lines.append(f"        this run: {c['observed']}")
            indent = "        "
        if c.get("criterion"):
            lines.append(f"{indent}criterion: {c['criterion']} "
                         f"(judged: {judged_text(c.get('judged'))})")
    lines += list(before_time)
    if summary.get("elapsed_seconds") is not None:
        lines.append(f"run time: {summary['elapsed_seconds']:.1f} s")
    return lines


def save(out: str | os.PathLike, summary: dict, tables: Mapping[str, Any], *,
         figure: Callable[[], Any] | None = None, title: str = "",
         files: Sequence[str] | None = None, overwrite: bool = False,
         require_empty: bool = False, clean: bool = False,
         streamed: Iterable[str] = ()) -> list[Path]:
    """Write a study's results into directory ``out``: ``<name>.csv`` for every table (in
    order), ``summary.json``, and ``figure.html`` (HoloViews, Bokeh resources inline so that
    it opens offline) — each file whole or not at all, through a temporary file renamed into
    place (:mod:`rbmviz._files`).

    Parameters
    ----------
    out : str or os.PathLike
        Output directory (created when missing).
    summary : dict
        The study's summary (numpy numbers are written as JSON numbers).
    tables : mapping of str to pandas.DataFrame
        ``{name: table}``, each written without its index as ``<name>.csv``.
    figure : callable, optional
        Returns the study's HoloViews figure (called only here); None writes no
        ``figure.html``.
    title : str
        Title of the HTML page.
    files : sequence of str, optional
        The result files the study writes into ``out``; when given, ``out`` is checked first
        (:func:`rbmviz.reproduce._io.check_out_dir`: refused where it would replace them,
        unless ``overwrite``).
    overwrite : bool
        Replace the result files of an existing ``out``.
    require_empty : bool
        With ``files``: refuse any existing, non-empty ``out`` unless ``overwrite``.
    clean : bool
        With ``files``: once the new files are in place, remove those of ``files`` this call
        did not write (e.g. an earlier ``figure.html`` when no figure is drawn now).
    streamed : iterable of str
        Tables already streamed into ``out`` while the study ran (a sweep's ``records``):
        their CSV file is written only when missing or with ``overwrite``.

    Returns
    -------
    list of pathlib.Path
        The result files, in the order written (a streamed table's too).

    Raises
    ------
    FileExistsError, NotADirectoryError, PermissionError, ValueError
        From the check of ``out`` (with ``files``), before anything is written.
    """
    out = Path(out)
    if files is not None:
        _io.check_out_dir(out, overwrite, files, require_empty=require_empty)
    out.mkdir(parents=True, exist_ok=True)
    streamed = set(streamed)
    paths = []
    for name, frame in tables.items():
        path = out / f"{name}.csv"
        if name not in streamed or overwrite or not path.exists():
            _io.write_csv(path, frame)
        paths.append(path)
    _io.write_json(out / "summary.json", summary)
    paths.append(out / "summary.json")
    if figure is not None:
        import holoviews as hv
        hv.extension("bokeh", logo=False)       # before the figure is built: its options need it
        paths.append(_io.save_figure(out / "figure.html", figure(), resources="inline",
                                     title=title))
    if clean and files is not None:
        _io.remove_unwritten(out, files, paths)
    return paths


_save = save


def study_summary(lines: Callable[[dict], Iterable[str]], *, command: str, module: str,
                  heading: str = "the paper's claims:", form: str = "verdict",
                  before_time: Callable[[dict], Sequence[str]] | None = None
                  ) -> Callable[[dict], str]:
    """A study's ``format_summary``: its own lines, then :func:`summary_tail`.

    Parameters
    ----------
    lines : callable
        ``lines(summary)``: the study's lines (its settings, its tables).
    command : str
        The command that prints it (named in the docstring).
    module : str
        The study's module (``__name__``), which the function belongs to.
    heading, form : str
        See :func:`summary_tail`.
    before_time : callable, optional
        ``before_time(summary)``: lines between the claims and the run time.

    Returns
    -------
    callable
        ``format_summary(summary) -> str``.
    """
    def format_summary(summary: dict) -> str:
        text = list(lines(summary))
        text += summary_tail(summary, heading=heading, form=form,
                             before_time=before_time(summary) if before_time else ())
        return "\n".join(text)

    format_summary.__doc__ = f"""The summary as text (printed by ``{command}``).

    Parameters
    ----------
    summary : dict
        The summary (as returned by ``summarize``).

    Returns
    -------
    str
        The text: the study's settings and tables, then its claims and run time
        (:func:`rbmviz.reproduce.report.summary_tail`).
    """
    format_summary.__module__, format_summary.__qualname__ = module, "format_summary"
    return format_summary


def study_saver(*, tables: Callable[[Any], Mapping[str, Any]],
                figure: Callable[[Any, dict], Any], title: str | Callable[[dict], str],
                module: str, what: str, files: Sequence[str] | None = None,
                require_empty: bool = False, clean: bool = False,
                streamed: Iterable[str] = ()) -> Callable[..., list[Path]]:
    """A study's ``save(results, summary, out, *, overwrite=False, html=True)``: its results
    through :func:`save`.

    Parameters
    ----------
    tables : callable
        ``tables(results)``: ``{name: pandas.DataFrame}`` written as ``<name>.csv``.
    figure : callable
        ``figure(results, summary)``: the study's HoloViews figure.
    title : str or callable
        Title of the HTML page (``title(summary)`` when callable).
    module : str
        The study's module (``__name__``), which the function belongs to.
    what : str
        What ``results`` is, in the docstring.
    files, require_empty, clean, streamed
        See :func:`save`.

    Returns
    -------
    callable
        ``save(results, summary, out, *, overwrite=False, html=True) -> list of Path``.
    """
    streamed = tuple(streamed)

    def save(results: Any, summary: dict, out: str | os.PathLike, *, overwrite: bool = False,
             html: bool = True) -> list[Path]:
        return _save(out, summary, tables(results),
                     figure=(lambda: figure(results, summary)) if html else None,
                     title=title(summary) if callable(title) else title, files=files,
                     overwrite=overwrite, require_empty=require_empty, clean=clean,
                     streamed=streamed)

    refused = ("An existing, non-empty ``out`` is refused (``FileExistsError``) unless "
               "``overwrite``, which replaces only these files." if require_empty else
               "An ``out`` already holding them is refused (``FileExistsError``) unless "
               "``overwrite``." if files is not None else
               "``out`` is checked before the runs start.")
    kept = (" (a table streamed there while the study ran is written only when missing or "
            "with ``overwrite``)" if streamed else "")
    save.__doc__ = f"""Write the study's tables (``<name>.csv``){kept}, ``summary.json`` and
    ``figure.html`` (HoloViews, Bokeh resources inline so it opens offline) to directory
    ``out``, each file whole or not at all (:func:`rbmviz.reproduce.report.save`).

    {refused}

    Parameters
    ----------
    results : pandas.DataFrame or dict
        {what}
    summary : dict
        The summary (as returned by ``summarize``).
    out : str or os.PathLike
        Output directory.
    overwrite : bool
        Replace the files of an existing ``out``.
    html : bool
        Also write ``figure.html``.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    save.__module__, save.__qualname__ = module, "save"
    return save


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
