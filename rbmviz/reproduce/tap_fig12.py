"""The TAP / AIS / pseudo-likelihood comparison (Tramel et al. 2018, App. F, Fig. 12) —
``rbmviz reproduce tap --study fig12 [--quick]`` (the TAP-beyond theory page of the
documentation).

:func:`study_fig12`: a 784×N_h RBM trained with Alg. 2 (Table 1 settings); at every epoch the
TAP log-likelihood (eq. 39, :func:`rbmviz.reproduce.tap_eval.evaluate_tap`), the AIS
log-likelihood (Salakhutdinov & Murray's schedule, 14,501 temperatures, 100 runs;
:func:`sm_schedule`) and the stochastic pseudo-likelihood over 100 of the 784 pixels on the
same rows, and whether the three rise together (Spearman correlations over the checkpoints,
:func:`fig12_claims`).  Resumable (``state``).

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

from .. import _files
from .. import bounds as _bounds
from ..algorithms.knobs import derive_knobs
from ..algorithms.tap import TAP
from ..datasets import load_split
from ..evaluate import ais_betas, ais_log_partition, spl_subset, stochastic_pseudo_log_likelihood
from ..model import RBM
from ..settings import ModelSettings
from . import _io
from ._beyond import base_rate as _base_rate
from ._beyond import documented as _documented
from ._beyond import load_state as _load_state
from ._beyond import progress as _progress
from ._beyond import rng_from as _rng_from
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


@_documented(Settings)
def study_fig12(*, hidden: int, samples: int, epochs: int, learning_rate: float, batch_size: int,
                weight_decay: float, momentum: float, eval_samples: int, ais_chains: int,
                ais_thin: int, spl_sites: int,
                init_scale: float = Settings.param.init_scale.default,
                seed: int = Settings.param.seed.default,
                state: str | os.PathLike | None = None, data: np.ndarray | None = None,
                progress: bool = False) -> tuple[dict, dict]:
    """Fig. 12 (module docstring).  Returns ``(tables, summary)`` with table ``curves``
    (epoch, tap_ll, ais_ll, ais_ll_low, ais_ll_high, spl, seconds).
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
    st = _load_state(sdir / "state.json") if sdir else None
    rbm = RBM(X.shape[1], hidden, seed=seed, scale=init_scale)
    rbm.b[:] = _base_rate(X)
    alg = TAP(learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay,
              momentum_form="heavy_ball")       # the solver's declared damping, tol, max_iter
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
