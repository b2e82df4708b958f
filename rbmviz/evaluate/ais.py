"""Annealed importance sampling (AIS) estimates of ``log Z`` and of the average
log-likelihood of binary RBMs too large to enumerate (Salakhutdinov & Murray 2008; Neal 2001;
the AIS theory page of the documentation).

Both functions are re-exported by :mod:`rbmviz.evaluate`.

Algorithm (the AIS theory page of the documentation): a base-rate model ``A`` (``W_A = 0``, hidden biases 0, visible
biases ``b_A``) with ``log Z_A = n_h log 2 + Σ_i softplus(b_A,i)``; inverse temperatures
``0 = β_0 < β_1 < … < β_K = 1`` and intermediate distributions
``log p*_k(v) = (1−β_k) b_Aᵀv + β_k bᵀv + Σ_j softplus(β_k (c_j + (vW)_j))``; ``R``
independent runs ``v_1 ~ p_A``, ``v_{k+1} ~ T_k(· | v_k)`` (one block-Gibbs sweep leaving
``p_k`` invariant), log-weights ``log w = Σ_{k=1}^{K} [log p*_k(v_k) − log p*_{k−1}(v_k)]``
accumulated in float64, and

    ``log Ẑ = log Z_A + logsumexp_r(log w_r) − log R``.

The spread is that of Salakhutdinov & Murray's code: ``σ̂ = std(w)/√R`` (``ddof = 1``) and the
interval ``log Z_A + log(r̂ ± 3σ̂)`` with ``r̂ = mean(w)``.  Because ``log`` is concave, ``log Ẑ``
tends to *under*-estimate ``log Z`` (and so over-estimate log-likelihoods).

Matrix products use BLAS in the dtype of the products (``dtype``, by default the model's);
the sampling and weight updates are fused Numba kernels (:mod:`rbmviz.kernels.ais`) on a
counter-based random stream, so a seed gives the same estimate for any number of threads.
The chains are split into fixed blocks run by ``threads`` Python threads, each block through
every temperature with single-threaded BLAS and kernels.
"""
from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_data, check_float, check_int, check_real, check_seed
from ..bounds import check_memory
from .._blas import set_numba_threads, single_threaded_blas
from .._seeds import stream_seed
from ..kernels.ais import ais_base_sample_, ais_hidden_step_, ais_visible_step_
from .._numerics import softplus as _softplus
from ..model import RBM

__all__ = ["AIS_CHAINS_DEFAULT", "AIS_BETAS_DEFAULT", "AISResult", "AISLogLikelihood", "ais_log_partition", "ais_log_likelihood",
           "ais_betas", "base_rate_visible_bias"]

#: pseudo-count per mini-batch of the base-rate model (Salakhutdinov & Murray's base_rate.m)
PSEUDO_COUNT = 5
#: p̂ is clipped to [EPS, 1 − EPS] (a pixel that is on in every row must not give an infinite bias)
EPS = 1e-6
#: chains are run in blocks of about this many (the unit of work of one thread)
CHAIN_BLOCK = 50
#: the default number of AIS chains (Salakhutdinov & Murray 2008; Upadhya & Sastry's
#: ATLL protocol: 100 chains)
AIS_CHAINS_DEFAULT = 100
#: the default number of intermediate temperatures (the same protocols: 10,000)
AIS_BETAS_DEFAULT = 10_000


class AISResult(NamedTuple):
    """An AIS estimate of ``log Z``.

    Unpacks as ``log_z, log_z_low, log_z_high, log_weights``; ``float(result)`` is ``log_z``.

    Parameters
    ----------
    log_z : float
        The estimate ``log Z_A + log r̂``, with ``r̂`` the mean importance weight.
    log_z_low : float
        ``log Z_A + log(r̂ − 3σ̂)``; ``-inf`` when ``r̂ − 3σ̂ ≤ 0``.
    log_z_high : float
        ``log Z_A + log(r̂ + 3σ̂)``.
    log_weights : numpy.ndarray, shape (n_chains,)
        Log importance weights of the runs.
    """

    log_z: float
    log_z_low: float
    log_z_high: float
    log_weights: np.ndarray

    def __float__(self):
        return float(self.log_z)

    def __repr__(self):
        return (f"AISResult(log_z={self.log_z:.6g}, interval=[{self.log_z_low:.6g}, "
                f"{self.log_z_high:.6g}], runs={len(self.log_weights)})")

    @property
    def interval(self) -> tuple[float, float]:
        """``(log_z_low, log_z_high)``: ``log Z_A + log(r̂ ∓ 3σ̂)``."""
        return self.log_z_low, self.log_z_high

    @property
    def log_z_base(self) -> float:
        """``log Z_A`` of the base-rate model, ``log_z − (logsumexp(log w) − log R)``."""
        lw = np.asarray(self.log_weights)
        if lw.size == 0:
            return math.nan
        m = float(lw.max())
        return self.log_z - (m + math.log(float(np.exp(lw - m).mean())))


class AISLogLikelihood(NamedTuple):
    """Average log-likelihood ``mean_n(−F(v_n)) − log Ẑ`` (nats) with the implied interval.

    The interval is the one implied by the ±3σ̂ interval of ``log Ẑ``.  ``float(result)`` is
    ``ll``.

    Parameters
    ----------
    ll : float
        The estimate.
    ll_low : float
        ``mean(−F) − log_z_high``.
    ll_high : float
        ``mean(−F) − log_z_low``.
    log_z : AISResult
        The estimate of ``log Z`` used.
    """

    ll: float
    ll_low: float
    ll_high: float
    log_z: AISResult

    def __float__(self):
        return float(self.ll)

    def __repr__(self):
        return (f"AISLogLikelihood(ll={self.ll:.6g}, "
                f"interval=[{self.ll_low:.6g}, {self.ll_high:.6g}])")


def ais_betas(n_betas: int = AIS_BETAS_DEFAULT, schedule: str = "linear") -> np.ndarray:
    """Inverse temperatures from 0 to 1 (both included).

    Parameters
    ----------
    n_betas : int
        Number of temperatures of the linear schedule.
    schedule : {"linear", "sm"}
        ``"linear"``: ``linspace(0, 1, n_betas)`` (Upadhya & Sastry; PyDeep's default of
        10,000).  ``"sm"``: Salakhutdinov & Murray's schedule, steps 1e-3 on [0, 0.5], 1e-4 on
        [0.5, 0.9], 1e-5 on [0.9, 1] (14,501 values, duplicates at 0.5 and 0.9 dropped;
        ``n_betas`` is ignored).

    Returns
    -------
    numpy.ndarray
        The increasing schedule, float64.

    Raises
    ------
    ValueError
        For an unknown ``schedule``.
    """
    if schedule == "sm":
        b = np.concatenate([np.linspace(0.0, 0.5, 501), np.linspace(0.5, 0.9, 4001)[1:],
                            np.linspace(0.9, 1.0, 10001)[1:]])
        return b
    if schedule != "linear":
        raise ValueError(f"unknown schedule {schedule!r}; expected 'linear' or 'sm'")
    n_betas = check_int(n_betas, "n_betas", low=2)
    check_memory(8.0 * n_betas, f"ais_betas with n_betas={n_betas:,}")
    return np.linspace(0.0, 1.0, n_betas)


def base_rate_visible_bias(data: ArrayLike, batch_size: int = 100, eps: float = EPS) -> np.ndarray:
    """Visible biases of the base-rate model fitted to ``data`` (the AIS theory page).

    ``p̂_i = (s_i + 5B) / (N + 5B)`` with pixel counts ``s_i``, ``N`` rows and
    ``B = max(1, N // batch_size)`` mini-batches (Salakhutdinov & Murray's ``base_rate.m``
    with 100-row batches), clipped to ``[eps, 1 − eps]``.

    Parameters
    ----------
    data : array_like, shape (n_samples, n_visible)
        Training rows.
    batch_size : int
        Rows per mini-batch of the pseudo-count.
    eps : float
        Clipping of ``p̂``.

    Returns
    -------
    numpy.ndarray, shape (n_visible,)
        ``logit(p̂)``, float64.
    """
    X = check_data(data, "data")
    batch_size = check_int(batch_size, "batch_size", low=1)
    eps = check_float(eps, "eps", low=0.0, low_open=True, high=0.5)
    n = X.shape[0]
    nb = max(1, n // batch_size)
    p = (X.sum(axis=0) + PSEUDO_COUNT * nb) / (n + PSEUDO_COUNT * nb)
    p = np.clip(p, eps, 1.0 - eps)
    return np.log(p) - np.log1p(-p)


def _check_betas(betas):
    try:
        betas = np.asarray(betas, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"betas must be a 1-D array of numbers: {exc}") from None
    if betas.ndim != 1 or betas.size < 2:
        raise ValueError(f"betas must be a 1-D array of at least 2 values, got shape {betas.shape}")
    if not np.all(np.isfinite(betas)):
        raise ValueError("betas contains NaN or inf")
    if betas[0] != 0.0 or betas[-1] != 1.0:
        raise ValueError(f"betas must start at 0 and end at 1, got {betas[0]!r} … {betas[-1]!r}")
    if np.any(np.diff(betas) <= 0):
        raise ValueError("betas must be strictly increasing (drop duplicates, e.g. with np.unique)")
    return betas


def _ais_bytes(n_chains: int, n_betas: int, nv: int, nh: int, itemsize: int,
               workers: int) -> float:
    """Bytes an AIS run allocates: the weights of every chain and the temperatures, one copy
    of ``W`` in the product dtype, and each worker's block of chain states and buffers
    (:func:`_run_chains`)."""
    n_blocks = -(-n_chains // CHAIN_BLOCK)
    block = -(-n_chains // n_blocks)
    per_worker = block * (2 * (nv + nh) * itemsize + 3 * max(nv, nh) * 8 + 8)
    return (8.0 * n_chains + 8.0 * n_betas + nv * nh * itemsize
            + min(workers, n_blocks) * per_worker)


def ais_log_partition(rbm: RBM, n_chains: int = AIS_CHAINS_DEFAULT,
                      n_betas: int = AIS_BETAS_DEFAULT, seed: int = 0,
                      data: ArrayLike | None = None, *, betas: ArrayLike | None = None,
                      dtype: str | None = None, base_batch_size: int = 100,
                      threads: int | None = None, progress: bool = False) -> AISResult:
    """AIS estimate of ``log Z`` of ``rbm`` (the AIS theory page of the documentation).

    Parameters
    ----------
    rbm : RBM
        A binary model.
    n_chains : int
        Independent AIS runs ``R`` (100 in the papers).
    n_betas : int
        Number of inverse temperatures, 0 and 1 included, of the linear schedule
        (``linspace(0, 1, n_betas)``; 10,000 in Upadhya & Sastry).  Ignored when ``betas``
        is given.
    seed : int
        Seed of the run's counter-based random stream.
    data : array (n_samples, n_visible), optional
        Training rows for the base-rate model (:func:`base_rate_visible_bias`); without
        them the base model uses the model's own visible biases ``b`` (exact for ``W = 0``).
    betas : array, optional
        Own schedule: strictly increasing from 0 to 1, e.g. ``ais_betas(schedule="sm")``.
    dtype : {None, "float32", "float64"}
        dtype of the matrix products (default: the model's).  float32 halves the time for
        large float64 models; weights are accumulated in float64 either way.
    base_batch_size : int
        Rows per batch in the pseudo-count of the base-rate model.
    threads : int, optional
        Worker threads (default: Numba's thread count).  The chains are split into blocks
        of about :data:`CHAIN_BLOCK` (fixed by ``n_chains`` alone); each block is run
        through all temperatures by one worker with single-threaded BLAS and kernels.  The
        runs are independent, so no thread waits for another, and BLAS and Numba thread
        pools never take turns on the cores (which costs far more than the products on a
        busy 2-core machine).  BLAS is limited to one thread per caller for the duration of
        the call (``threadpoolctl``; process-wide).  The estimate does not depend on
        ``threads``.
    progress : bool
        Show a tqdm bar over the temperatures.

    Returns
    -------
    AISResult
        ``(log_z, log_z_low, log_z_high, log_weights)``; also ``.log_z_base``,
        ``.interval`` and ``float(result)``.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM` or ``betas`` is not an array of numbers.
    ValueError
        For a bad schedule (``betas`` not strictly increasing from 0 to 1), an unknown
        ``dtype``, parameters containing NaN or inf, or ``n_chains`` and ``n_betas`` whose
        arrays would take more than :data:`rbmviz.bounds.MEMORY_MAX` bytes (the message
        states the estimate), before anything is allocated.
    KeyboardInterrupt
        Ctrl-C stops every worker after its current temperature (within milliseconds); a
        partial annealing run gives no estimate, so nothing is returned.

    Examples
    --------
    >>> import rbmviz
    >>> from rbmviz.evaluate import ais_log_partition, log_partition_exact
    >>> rbm = rbmviz.RBM(10, 8, seed=0, scale=1.0)
    >>> res = ais_log_partition(rbm, n_chains=100, n_betas=1000, seed=1)
    >>> abs(res.log_z - log_partition_exact(rbm)) < 0.05
    True
    """
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    n_chains = check_int(n_chains, "n_chains", low=1)
    seed = check_seed(seed)
    if betas is None:
        n_betas = check_int(n_betas, "n_betas", low=2)
    if dtype is None:
        dt = rbm.dtype
    elif str(dtype) in ("float32", "float64"):
        dt = np.dtype(str(dtype))
    else:
        raise ValueError(f"dtype must be None, 'float32' or 'float64', got {dtype!r}")
    if threads is None:
        threads = numba.get_num_threads()
    threads = check_int(threads, "threads", low=1)
    nv, nh = rbm.n_visible, rbm.n_hidden
    if betas is None:
        check_memory(_ais_bytes(n_chains, n_betas, nv, nh, dt.itemsize, threads),
                     f"ais_log_partition with n_chains={n_chains:,} and n_betas={n_betas:,} "
                     f"on a {nv}×{nh} model")
        betas = ais_betas(n_betas)
    else:
        betas = _check_betas(betas)
        check_memory(_ais_bytes(n_chains, betas.size, nv, nh, dt.itemsize, threads),
                     f"ais_log_partition with n_chains={n_chains:,} and {betas.size:,} betas "
                     f"on a {nv}×{nh} model")
    W = np.ascontiguousarray(rbm.W, dtype=dt)
    b = rbm.b.astype(np.float64)
    c = rbm.c.astype(np.float64)
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b)) and np.all(np.isfinite(c))):
        raise ValueError("the model's parameters contain NaN or inf")
    if data is None:
        b_base = b.copy()
    else:
        b_base = base_rate_visible_bias(check_data(data, "data", n_visible=nv), base_batch_size)
    db = b - b_base
    log_z_base = nh * math.log(2.0) + float(_softplus(b_base).sum())

    key = stream_seed(seed, "ais")
    log_w = np.zeros(n_chains)
    # blocks of chains fixed by n_chains alone (BLAS rounds the rows of a product differently
    # depending on how many rows it gets), so the estimate does not depend on ``threads``
    n_blocks = -(-n_chains // CHAIN_BLOCK)
    bounds = np.linspace(0, n_chains, n_blocks + 1).round().astype(np.int64)
    blocks = [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=n_blocks * (len(betas) - 1), unit="β", desc="AIS")
    stop = threading.Event()
    args = (W, b, c, b_base, db, betas, key, log_w, bar, stop)
    try:
        with single_threaded_blas():
            if threads == 1 or n_blocks == 1:
                for lo, hi in blocks:
                    _run_chains(*args, lo, hi)
            else:
                with ThreadPoolExecutor(max_workers=min(threads, n_blocks)) as pool:
                    try:
                        for f in [pool.submit(_run_chains, *args, lo, hi, True) for lo, hi in blocks]:
                            f.result()
                    except BaseException:
                        # Ctrl-C reaches the main thread only: tell the workers to stop after
                        # their current temperature, so the pool's shutdown does not wait for
                        # the whole annealing run
                        stop.set()
                        raise
    finally:
        if bar is not None:
            bar.close()
    return _summarise(log_w, log_z_base)


def _run_chains(W, b, c, b_base, db, betas, key, log_w, bar, stop, lo, hi, worker=False):
    """AIS runs ``lo … hi−1`` (all temperatures), writing ``log_w[lo:hi]``.  In a worker
    thread the kernels run on that thread alone (``numba.set_num_threads`` is per thread).
    Returns early, writing nothing, once the event ``stop`` is set (Ctrl-C in the caller:
    a temperature step of a block takes milliseconds, so the interrupt takes effect at once)."""
    if worker:
        set_numba_threads(1)
    dt = W.dtype
    n, (nv, nh) = hi - lo, W.shape
    V = np.empty((n, nv), dtype=dt)
    H = np.empty((n, nh), dtype=dt)
    pre_h = np.empty((n, nh), dtype=dt)
    pre_v = np.empty((n, nv), dtype=dt)
    lw = np.zeros(n)
    m = max(nv, nh)
    T1 = np.empty((n, m))
    T0 = np.empty((n, m))
    B = np.empty((n, m), dtype=np.int64)
    WT = W.T
    ais_base_sample_(b_base, V, key, 0, lo)
    K = len(betas) - 1
    for k in range(1, K + 1):
        if stop.is_set():
            return
        np.matmul(V, W, out=pre_h)
        more = k < K
        ais_hidden_step_(pre_h, c, V, db, betas[k], betas[k - 1], lw, H, more, key, 2 * k - 1,
                         lo, T1, T0, B)
        if more:
            np.matmul(H, WT, out=pre_v)
            ais_visible_step_(pre_v, b_base, b, betas[k], V, key, 2 * k, lo, T1, B)
        if bar is not None and (k % 250 == 0 or k == K):
            bar.update(250 if k % 250 == 0 else K % 250)      # tqdm's update is thread-safe
    log_w[lo:hi] = lw


def _summarise(log_w, log_z_base) -> AISResult:
    R = log_w.size
    m = float(np.max(log_w))
    w = np.exp(log_w - m)
    mean = float(w.mean())
    log_z = log_z_base + m + math.log(mean)
    if R > 1:
        sd = float(w.std(ddof=1)) / math.sqrt(R)
    else:
        sd = math.inf
    high = log_z_base + m + math.log(mean + 3.0 * sd)
    low = log_z_base + m + math.log(mean - 3.0 * sd) if mean > 3.0 * sd else -math.inf
    return AISResult(log_z, low, high, log_w)


def ais_log_likelihood(rbm: RBM, V: ArrayLike, *, n_chains: int = AIS_CHAINS_DEFAULT,
                       n_betas: int = AIS_BETAS_DEFAULT,
                       seed: int = 0, data: ArrayLike | None = None,
                       betas: ArrayLike | None = None, dtype: str | None = None,
                       log_z: AISResult | float | None = None) -> AISLogLikelihood:
    """Average log-likelihood of the rows of ``V`` with an AIS estimate of ``log Z``.

    ``mean_n(−F(v_n)) − log Ẑ`` (the AIS theory page of the documentation) — the test ATLL of
    large RBMs (Upadhya & Sastry 2017, eq. 9, with ``log Z`` estimated).

    Parameters
    ----------
    rbm, V
        The binary model and its rows to evaluate, as in
        :func:`~rbmviz.evaluate.exact.log_likelihood_exact`.
    n_chains, n_betas, seed, betas, dtype
        As in :func:`ais_log_partition` (used when ``log_z`` is None).
    data : array_like, shape (n_train, n_visible), optional
        The *training* rows, for the base-rate model.
    log_z : AISResult or float, optional
        A previous estimate of ``log Z`` to reuse; otherwise :func:`ais_log_partition` runs.

    Returns
    -------
    AISLogLikelihood
        ``ll`` with the interval ``[mean(−F) − log_z_high, mean(−F) − log_z_low]``.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`.
    ValueError
        If ``V`` is not 0/1 data of width ``n_visible`` or ``log_z`` is not finite.
    """
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    if not isinstance(rbm, RBM):
        raise TypeError(f"rbm must be an rbmviz.RBM, got {type(rbm).__name__}")
    V = check_data(V, "V", n_visible=rbm.n_visible)
    if log_z is None:
        log_z = ais_log_partition(rbm, n_chains, n_betas, seed, data, betas=betas, dtype=dtype)
    elif not isinstance(log_z, AISResult):
        value = check_real(log_z, "log_z")
        log_z = AISResult(value, value, value, np.zeros(0))
    mean_neg_f = float(np.mean(-rbm.free_energy(V)))
    return AISLogLikelihood(mean_neg_f - log_z.log_z, mean_neg_f - log_z.log_z_high,
                            mean_neg_f - log_z.log_z_low, log_z)
