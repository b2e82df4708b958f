"""Deep TAP machines (Tramel et al. 2018, App. E, Fig. 11) — ``rbmviz reproduce tap --study
dbm [--quick]`` (the TAP-beyond theory page of the documentation).

:func:`study_dbm`: 2- and 3-hidden-layer binary DBMs (:mod:`rbmviz.dbm`), layer-wise TAP
pretraining then joint TAP training; the TAP log-likelihood per unit of train and test images
after pretraining (epoch 0) and along joint training.  Resumable (``state``).

``FULL`` holds the paper's settings where it gives them (layer sizes of Fig. 11 are not given
— Salakhutdinov & Hinton's 500–1000 and 500–500–1000 are used), ``QUICK`` a form that runs in
about three minutes on a laptop; :func:`rbmviz.reproduce.tap_beyond.run` runs either.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import _files
from ..dbm import DBM, DBMTrainer, log_likelihood, pretrain
from ..tap.options import TAPSolverOptions as _O
from . import _io
from ._beyond import base_rate as _base_rate
from ._beyond import documented as _documented
from ._beyond import load_state as _load_state
from ._beyond import mnist as _mnist
from ._beyond import progress as _progress
from ._beyond import rng_from as _rng_from

__all__ = ["FULL", "QUICK", "NOTES", "study_dbm"]

#: the paper's settings (where it gives them)
FULL = dict(models=((784, 500, 1000), (784, 500, 500, 1000)), samples=60_000,
            test_samples=10_000, pretrain_epochs=50, pretrain_lr=0.001, epochs=3000,
            learning_rate=0.001, batch_size=100, eval_every=10, eval_samples=1000)
#: the ~3-minute form (smaller models, fewer images and epochs, larger steps)
QUICK = dict(models=((784, 50, 25), (784, 50, 25, 25)), samples=1000, test_samples=200,
             pretrain_epochs=3, pretrain_lr=0.05, epochs=3, learning_rate=0.02,
             batch_size=20, eval_every=1, eval_samples=200, init_scale=0.01)
#: how the study measures, printed with its summary
NOTES = ["Layer sizes are not given in the paper (UNCONFIRMED): 784-500-1000 and "
         "784-500-500-1000 (Salakhutdinov & Hinton 2009) in the full form.",
         "Pretraining: TAP RBMs (Alg. 2, heavy-ball momentum 0.5, l2 0.001) layer by layer on "
         "binary samples of the layer below given the data; joint training: eqs. 126-129, "
         "K = M free solutions from the batch rows, heavy-ball momentum 0.5, l2 0.001.",
         "TAP log-likelihood: clamped TAP2 value of each image minus the mean TAP2 log Z of the "
         "converged free solutions started from the evaluation rows, per unit = / sum_l N_l."]


@_documented(models=("sequence of sequence of int", "Layer sizes of the DBMs."),
             pretrain_epochs=("int", "Epochs of layer-wise pretraining."),
             pretrain_lr=("float", "Learning rate of the pretraining."),
             data=("tuple of numpy.ndarray", "Training and test rows to use instead of loading "
                                             "the data set (tests)."))
def study_dbm(*, models: Sequence[Sequence[int]], samples: int, test_samples: int,
              pretrain_epochs: int, pretrain_lr: float, epochs: int, learning_rate: float,
              batch_size: int, eval_every: int, eval_samples: int, init_scale: float = 0.001,
              seed: int = 0, state: str | os.PathLike | None = None, data: np.ndarray | None = None,
              progress: bool = False) -> tuple[dict, dict]:
    """Fig. 11 (module docstring).  ``state``: directory keeping each model, its trainer and
    its curve after every evaluation; running again continues from there.  Returns
    ``(tables, summary)`` with table ``curves`` (model, epoch, train_ll_per_unit,
    test_ll_per_unit, seconds).
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
            # solved as the single-layer evaluations are (the solver's declared tol and
            # max_iter), not to DeepLikelihoodOptions' tighter defaults
            kw = dict(init=Xe, tol=_O.tol, max_iter=_O.max_iter, per_unit=True)
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
