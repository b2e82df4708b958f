"""The report of a run (:mod:`rbmviz.reproduce.report`, *The report of a run*): the tail of
every study's printed summary (its claims, then the run time) and the files a study saves
(tables as CSV, the summary as JSON, the figure as HTML), each whole or not at all.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import _io
from .claims import judged_text

__all__ = ["summary_tail", "save", "study_summary", "study_saver"]

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
