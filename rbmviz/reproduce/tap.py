"""Reproduction of Tramel, Gabrié, Manoel, Caltagirone & Krzakala (2018), "A deterministic
and generalized framework for unsupervised learning with restricted Boltzmann machines"
(PRX 8, 041006), Sec. VII on binary-MNIST (``reference/tap-experiments.md`` §1–5).

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

Repetition of the protocol for N_h = ``hidden[i]`` starts from
``RBM(784, N_h, init="normal", scale=0.001, seed=seed + i)`` with the visible biases at the
logits of the pixel means (:func:`base_rate_biases`) and is trained with the Table 1
settings (the ``binary-mnist`` presets of :mod:`rbmviz.tap.presets`) but heavy-ball
momentum by default — Alg. 2's printed momentum term, the previous gradient unscaled by the
learning rate, stalled binary-MNIST training in our tests (``--momentum-form printed`` runs
it); everything is reproducible from ``seed``.
"""
from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import _io
from ._io import finite_or_none as _f

__all__ = ["PAPER", "TABLES", "FILES", "PARTS", "run", "evaluate_tap", "base_rate_biases",
           "summarize", "claims",
           "format_summary", "figure", "save", "check_out_dir", "eval_schedule",
           "add_arguments", "main"]

#: what the paper reports (tap-experiments.md §2–5, reference-numbers.md §7)
PAPER = {
    "epochs": 100,
    "train_samples": 60_000,
    "eval_samples": 10_000,
    "test_images": 1_000,
    "hidden": (25, 50, 100, 500),
    "count_hidden": 100,
    "ll_tapers_by_epoch": 20,
    "unique_at_start": 1,
    "unique_fraction_max": 0.10,
    "isomap_epochs": (1, 3, 25, 100),
}
#: the tables returned by :func:`run` and written by :func:`save` (as ``<name>.csv``)
TABLES = ("curves", "solutions", "isomap", "data_map", "denoising")
FILES = tuple(f"{t}.csv" for t in TABLES) + ("summary.json", "figure.html")
#: flip probabilities of the denoising curves (the paper's grid on [0, 0.5] is not given)
DEFAULT_PS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
#: digit classes of the Fig. 7 data map
DATA_MAP_DIGITS = (3, 6, 7)
#: exact log-likelihood alongside the TAP one when the hidden layer has at most this many units
EXACT_MAX_HIDDEN = 16
NOTES = [
    "Momentum: heavy-ball (v <- eta v + gamma (dW - eps W)) by default. Alg. 2 as printed adds "
    "eta dW(t-1), the previous gradient not scaled by gamma; on binary-MNIST (784x10, 1,000 "
    "rows, gamma 0.005, M=K=20 or 100) that form drove |W| to ~12 within one epoch and the "
    "exact log-likelihood did not improve (-202.72 -> -202.72 nats), while heavy-ball with "
    "gamma 0.05, M=K=20 raised it to -191.4 in 4 epochs. Which form the authors used is "
    "unconfirmed; --momentum-form printed runs the literal one.",
    "Uniqueness criterion of TAP solutions (not given in the paper): max |Δa^v| and "
    "max |Δa^h| both below unique_tol (1e-4).",
    "The TAP log-likelihood is eq. (39) with the unique converged solutions averaged "
    "uniformly; its standard error is over the evaluation samples (the TAP term is shared).",
    "Isomap: scikit-learn Isomap(n_components=2, n_neighbors=5) (hyper-parameters not given "
    "in the paper); Fig. 6 falls back to the unique solutions of all recorded epochs when the "
    "last epoch has fewer than 3.",
    "Denoising: p grid, per-image MCC average and 1-NN by Hamming distance are project "
    "choices (tap-experiments.md §5.3, §5.5); eqs. (43), (44), (46) with their errata fixed.",
]


# ---------------------------------------------------------------------------- settings


def _parse_list(text, kind, name):
    """``"1,2,5"`` → list; ``"none"``/empty → []."""
    return _io.parse_list(text, kind, name, allow_empty=True)


def _check_settings(*, epochs, samples, eval_samples, test_samples, hidden, count_hidden,
                    eval_every, isomap_epochs, ps, batch_size, n_solutions, learning_rate,
                    weight_decay, momentum, momentum_form, init_scale, damping, eval_damping, tol,
                    max_iter, unique_tol, eval_tol,
                    n_neighbors, seed):
    from .._validation import check_choice, check_float, check_int, check_seed
    hidden = list(dict.fromkeys(check_int(h, "hidden", low=1) for h in hidden))
    if not hidden:
        raise ValueError("hidden is empty; expected at least one number of hidden units")
    if count_hidden is None:
        count_hidden = 100 if 100 in hidden else hidden[-1]
    count_hidden = check_int(count_hidden, "count_hidden", low=1)
    if count_hidden not in hidden:
        raise ValueError(f"count_hidden={count_hidden} must be one of hidden={hidden}")
    samples = check_int(samples, "samples", low=2, high=60_000)
    epochs = check_int(epochs, "epochs", low=0)
    batch_size = check_int(batch_size, "batch_size", low=1)
    if batch_size > samples:
        raise ValueError(f"batch_size={batch_size} is larger than samples={samples}")
    ps = [check_float(p, "p (flip probability)", low=0.0, high=0.5) for p in ps]
    return dict(
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


def eval_schedule(epochs, eval_every=1, extra=()):
    """Recorded epochs: 0, every ``eval_every``, the ``extra`` ones (e.g. the Isomap epochs)
    that do not exceed ``epochs``, and the last.  Sorted (n,) int64."""
    lin = np.arange(0, epochs + 1, eval_every)
    extra = [e for e in extra if 0 <= e <= epochs]
    return np.unique(np.concatenate([lin, extra, [0, epochs]])).astype(np.int64)


# ---------------------------------------------------------------------------- evaluation

def evaluate_tap(rbm, V, *, damping=1.0, tol=1e-12, max_iter=1000, unique_tol=1e-4,
                 fallback_damping=0.5, fallback_tol=1e-12, first_max_iter=200):
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

    Returns
    -------
    dict with ``sol`` (the ``TAPSolution``), ``stats``
    (:func:`rbmviz.tap.landscape.solution_statistics`), ``log_z`` (the TAP estimate of the
    RBM's log partition function: mean of ``sol.log_z`` over the unique converged solutions,
    i.e. −𝔽_RBM averaged uniformly, eq. 39), ``ll_rows`` (per-row TAP log-likelihood
    ``−F(v) − log_z``, eq. 39), ``ll`` (their mean, nats), ``ll_sem`` (standard error),
    ``n_fallback`` (rows solved again with damping), ``iterations`` (mean iterations).
    """
    import dataclasses

    from ..tap import solve
    from ..tap.landscape import solution_statistics

    first = max_iter if fallback_damping is None else min(first_max_iter, max_iter)
    sol = solve(rbm, V, order=2, damping=damping, tol=tol, max_iter=first)
    bad = sol.not_converged
    if bad.size and fallback_damping is not None and fallback_damping != damping:
        again = solve(rbm, V[bad], order=2, damping=fallback_damping, tol=fallback_tol,
                      max_iter=max_iter)
        fields = {}
        for f in sol._ROW_FIELDS:
            arr = np.array(getattr(sol, f), copy=True)
            arr[bad] = getattr(again, f)
            fields[f] = arr
        sol = dataclasses.replace(sol, **fields)
    stats = solution_statistics(sol, tol=unique_tol)
    reps = np.asarray(stats["representatives"], dtype=np.int64)
    if reps.size == 0:
        log_z = float("nan")
    else:
        log_z = float(np.mean(np.asarray(sol.log_z, dtype=np.float64)[reps]))
    ll_rows = -rbm.free_energy(V) - log_z
    n = ll_rows.shape[0]
    return {"sol": sol, "stats": stats, "log_z": log_z, "ll_rows": ll_rows,
            "ll": float(ll_rows.mean()),
            "ll_sem": float(ll_rows.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0,
            "n_fallback": int(bad.size), "iterations": float(np.mean(sol.n_iter))}


def base_rate_biases(X, eps=1e-3):
    """Visible biases at the logits of the pixel means clipped to ``[eps, 1 − eps]`` — Alg. 2's
    "θ(0) ← X" for binary units (the rule of :mod:`rbmviz.tap.presets`), shape (n_visible,)."""
    m = np.clip(np.asarray(X, dtype=np.float64).mean(axis=0), eps, 1.0 - eps)
    return np.log(m) - np.log1p(-m)


def _algorithm(s, seed):
    """The TAP training rule (Alg. 2) with the Table 1 settings of ``s``."""
    from .. import algorithms
    return algorithms.create("tap", learning_rate=s["learning_rate"], momentum=s["momentum"],
                             weight_decay=s["weight_decay"], n_solutions=s["n_solutions"],
                             order=2, damping=s["damping"], tol=s["tol"],
                             max_iter=s["max_iter"], momentum_form=s["momentum_form"],
                             seed=seed)


def run(*, epochs=100, samples=60_000, eval_samples=10_000, test_samples=1_000,
        hidden=(25, 50, 100, 500), count_hidden=None, eval_every=1,
        isomap_epochs=PAPER["isomap_epochs"], ps=DEFAULT_PS, batch_size=100, n_solutions=100,
        learning_rate=0.005, weight_decay=0.001, momentum=0.5, momentum_form="heavy_ball",
        init_scale=0.001, damping=0.5,
        eval_damping=1.0, tol=1e-8, max_iter=1000, unique_tol=1e-4, n_neighbors=5, seed=0,
        eval_tol=1e-12, data=None, progress=False, callback=None, models=None):
    """Run the experiment.

    Parameters
    ----------
    epochs : int — training epochs (paper: 100).
    samples : int — training rows: the first ``samples`` binary-MNIST training images
        (paper: 60,000).
    eval_samples : int — the first rows of the training set used as initialisations for the
        TAP log-likelihood and the solution counting (paper: 10,000; capped at ``samples``).
    test_samples : int — held-out MNIST test images for the denoising curves (paper: 1,000;
        0 skips denoising).
    hidden : numbers of hidden units trained (paper: 25, 50, 100, 500).
    count_hidden : the N_h whose solutions are mapped by Isomap (default 100 if trained, else
        the last of ``hidden``).
    eval_every : record every this many epochs (plus epoch 0, the Isomap epochs and the last).
    isomap_epochs : epochs whose solutions are drawn in the Isomap maps (paper: 1, 3, 25, 100;
        those beyond ``epochs`` are dropped and the last epoch is always included).
    ps : flip probabilities of the denoising curves.
    batch_size, n_solutions, learning_rate, weight_decay, momentum : Alg. 2 settings M, K, γ,
        ε, η (Table 1: 100, 100, 0.005, 0.001, 0.5).
    momentum_form : ``"heavy_ball"`` (default: ``v ← η v + γ(ΔW − εW)``, ``W ← W + v``) or
        ``"printed"`` (Alg. 2 literally: ``W ← W + γ(ΔW − εW) + η ΔW(t−1)``, the previous
        *gradient* unscaled by γ — with η = 0.5 an effective step ~100× γ; on binary-MNIST it
        drives the weights to a large symmetric state in which the log-likelihood does not
        improve, see the notes).
    init_scale : standard deviation σ of the initial weights (Sec. VII.3: ≈ 1e-3).
    damping, tol, max_iter : of Alg. 1 in training (damping 0.5; MSE change < ``tol`` = 1e-8,
        at most ``max_iter`` iterations) and in denoising.
    eval_damping : damping of the evaluation solves (1 = Alg. 1 as printed); rows that do not
        converge are solved again with ``damping`` (:func:`evaluate_tap` says why).
    unique_tol : de-duplication tolerance of the TAP solutions.
    eval_tol : solve tolerance of the evaluation (likelihood, counting, maps): 1e-12
        (:data:`rbmviz.tap.COUNT_TOL`); at 1e-8 one fixed point is counted many times.
    n_neighbors : Isomap neighbourhood size.
    seed : int.
    data : optional ``(X_train, labels_train, X_test)`` binary arrays to use instead of MNIST
        (tests, other data); ``labels_train`` may be None (no data map) and ``X_test`` None
        (no denoising).  ``samples`` / ``test_samples`` then take the first rows.
    progress : show a tqdm progress bar.
    callback : callable, optional
        ``callback(record)`` after every evaluation, with the new row of the ``curves``
        table (a dict) — e.g. to stream a live plot.
    models : dict, optional
        Receives the trained models, ``models[N_h] = rbm``.

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
    summary : dict — see :func:`summarize`.
    """
    import pandas as pd

    from .. import RBM
    from ..runs import Run
    from ..tap.denoising import denoising_curve
    from ..tap.landscape import SolutionMap, epoch_statistics, solution_features

    s = _check_settings(epochs=epochs, samples=samples, eval_samples=eval_samples,
                        test_samples=test_samples, hidden=hidden, count_hidden=count_hidden,
                        eval_every=eval_every, isomap_epochs=isomap_epochs, ps=ps,
                        batch_size=batch_size, n_solutions=n_solutions,
                        learning_rate=learning_rate, weight_decay=weight_decay,
                        momentum=momentum, momentum_form=momentum_form, init_scale=init_scale,
                        damping=damping,
                        eval_damping=eval_damping, tol=tol, eval_tol=eval_tol,
                        max_iter=max_iter, unique_tol=unique_tol, n_neighbors=n_neighbors,
                        seed=seed)
    X, y, X_test = _load_data(s, data)
    s["samples"] = X.shape[0]
    s["eval_samples"] = min(s["eval_samples"], X.shape[0])
    s["test_samples"] = 0 if X_test is None else X_test.shape[0]
    s["data"] = "binary-MNIST" if data is None else "user data"
    V = X[: s["eval_samples"]]
    iso_epochs = sorted({e for e in s["isomap_epochs"] if e <= s["epochs"]} | {s["epochs"]})
    schedule = eval_schedule(s["epochs"], s["eval_every"], iso_epochs)
    map_rows = (np.flatnonzero(np.isin(y[: s["eval_samples"]], DATA_MAP_DIGITS))
                if y is not None else np.zeros(0, dtype=np.int64))
    solve_kw = dict(damping=s["eval_damping"], tol=s["eval_tol"], max_iter=s["max_iter"],
                    unique_tol=s["unique_tol"], fallback_damping=s["damping"])

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(s["hidden"]) * (s["epochs"] + len(schedule)), unit=" step",
                   desc="tap", file=sys.stderr, bar_format="{l_bar}{bar}| {elapsed}<{remaining}")
    t0 = time.perf_counter()
    curves, sol_tables, iso_frames, map_frames, den_frames = [], [], [], [], []
    try:
        for i, nh in enumerate(s["hidden"]):
            rbm = RBM(X.shape[1], nh, init="normal", scale=s["init_scale"], seed=s["seed"] + i)
            rbm.b[:] = base_rate_biases(X)          # "θ(0) ← X"
            alg = _algorithm(s, s["seed"] + i)
            run_ = Run(rbm, X, alg, epochs=s["epochs"], batch_size=s["batch_size"],
                       seed=s["seed"] + i, metrics=["weight_norm"])
            stats_by_epoch, iso_points, map_points = {}, {}, {}
            done = 0
            for ep in schedule:
                if bar is not None:
                    bar.set_description(f"tap N_h={nh} epoch {ep}/{s['epochs']}")
                rec = run_.step(int(ep - done)) if ep > done else next(run_)
                if bar is not None:
                    bar.update(int(ep - done))
                done = int(ep)
                ev = evaluate_tap(rbm, V, **solve_kw)
                st = ev["stats"]
                stats_by_epoch[int(ep)] = st
                exact = float("nan")
                if nh <= EXACT_MAX_HIDDEN:
                    from ..evaluate import log_likelihood_exact
                    exact = log_likelihood_exact(rbm, V)
                units = X.shape[1] + nh
                curves.append({
                    "n_hidden": nh, "n_visible": X.shape[1], "epoch": int(ep), "updates": rec["updates"],
                    "wall_time": rec["wall_time"], "tap_ll": ev["ll"], "tap_ll_sem": ev["ll_sem"],
                    "tap_ll_per_unit": ev["ll"] / units, "tap_ll_per_unit_sem": ev["ll_sem"] / units,
                    "exact_ll": exact, "tap_log_z": ev["log_z"], "n_init": st["n_init"],
                    "n_converged": st["n_converged"], "n_unique": st["n_unique"],
                    "unique_fraction": st["unique_fraction"],
                    "mean_free_energy": st["mean_free_energy"],
                    "min_free_energy": float(np.min(st["free_energy"])) if st["n_unique"] else np.nan,
                    "max_free_energy": float(np.max(st["free_energy"])) if st["n_unique"] else np.nan,
                    "weight_norm": rec["weight_norm"], "eval_iterations": ev["iterations"],
                    "n_fallback": ev["n_fallback"],
                    "train_not_converged": alg.not_converged_total})
                if callback is not None:
                    callback(dict(curves[-1]))
                if nh == s["count_hidden"] and int(ep) in iso_epochs:
                    reps = np.asarray(st["representatives"], dtype=np.int64)
                    iso_points[int(ep)] = (solution_features(ev["sol"], reps),
                                           np.asarray(st["free_energy"], dtype=np.float64),
                                           np.asarray(st["counts"], dtype=np.int64))
                    if map_rows.size:
                        labels = np.asarray(st["labels"], dtype=np.int64)[map_rows]
                        fe = np.full(map_rows.size, np.nan)
                        ok = labels >= 0
                        fe[ok] = np.asarray(st["free_energy"], dtype=np.float64)[labels[ok]]
                        map_points[int(ep)] = (np.asarray(ev["sol"].av)[map_rows], fe,
                                               np.asarray(ev["sol"].converged)[map_rows])
                if bar is not None:
                    bar.update(1)
            _, sols = epoch_statistics(stats_by_epoch)
            sols.insert(0, "n_hidden", nh)
            sol_tables.append(sols)
            if iso_points:
                iso_frames.append(_isomap_table(iso_points, nh, s["n_neighbors"], SolutionMap))
            if map_points:
                map_frames.append(_data_map_table(V[map_rows], y[map_rows], map_rows, map_points,
                                                  nh, s["n_neighbors"], SolutionMap))
            if X_test is not None and s["ps"]:
                methods = ("tap", "ope", "nn") if not den_frames else ("tap",)
                d = denoising_curve(rbm, X_test, s["ps"], train=X, methods=methods,
                                    seed=s["seed"], damping=s["damping"], tol=s["tol"],
                                    max_iter=s["max_iter"])
                d.insert(0, "n_hidden", np.where(d["method"] == "tap", nh, 0))
                den_frames.append(d)
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


def _load_data(s, data):
    if data is None:
        from .. import datasets
        X, y = datasets.mnist("train", binarize="threshold", return_labels=True,
                              limit=s["samples"])
        X_test = (datasets.mnist("test", binarize="threshold", limit=s["test_samples"])
                  if s["test_samples"] else None)
        return X, y, X_test
    from .._validation import check_data
    if not isinstance(data, (tuple, list)) or len(data) != 3:
        raise TypeError("data must be a tuple (X_train, labels_train, X_test); labels_train "
                        "and X_test may be None")
    X = check_data(data[0], "data[0] (X_train)")[: s["samples"]]
    y = None if data[1] is None else np.asarray(data[1])[: s["samples"]]
    if y is not None and y.shape[0] != X.shape[0]:
        raise ValueError(f"data[1] (labels) has {y.shape[0]} entries for {X.shape[0]} rows")
    X_test = None
    if data[2] is not None and s["test_samples"]:
        X_test = check_data(data[2], "data[2] (X_test)", n_visible=X.shape[1])[: s["test_samples"]]
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


# ---------------------------------------------------------------------------- summary

def summarize(tables, *, settings=None, elapsed=None):
    """The numbers to compare with the paper.

    Returns
    -------
    dict with
        ``models``: one entry per N_h — ``tap_ll_per_unit`` at the first and last recorded
        epochs, the gain over training, ``gain_by_epoch_20`` (fraction of the total gain
        reached by epoch 20 or the nearest earlier record), ``late_slope`` / ``early_slope``
        (per-epoch gain over the last / first half of the records), ``n_unique`` first and
        last, ``max_unique_fraction``, ``free_energy_first`` / ``_peak`` / ``_last``
        (mean over unique solutions), ``not_converged`` (evaluation rows that hit max_iter,
        summed over epochs), ``train_not_converged`` (training TAP runs that hit max_iter and
        were left out of their update), ``eval_fallback`` (evaluation runs re-solved with
        damping, summed over epochs), ``exact_ll_last`` and ``tap_minus_exact_last`` when available;
        ``denoising``: per method and N_h the mean MCC at p = 0, over 0.1 ≤ p ≤ 0.3 and at the
        largest p;
        ``claims``: :func:`claims`;  ``paper``: :data:`PAPER`; ``settings``;
        ``elapsed_seconds``; ``notes``.
    """
    curves = tables["curves"]
    models = []
    for nh, g in curves.groupby("n_hidden", sort=False):
        g = g.sort_values("epoch")
        ep = g["epoch"].to_numpy()
        ll = g["tap_ll_per_unit"].to_numpy()
        gain = ll[-1] - ll[0]
        by20 = g[g["epoch"] <= PAPER["ll_tapers_by_epoch"]]
        frac20 = (by20["tap_ll_per_unit"].iloc[-1] - ll[0]) / gain if gain else float("nan")
        half = len(ep) // 2
        early = late = float("nan")
        if len(ep) >= 3:
            early = (ll[half] - ll[0]) / max(ep[half] - ep[0], 1)
            late = (ll[-1] - ll[half]) / max(ep[-1] - ep[half], 1)
        fe = g["mean_free_energy"].to_numpy()
        m = dict(
            n_hidden=int(nh), n_units=int(g["n_visible"].iloc[0]) + int(nh),
            first_epoch=int(ep[0]), last_epoch=int(ep[-1]),
            tap_ll_per_unit_first=_f(ll[0]), tap_ll_per_unit_last=_f(ll[-1]),
            tap_ll_last=_f(g["tap_ll"].iloc[-1]), tap_ll_sem_last=_f(g["tap_ll_sem"].iloc[-1]),
            gain=_f(gain), gain_by_epoch_20=_f(frac20) if ep[-1] > PAPER["ll_tapers_by_epoch"] else None,
            early_slope=_f(early), late_slope=_f(late),
            n_unique_first=int(g["n_unique"].iloc[0]), n_unique_last=int(g["n_unique"].iloc[-1]),
            n_unique_max=int(g["n_unique"].max()),
            max_unique_fraction=_f(g["unique_fraction"].max()),
            n_init=int(g["n_init"].iloc[-1]),
            not_converged=int((g["n_init"] - g["n_converged"]).sum()),
            train_not_converged=int(g["train_not_converged"].iloc[-1]),
            eval_fallback=int(g["n_fallback"].sum()),
            free_energy_first=_f(fe[0]), free_energy_peak=_f(np.nanmax(fe)),
            free_energy_peak_epoch=int(ep[int(np.nanargmax(fe))]), free_energy_last=_f(fe[-1]),
            exact_ll_last=_f(g["exact_ll"].iloc[-1]),
            tap_minus_exact_last=_f(g["tap_ll"].iloc[-1] - g["exact_ll"].iloc[-1]))
        models.append(m)
    den = []
    d = tables["denoising"]
    if len(d):
        for (nh, method), g in d.groupby(["n_hidden", "method"], sort=False):
            mid = g[(g["p"] >= 0.1 - 1e-12) & (g["p"] <= 0.3 + 1e-12)]
            den.append(dict(
                n_hidden=int(nh), method=method,
                mcc_p0=_f(g.loc[g["p"] == 0.0, "mcc"].mean()) if (g["p"] == 0.0).any() else None,
                mcc_moderate=_f(mid["mcc"].mean()) if len(mid) else None,
                p_max=_f(g["p"].max()), mcc_p_max=_f(g.loc[g["p"].idxmax(), "mcc"]),
                not_converged=int(g["not_converged"].sum())))
    out = dict(models=models, denoising=den, paper={k: (list(v) if isinstance(v, tuple) else v)
                                                     for k, v in PAPER.items()},
               settings=settings, elapsed_seconds=elapsed, notes=NOTES)
    out["claims"] = claims(out, tables)
    return out


def _method_name(r):
    return f"TAP N_h={r['n_hidden']}" if r["method"] == "tap" else (
        "1-NN" if r["method"] == "nn" else "OPE")


def claims(summary, tables):
    """The paper's qualitative claims next to what this run shows: a list of dicts
    ``claim``, ``paper``, ``observed``, ``holds`` (True / False / None = this run cannot
    tell, e.g. too few epochs)."""
    out = []
    ms = summary["models"]
    s = summary.get("settings") or {}
    short = any(m["last_epoch"] < 2 for m in ms)
    # 1. rapid rise, then a steady, slower improvement
    rises = [m["gain"] is not None and m["gain"] > 0 for m in ms]
    out.append(dict(
        claim="TAP log-likelihood rises during training",
        paper="rapid rise for every N_h (Fig. 3)",
        observed="; ".join(f"N_h={m['n_hidden']}: {m['tap_ll_per_unit_first']:.4f} -> "
                           f"{m['tap_ll_per_unit_last']:.4f} per unit (epoch {m['last_epoch']})"
                           for m in ms),
        holds=all(rises) if not all(m["last_epoch"] == 0 for m in ms) else None))
    tapers = [m for m in ms if not math.isnan(m["early_slope"] or float("nan"))
              and m["late_slope"] is not None]
    if short or not tapers:
        obs, holds = "too few recorded epochs to see the rate of improvement", None
    else:
        obs = "; ".join(f"N_h={m['n_hidden']}: per-epoch gain {m['early_slope']:.2e} (first half) "
                        f"vs {m['late_slope']:.2e} (second half)" for m in tapers)
        holds = all(0 <= m["late_slope"] < m["early_slope"] for m in tapers)
        if all(m["last_epoch"] < PAPER["ll_tapers_by_epoch"] for m in tapers):
            obs += (f" (the run ends before epoch {PAPER['ll_tapers_by_epoch']}: too short "
                    f"to judge)")
            holds = None
    out.append(dict(claim="improvement slows to a steady rate",
                    paper=f"constant rate of improvement by about epoch {PAPER['ll_tapers_by_epoch']}",
                    observed=obs, holds=holds))
    # 2. solution counts
    cnt = [m for m in ms if m["n_hidden"] == s.get("count_hidden")] or ms
    c = cnt[0]
    out.append(dict(claim="one TAP solution at the start of training",
                    paper="1 unique solution at initialisation (Sec. VII.3)",
                    observed=f"N_h={c['n_hidden']}: {c['n_unique_first']} at epoch {c['first_epoch']}",
                    holds=c["n_unique_first"] == 1 if c["first_epoch"] == 0 else None))
    out.append(dict(claim="the number of unique solutions grows with training",
                    paper="starts at 1 and increases",
                    observed=f"N_h={c['n_hidden']}: {c['n_unique_first']} -> {c['n_unique_last']} "
                             f"(max {c['n_unique_max']}) from {c['n_init']} initialisations",
                    holds=(c["n_unique_last"] > c["n_unique_first"]) if c["last_epoch"] > 0 else None))
    out.append(dict(claim="no explosion of solutions",
                    paper=f"unique / initialisations below {PAPER['unique_fraction_max']:.0%} (N_h=100)",
                    observed=f"N_h={c['n_hidden']}: max fraction {c['max_unique_fraction']:.2%}",
                    holds=c["max_unique_fraction"] < PAPER["unique_fraction_max"]))
    fe_up_down, fe_note = None, ""
    if c["last_epoch"] >= 2 and c["free_energy_peak"] is not None:
        if c["free_energy_peak"] <= c["free_energy_first"]:
            fe_up_down = False
        elif c["free_energy_peak_epoch"] == c["last_epoch"]:
            fe_note = " (still rising at the end of the run: the first phase only)"
        else:
            fe_up_down = c["free_energy_last"] < c["free_energy_peak"]
    out.append(dict(claim="TAP free energy first increases, then slowly decreases",
                    paper="Fig. 5 (red line)",
                    observed=f"N_h={c['n_hidden']}: {c['free_energy_first']:.2f} -> peak "
                             f"{c['free_energy_peak']:.2f} at epoch {c['free_energy_peak_epoch']} "
                             f"-> {c['free_energy_last']:.2f}{fe_note}",
                    holds=fe_up_down))
    # 3. denoising
    den = summary["denoising"]
    if den:
        by = {(r["method"], r["n_hidden"]): r for r in den}
        ope, nn = by.get(("ope", 0)), by.get(("nn", 0))
        taps = [r for r in den if r["method"] == "tap"]
        p0 = [r for r in taps + ([ope] if ope else []) if r["mcc_p0"] is not None]
        out.append(dict(claim="exact recovery at p = 0",
                        paper="every RBM recovers the signal at p = 0",
                        observed=", ".join(f"{_method_name(r)}: MCC {r['mcc_p0']:.3f}"
                                           for r in p0) or "p = 0 not run",
                        holds=all(r["mcc_p0"] > 1 - 1e-9 for r in p0) if p0 else None))
        if ope and ope["mcc_moderate"] is not None:
            small = [r for r in taps if r["n_hidden"] <= 100]
            out.append(dict(
                claim="TAP denoising beats the OPE at moderate noise (N_h <= 100)",
                paper="TAP inference always outperforms the OPE for N_h in {25, 50, 100}",
                observed=(f"mean MCC over 0.1 <= p <= 0.3: OPE {ope['mcc_moderate']:.3f}, "
                          + (f"1-NN {nn['mcc_moderate']:.3f}, " if nn else "")
                          + ", ".join(f"TAP N_h={r['n_hidden']} {r['mcc_moderate']:.3f}"
                                      for r in taps)),
                holds=all(r["mcc_moderate"] > ope["mcc_moderate"] for r in small) if small else None))
            d = tables["denoising"]
            hi = d[(d["p"] > 0.2 + 1e-12) & (d["p"] < 0.5 - 1e-12)]
            if nn and len(hi):
                o = hi[hi["method"] == "ope"].set_index("p")["mcc"]
                n_ = hi[hi["method"] == "nn"].set_index("p")["mcc"]
                out.append(dict(claim="1-NN beats the OPE for p > 0.2",
                                paper="Sec. VII.4.1",
                                observed="; ".join(f"p={p:g}: 1-NN {n_[p]:.3f} vs OPE {o[p]:.3f}"
                                                   for p in o.index),
                                holds=bool((n_ > o).all())))
    return out


def format_summary(summary) -> str:
    """The summary as text (printed by ``rbmviz reproduce tap``)."""
    s = summary.get("settings") or {}
    lines = []
    if s:
        lines.append(
            f"Tramel et al. (2018) TAP machines on {s.get('data', 'binary-MNIST')}: "
            f"{s['samples']:,} training rows, {s['epochs']} epochs, N_h in "
            f"{','.join(map(str, s['hidden']))}, M={s['batch_size']}, K={s['n_solutions']}, "
            f"lr {s['learning_rate']:g}, l2 {s['weight_decay']:g}, momentum {s['momentum']:g}; "
            f"evaluation on {s['eval_samples']:,} training rows (paper: 60,000 rows, 100 "
            f"epochs, 10,000 evaluation rows)")
    head = (f"{'N_h':>4} {'epochs':>6} {'TAP LL/unit first':>17} {'last':>9} {'(s.e.)':>9} "
            f"{'exact-TAP':>9} {'unique first':>12} {'last':>5} {'max frac':>8} "
            f"{'F mean first':>12} {'peak':>9} {'last':>9} {'not conv.':>9} {'train n.c.':>10}")
    lines += [head, "-" * len(head)]
    for m in summary["models"]:
        sem = m["tap_ll_sem_last"]
        nunits = m["n_units"]
        ex = m["tap_minus_exact_last"]
        lines.append(
            f"{m['n_hidden']:>4} {m['last_epoch']:>6} {m['tap_ll_per_unit_first']:>17.5f} "
            f"{m['tap_ll_per_unit_last']:>9.5f} "
            f"{'(%.5f)' % (sem / nunits) if sem is not None and nunits else '':>9} "
            f"{'' if ex is None else '%.3f' % -ex:>9} {m['n_unique_first']:>12} "
            f"{m['n_unique_last']:>5} {m['max_unique_fraction']:>8.2%} "
            f"{m['free_energy_first']:>12.2f} {m['free_energy_peak']:>9.2f} "
            f"{m['free_energy_last']:>9.2f} {m['not_converged']:>9} "
            f"{m['train_not_converged']:>10}")
    if summary["denoising"]:
        lines.append("")
        lines.append(f"{'denoising':<14} {'MCC p=0':>8} {'0.1<=p<=0.3':>12} {'p max':>6} "
                     f"{'MCC there':>9}")
        for r in summary["denoising"]:
            name = r["method"] if r["method"] != "tap" else f"tap N_h={r['n_hidden']}"
            lines.append(f"{name:<14} {'' if r['mcc_p0'] is None else '%.3f' % r['mcc_p0']:>8} "
                         f"{'' if r['mcc_moderate'] is None else '%.3f' % r['mcc_moderate']:>12} "
                         f"{r['p_max']:>6.2f} {r['mcc_p_max']:>9.3f}")
    lines.append("")
    lines.append("The paper's claims and this run:")
    mark = {True: "yes", False: "NO", None: "n/a"}
    for c in summary["claims"]:
        lines.append(f"  [{mark[c['holds']]:>3}] {c['claim']} — paper: {c['paper']}")
        lines.append(f"        this run: {c['observed']}")
    if summary.get("elapsed_seconds") is not None:
        lines.append(f"run time: {summary['elapsed_seconds']:.1f} s")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- figure

#: the panels :func:`figure` can draw
PARTS = ("curves", "counts", "free_energy", "isomap", "data_map", "denoising")


def figure(tables, parts=PARTS, *, cols=3):
    """The reproduction's figure (HoloViews Layout), panels in the order of ``parts``:

    * ``"curves"`` — TAP log-likelihood per unit with its standard error band (Fig. 3);
    * ``"counts"`` — number of unique TAP solutions over epochs (Fig. 5, green);
    * ``"free_energy"`` — TAP free energies 𝔽_RBM of the unique solutions (dots) and their
      unweighted mean (line) over epochs (Fig. 5);
    * ``"isomap"`` — one panel per mapped epoch: the unique solutions in the shared Isomap,
      coloured by free energy rescaled within the epoch (Fig. 6);
    * ``"data_map"`` — per mapped epoch, the digits 3, 6, 7 (coloured by class) and the
      visible magnetisations they converge to (black crosses) in the data's Isomap (Fig. 7);
    * ``"denoising"`` — MCC against the flip probability, TAP per N_h, OPE, 1-NN (Fig. 8).

    Panels without data are left out."""
    import holoviews as hv

    for part in parts:
        if part not in PARTS:
            raise ValueError(f"unknown figure part {part!r}; expected some of {list(PARTS)}")
    curves = tables["curves"]
    opts = dict(width=430, height=300, show_grid=True, tools=["hover"])
    by_part = {}
    ll = []
    for nh, g in curves.groupby("n_hidden", sort=False):
        g = g.sort_values("epoch")
        ll.append(hv.Spread((g["epoch"], g["tap_ll_per_unit"], g["tap_ll_per_unit_sem"]),
                            "epoch", ["TAP LL per unit", "s.e."], label=f"N_h={nh}").opts(alpha=0.3))
        ll.append(hv.Curve((g["epoch"], g["tap_ll_per_unit"]), "epoch", "TAP LL per unit",
                           label=f"N_h={nh}").opts(**opts))
    by_part["curves"] = [hv.Overlay(ll).opts(title="TAP log-likelihood per unit (Fig. 3)",
                                             legend_position="bottom_right")]
    cnt = [hv.Curve((g["epoch"], g["n_unique"]), "epoch", "unique TAP solutions",
                    label=f"N_h={nh}").opts(**opts)
           for nh, g in curves.groupby("n_hidden", sort=False)]
    by_part["counts"] = [hv.Overlay(cnt).opts(title="unique TAP solutions (Fig. 5, green)",
                                              legend_position="top_left")]
    sols = tables["solutions"]
    fe = []
    for nh, g in sols.groupby("n_hidden", sort=False):
        pts = hv.Scatter(g, "epoch", ["free_energy", "count", "solution"], label=f"N_h={nh}")
        fe.append(pts.opts(size=5, alpha=0.5, tools=["hover"]))
        m = curves[curves["n_hidden"] == nh].sort_values("epoch")
        fe.append(hv.Curve((m["epoch"], m["mean_free_energy"]), "epoch", "free_energy",
                           label=f"N_h={nh} mean").opts(line_width=2))
    by_part["free_energy"] = [hv.Overlay(fe).opts(hv.opts.Overlay(
        title="TAP free energies of unique solutions (Fig. 5)", legend_position="top_left",
        width=430, height=300, show_grid=True))] if fe else []
    iso = tables["isomap"]
    by_part["isomap"] = [
        hv.Scatter(g, "x", ["y", "fe_scaled", "free_energy", "count", "solution"]).opts(
            color="fe_scaled", cmap="viridis", size=6, colorbar=True, tools=["hover"],
            width=300, height=260, title=f"solutions, epoch {ep}: {len(g)} (Fig. 6)")
        for ep, g in iso.groupby("epoch")] if len(iso) else []
    dm = tables["data_map"]
    by_part["data_map"] = []
    for ep, g in (dm.groupby("epoch") if len(dm) else []):
        data = hv.Scatter(g, "x", ["y", "label"], label="data").opts(
            color="label", cmap="Category10", size=3, alpha=0.35)
        sol = hv.Scatter(g, "sol_x", ["sol_y", "free_energy"], label="TAP solutions").opts(
            color="black", marker="x", size=8)
        by_part["data_map"].append((data * sol).opts(hv.opts.Overlay(
            title=f"data map (3, 6, 7), epoch {ep} (Fig. 7)", width=300, height=260,
            show_legend=False)))
    den = tables["denoising"]
    by_part["denoising"] = []
    if len(den):
        dc = []
        for (nh, method), g in den.groupby(["n_hidden", "method"], sort=False):
            name = f"TAP N_h={nh}" if method == "tap" else ("1-NN" if method == "nn" else "OPE")
            dc.append(hv.Curve((g["p"], g["mcc"]), "p", "MCC", label=name).opts(**opts))
        by_part["denoising"] = [hv.Overlay(dc).opts(
            title="denoising a binary symmetric channel (Fig. 8)", legend_position="top_right")]
    panels = [p for part in parts for p in by_part[part]]
    return hv.Layout(panels).cols(cols)


# ---------------------------------------------------------------------------- output

def check_out_dir(out, overwrite=False):
    """Refuse (``FileExistsError``) an existing non-empty directory unless ``overwrite``,
    and a path that is not a directory (``NotADirectoryError``)."""
    _io.check_out_dir(out, overwrite, FILES, require_empty=True)


def save(tables, summary, out, *, overwrite=False, html=True):
    """Write ``<table>.csv`` for every table, ``summary.json`` and ``figure.html``
    (HoloViews, Bokeh resources inline) to directory ``out``.

    An existing, non-empty ``out`` is refused (``FileExistsError``) unless ``overwrite``,
    which replaces only these files.

    Returns
    -------
    list of the written paths.
    """
    out = Path(out)
    check_out_dir(out, overwrite)
    out.mkdir(parents=True, exist_ok=True)
    for name in FILES:            # only reached with overwrite when `out` is not empty
        (out / name).unlink(missing_ok=True)
    paths = []
    for name in TABLES:
        tmp = out / f"{name}.csv.tmp"
        tables[name].to_csv(tmp, index=False)
        os.replace(tmp, out / f"{name}.csv")
        paths.append(out / f"{name}.csv")
    _io.write_json(out / "summary.json", summary)
    paths.append(out / "summary.json")
    if html:
        import holoviews as hv
        hv.extension("bokeh", logo=False)
        tmp = out / "figure.tmp.html"
        hv.save(figure(tables), tmp, backend="bokeh", resources="inline",
                title="Tramel et al. 2018: TAP machines on binary-MNIST")
        os.replace(tmp, out / "figure.html")
        paths.append(out / "figure.html")
    return paths


# ---------------------------------------------------------------------------- command line

def add_arguments(parser):
    """Options of ``rbmviz reproduce tap``."""
    g = parser.add_argument_group("experiment (defaults: the paper's settings)")
    g.add_argument("--epochs", type=int, default=100, metavar="INT",
                   help="training epochs (default: 100)")
    g.add_argument("--samples", type=int, default=60_000, metavar="INT",
                   help="training rows: the first INT binary-MNIST training images "
                        "(default: 60000)")
    g.add_argument("--eval-samples", type=int, default=10_000, metavar="INT",
                   help="training rows used as TAP initialisations for the log-likelihood "
                        "and the solution counts (default: 10000, at most --samples)")
    g.add_argument("--test-samples", type=int, default=1_000, metavar="INT",
                   help="held-out test images for the denoising curves; 0 skips them "
                        "(default: 1000)")
    g.add_argument("--hidden", default="25,50,100,500", metavar="N,N,...",
                   help="numbers of hidden units (default: 25,50,100,500)")
    g.add_argument("--count-hidden", type=int, default=None, metavar="INT",
                   help="N_h whose solutions are mapped by Isomap (default: 100 if trained, "
                        "else the last of --hidden)")
    g.add_argument("--eval-every", type=int, default=1, metavar="INT",
                   help="record every INT epochs, plus epochs 0, 1, 3, 25, 100 and the last "
                        "(default: 1)")
    g.add_argument("--ps", default=",".join(f"{p:g}" for p in DEFAULT_PS), metavar="P,P,...",
                   help="flip probabilities of the denoising curves (default: 0,0.05,...,0.5)")
    g.add_argument("--learning-rate", type=float, default=0.005, metavar="X",
                   help="(default: 0.005, Table 1)")
    g.add_argument("--batch-size", type=int, default=100, metavar="INT",
                   help="mini-batch size M = number of TAP solutions K per update "
                        "(default: 100, Table 1)")
    g.add_argument("--momentum-form", choices=("heavy_ball", "printed"), default="heavy_ball",
                   help="heavy-ball momentum, or Alg. 2's term eta*dW(t-1) literally "
                        "(default: heavy_ball; see the notes)")
    g.add_argument("--seed", type=int, default=0, metavar="INT", help="(default: 0)")
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


def main(args, parser) -> int:
    """Run ``rbmviz reproduce tap`` from parsed ``args``; returns the exit code."""
    from ..datasets import DatasetNotFoundError
    from ..runs import RunDiverged
    try:
        hidden = _parse_list(args.hidden, int, "--hidden")
        ps = _parse_list(args.ps, float, "--ps")
        kw = dict(epochs=args.epochs, samples=args.samples, eval_samples=args.eval_samples,
                  test_samples=args.test_samples, hidden=hidden, count_hidden=args.count_hidden,
                  eval_every=args.eval_every, ps=ps, learning_rate=args.learning_rate,
                  batch_size=args.batch_size, n_solutions=args.batch_size,
                  momentum_form=args.momentum_form, seed=args.seed)
        _check_settings(**{**_DEFAULTS, **kw})
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
    if args.out:
        try:
            check_out_dir(args.out, args.overwrite)
        except (FileExistsError, NotADirectoryError) as exc:
            parser.error(f"argument --out: {exc}")
    try:
        tables, summary = run(**kw, progress=not args.quiet)
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted; nothing written", file=sys.stderr)
        return 130
    except RunDiverged as exc:
        print(f"{parser.prog}: {exc}; nothing written", file=sys.stderr)
        return 3
    except DatasetNotFoundError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    print(format_summary(summary))
    if args.out:
        paths = save(tables, summary, args.out, overwrite=args.overwrite, html=not args.no_html)
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0


#: the defaults of :func:`run` that the command line does not expose
_DEFAULTS = dict(isomap_epochs=PAPER["isomap_epochs"], batch_size=100, n_solutions=100,
                 weight_decay=0.001, momentum=0.5, momentum_form="heavy_ball", init_scale=0.001,
                 damping=0.5,
                 eval_damping=1.0, tol=1e-8, eval_tol=1e-12, max_iter=1000, unique_tol=1e-4,
                 n_neighbors=5)
