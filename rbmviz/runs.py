"""A training run as a stream of metric records — the one loop every front end uses.

``Run`` is an iterator: each ``next(run)`` trains up to the next evaluation point and
returns a record (a dict); the dashboard pushes records into a HoloViews ``Buffer``, the
CLI into a CSV file, notebooks into a DataFrame (:func:`train`), sweeps into Dask futures.

A record holds ``epoch``, ``updates``, ``gibbs_steps`` (per chain, cumulative — the compute
axis of Upadhya & Sastry's equal-compute comparisons), ``wall_time`` (seconds spent inside
this run: training plus evaluation) and the chosen metrics:

* ``train_ll`` / ``test_ll`` — exact average log-likelihood (nats) of the training / test
  rows, for models whose smaller layer has at most ``exact_max_bits`` units (the ATLL of
  the papers; on the toy sets the training set is the complete pattern set);
* ``pseudo_ll`` — deterministic pseudo-log-likelihood over all sites (on at most
  ``pl_rows`` rows);
* ``recon_error`` — mean squared reconstruction error per pixel;
* ``weight_norm`` — Frobenius norm of W;
* ``ais_test_ll`` / ``ais_train_ll`` — average log-likelihood with an AIS estimate of
  ``log Z`` (Salakhutdinov & Murray 2008; reference/ais.md §2.5), for models too large to
  enumerate (the ATLL of Upadhya & Sastry's MNIST/Omniglot figures).  One AIS run per
  evaluation serves both; its options come from ``metric_options`` (``n_chains``, default
  100; ``n_betas``, default 10,000, linear β schedule; ``seed``, default the run's seed,
  the same for every evaluation so that the estimates along a curve share their random
  numbers; ``betas``; ``dtype``).  The base-rate model is fitted to the training rows.
* ``tap_ll`` — TAP log-likelihood (Tramel et al. 2018, eq. 39; :func:`rbmviz.tap.log_likelihood`)
  of the first ``pl_rows`` training rows, unique solutions from those rows (the TAP
  algorithm's ``order`` if it has one).

A run whose parameters or metrics become NaN/inf, or whose largest parameter exceeds
``max_weight`` in magnitude, stops by raising :class:`RunDiverged`, which says which
quantity, its value and the epochs in which it happened.
"""
from __future__ import annotations

import math
import time

import numpy as np

from . import algorithms as _algorithms
from . import evaluate as _evaluate
from ._seeds import stream_seed
from ._validation import check_choice, check_data, check_float, check_int, check_seed
from .errors import RunDiverged
from .evaluate.metrics import AIS_OPTIONS, METRICS, MetricContext
from .model import RBM

__all__ = ["Run", "RunDiverged", "train", "batch_bounds", "METRICS", "RECORD_KEYS"]
RECORD_KEYS = ("algorithm", "epoch", "updates", "gibbs_steps", "wall_time")


def batch_bounds(n_rows: int, batch_size: int) -> np.ndarray:
    """Boundaries of ``n_rows // batch_size`` mini-batches of (nearly) equal size; the
    remainder is spread one row at a time over the first batches (as ``numpy.array_split``).
    Shape (n_batches + 1,)."""
    n_batches = max(1, n_rows // batch_size)
    sizes = np.full(n_batches, n_rows // n_batches, dtype=np.int64)
    sizes[: n_rows % n_batches] += 1
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


class Run:
    """Train ``rbm`` in place on ``data`` with one algorithm, yielding records.

    Parameters
    ----------
    rbm : RBM
        Trained in place.
    data : array (n_samples, n_visible), binary
        Training rows.
    algorithm : str or Algorithm
        A name from :func:`rbmviz.algorithms.names` (built with ``learning_rate``, ``seed`` and
        the algorithm-specific ``settings`` such as ``k``), or a ready instance.
    epochs : int or None
        Number of epochs; ``None`` runs until :meth:`stop` (the dashboard).
    batch_size : int, optional
        Rows per update; default (None) = full batch.
    learning_rate : float
    seed : int
        Seeds the epoch shuffles and the algorithm's Gibbs stream.  The model's initial
        parameters are seeded where the model is made (``RBM(..., seed=)``).
    test_data : array, optional
        Held-out rows for ``test_ll``.
    eval_every : int
        Epochs between records (a record is also made at epoch 0 and at the last epoch).
    metrics : "auto" or sequence of str
        "auto": exact LLs when feasible (``exact_max_bits``), pseudo-likelihood,
        reconstruction error, weight norm.
    max_weight : float
        Largest allowed |parameter| before the run is declared diverged.
    pl_rows : int
        Rows (the first ones) used for the pseudo-likelihood and reconstruction error.
    exact_max_bits : int
        Exact log-likelihoods only when the smaller layer has at most this many units.
    metric_options : dict, optional
        Options of the AIS metrics (``ais_test_ll``, ``ais_train_ll``): ``n_chains``,
        ``n_betas``, ``seed``, ``betas``, ``dtype`` of
        :func:`rbmviz.evaluate.ais_log_partition`.
    keep_records : bool
        Keep every record in ``run.records`` (default); ``False`` keeps only the latest (a
        front end that stores the stream itself, e.g. the explorer's race).
    record_initial : bool
        Make a record at epoch 0, before training (default).  A ready algorithm instance
        (``algorithm.ready``) continues with its chains, velocities and random-stream
        position instead of starting afresh (``partial_fit``).
    **settings
        Algorithm settings (``k``, ``momentum``, ``weight_decay``, ``n_chains`` ...).
    """

    def __init__(self, rbm, data, algorithm="cd", *, epochs=None, batch_size=None,
                 learning_rate=0.1, seed=0, test_data=None, eval_every=1, metrics="auto",
                 max_weight=1e3, pl_rows=1000, exact_max_bits=20, record_initial=True,
                 keep_records=True, metric_options=None, **settings):
        if not isinstance(rbm, RBM):
            raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
        self.rbm = rbm
        binary = rbm.visible_prior.name == "bernoulli"
        self.data = check_data(data, "data", n_visible=rbm.n_visible, dtype=rbm.dtype,
                               binary=binary)
        self.test_data = (None if test_data is None else
                          check_data(test_data, "test_data", n_visible=rbm.n_visible,
                                     binary=binary))
        if not binary:   # real-valued visibles: the data must lie in the prior's support
            rbm.visible_prior.check_data(self.data, "data")
            if self.test_data is not None:
                rbm.visible_prior.check_data(self.test_data, "test_data")
        n = self.data.shape[0]
        self.epochs = None if epochs is None else check_int(epochs, "epochs", low=0)
        if batch_size is None:
            batch_size = n
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        if self.batch_size > n:
            raise ValueError(f"batch_size={self.batch_size} is larger than the data ({n} rows)")
        self.seed = check_seed(seed)
        self.eval_every = check_int(eval_every, "eval_every", low=1)
        self.max_weight = check_float(max_weight, "max_weight", low=0.0, low_open=True)
        self.pl_rows = check_int(pl_rows, "pl_rows", low=1)
        if isinstance(algorithm, _algorithms.Algorithm):
            if settings:
                raise TypeError(f"settings {sorted(settings)} given with a ready algorithm instance")
            self.algorithm = algorithm
        else:
            self.algorithm = _algorithms.create(algorithm, learning_rate=learning_rate,
                                                seed=self.seed, **settings)
        self.exact = rbm.is_binary and _evaluate.exact_feasible(rbm, exact_max_bits)
        if metrics == "auto" and not rbm.is_binary:
            metrics = ["tap_ll", "weight_norm"]      # the binary-only measures do not apply
        elif metrics == "auto":
            metrics = (["train_ll"] if self.exact else []) + (
                ["test_ll"] if self.exact and self.test_data is not None else []) + [
                "pseudo_ll", "recon_error", "weight_norm"]
        self.metrics = [check_choice(m, "metric", METRICS) for m in metrics]
        binary_only = [m for m in self.metrics if METRICS[m].binary_only]
        if binary_only and not rbm.is_binary:
            rbm.require_binary(f"metric(s) {binary_only}")
        if ("train_ll" in self.metrics or "test_ll" in self.metrics) and not self.exact:
            if not rbm.is_binary:
                rbm.require_binary("metrics 'train_ll'/'test_ll' (exact log-likelihood)")
            raise ValueError(f"exact log-likelihood needs a layer of at most {exact_max_bits} units "
                             f"(model is {rbm.n_visible}x{rbm.n_hidden}); drop 'train_ll'/'test_ll' "
                             f"from metrics or use AIS")
        for m in ("test_ll", "ais_test_ll"):
            if m in self.metrics and self.test_data is None:
                raise ValueError(f"metric {m!r} needs test_data")
        opts = {} if metric_options is None else metric_options
        if not isinstance(opts, dict):
            raise TypeError(f"metric_options must be a dict, got {type(opts).__name__}")
        bad = sorted(set(opts) - set(AIS_OPTIONS))
        if bad:
            raise ValueError(f"unknown metric_options {bad}; expected some of {list(AIS_OPTIONS)}")
        self.metric_options = {"n_chains": 100, "n_betas": 10000, "seed": self.seed, **opts}
        check_int(self.metric_options["n_chains"], "metric_options['n_chains']", low=1)
        check_int(self.metric_options["n_betas"], "metric_options['n_betas']", low=2)
        check_seed(self.metric_options["seed"], "metric_options['seed']")
        self._ctx = MetricContext(self.data, self.test_data, pl_rows=self.pl_rows, seed=self.seed,
                                  metric_options=self.metric_options, algorithm=self.algorithm)
        self.bounds = batch_bounds(n, self.batch_size)
        self._shuffle = np.random.default_rng(stream_seed(self.seed, "shuffle"))
        if self.algorithm.ready:            # a ready instance continues with its state
            self.algorithm.resume(rbm, self.data, self.batch_size)
        else:
            self.algorithm.setup(rbm, self.data, self.batch_size)
        self.record_initial = bool(record_initial)
        self.keep_records = bool(keep_records)
        self.epoch = 0
        self.wall_time = 0.0
        self.records: list[dict] = []
        self.error: RunDiverged | None = None
        self._stopped = False
        self._last_good = 0

    # ------------------------------------------------------------------ iteration
    def __iter__(self):
        return self

    def __next__(self) -> dict:
        if self._stopped or self.error is not None:
            raise StopIteration
        if not self.records and self.record_initial and self.epoch == 0:
            return self._evaluate_and_record(0)
        if self.epochs is not None and self.epoch >= self.epochs:
            raise StopIteration
        n = self.eval_every
        if self.epochs is not None:
            n = min(n, self.epochs - self.epoch)
        return self.step(n)

    @property
    def done(self) -> bool:
        return (self._stopped or self.error is not None
                or (self.epochs is not None and self.epoch >= self.epochs
                    and (bool(self.records) or not self.record_initial)))

    def stop(self) -> None:
        """End the run: the iterator stops at its next call."""
        self._stopped = True

    def step(self, n_epochs: int = 1) -> dict:
        """Train ``n_epochs`` more epochs (ignoring ``epochs``), then evaluate and return the
        record.  Raises :class:`RunDiverged` when training diverges."""
        n_epochs = check_int(n_epochs, "n_epochs", low=1)
        if self.error is not None:
            raise self.error
        if not self.records and self.record_initial and self.epoch == 0:
            self._evaluate_and_record(0)
        t0 = time.perf_counter()
        N = self.data.shape[0]
        order = np.tile(np.arange(N, dtype=np.int64), (n_epochs, 1))
        self._shuffle.permuted(order, axis=1, out=order)    # a fresh shuffle for every epoch
        done = self.algorithm.train_epochs(self.rbm, self.data, order, self.bounds, self.max_weight)
        self.epoch += done
        self.wall_time += time.perf_counter() - t0
        self._check_parameters()          # raises RunDiverged naming the epoch it happened in
        return self._evaluate_and_record(self.epoch)

    # ------------------------------------------------------------------ internals
    def _diverged(self, quantity, value, why, *, in_epoch=True):
        first = self._last_good
        lr = getattr(self.algorithm, "learning_rate", None)
        hint = f" (learning_rate={lr:g} may be too large)" if lr is not None else ""
        when = f"in epoch {self.epoch}" if in_epoch else f"at the evaluation after epoch {self.epoch}"
        msg = (f"run diverged: {why} {when} (last healthy evaluation at epoch {first}){hint}; "
               f"training stopped")
        self.error = RunDiverged(msg, epoch=self.epoch, last_good_epoch=first,
                                 quantity=quantity, value=value)
        raise self.error

    def _check_parameters(self):
        for name, arr in zip(("W", "b", "c"), self.rbm.params):
            if not np.all(np.isfinite(arr)):
                self._diverged(name, float("nan"), f"{name} contains NaN or inf")
            big = float(np.max(np.abs(arr))) if arr.size else 0.0
            if big > self.max_weight:
                self._diverged(name, big, f"max |{name}| = {big:.3g} exceeds max_weight={self.max_weight:g}")

    def _evaluate_and_record(self, epoch) -> dict:
        t0 = time.perf_counter()
        rbm = self.rbm
        rec = {"algorithm": self.algorithm.name, "epoch": epoch, "updates": self.algorithm.updates,
               "gibbs_steps": self.algorithm.gibbs_steps}
        rec.update(self.algorithm.record_fields())   # e.g. TAP: runs that did not converge
        ctx = self._ctx
        ctx.cache.clear()
        for m in self.metrics:
            val = float(METRICS[m].fn(rbm, ctx))
            if not math.isfinite(val):
                self.wall_time += time.perf_counter() - t0
                self._diverged(m, val, f"{m} = {val}", in_epoch=False)
            rec[m] = val
        self.wall_time += time.perf_counter() - t0
        rec["wall_time"] = self.wall_time
        self._last_good = epoch
        if not self.keep_records:
            self.records.clear()
        self.records.append(rec)
        return rec

    def to_frame(self):
        """The records so far as a pandas DataFrame."""
        import pandas as pd
        return pd.DataFrame.from_records(self.records)


def train(rbm, data, algorithm="cd", *, epochs, batch_size=None, learning_rate=0.1, seed=0,
          progress=False, **settings):
    """Train ``rbm`` in place and return the run's records as a pandas DataFrame.

    The same loop as :class:`Run` (see it for every option: ``test_data``, ``eval_every``,
    ``metrics``, algorithm settings such as ``k``).  ``progress=True`` shows a tqdm bar.
    Raises :class:`RunDiverged` if training diverges.

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
                post = {m: f"{rec[m]:.4g}" for m in run.metrics if m in ("train_ll", "test_ll", "pseudo_ll")}
                bar.set_postfix(post, refresh=True)
    finally:
        if bar is not None:
            bar.close()
    return run.to_frame()
