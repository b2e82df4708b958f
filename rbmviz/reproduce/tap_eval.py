"""The TAP evaluation of the TAP-machines reproduction (Tramel et al. 2018, Sec. VII): the
log-likelihood and the solution count from data-anchored initialisations (eqs. 36–39,
:func:`evaluate_tap`), the base-rate visible biases of Alg. 2's start, and the tables of the
Isomap maps (Figs. 6–7) and the denoising curves (Fig. 8) of one trained model.

The run loop that calls them is :mod:`rbmviz.reproduce.tap_run`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..tap.inference import damping_ladder
from ..tap.options import TAPSolverOptions as _Solver

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["evaluate_tap", "base_rate_biases"]


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


def _denoising_table(rbm, X_test, X, s, nh, methods, state):
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
