"""The TAP / AIS / pseudo-likelihood comparison (Tramel et al. 2018, App. F, Fig. 12) —
``rbmviz reproduce tap --study fig12 [--quick]`` (the TAP-beyond theory page of the
documentation).

:func:`study_fig12`: a 784×N_h RBM trained with Alg. 2 (Table 1 settings); at every epoch the
TAP log-likelihood (eq. 39, :func:`rbmviz.reproduce.tap_eval.evaluate_tap`), the AIS
log-likelihood (Salakhutdinov & Murray's schedule, 14,501 temperatures, 100 runs;
:func:`sm_schedule`) and the stochastic pseudo-likelihood over 100 of the 784 pixels on the
same rows, and whether the three rise together (Spearman correlations over the checkpoints,
:func:`fig12_claims`).  Trained through the run loop (:class:`rbmviz.runs.Run`, a record
after every epoch); resumable (``state``) through its :meth:`~rbmviz.runs.Run.state`.

:class:`Settings` declares the settings once: its defaults are the paper's (also
:data:`FULL`), its ``--quick`` preset a form that runs in about three minutes on a laptop
(:data:`QUICK`); :func:`rbmviz.reproduce.tap_beyond.run` runs either, and ``rbmviz reproduce
tap --study fig12`` has one option per setting.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import param

from .. import bounds as _bounds
from ..algorithms.knobs import derive_knobs
from ..algorithms.tap import TAP
from ..datasets import load_split
from ..evaluate import ais_betas, ais_log_partition, spl_subset, stochastic_pseudo_log_likelihood
from ..model import RBM
from ..runs import Run
from ..settings import ModelSettings
from ._beyond import base_rate as _base_rate
from ._beyond import documented as _documented
from ._beyond import progress as _progress
from ._run_state import check_study as _check_study
from ._run_state import load_run_state as _load_run_state
from ._run_state import restore_run as _restore_run
from ._run_state import save_run_state as _save_run_state
from ._study import StudySettings, resolve, values
from .report import make_claim
from .tap_eval import evaluate_tap

if TYPE_CHECKING:
    import pandas

__all__ = ["Settings", "FULL", "QUICK", "NOTES", "FIG12_KNEE", "FIG12_MIN_POINTS", "FIG12_RHO", "FIG12_GAP",
           "sm_schedule", "study_fig12", "fig12_claims"]

#: the declaration of the initial weights' scale (its bounds)
_INIT_SCALE = ModelSettings.param.init_scale


class Settings(derive_knobs("_Fig12Knobs", [TAP],
                            include=["learning_rate", "weight_decay", "momentum", "seed"],
                            defaults={"learning_rate": 0.005, "weight_decay": 0.001,
                                      "momentum": 0.5},
                            bases=(StudySettings,))):
    """The settings of ``rbmviz reproduce tap --study fig12`` (defaults: App. F's — the
    Fig. 3(a) run, a 784×500 RBM on binarised MNIST with Table 1's settings; AIS with 100 runs
    over Salakhutdinov & Murray's 14,501 temperatures; a pseudo-likelihood over 100 of the
    784 pixels; the ``--quick`` preset runs in about three minutes on a laptop); the learning
    rate, weight decay, momentum and seed are the TAP rule's knobs
    (:mod:`rbmviz.algorithms.knobs`)."""

    learning_rate = param.Number(doc="learning rate γ of Alg. 2 (Table 1: 0.005)")
    weight_decay = param.Number(doc="ℓ2 weight decay ε (Table 1: 0.001)")
    momentum = param.Number(doc="heavy-ball momentum η (Table 1: 0.5)")
    seed = param.Integer(doc="seed of the initial weights, the mini-batches, the "
                              "pseudo-likelihood's sites and the AIS runs")
    hidden = param.Integer(500, bounds=(1, _bounds.UNITS_MAX),
                           doc="hidden units of the trained RBM (App. F: 500)")
    samples = param.Integer(60_000, bounds=(1, None),
                            doc="training rows, the first of binarised MNIST's training split")
    epochs = param.Integer(100, bounds=(1, _bounds.EPOCHS_MAX),
                           doc="training epochs, each followed by an evaluation")
    batch_size = param.Integer(100, bounds=(1, None),
                               doc="rows per update M = TAP runs per update K (Table 1: 100)")
    eval_samples = param.Integer(1000, bounds=(1, None),
                                 doc="training rows the three likelihoods are evaluated on")
    ais_chains = param.Integer(100, bounds=(1, None), doc="AIS runs per evaluation (App. F: 100)")
    ais_thin = param.Integer(1, bounds=(1, 14_501),
                             doc="keep every ais_thin-th of the 14,501 AIS temperatures "
                                 "(1: all, App. F)")
    spl_sites = param.Integer(100, bounds=(1, None),
                              doc="sites of the stochastic pseudo-likelihood (App. F: 100)")
    init_scale = param.Number(0.001, bounds=_INIT_SCALE.bounds,
                              doc="standard deviation of the initial weights")

    QUICK = {"hidden": 100, "samples": 2000, "epochs": 4, "learning_rate": 0.05,
             "batch_size": 20, "eval_samples": 300, "ais_chains": 20, "ais_thin": 10,
             "init_scale": 0.01}
    QUICK_HELP = ("about three minutes (784x100, 2,000 images, 4 epochs, AIS 20 runs over every "
                  "10th temperature)")


#: the paper's settings: :class:`Settings`' defaults
FULL = values(Settings())
#: the ~3-minute form (smaller model, fewer images and epochs, larger steps): the defaults
#: with :attr:`Settings.QUICK`
QUICK = values(resolve(Settings, quick=True))
#: how the study measures, printed with its summary
NOTES = ["TAP log-likelihood: eq. (39) with the unique solutions from one data-anchored start "
         "per evaluation row (rbmviz.reproduce.tap_run.evaluate_tap).",
         "AIS: base-rate start, Salakhutdinov & Murray's schedule (every ais_thin-th "
         "temperature of its 14,501), ais_chains runs; log-likelihood of the same rows.",
         "Pseudo-likelihood: stochastic, over a fixed random 100 of the 784 sites, same rows "
         "(rbmviz.evaluate.stochastic_pseudo_log_likelihood)."]


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


#: the files of the state directory written by earlier versions (a JSON state with the
#: counters, the evaluations and the generator's position, and the momentum in ``alg.npz``):
#: refused
_OLD_STATE_FILES = ("state.json", "alg.npz")


def _run(rbm: RBM, X: np.ndarray, *, learning_rate: float, weight_decay: float, momentum: float,
         epochs: int, batch_size: int, seed: int) -> Run:
    """The training of the study as a run of the TAP rule (Alg. 2, heavy-ball momentum, the
    solver's declared damping, tol and max_iter): a record before training (epoch 0) and after
    every epoch; the epochs' permutations from ``default_rng(seed)`` and batches of exactly
    ``batch_size`` rows, the last ``n mod batch_size`` rows of each permutation left out (the
    streams this study drew before it trained through the run loop)."""
    alg = TAP(learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay,
              momentum_form="heavy_ball", seed=seed)
    return Run(rbm, X, alg, epochs=epochs, batch_size=batch_size, seed=seed, eval_every=1,
               metrics=[], dtype=None, shuffle=np.random.default_rng(seed), remainder="drop")


@_documented(Settings)
def study_fig12(*, hidden: int, samples: int, epochs: int, learning_rate: float, batch_size: int,
                weight_decay: float, momentum: float, eval_samples: int, ais_chains: int,
                ais_thin: int, spl_sites: int,
                init_scale: float = Settings.param.init_scale.default,
                seed: int = Settings.param.seed.default,
                state: str | os.PathLike | None = None, data: np.ndarray | None = None,
                progress: bool = False) -> tuple[dict, dict]:
    """Fig. 12 (module docstring).  ``state``: directory keeping, after every evaluation, the
    model (``rbm.npz``) and the run's state with the curve so far (``run_state.pkl``:
    :meth:`rbmviz.runs.Run.state` and the evaluation rows, a pickle — keep state directories
    where only you can write); running again continues from there, bit for bit as an
    uninterrupted study.  A folder written by an earlier version (``state.json``) is refused.
    Returns ``(tables, summary)`` with table ``curves`` (epoch, tap_ll, ais_ll, ais_ll_low,
    ais_ll_high, spl, seconds).
    """
    import pandas as pd
    from scipy.stats import spearmanr

    X = (load_split("mnist", limit=samples) if data is None
         else np.asarray(data, dtype=np.float64)[:samples])
    Xe = X[:eval_samples]
    M = min(batch_size, X.shape[0])
    betas = sm_schedule(ais_thin)
    subset = spl_subset(Xe.shape[0], X.shape[1], rows=Xe.shape[0], sites=spl_sites, seed=seed)
    sdir = Path(state) if state else None
    what = f"the Fig. 12 RBM {X.shape[1]}x{hidden}"
    # the values a continuation must share that the run's state does not compare
    own = {"init_scale": init_scale, "eval_samples": int(Xe.shape[0]),
           "ais_chains": ais_chains, "ais_thin": ais_thin, "spl_sites": spl_sites}
    st = _load_run_state(sdir, older=_OLD_STATE_FILES, what=what) if sdir else None
    rbm = RBM(X.shape[1], hidden, seed=seed, scale=init_scale)
    rbm.b[:] = _base_rate(X)
    run = _run(rbm, X, learning_rate=learning_rate, weight_decay=weight_decay,
               momentum=momentum, epochs=epochs, batch_size=M, seed=seed)
    rows = []
    if st is not None:
        _check_study(sdir, st, own, what=what)
        _restore_run(sdir, run, st, what=what)      # rbm takes the saved parameters
        rows = list(st["rows"])
        _progress(progress, f"fig12: resumed at epoch {run.epoch}")
    t0 = time.perf_counter()

    def evaluate():
        epoch = run.epoch
        ev = evaluate_tap(rbm, Xe)
        ais = ais_log_partition(rbm, n_chains=ais_chains, betas=betas, seed=seed + epoch, data=X)
        neg_f = -np.mean(rbm.free_energy(Xe))
        return dict(epoch=epoch, tap_ll=float(ev["ll"]), ais_ll=float(neg_f - ais.log_z),
                    ais_ll_low=float(neg_f - ais.log_z_high), ais_ll_high=float(neg_f - ais.log_z_low),
                    spl=stochastic_pseudo_log_likelihood(rbm, Xe, subset=subset),
                    seconds=time.perf_counter() - t0)

    for _ in run:                # before training (epoch 0), then after every epoch
        rows.append(evaluate())
        r = rows[-1]
        if run.epoch:
            _progress(progress, f"fig12 epoch {run.epoch}: TAP {r['tap_ll']:.2f}, AIS "
                                f"{r['ais_ll']:.2f}, SPL {r['spl']:.2f} nats")
        if sdir:
            sdir.mkdir(parents=True, exist_ok=True)
            rbm.save(sdir / "rbm.npz", overwrite=True)
            _save_run_state(sdir, run, rows=rows, study=own)
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
