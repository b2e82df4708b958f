"""The metrics registry: every quantity a run can record, by name.

A :class:`Metric` is ``fn(rbm, ctx) -> float`` plus what the run loop needs to know about it:
a label for axes and legends, whether it needs binary units (``binary_only``), held-out rows
(``needs_test``) or an enumerable model (``needs_exact``), and a rough ``cost`` class.  The run
loop (:class:`rbmviz.runs.Run`) measures what each evaluation really costs and spaces them on a
time budget; ``cost`` only orders the defaults.  :func:`register` adds a metric (e.g. from a
notebook): it is then accepted by ``Run(metrics=[...])``, ``train`` and the CLI like the
built-in ones.

The context (:class:`MetricContext`) holds the data, the fixed subsets and the options, and a
per-evaluation cache, so that ``train_ll`` and ``test_ll`` share one exact ``log Z`` and
``ais_train_ll`` / ``ais_test_ll`` one AIS run.

Built-in metrics (all log-likelihoods in nats per row):

========================  ==================================================================
``train_ll``/``test_ll``  exact average log-likelihood (enumeration; the papers' ATLL)
``spl``                   stochastic pseudo-log-likelihood, fixed random subset of sites and
                          rows (:func:`~rbmviz.evaluate.pseudo.stochastic_pseudo_log_likelihood`)
``pseudo_ll``             pseudo-log-likelihood over all sites (first ``pl_rows`` rows)
``recon_error``           mean squared reconstruction error per pixel (first ``pl_rows`` rows)
``weight_norm``           Frobenius norm of W
``ais_train_ll``          average log-likelihood with an AIS estimate of log Z
``ais_test_ll``           (Salakhutdinov & Murray 2008; the AIS theory page of the documentation)
``tap_ll``                TAP log-likelihood (Tramel et al. 2018, eq. 39)
========================  ==================================================================
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .. import tap as _tap
from .._validation import check_choice, check_data, check_int
from ..bounds import EXACT_BITS_DEFAULT
from ..model import RBM as _RBM
from .ais import ais_log_likelihood, ais_log_partition
from .exact import log_likelihood_exact, log_partition_exact
from .pseudo import (_reconstruction_error, _spl, pseudo_log_likelihood, reconstruction_error,
                     spl_subset, stochastic_pseudo_log_likelihood)

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["Metric", "MetricContext", "METRICS", "register", "get", "names", "AIS_OPTIONS",
           "default_metrics", "choose_metrics"]

#: options of the AIS metrics (passed to :func:`rbmviz.evaluate.ais_log_partition`)
AIS_OPTIONS = ("n_chains", "n_betas", "seed", "betas", "dtype")
COSTS = ("trivial", "cheap", "moderate", "expensive")


@dataclasses.dataclass(frozen=True)
class Metric:
    """One recordable quantity.

    Parameters
    ----------
    name : str
        Key in the records.
    fn : callable ``(rbm, ctx) -> float``
        Computes the value; ``ctx`` is a :class:`MetricContext`.
    label : str
        Human-readable label (axes, legends); says how it is computed when that matters.
    binary_only : bool
        Needs binary (Bernoulli) visible and hidden units.
    needs_test : bool
        Needs ``test_data``.
    needs_exact : bool
        Needs exact enumeration (the smaller layer at most ``exact_max_bits`` units).
    cost : {"trivial", "cheap", "moderate", "expensive"}
        Rough cost class; the run measures the real cost.
    higher_is_better : bool
        Direction of improvement (used by the divergence guard: a log-likelihood that falls
        far below its best shows a collapsing model).
    likelihood : bool
        A log-likelihood (or pseudo-/TAP log-likelihood) per row in nats: watched by the
        divergence guard of the run loop.
    """

    name: str
    fn: Callable
    label: str
    binary_only: bool = True
    needs_test: bool = False
    needs_exact: bool = False
    cost: str = "cheap"
    higher_is_better: bool = True
    likelihood: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"metric name must be an identifier string, got {self.name!r}")
        if not callable(self.fn):
            raise TypeError(f"metric fn must be callable, got {type(self.fn).__name__}")
        if self.cost not in COSTS:
            raise ValueError(f"metric cost must be one of {list(COSTS)}, got {self.cost!r}")


class MetricContext:
    """What a metric may use: the data, fixed subsets, options and a per-evaluation cache.

    Parameters
    ----------
    data : numpy.ndarray, shape (n_samples, n_visible)
        Training rows.
    test_data : numpy.ndarray, optional
        Held-out rows.
    pl_rows : int
        Rows (the first ones) for ``pseudo_ll``, ``recon_error`` and ``tap_ll``.
    spl_rows, spl_sites : int
        Size of the fixed subset of ``spl`` (:func:`~rbmviz.evaluate.pseudo.spl_subset`).
    seed : int
        Seed of that subset.
    metric_options : dict, optional
        AIS options (:data:`AIS_OPTIONS`).
    algorithm : Algorithm, optional
        The training rule (``tap_ll`` uses its ``order``).

    Attributes
    ----------
    data, test_data, pl_rows, seed, metric_options, algorithm
        The parameters, as given.
    spl_subset : tuple of numpy.ndarray
        ``(rows, sites)``, the fixed subset of ``spl`` (drawn once per run from its seed).
    spl_data, spl_local : numpy.ndarray, tuple of numpy.ndarray
        The subset's rows, and the subset in their indices (what ``spl`` evaluates).
    cache : dict
        Values computed once per evaluation (cleared by the run before each).
    """

    def __init__(self, data: np.ndarray, test_data: np.ndarray | None = None, *,
                 pl_rows: int = 1000, spl_rows: int = 100, spl_sites: int = 16, seed: int = 0,
                 metric_options: dict | None = None, algorithm: Any = None) -> None:
        data = check_data(data, "data", binary=False, dtype=getattr(data, "dtype", np.float64))
        if test_data is not None:
            test_data = check_data(test_data, "test_data", n_visible=data.shape[1], binary=False,
                                   dtype=getattr(test_data, "dtype", np.float64))
        self.data = data
        self.test_data = test_data
        self.pl_rows = check_int(pl_rows, "pl_rows", low=1)
        self.seed = seed
        self.spl_subset = spl_subset(data.shape[0], data.shape[1], rows=spl_rows,
                                     sites=spl_sites, seed=seed)
        # the subset's rows, copied once: ``spl`` then checks ~100 rows per evaluation, not
        # the whole training set (28 ms per evaluation on 10,000 MNIST rows)
        self.spl_data = np.ascontiguousarray(data[self.spl_subset[0]])
        self.spl_local = (np.arange(self.spl_subset[0].size, dtype=np.int64), self.spl_subset[1])
        self.metric_options = {} if metric_options is None else dict(metric_options)
        self.algorithm = algorithm
        self.cache: dict = {}
        #: set by :class:`rbmviz.runs.Run`, which has checked the rows (0/1, or in [0, 1]
        #: with ``data_probabilities``) and the model: ``spl`` and ``recon_error`` then skip
        #: their argument checks
        self._checked = False

    @property
    def subset(self) -> np.ndarray:
        """The first ``pl_rows`` training rows."""
        return self.data[: self.pl_rows]

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per evaluation (the run clears :attr:`cache` before each).

        Parameters
        ----------
        key : str
            Name of the value in :attr:`cache`.
        compute : callable
            Computes the value, without arguments.

        Returns
        -------
        object
            The cached or newly computed value.
        """
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]


def _exact_log_z(rbm, ctx):
    return ctx.cached("log_z_exact", lambda: log_partition_exact(rbm))


def _spl_metric(rbm, ctx):
    """``spl`` of the context's fixed subset (checks skipped on rows a run has checked)."""
    if ctx._checked and rbm.dtype == ctx.spl_data.dtype:
        return _spl(rbm, ctx.spl_data, ctx.spl_local[1])
    return stochastic_pseudo_log_likelihood(rbm, ctx.spl_data, subset=ctx.spl_local)


def _recon_metric(rbm, ctx):
    """``recon_error`` of the first ``pl_rows`` rows (checks skipped on rows a run has
    checked)."""
    if ctx._checked and rbm.dtype == ctx.data.dtype:
        return _reconstruction_error(rbm, ctx.subset)
    return reconstruction_error(rbm, ctx.subset)


def _ais(rbm, ctx):
    return ctx.cached("log_z_ais", lambda: ais_log_partition(rbm, data=ctx.data, **ctx.metric_options))


METRICS: dict[str, Metric] = {}


def register(metric: Metric, *, replace: bool = False) -> Metric:
    """Add ``metric`` to :data:`METRICS`.

    Parameters
    ----------
    metric : Metric
        The metric to add.
    replace : bool
        Redefine an existing name.

    Returns
    -------
    Metric
        ``metric`` itself.

    Raises
    ------
    TypeError
        If ``metric`` is not a :class:`Metric`.
    ValueError
        If the name is registered already and ``replace`` is False.
    """
    if not isinstance(metric, Metric):
        raise TypeError(f"metric must be an rbmviz.evaluate.metrics.Metric, got {type(metric).__name__}")
    if metric.name in METRICS and not replace:
        raise ValueError(f"metric {metric.name!r} is already registered (pass replace=True)")
    METRICS[metric.name] = metric
    return metric


def get(name: str) -> Metric:
    """The registered metric ``name``.

    Parameters
    ----------
    name : str
        The metric's record column, e.g. ``"train_ll"`` (:func:`names` lists the registered
        ones).

    Returns
    -------
    Metric
        The metric.

    Raises
    ------
    ValueError
        Listing the names, if ``name`` is not registered.
    """
    try:
        return METRICS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown metric {name!r}; expected one of {names()}") from None


def names() -> list[str]:
    """Registered metric names.

    Returns
    -------
    list of str
        The keys of :data:`METRICS`, in registration order.
    """
    return list(METRICS)


for _m in (
    Metric("train_ll", lambda rbm, ctx: log_likelihood_exact(rbm, ctx.data, _exact_log_z(rbm, ctx)),
           "exact log-likelihood, training rows (nats)", needs_exact=True, cost="moderate",
           likelihood=True),
    Metric("test_ll", lambda rbm, ctx: log_likelihood_exact(rbm, ctx.test_data, _exact_log_z(rbm, ctx)),
           "exact log-likelihood, test rows (nats)", needs_exact=True, needs_test=True,
           cost="moderate", likelihood=True),
    Metric("spl", _spl_metric,
           "stochastic pseudo-log-likelihood (fixed random subset of sites and rows; nats)",
           cost="cheap", likelihood=True),
    Metric("pseudo_ll", lambda rbm, ctx: pseudo_log_likelihood(rbm, ctx.subset),
           "pseudo-log-likelihood, all sites (nats)", cost="expensive", likelihood=True),
    Metric("recon_error", _recon_metric,
           "reconstruction error (mean squared, per pixel)", cost="cheap", higher_is_better=False),
    Metric("weight_norm", lambda rbm, ctx: float(np.linalg.norm(rbm.W)), "‖W‖ (Frobenius)",
           binary_only=False, cost="trivial", higher_is_better=False),
    Metric("ais_train_ll", lambda rbm, ctx: float(ais_log_likelihood(rbm, ctx.data, log_z=_ais(rbm, ctx))),
           "log-likelihood with AIS log Z, training rows (nats)", cost="expensive", likelihood=True),
    Metric("ais_test_ll", lambda rbm, ctx: float(ais_log_likelihood(rbm, ctx.test_data, log_z=_ais(rbm, ctx))),
           "log-likelihood with AIS log Z, test rows (nats)", needs_test=True, cost="expensive",
           likelihood=True),
    Metric("tap_ll", lambda rbm, ctx: float(_tap.log_likelihood(
               rbm, ctx.subset, order=getattr(ctx.algorithm, "order", 2))),
           "TAP log-likelihood (nats)", binary_only=False, cost="expensive", likelihood=True),
):
    register(_m)
del _m


def default_metrics(rbm: RBM, *, exact: bool, has_test: bool) -> list[str]:
    """The metrics a run records by default.

    Exact log-likelihoods where enumeration is cheap (``exact``) plus the all-sites
    pseudo-likelihood, reconstruction error and weight norm; ``spl``, reconstruction error and
    weight norm for larger binary models; the TAP log-likelihood and weight norm for
    real-valued units.

    Parameters
    ----------
    rbm : RBM
        The model (its size and unit types decide).
    exact : bool
        Whether exact enumeration is cheap for it.
    has_test : bool
        Whether the run has test data (then ``test_ll`` too).

    Returns
    -------
    list of str
        Metric names.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`.
    """
    if not isinstance(rbm, _RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    if not rbm.is_binary:
        return ["tap_ll", "weight_norm"]          # the binary-only measures do not apply
    if exact:
        return ["train_ll"] + (["test_ll"] if has_test else []) + ["pseudo_ll", "recon_error",
                                                                    "weight_norm"]
    return ["spl", "recon_error", "weight_norm"]


def choose_metrics(metrics: str | Sequence[str], rbm: RBM, *, exact: bool, has_test: bool,
                   exact_max_bits: int = EXACT_BITS_DEFAULT) -> list[str]:
    """Validate ``metrics`` against the model and the data.

    Parameters
    ----------
    metrics : "auto" or sequence of str
        Metric names; ``"auto"`` gives :func:`default_metrics`.
    rbm, exact, has_test
        As in :func:`default_metrics`.
    exact_max_bits : int
        The limit of ``exact``, named in the message.

    Returns
    -------
    list of str
        The metric names, checked.

    Raises
    ------
    ValueError
        Naming the metric that cannot be computed and why (unknown name, needs binary units,
        exact enumeration or test data).
    """
    if isinstance(metrics, str):
        if metrics != "auto":
            raise ValueError(f"metrics must be 'auto' or a list of names from {names()}, got {metrics!r}")
        metrics = default_metrics(rbm, exact=exact, has_test=has_test)
    chosen = [check_choice(m, "metric", METRICS) for m in metrics]
    binary_only = [m for m in chosen if METRICS[m].binary_only]
    if binary_only and not rbm.is_binary:
        rbm.require_binary(f"metric(s) {binary_only}")
    needs_exact = [m for m in chosen if METRICS[m].needs_exact]
    if needs_exact and not exact:
        raise ValueError(f"exact log-likelihood needs a layer of at most {exact_max_bits} units "
                         f"(model is {rbm.n_visible}x{rbm.n_hidden}); drop {needs_exact} "
                         f"from metrics or use 'spl' / AIS ('ais_test_ll')")
    for m in chosen:
        if METRICS[m].needs_test and not has_test:
            raise ValueError(f"metric {m!r} needs test_data")
    return chosen
