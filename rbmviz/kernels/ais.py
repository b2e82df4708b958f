"""Kernels of annealed importance sampling for binary RBMs (the AIS theory page of the documentation).

The matrix products (``V W`` and ``H Wᵀ`` for all chains) are done by the caller with BLAS;
these kernels fuse everything elementwise that follows them, parallel over chains (rows) with
``prange``.  Random draws use the counter-based stream of :mod:`.random` — the draw for
element ``(r, j)`` (``r`` the *global* chain index, ``row0`` + the row of the slice passed) of
a call with counter ``t`` is ``uniform(stream_key(seed, t), r*m + j)`` — so the kernels give
bit-identical results for any number of threads.  (The caller keeps the slices fixed: BLAS
may round a row of a product differently depending on how many rows it is given.)
Log-weights are accumulated in float64 whatever the dtype of the products.

Intermediate distributions (the AIS theory page), with base-rate visible biases ``b_A``:
``log p*_β(v) = (1−β) b_Aᵀv + β bᵀv + Σ_j softplus(β (c_j + (vW)_j))``.
"""
import math

import numpy as np
from numba import njit, prange

from .gibbs import _exp_poly
from .random import stream_key, uniform

_FM = {"contract", "arcp", "nsz"}
#: factors (1 + e^{−|β_k x|}) / (1 + e^{−|β_{k−1} x|}) lie in [1/2, 2]: blocks of this many are
#: multiplied before one log is taken (no overflow, one log per block instead of per unit)
_BLOCK = 64


@njit(cache=True, fastmath=_FM, error_model="numpy", inline="always")
def _exp_neg_abs(y, out, bits, m):
    """``out[j] = exp(−|y[j]|)`` for ``j < m`` (branch-free, vectorisable; ``bits`` int64
    scratch).  ``y`` and ``out`` may be the same array."""
    for j in range(m):
        bits[j], out[j] = _exp_poly(-min(abs(y[j]), 708.0))
    s = bits.view(np.float64)
    for j in range(m):
        out[j] *= s[j]


#: chains whose sums over units :func:`ais_hidden_step_` runs side by side
_GROUP = 4


@njit(cache=True, fastmath=_FM, error_model="numpy", inline="always")
def _softplus_gap(pre, c, T1, T0, r, j, beta, beta_prev):
    """``max(βx, 0) − max(β′x, 0)`` for ``x = c_j + pre[r, j]``; stores ``βx`` and ``β′x`` in
    ``T1[r, j]`` and ``T0[r, j]``."""
    x = np.float64(pre[r, j]) + c[j]
    y1 = beta * x
    y0 = beta_prev * x
    T1[r, j] = y1
    T0[r, j] = y0
    return max(y1, 0.0) - max(y0, 0.0)


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def ais_base_sample_(b_base, V, seed, counter, row0):
    """``V[r, i] ~ Bernoulli(σ(b_base[i]))`` independently: samples of the base-rate model
    ``p_A`` (its hidden units are independent of ``v``).  ``row0``: global index of row 0
    (the chains may be split into slices; the stream depends on the global row only)."""
    n, m = V.shape
    key = stream_key(seed, counter)
    for r in prange(n):
        base = (row0 + r) * m
        for i in range(m):
            y = b_base[i]
            t = math.exp(-abs(y))
            thr = 1.0 if y >= 0.0 else t
            V[r, i] = 1.0 if uniform(key, base + i) * (1.0 + t) < thr else 0.0


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def ais_hidden_step_(pre, c, V, db, beta, beta_prev, log_w, H, sample, seed, counter, row0,
                     T1, T0, B):
    """Add ``log p*_β(v) − log p*_β′(v)`` to ``log_w`` for the chains ``V`` and, if
    ``sample``, draw ``H[r, j] ~ Bernoulli(σ(β (c_j + pre[r, j])))`` (the first half of the
    transition ``T_β``).

    With ``x = c + vW``: ``Δ = (β − β′)(b − b_A)ᵀv + Σ_j [softplus(βx_j) − softplus(β′x_j)]``
    and ``softplus(y) = max(y, 0) + log(1 + e^{−|y|})``; the log terms are summed as the log
    of products over blocks of :data:`_BLOCK` units.

    Parameters
    ----------
    pre : (R, n_h) — ``V @ W`` (any float dtype).
    c : (n_h,) float64 hidden biases.  V : (R, n_v) chain states.
    db : (n_v,) float64, ``b − b_A``.
    beta, beta_prev : float — β_k and β_{k−1}.
    log_w : (R,) float64, updated in place.
    H : (R, n_h), written when ``sample``.
    row0 : int — global index of row 0 (for the random stream).
    T1, T0 : float64 scratch ≥ (R, n_h); B : int64 scratch ≥ (R, n_h).
    """
    n, m = pre.shape
    nv = V.shape[1]
    dbeta = beta - beta_prev
    key = stream_key(seed, counter)
    # The sums over units are sequential (the same order, and so the same bits, as one chain
    # at a time); four chains are summed side by side so that their additions overlap.  The
    # last group repeats its last chain in the unused places and discards those sums.
    n_groups = (n + _GROUP - 1) // _GROUP
    for gi in prange(n_groups):
        r0 = gi * _GROUP
        g_n = min(_GROUP, n - r0)
        ra, rb, rc, rd = r0, min(r0 + 1, n - 1), min(r0 + 2, n - 1), min(r0 + 3, n - 1)
        l0 = l1 = l2 = l3 = 0.0
        for i in range(nv):
            d = db[i]
            l0 += d * V[ra, i]
            l1 += d * V[rb, i]
            l2 += d * V[rc, i]
            l3 += d * V[rd, i]
        a0, a1, a2, a3 = dbeta * l0, dbeta * l1, dbeta * l2, dbeta * l3
        for j in range(m):
            a0 += _softplus_gap(pre, c, T1, T0, ra, j, beta, beta_prev)
            a1 += _softplus_gap(pre, c, T1, T0, rb, j, beta, beta_prev)
            a2 += _softplus_gap(pre, c, T1, T0, rc, j, beta, beta_prev)
            a3 += _softplus_gap(pre, c, T1, T0, rd, j, beta, beta_prev)
        for g in range(g_n):
            r = r0 + g
            t1 = T1[r]
            t0 = T0[r]
            bits = B[r]
            _exp_neg_abs(t1, t1, bits, m)
            _exp_neg_abs(t0, t0, bits, m)
            for j in range(m):
                t0[j] = (1.0 + t1[j]) / (1.0 + t0[j])
        j = 0
        while j < m:
            p0 = p1 = p2 = p3 = 1.0
            for q in range(j, min(j + _BLOCK, m)):
                p0 *= T0[ra, q]
                p1 *= T0[rb, q]
                p2 *= T0[rc, q]
                p3 *= T0[rd, q]
            a0 += math.log(p0)
            a1 += math.log(p1)
            a2 += math.log(p2)
            a3 += math.log(p3)
            j += _BLOCK
        for g in range(g_n):
            r = r0 + g
            log_w[r] += a0 if g == 0 else a1 if g == 1 else a2 if g == 2 else a3
            if sample:
                # u < σ(y)  ⇔  u (1 + t) < 1 (y ≥ 0)  or  u (1 + t) < t (y < 0),  t = e^{−|y|}
                t1 = T1[r]
                base = (row0 + r) * m
                for j in range(m):
                    x = np.float64(pre[r, j]) + c[j]
                    thr = 1.0 if beta * x >= 0.0 else t1[j]
                    H[r, j] = 1.0 if uniform(key, base + j) * (1.0 + t1[j]) < thr else 0.0


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def ais_visible_step_(pre, b_base, b, beta, V, seed, counter, row0, T, B):
    """``V[r, i] ~ Bernoulli(σ((1−β) b_A,i + β (b_i + pre[r, i])))`` with ``pre = H @ Wᵀ``:
    the second half of the transition ``T_β`` (the AIS theory page).  ``row0``: global index of row
    0; ``T``/``B``: float64/int64 scratch ≥ (R, n_v)."""
    n, m = pre.shape
    key = stream_key(seed, counter)
    for r in prange(n):
        t = T[r]
        bits = B[r]
        for i in range(m):
            t[i] = (1.0 - beta) * b_base[i] + beta * (b[i] + np.float64(pre[r, i]))
        _exp_neg_abs(t, t, bits, m)
        base = (row0 + r) * m
        for i in range(m):
            y = (1.0 - beta) * b_base[i] + beta * (b[i] + np.float64(pre[r, i]))
            thr = 1.0 if y >= 0.0 else t[i]
            V[r, i] = 1.0 if uniform(key, base + i) * (1.0 + t[i]) < thr else 0.0
