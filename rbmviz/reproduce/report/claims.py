"""Claim rows and scorecards of the reproductions (:mod:`rbmviz.reproduce.report`, *One claim
row* and *Scorecards*): :func:`make_claim` makes a claim check's verdict row, :func:`claim_rows`
and :func:`results_rows` turn a summary's claims into uniform rows, :func:`claims_markdown`
renders them as a Markdown table.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable

__all__ = ["VERDICTS", "make_claim", "status", "judged_text", "claim_rows", "results_rows",
           "claims_markdown"]

#: the verdicts a claim check can return (a reason in parentheses may follow)
VERDICTS = ("agrees", "differs", "inconclusive", "not run", "not comparable")


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
