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
The work is split: :mod:`rbmviz.reproduce.tap_run` (training, evaluation, resumable state),
:mod:`rbmviz.reproduce.tap_summary` (summary, claims, printed table),
:mod:`rbmviz.viz.tap` (figures); this module is the command line and the files written,
and re-exports the public names of the others.
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys
from typing import TYPE_CHECKING, Sequence

from . import _io, report, tap_beyond
from .tap_run import (DEFAULT_PS, PAPER, TABLES, _algorithm, _check_settings, _parse_list,
                      base_rate_biases, eval_schedule, evaluate_tap, run)
from .tap_summary import DATASETS, NOTES, claims, format_summary, summarize
from ..viz.tap import PARTS, reproduction_figure

if TYPE_CHECKING:
    import holoviews as hv

__all__ = ["PAPER", "TABLES", "FILES", "PARTS", "NOTES", "run", "evaluate_tap",
           "base_rate_biases", "summarize", "claims", "format_summary", "figure", "save",
           "check_out_dir", "eval_schedule", "add_arguments", "main", "resolve_defaults",
           "STUDIES"]

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
    """Options of ``rbmviz reproduce tap``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    g = parser.add_argument_group("experiment (defaults: the paper's settings)")
    g.add_argument("--dataset", choices=tuple(DATASETS), default="binary-mnist",
                   help="Table 1's data set: binary-MNIST (Bernoulli visible units), real-MNIST "
                        "(truncated Gauss-Bernoulli) or the CBCL faces (truncated Gaussian); "
                        "the other defaults follow it (default: binary-mnist)")
    g.add_argument("--epochs", type=int, default=None, metavar="INT",
                   help="training epochs (default: 100; CBCL 500)")
    g.add_argument("--samples", type=int, default=None, metavar="INT",
                   help="training rows: the first INT training images "
                        "(default: all, 60000 MNIST / 2429 CBCL)")
    g.add_argument("--eval-samples", type=int, default=None, metavar="INT",
                   help="training rows used as TAP initialisations for the log-likelihood "
                        "and the solution counts (default: 10000, CBCL 2400, at most --samples; "
                        "quick form: 1000, CBCL 400)")
    g.add_argument("--test-samples", type=int, default=None, metavar="INT",
                   help="held-out test images for the denoising curves; 0 skips them "
                        "(binary-MNIST only; default: 1000; quick form: 200)")
    g.add_argument("--hidden", default=None, metavar="N,N,...",
                   help="numbers of hidden units (default: 25,50,100,500; real-MNIST 100,500; "
                        "CBCL 256; quick form: 25,100; real-MNIST 100; CBCL 64)")
    g.add_argument("--count-hidden", type=int, default=None, metavar="INT",
                   help="N_h whose solutions are mapped by Isomap (default: 100, CBCL 256, if "
                        "trained, else the last of --hidden)")
    g.add_argument("--eval-every", type=int, default=1, metavar="INT",
                   help="record every INT epochs, plus epoch 0, the Isomap epochs (1, 3, 25, 100; "
                        "CBCL 5, 100, 200, 500) and the last (default: 1)")
    g.add_argument("--eval-epochs", default=None, metavar="E,E,...",
                   help="further epochs to record (e.g. --eval-every 25 --eval-epochs 1,2,3,5,10: "
                        "the early rise densely, the rest sparsely; an evaluation of 10,000 "
                        "samples takes minutes at paper scale)")
    g.add_argument("--ps", default=None, metavar="P,P,...",
                   help="flip probabilities of the denoising curves (default: 0,0.05,...,0.5; "
                        "quick form: 0,0.05,0.1,0.2,0.3,0.4,0.5)")
    g.add_argument("--learning-rate", type=float, default=None, metavar="X",
                   help="(default: Table 1's, 0.005; real-MNIST 0.01 decaying to 1e-5 over 100 "
                        "epochs; quick form: 0.05)")
    g.add_argument("--batch-size", type=int, default=None, metavar="INT",
                   help="mini-batch size M = number of TAP solutions K per update "
                        "(default: Table 1's, 100; CBCL 20; quick form: 20)")
    g.add_argument("--momentum-form", choices=("heavy_ball", "printed"), default="heavy_ball",
                   help="heavy-ball momentum, or Alg. 2's term eta*dW(t-1) literally "
                        "(default: heavy_ball; see the notes)")
    g.add_argument("--eval-max-iter", type=int, default=None, metavar="INT",
                   help="iterations of the evaluation's damped second attempt (default: 1000, "
                        "as in training); late in paper-scale training many rows converge "
                        "slowly — 4000 counts the solutions more completely (binary-MNIST "
                        "N_h=100, epoch 7: 75%% of the rows converge within 1000, 99%% within 4000)")
    g.add_argument("--eval-fallback-damping", default=None, metavar="D,D,...",
                   help="dampings of the evaluation's later attempts, each on the rows still "
                        "unconverged, with --eval-max-iter x (first damping / d) iterations at "
                        "damping d (default: the training damping, then 0.2, 0.1, 0.05: some "
                        "trained models' iteration oscillates at 0.5 and 0.2 — binary-MNIST "
                        "N_h=25 after 100 epochs); a --state run may change it")
    g.add_argument("--products", choices=("float64", "float32"), default="float64",
                   help="precision of the training solves' matrix products (binary models): "
                        "float32 trains ~1.6x faster at paper scale; the evaluation stays "
                        "float64; a --state run may switch (default: float64)")
    g.add_argument("--train-iter", type=int, default=None, metavar="T",
                   help="run the training solves exactly T iterations and use every run "
                        "(App. D, Fig. 10: 3, 10 and 100 train alike; the reference code uses "
                        "3); at paper scale ~15x faster than iterating each run to 1e-8; 0: "
                        "iterate each run to --tol, Alg. 2 as printed (default: 10)")
    g.add_argument("--seed", type=int, default=0, metavar="INT", help="(default: 0)")
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
    tap_beyond.add_arguments(parser)            # --quick of the studies
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


#: the quick form's settings: a run with fewer than QUICK_UPDATES updates at Table 1's
#: M = 100 (the paper makes 60,000) would leave the weights near their N(0, 1e-6) start
QUICK_DEFAULTS = dict(eval_samples=1_000, test_samples=200, hidden="25,100",
                      learning_rate=0.05, batch_size=20, ps="0,0.05,0.1,0.2,0.3,0.4,0.5")
#: the quick forms of the real-valued data sets: fewer, smaller models and a 10x step
QUICK_DEFAULTS_REAL = {
    "real-mnist": dict(eval_samples=1_000, test_samples=0, hidden="100", learning_rate=0.05,
                       batch_size=20),
    "cbcl": dict(eval_samples=400, test_samples=0, hidden="64", learning_rate=0.05,
                 batch_size=20),
}
QUICK_UPDATES = 5_000


def _full_defaults(dataset):
    """The paper's settings (:data:`DATASETS`) for the options left unset."""
    d = DATASETS[dataset]
    return dict(eval_samples=d["eval_samples"], test_samples=d["test_samples"],
                hidden=",".join(map(str, d["hidden"])), learning_rate=d["learning_rate"],
                batch_size=d["batch_size"],
                ps=",".join(f"{p:g}" for p in DEFAULT_PS) if d["test_samples"] else "none")


#: the paper's settings for the options left unset (binary-MNIST) ...
FULL_DEFAULTS = _full_defaults("binary-mnist")


def resolve_defaults(args: argparse.Namespace) -> str | None:
    """Fill the options left unset (None) in ``args``, in place: the paper's settings
    (:data:`FULL_DEFAULTS`), or for a short run (fewer than :data:`QUICK_UPDATES` updates
    at M = 100 — ``--samples`` / 100 × ``--epochs``) the quick form's (:data:`QUICK_DEFAULTS`:
    smaller batches and a 10× larger step, so that a few minutes show the paper's
    phenomena; with Table 1's M = 100 and γ = 0.005, 2,000 images × 5 epochs = 100 updates
    left the TAP log-likelihood at −0.2303 → −0.2303 per unit and one solution; the quick
    form of the README, ``--epochs 5 --samples 2000``, measured: −0.2296 → −0.1404 per unit
    and 1 → 57 unique solutions of 1,000 for N_h = 100, every judged claim holding, 3.0 min
    of CPU on one thread).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command-line arguments.

    Returns
    -------
    str or None
        A sentence saying which quick-form settings were used, or None.
    """
    dataset = getattr(args, "dataset", None) or "binary-mnist"
    d = DATASETS[dataset]
    if getattr(args, "epochs", None) is None:
        args.epochs = d["epochs"]
    if getattr(args, "samples", None) is None:
        args.samples = d["rows"]
    m = d["batch_size"]
    updates = max(1, args.samples // m) * max(args.epochs, 0)
    quick = updates < QUICK_UPDATES
    if quick:
        chosen = QUICK_DEFAULTS if dataset == "binary-mnist" else QUICK_DEFAULTS_REAL[dataset]
    else:
        chosen = _full_defaults(dataset)
    used = {}
    for k, v in chosen.items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
            used[k] = v
    if not quick or not used:
        return None
    paper_updates = (d["rows"] // m) * d["epochs"]
    return (f"quick form ({args.samples:,} rows x {args.epochs} epochs = {updates:,} updates at "
            f"Table 1's M={m}, the paper makes {paper_updates:,}): "
            + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in used.items())
            + "; set these options to override")


def main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``rbmviz reproduce tap`` from parsed ``args``; returns the exit code.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command-line arguments.
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
    quick_note = resolve_defaults(args)
    if quick_note and not args.quiet:
        print(quick_note, file=sys.stderr)
    try:
        hidden = _parse_list(args.hidden, int, "--hidden")
        ps = _parse_list(args.ps, float, "--ps")
        kw = dict(dataset=args.dataset, epochs=args.epochs, samples=args.samples,
                  eval_samples=args.eval_samples,
                  test_samples=args.test_samples, hidden=hidden, count_hidden=args.count_hidden,
                  eval_every=args.eval_every, ps=ps, learning_rate=args.learning_rate,
                  batch_size=args.batch_size, n_solutions=args.batch_size,
                  momentum_form=args.momentum_form, seed=args.seed,
                  eval_max_iter=args.eval_max_iter, products=args.products,
                  train_iter=args.train_iter,
                  eval_epochs=_parse_list(args.eval_epochs, int, "--eval-epochs") or (),
                  eval_fallback_damping=_parse_list(args.eval_fallback_damping, float,
                                                    "--eval-fallback-damping") or None)
        _check_settings(**{**_DEFAULTS, **kw})
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


#: the defaults of :func:`run` that the command line does not expose (read from its
#: signature; the TAP solver's from :class:`rbmviz.tap.options.TAPSolverOptions`)
_DEFAULTS = {name: p.default for name, p in inspect.signature(run).parameters.items()
             if name in ("isomap_epochs", "batch_size", "n_solutions", "weight_decay", "momentum",
                         "momentum_form", "init_scale", "damping", "eval_damping", "tol",
                         "eval_tol", "max_iter", "unique_tol", "n_neighbors")}
