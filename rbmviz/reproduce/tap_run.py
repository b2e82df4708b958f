"""Running the TAP-machines reproduction (Tramel et al. 2018, Sec. VII on binary-MNIST):
training with Alg. 2, the TAP evaluation at recorded epochs (eqs. 36–39), the Isomap maps
(Figs. 6–7) and the denoising curves (Fig. 8) — :func:`run`, resumable per epoch through
``state_dir`` (:mod:`rbmviz.reproduce._tap_state`).

The command line, the figure and the summary live in :mod:`rbmviz.reproduce.tap`,
:mod:`rbmviz.viz.tap` and :mod:`rbmviz.reproduce.tap_summary`.
"""
from __future__ import annotations

import math
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .. import algorithms
from .._validation import check_int
from ..tap.inference import damping_ladder, fallback_dampings
from ..tap.options import TAPSolverOptions as _Solver
from . import _io
from . import _tap_state as _state
from .tap_summary import (DATA_MAP_DIGITS, DATASETS, DEFAULT_PS, EXACT_MAX_HIDDEN, PAPER,
                          TABLES, summarize)

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["PAPER", "TABLES", "DEFAULT_PS", "DATASETS", "run", "evaluate_tap",
           "base_rate_biases", "eval_schedule", "dataset_defaults"]


# ---------------------------------------------------------------------------- settings


def _parse_list(text, kind, name):
    """``"1,2,5"`` → list; ``"none"``/empty → []."""
    return _io.parse_list(text, kind, name, allow_empty=True)


#: iterations of Alg. 1 per training solve (App. D: 3, 10 and 100 train alike); 0 iterates
#: each run to ``tol`` instead
TRAIN_ITER = 10


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


def _check_settings(*, epochs, samples, eval_samples, test_samples, hidden, count_hidden,
                    eval_every, isomap_epochs, ps, batch_size, n_solutions, learning_rate,
                    weight_decay, momentum, momentum_form, init_scale, damping, eval_damping, tol,
                    max_iter, unique_tol, eval_tol,
                    n_neighbors, seed, dataset="binary-mnist", learning_rate_final=None,
                    decay_epochs=None, eval_max_iter=None, products="float64", train_iter=TRAIN_ITER,
                    eval_epochs=(), eval_fallback_damping=None):
    from .._validation import check_choice, check_float, check_int, check_seed
    d = dataset_defaults(dataset)
    epochs = d["epochs"] if epochs is None else epochs
    samples = d["rows"] if samples is None else samples
    eval_samples = d["eval_samples"] if eval_samples is None else eval_samples
    test_samples = d["test_samples"] if test_samples is None else test_samples
    hidden = d["hidden"] if hidden is None else hidden
    isomap_epochs = d["isomap_epochs"] if isomap_epochs is None else isomap_epochs
    batch_size = d["batch_size"] if batch_size is None else batch_size
    n_solutions = batch_size if n_solutions is None else n_solutions
    learning_rate = d["learning_rate"] if learning_rate is None else learning_rate
    weight_decay = d["weight_decay"] if weight_decay is None else weight_decay
    if learning_rate_final is None:
        learning_rate_final = d["learning_rate_final"]
    if learning_rate_final is not None:
        learning_rate_final = check_float(learning_rate_final, "learning_rate_final", low=0.0,
                                          low_open=True)
        # the decay's horizon is the paper's length, not this run's: a run continued to
        # more epochs keeps the schedule it started with
        decay_epochs = check_int(d["epochs"] if decay_epochs is None else decay_epochs,
                                 "decay_epochs", low=1)
    elif decay_epochs is not None:
        raise ValueError("decay_epochs needs learning_rate_final (the rate γ decays to)")
    if test_samples and dataset != "binary-mnist":
        raise ValueError(f"test_samples={test_samples}: the denoising curves (Fig. 8) are a "
                         f"binary-MNIST experiment; use test_samples=0 with dataset={dataset!r}")
    hidden = list(dict.fromkeys(check_int(h, "hidden", low=1) for h in hidden))
    if not hidden:
        raise ValueError("hidden is empty; expected at least one number of hidden units")
    if count_hidden is None:
        count_hidden = d["count_hidden"] if d["count_hidden"] in hidden else hidden[-1]
    count_hidden = check_int(count_hidden, "count_hidden", low=1)
    if count_hidden not in hidden:
        raise ValueError(f"count_hidden={count_hidden} must be one of hidden={hidden}")
    samples = check_int(samples, "samples", low=2, high=d["rows"])
    epochs = check_int(epochs, "epochs", low=0)
    batch_size = check_int(batch_size, "batch_size", low=1)
    if batch_size > samples:
        raise ValueError(f"batch_size={batch_size} is larger than samples={samples}")
    ps = [check_float(p, "p (flip probability)", low=0.0, high=0.5) for p in ps]
    out = dict(
        epochs=epochs, samples=samples,
        eval_samples=min(check_int(eval_samples, "eval_samples", low=2), samples),
        test_samples=check_int(test_samples, "test_samples", low=0, high=10_000),
        hidden=hidden, count_hidden=count_hidden,
        eval_every=check_int(eval_every, "eval_every", low=1),
        isomap_epochs=sorted({check_int(e, "isomap_epochs", low=0) for e in isomap_epochs}),
        ps=sorted(set(ps)), batch_size=batch_size,
        n_solutions=check_int(n_solutions, "n_solutions", low=1),
        learning_rate=check_float(learning_rate, "learning_rate", low=0.0, low_open=True),
        weight_decay=check_float(weight_decay, "weight_decay", low=0.0),
        momentum=check_float(momentum, "momentum", low=0.0, high=0.999),
        momentum_form=check_choice(momentum_form, "momentum_form", ("heavy_ball", "printed")),
        init_scale=check_float(init_scale, "init_scale", low=0.0),
        damping=check_float(damping, "damping", low=0.0, high=1.0, low_open=True),
        eval_damping=check_float(eval_damping, "eval_damping", low=0.0, high=1.0, low_open=True),
        tol=check_float(tol, "tol", low=0.0, low_open=True),
        eval_tol=check_float(eval_tol, "eval_tol", low=0.0, low_open=True),
        max_iter=check_int(max_iter, "max_iter", low=1),
        unique_tol=check_float(unique_tol, "unique_tol", low=0.0, low_open=True),
        n_neighbors=check_int(n_neighbors, "n_neighbors", low=1),
        seed=check_seed(seed))
    if dataset != "binary-mnist":      # (binary-MNIST's settings stay those of earlier runs,
        out["dataset"] = dataset       # whose state directories continue unchanged)
    if check_choice(products, "products", ("float64", "float32")) == "float32":
        if dataset != "binary-mnist":
            raise ValueError(f"products='float32' is for binary models; {dataset}'s "
                             f"real-valued units compute their products in float64")
        out["products"] = products     # (the same reason; a continuation may change it)
    if eval_max_iter is not None:      # (kept only when it differs: the same reason)
        eval_max_iter = check_int(eval_max_iter, "eval_max_iter", low=1)
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
    train_iter = check_int(TRAIN_ITER if train_iter is None else train_iter, "train_iter", low=0)
    if train_iter:
        out["train_iter"] = train_iter
    eval_epochs = sorted({check_int(e, "eval_epochs", low=0) for e in eval_epochs})
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


# ---------------------------------------------------------------------------- evaluation

def evaluate_tap(rbm: RBM, V: np.ndarray, *, damping: float = _Solver.first_damping,
                 tol: float = _Solver.count_tol, max_iter: int = _Solver.max_iter,
                 unique_tol: float = _Solver.unique_tol,
                 fallback_damping: float | Sequence[float] = damping_ladder(),
                 fallback_tol: float = _Solver.count_tol,
                 first_max_iter: int = _Solver.first_max_iter) -> dict:
    """TAP evaluation of ``rbm`` from one data-anchored initialisation per row of ``V``
    (eqs. 37–38), the solutions being shared by the likelihood and the counting.

    Alg. 1 is first run as printed — undamped (``damping=1``) until the MSE change of both
    layers' means is below ``tol`` (default 1e-12, tighter than Fig. 3's 1e-8 so that the
    counting below measures distinct fixed points, not convergence precision — see
    :func:`rbmviz.tap.unique_solutions`).  Rows that do not converge within
    ``first_max_iter`` iterations (an undamped iteration that has not converged by then
    oscillates) are run again, for at most ``max_iter`` iterations, from the same
    initialisation with ``fallback_damping`` and the tighter ``fallback_tol``.  Why: the de-duplication compares solutions to
    ``unique_tol`` (1e-4), but a *damped* iteration stopped at an MSE change of 1e-8 is still
    about one step (≈ 1e-4 per unit) away from its fixed point, so runs that reach the same
    solution from different data points would be counted as different (at initialisation
    every run reaches the same point, yet 1,000 runs give 1,000 "unique" solutions).  The
    undamped iteration converges much faster near a fixed point, and the damped fallback
    stops 1e4 times closer to it.

    Parameters
    ----------
    rbm : RBM
        The model.
    V : numpy.ndarray
        Rows, one data-anchored initialisation each.
    damping : float
        Damping of the TAP iteration.
    tol : float
        Convergence threshold of the TAP iteration.
    max_iter : int
        Iterations of the TAP iteration.
    unique_tol : float
        Tolerance of the de-duplication of TAP solutions.
    fallback_damping : float or sequence of float
        Damping of the second attempt for runs that did not converge; a sequence gives one
        attempt per value, each on the rows still unconverged, with ``max_iter × 0.5 / d``
        iterations at damping ``d`` (default ``(0.5, 0.2, 0.1, 0.05)``,
        :func:`rbmviz.tap.inference.damping_ladder`: some trained models' iteration keeps
        oscillating at 0.5 and at 0.2).
    fallback_tol : float
        Tolerance of the second attempt.
    first_max_iter : int
        Iterations of the first attempt.

    Returns
    -------
    dict
        dict with ``sol`` (the ``TAPSolution``), ``stats``
        (:func:`rbmviz.tap.landscape.solution_statistics`), ``log_z`` (the TAP estimate of the
        RBM's log partition function: mean of ``sol.log_z`` over the unique converged solutions,
        i.e. −𝔽_RBM averaged uniformly, eq. 39), ``ll_rows`` (per-row TAP log-likelihood
        ``−F(v) − log_z``, eq. 39), ``ll`` (their mean, nats), ``ll_sem`` (standard error),
        ``n_fallback`` (rows solved again with damping), ``iterations`` (mean iterations).
    """
    from ..tap import data_term, solve_counted
    from ..tap.landscape import solution_statistics

    sol, bad = solve_counted(rbm, V, order=2, damping=fallback_damping, tol=tol,
                             max_iter=max_iter, first_max_iter=first_max_iter,
                             first_damping=damping, fallback_tol=fallback_tol,
                             return_fallback=True)
    stats = solution_statistics(sol, tol=unique_tol)
    reps = np.asarray(stats["representatives"], dtype=np.int64)
    if reps.size == 0:
        log_z = mean_f = float("nan")
    else:
        log_z = float(np.mean(np.asarray(sol.log_z, dtype=np.float64)[reps]))
        mean_f = float(np.mean(np.asarray(sol.free_energy, dtype=np.float64)[reps]))
    if rbm.visible == "bernoulli" and rbm.hidden == "bernoulli":
        # the same value as the general form below, in the form the binary runs (and their
        # resumable states) were made with: kept so that they continue bit for bit
        ll_rows = -rbm.free_energy(V) - log_z
    else:       # real-valued units: ln P(x) = data term (normalised priors) + mean 𝔽 (eq. 39)
        ll_rows = data_term(rbm, V) + mean_f
    n = ll_rows.shape[0]
    return {"sol": sol, "stats": stats, "log_z": log_z, "ll_rows": ll_rows,
            "ll": float(ll_rows.mean()),
            "ll_sem": float(ll_rows.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0,
            "n_fallback": int(bad.size), "iterations": float(np.mean(sol.n_iter))}


def base_rate_biases(X: np.ndarray, eps: float = 1e-3) -> np.ndarray:
    """Visible biases at the logits of the pixel means clipped to ``[eps, 1 − eps]`` — Alg. 2's
    "θ(0) ← X" for binary units (the rule of :mod:`rbmviz.tap.presets`), shape (n_visible,).

    Parameters
    ----------
    X : numpy.ndarray
        Data rows.
    eps : float
        Clipping of the means.

    Returns
    -------
    numpy.ndarray
        The visible biases, shape (n_visible,).
    """
    m = np.clip(np.asarray(X, dtype=np.float64).mean(axis=0), eps, 1.0 - eps)
    return np.log(m) - np.log1p(-m)


def _algorithm(s, seed):
    """The TAP training rule (Alg. 2) with the Table 1 settings of ``s``."""
    return algorithms.create("tap", learning_rate=s["learning_rate"], momentum=s["momentum"],
                             weight_decay=s["weight_decay"], n_solutions=s["n_solutions"],
                             order=2, damping=s["damping"], tol=s["tol"],
                             max_iter=s["max_iter"], momentum_form=s["momentum_form"],
                             learning_rate_final=s.get("learning_rate_final"),
                             decay_epochs=s.get("decay_epochs"), seed=seed,
                             products=s.get("products", "float64"),
                             fixed_iter=s.get("train_iter"))


def run(*, dataset: str = "binary-mnist", epochs: int | None = None, samples: int | None = None,
        eval_samples: int | None = None, test_samples: int | None = None,
        hidden: Sequence[int] | None = None, count_hidden: int | None = None,
        eval_every: int = 1, isomap_epochs: Sequence[int] | None = None,
        ps: Sequence[float] = DEFAULT_PS, batch_size: int | None = None,
        n_solutions: int | None = None, learning_rate: float | None = None,
        learning_rate_final: float | None = None, decay_epochs: int | None = None,
        weight_decay: float | None = None, momentum: float = 0.5, momentum_form: str = "heavy_ball",
        init_scale: float = 0.001, damping: float = _Solver.damping,
        eval_damping: float = _Solver.first_damping, tol: float = _Solver.tol,
        max_iter: int = _Solver.max_iter, unique_tol: float = _Solver.unique_tol,
        n_neighbors: int = 5, seed: int = 0, eval_tol: float = _Solver.count_tol,
        eval_max_iter: int | None = None,
        products: str = "float64", train_iter: int = TRAIN_ITER,
        eval_epochs: Sequence[int] = (), eval_fallback_damping: Sequence[float] | None = None,
        data: np.ndarray | None = None, progress: bool = False,
        callback: Callable[..., Any] | None = None, models: dict | None = None, state_dir: str | os.PathLike | None = None,
        save_epochs: Sequence[int] = ()) -> tuple[dict, dict]:
    """Run the experiment.

    Every setting left at None takes the paper's value for ``dataset``
    (:data:`DATASETS`, Table 1 and Figs. 3, 5, 7).

    Parameters
    ----------
    dataset : {"binary-mnist", "real-mnist", "cbcl"}
        Table 1's data sets: MNIST thresholded at 0.5 with Bernoulli visible units; MNIST in
        [0, 1] with truncated Gauss–Bernoulli visible units (eq. 94); the 2,429 CBCL faces in
        [0, 1] with truncated Gaussian visible units (eqs. 71–75).  The real-valued models
        start with their priors fitted to the data (:func:`rbmviz.tap.presets.init_priors_from_data`).
    epochs : int
        Training epochs (paper: 100; CBCL 500, Fig. 7c).
    samples : int
        Training rows: the first ``samples`` training images (paper: all — 60,000 MNIST
        images, 2,429 faces).
    eval_samples : int
        The first rows of the training set used as initialisations for the
        TAP log-likelihood and the solution counting (paper: 10,000 MNIST, 2,400 CBCL;
        capped at ``samples``).
    test_samples : int
        Held-out MNIST test images for the denoising curves (paper: 1,000;
        0 skips denoising; binary-MNIST only).
    hidden : sequence of int
        numbers of hidden units trained (paper: 25, 50, 100, 500 binary-MNIST; 100, 500
        real-MNIST; 256 CBCL).
    count_hidden : the N_h whose solutions are mapped by Isomap (default 100 for MNIST, 256
        for CBCL, if trained; else the last of ``hidden``).
    eval_every : int
        record every this many epochs (plus epoch 0, the Isomap epochs and the last).
    isomap_epochs : epochs whose solutions are drawn in the Isomap maps (paper: 1, 3, 25, 100;
        CBCL 5, 100, 200, 500; those beyond ``epochs`` are dropped and the last epoch is
        always included).
    ps : sequence of float
        flip probabilities of the denoising curves.
    batch_size, n_solutions, learning_rate, weight_decay, momentum : Alg. 2 settings M, K, γ,
        ε, η (Table 1: 100, 100, 0.005, 0.001, 0.5 for binary-MNIST; real-MNIST γ from 1e-2;
        CBCL M = K = 20, ε = 0.01).  ``n_solutions`` defaults to ``batch_size`` (K = M).
    learning_rate_final, decay_epochs : real-MNIST's decreasing γ (Table 1: 1e-2 → 1e-5):
        a geometric decay to ``learning_rate_final`` over ``decay_epochs`` epochs (default:
        the paper's 100, also when a run goes on longer).
    momentum_form : ``"heavy_ball"`` (default: ``v ← η v + γ(ΔW − εW)``, ``W ← W + v``) or
        ``"printed"`` (Alg. 2 literally: ``W ← W + γ(ΔW − εW) + η ΔW(t−1)``, the previous
        *gradient* unscaled by γ — with η = 0.5 an effective step ~100× γ; on binary-MNIST it
        drives the weights to a large symmetric state in which the log-likelihood does not
        improve, see the notes).
    init_scale : float
        standard deviation σ of the initial weights (Sec. VII.3: ≈ 1e-3).
    damping, tol, max_iter : of Alg. 1 in training (damping 0.5; MSE change < ``tol`` = 1e-8,
        at most ``max_iter`` iterations) and in denoising.
    eval_damping : damping of the evaluation solves (1 = Alg. 1 as printed); rows that do not
        converge are solved again with ``damping`` (:func:`evaluate_tap` says why).
    unique_tol : float
        de-duplication tolerance of the TAP solutions.
    n_neighbors : int
        Isomap neighbourhood size.
    seed : int.
        Seed of the experiment's randomness.
    eval_tol : solve tolerance of the evaluation (likelihood, counting, maps): 1e-12
        (:data:`rbmviz.tap.COUNT_TOL`); at 1e-8 one fixed point is counted many times.
    eval_max_iter : int, optional
        Iterations of the evaluation's damped second attempt (default: ``max_iter``).  Late
        in paper-scale training many rows converge slowly: binary-MNIST N_h = 100 at epoch 7,
        1,000 rows, 75 % converge within 1,000 iterations and 99 % within 4,000 (262 → 289
        unique solutions), so ``eval_max_iter=4000`` counts more completely at ~1.5× the
        evaluation time.
    eval_fallback_damping : sequence of float, optional
        Dampings of the evaluation's later attempts, each on the rows the attempts before it
        left unconverged, with ``eval_max_iter × d₁ / d`` iterations at damping ``d``
        (default :func:`rbmviz.tap.inference.damping_ladder`: ``(damping, 0.2, 0.1, 0.05)``).
        Some trained models' iteration keeps oscillating at damping 0.5: binary-MNIST N_h = 25
        after 50 epochs of 10 iterations per update, 1,000 rows: 166 converge at 0.5 (in
        1,000 or 4,000 iterations), 991 with 0.2 after it (21 → 125 unique solutions; TAP
        log-likelihood −126.9 on the 166 rows, −128.0 on the 991); after 100 epochs only
        0.1 and 0.05 converge most rows.  A continuation may change it (each curve row
        records it).
    products : {"float64", "float32"}
        Precision of the matrix products of the *training* solves (binary models;
        :func:`rbmviz.tap.solve`).  ``"float32"`` makes paper-scale training ~1.6× faster
        (binary-MNIST N_h = 100 at epoch 7: 1.04 → 0.62 s per update, the same iteration
        counts); the products' relative error ~1e-7 lies far below the training tolerance.
        The evaluation always solves in float64.  A continuation may change it (a state
        directory keeps training); the rows trained with float32 products carry
        ``train_products``.
    train_iter : int
        Run the training solves of Alg. 1 exactly this many iterations and use every run
        (:class:`rbmviz.algorithms.TAP`'s ``fixed_iter``; App. D, Fig. 10: 3, 10 and 100
        iterations train alike, the reference implementation uses 3); default
        :data:`TRAIN_ITER` (10).  0: iterate each run to ``tol`` (at most ``max_iter``) and
        leave out the runs that do not converge, Alg. 2 as printed.  At paper scale
        (binary-MNIST, N_h = 100) iterating to 1e-8 costs ~190 iterations per run and
        ~10 min per epoch on one core, 10 iterations ~35 s, and the log-likelihood curves
        agree within 1.3 % (results/tap-machines/README.md); the quick form (2,000 rows, 5
        epochs) runs in ~3 min instead of ~10 and learns as much.  The evaluation is
        unaffected.
    eval_epochs : sequence of int
        Further epochs to evaluate besides every ``eval_every`` and the Isomap epochs (e.g.
        ``eval_every=25, eval_epochs=(1, 2, 3, 5, 10)``: the fast early rise densely, the
        rest sparsely — each evaluation of 10,000 samples costs minutes at paper scale).
    data : optional ``(X_train, labels_train, X_test)`` binary arrays to use instead of MNIST
        (tests, other data); ``labels_train`` may be None (no data map) and ``X_test`` None
        (no denoising).  ``samples`` / ``test_samples`` then take the first rows.
    progress : bool
        show a tqdm progress bar (with the estimated time left).
    callback : callable, optional
        ``callback(record)`` after every evaluation, with the new row of the ``curves``
        table (a dict) — e.g. to stream a live plot.
    models : dict, optional
        Receives the trained models, ``models[N_h] = rbm``.
    state_dir : path, optional
        Make the run resumable: after every epoch the training state (parameters, momentum,
        counters, the shuffle stream) of each N_h is written to ``state_dir/nh<N_h>/``, and
        every evaluation next to it; a later call with the same ``state_dir`` and settings
        (``epochs``, ``hidden``, ``count_hidden``, ``ps`` and ``test_samples`` may differ;
        the Isomap points exist only for the ``count_hidden`` of the run that evaluated them) continues where the
        last stopped — a crash loses at most one epoch — and gives the same tables, bit for
        bit, as an uninterrupted run.  Settings that differ are refused (``ValueError``).
    save_epochs : sequence of int
        Epochs at which each model is saved as ``state_dir/nh<N_h>/model_epoch<E>.npz``
        (:meth:`rbmviz.RBM.save`; needs ``state_dir``).

    Returns
    -------
    tables : dict of pandas.DataFrame (the :data:`TABLES`)
        ``curves`` — one row per N_h and recorded epoch: ``n_hidden, n_visible, epoch, updates,
        wall_time, tap_ll, tap_ll_sem, tap_ll_per_unit, tap_ll_per_unit_sem, exact_ll,
        tap_log_z, n_init, n_converged, n_unique, unique_fraction, mean_free_energy,
        min_free_energy, max_free_energy, weight_norm, eval_iterations, n_fallback,
        train_not_converged`` (eval_iterations: mean Alg. 1 iterations of the evaluation;
        n_fallback: evaluation rows re-solved with damping; train_not_converged: training
        TAP runs excluded for hitting max_iter, cumulative);
        ``solutions`` — one row per unique solution: ``n_hidden, epoch, solution,
        free_energy, count``;
        ``isomap`` — Fig. 6: ``n_hidden, epoch, solution, x, y, free_energy, fe_scaled,
        count, fitted`` (fe_scaled: free energy rescaled to [0, 1] within the epoch, the
        colour scale of Fig. 6; fitted = the points the map was fitted on);
        ``data_map`` — Fig. 7: ``n_hidden, epoch, row, label, x, y, sol_x, sol_y,
        free_energy, converged``;
        ``denoising`` — Fig. 8: ``n_hidden`` (0 for the baselines), ``p, method, mcc,
        mcc_sem, bit_error, n_images, not_converged``.
    summary : dict
        See :func:`rbmviz.reproduce.tap_summary.summarize`.

    Raises
    ------
    ValueError
        For ``save_epochs`` without ``state_dir``, or an invalid setting.
    """
    import pandas as pd

    from ..tap.landscape import SolutionMap, epoch_statistics

    s = _check_settings(dataset=dataset, learning_rate_final=learning_rate_final,
                        decay_epochs=decay_epochs, epochs=epochs, samples=samples,
                        eval_samples=eval_samples,
                        test_samples=test_samples, hidden=hidden, count_hidden=count_hidden,
                        eval_every=eval_every, isomap_epochs=isomap_epochs, ps=ps,
                        batch_size=batch_size, n_solutions=n_solutions,
                        learning_rate=learning_rate, weight_decay=weight_decay,
                        momentum=momentum, momentum_form=momentum_form, init_scale=init_scale,
                        damping=damping,
                        eval_damping=eval_damping, tol=tol, eval_tol=eval_tol,
                        max_iter=max_iter, unique_tol=unique_tol, n_neighbors=n_neighbors,
                        seed=seed, eval_max_iter=eval_max_iter, products=products,
                        train_iter=train_iter, eval_epochs=eval_epochs,
                        eval_fallback_damping=eval_fallback_damping)
    save_epochs = sorted({check_int(e, "save_epochs", low=0) for e in save_epochs})
    if save_epochs and state_dir is None:
        raise ValueError("save_epochs needs state_dir (where the models are written)")
    X, y, X_test = _load_data(s, data)
    s["samples"] = X.shape[0]
    s["eval_samples"] = min(s["eval_samples"], X.shape[0])
    s["test_samples"] = 0 if X_test is None else X_test.shape[0]
    s["data"] = DATASETS[dataset]["label"] if data is None else "user data"
    state = None if state_dir is None else _state.RunState(state_dir, s)
    iso_epochs = sorted({e for e in s["isomap_epochs"] if e <= s["epochs"]} | {s["epochs"]})
    schedule = eval_schedule(s["epochs"], s["eval_every"], iso_epochs + s.get("eval_epochs", []))
    if _dataset(s) == "cbcl":               # Fig. 7c: all training faces (one class)
        map_rows = np.arange(s["eval_samples"])
        y = np.zeros(X.shape[0], dtype=np.int64) if y is None else y
    elif y is None:
        map_rows = np.zeros(0, dtype=np.int64)
    else:                                   # Figs. 7a-b: the digits 3, 6 and 7
        map_rows = np.flatnonzero(np.isin(y[: s["eval_samples"]], DATA_MAP_DIGITS))
    ctx = dict(X=X, V=X[: s["eval_samples"]], y=y, map_rows=map_rows, iso_epochs=iso_epochs,
               schedule=schedule, save_epochs=save_epochs, state=state)

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(s["hidden"]) * (s["epochs"] + len(schedule)), unit=" step",
                   desc="tap", file=sys.stderr, bar_format="{l_bar}{bar}| {elapsed}<{remaining}")
    t0 = time.perf_counter()
    curves, sol_tables, iso_frames, map_frames, den_frames = [], [], [], [], []
    try:
        for i, nh in enumerate(s["hidden"]):
            rows, stats_by_epoch, iso_points, map_points, rbm = _train_and_evaluate(
                s, i, nh, ctx, bar, callback)
            curves += rows
            _, sols = epoch_statistics(stats_by_epoch)
            sols.insert(0, "n_hidden", nh)
            sol_tables.append(sols)
            if iso_points:
                iso_frames.append(_isomap_table(iso_points, nh, s["n_neighbors"], SolutionMap))
            if map_points:
                map_frames.append(_data_map_table(ctx["V"][map_rows], y[map_rows], map_rows,
                                                  map_points, nh, s["n_neighbors"], SolutionMap))
            if X_test is not None and s["ps"]:
                methods = ("tap", "ope", "nn") if not den_frames else ("tap",)
                den_frames.append(_denoising(rbm, X_test, X, s, nh, methods, state))
            if models is not None:
                models[nh] = rbm
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    tables = {
        "curves": pd.DataFrame(curves),
        "solutions": pd.concat(sol_tables, ignore_index=True),
        "isomap": (pd.concat(iso_frames, ignore_index=True) if iso_frames else
                   pd.DataFrame(columns=["n_hidden", "epoch", "solution", "x", "y",
                                         "free_energy", "fe_scaled", "count", "fitted"])),
        "data_map": (pd.concat(map_frames, ignore_index=True) if map_frames else
                     pd.DataFrame(columns=["n_hidden", "epoch", "row", "label", "x", "y", "sol_x",
                                           "sol_y", "free_energy", "converged"])),
        "denoising": (pd.concat(den_frames, ignore_index=True) if den_frames else
                      pd.DataFrame(columns=["n_hidden", "p", "method", "mcc", "mcc_sem",
                                            "bit_error", "n_images", "not_converged"])),
    }
    return tables, summarize(tables, settings=s, elapsed=elapsed)


def _dataset(s):
    return s.get("dataset", "binary-mnist")


def _new_model(s, i, nh, X):
    """Repetition ``i`` (N_h = ``nh``): the initial model and its TAP training run."""
    from .. import RBM
    from ..runs import Run

    if DATASETS[_dataset(s)]["visible"] == "bernoulli":
        rbm = RBM(X.shape[1], nh, init="normal", scale=s["init_scale"], seed=s["seed"] + i)
        rbm.b[:] = base_rate_biases(X)          # "θ(0) ← X"
    else:                                       # the prior's moments match the data's
        from ..tap.presets import initial_model, of_dataset
        rbm = initial_model(of_dataset(_dataset(s), n_visible=X.shape[1], n_hidden=nh,
                                       init_scale=s["init_scale"]), X, seed=s["seed"] + i)
    alg = _algorithm(s, s["seed"] + i)
    run_ = Run(rbm, X, alg, epochs=s["epochs"], batch_size=s["batch_size"],
               seed=s["seed"] + i, metrics=["weight_norm"], record_initial=False)
    return rbm, alg, run_


def _skip(bar, k):
    """Advance ``bar`` by ``k`` steps restored from a state directory, leaving them out of its
    rate, so the time left after a resume is estimated from the work actually done."""
    if k:
        bar.n += k
        bar.last_print_n += k
        bar.initial += k
        bar.refresh()


def _train_and_evaluate(s, i, nh, ctx, bar, callback):
    """Train N_h = ``nh`` epoch by epoch (resuming from ``ctx["state"]``), evaluating at the
    scheduled epochs.  Returns the curve rows, the solution statistics per epoch, the Isomap
    points, the data-map points and the trained model."""
    from ..tap.landscape import solution_features

    X, V, state = ctx["X"], ctx["V"], ctx["state"]
    rbm, alg, run_ = _new_model(s, i, nh, X)
    if state is not None:
        state.restore(nh, rbm, alg, run_)
    if bar is not None:
        _skip(bar, min(run_.epoch, s["epochs"]))
    rows, stats_by_epoch, iso_points, map_points = [], {}, {}, {}
    solve_kw = dict(damping=s["eval_damping"], tol=s["eval_tol"],
                    max_iter=s.get("eval_max_iter", s["max_iter"]),
                    unique_tol=s["unique_tol"],
                    fallback_damping=s["eval_fallback_damping"])
    for ep in (int(e) for e in ctx["schedule"]):
        if bar is not None:
            bar.set_description(f"tap N_h={nh} epoch {ep}/{s['epochs']}")
        saved = None if state is None else state.load_eval(nh, ep)
        restored = saved is not None
        if not restored:
            if run_.epoch > ep:
                raise ValueError(f"state_dir holds N_h={nh} trained to epoch {run_.epoch} but no "
                                 f"evaluation of epoch {ep}; use a new state_dir for this "
                                 f"evaluation schedule")
            while run_.epoch < ep:
                run_.step(1)
                if bar is not None:
                    bar.update(1)
                if state is not None:
                    if run_.epoch in ctx["save_epochs"]:
                        state.save_model(nh, run_.epoch, rbm)
                    if run_.epoch < ep:     # the scheduled epoch is saved with its evaluation
                        state.save(nh, rbm, alg, run_)
            if ep == 0 and state is not None and 0 in ctx["save_epochs"]:
                state.save_model(nh, 0, rbm)
            saved = _evaluate_epoch(s, nh, ep, rbm, alg, run_, V, ctx, solve_kw,
                                    solution_features)
            if state is not None:
                state.save_eval(nh, ep, saved)
                state.save(nh, rbm, alg, run_)
        elif run_.epoch < ep:
            raise ValueError(f"state_dir holds an evaluation of N_h={nh} at epoch {ep} but the "
                             f"training state of epoch {run_.epoch}; the directory is inconsistent")
        rows.append(saved["row"])
        stats_by_epoch[ep] = saved["stats"]
        if "iso" in saved and ep in ctx["iso_epochs"]:    # (an earlier, shorter run maps
            iso_points[ep] = saved["iso"]                 # its last epoch too)
        if "map" in saved and ep in ctx["iso_epochs"]:
            map_points[ep] = saved["map"]
        if callback is not None:
            callback(dict(saved["row"]))
        if bar is not None and restored:
            _skip(bar, 1)
        elif bar is not None:
            bar.update(1)
    # training beyond the last scheduled epoch cannot happen (the last epoch is scheduled)
    return rows, stats_by_epoch, iso_points, map_points, rbm


def _evaluate_epoch(s, nh, ep, rbm, alg, run_, V, ctx, solve_kw, solution_features):
    """The TAP evaluation at epoch ``ep``: the curve row, the solution statistics and, for
    the counting model at an Isomap epoch, the points of Figs. 6–7."""
    ev = evaluate_tap(rbm, V, **solve_kw)
    st = ev["stats"]
    exact = float("nan")
    if nh <= EXACT_MAX_HIDDEN and _dataset(s) == "binary-mnist":
        from ..evaluate import log_likelihood_exact
        exact = log_likelihood_exact(rbm, V)
    units = rbm.n_visible + nh
    fe = np.asarray(st["free_energy"], dtype=np.float64)
    row = {
        "n_hidden": nh, "n_visible": rbm.n_visible, "epoch": ep, "updates": alg.updates,
        "wall_time": run_.wall_time, "tap_ll": ev["ll"], "tap_ll_sem": ev["ll_sem"],
        "tap_ll_per_unit": ev["ll"] / units, "tap_ll_per_unit_sem": ev["ll_sem"] / units,
        "exact_ll": exact, "tap_log_z": ev["log_z"], "n_init": st["n_init"],
        "n_converged": st["n_converged"], "n_unique": st["n_unique"],
        "unique_fraction": st["unique_fraction"],
        "mean_free_energy": st["mean_free_energy"],
        "min_free_energy": float(fe.min()) if st["n_unique"] else np.nan,
        "max_free_energy": float(fe.max()) if st["n_unique"] else np.nan,
        "weight_norm": float(np.linalg.norm(rbm.W)), "eval_iterations": ev["iterations"],
        "n_fallback": ev["n_fallback"],
        "eval_fallback_damping": ",".join(f"{d:g}" for d in solve_kw["fallback_damping"]),
        "train_not_converged": alg.not_converged_total}
    if s.get("products", "float64") != "float64":
        row["train_products"] = s["products"]
    stats = {k: st[k] for k in ("n_init", "n_converged", "n_unique", "unique_fraction",
                                "mean_free_energy")}
    stats["free_energy"] = fe
    stats["counts"] = np.asarray(st["counts"], dtype=np.int64)
    out = {"row": row, "stats": stats}
    if nh == s["count_hidden"] and ep in ctx["iso_epochs"]:
        reps = np.asarray(st["representatives"], dtype=np.int64)
        out["iso"] = (solution_features(ev["sol"], reps), fe, stats["counts"])
        map_rows = ctx["map_rows"]
        if map_rows.size:
            labels = np.asarray(st["labels"], dtype=np.int64)[map_rows]
            mfe = np.full(map_rows.size, np.nan)
            ok = labels >= 0
            mfe[ok] = fe[labels[ok]]
            out["map"] = (np.asarray(ev["sol"].av)[map_rows], mfe,
                          np.asarray(ev["sol"].converged)[map_rows])
    return out


def _denoising(rbm, X_test, X, s, nh, methods, state):
    """Fig. 8 for one model (read back from ``state`` when already computed)."""
    from ..tap.denoising import denoising_curve

    key = {"methods": list(methods), "ps": s["ps"], "test_samples": int(X_test.shape[0]),
           "epochs": s["epochs"]}
    if state is not None:
        d = state.load_denoising(nh, key)
        if d is not None:
            return d
    d = denoising_curve(rbm, X_test, s["ps"], train=X, methods=methods,
                        seed=s["seed"], damping=s["damping"], tol=s["tol"],
                        max_iter=s["max_iter"])
    d.insert(0, "n_hidden", np.where(d["method"] == "tap", nh, 0))
    if state is not None:
        state.save_denoising(nh, key, d)
    return d


def _load_data(s, data):
    if data is None:
        from .. import datasets
        if _dataset(s) == "cbcl":
            X = datasets.cbcl(limit=s["samples"])
            return X, np.zeros(X.shape[0], dtype=np.int64), None      # one class: faces
        binarize = "threshold" if _dataset(s) == "binary-mnist" else None
        X, y = datasets.mnist("train", binarize=binarize, return_labels=True,
                              limit=s["samples"])
        X_test = (datasets.mnist("test", binarize=binarize, limit=s["test_samples"])
                  if s["test_samples"] else None)
        return X, y, X_test
    from .._validation import check_data
    if not isinstance(data, (tuple, list)) or len(data) != 3:
        raise TypeError("data must be a tuple (X_train, labels_train, X_test); labels_train "
                        "and X_test may be None")
    binary = _dataset(s) == "binary-mnist"
    X = check_data(data[0], "data[0] (X_train)", binary=binary)[: s["samples"]]
    y = None if data[1] is None else np.asarray(data[1])[: s["samples"]]
    if y is not None and y.shape[0] != X.shape[0]:
        raise ValueError(f"data[1] (labels) has {y.shape[0]} entries for {X.shape[0]} rows")
    X_test = None
    if data[2] is not None and s["test_samples"]:
        X_test = check_data(data[2], "data[2] (X_test)", n_visible=X.shape[1],
                            binary=binary)[: s["test_samples"]]
    return X, y, X_test


def _isomap_table(points, nh, n_neighbors, SolutionMap):
    """Fig. 6: fit on the last epoch's unique solutions (or all epochs' if fewer than 3)."""
    import pandas as pd

    last = max(points)
    fit_on = [last] if points[last][0].shape[0] >= 3 else sorted(points)
    F = np.concatenate([points[e][0] for e in fit_on])
    cols = ["n_hidden", "epoch", "solution", "x", "y", "free_energy", "fe_scaled", "count",
            "fitted"]
    if F.shape[0] < 3:
        return pd.DataFrame(columns=cols)
    m = SolutionMap(n_neighbors=n_neighbors).fit(F)
    frames = []
    for e in sorted(points):
        feats, fe, counts = points[e]
        f = m.frame(feats, free_energy=fe, count=counts)
        if f.shape[1] < 4 or "y" not in f:      # a 1-D map (fit on very few points)
            f["y"] = 0.0
        span = fe.max() - fe.min() if fe.size else 0.0
        f["fe_scaled"] = (fe - fe.min()) / span if span > 0 else 0.5    # Fig. 6 colour scale
        f.insert(0, "solution", np.arange(len(f)))
        f.insert(0, "epoch", e)
        f.insert(0, "n_hidden", nh)
        f["fitted"] = e in fit_on
        frames.append(f[cols])
    return pd.concat(frames, ignore_index=True)


def _data_map_table(X_map, labels, rows, points, nh, n_neighbors, SolutionMap):
    """Fig. 7: fit on the data (digits 3, 6, 7), embed the magnetisations they reach."""
    import pandas as pd

    if X_map.shape[0] < 3:
        return pd.DataFrame()
    m = SolutionMap(n_neighbors=n_neighbors).fit(X_map)
    frames = []
    for e in sorted(points):
        av, fe, conv = points[e]
        S = m.transform(av)
        frames.append(pd.DataFrame({
            "n_hidden": nh, "epoch": e, "row": rows, "label": labels,
            "x": m.embedding_[:, 0], "y": m.embedding_[:, 1] if m.embedding_.shape[1] > 1 else 0.0,
            "sol_x": S[:, 0], "sol_y": S[:, 1] if S.shape[1] > 1 else 0.0,
            "free_energy": fe, "converged": conv}))
    return pd.concat(frames, ignore_index=True)


