"""Training of a deep TAP machine (Tramel et al. 2018, Alg. 4): its knobs (:data:`DBMKnobs`),
greedy layer-wise pretraining with TAP RBMs (:func:`pretrain`) and joint TAP training
(:class:`DBMTrainer`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike
import param

from .. import bounds as _bounds
from .._numerics import sigmoid as _sigmoid
from .._validation import check_data, check_seed
from ..algorithms.knobs import check_knob, derive_knobs
from ..algorithms.tap import TAP
from ..errors import RunDiverged
from ..model import RBM
from .inference import _check_dbm, gradient, tap_solve
from .model import DBM

__all__ = ["DBMKnobs", "DBMTrainer", "pretrain"]


class _DBMRunKnobs(param.Parameterized):
    batch_size = param.Integer(
        100, bounds=(1, None), softbounds=(10, 500), label="Batch M",
        doc="Rows per update M (Table 1: 100).")
    epochs = param.Integer(
        50, bounds=(0, _bounds.EPOCHS_MAX), softbounds=(0, 100), label="Pretraining epochs",
        doc="Epochs of each layer's greedy TAP-RBM pretraining (Alg. 4: 50).")


#: the training knobs of a deep TAP machine (Alg. 4), read by :class:`DBMTrainer` and
#: :func:`pretrain`: the TAP rule's declarations (bounds, help) with App. E's defaults γ =
#: 0.001 and Table 1's η = 0.5, ε = 0.001, plus the batch size and the pretraining epochs
DBMKnobs = derive_knobs(
    "DBMKnobs", [TAP],
    include=["learning_rate", "momentum", "weight_decay", "n_solutions", "damping", "tol",
             "max_iter", "seed"],
    defaults={"learning_rate": 0.001, "momentum": 0.5, "weight_decay": 0.001},
    bases=(_DBMRunKnobs,),
    doc="The training knobs of a deep TAP machine (Tramel et al. 2018, Alg. 4): the TAP "
        "rule's declarations with App. E's defaults.")
DBMKnobs.__doc__ = DBMKnobs.__doc__ + "\n\n" + _bounds.parameters_doc(DBMKnobs)


def _knob(name: str, value, knobs=DBMKnobs):
    """``value`` checked as the deep TAP machine's knob ``name`` (the TAP rule's bounds, the
    same message as every training rule: e.g. ``momentum`` in [0, 1), ``max_iter`` in
    [1, 100000])."""
    return check_knob(knobs.param[name], value, name)



class DBMTrainer:
    """Joint TAP training of a DBM (Alg. 4, joint phase): per mini-batch of ``M`` rows, the
    free solutions from the first ``K`` rows and the clamped solutions of all rows, then
    ``W ← W + v``, ``v ← η v + γ(ΔW − εW)`` (heavy-ball momentum, ℓ2 strength ε) and
    ``θ ← θ + γΔθ``.  Every default and bound is :data:`DBMKnobs`'.

    Parameters
    ----------
    learning_rate, momentum, weight_decay : float
        γ, η and ε; checked as every training rule checks them (:data:`DBMKnobs`, the
        declarations of :class:`rbmviz.algorithms.tap.TAP`'s knobs: γ > 0, η in [0, 1),
        ε ≥ 0).
    batch_size : int
        Rows per update ``M``.
    n_solutions : int or None
        K (default: the batch size).
    damping, tol, max_iter
        TAP iteration settings (:func:`tap_solve`; the TAP rule's knobs, whose defaults are
        :class:`rbmviz.tap.options.TAPSolverOptions`' and whose ``max_iter`` is at most
        :data:`rbmviz.bounds.TAP_ITER_MAX`).
    seed : int
        Shuffles of the training rows.

    Raises
    ------
    TypeError, ValueError
        Naming the setting, for a value of the wrong type or out of range, or
        ``n_solutions`` above ``batch_size``.
    """

    def __init__(self, *, learning_rate: float = DBMKnobs.learning_rate,
                 momentum: float = DBMKnobs.momentum, weight_decay: float = DBMKnobs.weight_decay,
                 batch_size: int = DBMKnobs.batch_size,
                 n_solutions: int | None = DBMKnobs.n_solutions, damping: float = DBMKnobs.damping,
                 tol: float = DBMKnobs.tol, max_iter: int = DBMKnobs.max_iter,
                 seed: int = DBMKnobs.seed) -> None:
        self.learning_rate = _knob("learning_rate", learning_rate)
        self.momentum = _knob("momentum", momentum)
        self.weight_decay = _knob("weight_decay", weight_decay)
        self.batch_size = _knob("batch_size", batch_size)
        self.n_solutions = _knob("n_solutions", n_solutions)
        if self.n_solutions is not None and self.n_solutions > self.batch_size:
            raise ValueError(f"n_solutions (K={self.n_solutions}) must be at most the batch size "
                             f"(batch_size={self.batch_size}): the free runs start from rows of "
                             f"the mini-batch")
        self.damping = _knob("damping", damping)
        self.tol = _knob("tol", tol)
        self.max_iter = _knob("max_iter", max_iter)
        self.rng = np.random.default_rng(_knob("seed", seed))
        self.velocity = None
        self.epochs = 0
        self.updates = 0
        self.not_converged = 0

    def _check_velocity(self, dbm):
        """The momentum state belongs to a model of ``dbm``'s layer sizes."""
        if self.velocity is not None and [np.shape(v) for v in self.velocity] != \
                [np.shape(w) for w in dbm.W]:
            raise ValueError(f"this DBMTrainer's momentum state has shapes "
                             f"{[np.shape(v) for v in self.velocity]} but dbm has layers "
                             f"{list(dbm.layers)}; use a new DBMTrainer for another model")

    def update(self, dbm: DBM, batch: ArrayLike) -> None:
        """One joint TAP update of ``dbm`` (in place) from the rows of ``batch``.

        Parameters
        ----------
        dbm : DBM
            The model trained.
        batch : array_like, shape (M, N_0)
            The mini-batch, 0/1.

        Raises
        ------
        TypeError
            If ``dbm`` is not a :class:`DBM`.
        ValueError
            If its parameters are not finite, ``batch`` is not binary with ``N_0`` columns or
            has fewer rows than ``n_solutions``.
        """
        _check_dbm(dbm)
        self._check_velocity(dbm)
        batch = check_data(batch, "batch", n_visible=dbm.layers[0])
        K = self.n_solutions or batch.shape[0]
        if K > batch.shape[0]:
            raise ValueError(f"n_solutions (K={K}) is larger than the batch ({batch.shape[0]} rows)")
        kw = dict(damping=self.damping, tol=self.tol, max_iter=self.max_iter)
        free = tap_solve(dbm, batch[:K], **kw)
        cl = tap_solve(dbm, batch, clamped=True, **kw)
        self.not_converged += int((~free.converged).sum() + (~cl.converged).sum())
        rows = np.flatnonzero(free.converged) if free.converged.any() else None
        g = gradient(dbm, batch, free, cl, rows)
        if self.velocity is None:
            self.velocity = [np.zeros_like(w) for w in dbm.W]
        lr = self.learning_rate
        for w, v, gw in zip(dbm.W, self.velocity, g["W"]):
            v *= self.momentum
            v += lr * (gw - self.weight_decay * w)
            w += v
        for t, gt in zip(dbm.biases, g["biases"]):
            t += lr * gt
        self.updates += 1

    def epoch(self, dbm: DBM, X: ArrayLike) -> None:
        """One pass over the rows of ``X`` in shuffled mini-batches.

        Parameters
        ----------
        dbm : DBM
            The model trained (in place).
        X : array_like, shape (R, N_0)
            Binary data rows.

        Raises
        ------
        TypeError
            If ``dbm`` is not a :class:`DBM`.
        ValueError
            If its parameters are not finite, ``X`` is not binary with ``N_0`` columns or has
            fewer rows than ``batch_size``.
        rbmviz.errors.RunDiverged
            If the weights become non-finite.
        """
        _check_dbm(dbm)
        self._check_velocity(dbm)
        X = check_data(X, "X", n_visible=dbm.layers[0])
        if self.batch_size > X.shape[0]:
            raise ValueError(f"batch_size={self.batch_size} is larger than the data "
                             f"({X.shape[0]} rows of X)")
        perm = self.rng.permutation(X.shape[0])
        M = self.batch_size
        for lo in range(0, X.shape[0] - M + 1, M):
            self.update(dbm, X[perm[lo:lo + M]])
        self.epochs += 1
        if not all(np.isfinite(w).all() for w in dbm.W):
            raise RunDiverged("DBM weights became non-finite", epoch=self.epochs,
                              last_good_epoch=self.epochs - 1, quantity="W", value=float("nan"))


def pretrain(dbm: DBM, X: ArrayLike, *, epochs: int = DBMKnobs.epochs,
             learning_rate: float = DBMKnobs.learning_rate, batch_size: int = DBMKnobs.batch_size,
             momentum: float = DBMKnobs.momentum, weight_decay: float = DBMKnobs.weight_decay,
             damping: float = DBMKnobs.damping, tol: float = DBMKnobs.tol,
             max_iter: int = DBMKnobs.max_iter, seed: int = DBMKnobs.seed, callback: Callable[[int, int], Any] | None = None) -> DBM:
    """Greedy layer-wise pretraining (Tramel et al. 2018, Alg. 4, first phase), in place.

    Layer 1 is a TAP RBM (Alg. 2, :class:`rbmviz.algorithms.tap.TAP`, heavy-ball momentum)
    trained on ``X``; layer ``l ≥ 2`` a TAP RBM trained on binary samples of layer ``l − 1``
    drawn bottom-up given the data (``H⁽ˡ⁻¹⁾ ~ P(h⁽ˡ⁻¹⁾ | H⁽ˡ⁻²⁾)``).  Each RBM gives ``W⁽ˡ⁾``
    and the hidden biases ``θ⁽ˡ⁾`` (layer 1 also the visible biases).  Every default and bound
    is :data:`DBMKnobs`' (those of :class:`DBMTrainer`).

    Parameters
    ----------
    dbm : DBM
        The model (changed in place).
    X : array_like, shape (R, N_0)
        Binary data rows, the first layer's training set.
    epochs : int
        Epochs per layer.
    learning_rate, batch_size, momentum, weight_decay
        Settings of the TAP RBMs.
    damping, tol, max_iter
        TAP iteration settings (as :class:`DBMTrainer`'s).
    seed : int
        Seed of the shuffles and samples.
    callback : callable, optional
        ``callback(layer, epoch)`` is called after every epoch.

    Returns
    -------
    DBM
        ``dbm``.

    Raises
    ------
    TypeError, ValueError
        Naming the argument, before any work: ``dbm`` not a :class:`DBM` with finite
        parameters, ``X`` not binary with ``N_0`` columns or fewer rows than ``batch_size``,
        a setting of the TAP RBMs out of
        the TAP rule's bounds (e.g. ``momentum`` in [0, 1)), ``epochs`` beyond
        :data:`rbmviz.bounds.EPOCHS_MAX`, ``callback`` not callable.
    """
    _check_dbm(dbm)
    X = check_data(X, "X", n_visible=dbm.layers[0])
    epochs = _knob("epochs", epochs)
    batch_size = _knob("batch_size", batch_size)
    if batch_size > X.shape[0]:
        raise ValueError(f"batch_size={batch_size} is larger than the data ({X.shape[0]} rows of X)")
    learning_rate = _knob("learning_rate", learning_rate)
    momentum = _knob("momentum", momentum)
    weight_decay = _knob("weight_decay", weight_decay)
    damping = _knob("damping", damping)
    tol = _knob("tol", tol)
    max_iter = _knob("max_iter", max_iter)
    seed = _knob("seed", seed)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable (layer, epoch) or None, got {type(callback).__name__}")
    rng = np.random.default_rng(check_seed(seed))
    data = X
    for l in range(dbm.n_hidden_layers):
        rbm = RBM(dbm.layers[l], dbm.layers[l + 1])
        rbm.set_params(W=dbm.W[l], b=dbm.biases[l], c=dbm.biases[l + 1])
        M = batch_size
        alg = TAP(learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay,
                  damping=damping, tol=tol, max_iter=max_iter, momentum_form="heavy_ball")
        alg.setup(rbm, data, M)
        for e in range(epochs):
            perm = rng.permutation(data.shape[0])
            for lo in range(0, data.shape[0] - M + 1, M):
                alg.update(rbm, data[perm[lo:lo + M]])
            if callback is not None:
                callback(l + 1, e + 1)
        dbm.W[l] = np.array(rbm.W, dtype=np.float64)
        dbm.biases[l + 1] = np.array(rbm.c, dtype=np.float64)
        if l == 0:
            dbm.biases[0] = np.array(rbm.b, dtype=np.float64)
        p = _sigmoid(dbm.biases[l + 1] + data @ dbm.W[l])
        data = (rng.random(p.shape) < p).astype(np.float64)
    return dbm
