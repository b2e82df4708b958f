"""A training run as a stream of metric records — the one loop every front end uses.

``Run`` is an iterator: each ``next(run)`` trains up to the next evaluation point and
returns a record (a dict); the dashboard pushes records into a HoloViews ``Buffer``, the
CLI into a CSV file, notebooks into a DataFrame (:func:`train`), sweeps into Dask futures.

A record holds ``algorithm``, ``epoch`` (completed epochs; a float such as ``3.25`` for a
record made within an epoch), ``updates``, ``gibbs_steps`` (per chain, cumulative — the
compute axis of Upadhya & Sastry's equal-compute comparisons), ``wall_time`` (seconds spent
inside this run: training plus evaluation) and the chosen metrics, computed by the metrics
registry :data:`rbmviz.evaluate.metrics.METRICS` (``train_ll``, ``test_ll``, ``spl``,
``pseudo_ll``, ``recon_error``, ``weight_norm``, ``ais_train_ll``, ``ais_test_ll``,
``tap_ll`` and any registered later).

**Evaluation on a budget.**  By default (``eval_every="auto"``) the run measures what an
evaluation costs and what an update costs, and spaces the records so that evaluation takes at
most ``eval_budget`` (10 %) of the wall time.  Small models record at epoch ends; when the
budget allows more than one record per epoch (large models, many mini-batches) records are
made within the epoch.  An explicit ``eval_every`` (epochs) or ``record_every_updates`` fixes
the positions instead.  A record is always made at epoch 0 and at the last epoch.
``run.metric_seconds`` holds each metric's cost at the last record, ``run.eval_time`` the
evaluation share of ``wall_time``.

**Default metrics** (``metrics="auto"``): the exact log-likelihood where enumeration is cheap
(smaller layer ≤ ``exact_max_bits``) plus the all-sites pseudo-likelihood, reconstruction
error and weight norm (all cheap there); otherwise
the stochastic pseudo-likelihood ``spl`` (a fixed random subset of sites and rows),
reconstruction error and weight norm; the all-sites ``pseudo_ll`` of a large model and AIS
only when asked.

**Float type.**  ``dtype="auto"`` trains a float32 working copy of a float64 model when the
model is large and exactness is not at stake (:func:`rbmviz.presets.default_dtype`: the
smaller layer has more than ``exact_max_bits`` units and ``n_visible · n_hidden`` ≥
:data:`rbmviz.presets.LARGE_MODEL`; Gibbs-sampling rules only); the model passed in is updated
from it at every record and when the run ends, stops or fails.  Pass ``dtype=None`` to train
in the model's own dtype.

**Interruption.**  Training runs in chunks of at most ~``chunk_seconds`` (0.25 s): Ctrl-C
takes effect after the current Numba call (≤ one chunk; the fused kernels of small models) or
at once between the products of the BLAS path (large models, any ``k``); :func:`train` then
raises :class:`rbmviz.errors.Interrupted` (a ``KeyboardInterrupt``) whose ``records`` are the
records finished so far and whose ``run`` holds the model as trained (an interrupted run is
not meant to be continued).  A caller iterating a :class:`Run` itself gets the plain
``KeyboardInterrupt``; the finished records are in ``run.records`` (``run.stop()`` copies the
working parameters into the model).  With
``max_seconds``, each ``next(run)`` returns within about that time (a record made early,
within the epoch) — for live front ends.

**Divergence.**  A run stops by raising :class:`rbmviz.errors.RunDiverged` (which quantity,
its value, when; ``records`` holds the records so far) when a parameter becomes NaN/inf or
exceeds ``max_weight``, when a parameter sits near that limit (≥ 90 % of ``max_weight``:
saturated units whose gradient vanished), or when a log-likelihood collapses — falls
more than ``max_ll_drop`` nats (default ``n_visible · log 2``, the entropy of the uniform
model) below both its best value so far and the uniform model's value.  The parameters are
checked after every training chunk, the log-likelihoods at every evaluation: those of the
recorded likelihood metrics and, whatever the metrics, that of the guard rows (quantity
``"ll_guard"``; binary models): up to :data:`GUARD_ROWS` fixed training rows (the first 0/1
rows of the ``spl`` subset), with the exact ``log Z`` where enumerating the smaller layer costs
at most :data:`GUARD_EXACT_OPS`, otherwise with an upper bound of their log-likelihood (their
free energies against a lower bound of ``log Z`` from the most probable states that a few
deterministic sweeps and mean-field iterations find).  A bound that falls that far shows the
exact log-likelihood fell at least as far (while the best value is above the uniform model's);
on a diverged model the bound is within about a nat of the exact value.  The guard only reads
the model: seeded runs stay bit-identical.  ``max_ll_drop`` set very large turns the
likelihood checks off.
"""
from __future__ import annotations

import copy
import hashlib
import math
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import algorithms as _algorithms
from . import evaluate as _evaluate
from ._blas import single_threaded_blas
from ._seeds import stream_seed
from .bounds import EPOCHS_MAX, EXACT_BITS_DEFAULT, EXACT_BITS_MAX, MAX_WEIGHT_DEFAULT
from ._validation import check_choice, check_data, check_float, check_int, check_seed
from .algorithms.base import params_healthy
from .errors import Interrupted, RunDiverged
from .evaluate.ais import AIS_BETAS_DEFAULT, AIS_CHAINS_DEFAULT
from .evaluate.metrics import AIS_OPTIONS, METRICS, MetricContext, choose_metrics
from .model import RBM
from .presets import LARGE_MODEL, default_dtype

if TYPE_CHECKING:
    import pandas

    from .algorithms.base import Algorithm

__all__ = ["Run", "RunDiverged", "Interrupted", "train", "batch_bounds", "METRICS", "RECORD_KEYS"]

RECORD_KEYS = ("algorithm", "epoch", "updates", "gibbs_steps", "wall_time")
#: a parameter at or above this fraction of ``max_weight`` counts as pinned (diverged)
PINNED_FRACTION = 0.9
#: a first evaluation slower than this (s) and than 20 updates may include one-off costs (Numba
#: cache loads, thread start-up): under eval_every="auto" the second record then follows after
#: one update/epoch, and the schedule uses the smaller of the two costs from then on
FIRST_EVAL_SUSPECT = 0.05
#: rules whose float32 working copy ``dtype="auto"`` may choose (Gibbs-sampling rules)
_FLOAT32_RULES = ("cd", "pcd", "cg", "sdcp", "csdcp", "ssd")
#: format version of :meth:`Run.state`
STATE_VERSION = 1
#: the likelihood guard (always on for binary models, whatever the metrics): rows of the fixed
#: ``spl`` subset whose log-likelihood it bounds, the most zero-temperature Gibbs sweeps and
#: mean-field iterations it makes per evaluation to find states of high probability, and the
#: largest enumeration (states × n_visible × n_hidden) for which it uses the exact ``log Z``
GUARD_ROWS = 32
GUARD_SWEEPS = 5
GUARD_EXACT_OPS = 2 ** 20
#: key of the guard's best value in ``Run._best`` (not a metric name: it holds a space)
_GUARD_KEY = "log-likelihood bound"


def _softplus(x):
    return np.logaddexp(0.0, x)


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def _log_z_lower_bound(rbm: RBM, V: np.ndarray, *, sweeps: int = GUARD_SWEEPS) -> float:
    """A lower bound on ``log Z`` from states of high probability found near the rows ``V``.

    ``log Z ≥ log Σ_{s∈S} exp(−F(s))`` for any set ``S`` of distinct states, and
    ``log Z ≥ H(m) + bᵀm + Σ_j softplus(c_j + (mᵀW)_j)`` for any ``m ∈ [0, 1]^n`` (naive mean
    field, ``H`` the entropy of independent units of means ``m``).  ``S`` holds the rows and the
    states that ``sweeps`` zero-temperature Gibbs sweeps (``h = [vW + c > 0]``,
    ``v = [Wh + b > 0]``, each lowering the energy) reach from them; the mean-field iterations
    start at ``m = ½``, where the bound is exact for a model without weights.  The search is
    deterministic and only reads the model.  On a diverged model the probability mass sits on a
    few saturated states that the sweeps find, and the bound is close to ``log Z``.

    Parameters
    ----------
    rbm : RBM
        A binary model (float32 or float64; the free energies are summed in float64).
    V : numpy.ndarray, shape (n_rows, n_visible)
        0/1 rows where the search starts.
    sweeps : int
        Most sweeps (they stop at a fixed point) and mean-field iterations.

    Returns
    -------
    float
        A value ``≤ log Z`` (nats).
    """
    W, b, c = rbm.params
    W64, b64, c64 = (np.asarray(a, dtype=np.float64) for a in (W, b, c))
    v0 = v = np.asarray(V, dtype=W.dtype)
    for _ in range(sweeps):             # the search runs in the model's dtype
        h = (v @ W + c > 0).astype(W.dtype)
        nxt = (h @ W.T + b > 0).astype(W.dtype)
        if np.array_equal(nxt, v):
            break
        v = nxt
    S = np.concatenate([v0, v])
    keys = np.packbits(S.astype(np.uint8), axis=1)          # distinct states by their bits
    _, first = np.unique(keys.view(np.dtype((np.void, keys.shape[1]))).ravel(), return_index=True)
    S = S[np.sort(first)].astype(np.float64)
    f = S @ b64 + _softplus(S @ W64 + c64).sum(axis=1)          # −F(s)
    top = float(f.max())
    log_z = top + math.log(float(np.exp(f - top).sum()))
    m = np.full(W64.shape[0], 0.5)
    for _ in range(sweeps + 1):          # naive mean field from m = ½, damped
        p = np.clip(m, 1e-12, 1.0 - 1e-12)
        entropy = float(-(p * np.log(p) + (1.0 - p) * np.log1p(-p)).sum())
        log_z = max(log_z, entropy + float(m @ b64) + float(_softplus(m @ W64 + c64).sum()))
        m = 0.5 * m + 0.5 * _sigmoid(W64 @ _sigmoid(m @ W64 + c64) + b64)
    return log_z


def _log_z_enumerated(rbm: RBM, states: np.ndarray) -> float:
    """``log Z`` summed over ``states``, all the states of the smaller layer (numpy, float64).

    Parameters
    ----------
    rbm : RBM
        A binary model.
    states : numpy.ndarray, shape (2**n, n)
        :func:`rbmviz.evaluate.all_states` of the smaller layer's ``n`` units.

    Returns
    -------
    float
        ``log Z`` (nats).
    """
    W, b, c = (np.asarray(a, dtype=np.float64) for a in rbm.params)
    if states.shape[1] == W.shape[0]:               # enumerate the visible layer
        f = states @ b + _softplus(states @ W + c).sum(axis=1)
    else:                                           # the hidden layer
        f = states @ c + _softplus(states @ W.T + b).sum(axis=1)
    top = float(f.max())
    return top + math.log(float(np.exp(f - top).sum()))


def _log_likelihood_upper_bound(rbm: RBM, V: np.ndarray, *, log_z: float | None = None,
                               sweeps: int = GUARD_SWEEPS) -> float:
    """An upper bound on the mean log-likelihood of binary rows that needs no exact ``log Z``.

    ``log p(v) = −F(v) − log Z ≤ −F(v) − L`` for any ``L ≤ log Z``
    (:func:`_log_z_lower_bound`); with the exact ``log Z`` it is the exact log-likelihood.

    Parameters
    ----------
    rbm : RBM
        A binary model.
    V : numpy.ndarray, shape (n_rows, n_visible)
        0/1 rows.
    log_z : float, optional
        The exact ``log Z`` if known; default: :func:`_log_z_lower_bound` from ``V``.
    sweeps : int
        Passed to :func:`_log_z_lower_bound`.

    Returns
    -------
    float
        At least the mean log-likelihood of ``V`` (nats).
    """
    if log_z is None:
        log_z = _log_z_lower_bound(rbm, V, sweeps=sweeps)
    W, b, c = (np.asarray(a, dtype=np.float64) for a in rbm.params)
    X = np.asarray(V, dtype=np.float64)
    return float((X @ b + _softplus(X @ W + c).sum(axis=1)).mean()) - log_z


def batch_bounds(n_rows: int, batch_size: int) -> np.ndarray:
    """Boundaries of ``n_rows // batch_size`` mini-batches of (nearly) equal size.

    The remainder is spread one row at a time over the first batches (as
    ``numpy.array_split``).

    Parameters
    ----------
    n_rows : int
        Rows of the training data.
    batch_size : int
        Rows per batch (at most ``n_rows``).

    Returns
    -------
    numpy.ndarray, shape (n_batches + 1,)
        Batch ``i`` is rows ``bounds[i]:bounds[i + 1]``.
    """
    n_batches = max(1, n_rows // batch_size)
    sizes = np.full(n_batches, n_rows // n_batches, dtype=np.int64)
    sizes[: n_rows % n_batches] += 1
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _auto_or_int(value, name, low):
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"{name} must be 'auto' or an integer ≥ {low}, got {value!r}")
        return value
    return check_int(value, name, low=low)


class Run:
    """Train ``rbm`` in place on ``data`` with one algorithm, yielding records.

    Parameters
    ----------
    rbm : RBM
        Trained in place.
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
    record_initial : bool
        Make a record at epoch 0, before training (default).  A ready algorithm instance
        (``algorithm.ready``) continues with its chains, velocities and random-stream
        position instead of starting afresh (``partial_fit``).
    **settings
        Algorithm settings (``k``, ``momentum``, ``weight_decay``, ``n_chains`` ...).

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`, ``metric_options`` is not a dict, or
        settings are given with a ready algorithm instance.
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
                 data_probabilities: bool = False, **settings: Any) -> None:
        if not isinstance(rbm, RBM):
            raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
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
        self.exact = rbm.is_binary and _evaluate.exact_feasible(rbm, exact_max_bits)
        self.metrics = choose_metrics(metrics, rbm, exact=self.exact, has_test=test_data is not None,
                                      exact_max_bits=exact_max_bits)
        self._work = self._working_model(dtype)
        binary = rbm.visible_prior.name == "bernoulli"
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
            large = rbm.n_visible * rbm.n_hidden >= LARGE_MODEL
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
        self._guard_rows = self._likelihood_guard_rows()
        self.bounds = batch_bounds(n, self.batch_size)
        self.n_batches = len(self.bounds) - 1
        self._shuffle = np.random.default_rng(stream_seed(self.seed, "shuffle"))
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

    def _likelihood_guard_rows(self):
        """The rows whose log-likelihood the guard watches: the first :data:`GUARD_ROWS` 0/1
        rows of the fixed ``spl`` subset (None for a model that is not binary); sets
        ``_guard_states``, the states it enumerates for the exact ``log Z`` (None: a bound)."""
        rbm = self.rbm
        small = min(rbm.n_visible, rbm.n_hidden)
        self._guard_states = None
        if (rbm.is_binary and small <= EXACT_BITS_MAX
                and 2 ** small * rbm.n_visible * rbm.n_hidden <= GUARD_EXACT_OPS):
            self._guard_states = _evaluate.all_states(small)
        if not rbm.is_binary:
            return None
        X = self._ctx.spl_data
        X = np.ascontiguousarray(X[np.all((X == 0) | (X == 1), axis=1)][:GUARD_ROWS])
        return X if X.shape[0] else None

    @property
    def _guard_exact(self) -> bool:
        """Whether the likelihood guard enumerates the smaller layer (exact ``log Z``)."""
        return self._guard_states is not None

    def _working_model(self, dtype):
        rbm = self.rbm
        if dtype is None:
            return rbm
        if dtype == "auto":
            exact_metric = any(METRICS[m].needs_exact for m in self.metrics)
            if (rbm.dtype == np.float64 and rbm.is_binary and not exact_metric
                    and self.algorithm.name in _FLOAT32_RULES
                    and default_dtype(rbm.n_visible, rbm.n_hidden) == "float32"):
                return rbm.astype("float32")
            return rbm
        check_choice(dtype, "dtype", ("auto", "float32", "float64"))
        return rbm if rbm.dtype == np.dtype(dtype) else rbm.astype(dtype)

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

    # ------------------------------------------------------------------ scheduling
    def _target(self) -> int:
        """Run updates at which the next record is due (never past the last epoch)."""
        nb, last = self.n_batches, self._u_record
        if self.record_every_updates is not None:
            r = self.record_every_updates
            target = (last // r + 1) * r
        elif self.eval_every != "auto":
            span = self.eval_every * nb
            target = (last // span + 1) * span
        else:
            t_upd = self._t_update or self._prior_update_seconds()
            beta = self.eval_budget
            t_eval = min(self._eval_times[-2:]) if self._eval_times else 0.0
            n = max(1, math.ceil((1.0 - beta) / beta * t_eval / t_upd))
            if len(self._eval_times) == 1 and t_eval > max(FIRST_EVAL_SUSPECT, 20 * t_upd):
                n = 1     # the first evaluation may include one-off costs: measure again soon
            target = self._u_record + n
            if nb == 1 or n >= nb:                     # whole epochs: records at epoch ends
                target = -(-target // nb) * nb
            target = max(target, last + 1)
        if self.epochs is not None:
            target = min(target, self.epochs * nb)
        return target

    def _train_until(self, target, deadline):
        """Train in time-bounded chunks until ``target()`` updates (re-read after every
        chunk: auto spacing uses the measured cost of an update), the deadline passes (after
        at least one chunk) or an interrupt was requested."""
        first = True
        while True:
            goal = target()
            if self._u >= goal:
                return
            if not first and deadline is not None and time.perf_counter() >= deadline:
                return
            if not first and self.yield_when is not None and self.yield_when():
                return
            first = False
            budget = self.chunk_seconds
            if deadline is not None:
                budget = min(budget, max(deadline - time.perf_counter(), 0.0))
            t_upd = self._t_update or self._prior_update_seconds()
            n = max(1, min(goal - self._u, int(budget / max(t_upd, 1e-9))))
            self._train_chunk(n)

    def _prior_update_seconds(self):
        """A pessimistic guess of one update's cost before any was measured (about 1 GFLOP/s
        on the Gibbs steps' products), so the first chunk stays short on large models."""
        k = getattr(self.algorithm, "gibbs_steps_per_update", 1) or 1
        flops = 2.0 * self.batch_size * self.rbm.n_visible * self.rbm.n_hidden * (2 * k + 4)
        return 5e-6 + flops / 1e9

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

    # ------------------------------------------------------------------ divergence
    def _diverged(self, quantity, value, why, *, in_epoch=True):
        self._sync()
        first = self._last_good
        lr = getattr(self.algorithm, "learning_rate", None)
        hint = f" (learning_rate={lr:g} may be too large)" if lr is not None else ""
        epoch = (self.epoch + 1 if self._pos else self.epoch) if in_epoch else self._epoch_value()
        when = (f"in epoch {epoch}" if in_epoch else
                f"at the evaluation after {self.algorithm.updates} updates (epoch {epoch})")
        msg = (f"run diverged: {why} {when} (last healthy evaluation at epoch {first}){hint}; "
               f"training stopped")
        self.error = RunDiverged(msg, epoch=epoch, last_good_epoch=first,
                                 quantity=quantity, value=value, records=self.records)
        raise self.error

    def _check_parameters(self):
        for name, arr in zip(("W", "b", "c"), self._work.params):
            if not np.all(np.isfinite(arr)):
                self._diverged(name, float("nan"), f"{name} contains NaN or inf")
            big = float(np.max(np.abs(arr))) if arr.size else 0.0
            if big > self.max_weight:
                self._diverged(name, big, f"max |{name}| = {big:.3g} exceeds max_weight={self.max_weight:g}")
            if big >= PINNED_FRACTION * self.max_weight:
                self._diverged(name, big, f"max |{name}| = {big:.3g} is pinned near "
                                          f"max_weight={self.max_weight:g} (parameter growth)")

    def _check_collapse(self, m, val):
        """Likelihood collapse: ``val`` more than ``max_ll_drop`` below both its best so far
        and the uniform model's value (``−n_visible log 2`` for binary visibles)."""
        best = self._best.get(m, val)
        ref = min(best, -self.rbm.n_visible * math.log(2.0)) if self.rbm.is_binary else best
        if val < ref - self.max_ll_drop:
            self._diverged(m, val, f"{m} collapsed to {val:.4g} nats (best {best:.4g}; allowed drop "
                                   f"{self.max_ll_drop:.3g} below min(best, uniform model))",
                           in_epoch=False)
        self._best[m] = max(best, val)

    def _check_likelihood_bound(self):
        """The likelihood guard, whatever the metrics: the mean log-likelihood of the guard
        rows — exact when enumerating the smaller layer is cheap (at most
        :data:`GUARD_EXACT_OPS`), otherwise an upper bound of it
        (:func:`_log_likelihood_upper_bound`) — more than ``max_ll_drop`` below both its best
        value so far and the uniform model's value (as a collapsing likelihood metric).  While
        the best value is above the uniform model's, a bound that falls that far shows that the
        exact log-likelihood fell at least as far."""
        rows, work, exact = self._guard_rows, self._work, self._guard_exact
        with single_threaded_blas():     # small products: no waiting for BLAS threads
            log_z = _log_z_enumerated(work, self._guard_states) if exact else None
            val = _log_likelihood_upper_bound(work, rows, log_z=log_z)
        best = self._best.get(_GUARD_KEY, val)
        uniform = -self.rbm.n_visible * math.log(2.0)
        if val < min(best, uniform) - self.max_ll_drop:
            what = "to" if exact else "to at most"
            how = ("exact log Z" if exact else
                   "an upper bound from their free energies and the most probable states found")
            self._diverged("ll_guard", val,
                           f"the log-likelihood of {rows.shape[0]} training rows collapsed "
                           f"{what} {val:.4g} nats ({how}; best {best:.4g}; allowed drop "
                           f"{self.max_ll_drop:.3g} below min(best, uniform model "
                           f"{uniform:.4g}))", in_epoch=False)
        self._best[_GUARD_KEY] = max(best, val)

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
        if self.error is not None:
            raise ValueError("a diverged run has no state to continue")
        self._sync()
        return {"version": STATE_VERSION, "fingerprint": self._fingerprint(),
                "model": self.rbm.copy(), "work": None if self._work is self.rbm else self._work.copy(),
                "algorithm": copy.deepcopy(self.algorithm),
                "shuffle": self._shuffle.bit_generator.state, "epoch": self.epoch, "pos": self._pos,
                "perm": None if self._perm is None else self._perm.copy(),
                "wall_time": self.wall_time, "eval_time": self.eval_time,
                "records": list(self.records), "last_good": self._last_good,
                "best": dict(self._best), "t_update": self._t_update,
                "eval_times": list(self._eval_times), "u_record": self._u_record,
                "stopped": self._stopped}

    def _fingerprint(self) -> dict:
        """What a state must agree on with the run it is restored into (the data by a digest
        of its rows, computed once: they do not change during a run)."""
        if self._data_digest is None:
            self._data_digest = hashlib.blake2b(np.ascontiguousarray(self.data).view(np.uint8),
                                                digest_size=16).hexdigest()
        return {"algorithm": self.algorithm.name,
                "settings": repr(sorted(self.algorithm.settings().items())),
                "shape": [self.rbm.n_visible, self.rbm.n_hidden], "dtype": str(self._work.dtype),
                "units": [self.rbm.visible, self.rbm.hidden], "rows": int(self.data.shape[0]),
                "batch_size": self.batch_size, "seed": self.seed, "data": self._data_digest}

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
        if self.records or self._u:
            raise ValueError("restore() needs a run that has not started")
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            got = state.get("version") if isinstance(state, dict) else type(state).__name__
            raise ValueError(f"not a run state of format version {STATE_VERSION} (got {got!r})")
        mine, theirs = self._fingerprint(), state["fingerprint"]
        diff = [k for k in mine if mine[k] != theirs.get(k)]
        if diff:
            k = diff[0]
            raise ValueError(f"the run state is of another run: its {k} is {theirs.get(k)!r}, "
                             f"this run's is {mine[k]!r}")
        model = state["model"]
        self.rbm.__dict__.update(model.copy().__dict__)
        if state["work"] is None:
            self._work = self.rbm
        else:
            self._work = state["work"].copy()
        self.algorithm = copy.deepcopy(state["algorithm"])
        self._ctx.algorithm = self.algorithm
        self._shuffle.bit_generator.state = state["shuffle"]
        self.epoch, self._pos = state["epoch"], state["pos"]
        self._perm = None if state["perm"] is None else state["perm"].copy()
        self.wall_time, self.eval_time = state["wall_time"], state["eval_time"]
        self.records = list(state["records"])
        self._last_good, self._best = state["last_good"], dict(state["best"])
        self._t_update, self._eval_times = state["t_update"], list(state["eval_times"])
        self._u_record, self._stopped = state["u_record"], state["stopped"]

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

