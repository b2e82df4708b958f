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

``FULL`` holds the paper's settings (where it gives them; layer sizes of Fig. 11 are not
given — Salakhutdinov & Hinton's 500–1000 and 500–500–1000 are used), ``QUICK`` a form that
runs in about three minutes on a laptop (smaller models, fewer images and epochs, larger
steps — what it can and cannot show is in the summary's notes).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .. import _files
from . import _io
from .report import make_claim
from .. import datasets
from ..algorithms.tap import TAP
from ..datasets import DatasetNotFoundError
from ..dbm import DBM, DBMTrainer, log_likelihood, pretrain
from ..evaluate import (ais_betas, ais_log_partition, pseudo_log_likelihood, spl_subset,
                        stochastic_pseudo_log_likelihood)
from ..model import RBM
from ..tap import adatap, solve
from ..viz.tap_beyond import study_figure
from .tap_run import evaluate_tap

if TYPE_CHECKING:
    import pandas

__all__ = ["STUDIES", "FULL", "QUICK", "time_inference", "study_adatap", "study_dbm", "study_fig12", "fig12_claims", "adatap_claims", "run",
           "save", "add_arguments", "run_study", "sm_schedule"]

STUDIES = ("adatap", "dbm", "fig12")
FULL = {
    "adatap": dict(hidden=500, samples=5000, epochs=10, learning_rate=0.001, batch_size=100,
                   damping=0.5, iterations=(3, 10, 100), pl_rows=1000, eval_every=10,
                   timing_hidden=500, timing_batches=(1, 10, 100), timing_iters=(10, 2),
                   timing_direct=True),
    "dbm": dict(models=((784, 500, 1000), (784, 500, 500, 1000)), samples=60_000,
                test_samples=10_000, pretrain_epochs=50, pretrain_lr=0.001, epochs=3000,
                learning_rate=0.001, batch_size=100, eval_every=10, eval_samples=1000),
    "fig12": dict(hidden=500, samples=60_000, epochs=100, learning_rate=0.005, batch_size=100,
                  weight_decay=0.001, momentum=0.5, eval_samples=1000, ais_chains=100,
                  ais_thin=1, spl_sites=100),
}
QUICK = {
    "adatap": dict(hidden=16, samples=500, epochs=2, learning_rate=0.05, batch_size=20,
                   damping=0.5, iterations=(3, 10, 100), pl_rows=500, eval_every=5, init_scale=0.01,
                   timing_hidden=100, timing_batches=(1, 10, 100), timing_iters=(10, 2)),
    "dbm": dict(models=((784, 50, 25), (784, 50, 25, 25)), samples=1000, test_samples=200,
                pretrain_epochs=3, pretrain_lr=0.05, epochs=3, learning_rate=0.02,
                batch_size=20, eval_every=1, eval_samples=200, init_scale=0.01),
    "fig12": dict(hidden=100, samples=2000, epochs=4, learning_rate=0.05, batch_size=20,
                  weight_decay=0.001, momentum=0.5, eval_samples=300, ais_chains=20,
                  ais_thin=10, spl_sites=100, init_scale=0.01),
}
NOTES = {
    "adatap": ["Iteration counts are fixed (no convergence test), as in Fig. 10; K = M TAP runs "
               "per update start from the batch rows (eqs. 37-38; adaTAP: A1 = 0, B1 = logit of "
               "the data and sigma(c + W^T x) clipped to [0.01, 0.99]).",
               "Pseudo-likelihood: all 784 sites, deterministic, on the first pl_rows training rows.",
               "Timing: process CPU time per iteration, (T(n+1) - T(1))/(k n) over k repeated calls, "
               "k grown until the difference lasts 0.2 s, best of 3 for TAP and of 1 for adaTAP, both with one BLAS and one Numba thread; adaTAP solves the n x n Gaussian step through a Schur "
               "complement of size min(N_v, N_h) per run (cheaper than the paper's full inverse, "
               "so the ratio is a lower bound on the paper's setting). The quick form times a "
               "784x100 model, the full form 784x500."],
    "dbm": ["Layer sizes are not given in the paper (UNCONFIRMED): 784-500-1000 and "
            "784-500-500-1000 (Salakhutdinov & Hinton 2009) in the full form.",
            "Pretraining: TAP RBMs (Alg. 2, heavy-ball momentum 0.5, l2 0.001) layer by layer on "
            "binary samples of the layer below given the data; joint training: eqs. 126-129, "
            "K = M free solutions from the batch rows, heavy-ball momentum 0.5, l2 0.001.",
            "TAP log-likelihood: clamped TAP2 value of each image minus the mean TAP2 log Z of the "
            "converged free solutions started from the evaluation rows, per unit = / sum_l N_l."],
    "fig12": ["TAP log-likelihood: eq. (39) with the unique solutions from one data-anchored start "
              "per evaluation row (rbmviz.reproduce.tap_run.evaluate_tap).",
              "AIS: base-rate start, Salakhutdinov & Murray's schedule (every ais_thin-th "
              "temperature of its 14,501), ais_chains runs; log-likelihood of the same rows.",
              "Pseudo-likelihood: stochastic, over a fixed random 100 of the 784 sites, same rows "
              "(rbmviz.evaluate.stochastic_pseudo_log_likelihood)."],
}


def _progress(on, msg):
    if on:
        print(msg, file=sys.stderr, flush=True)


def _mnist(n, split="train"):
    return datasets.mnist(split, binarize="threshold", limit=n)


def _base_rate(X, eps=1e-3):
    m = np.clip(X.mean(axis=0), eps, 1 - eps)
    return np.log(m) - np.log1p(-m)


def sm_schedule(thin: int = 1) -> np.ndarray:
    """Salakhutdinov & Murray's AIS temperatures (:func:`rbmviz.evaluate.ais_betas` ``"sm"``,
    14,501 values), every ``thin``-th kept (the last, β = 1, always).

    Parameters
    ----------
    thin : int
        Keep every ``thin``-th temperature.

    Returns
    -------
    numpy.ndarray
        The inverse temperatures, from 0 to 1.
    """
    b = ais_betas(schedule="sm")
    return np.unique(np.r_[b[::int(thin)], 1.0])


# ---------------------------------------------------------------------------- Fig. 10
class _one_thread:
    """One BLAS and one Numba thread inside the block (fair timing on a shared machine)."""

    def __enter__(self):
        import numba
        from threadpoolctl import threadpool_limits
        self._n = numba.get_num_threads()
        numba.set_num_threads(1)
        self._lim = threadpool_limits(1, user_api="blas")
        return self

    def __exit__(self, *exc):
        import numba
        self._lim.restore_original_limits()
        numba.set_num_threads(self._n)
        return False


def _time_per_iteration(fn, n_iter, repeats, min_seconds=0.2, max_calls=4096):
    """Process CPU seconds of one iteration: ``(T(n + 1) − T(1)) / (k n)`` with ``T(m)`` the
    time of ``k`` calls of ``fn(m)``, best of ``repeats`` — the difference drops the set-up
    shared by all iterations, CPU time (one thread) is robust to other processes on the
    machine.  ``k`` is multiplied by 4 until the difference lasts ``min_seconds``."""
    best = np.inf
    for _ in range(repeats):
        k = 1
        while True:
            t = time.process_time()
            for _ in range(k):
                fn(1)
            one = time.process_time() - t
            t = time.process_time()
            for _ in range(k):
                fn(n_iter + 1)
            diff = time.process_time() - t - one
            if diff >= min_seconds or k >= max_calls:
                break
            k *= 4
        best = min(best, max(diff, 0.0) / (k * n_iter))
    return best


def time_inference(X: np.ndarray, *, hidden: int = 500, batches: Sequence[int] = (1, 10, 100),
                   iters: Sequence[int] = (10, 2), direct: bool = False, min_seconds: float = 0.2,
                   seed: int = 0, progress: bool = False) -> "pandas.DataFrame":
    """CPU seconds of one TAP (Alg. 1) and one adaTAP (Alg. 3) iteration for batches of
    data-anchored runs from the rows of ``X`` on an ``n_visible × hidden`` RBM (weights
    N(0, 0.01²), base-rate visible biases), one BLAS and one Numba thread (Fig. 10 right).
    ``iters``: iterations timed for TAP and adaTAP.  ``direct=True`` also times adaTAP with
    the full ``n × n`` inverse per run (``method="direct"``, the cost the paper reports) as
    method ``"adatap_direct"``.  Each measurement repeats its calls until it lasts
    ``min_seconds`` of CPU time.  Returns a DataFrame (method, batch_size,
    seconds_per_iteration).

    Parameters
    ----------
    X : numpy.ndarray
        Data rows the runs start from.
    hidden : int
        Hidden units of the random model timed.
    batches : sequence of int
        Batch sizes.
    iters : sequence of int
        Iterations timed (TAP, adaTAP).
    direct : bool
        Also time adaTAP's direct Gaussian step.
    min_seconds : float
        Least seconds per timing.
    seed : int
        Seed of the experiment's randomness.
    progress : bool
        Show progress (a tqdm bar).

    Returns
    -------
    pandas.DataFrame
        Seconds per iteration by method and batch size.

    Raises
    ------
    RuntimeError
        If the TAP runs converge before the timed iterations (nothing left to time).
    """
    import pandas as pd


    rbm = RBM(X.shape[1], hidden, seed=seed, scale=0.01)
    rbm.b[:] = _base_rate(X)
    n_tap, n_ada = iters
    check = solve(rbm, X[:max(batches)], tol=1e-300, max_iter=n_tap + 1)  # also compiles
    if check.converged.any():      # an exact fixed point (zero change) would stop a run early
        raise RuntimeError(f"TAP runs converged exactly within {n_tap + 1} iterations; time "
                           f"fewer iterations (iters[0])")
    rows = []
    with _one_thread():
        for B in batches:
            Y = X[:B]
            tt = _time_per_iteration(lambda n: solve(rbm, Y, tol=1e-300, max_iter=n), n_tap, 3,
                                     min_seconds)
            ta = _time_per_iteration(lambda n: adatap.solve(rbm, Y, tol=0.0, max_iter=n), n_ada, 1,
                                     min_seconds)
            rows += [dict(method="tap", batch_size=B, seconds_per_iteration=tt),
                     dict(method="adatap", batch_size=B, seconds_per_iteration=ta)]
            if direct:
                td = _time_per_iteration(
                    lambda n: adatap.solve(rbm, Y, tol=0.0, max_iter=n, method="direct"), n_ada, 1,
                    min_seconds)
                rows.append(dict(method="adatap_direct", batch_size=B, seconds_per_iteration=td))
                _progress(progress, f"  timing batch {B}: adaTAP (full inverse) {td:.2e} s, "
                                    f"ratio {td / max(tt, 1e-12):.0f}")
            _progress(progress, f"  timing batch {B}: TAP {tt:.2e} s, adaTAP {ta:.2e} s, "
                                f"ratio {ta / max(tt, 1e-12):.0f}")
    return pd.DataFrame(rows)


def study_adatap(*, hidden: int, samples: int, epochs: int, learning_rate: float, batch_size: int,
                 damping: float, iterations: Sequence[int], pl_rows: int, eval_every: int,
                 timing_hidden: int, timing_batches: Sequence[int], timing_iters: Sequence[int],
                 timing_direct: bool = False, timing_seconds: float = 0.2,
                 init_scale: float = 0.001, seed: int = 0, data: np.ndarray | None = None,
                 progress: bool = False) -> tuple[dict, dict]:
    """Fig. 10 (module docstring).  Returns ``(tables, summary)`` with tables ``curves``
    (method, iterations, updates, epoch, pl, seconds) and ``timing`` (method, batch_size,
    seconds_per_iteration).

    Parameters
    ----------
    hidden : int
        Hidden units.
    samples : int
        Training rows.
    epochs : int
        Training epochs.
    learning_rate : float
        Learning rate.
    batch_size : int
        Rows per update.
    damping : float
        Damping of the TAP iteration.
    iterations : sequence of int
        Iteration counts of TAP and adaTAP (Fig. 10's curves).
    pl_rows : int
        Rows of the pseudo-likelihood.
    eval_every : int
        Epochs between evaluations.
    timing_hidden : int
        Hidden units of the timing model.
    timing_batches : sequence of int
        Batch sizes of the timing.
    timing_iters : sequence of int
        Iterations timed per batch size.
    timing_direct : bool
        Also time adaTAP's direct Gaussian step.
    timing_seconds : float
        Least seconds per timing.
    init_scale : float
        Scale of the initial weights.
    seed : int
        Seed of the experiment's randomness.
    data : numpy.ndarray
        Training rows to use instead of loading the data set (tests).
    progress : bool
        Show progress (a tqdm bar).

    Returns
    -------
    tables : dict
        ``{name: pandas.DataFrame}``.
    summary : dict
        The study's summary.
    """
    import pandas as pd


    X = _mnist(samples) if data is None else np.asarray(data, dtype=np.float64)[:samples]
    V = X[:pl_rows]
    M = min(batch_size, X.shape[0])
    rows = []
    for method in ("tap", "adatap"):
        for iters in iterations:
            rbm = RBM(X.shape[1], hidden, seed=seed, scale=init_scale)
            rbm.b[:] = _base_rate(X)
            alg = TAP(learning_rate=learning_rate, momentum=0.0, weight_decay=0.0, damping=damping,
                      tol=1e-300, max_iter=int(iters), inference=method)
            alg.setup(rbm, X, M)
            rng = np.random.default_rng(seed)
            t0, spent = time.perf_counter(), 0.0
            rows.append(dict(method=method, iterations=iters, updates=0, epoch=0.0,
                             pl=pseudo_log_likelihood(rbm, V), seconds=0.0))
            nb = X.shape[0] // M
            for e in range(epochs):
                perm = rng.permutation(X.shape[0])
                for i in range(nb):
                    t = time.perf_counter()
                    alg.update(rbm, X[perm[i * M:(i + 1) * M]])
                    spent += time.perf_counter() - t
                    if alg.updates % eval_every == 0 or i == nb - 1:
                        rows.append(dict(method=method, iterations=iters, updates=alg.updates,
                                         epoch=alg.updates / nb, pl=pseudo_log_likelihood(rbm, V),
                                         seconds=spent))
            _progress(progress, f"  {method} {iters} it: pl {rows[-1]['pl']:.2f} "
                                f"({time.perf_counter() - t0:.1f} s)")
    curves = pd.DataFrame(rows).drop_duplicates(["method", "iterations", "updates"])
    Xt = X if X.shape[0] >= max(timing_batches) else (_mnist(max(timing_batches)) if data is None else
                                                       np.resize(X, (max(timing_batches), X.shape[1])))
    timing = time_inference(Xt, hidden=timing_hidden, batches=timing_batches,
                            iters=timing_iters, direct=timing_direct,
                            min_seconds=timing_seconds, seed=seed, progress=progress)
    piv = timing.pivot(index="batch_size", columns="method", values="seconds_per_iteration")
    def _ratio(col):      # NaN when a tiny model's TAP iteration times as 0
        return {int(b): (float(piv.loc[b, col] / piv.loc[b, "tap"]) if piv.loc[b, "tap"] > 0
                         else float("nan")) for b in piv.index}

    ratio = _ratio("adatap")
    ratio_direct = _ratio("adatap_direct") if "adatap_direct" in piv else None
    last = curves.groupby(["method", "iterations"])["pl"].last()
    final = {f"{m}_{it}": float(v) for (m, it), v in last.items()}
    tap_best = max(v for k, v in final.items() if k.startswith("tap_"))
    summary = {
        "final_pl": final,
        "time_ratio_adatap_over_tap": ratio,
        "time_ratio_adatap_full_inverse_over_tap": ratio_direct,
        "timing_model": f"{X.shape[1]}x{timing_hidden}",
        "claims": adatap_claims(final, ratio, min(iterations)),
    }
    return {"curves": curves, "timing": timing}, summary


#: "comparable" pseudo-likelihoods of Fig. 10: within this many nats of the best TAP one
ADATAP_NATS = 1.0
#: "≈ 3 orders of magnitude" slower per iteration: a ratio within this range
ADATAP_RATIO = (1e2, 1e4)


def adatap_claims(final: dict, ratio: dict, fewest: int) -> list[dict]:
    """Fig. 10 / App. D's statements judged on the adaTAP study.

    Parameters
    ----------
    final : dict
        Final pseudo-likelihood per solver, keyed ``"<method>_<iterations>"``.
    ratio : dict
        adaTAP / TAP time per iteration, keyed by batch size.
    fewest : int
        The smallest fixed iteration count (the paper's 3).

    Returns
    -------
    list of dict
        Claim rows (:func:`rbmviz.reproduce.report.make_claim`).
    """
    worst_key = f"adatap_{fewest}"
    tap_best = max((v for k, v in final.items() if k.startswith("tap_")), default=None)
    others = {k: v for k, v in final.items() if k != worst_key}
    out = []
    if worst_key in final and others:
        margin = min(others.values()) - final[worst_key]
        out.append(make_claim(
            f"adaTAP stopped after {fewest} iterations trains worst (Fig. 10)",
            "agrees" if margin > 0 else "differs",
            criterion=f"its final pseudo-likelihood is below every other solver's (judged: the "
                      f"margin to the next lowest, nats)", judged=margin,
            paper=f"adaTAP with {fewest} iterations is worse",
            measured=", ".join(f"{k} {v:.2f}" for k, v in final.items())))
    rest = {k: v for k, v in others.items()}
    if rest and tap_best is not None:
        far = max(abs(v - tap_best) for v in rest.values())
        out.append(make_claim(
            "every other solver trains comparably (Fig. 10)",
            "agrees" if far < ADATAP_NATS else "differs",
            criterion=f"every other final pseudo-likelihood within {ADATAP_NATS:g} nat of the best "
                      f"TAP one (judged: the largest distance)", judged=far,
            paper="all comparable except adaTAP with 3 iterations"))
    r = _io.finite_or_none(ratio[max(ratio)]) if ratio else None
    lo, hi = ADATAP_RATIO
    out.append(make_claim(
        "adaTAP's time per iteration is about three orders of magnitude above TAP's (App. D)",
        ("agrees" if lo <= r <= hi else "differs") if r is not None else "not run",
        criterion=f"adaTAP / TAP time per iteration at the largest timed batch between {lo:g} and "
                  f"{hi:g} (judged: the ratio)", judged=r, paper="≈ 1e3",
        measured=", ".join(f"batch {b}: {v:.3g}" for b, v in sorted(ratio.items())) if ratio else ""))
    return out


# ---------------------------------------------------------------------------- state files
def _load_state(path):
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else None


def _rng_from(state, seed):
    rng = np.random.default_rng(seed)
    if state is not None:
        rng.bit_generator.state = state
    return rng


# ---------------------------------------------------------------------------- Fig. 11
def study_dbm(*, models: Sequence[Sequence[int]], samples: int, test_samples: int,
              pretrain_epochs: int, pretrain_lr: float, epochs: int, learning_rate: float,
              batch_size: int, eval_every: int, eval_samples: int, init_scale: float = 0.001,
              seed: int = 0, state: str | os.PathLike | None = None, data: np.ndarray | None = None,
              progress: bool = False) -> tuple[dict, dict]:
    """Fig. 11 (module docstring).  ``state``: directory keeping each model, its trainer and
    its curve after every evaluation; running again continues from there.  Returns
    ``(tables, summary)`` with table ``curves`` (model, epoch, train_ll_per_unit,
    test_ll_per_unit, seconds).

    Parameters
    ----------
    models : sequence of sequence of int
        Layer sizes of the DBMs.
    samples : int
        Training rows.
    test_samples : int
        Test rows.
    pretrain_epochs : int
        Epochs of layer-wise pretraining.
    pretrain_lr : float
        Learning rate of the pretraining.
    epochs : int
        Training epochs.
    learning_rate : float
        Learning rate.
    batch_size : int
        Rows per update.
    eval_every : int
        Epochs between evaluations.
    eval_samples : int
        Rows the likelihoods are evaluated on.
    init_scale : float
        Scale of the initial weights.
    seed : int
        Seed of the experiment's randomness.
    state : str or os.PathLike
        Directory keeping each model, its trainer and records, so that an interrupted study continues.
    data : numpy.ndarray
        Training rows to use instead of loading the data set (tests).
    progress : bool
        Show progress (a tqdm bar).

    Returns
    -------
    tables : dict
        ``{name: pandas.DataFrame}``.
    summary : dict
        The study's summary.
    """
    import pandas as pd


    if data is None:
        X, X_test = _mnist(samples), _mnist(test_samples, "test")
    else:
        X, X_test = (np.asarray(a, dtype=np.float64) for a in data)
        X, X_test = X[:samples], X_test[:test_samples]
    Xe, Xt = X[:eval_samples], X_test[:eval_samples]
    rows, summary = [], {"models": {}}
    for k, layers in enumerate(models):
        name = "-".join(str(n) for n in layers)
        sdir = Path(state) / name if state else None
        st = _load_state(sdir / "state.json") if sdir else None
        tr = DBMTrainer(learning_rate=learning_rate, batch_size=batch_size, seed=seed + k)
        if st is not None:
            dbm = DBM.load(sdir / "dbm.npz")
            tr.rng = _rng_from(st["rng"], seed + k)
            tr.epochs, tr.updates = st["epochs"], st["updates"]
            with np.load(sdir / "velocity.npz") as f:
                tr.velocity = [f[f"v{l}"] for l in range(len(dbm.W))]
            mrows = st["rows"]
            _progress(progress, f"DBM {name}: resumed at joint epoch {tr.epochs}")
        else:
            dbm = DBM(layers, seed=seed + k, scale=init_scale)
            dbm.biases[0][:] = _base_rate(X)
            pretrain(dbm, X, epochs=pretrain_epochs, learning_rate=pretrain_lr,
                     batch_size=batch_size, seed=seed + k,
                     callback=lambda l, e: _progress(progress and e == pretrain_epochs,
                                                     f"DBM {name}: layer {l} pretrained"))
            mrows = []
        t0 = time.perf_counter()

        def evaluate():
            kw = dict(init=Xe, tol=1e-8, max_iter=1000, per_unit=True)
            return dict(model=name, epoch=tr.epochs,
                        train_ll_per_unit=log_likelihood(dbm, Xe, **kw),
                        test_ll_per_unit=log_likelihood(dbm, Xt, **kw),
                        seconds=time.perf_counter() - t0)

        if not mrows:
            mrows.append(evaluate())
        while tr.epochs < epochs:
            tr.epoch(dbm, X)
            if tr.epochs % eval_every == 0 or tr.epochs == epochs:
                mrows.append(evaluate())
                _progress(progress, f"DBM {name} epoch {tr.epochs}: train "
                                    f"{mrows[-1]['train_ll_per_unit']:.4f}, test "
                                    f"{mrows[-1]['test_ll_per_unit']:.4f} per unit")
                if sdir:
                    sdir.mkdir(parents=True, exist_ok=True)
                    dbm.save(sdir / "dbm.npz", overwrite=True)
                    _files.savez(sdir / "velocity.npz",
                                 {f"v{l}": v for l, v in enumerate(tr.velocity)}, overwrite=True)
                    _io.write_json(sdir / "state.json", {"epochs": tr.epochs, "updates": tr.updates,
                                                         "rng": tr.rng.bit_generator.state,
                                                         "rows": mrows})
        rows += mrows
        first, last = mrows[0], mrows[-1]
        summary["models"][name] = {
            "after_pretraining": {"train": first["train_ll_per_unit"], "test": first["test_ll_per_unit"]},
            "final": {"train": last["train_ll_per_unit"], "test": last["test_ll_per_unit"]},
            "joint_epochs": tr.epochs,
            "rises_in_joint_training": bool(last["train_ll_per_unit"] > first["train_ll_per_unit"]),
            "test_minus_train_final": last["test_ll_per_unit"] - last["train_ll_per_unit"],
        }
    return {"curves": pd.DataFrame(rows)}, summary


# ---------------------------------------------------------------------------- Fig. 12
def study_fig12(*, hidden: int, samples: int, epochs: int, learning_rate: float, batch_size: int,
                weight_decay: float, momentum: float, eval_samples: int, ais_chains: int,
                ais_thin: int, spl_sites: int, init_scale: float = 0.001, seed: int = 0,
                state: str | os.PathLike | None = None, data: np.ndarray | None = None,
                progress: bool = False) -> tuple[dict, dict]:
    """Fig. 12 (module docstring).  Returns ``(tables, summary)`` with table ``curves``
    (epoch, tap_ll, ais_ll, ais_ll_low, ais_ll_high, spl, seconds).

    Parameters
    ----------
    hidden : int
        Hidden units.
    samples : int
        Training rows.
    epochs : int
        Training epochs.
    learning_rate : float
        Learning rate.
    batch_size : int
        Rows per update.
    weight_decay : float
        ℓ2 weight decay.
    momentum : float
        Momentum.
    eval_samples : int
        Rows the likelihoods are evaluated on.
    ais_chains : int
        AIS runs per evaluation.
    ais_thin : int
        Thinning of the AIS schedule (:func:`sm_schedule`).
    spl_sites : int
        Sites of the stochastic pseudo-likelihood.
    init_scale : float
        Scale of the initial weights.
    seed : int
        Seed of the experiment's randomness.
    state : str or os.PathLike
        Directory keeping the models, so that an interrupted study continues.
    data : numpy.ndarray
        Training rows to use instead of loading the data set (tests).
    progress : bool
        Show progress (a tqdm bar).

    Returns
    -------
    tables : dict
        ``{name: pandas.DataFrame}``.
    summary : dict
        The study's summary.
    """
    import pandas as pd
    from scipy.stats import spearmanr


    X = _mnist(samples) if data is None else np.asarray(data, dtype=np.float64)[:samples]
    Xe = X[:eval_samples]
    M = min(batch_size, X.shape[0])
    betas = sm_schedule(ais_thin)
    subset = spl_subset(Xe.shape[0], X.shape[1], rows=Xe.shape[0], sites=spl_sites, seed=seed)
    sdir = Path(state) if state else None
    st = _load_state(sdir / "state.json") if sdir else None
    rbm = RBM(X.shape[1], hidden, seed=seed, scale=init_scale)
    rbm.b[:] = _base_rate(X)
    alg = TAP(learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay,
              momentum_form="heavy_ball", damping=0.5, tol=1e-8, max_iter=1000)
    alg.setup(rbm, X, M)
    rng = np.random.default_rng(seed)
    rows, epoch = [], 0
    if st is not None:
        rbm = RBM.load(sdir / "rbm.npz")
        alg.setup(rbm, X, M)
        with np.load(sdir / "alg.npz") as f:
            alg.vW[...] = f["vW"]
        alg.updates, rows, epoch = st["updates"], st["rows"], st["epoch"]
        rng = _rng_from(st["rng"], seed)
        _progress(progress, f"fig12: resumed at epoch {epoch}")
    t0 = time.perf_counter()

    def evaluate():
        ev = evaluate_tap(rbm, Xe)
        ais = ais_log_partition(rbm, n_chains=ais_chains, betas=betas, seed=seed + epoch, data=X)
        neg_f = -np.mean(rbm.free_energy(Xe))
        return dict(epoch=epoch, tap_ll=float(ev["ll"]), ais_ll=float(neg_f - ais.log_z),
                    ais_ll_low=float(neg_f - ais.log_z_high), ais_ll_high=float(neg_f - ais.log_z_low),
                    spl=stochastic_pseudo_log_likelihood(rbm, Xe, subset=subset),
                    seconds=time.perf_counter() - t0)

    if not rows:
        rows.append(evaluate())
    nb = X.shape[0] // M
    while epoch < epochs:
        perm = rng.permutation(X.shape[0])
        for i in range(nb):
            alg.update(rbm, X[perm[i * M:(i + 1) * M]])
        epoch += 1
        rows.append(evaluate())
        r = rows[-1]
        _progress(progress, f"fig12 epoch {epoch}: TAP {r['tap_ll']:.2f}, AIS {r['ais_ll']:.2f}, "
                            f"SPL {r['spl']:.2f} nats")
        if sdir:
            sdir.mkdir(parents=True, exist_ok=True)
            rbm.save(sdir / "rbm.npz", overwrite=True)
            _files.savez(sdir / "alg.npz", {"vW": alg.vW}, overwrite=True)
            _io.write_json(sdir / "state.json", {"epoch": epoch, "updates": alg.updates,
                                                 "rng": rng.bit_generator.state, "rows": rows})
    curves = pd.DataFrame(rows)
    rho = {}
    for a, b in (("tap_ll", "ais_ll"), ("tap_ll", "spl"), ("ais_ll", "spl")):
        rho[f"{a}~{b}"] = float(spearmanr(curves[a], curves[b]).statistic) if len(curves) > 2 else float("nan")
    rise = {c: bool(curves[c].iloc[-1] > curves[c].iloc[0]) for c in ("tap_ll", "ais_ll", "spl")}
    summary = {"first": rows[0], "last": rows[-1], "spearman": rho, "rises": rise,
               "ais_betas": int(betas.size), "ais_chains": ais_chains,
               "claims": fig12_claims(curves)}
    return {"curves": curves}, summary


#: Fig. 12's agreement is judged on the evaluations past the knee (from the first at which AIS
#: has covered this fraction of its gain), where rising together is not automatic
FIG12_KNEE = 0.9
#: at least this many evaluations past the knee to judge the rank agreement
FIG12_MIN_POINTS = 5
#: Spearman's rho above this counts as "consistent"
FIG12_RHO = 0.5
#: the TAP log-likelihood is within this fraction of the AIS one at the last evaluation
FIG12_GAP = 0.05


def fig12_claims(curves: "pandas.DataFrame") -> list[dict]:
    """Fig. 12's statement (TAP log-likelihood, AIS and pseudo-likelihood "increase
    consistently") judged where it can fail.

    Three metrics rising together over the first epochs of a run from scratch agree by
    construction, so besides "all three rise" the agreement is judged past the knee (the
    evaluations from the first at which the AIS curve has covered :data:`FIG12_KNEE` of its
    gain): the rank correlation of the metrics there, and the gap between the TAP and the AIS
    log-likelihood at the last evaluation.

    Parameters
    ----------
    curves : pandas.DataFrame
        The study's ``curves`` table (``epoch``, ``tap_ll``, ``ais_ll``, ``spl``).

    Returns
    -------
    list of dict
        Claim rows (:func:`rbmviz.reproduce.report.make_claim`).
    """
    from scipy.stats import spearmanr
    out = []
    rise = {c: float(curves[c].iloc[-1] - curves[c].iloc[0]) for c in ("tap_ll", "ais_ll", "spl")}
    out.append(make_claim(
        "TAP log-likelihood, AIS log-likelihood and pseudo-likelihood all increase during "
        "training", ("agrees" if min(rise.values()) > 0 else "differs") if len(curves) > 1
        else "not run", criterion="each metric ends above its first evaluation (judged: the "
        "smallest rise, nats)", judged=min(rise.values()) if len(curves) > 1 else None,
        paper="all three increase (Fig. 12)",
        measured=", ".join(f"{c} {v:+.2f}" for c, v in rise.items())))
    ais = curves["ais_ll"].to_numpy()
    gain = ais.max() - ais[0]
    knee = int(np.flatnonzero(ais >= ais[0] + FIG12_KNEE * gain)[0]) if gain > 0 else len(ais)
    late = curves.iloc[knee:]
    crit = (f"Spearman's ρ > {FIG12_RHO:g} between every pair of the three metrics over the "
            f"evaluations past the knee (from the first at which AIS covers "
            f"{FIG12_KNEE:.0%} of its gain), with at least {FIG12_MIN_POINTS} of them; "
            f"judged: the smallest ρ")
    if len(late) >= FIG12_MIN_POINTS:
        rho = {f"{a}~{b}": float(spearmanr(late[a], late[b]).statistic)
               for a, b in (("tap_ll", "ais_ll"), ("tap_ll", "spl"), ("ais_ll", "spl"))}
        low = min(rho.values())
        out.append(make_claim(
            "the three metrics move together past the knee", "agrees" if low > FIG12_RHO
            else "differs", criterion=crit, judged=low, paper="increase consistently (Fig. 12)",
            measured=f"{len(late)} evaluations from epoch {int(late['epoch'].iloc[0])}: "
                     + ", ".join(f"{k} {v:.2f}" for k, v in rho.items())))
    else:
        out.append(make_claim(
            "the three metrics move together past the knee",
            f"inconclusive ({len(late)} evaluations past the knee, fewer than {FIG12_MIN_POINTS})",
            criterion=crit, judged=None, paper="increase consistently (Fig. 12)"))
    tap, a = float(curves["tap_ll"].iloc[-1]), float(ais[-1])
    rel = abs(tap - a) / abs(a) if a else None
    out.append(make_claim(
        "the TAP log-likelihood is close to the AIS one", ("agrees" if rel <= FIG12_GAP
                                                           else "differs") if rel is not None
        else "not run", criterion=f"|TAP − AIS| at the last evaluation within {FIG12_GAP:.0%} "
        f"of |AIS| (judged: that fraction)", judged=rel,
        paper="a surrogate of the log-likelihood (Fig. 12)",
        measured=f"TAP {tap:.2f}, AIS {a:.2f} nats at epoch {int(curves['epoch'].iloc[-1])}"))
    return out


# ---------------------------------------------------------------------------- driver
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
    tables : dict
        ``{name: pandas.DataFrame}``.
    summary : dict
        The study's summary.

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
    out = Path(out)
    _io.check_out_dir(out, overwrite, files)
    out.mkdir(parents=True, exist_ok=True)
    paths = [_io.write_csv(out / f"{t}.csv", df) for t, df in tables.items()]
    _io.write_json(out / "summary.json", summary)
    paths.append(out / "summary.json")
    if html:
        paths.append(_io.save_figure(out / "figure.html", study_figure(name, tables),
                                     resources="inline", title=f"Tramel et al. 2018: {name}"))
    return paths


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
