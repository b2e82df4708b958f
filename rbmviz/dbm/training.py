"""Training of a deep TAP machine (Tramel et al. 2018, Alg. 4) through the run loop every
training rule uses (:class:`rbmviz.runs.Run`): its knobs (:data:`DBMKnobs`), the joint phase
as an algorithm the loop drives on a :class:`~rbmviz.dbm.model.DBM` (:class:`JointTAP`), and
the two front doors — greedy layer-wise pretraining with TAP RBMs (:func:`pretrain`, a run of
the TAP rule per layer) and joint TAP training (:class:`DBMTrainer`, a run of
:class:`JointTAP` per epoch).

The runs keep the streams these front doors always had: one ``numpy`` generator seeded with
``seed`` gives the epochs' permutations (``Run(shuffle=)``; in :func:`pretrain` it also draws
the samples between layers), and every mini-batch has exactly ``M`` rows, the
``R mod M`` rows left over out of each epoch (``Run(remainder="drop")``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike
import param

from .. import bounds as _bounds
from .._numerics import sigmoid as _sigmoid
from .._validation import check_data, check_seed
from ..algorithms.base import Algorithm
from ..algorithms.knobs import check_knob, derive_knobs
from ..algorithms.tap import TAP
from ..errors import RunDiverged
from ..model import RBM
from ..runs import Run
from .inference import _check_dbm, gradient, tap_solve
from .model import DBM

__all__ = ["DBMKnobs", "JointTAP", "DBMTrainer", "pretrain", "layer_runs", "copy_layer"]

#: the knobs of the joint phase (copies of the TAP rule's) and App. E's / Table 1's defaults
_JOINT_KNOBS = ["learning_rate", "momentum", "weight_decay", "n_solutions", "damping", "tol",
                "max_iter", "seed"]
_JOINT_DEFAULTS = {"learning_rate": 0.001, "momentum": 0.5, "weight_decay": 0.001}


class _DBMRunKnobs(param.Parameterized):
    batch_size = param.Integer(
        100, bounds=(1, None), softbounds=(10, 500), label="Batch M",
        doc="Rows per update M (Table 1: 100).")
    epochs = param.Integer(
        50, bounds=(0, _bounds.EPOCHS_MAX), softbounds=(0, 100), label="Pretraining epochs",
        doc="Epochs of each layer's greedy TAP-RBM pretraining (Alg. 4: 50).")


class JointTAP(Algorithm):
    """Joint TAP training of a :class:`~rbmviz.dbm.model.DBM` (Tramel et al. 2018, Alg. 4,
    joint phase), the algorithm :class:`rbmviz.runs.Run` drives on a DBM.

    Per mini-batch of ``M`` rows: the free TAP solutions from the first ``K`` rows and the
    clamped solutions of all rows (:func:`~rbmviz.dbm.inference.tap_solve`), the gradient of
    eqs. 126–129 averaged over the converged free runs (all of them when none converged),
    then ``v ← η v + γ(ΔW − εW)``, ``W ← W + v`` (heavy-ball momentum on the weights, ℓ2
    strength ε) and ``θ ← θ + γΔθ``.  The momentum state (:attr:`velocity`) is made at the
    first update.  Not a registered RBM rule (:func:`rbmviz.algorithms.names`): it trains a
    DBM (:attr:`model_type`).

    Parameters
    ----------
    learning_rate, momentum, weight_decay : float
        γ, η and ε (:data:`DBMKnobs`: the TAP rule's bounds, App. E's defaults).
    n_solutions : int or None
        K (default: the batch size).
    damping, tol, max_iter
        TAP iteration settings (:func:`~rbmviz.dbm.inference.tap_solve`).
    seed : int
        Kept for the interface (the joint phase is deterministic given the batches; the
        shuffles are the run's).

    Raises
    ------
    TypeError, ValueError
        Naming the knob, for a value of the wrong type or out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from rbmviz.dbm import DBM, JointTAP
    >>> from rbmviz.runs import Run
    >>> X = (np.random.default_rng(0).random((40, 6)) < 0.5).astype(float)
    >>> run = Run(DBM([6, 4, 3], seed=0), X, JointTAP(learning_rate=0.05), epochs=2,
    ...           batch_size=20, eval_every=1)
    >>> [rec["updates"] for rec in run]
    [0, 2, 4]
    """

    name = "dbm-tap"
    label = "Deep TAP (joint)"
    reference = "Tramel et al. (2018) Alg. 4, eqs. 126-129"
    #: the model kind the run loop accepts with this algorithm
    model_type = DBM
    #: a diverging update stops the epoch (the next update would refuse the model)
    check_every_update = True
    Knobs = derive_knobs("JointTAPKnobs", [TAP], include=_JOINT_KNOBS, defaults=_JOINT_DEFAULTS,
                         doc="The knobs of :class:`JointTAP` (the TAP rule's declarations with "
                             "App. E's defaults).")
    LIVE_KNOBS = ("learning_rate", "momentum", "weight_decay", "n_solutions", "damping", "tol",
                  "max_iter")

    def __init__(self, **knobs: Any) -> None:
        super().__init__(**knobs)
        #: heavy-ball momentum of each weight matrix (None before the first update)
        self.velocity: list[np.ndarray] | None = None
        #: TAP runs (free and clamped) that hit ``max_iter``, cumulative
        self.not_converged = 0

    def _check_velocity(self, dbm: DBM) -> None:
        """The momentum state belongs to a model of ``dbm``'s layer sizes."""
        if self.velocity is not None and [np.shape(v) for v in self.velocity] != \
                [np.shape(w) for w in dbm.W]:
            raise ValueError(f"this DBMTrainer's momentum state has shapes "
                             f"{[np.shape(v) for v in self.velocity]} but dbm has layers "
                             f"{list(dbm.layers)}; use a new DBMTrainer for another model")

    def _check_model(self, dbm: DBM, batch_size: int) -> None:
        _check_dbm(dbm)
        self._check_velocity(dbm)
        if self.n_solutions is not None and self.n_solutions > batch_size:
            raise ValueError(f"n_solutions (K={self.n_solutions}) must be at most the batch size "
                             f"(batch_size={batch_size}): the free runs start from rows of "
                             f"the mini-batch")

    def setup(self, dbm: DBM, data: np.ndarray, batch_size: int) -> None:
        """Check ``dbm`` (and a momentum state given before) for training with mini-batches of
        ``batch_size`` rows; the momentum state is made at the first update.

        Parameters
        ----------
        dbm : DBM
            The model trained (in place).
        data : numpy.ndarray, shape (R, N_0)
            Training rows.
        batch_size : int
            Rows per update.

        Raises
        ------
        TypeError
            If ``dbm`` is not a :class:`~rbmviz.dbm.model.DBM`.
        ValueError
            If its parameters are not finite, the momentum state is of other layer sizes, or
            ``n_solutions`` is above ``batch_size``.
        """
        self._check_model(dbm, batch_size)
        self.batch_size = batch_size
        self._ready = True

    def resume(self, dbm: DBM, data: np.ndarray, batch_size: int) -> None:
        """Continue with the momentum state held (as :meth:`setup` checks).

        Parameters
        ----------
        dbm, data, batch_size
            As in :meth:`setup`.

        Raises
        ------
        ValueError
            Before :meth:`setup`, or as :meth:`setup`.
        """
        if not self._ready:
            raise ValueError(f"{type(self).__name__}.resume() before setup()")
        self.setup(dbm, data, batch_size)

    def record_fields(self) -> dict:
        """Values reported in every run record.

        Returns
        -------
        dict
            ``tap_not_converged``: TAP runs (free and clamped) that hit ``max_iter`` so far.
        """
        return {"tap_not_converged": self.not_converged}

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
            If ``dbm`` is not a :class:`~rbmviz.dbm.model.DBM`.
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


#: the training knobs of a deep TAP machine (Alg. 4), read by :class:`DBMTrainer` and
#: :func:`pretrain`: :class:`JointTAP`'s (the TAP rule's declarations — bounds, help — with
#: App. E's default γ = 0.001 and Table 1's η = 0.5, ε = 0.001), plus the batch size and the
#: pretraining epochs
DBMKnobs = derive_knobs(
    "DBMKnobs", [JointTAP], include=_JOINT_KNOBS, bases=(_DBMRunKnobs,),
    doc="The training knobs of a deep TAP machine (Tramel et al. 2018, Alg. 4): the TAP "
        "rule's declarations with App. E's defaults.")
DBMKnobs.__doc__ = DBMKnobs.__doc__ + "\n\n" + _bounds.parameters_doc(DBMKnobs)


def _knob(name: str, value, knobs=DBMKnobs):
    """``value`` checked as the deep TAP machine's knob ``name`` (the TAP rule's bounds, the
    same message as every training rule: e.g. ``momentum`` in [0, 1), ``max_iter`` in
    [1, 100000])."""
    return check_knob(knobs.param[name], value, name)


def _run(model, data, algorithm, *, epochs, batch_size, seed, rng, **options) -> Run:
    """The run of one training phase: records after every epoch (no metrics: the front doors
    evaluate nothing), the model trained in place, the epochs' permutations from ``rng`` and
    batches of exactly ``batch_size`` rows (the streams the front doors always had);
    ``options``: further options of :class:`rbmviz.runs.Run` (e.g. ``chunk_seconds``)."""
    kw = dict(metrics=[], eval_every=1, record_initial=False, dtype=None, shuffle=rng,
              remainder="drop")
    kw.update(options)
    return Run(model, data, algorithm, epochs=epochs, batch_size=batch_size, seed=seed, **kw)


class _Forward:
    """An attribute of :class:`DBMTrainer` that is its algorithm's, read and set (a knob, the
    momentum state, a counter): the trainer is a front door, the algorithm holds them."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj.algorithm, self.name)

    def __set__(self, obj, value):
        setattr(obj.algorithm, self.name, value)


class DBMTrainer:
    """Joint TAP training of a DBM (Alg. 4, joint phase): per mini-batch of ``M`` rows, the
    free solutions from the first ``K`` rows and the clamped solutions of all rows, then
    ``W ← W + v``, ``v ← η v + γ(ΔW − εW)`` (heavy-ball momentum, ℓ2 strength ε) and
    ``θ ← θ + γΔθ``.  Every default and bound is :data:`DBMKnobs`'.

    A front door over the run loop: the rule is :class:`JointTAP` (:attr:`algorithm`, which
    holds the knobs, the momentum state and the counters), and :meth:`epoch` is one epoch of
    a :class:`rbmviz.runs.Run` of it, its batches drawn from :attr:`rng`.

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

    Attributes
    ----------
    algorithm : JointTAP
        The rule, its knobs and state.
    learning_rate, momentum, weight_decay, n_solutions, damping, tol, max_iter
        The algorithm's knobs (read and set through the trainer; a value set applies from
        the next update).
    velocity : list of numpy.ndarray or None
        The algorithm's heavy-ball momentum state (None before the first update).
    updates, not_converged : int
        The algorithm's counters: updates done, TAP runs that hit ``max_iter``.
    rng : numpy.random.Generator
        The epochs' shuffles (``default_rng(seed)``; one permutation of the rows per epoch).
    epochs : int
        Epochs done by :meth:`epoch`.

    Raises
    ------
    TypeError, ValueError
        Naming the setting, for a value of the wrong type or out of range, or
        ``n_solutions`` above ``batch_size``.
    """

    # the algorithm's knobs, momentum state and counters, read and set through the trainer
    learning_rate = _Forward()
    momentum = _Forward()
    weight_decay = _Forward()
    n_solutions = _Forward()
    damping = _Forward()
    tol = _Forward()
    max_iter = _Forward()
    velocity = _Forward()
    updates = _Forward()
    not_converged = _Forward()

    def __init__(self, *, learning_rate: float = DBMKnobs.learning_rate,
                 momentum: float = DBMKnobs.momentum, weight_decay: float = DBMKnobs.weight_decay,
                 batch_size: int = DBMKnobs.batch_size,
                 n_solutions: int | None = DBMKnobs.n_solutions, damping: float = DBMKnobs.damping,
                 tol: float = DBMKnobs.tol, max_iter: int = DBMKnobs.max_iter,
                 seed: int = DBMKnobs.seed) -> None:
        batch_size = _knob("batch_size", batch_size)
        self.algorithm = JointTAP(learning_rate=learning_rate, momentum=momentum,
                                  weight_decay=weight_decay, n_solutions=n_solutions,
                                  damping=damping, tol=tol, max_iter=max_iter, seed=seed)
        self.batch_size = batch_size
        if self.n_solutions is not None and self.n_solutions > self.batch_size:
            raise ValueError(f"n_solutions (K={self.n_solutions}) must be at most the batch size "
                             f"(batch_size={self.batch_size}): the free runs start from rows of "
                             f"the mini-batch")
        self.rng = np.random.default_rng(self.algorithm.seed)
        self.epochs = 0

    def update(self, dbm: DBM, batch: ArrayLike) -> None:
        """One joint TAP update of ``dbm`` (in place) from the rows of ``batch``
        (:meth:`JointTAP.update`).

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
        self.algorithm.update(dbm, batch)

    def run(self, dbm: DBM, X: ArrayLike, *, epochs: int | None = None, **options: Any) -> Run:
        """A :class:`rbmviz.runs.Run` of :attr:`algorithm` on ``dbm``: the loop :meth:`epoch`
        drives, for a caller that drives it itself (the explorer's deep TAP engine,
        :mod:`rbmviz.live.tap_dbm`) — the epochs' permutations from :attr:`rng`, ``R // M``
        batches of ``M`` rows, a record after every epoch, no metrics, the model trained in
        place.  :attr:`epochs` counts the epochs of :meth:`epoch` only.

        Parameters
        ----------
        dbm : DBM
            The model trained (in place).
        X : array_like, shape (R, N_0)
            Binary data rows.
        epochs : int, optional
            Epochs of the run; None (default) until it is stopped.
        **options : Any
            Further options of :class:`rbmviz.runs.Run` (``chunk_seconds``, ``max_seconds``,
            ``max_weight`` ...).

        Returns
        -------
        rbmviz.runs.Run
            The run, not started.

        Raises
        ------
        TypeError, ValueError
            As :class:`rbmviz.runs.Run` (``dbm`` not a :class:`DBM`, ``X`` not binary with
            ``N_0`` columns or fewer rows than ``batch_size``, a momentum state of other layer
            sizes).
        """
        return _run(dbm, X, self.algorithm, epochs=epochs, batch_size=self.batch_size,
                    seed=self.algorithm.seed, rng=self.rng, **options)

    def epoch(self, dbm: DBM, X: ArrayLike) -> None:
        """One pass over the rows of ``X`` in shuffled mini-batches: one epoch of a
        :class:`rbmviz.runs.Run` of :attr:`algorithm` (a permutation from :attr:`rng`,
        ``R // M`` batches of ``M`` rows, the parameters checked after every update).

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
            If a parameter becomes non-finite or reaches the run's ``max_weight``
            (:class:`rbmviz.runs.Run`); ``epoch`` counts this trainer's epochs.
        """
        _check_dbm(dbm)
        self.algorithm._check_velocity(dbm)
        X = check_data(X, "X", n_visible=dbm.layers[0])
        if self.batch_size > X.shape[0]:
            raise ValueError(f"batch_size={self.batch_size} is larger than the data "
                             f"({X.shape[0]} rows of X)")
        run = self.run(dbm, X, epochs=1)
        try:
            next(run)
        except RunDiverged as err:
            raise RunDiverged(f"joint DBM training diverged in epoch {self.epochs + 1}: {err}",
                              epoch=self.epochs + 1, last_good_epoch=self.epochs,
                              quantity=err.quantity, value=err.value) from err
        self.epochs += 1


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

    Each layer is a :class:`rbmviz.runs.Run` of the TAP rule (its divergence checks
    included); one generator seeded with ``seed`` gives every layer's epoch permutations and
    the samples between layers, and every mini-batch has exactly ``batch_size`` rows.

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
    rbmviz.errors.RunDiverged
        If a layer's training diverges (:class:`rbmviz.runs.Run`'s checks).
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

    def tap():
        return TAP(learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay,
                   damping=damping, tol=tol, max_iter=max_iter, momentum_form="heavy_ball")

    for l, run in enumerate(layer_runs(dbm, X, epochs=epochs, batch_size=batch_size, seed=seed,
                                       rng=rng, algorithm=tap)):
        for rec in run:                          # one record per epoch
            if callback is not None:
                callback(l + 1, int(rec["epoch"]))
    return dbm


def copy_layer(dbm: DBM, layer: int, rbm: RBM) -> None:
    """Put the parameters of the TAP RBM of hidden layer ``layer + 1`` into ``dbm`` (as
    float64 copies): ``W⁽ˡ⁺¹⁾`` and the hidden biases ``θ⁽ˡ⁺¹⁾``, for the first layer also
    the visible biases ``θ⁽⁰⁾``.

    Parameters
    ----------
    dbm : DBM
        The model (changed in place).
    layer : int
        The layer's coupling matrix ``dbm.W[layer]`` (0-based).
    rbm : RBM
        The layer's RBM, of shape ``(N_layer, N_layer+1)``.
    """
    dbm.W[layer] = np.array(rbm.W, dtype=np.float64)
    dbm.biases[layer + 1] = np.array(rbm.c, dtype=np.float64)
    if layer == 0:
        dbm.biases[0] = np.array(rbm.b, dtype=np.float64)


def layer_runs(dbm: DBM, X: ArrayLike, *, epochs: int, batch_size: int, seed: int,
               rng: np.random.Generator, algorithm: Callable[[], Algorithm],
               **options: Any) -> Iterator[Run]:
    """Greedy layer-wise pretraining (Alg. 4, first phase) as one :class:`rbmviz.runs.Run`
    per hidden layer — the loop of :func:`pretrain` and of the explorer's deep TAP engine
    (:mod:`rbmviz.live.tap_dbm`), which drive the runs themselves.

    For each hidden layer in turn it yields the run (not started) of a TAP RBM made from the
    layer's current parameters (``run.rbm``), trained on ``X`` for the first layer and on the
    samples of the layer below otherwise; the caller iterates it to its end (``run.done``).
    Asked for the next item, it copies the layer's parameters into ``dbm``
    (:func:`copy_layer`) and draws the next layer's data from ``rng``:
    ``H⁽ˡ⁾ ~ P(h⁽ˡ⁾ | H⁽ˡ⁻¹⁾)`` given the layer below.  No check beyond the runs' own:
    :func:`pretrain` checks its arguments first.

    Parameters
    ----------
    dbm : DBM
        The model (changed in place as the layers finish).
    X : array_like, shape (R, N_0)
        Binary data rows, the first layer's training set.
    epochs : int
        Epochs per layer (each run's ``epochs``).
    batch_size : int
        Rows per update; every batch has exactly this many rows (``remainder="drop"``).
    seed : int
        The runs' seed (their ``spl`` subset and guard rows; the shuffles are ``rng``'s).
    rng : numpy.random.Generator
        Every layer's epoch permutations and the samples between layers, in this order.
    algorithm : callable
        ``algorithm()`` makes the rule of a layer (e.g. a :class:`rbmviz.algorithms.tap.TAP`
        with heavy-ball momentum), called when the layer's run is made.
    **options : Any
        Further options of :class:`rbmviz.runs.Run` (``chunk_seconds``, ``max_weight`` ...).

    Yields
    ------
    rbmviz.runs.Run
        The run of each hidden layer's TAP RBM, bottom up; records after every epoch, no
        metrics.
    """
    data = np.asarray(X, dtype=np.float64)
    for l in range(dbm.n_hidden_layers):
        rbm = RBM(dbm.layers[l], dbm.layers[l + 1])
        rbm.set_params(W=dbm.W[l], b=dbm.biases[l], c=dbm.biases[l + 1])
        yield _run(rbm, data, algorithm(), epochs=epochs, batch_size=batch_size, seed=seed,
                   rng=rng, **options)
        copy_layer(dbm, l, rbm)
        p = _sigmoid(dbm.biases[l + 1] + data @ dbm.W[l])
        data = (rng.random(p.shape) < p).astype(np.float64)
