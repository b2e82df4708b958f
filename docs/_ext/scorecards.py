"""The scorecard that opens each paper page, generated from the runs' ``summary.json`` files.

One row per claim of the paper, one column per run folder of ``results/<paper>/`` (runs that
share no claim — the TAP paper's studies beyond Sec. VII — get a table of their own).  Under the
header, one row states each run's **extent** against the paper's own protocol — "complete"
when every size the paper states is met, else "partial" with what falls short (epochs, trials,
rows, evaluation rows) — so a verdict on a quick form is never read as a verdict on the
paper's experiment.  Each cell is the run's verdict with the number it judged
(the ``ours`` of :func:`rbmviz.reproduce.report.claim_rows`, when it is one short number); the runs' own claims tables (the criteria and
what was measured) follow on the page.
"""
from __future__ import annotations

from pathlib import Path

#: the paper's protocol per kind of run, in the run settings' own names: ``(predicate on the
#: settings, {setting: the paper's value})``; the first matching entry applies
PROTOCOLS = {
    "cd-bias": [(lambda s: True, {"reps": 25, "iterations": 50_000})],
    "dc-programming": [
        (lambda s: s.get("n_hidden") == 4, {"trials": 25, "epochs": 50_000}),
        (lambda s: s.get("study") == "ssd", {"trials": 10, "epochs": 250, "n_hidden": 500,
                                             "limit": None}),
        (lambda s: True, {"trials": 10, "epochs": 200, "n_hidden": 500, "limit": None}),
    ],
    "tap-machines": [
        (lambda s: s.get("dataset") == "cbcl", {"epochs": 500, "samples": 2429}),
        # the studies beyond Sec. VII (rbmviz reproduce tap --study): Fig. 10 (App. D),
        # Fig. 11 (App. E; 3,000 joint epochs after 50 of pretraining), Fig. 12 (App. F)
        (lambda s: "pl_rows" in s, {"hidden": 500, "samples": 5000}),
        (lambda s: "pretrain_epochs" in s, {"epochs": 3000, "pretrain_epochs": 50,
                                            "samples": 60_000, "test_samples": 10_000}),
        (lambda s: "ais_chains" in s, {"epochs": 100, "samples": 60_000, "hidden": 500,
                                       "eval_samples": 1000, "ais_chains": 100}),
        (lambda s: True, {"epochs": 100, "samples": 60_000, "eval_samples": 10_000}),
    ],
}
#: how a shortfall of each setting reads
_NAMES = {"reps": "repetitions", "iterations": "iterations", "trials": "trials",
          "epochs": "epochs", "samples": "training rows", "eval_samples": "evaluation rows",
          "n_hidden": "hidden units", "limit": "rows", "hidden": "hidden units",
          "pretrain_epochs": "pretraining epochs", "test_samples": "test rows",
          "ais_chains": "AIS runs"}
_SHORT = {"agrees": "agrees", "differs": "**differs**", "inconclusive": "inconclusive",
          "not run": "not run", "not comparable": "not comparable"}


def extent(settings: dict, protocol: dict) -> str:
    """``"complete"`` or ``"partial: 60 of 200 epochs, 1 of 10 trials"``.

    Parameters
    ----------
    settings : dict
        A run's settings (its ``summary.json``).
    protocol : dict
        The paper's sizes in the same names; ``None`` for ``limit`` means "every row".

    Returns
    -------
    str
        The run's extent against the paper's protocol.
    """
    short = []
    for key, want in protocol.items():
        have = settings.get(key)
        if key == "limit":
            if have is not None:
                short.append(f"the first {have:,} rows")
            continue
        if key == "n_hidden" and have is not None and have != want:
            short.append(f"{have:,} hidden units, not {want:,}")
            continue
        if isinstance(have, (int, float)) and have < want:
            short.append(f"{have:,g} of {want:,g} {_NAMES.get(key, key)}")
    return "complete" if not short else "partial: " + ", ".join(short)


def protocol(paper: str, settings: dict) -> dict:
    """The paper's protocol that applies to a run of ``paper`` with ``settings``."""
    return next(p for match, p in PROTOCOLS.get(paper, [(lambda s: True, {})]) if match(settings))


def _groups(runs: dict) -> list[list[str]]:
    """The runs in groups that judge common claims (runs of studies with claims of their own —
    the TAP paper's Figs. 10–12 beside its Sec. VII — get a table each), in the runs' order."""
    claims = {run: {r["claim"] for r in rows} for run, rows in runs.items()}
    groups: list[list[str]] = []
    for run in runs:
        joined = [g for g in groups if any(claims[run] & claims[o] for o in g)]
        merged = [o for g in joined for o in g] + [run]
        groups = [g for g in groups if g not in joined] + [merged]
    return sorted((sorted(g, key=list(runs).index) for g in groups),
                  key=lambda g: list(runs).index(g[0]))


def _table(runs: dict, extents: dict) -> list[str]:
    """One scorecard table: a row per claim, a column per run."""
    from rbmviz.reproduce import report
    claims: dict[str, str] = {}
    for rows in runs.values():
        for r in rows:
            claims.setdefault(r["claim"], str(r["paper"]))
    names = {run: ("quick form" if run == "." else f"`{run}/`") for run in runs}
    lines = ["| claim | the paper | " + " | ".join(names.values()) + " |",
             "|---|---|" + "---|" * len(runs),
             "| *extent of the run against the paper's protocol* | | "
             + " | ".join(f"*{extents[r]}*" for r in runs) + " |"]
    for claim, paper_value in claims.items():
        cells = []
        for rows in runs.values():
            match = [r for r in rows if r["claim"] == claim]
            if not match:
                cells.append("—")
                continue
            judged = match[0]["ours"]
            cell = _SHORT.get(match[0]["status"], match[0]["status"])
            cells.append(f"{cell} ({judged})" if judged and judged != "-" and len(judged) <= 24
                         else cell)
        lines.append("| " + " | ".join(report._cell(x) for x in (claim, paper_value, *cells)) + " |")
    return lines


def scorecard(paper: str, src: Path, order=lambda p: p.as_posix()) -> str:
    """The Markdown scorecard of ``results/<paper>`` (``src``): one table per group of runs
    that judge common claims.

    Parameters
    ----------
    paper : str
        The paper's results folder name (a key of :data:`PROTOCOLS`).
    src : Path
        ``results/<paper>``.
    order : callable
        Sort key of the run folders (relative paths).

    Returns
    -------
    str
        The table and a one-line tally.
    """
    import json

    from rbmviz.reproduce import report
    runs, extents = {}, {}
    for summary in sorted(src.rglob("summary.json"), key=lambda p: order(p.relative_to(src))):
        try:
            rows = report.results_rows(summary.parent)
        except ValueError:          # a summary without a claims list
            continue
        name = summary.parent.relative_to(src).as_posix()
        runs[name] = rows
        settings = json.loads(summary.read_text(encoding="utf-8")).get("settings") or {}
        extents[name] = extent(settings, protocol(paper, settings))
    if not runs:
        return "No run of this paper with judged claims is in the repository.\n"
    lines: list[str] = []
    for group in _groups(runs):
        if lines:
            lines.append("")
        lines += _table({r: runs[r] for r in group}, {r: extents[r] for r in group})
    counts: dict[str, int] = {}
    for rows in runs.values():
        for r in rows:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
    plural = {"agrees": "agree", "differs": "differ"}
    total = ", ".join(f"{n} {plural.get(s, s) if n > 1 else s}" for s, n in counts.items())
    return ("\n".join(lines) + "\n\n" + f"Over all runs: {total} (one verdict per claim and run). "
            "Each column is a folder of `results/` described below, with its extent against "
            "the paper's protocol, its figures and its claims table: the numbers judged and "
            "the criterion of every verdict; a cell shows the verdict and the number it "
            "judged.\n")
