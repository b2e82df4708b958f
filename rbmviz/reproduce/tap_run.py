"""Running the TAP-machines reproduction (Tramel et al. 2018, Sec. VII on binary-MNIST):
training with Alg. 2, the TAP evaluation at recorded epochs (eqs. 36–39), the Isomap maps
(Figs. 6–7) and the denoising curves (Fig. 8) — :func:`run`, resumable per epoch through
``state_dir`` (:mod:`rbmviz.reproduce._tap_state`).

The run loop lives here; the settings (declared once, their check) in
:mod:`rbmviz.reproduce.tap_settings`, the TAP evaluation and the Isomap and denoising tables in
:mod:`rbmviz.reproduce.tap_eval`, the command line, the figure and the summary in
:mod:`rbmviz.reproduce.tap`, :mod:`rbmviz.viz.tap` and :mod:`rbmviz.reproduce.tap_summary`.
This module re-exports the public names of the settings and the evaluation.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

from .. import algorithms, datasets
from .._validation import check_int
from ..tap.presets import BINARIZE
from . import _io
from . import _tap_state as _state
from ._study import values
from .tap_eval import _data_map_table, _denoising_table, _isomap_table
from .tap_eval import base_rate_biases, evaluate_tap
from .tap_settings import (TRAIN_ITER, Settings, check_settings, dataset_defaults,
                           eval_schedule)
from .tap_summary import (DATA_MAP_DIGITS, DATASETS, DEFAULT_PS, EXACT_MAX_HIDDEN, PAPER,
                          TABLES, summarize)

# Settings stays importable from here but is documented once, in tap_settings (and tap)
__all__ = ["PAPER", "TABLES", "DEFAULT_PS", "DATASETS", "TRAIN_ITER", "run",
           "evaluate_tap", "base_rate_biases", "eval_schedule", "dataset_defaults"]

# (the name the check of the settings had in this module)
_check_settings = check_settings

#: the declared defaults of :class:`Settings`, the defaults of :func:`run`
_DEFAULT = values(Settings())


def _parse_list(text, kind, name):
    """``"1,2,5"`` → list; ``"none"``/empty → []."""
    return _io.parse_list(text, kind, name, allow_empty=True)


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


def run(*, dataset: str = _DEFAULT["dataset"], epochs: int | None = _DEFAULT["epochs"],
        samples: int | None = _DEFAULT["samples"],
        eval_samples: int | None = _DEFAULT["eval_samples"],
        test_samples: int | None = _DEFAULT["test_samples"],
        hidden: Sequence[int] | None = _DEFAULT["hidden"],
        count_hidden: int | None = _DEFAULT["count_hidden"],
        eval_every: int = _DEFAULT["eval_every"],
        isomap_epochs: Sequence[int] | None = _DEFAULT["isomap_epochs"],
        ps: Sequence[float] | None = _DEFAULT["ps"],
        batch_size: int | None = _DEFAULT["batch_size"],
        n_solutions: int | None = _DEFAULT["n_solutions"],
        learning_rate: float | None = _DEFAULT["learning_rate"],
        learning_rate_final: float | None = _DEFAULT["learning_rate_final"],
        decay_epochs: int | None = _DEFAULT["decay_epochs"],
        weight_decay: float | None = _DEFAULT["weight_decay"],
        momentum: float = _DEFAULT["momentum"], momentum_form: str = _DEFAULT["momentum_form"],
        init_scale: float = _DEFAULT["init_scale"], damping: float = _DEFAULT["damping"],
        eval_damping: float = _DEFAULT["eval_damping"], tol: float = _DEFAULT["tol"],
        max_iter: int = _DEFAULT["max_iter"], unique_tol: float = _DEFAULT["unique_tol"],
        n_neighbors: int = _DEFAULT["n_neighbors"], seed: int = _DEFAULT["seed"],
        eval_tol: float = _DEFAULT["eval_tol"],
        eval_max_iter: int | None = _DEFAULT["eval_max_iter"],
        products: str = _DEFAULT["products"], train_iter: int = _DEFAULT["train_iter"],
        eval_epochs: Sequence[int] = tuple(_DEFAULT["eval_epochs"]),
        eval_fallback_damping: Sequence[float] | None = _DEFAULT["eval_fallback_damping"],
        data: np.ndarray | None = None, progress: bool = False,
        callback: Callable[..., Any] | None = None, models: dict | None = None,
        state_dir: str | os.PathLike | None = None,
        save_epochs: Sequence[int] = ()) -> tuple[dict, dict]:
    """Run the experiment.

    The settings' defaults and bounds are declared once, in :class:`Settings` (also
    ``rbmviz reproduce tap``'s options); every setting left at None takes the paper's value
    for ``dataset`` (:data:`DATASETS`, Table 1 and Figs. 3, 5, 7).

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
    ps : sequence of float, optional
        flip probabilities of the denoising curves (default :data:`DEFAULT_PS`).
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

    s = check_settings(dataset=dataset, learning_rate_final=learning_rate_final,
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
                den_frames.append(_denoising_table(rbm, X_test, X, s, nh, methods, state))
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
    rbm, _, run_ = _new_model(s, i, nh, X)
    if state is not None:                   # the run's model, rule and position from there
        state.restore(nh, run_)
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
                        state.save(nh, run_)
            if ep == 0 and state is not None and 0 in ctx["save_epochs"]:
                state.save_model(nh, 0, rbm)
            saved = _evaluate_epoch(s, nh, ep, rbm, run_, V, ctx, solve_kw, solution_features)
            if state is not None:
                state.save_eval(nh, ep, saved)
                state.save(nh, run_)
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


def _evaluate_epoch(s, nh, ep, rbm, run_, V, ctx, solve_kw, solution_features):
    """The TAP evaluation at epoch ``ep``: the curve row, the solution statistics and, for
    the counting model at an Isomap epoch, the points of Figs. 6–7."""
    alg = run_.algorithm
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


def _load_data(s, data):
    """``(X, labels, X_test)`` of the run: the data set's rows (:func:`rbmviz.datasets.load_split`,
    binarised as :func:`rbmviz.tap.presets.load_data` does for its Table 1 column), or the
    first rows of the arrays the caller gave."""
    if data is None:
        binarize = BINARIZE[_dataset(s)]
        if _dataset(s) == "cbcl":
            X = datasets.load_split("cbcl", "all", limit=s["samples"], binarize=binarize)
            return X, np.zeros(X.shape[0], dtype=np.int64), None      # one class: faces
        X, y = datasets.load_split("mnist", "train", limit=s["samples"], binarize=binarize,
                                   return_labels=True)
        X_test = (datasets.load_split("mnist", "test", limit=s["test_samples"], binarize=binarize)
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
