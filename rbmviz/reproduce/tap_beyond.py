"""The rest of Tramel et al. (2018): adaTAP vs TAP (App. D, Fig. 10), deep TAP machines
(App. E, Fig. 11) and the TAP / AIS / pseudo-likelihood comparison (App. F, Fig. 12) —
``rbmviz reproduce tap --study adatap|dbm|fig12 [--quick]`` (the TAP-beyond theory page of the documentation).

* :func:`study_adatap` (Fig. 10): one binary RBM per inference method (Alg. 1 "tap", Alg. 3
  "adatap") and fixed iteration count (3, 10, 100), trained with Alg. 2 (K = M, damping 0.5,
  plain SGD) on the first binarised-MNIST images, all seeing the same mini-batches; the
  pseudo-likelihood (all sites, :func:`rbmviz.evaluate.pseudo_log_likelihood`) of training
  rows along training; and the wall time of one inference iteration for batches of 1, 10 and
  100 data-anchored runs of a 784×``timing_hidden`` RBM, with the adaTAP/TAP ratio.
* :func:`study_dbm` (Fig. 11): 2- and 3-hidden-layer binary DBMs (:mod:`rbmviz.dbm`),
  layer-wise TAP pretraining then joint TAP training; the TAP log-likelihood per unit of
  train and test images after pretraining (epoch 0) and along joint training.  Resumable.
* :func:`study_fig12` (Fig. 12): a 784×N_h RBM trained with Alg. 2 (Table 1 settings); at
  every epoch the TAP log-likelihood (eq. 39, :func:`rbmviz.reproduce.tap_run.evaluate_tap`),
  the AIS log-likelihood (Salakhutdinov & Murray's schedule, 14,501 temperatures, 100 runs)
  and the stochastic pseudo-likelihood over 100 of the 784 pixels on the same rows, and
  whether the three rise together (Spearman correlations over the checkpoints).  Resumable.

Each study is a module of its own — :mod:`rbmviz.reproduce.tap_adatap`,
:mod:`rbmviz.reproduce.tap_dbm`, :mod:`rbmviz.reproduce.tap_fig12` — with its settings
(``FULL``, the paper's where it gives them; ``QUICK``, a form that runs in about three minutes
on a laptop), its run and its claims.  This module runs one of them (:func:`run`), writes its
files (:func:`save`, through :func:`rbmviz.reproduce.report.save`) and is its command line
(:func:`run_study`); it re-exports the studies' public names.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from . import _io, report, tap_adatap, tap_dbm, tap_fig12
from ..datasets import DatasetNotFoundError
from ..viz.tap_beyond import study_figure
from .tap_adatap import ADATAP_NATS, ADATAP_RATIO, adatap_claims, study_adatap, time_inference
from .tap_dbm import study_dbm
from .tap_fig12 import (FIG12_GAP, FIG12_KNEE, FIG12_MIN_POINTS, FIG12_RHO, fig12_claims,
                        sm_schedule, study_fig12)

__all__ = ["STUDIES", "FULL", "QUICK", "NOTES", "time_inference", "study_adatap", "study_dbm",
           "study_fig12", "fig12_claims", "adatap_claims", "run", "save", "add_arguments",
           "run_study", "sm_schedule", "ADATAP_NATS", "ADATAP_RATIO", "FIG12_KNEE",
           "FIG12_MIN_POINTS", "FIG12_RHO", "FIG12_GAP"]

#: the study modules, by name on the command line
_MODULES = {"adatap": tap_adatap, "dbm": tap_dbm, "fig12": tap_fig12}
STUDIES = tuple(_MODULES)
#: the paper's settings of every study (each module's ``FULL``)
FULL = {name: m.FULL for name, m in _MODULES.items()}
#: the quick forms (each module's ``QUICK``)
QUICK = {name: m.QUICK for name, m in _MODULES.items()}
#: the notes printed with each study's summary (each module's ``NOTES``)
NOTES = {name: m.NOTES for name, m in _MODULES.items()}


_STUDY = {"adatap": study_adatap, "dbm": study_dbm, "fig12": study_fig12}


def run(name: str, *, quick: bool = False, progress: bool = False,
        **overrides: Any) -> tuple[dict, dict]:
    """Run study ``name`` with the ``QUICK`` or ``FULL`` settings updated by ``overrides``;
    returns ``(tables, summary)`` (the summary holds the settings, notes and wall time).

    Parameters
    ----------
    name : str
        The study: ``"adatap"``, ``"dbm"`` or ``"fig12"``.
    quick : bool
        The quick settings (minutes) instead of the paper's.
    progress : bool
        Show progress (a tqdm bar).
    **overrides
        Settings replacing the study's.

    Returns
    -------
    tuple of dict
        ``(tables, summary)``: the study's tables (``{name: pandas.DataFrame}``) and its
        summary, with the settings, notes and wall time.

    Raises
    ------
    ValueError
        For an unknown study.
    """
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; expected one of {list(STUDIES)}")
    settings = {**(QUICK if quick else FULL)[name], **overrides}
    t = time.perf_counter()
    tables, summary = _STUDY[name](**settings, progress=progress)
    summary = {"study": name, "form": "quick" if quick else "full",
               "settings": {k: v for k, v in settings.items() if k != "data"}, **summary,
               "notes": NOTES[name], "elapsed_seconds": time.perf_counter() - t}
    return tables, summary


def save(name: str, tables: dict, summary: dict, out: str | os.PathLike, *, overwrite: bool = False,
         html: bool = True) -> list[Path]:
    """Write ``<table>.csv``, ``summary.json`` and ``figure.html`` of study ``name`` to
    ``out``; returns the written paths.

    Parameters
    ----------
    name : str
        The study.
    tables : dict
        ``{name: pandas.DataFrame}``, the experiment's tables.
    summary : dict
        The summary (as returned by ``summarize``).
    out : str or os.PathLike
        Output directory.
    overwrite : bool
        Replace the files of an existing, non-empty ``out``.
    html : bool
        Also write ``figure.html`` (HoloViews, Bokeh resources inline so it opens offline).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    files = [f"{t}.csv" for t in tables] + ["summary.json"] + (["figure.html"] if html else [])
    return report.save(out, summary, tables,
                       figure=(lambda: study_figure(name, tables)) if html else None,
                       title=f"Tramel et al. 2018: {name}", files=files, overwrite=overwrite)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--quick`` option of ``rbmviz reproduce tap --study ...``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    g = parser.add_argument_group("studies (--study)")
    g.add_argument("--quick", action="store_true",
                   help="with --study: the ~3-minute form (smaller models, fewer images and "
                        "epochs) instead of the paper's settings")


def run_study(name: str, args: argparse.Namespace) -> int:
    """``rbmviz reproduce tap --study name``: run, print the summary, save to ``--out``;
    ``--state DIR`` makes the dbm and fig12 studies resumable.  Returns the exit code.

    Parameters
    ----------
    name : str
        The study.
    args : argparse.Namespace
        The parsed arguments.

    Returns
    -------
    int
        The exit code.
    """
    out = getattr(args, "out", None)
    if out:
        _io.check_out_dir(out, getattr(args, "overwrite", False),
                          ("summary.json", "curves.csv", "timing.csv", "figure.html"))
    kw = {"seed": getattr(args, "seed", 0) or 0}
    if name in ("dbm", "fig12") and getattr(args, "state", None):
        kw["state"] = args.state
    try:
        tables, summary = run(name, quick=bool(getattr(args, "quick", False)),
                              progress=not getattr(args, "quiet", False), **kw)
    except KeyboardInterrupt:
        print(f"interrupted; nothing written{' (state kept in --state)' if kw.get('state') else ''}",
              file=sys.stderr)
        return 130
    except DatasetNotFoundError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in summary.items() if k not in ("settings",)}, indent=2,
                     default=_io.json_default))
    if out:
        paths = save(name, tables, summary, out, overwrite=getattr(args, "overwrite", False),
                     html=not getattr(args, "no_html", False))
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0
