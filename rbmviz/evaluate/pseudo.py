"""Pseudo-likelihoods and reconstruction error of binary RBMs.

* :func:`pseudo_log_likelihood` — the deterministic pseudo-log-likelihood over **all** sites
  (Besag 1975): ``PL(v) = Σ_i log p(v_i | v_{−i})``; cost O(N · n_visible · n_hidden).
* :func:`stochastic_pseudo_log_likelihood` — the same sum estimated from a fixed random subset
  of sites and rows, ``(n_visible/|S|) Σ_{i∈S} log p(v_i | v_{−i})`` averaged over the rows
  in ``R``: unbiased for the all-sites value on those rows, and with a fixed subset the curve
  along a run is noise-free in time (only the subset is random).  Cheap enough to monitor a
  784×500 model live (the ``"spl"`` metric).
* :func:`reconstruction_error` — mean squared error of the mean-field reconstruction.

All in nats, averaged over rows.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike

from .._blas import binary_matmul, binary_rows, matmul, single_threaded_blas
from .._seeds import stream_seed
from .._validation import check_data, check_indices, check_int, check_seed, check_unit_interval_data
from ..kernels.exact import _exp_neg, sigmoid_vec
from .exact import _check_rbm

if TYPE_CHECKING:
    from ..model import RBM

__all__ = ["pseudo_log_likelihood_rows", "pseudo_log_likelihood", "stochastic_pseudo_log_likelihood",
           "spl_subset", "reconstruction_error"]


def pseudo_log_likelihood_rows(rbm: RBM, V: ArrayLike) -> np.ndarray:
    """Deterministic pseudo-log-likelihood over **all** sites for every row (nats).

    ``PL(v) = Σ_i log p(v_i | v_{−i}) = −Σ_i softplus(F(v) − F(v with unit i flipped))``.
    Unlike scikit-learn's ``BernoulliRBM.score_samples`` (one random site, scaled by
    n_features; scikit-learn issue 23179) it is exact and noise-free.  Cost
    O(N · n_visible · n_hidden) — evaluate on a subset for large data.

    Parameters
    ----------
    rbm : RBM
        A binary model.
    V : array_like, shape (n_samples, n_visible)
        Rows to evaluate, 0/1.

    Returns
    -------
    numpy.ndarray, shape (n_samples,)
        ``PL(v)`` of every row.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`.
    ValueError
        If the model is not binary or ``V`` is not 0/1 data of width ``n_visible``.
    """
    _check_rbm(rbm)
    V = check_data(V, "V", n_visible=rbm.n_visible)
    V, pre = _pre_activations(rbm, V)
    return _site_log_conditionals(rbm, V, pre, np.arange(rbm.n_visible)).sum(axis=1)


def pseudo_log_likelihood(rbm: RBM, V: ArrayLike) -> float:
    """Mean over rows of :func:`pseudo_log_likelihood_rows` (nats).

    Parameters
    ----------
    rbm, V
        As in :func:`pseudo_log_likelihood_rows`.

    Returns
    -------
    float
        The mean all-sites pseudo-log-likelihood.

    Raises
    ------
    TypeError, ValueError
        As :func:`pseudo_log_likelihood_rows` does.
    """
    return float(pseudo_log_likelihood_rows(rbm, V).mean())


def _softplus_sum(x):
    """``Σ_j softplus(x_j)`` over the last axis: vectorised in x's dtype (numpy's SIMD
    ``exp``/``log``), summed in float64."""
    e = np.exp(-np.abs(x))
    e += 1
    np.log(e, out=e)
    e += np.maximum(x, 0)
    return e.sum(axis=-1, dtype=np.float64)


def _site_log_conditionals(rbm, V, pre, sites, block=8):
    """``log p(v_i | v_{−i})`` for the rows of ``V`` and the sites ``sites``, shape
    (n_rows, len(sites)); ``pre = V W + c`` (model dtype).

    ``F(v) − F(v with unit i flipped) = s_i b_i + Σ_j log(σ(−x_j) + σ(x_j) e^{s_i W_ij})``
    with ``x = pre``, ``s_i = 1 − 2 v_i``: each factor a convex combination of 1 and
    ``e^{s_i W_ij}``, without cancellation.  :func:`_flip_log_ratios_` takes the logarithm once
    per segment of factors (short enough that the product stays within float64's range), in
    float64 whatever the model's dtype; rows in parallel, each row's values independent of the
    thread count.  Weights too large for such segments (``|W_ij| > 600``) take
    :func:`_site_log_conditionals_numpy`."""
    sites = np.asarray(sites, dtype=np.int64)
    Ws = np.asarray(rbm.W[sites], dtype=np.float64)
    top = float(np.max(np.abs(Ws))) if Ws.size else 0.0
    if not (top <= _FLIP_EXP_MAX):          # huge or non-finite weights: the numpy form
        return _site_log_conditionals_numpy(rbm, V, pre, sites, block)
    seg = _FLIP_SEGMENT if top * _FLIP_SEGMENT <= _FLIP_EXP_MAX else max(1, int(_FLIP_EXP_MAX / top))
    Ep, Em = np.exp(Ws), np.exp(-Ws)
    lr = np.empty((V.shape[0], sites.size))
    _flip_log_ratios_(pre, Ep, Em, V, sites, seg, lr)
    s = 1.0 - 2.0 * V[:, sites].astype(np.float64)
    d_f = -rbm.b[sites].astype(np.float64) * s - lr
    return -np.logaddexp(0.0, -d_f)


#: the largest ``|W_ij|`` times factors per segment in :func:`_flip_log_ratios_` (each factor
#: lies between ``e^{−|W_ij|}`` and ``e^{|W_ij|}``, so a segment's product stays finite and
#: normal), and the most factors per segment
_FLIP_EXP_MAX = 600.0
_FLIP_SEGMENT = 512


@njit(cache=True, parallel=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _flip_log_ratios_(pre, Ep, Em, V, sites, seg, out):
    """``out[n, q] = Σ_j log(σ(−x_j) + σ(x_j) E_qj)``, ``x = pre[n]``, ``E = Ep`` where
    ``V[n, sites[q]] = 0`` else ``Em``, as one logarithm per ``seg`` factors (float64)."""
    N, H = pre.shape
    S = sites.shape[0]
    for n in prange(N):
        P = np.empty(H)
        Q = np.empty(H)
        for j in range(H):
            x = np.float64(pre[n, j])
            u = _exp_neg(-abs(x))
            d = 1.0 + u
            big = 1.0 / d
            small = u / d
            P[j] = big if x >= 0.0 else small
            Q[j] = small if x >= 0.0 else big         # NaN x: u, P and Q are NaN
        for q in range(S):
            on = V[n, sites[q]] != 0
            total = 0.0
            for j0 in range(0, H, seg):
                j1 = min(H, j0 + seg)
                prod = 1.0
                if on:
                    for j in range(j0, j1):
                        prod *= Q[j] + P[j] * Em[q, j]
                else:
                    for j in range(j0, j1):
                        prod *= Q[j] + P[j] * Ep[q, j]
                total += math.log(prod)
            out[n, q] = total


def _site_log_conditionals_numpy(rbm, V, pre, sites, block=8):
    """:func:`_site_log_conditionals` as whole-array numpy operations in the model's dtype
    over blocks of ``block`` sites, sums in float64 (float32 models: per-term rounding
    ~1e-7); for any weights."""
    W, b = rbm.W, rbm.b.astype(np.float64)
    base = _softplus_sum(pre)                                   # (N,)
    out = np.empty((V.shape[0], len(sites)))
    for q in range(0, len(sites), block):
        idx = sites[q:q + block]
        s = 1 - 2 * V[:, idx]                                   # (N, S)
        flipped = _softplus_sum(pre[:, None, :] + s[:, :, None] * W[idx][None, :, :])
        d_f = -b[idx] * s - (flipped - base[:, None])
        out[:, q:q + block] = -np.logaddexp(0.0, -d_f)
    return out


def _pre_activations(rbm, V):
    """``V W + c`` in the model's dtype with thread-count-independent products: sums of rows
    of ``W`` for sparse 0/1 rows (:func:`rbmviz._blas.binary_matmul`), else BLAS."""
    W, c = rbm.W, rbm.c
    V = np.ascontiguousarray(V, dtype=W.dtype)
    pre = np.empty((V.shape[0], W.shape[1]), dtype=W.dtype)
    idx = np.empty(V.shape, dtype=np.int32)
    cnt = np.empty(V.shape[0], dtype=np.int32)
    density = binary_rows(V, idx, cnt)
    with single_threaded_blas():
        binary_matmul(V, W, pre, idx, cnt, density)
    pre += c
    return V, pre


def spl_subset(n_rows: int, n_visible: int, *, rows: int = 100, sites: int = 16,
               seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The fixed random subset of a stochastic pseudo-likelihood.

    Parameters
    ----------
    n_rows : int
        Rows of the data.
    n_visible : int
        Visible units.
    rows : int
        Rows to draw (capped at ``n_rows``).
    sites : int
        Sites to draw (capped at ``n_visible``).
    seed : int
        Seed of the draw (its ``"spl"`` stream).

    Returns
    -------
    row_index : numpy.ndarray
        ``min(rows, n_rows)`` distinct rows, sorted int64.
    site_index : numpy.ndarray
        ``min(sites, n_visible)`` distinct sites, sorted int64.
    """
    n_rows = check_int(n_rows, "n_rows", low=1)
    n_visible = check_int(n_visible, "n_visible", low=1)
    rows = check_int(rows, "rows", low=1)
    sites = check_int(sites, "sites", low=1)
    rng = np.random.default_rng(stream_seed(check_seed(seed), "spl"))
    r = np.sort(rng.choice(n_rows, size=min(rows, n_rows), replace=False)).astype(np.int64)
    s = np.sort(rng.choice(n_visible, size=min(sites, n_visible), replace=False)).astype(np.int64)
    return r, s


def stochastic_pseudo_log_likelihood(rbm: RBM, V: ArrayLike, *, rows: int = 100,
                                     sites: int = 16, seed: int = 0,
                                     subset: tuple[np.ndarray, np.ndarray] | None = None
                                     ) -> float:
    """Stochastic pseudo-log-likelihood over a fixed random subset of sites and rows (nats):

    ``SPL = (1/|R|) Σ_{n∈R} (n_visible/|S|) Σ_{i∈S} log p(v_i⁽ⁿ⁾ | v_{−i}⁽ⁿ⁾)``,

    an unbiased estimate (over the choice of ``S``) of the all-sites
    :func:`pseudo_log_likelihood` of the rows ``R``; with all rows and all sites it *is* that
    value.  Cost ``O(|R| · (n_visible + |S|) · n_hidden)`` instead of ``O(N · n_visible · n_hidden)``.
    Unlike scikit-learn's ``score_samples`` (one new random site per call) the subset is fixed
    by ``seed``, so successive evaluations along a run are comparable.  The pre-activations
    ``V W + c`` are computed in the model's dtype, the log-conditionals from them in float64
    (float32 models: the rounding of the pre-activations, ~1e-7 relative).

    Parameters
    ----------
    rbm : RBM
        Binary RBM.
    V : array_like, shape (n_samples, n_visible)
        Rows to evaluate, 0/1.
    rows, sites : int
        Sizes of the subset (capped at the data's rows and the visible units).
    seed : int
        Seed of the subset (:func:`spl_subset`).
    subset : (row_index, site_index), optional
        A ready subset (e.g. fixed once per run), instead of ``rows``/``sites``/``seed``.

    Returns
    -------
    float
        The estimate ``SPL``, in nats.

    Raises
    ------
    ValueError
        If ``subset`` holds indices outside ``V``'s rows or the visible units, the model is
        not binary, or ``V`` is not 0/1 data of width ``n_visible``.
    """
    _check_rbm(rbm)
    V = check_data(V, "V", n_visible=rbm.n_visible)
    if subset is None:
        subset = spl_subset(V.shape[0], rbm.n_visible, rows=rows, sites=sites, seed=seed)
    if isinstance(subset, (str, bytes)) or not hasattr(subset, "__len__") or len(subset) != 2:
        raise TypeError(f"subset must be a pair (row_index, site_index) of index arrays, "
                        f"got {type(subset).__name__}")
    r = check_indices(subset[0], "subset[0] (row_index)", V.shape[0], what="rows of V")
    s = check_indices(subset[1], "subset[1] (site_index)", rbm.n_visible, what="visible units")
    return _spl(rbm, V[r], s)


def _spl(rbm, V, sites):
    """:func:`stochastic_pseudo_log_likelihood` of all the rows ``V`` (0/1, checked) at the
    sites ``sites`` (checked int64 indices), without the checks."""
    Vr, pre = _pre_activations(rbm, V)
    lp = _site_log_conditionals(rbm, Vr, pre, sites)
    return float(lp.sum(axis=1).mean() * (rbm.n_visible / sites.size))


def reconstruction_error(rbm: RBM, V: ArrayLike) -> float:
    """Mean squared error per pixel of the deterministic reconstruction, averaged over rows.

    The reconstruction is ``v̂ = σ(b + W σ(c + Wᵀv))`` (probabilities, no sampling); products
    in the model's dtype, independent of the thread count.

    Parameters
    ----------
    rbm : RBM
        A binary model.
    V : array_like, shape (n_samples, n_visible)
        Rows; may hold probabilities in [0, 1] as well as 0/1 states.

    Returns
    -------
    float
        The mean squared error.

    Raises
    ------
    TypeError
        If ``rbm`` is not an :class:`~rbmviz.model.RBM`.
    ValueError
        If the model is not binary or ``V`` is not data in [0, 1] of width ``n_visible``.
    """
    _check_rbm(rbm)
    V = check_unit_interval_data(V, "V", n_visible=rbm.n_visible)   # probabilities too
    return _reconstruction_error(rbm, V)


def _reconstruction_error(rbm, V):
    """:func:`reconstruction_error` of checked rows ``V``, without the checks: the hidden
    means ``σ(pre)`` written in the model's dtype, the visible means ``σ(R + b)`` and the
    squared errors in float64, summed by :func:`_sigmoid_sq_err` (no temporaries)."""
    V, pre = _pre_activations(rbm, V)
    _sigmoid_inplace(pre)
    R = np.empty_like(V)
    with single_threaded_blas():
        matmul(pre, rbm.W.T, R)
    return _sigmoid_sq_err(V, R, rbm.b) / V.size


@njit(cache=True, fastmath={"contract"}, error_model="numpy")
def _sigmoid_inplace(x):
    """``x[...] = σ(x)`` (:func:`rbmviz.kernels.exact.sigmoid_vec` in float64, written in
    ``x``'s dtype), for a 2-D array."""
    n, m = x.shape
    for r in range(n):
        for j in range(m):
            x[r, j] = sigmoid_vec(np.float64(x[r, j]))


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _sigmoid_sq_err(V, R, b):
    """``Σ_{n,i} (V_ni − σ(R_ni + b_i))²`` in float64 (``R + b`` in the arrays' dtype)."""
    n, m = V.shape
    total = 0.0
    for r in range(n):
        row = 0.0
        for i in range(m):
            e = np.float64(V[r, i]) - sigmoid_vec(np.float64(R[r, i] + b[i]))
            row += e * e
        total += row
    return total
