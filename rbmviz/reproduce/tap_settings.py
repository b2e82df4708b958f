"""The settings of the TAP-machines reproduction (Tramel et al. 2018, Sec. VII): declared once
as :class:`Settings`, from which ``rbmviz reproduce tap`` derives its options and
:func:`rbmviz.reproduce.tap_run.run` its defaults; the check of one run's settings
(:func:`check_settings`: the ``summary["settings"]`` of a run and the key of its state
directory); the schedule of recorded epochs; and the quick form of a short run
(:func:`resolve_defaults`).

The training knobs (learning rate, weight decay, momentum, its form, the TAP solver's damping,
tolerance and iterations, the seed, ...) are copies of the TAP rule's declarations
(:mod:`rbmviz.algorithms.knobs`), the evaluation's solver options those of
:class:`rbmviz.tap.options.TAPSolverOptions`.  A setting whose default depends on the data set
(Table 1) is declared with the default None, "the data set's" (:data:`DATASETS`).
"""
from __future__ import annotations

import argparse
from typing import Any, Mapping, MutableMapping, Sequence

import numpy as np
import param

from .. import bounds as _bounds
from ..algorithms.knobs import check_knob, derive_knobs
from ..algorithms.tap import TAP
from ..settings import ModelSettings
from ..tap.inference import damping_ladder, fallback_dampings
from ..tap.options import TAPSolverOptions
from ._study import ListOf, StudySettings, values
from .tap_summary import DATASETS, DEFAULT_PS

__all__ = ["Settings", "TRAIN_ITER", "QUICK_DEFAULTS", "QUICK_DEFAULTS_REAL", "QUICK_UPDATES",
           "FULL_DEFAULTS", "dataset_defaults", "check_settings", "eval_schedule",
           "resolve_defaults", "run_kwargs"]

_TAP = TAP.Knobs.param
_SOLVER = TAPSolverOptions.param

#: iterations of Alg. 1 per training solve (App. D: 3, 10 and 100 train alike); 0 iterates
#: each run to ``tol`` instead
TRAIN_ITER = 10

_RULE_KNOBS = ["learning_rate", "weight_decay", "momentum", "momentum_form",
               "n_solutions", "learning_rate_final", "decay_epochs", "damping", "tol",
               "max_iter", "unique_tol", "products", "seed"]


class Settings(derive_knobs("_TapReproductionKnobs", [TAP],
                            include=_RULE_KNOBS,
                            defaults={"momentum": 0.5},
                            bases=(StudySettings,))):
    """The settings of ``rbmviz reproduce tap`` (defaults: Table 1's and the paper's, for the
    chosen data set where the default is None; the ``--quick`` preset is the README's quick
    form); the training knobs are the TAP rule's (:mod:`rbmviz.algorithms.knobs`), the
    settings without an option are those of :func:`rbmviz.reproduce.tap_run.run` only."""

    # ---- the TAP rule's knobs (declarations: rbmviz.algorithms.tap.TAP.Knobs)
    learning_rate = param.Number(None, allow_None=True, doc="learning rate γ of Alg. 2")
    weight_decay = param.Number(None, allow_None=True, precedence=-1,
                                doc="ℓ2 strength ε of Alg. 2 (none: the data set's, Table 1: "
                                    "0.001; CBCL 0.01)")
    momentum = param.Number(precedence=-1, doc="momentum η of Alg. 2 (Table 1: 0.5)")
    momentum_form = param.Selector(
        doc="heavy-ball momentum, or Alg. 2's term eta*dW(t-1) literally (see the notes)")
    n_solutions = param.Integer(precedence=-1,
                                doc="TAP solutions K per update (none: the batch size, K = M)")
    learning_rate_final = param.Number(
        precedence=-1, doc="real-MNIST's decreasing γ: the rate it decays to geometrically "
                           "(none: the data set's, Table 1: 1e-5 for real-MNIST)")
    decay_epochs = param.Integer(
        precedence=-1, doc="epochs of the decay to learning_rate_final (none: the paper's "
                           "100, also when a run goes on longer)")
    damping = param.Number(precedence=-1,
                           doc="damping of Alg. 1 in training and in denoising")
    tol = param.Number(precedence=-1, doc="convergence threshold (MSE change) of Alg. 1 in "
                                          "training and in denoising")
    max_iter = param.Integer(precedence=-1,
                             doc="iterations of Alg. 1 in training and in denoising")
    unique_tol = param.Number(precedence=-1,
                              doc="de-duplication tolerance of the TAP solutions")
    products = param.Selector(
        doc="precision of the training solves' matrix products (binary models): float32 "
            "trains ~1.6x faster at paper scale; the evaluation stays float64; a --state run "
            "may switch")
    seed = param.Integer(doc="seed of the experiment's randomness (N_h = hidden[i] starts "
                             "from seed + i)")

    # ---- the reproduction's own settings
    dataset = param.Selector(
        default="binary-mnist", objects=list(DATASETS),
        doc="Table 1's data set: binary-MNIST (Bernoulli visible units), real-MNIST "
            "(truncated Gauss-Bernoulli) or the CBCL faces (truncated Gaussian); the other "
            "defaults follow it")
    epochs = param.Integer(None, allow_None=True, bounds=(0, _bounds.EPOCHS_MAX),
                           doc="training epochs")
    samples = param.Integer(None, allow_None=True, bounds=(2, None),
                            doc="training rows: the first INT training images")
    eval_samples = param.Integer(
        None, allow_None=True, bounds=(2, None),
        doc="training rows used as TAP initialisations for the log-likelihood and the "
            "solution counts")
    test_samples = param.Integer(
        None, allow_None=True, bounds=(0, 10_000),
        doc="held-out test images for the denoising curves; 0 skips them (binary-MNIST only)")
    hidden = ListOf(int, None, allow_None=True, doc="numbers of hidden units")
    count_hidden = param.Integer(None, allow_None=True, bounds=(1, _bounds.UNITS_MAX),
                                 doc="N_h whose solutions are mapped by Isomap")
    eval_every = param.Integer(
        1, bounds=(1, None),
        doc="record every INT epochs, plus epoch 0, the Isomap epochs (1, 3, 25, 100; CBCL "
            "5, 100, 200, 500) and the last")
    eval_epochs = ListOf(
        int, [], doc="further epochs to record (e.g. --eval-every 25 --eval-epochs 1,2,3,5,10: "
                     "the early rise densely, the rest sparsely; an evaluation of 10,000 "
                     "samples takes minutes at paper scale)")
    isomap_epochs = ListOf(int, None, allow_None=True, precedence=-1,
                           doc="epochs whose solutions are drawn in the Isomap maps (none: the "
                               "data set's, 1, 3, 25, 100; CBCL 5, 100, 200, 500; the last "
                               "epoch always)")
    ps = ListOf(float, None, allow_None=True,
                doc="flip probabilities of the denoising curves")
    batch_size = param.Integer(None, allow_None=True, bounds=(1, None),
                               doc="mini-batch size M = number of TAP solutions K per update")
    eval_max_iter = param.Integer(
        None, allow_None=True, bounds=_TAP.max_iter.bounds,
        doc="iterations of the evaluation's damped second attempt; late in paper-scale "
            "training many rows converge slowly — 4000 counts the solutions more completely "
            "(binary-MNIST N_h=100, epoch 7: 75% of the rows converge within 1000, 99% within "
            "4000)")
    eval_fallback_damping = ListOf(
        float, None, allow_None=True,
        doc="dampings of the evaluation's later attempts, each on the rows still "
            "unconverged, with --eval-max-iter x (first damping / d) iterations at damping d "
            "(some trained models' iteration oscillates at 0.5 and 0.2 — binary-MNIST N_h=25 "
            "after 100 epochs); a --state run may change it")
    train_iter = param.Integer(
        TRAIN_ITER, bounds=(0, _TAP.fixed_iter.bounds[1]),
        doc="run the training solves exactly T iterations and use every run (App. D, Fig. 10: "
            "3, 10 and 100 train alike; the reference code uses 3); at paper scale ~15x faster "
            "than iterating each run to 1e-8; 0: iterate each run to --tol, Alg. 2 as printed")
    init_scale = param.Number(0.001, bounds=ModelSettings.param.init_scale.bounds,
                              precedence=-1,
                              doc="standard deviation σ of the initial weights (Sec. VII.3: "
                                  "≈ 1e-3)")
    eval_damping = param.Number(
        _SOLVER.first_damping.default, bounds=_SOLVER.first_damping.bounds,
        inclusive_bounds=_SOLVER.first_damping.inclusive_bounds, precedence=-1,
        doc="damping of the evaluation solves (1 = Alg. 1 as printed); the rows that do not "
            "converge are solved again with the fallback dampings")
    eval_tol = param.Number(
        _SOLVER.count_tol.default, bounds=_SOLVER.count_tol.bounds,
        inclusive_bounds=_SOLVER.count_tol.inclusive_bounds, precedence=-1,
        doc="solve tolerance of the evaluation (likelihood, counting, maps): at 1e-8 one "
            "fixed point is counted many times")
    n_neighbors = param.Integer(5, bounds=(1, None), precedence=-1,
                                doc="Isomap neighbourhood size")

    TITLE = "experiment (defaults: the paper's settings)"
    QUICK = {"epochs": 5, "samples": 2000}
    QUICK_HELP = ("without --study: the README's quick form (--epochs 5 --samples 2000; CBCL "
                  "--epochs 10) with a short run's smaller models and batches, a few minutes; "
                  "with --study: the study's ~3-minute form (smaller models, fewer images and "
                  "epochs) instead of the paper's settings")
    ITEM_BOUNDS = {"hidden": (1, _bounds.UNITS_MAX), "eval_epochs": (0, None),
                   "isomap_epochs": (0, None)}
    METAVARS = {"hidden": "N,N,...", "eval_epochs": "E,E,...", "ps": "P,P,...",
                "eval_fallback_damping": "D,D,...", "train_iter": "T"}
    DEFAULTS_SHOWN = {
        "epochs": "100; CBCL 500; --quick: 5, CBCL 10",
        "samples": "all, 60000 MNIST / 2429 CBCL; --quick: 2000, CBCL all",
        "eval_samples": "10000, CBCL 2400, at most --samples; quick form: 1000, CBCL 400",
        "test_samples": "1000; quick form: 200",
        "hidden": "25,50,100,500; real-MNIST 100,500; CBCL 256; quick form: 25,100; "
                  "real-MNIST 100; CBCL 64",
        "count_hidden": "100, CBCL 256, if trained, else the last of --hidden",
        "ps": "0,0.05,...,0.5; quick form: 0,0.05,0.1,0.2,0.3,0.4,0.5",
        "learning_rate": "Table 1's, 0.005; real-MNIST 0.01 decaying to 1e-5 over 100 epochs; "
                         "quick form: 0.05",
        "batch_size": "Table 1's, 100; CBCL 20; quick form: 20",
        "eval_max_iter": "1000, as in training",
        "eval_fallback_damping": "the training damping, then 0.2, 0.1, 0.05",
    }

    @classmethod
    def quick_presets(cls, given: Mapping) -> list[dict]:
        """The README's quick form: 2,000 rows for 5 epochs (CBCL: all 2,429 faces for 10).

        Parameters
        ----------
        given : mapping
            The settings given (``dataset`` chooses the preset).

        Returns
        -------
        list of dict
            The presets.
        """
        if given.get("dataset") == "cbcl":
            return [{"epochs": 10}]
        return [cls.QUICK]


def _declared(name: str, value: Any) -> Any:
    """``value`` checked against the declaration of setting ``name`` (errors name it)."""
    return check_knob(Settings.param[name], value, name)


def _item(name: str, value: Any) -> int:
    """An item of list setting ``name``, an int within its :attr:`Settings.ITEM_BOUNDS`."""
    from .._validation import check_int
    low, high = Settings.ITEM_BOUNDS[name]
    return check_int(value, name, low=low, high=high)


def dataset_defaults(dataset: str) -> dict:
    """The paper's settings of ``dataset`` (a key of :data:`DATASETS`): what :func:`run`
    uses for the settings left at None.

    Parameters
    ----------
    dataset : {"binary-mnist", "real-mnist", "cbcl"}
        The data set.

    Returns
    -------
    dict
        A copy of ``DATASETS[dataset]``.

    Raises
    ------
    ValueError
        For an unknown data set.
    """
    from .._validation import check_choice
    return dict(DATASETS[check_choice(dataset, "dataset", tuple(DATASETS))])


def check_settings(*, epochs: int | None, samples: int | None, eval_samples: int | None,
                   test_samples: int | None, hidden: Sequence[int] | None,
                   count_hidden: int | None, eval_every: int,
                   isomap_epochs: Sequence[int] | None, ps: Sequence[float] | None,
                   batch_size: int | None, n_solutions: int | None,
                   learning_rate: float | None, weight_decay: float | None, momentum: float,
                   momentum_form: str, init_scale: float, damping: float, eval_damping: float,
                   tol: float, max_iter: int, unique_tol: float, eval_tol: float,
                   n_neighbors: int, seed: int, dataset: str = "binary-mnist",
                   learning_rate_final: float | None = None, decay_epochs: int | None = None,
                   eval_max_iter: int | None = None, products: str = "float64",
                   train_iter: int | None = TRAIN_ITER, eval_epochs: Sequence[int] = (),
                   eval_fallback_damping: Sequence[float] | None = None) -> dict:
    """The settings of one run, each checked against its declaration in :class:`Settings`
    and those left at None replaced by the data set's: the ``summary["settings"]`` of the
    run and the key of its state directory.

    Parameters
    ----------
    epochs, samples, eval_samples, test_samples, hidden, count_hidden, eval_every, isomap_epochs, ps, batch_size, n_solutions, learning_rate, weight_decay, momentum, momentum_form, init_scale, damping, eval_damping, tol, max_iter, unique_tol, eval_tol, n_neighbors, seed, dataset, learning_rate_final, decay_epochs, eval_max_iter, products, train_iter, eval_epochs, eval_fallback_damping
        The settings (:class:`Settings`; ``ps`` None: :data:`DEFAULT_PS`).

    Returns
    -------
    dict
        The settings.  A setting added after the first state directories were made is kept
        only where it differs from what those runs did (``dataset`` other than binary-MNIST,
        ``products`` float32, ``eval_max_iter`` other than ``max_iter``, the decay, a
        nonzero ``train_iter``, ``eval_epochs``), so that their state continues.

    Raises
    ------
    ValueError
        For a setting out of its bounds or settings that contradict each other.
    TypeError
        For a setting of the wrong type.
    """
    from .._validation import check_float
    d = dataset_defaults(dataset)
    epochs = d["epochs"] if epochs is None else epochs
    samples = d["rows"] if samples is None else samples
    eval_samples = d["eval_samples"] if eval_samples is None else eval_samples
    test_samples = d["test_samples"] if test_samples is None else test_samples
    hidden = d["hidden"] if hidden is None else hidden
    isomap_epochs = d["isomap_epochs"] if isomap_epochs is None else isomap_epochs
    ps = DEFAULT_PS if ps is None else ps
    batch_size = d["batch_size"] if batch_size is None else batch_size
    n_solutions = batch_size if n_solutions is None else n_solutions
    learning_rate = d["learning_rate"] if learning_rate is None else learning_rate
    weight_decay = d["weight_decay"] if weight_decay is None else weight_decay
    if learning_rate_final is None:
        learning_rate_final = d["learning_rate_final"]
    if learning_rate_final is not None:
        learning_rate_final = _declared("learning_rate_final", learning_rate_final)
        # the decay's horizon is the paper's length, not this run's: a run continued to
        # more epochs keeps the schedule it started with
        decay_epochs = _declared("decay_epochs",
                                 d["epochs"] if decay_epochs is None else decay_epochs)
    elif decay_epochs is not None:
        raise ValueError("decay_epochs needs learning_rate_final (the rate γ decays to)")
    if test_samples and dataset != "binary-mnist":
        raise ValueError(f"test_samples={test_samples}: the denoising curves (Fig. 8) are a "
                         f"binary-MNIST experiment; use test_samples=0 with dataset={dataset!r}")
    hidden = list(dict.fromkeys(_item("hidden", h) for h in hidden))
    if not hidden:
        raise ValueError("hidden is empty; expected at least one number of hidden units")
    if count_hidden is None:
        count_hidden = d["count_hidden"] if d["count_hidden"] in hidden else hidden[-1]
    count_hidden = _declared("count_hidden", count_hidden)
    if count_hidden not in hidden:
        raise ValueError(f"count_hidden={count_hidden} must be one of hidden={hidden}")
    samples = _declared("samples", samples)
    if samples > d["rows"]:
        raise ValueError(f"samples must be <= {d['rows']}, got {samples}")
    epochs = _declared("epochs", epochs)
    batch_size = _declared("batch_size", batch_size)
    if batch_size > samples:
        raise ValueError(f"batch_size={batch_size} is larger than samples={samples}")
    # (the flip probabilities' bounds are written here only: their message names them)
    ps = [check_float(p, "p (flip probability)", low=0.0, high=0.5) for p in ps]
    out = dict(
        epochs=epochs, samples=samples,
        eval_samples=min(_declared("eval_samples", eval_samples), samples),
        test_samples=_declared("test_samples", test_samples),
        hidden=hidden, count_hidden=count_hidden,
        eval_every=_declared("eval_every", eval_every),
        isomap_epochs=sorted({_item("isomap_epochs", e) for e in isomap_epochs}),
        ps=sorted(set(ps)), batch_size=batch_size,
        n_solutions=_declared("n_solutions", n_solutions),
        learning_rate=_declared("learning_rate", learning_rate),
        weight_decay=_declared("weight_decay", weight_decay),
        momentum=_declared("momentum", momentum),
        momentum_form=_declared("momentum_form", momentum_form),
        init_scale=_declared("init_scale", init_scale),
        damping=_declared("damping", damping),
        eval_damping=_declared("eval_damping", eval_damping),
        tol=_declared("tol", tol),
        eval_tol=_declared("eval_tol", eval_tol),
        max_iter=_declared("max_iter", max_iter),
        unique_tol=_declared("unique_tol", unique_tol),
        n_neighbors=_declared("n_neighbors", n_neighbors),
        seed=_declared("seed", seed))
    if dataset != "binary-mnist":      # (binary-MNIST's settings stay those of earlier runs,
        out["dataset"] = dataset       # whose state directories continue unchanged)
    if _declared("products", products) == "float32":
        if dataset != "binary-mnist":
            raise ValueError(f"products='float32' is for binary models; {dataset}'s "
                             f"real-valued units compute their products in float64")
        out["products"] = products     # (the same reason; a continuation may change it)
    if eval_max_iter is not None:      # (kept only when it differs: the same reason)
        eval_max_iter = _declared("eval_max_iter", eval_max_iter)
        if eval_max_iter != out["max_iter"]:
            out["eval_max_iter"] = eval_max_iter
    if learning_rate_final is not None:
        out.update(learning_rate_final=learning_rate_final, decay_epochs=decay_epochs)
    # the evaluation's later attempts (SETTINGS_FREE: they only reach rows the earlier ones
    # left unconverged, so a continuation may add one)
    out["eval_fallback_damping"] = list(fallback_dampings(
        damping_ladder(out["damping"]) if eval_fallback_damping is None
        else eval_fallback_damping, "eval_fallback_damping"))
    # (0, iterating each training run to tol, is kept as the key's absence: the state
    # directories made before the key existed trained so and continue)
    train_iter = _declared("train_iter", TRAIN_ITER if train_iter is None else train_iter)
    if train_iter:
        out["train_iter"] = train_iter
    eval_epochs = sorted({_item("eval_epochs", e) for e in eval_epochs})
    if eval_epochs:                    # (the same reason)
        out["eval_epochs"] = eval_epochs
    return out


def eval_schedule(epochs: int, eval_every: int = 1, extra: Sequence[int] = ()) -> list[int]:
    """Recorded epochs: 0, every ``eval_every``, the ``extra`` ones (e.g. the Isomap epochs)
    that do not exceed ``epochs``, and the last.  Sorted (n,) int64.

    Parameters
    ----------
    epochs : int
        Training epochs.
    eval_every : int
        Epochs between records.
    extra : sequence of int
        Further epochs to record.

    Returns
    -------
    list of int
        The epochs, sorted.
    """
    lin = np.arange(0, epochs + 1, eval_every)
    extra = [e for e in extra if 0 <= e <= epochs]
    return np.unique(np.concatenate([lin, extra, [0, epochs]])).astype(np.int64)


# ---------------------------------------------------------------------------- quick form

#: the quick form's settings: a run with fewer than QUICK_UPDATES updates at Table 1's
#: M = 100 (the paper makes 60,000) would leave the weights near their N(0, 1e-6) start
QUICK_DEFAULTS = dict(eval_samples=1_000, test_samples=200, hidden=[25, 100],
                      learning_rate=0.05, batch_size=20, ps=[0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5])
#: the quick forms of the real-valued data sets: fewer, smaller models and a 10x step
QUICK_DEFAULTS_REAL = {
    "real-mnist": dict(eval_samples=1_000, test_samples=0, hidden=[100], learning_rate=0.05,
                       batch_size=20),
    "cbcl": dict(eval_samples=400, test_samples=0, hidden=[64], learning_rate=0.05,
                 batch_size=20),
}
QUICK_UPDATES = 5_000


def _full_defaults(dataset: str) -> dict:
    """The paper's settings (:data:`DATASETS`) for the options left unset."""
    d = DATASETS[dataset]
    return dict(eval_samples=d["eval_samples"], test_samples=d["test_samples"],
                hidden=list(d["hidden"]), learning_rate=d["learning_rate"],
                batch_size=d["batch_size"], ps=list(DEFAULT_PS) if d["test_samples"] else [])


#: the paper's settings for the options left unset (binary-MNIST) ...
FULL_DEFAULTS = _full_defaults("binary-mnist")


def _text(value: Any) -> str:
    return ",".join(f"{v:g}" for v in value) if isinstance(value, list) else f"{value}"


def resolve_defaults(chosen: MutableMapping | argparse.Namespace) -> str | None:
    """Fill the settings left unset (None) in ``chosen``, in place: the paper's settings
    (:data:`FULL_DEFAULTS`), or for a short run (fewer than :data:`QUICK_UPDATES` updates
    at M = 100 — ``samples`` / 100 × ``epochs``) the quick form's (:data:`QUICK_DEFAULTS`:
    smaller batches and a 10× larger step, so that a few minutes show the paper's
    phenomena; with Table 1's M = 100 and γ = 0.005, 2,000 images × 5 epochs = 100 updates
    left the TAP log-likelihood at −0.2303 → −0.2303 per unit and one solution; the quick
    form of the README, ``--epochs 5 --samples 2000``, measured: −0.2296 → −0.1404 per unit
    and 1 → 57 unique solutions of 1,000 for N_h = 100, every judged claim holding, 3.0 min
    of CPU on one thread).

    Parameters
    ----------
    chosen : dict or argparse.Namespace
        The settings (:func:`rbmviz.reproduce._study.values` of a :class:`Settings`).

    Returns
    -------
    str or None
        A sentence saying which quick-form settings were used, or None.
    """
    s = vars(chosen) if isinstance(chosen, argparse.Namespace) else chosen
    dataset = s.get("dataset") or "binary-mnist"
    d = DATASETS[dataset]
    if s.get("epochs") is None:
        s["epochs"] = d["epochs"]
    if s.get("samples") is None:
        s["samples"] = d["rows"]
    m = d["batch_size"]
    updates = max(1, s["samples"] // m) * max(s["epochs"], 0)
    quick = updates < QUICK_UPDATES
    if quick:
        table = QUICK_DEFAULTS if dataset == "binary-mnist" else QUICK_DEFAULTS_REAL[dataset]
    else:
        table = _full_defaults(dataset)
    used = {}
    for k, v in table.items():
        if s.get(k) is None:
            s[k] = list(v) if isinstance(v, list) else v
            used[k] = v
    if s.get("ps") is None:            # (the real-valued data sets' quick forms: no denoising)
        s["ps"] = []
    if not quick or not used:
        return None
    paper_updates = (d["rows"] // m) * d["epochs"]
    return (f"quick form ({s['samples']:,} rows x {s['epochs']} epochs = {updates:,} updates at "
            f"Table 1's M={m}, the paper makes {paper_updates:,}): "
            + ", ".join(f"{k.replace('_', '-')} {_text(v)}" for k, v in used.items())
            + "; set these options to override")


def run_kwargs(settings: Settings | MutableMapping) -> dict:
    """The keyword arguments of :func:`rbmviz.reproduce.tap_run.run` for ``settings`` (a
    :class:`Settings` or its values; an empty ``eval_fallback_damping``, ``none`` on the
    command line, is the default ladder).

    Parameters
    ----------
    settings : Settings or dict
        The settings.

    Returns
    -------
    dict
        ``{setting: value}``.
    """
    kw = values(settings) if isinstance(settings, Settings) else dict(settings)
    kw["eval_fallback_damping"] = kw.get("eval_fallback_damping") or None
    return kw
