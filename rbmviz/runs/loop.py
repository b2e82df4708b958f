"""The training loop: :class:`Run`, an iterator of metric records, and :func:`train`, the
same loop collected into a DataFrame (the options are described in :mod:`rbmviz.runs`).  The
record schedule is :mod:`rbmviz.runs.schedule`, the divergence checks :mod:`rbmviz.runs.guard`,
a run's saved state :mod:`rbmviz.runs.state`.
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .. import algorithms as _algorithms
from .. import evaluate as _evaluate
from .._seeds import stream_seed
from ..bounds import EPOCHS_MAX, EXACT_BITS_DEFAULT, EXACT_BITS_MAX, MAX_WEIGHT_DEFAULT
from .._validation import check_choice, check_data, check_float, check_int, check_seed
from ..algorithms.base import params_healthy
from ..errors import Interrupted, RunDiverged
from ..evaluate.ais import AIS_BETAS_DEFAULT, AIS_CHAINS_DEFAULT
from ..evaluate.metrics import AIS_OPTIONS, METRICS, MetricContext, choose_metrics
from ..model import RBM
from ..presets import LARGE_MODEL, default_dtype
from . import state as _state
from . import models as _models
from .guard import DivergenceGuard
from .schedule import EvaluationSchedule, batch_bounds

if TYPE_CHECKING:
    import pandas

    from ..algorithms.base import Algorithm

__all__ = ["Run", "train", "RECORD_KEYS"]

RECORD_KEYS = ("algorithm", "epoch", "updates", "gibbs_steps", "wall_time")
#: rules whose float32 working copy ``dtype="auto"`` may choose (Gibbs-sampling rules)
_FLOAT32_RULES = ("cd", "pcd", "cg", "sdcp", "csdcp", "ssd")


def _cast_copy(rbm: RBM, dtype) -> RBM:
    """``rbm.astype(dtype)`` (a copy with its own priors and parameters of ``dtype``) that
    casts the parameters once instead of copying them first."""
    new = object.__new__(RBM)
    new.__dict__.update(rbm.__dict__)
    new.W, new.b, new.c = (np.array(a, dtype=dtype, order="C") for a in rbm.params)
    new.visible_prior, new.hidden_prior = rbm.visible_prior.copy(), rbm.hidden_prior.copy()
    return new


def _auto_or_int(value, name, low):
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"{name} must be 'auto' or an integer ≥ {low}, got {value!r}")
        return value
    return check_int(value, name, low=low)


class Run(EvaluationSchedule, DivergenceGuard):
    """Train ``rbm`` in place on ``data`` with one algorithm, yielding records.

    Parameters
    ----------
    rbm : RBM
        Trained in place; or a model of another kind when ``algorithm`` is an instance whose
        class names that kind as ``model_type`` (e.g. :class:`rbmviz.dbm.JointTAP` trains a
        :class:`rbmviz.dbm.DBM`).  Such a model gives ``n_visible``, ``dtype``, ``params``,
        ``param_names``, ``layers``, ``units`` and ``copy()`` (:mod:`rbmviz.runs.models`); the run then records no metrics (the records hold
        the algorithm's fields; ``eval_every="auto"`` records at epoch ends), trains the model
        itself (no working copy) and checks its parameters after every chunk (finite, below
        ``max_weight``).
    data : array (n_samples, n_visible)
        Training rows (binary for Bernoulli visibles; any float dtype, cast to the training
        dtype).
    algorithm : str or Algorithm
        A name from :func:`rbmviz.algorithms.names` (built with ``learning_rate``, ``seed`` and
        the algorithm-specific ``settings`` such as ``k``), or a ready instance.
    epochs : int or None
        Number of epochs; ``None`` runs until :meth:`stop` (the dashboard).
    batch_size : int, optional
        Rows per update; default (None) = full batch.
    learning_rate : float, optional
        Step size of the algorithm; None (default) = the rule's declared default (its
        ``Knobs``: 0.1 for the sampling rules, γ = 0.005 for ``tap``, Table 1 of Tramel et
        al. 2018).  The value that runs is ``run.algorithm.learning_rate``.
    seed : int, optional
        Seeds the epoch shuffles, the algorithm's Gibbs stream and the ``spl`` subset; None
        (default) = the rule's declared default (0).  The
        model's initial parameters are seeded where the model is made (``RBM(..., seed=)``).
    test_data : array, optional
        Held-out rows for ``test_ll`` / ``ais_test_ll``.
    eval_every : "auto" or int
        ``"auto"`` (default): records spaced so that evaluation takes at most
        ``eval_budget`` of the wall time.  An int: epochs between records.
    record_every_updates : int, optional
        Updates between records (overrides ``eval_every``; records within epochs).
    eval_budget : float
        Largest fraction of the wall time spent evaluating under ``eval_every="auto"``
        (default 0.1).
    max_seconds : float, optional
        Each ``next(run)`` returns within about this many seconds of training (plus one
        evaluation), making a record early if needed — for live front ends.
    metrics : "auto" or sequence of str
        Names from :data:`rbmviz.evaluate.metrics.METRICS`; "auto" as in the module docs.
    max_weight : float
        Largest allowed ``|parameter|`` (a parameter at ≥ 90 % of it counts as diverged too).
    max_ll_drop : float, optional
        Nats a log-likelihood — of a likelihood metric, or of the guard rows, checked whatever
        the metrics (see the module docs) — may fall below its best and the uniform model's
        value before the run counts as diverged (default ``n_visible · log 2``).
    pl_rows : int, optional
        Rows (the first ones) used for ``pseudo_ll``, ``recon_error`` and ``tap_ll``;
        default 1000, or ``spl_rows`` for large models (``n_visible · n_hidden`` ≥
        :data:`rbmviz.presets.LARGE_MODEL`).
    spl_rows, spl_sites : int
        Size of the fixed random subset of the ``spl`` metric (rows, visible sites).
    exact_max_bits : int
        Exact log-likelihoods only when the smaller layer has at most this many units.
    metric_options : dict, optional
        Options of the AIS metrics: ``n_chains`` (100), ``n_betas`` (10,000), ``seed`` (the
        run's), ``betas``, ``dtype`` of :func:`rbmviz.evaluate.ais_log_partition`.
    dtype : "auto", "float32", "float64" or None
        Training dtype (see the module docs); None = the model's.
    chunk_seconds : float
        Training runs in chunks of about this many seconds (responsiveness to Ctrl-C and
        ``max_seconds``); results do not depend on it.
    data_probabilities : bool
        Accept rows of probabilities in [0, 1] for Bernoulli visibles (default False: 0/1
        rows only).  The data term of the update uses them as they are (mean-field values,
        as scikit-learn's ``BernoulliRBM``); the Gibbs chains are binary states.  Only
        ``recon_error`` and ``weight_norm`` are defined on such rows.
    keep_records : bool
        Keep every record in ``run.records`` (default); ``False`` keeps only the latest.
    shuffle : numpy.random.Generator, optional
        The generator of the epoch shuffles (one ``permutation`` of the rows per epoch, drawn
        as ``shuffle.permutation(n_rows)``); default (None): a generator of its own, seeded
        from ``seed``.  A caller that must continue a stream of its own passes it (the deep
        TAP machine's :func:`rbmviz.dbm.pretrain` shares one between its layers and their
        samples); the run draws from it in place.
    remainder : {"spread", "drop"}
        The ``n_rows mod batch_size`` rows left over by the mini-batches: ``"spread"``
        (default) one per batch over the first batches (every row is used every epoch,
        :func:`rbmviz.runs.batch_bounds`); ``"drop"`` every batch exactly ``batch_size`` rows
        and the last rows of each epoch's permutation left out (the mini-batches of
        :mod:`rbmviz.dbm`, Alg. 4).
    record_initial : bool
        Make a record at epoch 0, before training (default).  A ready algorithm instance
        (``algorithm.ready``) continues with its chains, velocities and random-stream
        position instead of starting afresh (``partial_fit``).
    **settings
        Algorithm settings (``k``, ``momentum``, ``weight_decay``, ``n_chains`` ...).

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM` (or the algorithm instance's
        ``model_type``), ``metric_options`` is not a dict, ``shuffle`` not a numpy
        ``Generator``, or settings are given with a ready algorithm instance.
    ValueError
        If an option is out of range (e.g. ``batch_size`` larger than the data, unknown
        ``metric_options``, data outside the visible units' support).
    """

    def __init__(self, rbm: RBM, data: ArrayLike, algorithm: str | Algorithm = "cd", *,
                 epochs: int | None = None, batch_size: int | None = None,
                 learning_rate: float | None = None, seed: int | None = None,
                 test_data: ArrayLike | None = None,
                 eval_every: str | int = "auto", metrics: str | Sequence[str] = "auto",
                 max_weight: float = MAX_WEIGHT_DEFAULT, pl_rows: int | None = None,
                 exact_max_bits: int = EXACT_BITS_DEFAULT,
                 record_initial: bool = True, keep_records: bool = True,
                 metric_options: dict | None = None, record_every_updates: int | None = None,
                 eval_budget: float = 0.1, max_seconds: float | None = None,
                 max_ll_drop: float | None = None, spl_rows: int = 100, spl_sites: int = 16,
                 dtype: str | None = "auto", chunk_seconds: float = 0.25,
                 data_probabilities: bool = False,
                 shuffle: np.random.Generator | None = None, remainder: str = "spread",
                 **settings: Any) -> None:
        model_type = (getattr(algorithm, "model_type", RBM)
                      if isinstance(algorithm, _algorithms.Algorithm) else RBM)
        if not isinstance(rbm, model_type):
            if model_type is RBM:
                raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
            raise TypeError(f"algorithm {algorithm.name!r} trains a {model_type.__name__}; "
                            f"the model must be one, got {type(rbm).__name__}")
        #: whether the model is an RBM (metrics, working copy, likelihood guard) or a model
        #: of another kind that the algorithm trains (module docs, ``rbm``)
        self._is_rbm = isinstance(rbm, RBM)
        self.rbm = rbm
        if isinstance(algorithm, _algorithms.Algorithm):
            if settings or learning_rate is not None:
                given = sorted(settings) + (["learning_rate"] if learning_rate is not None else [])
                raise TypeError(f"settings {given} given with a ready algorithm instance")
            self.algorithm = algorithm
            self.seed = check_seed(type(algorithm).Knobs.param.seed.default if seed is None
                                   else seed)
        else:
            # None means "the rule's declared default" (its Knobs): only given values are passed
            given = {k: v for k, v in (("learning_rate", learning_rate), ("seed", seed))
                     if v is not None}
            self.algorithm = _algorithms.create(algorithm, **given, **settings)
            self.seed = check_seed(self.algorithm.seed)
        check_int(exact_max_bits, "exact_max_bits", low=0, high=EXACT_BITS_MAX)
        if self._is_rbm:
            self.exact = rbm.is_binary and _evaluate.exact_feasible(rbm, exact_max_bits)
            self.metrics = choose_metrics(metrics, rbm, exact=self.exact,
                                          has_test=test_data is not None,
                                          exact_max_bits=exact_max_bits)
            self._work = self._working_model(dtype)
        else:
            self.exact = False
            self.metrics = self._no_metrics(metrics)
            if dtype not in (None, "auto"):
                check_choice(dtype, "dtype", ("auto", "float32", "float64"))
                if np.dtype(dtype) != rbm.dtype:
                    raise ValueError(f"dtype={dtype!r}: a {type(rbm).__name__} trains in its own "
                                     f"dtype ({rbm.dtype}); pass dtype=None or 'auto'")
            self._work = rbm
        binary = not self._is_rbm or rbm.visible_prior.name == "bernoulli"
        states = binary and not data_probabilities
        self.data = check_data(data, "data", n_visible=rbm.n_visible, dtype=self._work.dtype,
                               binary=states)
        self.test_data = (None if test_data is None else
                          check_data(test_data, "test_data", n_visible=rbm.n_visible,
                                     binary=states))
        if binary and data_probabilities:
            self._check_probabilities()
        if not binary:   # real-valued visibles: the data must lie in the prior's support
            rbm.visible_prior.check_data(self.data, "data")
            if self.test_data is not None:
                rbm.visible_prior.check_data(self.test_data, "test_data")
        n = self.data.shape[0]
        self.epochs = None if epochs is None else check_int(epochs, "epochs", low=0, high=EPOCHS_MAX)
        self.batch_size = check_int(n if batch_size is None else batch_size, "batch_size", low=1)
        if self.batch_size > n:
            raise ValueError(f"batch_size={self.batch_size} is larger than the data ({n} rows)")
        self.eval_every = _auto_or_int(eval_every, "eval_every", 1)
        self.record_every_updates = (None if record_every_updates is None else
                                     check_int(record_every_updates, "record_every_updates", low=1))
        self.eval_budget = check_float(eval_budget, "eval_budget", low=0.0, high=1.0, low_open=True)
        self.max_seconds = (None if max_seconds is None else
                            check_float(max_seconds, "max_seconds", low=0.0, low_open=True))
        self.chunk_seconds = check_float(chunk_seconds, "chunk_seconds", low=0.0, low_open=True)
        #: optional ``callable() -> bool``, asked after every training chunk: True ends the
        #: point there (it is evaluated and recorded as usual) — a live engine's Pause acts
        #: within a chunk instead of waiting for ``max_seconds``
        self.yield_when: Callable[[], bool] | None = None
        self.max_weight = check_float(max_weight, "max_weight", low=0.0, low_open=True)
        self.max_ll_drop = (rbm.n_visible * math.log(2.0) if max_ll_drop is None else
                            check_float(max_ll_drop, "max_ll_drop", low=0.0, low_open=True))
        if pl_rows is None:      # large models: the cheap default rows (as many as spl uses)
            large = _models.couplings(rbm) >= LARGE_MODEL
            pl_rows = spl_rows if large else 1000
        self.pl_rows = check_int(pl_rows, "pl_rows", low=1)
        opts = {} if metric_options is None else metric_options
        if not isinstance(opts, dict):
            raise TypeError(f"metric_options must be a dict, got {type(opts).__name__}")
        bad = sorted(set(opts) - set(AIS_OPTIONS))
        if bad:
            raise ValueError(f"unknown metric_options {bad}; expected some of {list(AIS_OPTIONS)}")
        self.metric_options = {"n_chains": AIS_CHAINS_DEFAULT, "n_betas": AIS_BETAS_DEFAULT,
                               "seed": self.seed, **opts}
        check_int(self.metric_options["n_chains"], "metric_options['n_chains']", low=1)
        check_int(self.metric_options["n_betas"], "metric_options['n_betas']", low=2)
        check_seed(self.metric_options["seed"], "metric_options['seed']")
        self._ctx = MetricContext(self.data, self.test_data, pl_rows=self.pl_rows, seed=self.seed,
                                  spl_rows=check_int(spl_rows, "spl_rows", low=1),
                                  spl_sites=check_int(spl_sites, "spl_sites", low=1),
                                  metric_options=self.metric_options, algorithm=self.algorithm)
        self._ctx._checked = self._is_rbm      # rows and model checked above: no re-checks
        self._guard_rows = self._likelihood_guard_rows()
        self.remainder = check_choice(remainder, "remainder", ("spread", "drop"))
        if self.remainder == "spread":
            self.bounds = batch_bounds(n, self.batch_size)
        else:                          # batches of batch_size rows, the rest left out
            self.bounds = np.arange(0, (n // self.batch_size) * self.batch_size + 1,
                                    self.batch_size, dtype=np.int64)
        self.n_batches = len(self.bounds) - 1
        if shuffle is None:
            self._shuffle = np.random.default_rng(stream_seed(self.seed, "shuffle"))
        elif isinstance(shuffle, np.random.Generator):
            self._shuffle = shuffle
        else:
            raise TypeError(f"shuffle must be a numpy.random.Generator or None, got "
                            f"{type(shuffle).__name__}")
        if self.algorithm.ready:            # a ready instance continues with its state
            self.algorithm.resume(self._work, self.data, self.batch_size)
        else:
            self.algorithm.setup(self._work, self.data, self.batch_size)
        self.record_initial = bool(record_initial)
        self.keep_records = bool(keep_records)
        self.epoch = 0                 # completed epochs
        self._pos = 0                  # mini-batches done in the current epoch
        self._perm = None              # the current epoch's row permutation
        self.wall_time = 0.0
        self.eval_time = 0.0           # seconds of wall_time spent evaluating
        self.metric_seconds: dict[str, float] = {}   # cost of each metric at the last record
        self.records: list[dict] = []
        self.error: RunDiverged | None = None
        self._stopped = False
        self._last_good = 0
        self._best: dict[str, float] = {}
        self._t_update = None          # measured seconds per update (latest chunk)
        self._eval_times: list[float] = []   # cost of each evaluation (the schedule uses the
        #                                    # smaller of the last two: robust to warm-up)
        self._u_record = 0             # run updates at the latest record
        self._data_digest: str | None = None   # of the training rows (:meth:`state`)

    # ------------------------------------------------------------------ set-up helpers
    @staticmethod
    def _no_metrics(metrics):
        """The metrics of a model that is not an RBM: none (the registered metrics are an
        RBM's); ``"auto"`` or an empty list."""
        if isinstance(metrics, str):
            if metrics != "auto":
                raise ValueError(f"metrics must be 'auto' or a list of names, got {metrics!r}")
            return []
        chosen = list(metrics)
        if chosen:
            raise ValueError(f"metric(s) {chosen} are defined for RBMs; a model of another "
                             f"kind records its algorithm's fields only (metrics='auto' or [])")
        return chosen

    def _check_probabilities(self):
        """``data_probabilities=True``: rows in [0, 1] (the data term uses them as they are);
        metrics defined on 0/1 rows are refused when a row is not binary."""
        for name, X in (("data", self.data), ("test_data", self.test_data)):
            if X is None:
                continue
            bad = (X < 0) | (X > 1)
            if bad.any():
                r, col = np.argwhere(bad)[0]
                raise ValueError(f"{name} must hold probabilities in [0, 1] "
                                 f"(data_probabilities=True); found {float(X[r, col])!r} at row "
                                 f"{r}, column {col}")
            if not np.all((X == 0) | (X == 1)):
                need = [m for m in self.metrics if m not in ("recon_error", "weight_norm")]
                if need:
                    raise ValueError(f"metric(s) {need} need binary (0/1) {name}; with "
                                     f"probabilities use metrics=['recon_error', 'weight_norm']")

    def _working_model(self, dtype):
        rbm = self.rbm
        if dtype is None:
            return rbm
        if dtype == "auto":
            exact_metric = any(METRICS[m].needs_exact for m in self.metrics)
            if (rbm.dtype == np.float64 and rbm.is_binary and not exact_metric
                    and self.algorithm.name in _FLOAT32_RULES
                    and default_dtype(rbm.n_visible, rbm.n_hidden) == "float32"):
                return _cast_copy(rbm, np.float32)
            return rbm
        check_choice(dtype, "dtype", ("auto", "float32", "float64"))
        return rbm if rbm.dtype == np.dtype(dtype) else _cast_copy(rbm, np.dtype(dtype))

    def _sync(self):
        """Copy the working copy's parameters into the model passed in (if they differ)."""
        if self._work is not self.rbm:
            for dst, src in zip(self.rbm.params, self._work.params):
                dst[...] = src

    @property
    def dtype(self) -> np.dtype:
        """The dtype training runs in."""
        return self._work.dtype

    # ------------------------------------------------------------------ iteration
    def __iter__(self):
        return self

    @property
    def _u(self) -> int:
        """Updates done by this run (epochs × batches + position in the epoch)."""
        return self.epoch * self.n_batches + self._pos

    def __next__(self) -> dict:
        if self._stopped or self.error is not None:
            raise StopIteration
        if not self.records and self.record_initial and self._u == 0:
            return self._evaluate_and_record()
        if self.epochs is not None and self.epoch >= self.epochs:
            raise StopIteration
        deadline = None if self.max_seconds is None else time.perf_counter() + self.max_seconds
        self._train_until(self._target, deadline)
        return self._evaluate_and_record()

    @property
    def done(self) -> bool:
        """Whether the run is over (stopped, diverged, or past ``epochs`` with its records made).

        Returns
        -------
        bool
            True once iterating the run would stop.
        """
        return (self._stopped or self.error is not None
                or (self.epochs is not None and self.epoch >= self.epochs
                    and (bool(self.records) or not self.record_initial)))

    def stop(self) -> None:
        """End the run: the iterator stops at its next call."""
        self._stopped = True
        self._sync()

    def step(self, n_epochs: int = 1) -> dict:
        """Train ``n_epochs`` × (batches per epoch) more updates (ignoring ``epochs``).

        Parameters
        ----------
        n_epochs : int
            Epochs to train (>= 1).

        Returns
        -------
        dict
            The record made after the updates (``epoch``, ``updates``, ``seconds``, the metrics).

        Raises
        ------
        RunDiverged
            When training diverges.
        """
        n_epochs = check_int(n_epochs, "n_epochs", low=1)
        return self.step_updates(n_epochs * self.n_batches)

    def step_updates(self, n_updates: int) -> dict:
        """Train ``n_updates`` more updates (ignoring ``epochs``), then evaluate.

        Parameters
        ----------
        n_updates : int
            Parameter updates to make (>= 1).

        Returns
        -------
        dict
            The record made after the updates.

        Raises
        ------
        RunDiverged
            When training diverges, or diverged before (the stored error is raised again).
        """
        n_updates = check_int(n_updates, "n_updates", low=1)
        if self.error is not None:
            raise self.error
        if not self.records and self.record_initial and self._u == 0:
            self._evaluate_and_record()
        end = self._u + n_updates
        self._train_until(lambda: end, None)
        return self._evaluate_and_record()

    def _train_chunk(self, n):
        """``n`` updates from the current position (across epoch ends), then the parameter
        check.  Bit-identical however the updates are split into chunks."""
        t0 = time.perf_counter()
        alg, nb = self.algorithm, self.n_batches
        u0, start = alg.updates, self._u
        order = None
        try:
            while n > 0:
                if self._pos == 0 and n >= nb:          # whole epochs in one call
                    m = n // nb
                    if self.epochs is not None:
                        m = min(m, max(self.epochs - self.epoch, 1))
                    order = self._permutations(m)
                    done = alg.train_epochs(self._work, self.data, order, self.bounds, self.max_weight)
                    self.epoch += done
                    n -= done * nb
                    order = None
                    if done < m:
                        break                               # stopped by the parameter check
                    continue
                if self._pos == 0:
                    self._perm = self._permutations(1)
                j = min(n, nb - self._pos)
                b = self.bounds[self._pos:self._pos + j + 1]
                alg.train_epochs(self._work, self.data, self._perm, b, self.max_weight)
                self._pos += j
                n -= j
                if self._pos == nb:
                    self.epoch, self._pos, self._perm = self.epoch + 1, 0, None
                if not params_healthy(self._work, self.max_weight):
                    break
        except KeyboardInterrupt:
            # Ctrl-C inside a Python-level update loop: the algorithm finished some updates
            # of this call (an update is applied at its end); continue from there
            total = start + (alg.updates - u0)
            e, pos = divmod(total, nb)
            if order is not None and pos:
                self._perm = order[e - self.epoch:e - self.epoch + 1]
            self.epoch, self._pos = e, pos
            if pos == 0:
                self._perm = None
            raise
        finally:
            dt = time.perf_counter() - t0
            self.wall_time += dt
            done = alg.updates - u0
            if done > 0:
                self._t_update = dt / done
        self._check_parameters()

    def _permutations(self, m):
        order = np.tile(np.arange(self.data.shape[0], dtype=np.int64), (m, 1))
        self._shuffle.permuted(order, axis=1, out=order)    # a fresh shuffle for every epoch
        return order

    # ------------------------------------------------------------------ records
    def _epoch_value(self):
        return self.epoch if self._pos == 0 else self.epoch + self._pos / self.n_batches

    def _evaluate_and_record(self) -> dict:
        t0 = time.perf_counter()
        rbm = self._work
        alg = self.algorithm
        rec = {"algorithm": alg.name, "epoch": self._epoch_value(), "updates": alg.updates,
               "gibbs_steps": alg.gibbs_steps}
        rec.update(alg.record_fields())   # e.g. TAP: runs that did not converge
        ctx = self._ctx
        ctx.cache.clear()
        try:
            for m in self.metrics:
                tm = time.perf_counter()
                val = float(METRICS[m].fn(rbm, ctx))
                self.metric_seconds[m] = time.perf_counter() - tm
                if not math.isfinite(val):
                    self._diverged(m, val, f"{m} = {val}", in_epoch=False)
                if METRICS[m].likelihood:
                    self._check_collapse(m, val)
                rec[m] = val
            if self._guard_rows is not None:
                self._check_likelihood_bound()
        finally:
            dt = time.perf_counter() - t0
            self.wall_time += dt
            self.eval_time += dt
        self._sync()
        self._eval_times = self._eval_times[-1:] + [time.perf_counter() - t0]
        rec["wall_time"] = self.wall_time
        self._last_good = rec["epoch"]
        self._u_record = self._u
        if not self.keep_records:
            self.records.clear()
        self.records.append(rec)
        return rec

    # ------------------------------------------------------------------ continuing later
    def state(self) -> dict:
        """Everything needed to continue this run later, in another process, bit for bit.

        Taken between records (after ``next(run)`` returned), it holds the working model and
        the model passed in (parameters and unit priors), the algorithm with its state
        (chains, velocities, centering offsets, position in its counter-based Gibbs stream),
        the epoch shuffle's generator, the position in the epoch, the records and the
        divergence guard's bests.  :meth:`restore` puts it into a run made afresh with the same
        arguments; the sweeps keep it on disk so that a long run cut off (a stopped machine, a
        lost worker) continues from its latest record instead of from epoch 0.

        Returns
        -------
        dict
            Picklable (the sweeps write it with :mod:`pickle`).

        Raises
        ------
        ValueError
            For a run that diverged (there is nothing to continue).
        """
        return _state.capture(self)

    def restore(self, state: dict) -> None:
        """Continue from :meth:`state` of a run made with the same arguments.

        The run must not have started (no record yet).  The model passed in takes the
        state's parameters and priors (its attributes are replaced: arrays taken from it
        before are stale), and iterating goes on from the state's latest record.

        Parameters
        ----------
        state : dict
            From :meth:`state`.

        Raises
        ------
        ValueError
            If the run has started, or the state is of another format version, algorithm,
            set of settings, model shape, dtype, unit types, data (compared by a digest of the
            rows), batch size or seed; the message names what differs.
        """
        _state.restore(self, state)

    def to_frame(self) -> "pandas.DataFrame":
        """The records so far as a table.

        Returns
        -------
        pandas.DataFrame
            One row per record, one column per field.
        """
        import pandas as pd
        return pd.DataFrame.from_records(self.records)



def train(rbm: RBM, data: ArrayLike, algorithm: str | Algorithm = "cd", *, epochs: int,
          batch_size: int | None = None, learning_rate: float | None = None,
          seed: int | None = None,
          progress: bool = False, **settings: Any) -> "pandas.DataFrame":
    """Train ``rbm`` in place and return the run's records as a pandas DataFrame.

    The same loop as :class:`Run` (see it for every option: ``test_data``, ``eval_every``,
    ``metrics``, ``dtype``, algorithm settings such as ``k``).

    Parameters
    ----------
    rbm : RBM
        Trained in place.
    data : array_like, shape (n_samples, n_visible)
        Training rows.
    algorithm : str or Algorithm
        A name from :func:`rbmviz.algorithms.names` or a ready instance.
    epochs : int
        Number of epochs (required).
    batch_size : int, optional
        Rows per update; default (None) = full batch.
    learning_rate : float, optional
        Step size of the algorithm; None (default) = the rule's declared default (0.1 for the
        sampling rules, γ = 0.005 for ``tap``).
    seed : int, optional
        Seeds the epoch shuffles, the algorithm's Gibbs stream and the ``spl`` subset; None
        (default) = the rule's declared default (0).
    progress : bool
        Show a tqdm progress bar.
    **settings
        Further options of :class:`Run` and algorithm settings (``k``, ``momentum`` ...).

    Returns
    -------
    pandas.DataFrame
        One row per record: ``epoch``, ``updates``, ``seconds`` and the metrics.

    Raises
    ------
    ValueError
        If ``epochs`` is None (use :class:`Run` for an open-ended run), or a setting is invalid.
    RunDiverged
        Training diverged; ``exc.records`` holds the records made before.
    Interrupted
        Ctrl-C (a ``KeyboardInterrupt``): takes effect within about a second (between
        training chunks); ``exc.records`` holds the finished records
        (``pandas.DataFrame(exc.records)``) and ``rbm`` holds the parameters reached.

    Examples
    --------
    >>> import rbmviz
    >>> X = rbmviz.datasets.bars_and_stripes(3)
    >>> rbm = rbmviz.RBM(9, 4, seed=0)
    >>> df = rbmviz.train(rbm, X, "cd", epochs=100, learning_rate=0.3, k=12, eval_every=50)
    >>> list(df.epoch)
    [0, 50, 100]
    """
    if epochs is None:
        raise ValueError("epochs is required for train(); use Run(...) for an open-ended run")
    run = Run(rbm, data, algorithm, epochs=epochs, batch_size=batch_size,
              learning_rate=learning_rate, seed=seed, **settings)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=run.epochs, unit="epoch", desc=run.algorithm.label or run.algorithm.name)
    try:
        for rec in run:
            if bar is not None:
                bar.n = rec["epoch"]
                post = {m: f"{rec[m]:.4g}" for m in run.metrics if METRICS[m].likelihood}
                bar.set_postfix(post, refresh=True)
    except KeyboardInterrupt as exc:
        run.stop()
        raise Interrupted(f"training interrupted after {run.algorithm.updates} updates "
                          f"(epoch {run._epoch_value()}); {len(run.records)} records kept in "
                          f"exc.records", records=run.records, run=run) from exc
    finally:
        if bar is not None:
            bar.close()
    return run.to_frame()
