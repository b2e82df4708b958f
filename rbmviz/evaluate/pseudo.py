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

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._blas import matmul, single_threaded_blas
from .._numerics import sigmoid as _sigmoid
from .._seeds import stream_seed
from .._validation import check_data, check_indices, check_int, check_seed, check_unit_interval_data
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
    (n_rows, len(sites)); ``pre = V W + c``.  Whole-array numpy operations in the model's
    dtype over blocks of ``block`` sites, sums in float64 (float32 models: per-term rounding
    ~1e-7)."""
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
    """``V W + c`` in the model's dtype with thread-count-independent products."""
    W, c = rbm.W, rbm.c
    V = np.ascontiguousarray(V, dtype=W.dtype)
    pre = np.empty((V.shape[0], W.shape[1]), dtype=W.dtype)
    with single_threaded_blas():
        matmul(V, W, pre)
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
    by ``seed``, so successive evaluations along a run are comparable.  Computed with
    whole-array operations in the model's dtype (float32 models: rounding ~1e-6 nats).

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
    Vr, pre = _pre_activations(rbm, V[r])
    lp = _site_log_conditionals(rbm, Vr, pre, s)
    return float(lp.sum(axis=1).mean() * (rbm.n_visible / s.size))


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
    V, pre = _pre_activations(rbm, V)
    H = _sigmoid(pre)
    R = np.empty_like(V)
    with single_threaded_blas():
        matmul(H, rbm.W.T, R)
    R = _sigmoid(R + rbm.b)
    return float(np.mean((V.astype(np.float64) - R) ** 2))
