"""adaTAP against TAP (Tramel et al. 2018, App. D, Fig. 10) — ``rbmviz reproduce tap --study
adatap [--quick]`` (the TAP-beyond theory page of the documentation).

:func:`study_adatap`: one binary RBM per inference method (Alg. 1 "tap", Alg. 3 "adatap") and
fixed iteration count (3, 10, 100), trained with Alg. 2 (K = M, damping 0.5, plain SGD) on
the first binarised-MNIST images, all seeing the same mini-batches; the pseudo-likelihood
(all sites, :func:`rbmviz.evaluate.pseudo_log_likelihood`) of training rows along training;
and the wall time of one inference iteration for batches of 1, 10 and 100 data-anchored runs
of a 784×``timing_hidden`` RBM, with the adaTAP/TAP ratio (:func:`time_inference`).

:class:`Settings` declares the settings once: its defaults are the paper's (where it gives
them; also :data:`FULL`), its ``--quick`` preset a form that runs in about three minutes on a
laptop (:data:`QUICK`); :func:`rbmviz.reproduce.tap_beyond.run` runs either, and ``rbmviz
reproduce tap --study adatap`` has one option per setting.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Sequence

import numpy as np
import param

from .. import bounds as _bounds
from .._blas import numba_threads, single_threaded_blas
from ..algorithms.knobs import derive_knobs
from ..algorithms.tap import TAP
from ..datasets import load_split
from ..evaluate import pseudo_log_likelihood
from ..model import RBM
from ..settings import ModelSettings
from ..tap import adatap, solve
from . import _io
from ._beyond import base_rate as _base_rate
from ._beyond import documented as _documented
from ._beyond import progress as _progress
from ._study import ListOf, StudySettings, resolve, values
from .report import make_claim

if TYPE_CHECKING:
    import pandas

__all__ = ["Settings", "FULL", "QUICK", "NOTES", "ADATAP_NATS", "ADATAP_RATIO", "time_inference",
           "study_adatap", "adatap_claims"]

#: the declaration of the initial weights' scale (its bounds)
_INIT_SCALE = ModelSettings.param.init_scale


class Settings(derive_knobs("_AdatapKnobs", [TAP], include=["learning_rate", "damping", "seed"],
                            defaults={"learning_rate": 0.001, "damping": 0.5},
                            bases=(StudySettings,))):
    """The settings of ``rbmviz reproduce tap --study adatap`` (defaults: Fig. 10's where its
    caption gives them — 784×500, the first 5,000 binarised-MNIST images, γ = 0.001, batches
    of 100, damping 0.5, 3, 10 and 100 iterations; the ``--quick`` preset runs in about three
    minutes on a laptop); the learning rate, damping and seed are the TAP rule's knobs
    (:mod:`rbmviz.algorithms.knobs`)."""

    learning_rate = param.Number(doc="learning rate γ of Alg. 2 (Fig. 10: 0.001; plain SGD, "
                                     "no momentum, no weight decay)")
    damping = param.Number(doc="damping of the TAP and adaTAP iterations (Fig. 10: 0.5)")
    seed = param.Integer(doc="seed of the initial weights, the mini-batches and the timing model")
    hidden = param.Integer(500, bounds=(1, _bounds.UNITS_MAX),
                           doc="hidden units of the trained RBMs (Fig. 10: 500)")
    samples = param.Integer(5000, bounds=(1, None),
                            doc="training rows, the first of binarised MNIST's training split "
                                "(Fig. 10: 5,000)")
    epochs = param.Integer(10, bounds=(1, _bounds.EPOCHS_MAX), doc="training epochs")
    batch_size = param.Integer(100, bounds=(1, None),
                               doc="rows per update M = TAP runs per update K (Fig. 10: 100)")
    iterations = ListOf(int, [3, 10, 100], bounds=(1, None),
                        doc="fixed iteration counts of TAP and adaTAP, one trained RBM per "
                            "method and count (Fig. 10: 3, 10, 100)")
    pl_rows = param.Integer(1000, bounds=(1, None),
                            doc="training rows the pseudo-likelihood is evaluated on")
    eval_every = param.Integer(10, bounds=(1, None),
                               doc="updates between pseudo-likelihood evaluations (and the "
                                   "last update of every epoch)")
    init_scale = param.Number(0.001, bounds=_INIT_SCALE.bounds,
                              doc="standard deviation of the initial weights")
    timing_hidden = param.Integer(500, bounds=(1, _bounds.UNITS_MAX),
                                  doc="hidden units of the timed 784×N_h model (Fig. 10 right)")
    timing_batches = ListOf(int, [1, 10, 100], bounds=(1, None),
                            doc="batch sizes of the timing (Fig. 10 right: 1, 10, 100)")
    timing_iters = ListOf(int, [10, 2], bounds=(2, 2),
                          doc="iterations timed per batch size: TAP, adaTAP")
    timing_direct = param.Boolean(True, doc="also time adaTAP with the full n×n inverse per run "
                                            "(the cost the paper reports)")
    timing_seconds = param.Number(0.2, bounds=(0.0, None),
                                  doc="least CPU seconds of each timing")

    QUICK = {"hidden": 16, "samples": 500, "epochs": 2, "learning_rate": 0.05, "batch_size": 20,
             "pl_rows": 500, "eval_every": 5, "init_scale": 0.01, "timing_hidden": 100,
             "timing_direct": False}
    QUICK_HELP = "about three minutes (784x16 RBMs, 500 images, 2 epochs, a 784x100 timing model)"
    METAVARS = {"iterations": "T,T,...", "timing_batches": "B,B,...", "timing_iters": "T,T"}
    ITEM_BOUNDS = {"iterations": (1, _bounds.TAP_ITER_MAX), "timing_batches": (1, None),
                   "timing_iters": (1, _bounds.TAP_ITER_MAX)}


#: the paper's settings (where it gives them): :class:`Settings`' defaults
FULL = values(Settings())
#: the ~3-minute form (smaller models, fewer images and epochs, larger steps): the defaults
#: with :attr:`Settings.QUICK`
QUICK = values(resolve(Settings, quick=True))
#: how the study measures, printed with its summary
NOTES = ["Iteration counts are fixed (no convergence test), as in Fig. 10; K = M TAP runs "
         "per update start from the batch rows (eqs. 37-38; adaTAP: A1 = 0, B1 = logit of "
         "the data and sigma(c + W^T x) clipped to [0.01, 0.99]).",
         "Pseudo-likelihood: all 784 sites, deterministic, on the first pl_rows training rows.",
         "Timing: process CPU time per iteration, (T(n+1) - T(1))/(k n) over k repeated calls, "
         "k grown until the difference lasts 0.2 s, best of 3 for TAP and of 1 for adaTAP, both with one BLAS and one Numba thread; adaTAP solves the n x n Gaussian step through a Schur "
         "complement of size min(N_v, N_h) per run (cheaper than the paper's full inverse, "
         "so the ratio is a lower bound on the paper's setting). The quick form times a "
         "784x100 model, the full form 784x500."]


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
    with numba_threads(1), single_threaded_blas():      # fair timing on a shared machine
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


@_documented(Settings)
def study_adatap(*, hidden: int, samples: int, epochs: int, learning_rate: float, batch_size: int,
                 damping: float, iterations: Sequence[int], pl_rows: int, eval_every: int,
                 timing_hidden: int, timing_batches: Sequence[int], timing_iters: Sequence[int],
                 timing_direct: bool = Settings.param.timing_direct.default,
                 timing_seconds: float = Settings.param.timing_seconds.default,
                 init_scale: float = Settings.param.init_scale.default,
                 seed: int = Settings.param.seed.default, data: np.ndarray | None = None,
                 progress: bool = False) -> tuple[dict, dict]:
    """Fig. 10 (module docstring).  Returns ``(tables, summary)`` with tables ``curves``
    (method, iterations, updates, epoch, pl, seconds) and ``timing`` (method, batch_size,
    seconds_per_iteration).
    """
    import pandas as pd


    X = (load_split("mnist", limit=samples) if data is None
         else np.asarray(data, dtype=np.float64)[:samples])
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
    n_timing = max(timing_batches)
    Xt = X if X.shape[0] >= n_timing else (load_split("mnist", limit=n_timing) if data is None
                                           else np.resize(X, (n_timing, X.shape[1])))
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
