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

One module for each: :mod:`~rbmviz.reproduce.report.claims` (claim rows and scorecards),
:mod:`~rbmviz.reproduce.report.writer` (the printed summary's tail and the saved files) and
:mod:`~rbmviz.reproduce.report.prose` (the markers of numbers in prose); this package
re-exports their names.
"""
from __future__ import annotations

from .claims import (VERDICTS, _cell, claim_rows, claims_markdown, judged_text,  # noqa: F401
                     make_claim, results_rows, status)
from .prose import check, evaluate, lookup, render
from .writer import save, study_saver, study_summary, summary_tail

__all__ = ["VERDICTS", "make_claim", "status", "claim_rows", "results_rows", "claims_markdown",
           "lookup", "evaluate", "check", "render", "judged_text", "summary_tail", "save",
           "study_summary", "study_saver"]
