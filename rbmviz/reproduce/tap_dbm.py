"""Deep TAP machines (Tramel et al. 2018, App. E, Fig. 11) — ``rbmviz reproduce tap --study
dbm [--quick]`` (the TAP-beyond theory page of the documentation).

:func:`study_dbm`: 2- and 3-hidden-layer binary DBMs (:mod:`rbmviz.dbm`), layer-wise TAP
pretraining then joint TAP training; the TAP log-likelihood per unit of train and test images
after pretraining (epoch 0) and along joint training.  Resumable (``state``).

:class:`Settings` declares the settings once: its defaults are the paper's where it gives them
(layer sizes of Fig. 11 are not given — Salakhutdinov & Hinton's 500–1000 and 500–500–1000 are
used; also :data:`FULL`), its ``--quick`` preset a form that runs in about three minutes on a
laptop (:data:`QUICK`); :func:`rbmviz.reproduce.tap_beyond.run` runs either, and ``rbmviz
reproduce tap --study dbm`` has one option per setting (``--models 784-500-1000,784-500-500-1000``).
:func:`dbm_claims` judges what the paper says of Fig. 11.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import param

from .. import bounds as _bounds
from ..algorithms.knobs import derive_knobs
from ..algorithms.tap import TAP
from ..datasets import load_split
from ..dbm import DBM, DBMKnobs, JointTAP, log_likelihood, pretrain
from ..runs import Run
from ..settings import ModelSettings
from ..tap.options import TAPSolverOptions as _O
from ._beyond import base_rate as _base_rate
from ._beyond import documented as _documented
from ._beyond import progress as _progress
from ._run_state import check_study as _check_study
from ._run_state import load_run_state as _load_run_state
from ._run_state import restore_run as _restore_run
from ._run_state import save_run_state as _save_run_state
from ._study import LayerSizes, ListOf, StudySettings, resolve, values
from .report import make_claim

if TYPE_CHECKING:
    import pandas

__all__ = ["Settings", "FULL", "QUICK", "NOTES", "study_dbm", "dbm_claims"]

#: the declarations the settings copy: the learning rate (its bounds), the deep TAP machine's
#: batch size and pretraining epochs, the initial weights' scale
_LR, _DBM, _INIT_SCALE = TAP.Knobs.param.learning_rate, DBMKnobs.param, ModelSettings.param.init_scale


class Settings(derive_knobs("_DBMStudyKnobs", [TAP], include=["learning_rate", "seed"],
                            defaults={"learning_rate": 0.001}, bases=(StudySettings,))):
    """The settings of ``rbmviz reproduce tap --study dbm`` (defaults: Fig. 11's where the paper
    gives them — binarised MNIST, 50 epochs of layer-wise pretraining at γ = 0.001, 3,000
    epochs of joint training; the layer sizes are not given, Salakhutdinov & Hinton's
    784-500-1000 and 784-500-500-1000 are used; the ``--quick`` preset runs in about three
    minutes on a laptop); the learning rate and seed are the TAP rule's knobs
    (:mod:`rbmviz.algorithms.knobs`), the batch size and pretraining epochs the deep TAP
    machine's (:data:`rbmviz.dbm.DBMKnobs`)."""

    learning_rate = param.Number(doc="learning rate γ of the joint training (Fig. 11: 0.001)")
    seed = param.Integer(doc="seed of the first model (model k uses seed + k)")
    models = ListOf(LayerSizes, [(784, 500, 1000), (784, 500, 500, 1000)], bounds=(1, None),
                    doc="layer sizes of the deep models, visible first, one model each "
                        "(Fig. 11: a 2- and a 3-hidden-layer model; sizes not given)")
    samples = param.Integer(60_000, bounds=(1, None),
                            doc="training rows, the first of binarised MNIST's training split")
    test_samples = param.Integer(10_000, bounds=(1, None),
                                 doc="test rows, the first of the test split")
    pretrain_epochs = param.Integer(_DBM.epochs.default, bounds=_DBM.epochs.bounds,
                                    doc="epochs of each layer's TAP-RBM pretraining "
                                        "(Alg. 4; Fig. 11: 50)")
    pretrain_lr = param.Number(0.001, bounds=_LR.bounds, inclusive_bounds=_LR.inclusive_bounds,
                               doc="learning rate of the pretraining (Fig. 11: 0.001)")
    epochs = param.Integer(3000, bounds=(0, _bounds.EPOCHS_MAX),
                           doc="epochs of joint training (Fig. 11: 3,000; 0: pretraining only)")
    batch_size = param.Integer(_DBM.batch_size.default, bounds=_DBM.batch_size.bounds,
                               doc="rows per update M = free TAP solutions per update K")
    eval_every = param.Integer(10, bounds=(1, None),
                               doc="joint epochs between evaluations (and the last)")
    eval_samples = param.Integer(1000, bounds=(1, None),
                                 doc="train and test rows the TAP log-likelihood is evaluated on")
    init_scale = param.Number(0.001, bounds=_INIT_SCALE.bounds,
                              doc="standard deviation of the initial weights")

    QUICK = {"models": [(784, 50, 25), (784, 50, 25, 25)], "samples": 1000, "test_samples": 200,
             "pretrain_epochs": 3, "pretrain_lr": 0.05, "epochs": 3, "learning_rate": 0.02,
             "batch_size": 20, "eval_every": 1, "eval_samples": 200, "init_scale": 0.01}
    QUICK_HELP = ("about three minutes (784-50-25 and 784-50-25-25, 1,000 images, 3 + 3 "
                  "epochs)")
    METAVARS = {"models": "N-N-N,N-N-N-N"}


#: the paper's settings (where it gives them): :class:`Settings`' defaults
FULL = values(Settings())
#: the ~3-minute form (smaller models, fewer images and epochs, larger steps): the defaults
#: with :attr:`Settings.QUICK`
QUICK = values(resolve(Settings, quick=True))
#: how the study measures, printed with its summary
NOTES = ["Layer sizes are not given in the paper (UNCONFIRMED): 784-500-1000 and "
         "784-500-500-1000 (Salakhutdinov & Hinton 2009) in the full form.",
         "Pretraining: TAP RBMs (Alg. 2, heavy-ball momentum 0.5, l2 0.001) layer by layer on "
         "binary samples of the layer below given the data; joint training: eqs. 126-129, "
         "K = M free solutions from the batch rows, heavy-ball momentum 0.5, l2 0.001.",
         "TAP log-likelihood: clamped TAP2 value of each image minus the mean TAP2 log Z of the "
         "converged free solutions started from the evaluation rows, per unit = / sum_l N_l."]


#: the files of a model's state directory written by earlier versions (a JSON state with the
#: trainer's counters and generator, and its momentum in ``velocity.npz``): refused
_OLD_STATE_FILES = ("state.json", "velocity.npz")


def _joint_run(dbm: DBM, X: np.ndarray, *, learning_rate: float, epochs: int, batch_size: int,
               eval_every: int, seed: int) -> Run:
    """The joint phase of one model as a run of :class:`rbmviz.dbm.JointTAP`: a record after
    pretraining (epoch 0), every ``eval_every`` epochs and at the last; the epochs'
    permutations from ``default_rng(seed)`` and batches of exactly ``batch_size`` rows (the
    streams of :class:`rbmviz.dbm.DBMTrainer`, which this study used before)."""
    return Run(dbm, X, JointTAP(learning_rate=learning_rate, seed=seed), epochs=epochs,
               batch_size=batch_size, seed=seed, eval_every=eval_every, metrics=[], dtype=None,
               shuffle=np.random.default_rng(seed), remainder="drop")


@_documented(Settings, data=("tuple of numpy.ndarray", "Training and test rows to use instead "
                                                 "of loading the data set (tests)."))
def study_dbm(*, models: Sequence[Sequence[int]], samples: int, test_samples: int,
              pretrain_epochs: int, pretrain_lr: float, epochs: int, learning_rate: float,
              batch_size: int, eval_every: int, eval_samples: int,
              init_scale: float = Settings.param.init_scale.default,
              seed: int = Settings.param.seed.default, state: str | os.PathLike | None = None, data: np.ndarray | None = None,
              progress: bool = False) -> tuple[dict, dict]:
    """Fig. 11 (module docstring).  ``state``: directory keeping, for each model in the folder
    of its layer sizes, after every evaluation, the model (``dbm.npz``) and its joint run's
    state with the curve so far (``run_state.pkl``: :meth:`rbmviz.runs.Run.state` and the
    evaluation rows, a pickle — keep state directories where only you can write); running
    again continues from there, bit for bit as an uninterrupted study.  A folder written by
    an earlier version (``state.json``) is refused.  Returns ``(tables, summary)`` with table
    ``curves`` (model, epoch, train_ll_per_unit, test_ll_per_unit, seconds).
    """
    import pandas as pd


    if data is None:
        X = load_split("mnist", limit=samples)
        X_test = load_split("mnist", "test", limit=test_samples)
    else:
        X, X_test = (np.asarray(a, dtype=np.float64) for a in data)
        X, X_test = X[:samples], X_test[:test_samples]
    Xe, Xt = X[:eval_samples], X_test[:eval_samples]
    rows, summary = [], {"models": {}}
    for k, layers in enumerate(models):
        name = "-".join(str(n) for n in layers)
        what = f"DBM {name}"
        sdir = Path(state) / name if state else None
        # the values a continuation must share that the run's state does not compare
        own = {"layers": list(layers), "pretrain_epochs": pretrain_epochs,
               "pretrain_lr": pretrain_lr, "init_scale": init_scale,
               "eval_samples": eval_samples, "test_samples": int(X_test.shape[0])}
        st = _load_run_state(sdir, older=_OLD_STATE_FILES, what=what) if sdir else None
        dbm = DBM(layers, seed=seed + k, scale=init_scale)
        if st is None:
            dbm.biases[0][:] = _base_rate(X)
            pretrain(dbm, X, epochs=pretrain_epochs, learning_rate=pretrain_lr,
                     batch_size=batch_size, seed=seed + k,
                     callback=lambda l, e: _progress(progress and e == pretrain_epochs,
                                                     f"DBM {name}: layer {l} pretrained"))
        run = _joint_run(dbm, X, learning_rate=learning_rate, epochs=epochs,
                         batch_size=batch_size, eval_every=eval_every, seed=seed + k)
        if st is not None:
            _check_study(sdir, st, own, what=what)
            _restore_run(sdir, run, st, what=what)
            mrows = list(st["rows"])
            _progress(progress, f"DBM {name}: resumed at joint epoch {run.epoch}")
        else:
            mrows = []
        t0 = time.perf_counter()

        def evaluate():
            # solved as the single-layer evaluations are (the solver's declared tol and
            # max_iter), not to DeepLikelihoodOptions' tighter defaults
            kw = dict(init=Xe, tol=_O.tol, max_iter=_O.max_iter, per_unit=True)
            return dict(model=name, epoch=run.epoch,
                        train_ll_per_unit=log_likelihood(dbm, Xe, **kw),
                        test_ll_per_unit=log_likelihood(dbm, Xt, **kw),
                        seconds=time.perf_counter() - t0)

        for _ in run:            # after pretraining (epoch 0), then every eval_every epochs
            mrows.append(evaluate())
            if run.epoch:
                _progress(progress, f"DBM {name} epoch {run.epoch}: train "
                                    f"{mrows[-1]['train_ll_per_unit']:.4f}, test "
                                    f"{mrows[-1]['test_ll_per_unit']:.4f} per unit")
            if sdir:
                sdir.mkdir(parents=True, exist_ok=True)
                dbm.save(sdir / "dbm.npz", overwrite=True)
                _save_run_state(sdir, run, rows=mrows, study=own)
        rows += mrows
        first, last = mrows[0], mrows[-1]
        summary["models"][name] = {
            "after_pretraining": {"train": first["train_ll_per_unit"], "test": first["test_ll_per_unit"]},
            "final": {"train": last["train_ll_per_unit"], "test": last["test_ll_per_unit"]},
            "joint_epochs": run.epoch,
            "rises_in_joint_training": bool(last["train_ll_per_unit"] > first["train_ll_per_unit"]),
            "test_minus_train_final": last["test_ll_per_unit"] - last["train_ll_per_unit"],
        }
    curves = pd.DataFrame(rows)
    summary["claims"] = dbm_claims(curves)
    return {"curves": curves}, summary


#: Fig. 11 trains 3,000 joint epochs; a run with fewer joint epochs than 1 % of them shows only
#: the first steps after pretraining, not the figure's curves, and its verdicts are
#: "inconclusive" (the quick form makes 3)
DBM_MIN_EPOCHS = 30
#: a rise of the TAP log-likelihood per unit smaller than this counts as none: 1e-3 nat per
#: unit is about 2 nats per image at the full form's 784 + 500 + 1,000 units, too small to
#: call training progress
DBM_RISE = 1e-3


def dbm_claims(curves: "pandas.DataFrame") -> list[dict]:
    """Fig. 11's statements judged on the deep TAP machines' curves, two per model.

    The paper states no number for Fig. 11: it shows the train and test TAP log-likelihood
    per unit of a 2- and a 3-hidden-layer machine along 3,000 epochs of joint training after
    layer-wise pretraining (Alg. 4), as the training performance of the algorithm.  Judged per
    model: joint training raises the train TAP log-likelihood above its value after
    pretraining (epoch 0) by more than :data:`DBM_RISE` per unit, and raises the test one too.
    A run of fewer than :data:`DBM_MIN_EPOCHS` joint epochs is "inconclusive".

    Parameters
    ----------
    curves : pandas.DataFrame
        The study's ``curves`` table (``model``, ``epoch``, ``train_ll_per_unit``,
        ``test_ll_per_unit``), epoch 0 = after pretraining.

    Returns
    -------
    list of dict
        Claim rows (:func:`rbmviz.reproduce.report.make_claim`), for each model in order the
        train claim then the test claim.
    """
    out = []
    for name in dict.fromkeys(curves["model"]):
        c = curves[curves["model"] == name].sort_values("epoch")
        first, last = c.iloc[0], c.iloc[-1]
        epochs = int(last["epoch"] - first["epoch"])
        depth = len(str(name).split("-")) - 1
        for split, what in (("train", "the training images'"), ("test", "the test images'")):
            col = f"{split}_ll_per_unit"
            rise = float(last[col] - first[col])
            crit = (f"the {split} TAP log-likelihood per unit at the last evaluation exceeds its "
                    f"value after pretraining by more than {DBM_RISE:g} nat, over at least "
                    f"{DBM_MIN_EPOCHS} joint epochs (judged: the rise, nats per unit)")
            if epochs < DBM_MIN_EPOCHS:
                verdict = f"inconclusive ({epochs} joint epochs, fewer than {DBM_MIN_EPOCHS})"
            else:
                verdict = "agrees" if rise > DBM_RISE else "differs"
            out.append(make_claim(
                f"joint TAP training after pretraining raises {what} TAP log-likelihood "
                f"({depth}-hidden-layer machine {name})", verdict, criterion=crit,
                judged=rise if np.isfinite(rise) else None,
                paper=f"Fig. 11 (curves only): the {split} TAP log-likelihood per unit along "
                      f"3,000 joint epochs after 50 of pretraining",
                measured=f"{first[col]:.4f} after pretraining, {last[col]:.4f} at joint epoch "
                         f"{int(last['epoch'])}"))
    return out
