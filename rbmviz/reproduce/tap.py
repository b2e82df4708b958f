"""Reproduction of Tramel, Gabrié, Manoel, Caltagirone & Krzakala (2018), "A deterministic
and generalized framework for unsupervised learning with restricted Boltzmann machines"
(PRX 8, 041006), Sec. VII on binary-MNIST (the TAP theory page of the documentation).

Binary-MNIST RBMs (784 visible units, several ``N_h``) are trained with TAP Alg. 2
(``algorithm="tap"``, Table 1 settings: mini-batch M = 100, K = 100 TAP solutions per
batch, learning rate 0.005, ℓ2 strength 0.001, momentum 0.5).  At recorded epochs, from one
data-anchored initialisation per evaluation sample (eqs. 37–38; Alg. 1 run undamped to an
MSE change below 1e-12 — tighter than the paper's 1e-8, so that the counts measure distinct
fixed points, :data:`rbmviz.tap.COUNT_TOL` — and damped where that oscillates; see
:func:`evaluate_tap`):

* **learning curves** (Fig. 3): the TAP log-likelihood (eq. 39 — the unique converged
  solutions averaged uniformly) per example and per unit (÷ (N_v + N_h)), with its standard
  error over the samples; for models with N_h ≤ 16 also the exact log-likelihood;
* **solution counting** (Fig. 5): the number of unique TAP solutions (two solutions are one
  when ``a^v`` and ``a^h`` agree to 1e-4 — the paper does not give its criterion) and the
  TAP free energies 𝔽_RBM (eq. 36) of the unique solutions, their unweighted mean;
* **Isomap** (Figs. 6–7), for the counting model (N_h = 100 by default): one 2-D Isomap
  fitted on the unique solutions ``[a^v, a^h]`` of the last epoch, with those of earlier
  epochs (1, 3, 25, 100 when run) mapped into it; and one fitted on the evaluation digits of
  classes 3, 6, 7 with the visible magnetisations they converge to embedded alongside;
* **denoising** (Fig. 8) after training: held-out test images through a binary symmetric
  channel with flip probability p; the TAP denoiser (Alg. 1 with the channel field, from the
  OPE means) against the optimal pointwise estimator (OPE) and the nearest training image
  (1-NN, Hamming); score: Matthews correlation coefficient averaged over images.

The paper trains 100 epochs on all 60,000 images and evaluates on 10,000 training samples;
``epochs`` / ``samples`` (and ``eval_samples``, ``test_samples``, ``hidden``) shrink the
run to laptop size, e.g. ``rbmviz reproduce tap --epochs 5 --samples 2000 --eval-samples
1000 --test-samples 200 --hidden 25,100 --batch-size 20 --learning-rate 0.05`` (a few
minutes).  Smaller batches and a larger step than Table 1 matter in a short run: with
M = 100 and γ = 0.005 the weights grow out of their symmetric N(0, 10⁻⁶) start only after
several hundred updates (3 epochs of 10,000 images left the TAP log-likelihood per unit
unchanged to 3e-4).  What the short run shows is compared honestly with the paper's claims
in the summary.

Table 1's other data sets run the same protocol with ``--dataset real-mnist`` (MNIST in [0, 1],
truncated Gauss–Bernoulli visible units, eq. 94; γ decaying 1e-2 → 1e-5) and ``--dataset
cbcl`` (the 2,429 CBCL faces, truncated Gaussian visible units; N_h = 256, M = K = 20,
ε = 0.01, 500 epochs, 2,400 counting initialisations and the Fig. 7c map over every face),
their visible priors starting fitted to the data (:func:`rbmviz.tap.presets.init_priors_from_data`);
denoising is left out there (a binary-channel experiment).

Repetition of the protocol for N_h = ``hidden[i]`` starts from
``RBM(784, N_h, init="normal", scale=0.001, seed=seed + i)`` with the visible biases at the
logits of the pixel means (:func:`base_rate_biases`) and is trained with the Table 1
settings (the ``binary-mnist`` presets of :mod:`rbmviz.tap.presets`) but heavy-ball
momentum by default — Alg. 2's printed momentum term, the previous gradient unscaled by the
learning rate, stalled binary-MNIST training in our tests (``--momentum-form printed`` runs
it); everything is reproducible from ``seed``.
The work is split: :mod:`rbmviz.reproduce.tap_settings` (the settings, declared once as
:class:`Settings`, their check and the quick form), :mod:`rbmviz.reproduce.tap_run`
(training, resumable state), :mod:`rbmviz.reproduce.tap_eval` (the TAP evaluation, the
Isomap and denoising tables), :mod:`rbmviz.reproduce.tap_summary` (summary, claims, printed
table), :mod:`rbmviz.viz.tap` (figures); this module is the command line (its options derived
from :class:`Settings`) and the files written, and re-exports the public names of the others.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Sequence

from . import _io, report, tap_beyond
from ._study import values
from .tap_run import (DEFAULT_PS, PAPER, TABLES, _algorithm, _check_settings, _parse_list,
                      base_rate_biases, eval_schedule, evaluate_tap, run)
from .tap_settings import (FULL_DEFAULTS, QUICK_DEFAULTS, QUICK_DEFAULTS_REAL, QUICK_UPDATES,
                           Settings, check_settings, resolve_defaults, run_kwargs)
from .tap_summary import DATASETS, NOTES, claims, format_summary, summarize
from ..viz.tap import PARTS, reproduction_figure

if TYPE_CHECKING:
    import holoviews as hv

__all__ = ["PAPER", "TABLES", "FILES", "PARTS", "NOTES", "run", "evaluate_tap",
           "base_rate_biases", "summarize", "claims", "format_summary", "figure", "save",
           "check_out_dir", "eval_schedule", "add_arguments", "uses_settings", "main",
           "resolve_defaults", "Settings", "STUDIES"]

#: the studies beyond Sec. VII, run by :func:`rbmviz.reproduce.tap_beyond.run_study`
STUDIES = ("adatap", "dbm", "fig12")
FILES = tuple(f"{t}.csv" for t in TABLES) + ("summary.json", "figure.html")


def figure(tables: dict, parts: Sequence[str] = PARTS, *, cols: int = 3) -> hv.Layout:
    """The reproduction's figure: :func:`rbmviz.viz.tap.reproduction_figure`.

    Parameters
    ----------
    tables : dict
        ``{name: pandas.DataFrame}``, the experiment's tables.
    parts : sequence of str
        Panels of the figure, in order.
    cols : int
        Panels (or images) per row.

    Returns
    -------
    holoviews.Layout
        The figure.
    """
    return reproduction_figure(tables, parts, cols=cols)


def check_out_dir(out: str | os.PathLike, overwrite: bool = False) -> None:
    """Refuse (``FileExistsError``) an existing non-empty directory unless ``overwrite``,
    and a path that is not a directory (``NotADirectoryError``).

    Parameters
    ----------
    out : str or os.PathLike
        The output directory.
    overwrite : bool
        Replace the files of an existing, non-empty ``out``.
    """
    _io.check_out_dir(out, overwrite, FILES, require_empty=True)


save = report.study_saver(
    tables=lambda tables: {name: tables[name] for name in TABLES},
    figure=lambda tables, summary: figure(tables),
    title=lambda summary: "Tramel et al. 2018: TAP machines on "
                          + str((summary.get("settings") or {}).get("data", "binary-MNIST")),
    module=__name__, files=FILES, require_empty=True, clean=True,
    what="``{name: pandas.DataFrame}``, the experiment's tables (:data:`TABLES`).")


# ---------------------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``rbmviz reproduce tap`` that are not settings of the Sec. VII
    reproduction (those come from :class:`Settings`,
    :func:`rbmviz.cli.reproduce.add_settings_options`): ``--study`` and the studies' options
    (:func:`rbmviz.reproduce.tap_beyond.add_arguments`), resuming and output.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    g = parser.add_argument_group("studies beyond Sec. VII")
    g.add_argument("--study", choices=STUDIES, default=None,
                   help="instead of the Sec. VII reproduction, run a study beyond it: adaTAP "
                        "vs TAP (Fig. 10), deep TAP machines (Fig. 11) or the surrogate "
                        "consistency check (Fig. 12) — rbmviz.reproduce.tap_beyond")
    r = parser.add_argument_group("resuming (paper-scale runs take hours)")
    r.add_argument("--state", metavar="DIR",
                   help="keep the training state and evaluations of every epoch in DIR; "
                        "running the same command again continues where it stopped")
    r.add_argument("--save-epochs", default="none", metavar="E,E,...",
                   help="save each model at these epochs as DIR/nh<N_h>/model_epoch<E>.npz "
                        "(needs --state; default: none)")
    tap_beyond.add_arguments(parser)            # the studies' options
    o = parser.add_argument_group("output")
    o.add_argument("--out", metavar="DIR",
                   help="write curves.csv, solutions.csv, isomap.csv, data_map.csv, "
                        "denoising.csv, summary.json and figure.html here; refused if DIR "
                        "exists and is not empty (unless --overwrite). Without --out only the "
                        "summary is printed")
    o.add_argument("--overwrite", action="store_true",
                   help="replace those files in an existing DIR")
    o.add_argument("--no-html", action="store_true", help="do not write figure.html")
    o.add_argument("--quiet", action="store_true", help="no progress bar")


def uses_settings(args: argparse.Namespace) -> bool:
    """Whether the options given are those of :class:`Settings` (not with ``--study``, whose
    study reads the options itself, :func:`rbmviz.reproduce.tap_beyond.settings_from_args`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command-line arguments.

    Returns
    -------
    bool
        True without ``--study``.
    """
    return not getattr(args, "study", None)


def main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``rbmviz reproduce tap`` from parsed ``args``; returns the exit code.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command-line arguments; without ``--study``, ``args.study_settings`` the
        :class:`Settings` they give (:func:`rbmviz.cli.reproduce.settings_from_args`).
    parser : argparse.ArgumentParser
        The subcommand's parser.

    Returns
    -------
    int
        The exit code.

    Raises
    ------
    ValueError
        For ``--save-epochs`` without ``--state``.
    """
    from ..datasets import DatasetNotFoundError
    from ..runs import RunDiverged
    if getattr(args, "study", None):
        return tap_beyond.run_study(args.study, args)
    chosen = values(args.study_settings)
    quick_note = resolve_defaults(chosen)
    if quick_note and not args.quiet:
        print(quick_note, file=sys.stderr)
    kw = run_kwargs(chosen)
    try:
        check_settings(**kw)
        save_epochs = _parse_list(args.save_epochs, int, "--save-epochs")
        if save_epochs and not args.state:
            raise ValueError("--save-epochs needs --state (the directory the models go to)")
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
    if args.out:
        try:
            check_out_dir(args.out, args.overwrite)
        except (OSError, ValueError) as exc:     # exists, not a directory, unwritable
            parser.error(f"argument --out: {exc}")
    try:
        tables, summary = run(**kw, progress=not args.quiet, state_dir=args.state,
                              save_epochs=save_epochs)
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted; nothing written", file=sys.stderr)
        return 130
    except RunDiverged as exc:
        print(f"{parser.prog}: {exc}; nothing written", file=sys.stderr)
        return 3
    except DatasetNotFoundError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    except (ValueError, NotADirectoryError) as exc:    # e.g. --state holds other settings
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    if quick_note:
        summary["quick_form"] = quick_note
    print(format_summary(summary))
    if args.out:
        paths = save(tables, summary, args.out, overwrite=args.overwrite, html=not args.no_html)
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0


#: the declared defaults of :class:`Settings` (those of :func:`run`)
_DEFAULTS = values(Settings())
