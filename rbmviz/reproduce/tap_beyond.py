"""The rest of Tramel et al. (2018): adaTAP vs TAP (App. D, Fig. 10), deep TAP machines
(App. E, Fig. 11) and the TAP / AIS / pseudo-likelihood comparison (App. F, Fig. 12) —
``rbmviz reproduce tap --study adatap|dbm|fig12 [--quick] [options]`` (the TAP-beyond theory
page of the documentation).

* :func:`study_adatap` (Fig. 10): one binary RBM per inference method (Alg. 1 "tap", Alg. 3
  "adatap") and fixed iteration count (3, 10, 100), trained with Alg. 2 (K = M, damping 0.5,
  plain SGD) on the first binarised-MNIST images, all seeing the same mini-batches; the
  pseudo-likelihood (all sites, :func:`rbmviz.evaluate.pseudo_log_likelihood`) of training
  rows along training; and the wall time of one inference iteration for batches of 1, 10 and
  100 data-anchored runs of a 784×``timing_hidden`` RBM, with the adaTAP/TAP ratio.
* :func:`study_dbm` (Fig. 11): 2- and 3-hidden-layer binary DBMs (:mod:`rbmviz.dbm`),
  layer-wise TAP pretraining then joint TAP training; the TAP log-likelihood per unit of
  train and test images after pretraining (epoch 0) and along joint training, and whether
  joint training raises both (:func:`dbm_claims`).  Resumable.
* :func:`study_fig12` (Fig. 12): a 784×N_h RBM trained with Alg. 2 (Table 1 settings); at
  every epoch the TAP log-likelihood (eq. 39, :func:`rbmviz.reproduce.tap_eval.evaluate_tap`),
  the AIS log-likelihood (Salakhutdinov & Murray's schedule, 14,501 temperatures, 100 runs)
  and the stochastic pseudo-likelihood over 100 of the 784 pixels on the same rows, and
  whether the three rise together (Spearman correlations over the checkpoints).  Resumable.

Each study is a module of its own — :mod:`rbmviz.reproduce.tap_adatap`,
:mod:`rbmviz.reproduce.tap_dbm`, :mod:`rbmviz.reproduce.tap_fig12` — with its settings class
(``Settings``: defaults the paper's where it gives them, a ``--quick`` preset that runs in about
three minutes on a laptop; ``FULL`` and ``QUICK`` are those as dicts), its run and its claims.
This module runs one of them (:func:`run`), writes its files (:func:`save`, through
:func:`rbmviz.reproduce.report.save`) and is its command line (:func:`add_arguments`,
:func:`run_study`): one option per setting, e.g. ::

    rbmviz reproduce tap --study fig12 --hidden 200 --samples 20000 --epochs 30 \
        --eval-samples 500 --ais-chains 100 --ais-thin 1 --state DIR --out DIR
    rbmviz reproduce tap --study dbm --models 784-200-200,784-200-200-200 --epochs 100

An option of the Sec. VII reproduction that a study does not take (``--dataset``, ``--ps``,
...) is refused with ``--study``.  It re-exports the studies' public names.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import param

from . import _io, _study, report, tap_adatap, tap_dbm, tap_fig12
from ..datasets import DatasetNotFoundError
from ..viz.tap_beyond import study_figure
from .tap_adatap import ADATAP_NATS, ADATAP_RATIO, adatap_claims, study_adatap, time_inference
from .tap_dbm import DBM_MIN_EPOCHS, DBM_RISE, dbm_claims, study_dbm
from .tap_fig12 import (FIG12_GAP, FIG12_KNEE, FIG12_MIN_POINTS, FIG12_RHO, fig12_claims,
                        sm_schedule, study_fig12)

__all__ = ["STUDIES", "RESUMABLE", "FULL", "QUICK", "NOTES", "time_inference", "study_adatap",
           "study_dbm", "study_fig12", "fig12_claims", "adatap_claims", "dbm_claims",
           "settings_class", "run", "save", "add_arguments", "settings_from_args", "run_study",
           "sm_schedule", "ADATAP_NATS", "ADATAP_RATIO", "FIG12_KNEE", "FIG12_MIN_POINTS",
           "FIG12_RHO", "FIG12_GAP", "DBM_MIN_EPOCHS", "DBM_RISE"]

#: the study modules, by name on the command line
_MODULES = {"adatap": tap_adatap, "dbm": tap_dbm, "fig12": tap_fig12}
STUDIES = tuple(_MODULES)
#: the paper's settings of every study (each module's ``FULL``: its ``Settings``' defaults)
FULL = {name: m.FULL for name, m in _MODULES.items()}
#: the quick forms (each module's ``QUICK``: the defaults with its ``--quick`` preset)
QUICK = {name: m.QUICK for name, m in _MODULES.items()}
#: the notes printed with each study's summary (each module's ``NOTES``)
NOTES = {name: m.NOTES for name, m in _MODULES.items()}


_STUDY = {"adatap": study_adatap, "dbm": study_dbm, "fig12": study_fig12}
#: the studies that keep a resumable state (``state=``, ``--state DIR``)
RESUMABLE = ("dbm", "fig12")


def settings_class(name: str) -> type:
    """The settings class of study ``name`` (each study module's ``Settings``).

    Parameters
    ----------
    name : str
        The study: ``"adatap"``, ``"dbm"`` or ``"fig12"``.

    Returns
    -------
    type
        A :class:`rbmviz.reproduce._study.StudySettings` subclass.

    Raises
    ------
    ValueError
        For an unknown study.
    """
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; expected one of {list(STUDIES)}")
    return _MODULES[name].Settings


def run(name: str, settings: Any = None, *, quick: bool = False, progress: bool = False,
        state: str | os.PathLike | None = None, data: Any = None,
        **overrides: Any) -> tuple[dict, dict]:
    """Run study ``name`` with its declared settings (the paper's; with ``quick`` the
    ``--quick`` preset), updated by ``settings`` and ``overrides``; returns ``(tables,
    summary)`` (the summary holds the settings, notes and wall time).

    Parameters
    ----------
    name : str
        The study: ``"adatap"``, ``"dbm"`` or ``"fig12"``.
    settings : StudySettings or mapping, optional
        Settings of the study's class (:func:`settings_class`).
    quick : bool
        The quick settings (minutes) instead of the paper's.
    progress : bool
        Show progress (a tqdm bar).
    state : str or os.PathLike, optional
        Directory of the resumable state (dbm and fig12).
    data : numpy.ndarray or tuple, optional
        Training rows (dbm: training and test rows) instead of binarised MNIST (tests).
    **overrides
        Settings replacing those.

    Returns
    -------
    tuple of dict
        ``(tables, summary)``: the study's tables (``{name: pandas.DataFrame}``) and its
        summary, with the settings, notes and wall time.

    Raises
    ------
    ValueError
        For an unknown study, a setting out of its bounds, or ``state`` with adatap.
    TypeError
        For a setting the study does not have.
    """
    cls = settings_class(name)
    chosen = _study.values(_study.resolve(cls, settings, overrides, quick=quick))
    extra = {}
    if state is not None:
        if name not in RESUMABLE:
            raise ValueError(f"state: study {name!r} is not resumable (only {list(RESUMABLE)})")
        extra["state"] = state
    if data is not None:
        extra["data"] = data
    t = time.perf_counter()
    tables, summary = _STUDY[name](**chosen, **extra, progress=progress)
    recorded = dict(chosen, **({"state": os.fspath(state)} if state is not None else {}))
    summary = {"study": name, "form": "quick" if quick else "full", "settings": recorded,
               **summary, "notes": NOTES[name], "elapsed_seconds": time.perf_counter() - t}
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


#: the options every study takes besides its settings (output, execution)
_COMMON = ("study", "quick", "out", "overwrite", "no_html", "quiet")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``rbmviz reproduce tap --study ...``: one per setting of the studies'
    settings classes, and ``--quick``.

    An option of the Sec. VII reproduction with the same name (``--hidden``, ``--samples``,
    ``--epochs``, ``--eval-samples``, ``--test-samples``, ``--learning-rate``,
    ``--batch-size``, ``--eval-every``, ``--seed``) is reused, its help extended with what it
    sets in each study; the others are added.  :func:`run_study` refuses an option the chosen
    study does not take.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.

    Raises
    ------
    TypeError
        When two studies declare a setting of the same option with different types.
    """
    fmt = _study.format_value
    existing = parser._option_string_actions
    g = parser.add_argument_group(
        "studies (--study adatap|dbm|fig12: the options below and --seed, --state (dbm, "
        "fig12), --out, --overwrite, --no-html, --quiet; any other option is refused)")
    uses: dict[str, list] = {}
    for study in STUDIES:
        cls = settings_class(study)
        for n, p in _study.settings(cls).items():
            if p.precedence is None or p.precedence >= 0:
                uses.setdefault(_study.option(cls, n), []).append((study, cls, n, p))
    dests: dict[str, dict] = {study: {} for study in STUDIES}
    for flag, rows in uses.items():
        docs: dict[str, list] = {}
        for study, cls, n, p in rows:
            text = f"{study} {fmt(p.default)}"
            if n in cls.QUICK:
                text += f", --quick {fmt(cls.QUICK[n])}"
            docs.setdefault((p.doc or "").strip(), []).append(text)
        about = "; ".join(f"{doc} ({'; '.join(v)})" for doc, v in docs.items())
        if flag in existing:
            action = existing[flag]
            action.help = ((action.help or "").rstrip() + "; with --study: "
                           + about.replace("%", "%%"))
            dest = action.dest
        else:
            kinds = {repr(sorted((k, v) for k, v in _study.argument_kwargs(cls, n).items()
                                 if k != "metavar")) for _, cls, n, _ in rows}
            if len(kinds) > 1:
                raise TypeError(f"{flag} is declared with different types by the studies "
                                f"{[r[0] for r in rows]}")
            study, cls, n, _ = rows[0]
            dest = "study_" + n
            g.add_argument(flag, dest=dest, help="with --study: " + about.replace("%", "%%"),
                           **_study.argument_kwargs(cls, n))
        for study, cls, n, _ in rows:
            dests[study][n] = dest
    if "--quick" not in existing:
        g.add_argument("--quick", action="store_true",
                       help="with --study: the ~3-minute form (smaller models, fewer images and "
                            "epochs) instead of the paper's settings; explicit options "
                            "override it")
    parser.set_defaults(_study_dests=dests, _check_args=check_args)


def check_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Refuse a study's own option (``--models``, ``--ais-chains``, ...) without ``--study``:
    the Sec. VII reproduction does not take it (a usage error naming it).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments.
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    if getattr(args, "study", None):
        return
    dests = getattr(args, "_study_dests", None) or {}
    own = {d: study for study, m in dests.items() for d in m.values() if d.startswith("study_")}
    for dest, flag in _given(args).items():
        if dest in own:
            users = sorted({s for s, m in dests.items() if dest in m.values()})
            parser.error(f"{flag} applies only with --study ({'|'.join(users)})")


def _usage_error(args: argparse.Namespace, message: str) -> None:
    parser = getattr(args, "_experiment_parser", None)
    if parser is not None:
        parser.error(message)                 # exit code 2
    raise ValueError(message)


def _given(args: argparse.Namespace) -> dict[str, str]:
    """``{dest: option}`` of the options written on the command line (a namespace built by
    hand: those not None or False)."""
    given = getattr(args, "_given_options", None)
    if given is not None:
        return dict(given)
    return {k: "--" + k.replace("_", "-") for k, v in vars(args).items()
            if not k.startswith("_") and v is not None and v is not False}


def _from_option(cls: type, name: str, value: Any, option: str) -> Any:
    """The value of setting ``name`` from its option's parsed ``value`` (text of a list, or
    of a shared Sec. VII option such as ``--hidden N,N,...`` taking one number here)."""
    p = _study.settings(cls)[name]
    kind = _study.list_kind(p)
    if kind is not None:
        return _study.parse_text(value, kind, option) if isinstance(value, str) else value
    if isinstance(value, str) and not isinstance(p, param.Selector):
        conv = int if isinstance(p, param.Integer) else float
        try:
            return conv(value.strip())
        except ValueError:
            raise ValueError(f"{option} takes one {conv.__name__} value with --study, got "
                             f"{value!r}") from None
    return value


def settings_from_args(name: str, args: argparse.Namespace) -> _study.StudySettings:
    """The settings of study ``name`` from the parsed command line: the declared defaults,
    the ``--quick`` preset, then the options given.  An option the study does not take, or a
    bad value, is a usage error naming the option.

    Parameters
    ----------
    name : str
        The study.
    args : argparse.Namespace
        The parsed arguments.

    Returns
    -------
    StudySettings
        The settings.
    """
    cls = settings_class(name)
    given = _given(args)
    dests = (getattr(args, "_study_dests", None) or {}).get(name) or {
        n: n for n in _study.settings(cls)}
    allowed = set(dests.values()) | set(_COMMON) | ({"state"} if name in RESUMABLE else set())
    refused = [flag for dest, flag in given.items() if dest not in allowed]
    if refused:
        takes = sorted(_study.option(cls, n) for n in dests) + ["--quick"]
        if name in RESUMABLE:
            takes.append("--state")
        _usage_error(args, f"{refused[0]} does not apply to --study {name}; it takes "
                           + ", ".join(takes) + " and the output options")
    values = {}
    for n, dest in dests.items():
        if dest not in given:
            continue
        flag = given[dest]
        try:
            values[n] = _from_option(cls, n, getattr(args, dest), flag)
            _study.resolve(cls, {n: values[n]})
        except (TypeError, ValueError) as exc:
            _usage_error(args, str(exc) if str(exc).startswith(flag) else f"argument {flag}: {exc}")
    return _study.resolve(cls, values, quick=bool(getattr(args, "quick", False)))


def run_study(name: str, args: argparse.Namespace) -> int:
    """``rbmviz reproduce tap --study name``: resolve the settings from the options
    (:func:`settings_from_args`), run, print the summary, save to ``--out``; ``--state DIR``
    makes the dbm and fig12 studies resumable.  Returns the exit code.

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
    settings = settings_from_args(name, args)
    out = getattr(args, "out", None)
    if out:
        _io.check_out_dir(out, getattr(args, "overwrite", False),
                          ("summary.json", "curves.csv", "timing.csv", "figure.html"))
    state = getattr(args, "state", None) if name in RESUMABLE else None
    try:
        tables, summary = run(name, settings, quick=bool(getattr(args, "quick", False)),
                              progress=not getattr(args, "quiet", False), state=state or None)
    except KeyboardInterrupt:
        print(f"interrupted; nothing written{' (state kept in --state)' if state else ''}",
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
