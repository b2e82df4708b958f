"""Exact enumeration of one layer of a binary RBM.

Both kernels enumerate the ``2**nA`` states ``s`` of a layer "A" (the smaller one), with
the other layer "O" summed out in closed form:

    value(s) = a·s + Σ_j softplus(o_j + (s M)_j)          M : (nA, nO)

For A = visible (a = b, o = c, M = W) ``value = −F(v)``; for A = hidden (a = c, o = b,
M = Wᵀ) it is the hidden marginal's log-weight.  Either way ``log Z = logsumexp_s value(s)``
(reference/ais.md §1).

States are visited in Gray-code order inside fixed-size chunks, so moving to the next state
flips one unit and updates the pre-activation ``o + sM`` with one row of ``M`` (O(nO) per
state instead of O(nA·nO)).  The pre-activation is recomputed from scratch at every chunk
start, which bounds rounding drift.  Chunks are fixed by the problem size (never by the
number of threads), and partial results are combined serially in chunk order, so results are
bit-identical for any thread count.
"""
import math

import numpy as np
from numba import njit, prange

CHUNK_BITS = 12  # 4096 states per chunk
MAX_ENUM_BITS = 30
MAX_BLOCKS = 64  # power of two, so it divides the number of chunks


@njit(cache=True, inline="always")
def _softplus(x):
    if x > 0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@njit(cache=True, inline="always")
def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(cache=True, inline="always")
def _lowest_bit(x):
    i = 0
    while (x & 1) == 0:
        x >>= 1
        i += 1
    return i


@njit(cache=True)
def _chunk_start(M, a, o, g0, s, pre):
    """Set ``s`` to the Gray-code state of index ``g0`` and ``pre = o + s M``; return a·s."""
    nA, nO = M.shape
    gray = g0 ^ (g0 >> 1)
    lin = 0.0
    for j in range(nO):
        pre[j] = o[j]
    for i in range(nA):
        if (gray >> i) & 1:
            s[i] = 1.0
            lin += a[i]
            for j in range(nO):
                pre[j] += M[i, j]
        else:
            s[i] = 0.0
    return lin


@njit(cache=True)
def _step(M, a, s, pre, g, lin):
    """Advance from Gray index ``g-1`` to ``g`` (flip one unit); return the new a·s."""
    i = _lowest_bit(g)
    nO = M.shape[1]
    if s[i] == 0.0:
        s[i] = 1.0
        lin += a[i]
        for j in range(nO):
            pre[j] += M[i, j]
    else:
        s[i] = 0.0
        lin -= a[i]
        for j in range(nO):
            pre[j] -= M[i, j]
    return lin


@njit(parallel=True, cache=True)
def log_sum_states(M, a, o):
    """``logsumexp`` over all ``2**nA`` states of ``value(s)`` (module docstring).

    Parameters
    ----------
    M : (nA, nO) float64; a : (nA,) float64; o : (nO,) float64.

    Returns
    -------
    float — the log partition function when (M, a, o) describe an RBM.
    """
    nA, nO = M.shape
    total = np.int64(1) << nA
    csize = min(total, np.int64(1) << CHUNK_BITS)
    nchunks = total // csize
    cmax = np.empty(nchunks)
    csum = np.empty(nchunks)
    for ch in prange(nchunks):
        s = np.empty(nA)
        pre = np.empty(nO)
        g0 = ch * csize
        lin = _chunk_start(M, a, o, g0, s, pre)
        m = -np.inf
        acc = 0.0
        for g in range(g0, g0 + csize):
            if g > g0:
                lin = _step(M, a, s, pre, g, lin)
            val = lin
            for j in range(nO):
                val += _softplus(pre[j])
            if val > m:
                acc = acc * math.exp(m - val) + 1.0 if m > -np.inf else 1.0
                m = val
            else:
                acc += math.exp(val - m)
        cmax[ch] = m
        csum[ch] = acc
    m = cmax.max()
    acc = 0.0
    for ch in range(nchunks):
        acc += csum[ch] * math.exp(cmax[ch] - m)
    return m + math.log(acc)


@njit(parallel=True, cache=True)
def expected_stats(M, a, o, log_z):
    """Exact model expectations by enumerating layer A.

    With ``p(s) = exp(value(s) − log_z)`` and ``q(s) = sigmoid(o + s M)`` (the conditional
    means of layer O given s):

    Returns
    -------
    E_sq : (nA, nO) — E[s qᵀ] = E[s oᵀ];  E_s : (nA,) — E[s];  E_q : (nO,) — E[o].
    """
    nA, nO = M.shape
    total = np.int64(1) << nA
    csize = min(total, np.int64(1) << CHUNK_BITS)
    nchunks = total // csize
    # accumulators per block of chunks (at most MAX_BLOCKS of them, fixed by the size)
    nblocks = min(nchunks, MAX_BLOCKS)
    per = nchunks // nblocks
    acc_sq = np.zeros((nblocks, nA, nO))
    acc_s = np.zeros((nblocks, nA))
    acc_q = np.zeros((nblocks, nO))
    for blk in prange(nblocks):
        s = np.empty(nA)
        pre = np.empty(nO)
        q = np.empty(nO)
        for ch in range(blk * per, (blk + 1) * per):
            g0 = ch * csize
            lin = _chunk_start(M, a, o, g0, s, pre)
            for g in range(g0, g0 + csize):
                if g > g0:
                    lin = _step(M, a, s, pre, g, lin)
                val = lin
                for j in range(nO):
                    val += _softplus(pre[j])
                p = math.exp(val - log_z)
                for j in range(nO):
                    q[j] = p * _sigmoid(pre[j])
                    acc_q[blk, j] += q[j]
                for i in range(nA):
                    if s[i] != 0.0:
                        acc_s[blk, i] += p
                        for j in range(nO):
                            acc_sq[blk, i, j] += q[j]
    E_sq = np.zeros((nA, nO))
    E_s = np.zeros(nA)
    E_q = np.zeros(nO)
    for blk in range(nblocks):
        E_sq += acc_sq[blk]
        E_s += acc_s[blk]
        E_q += acc_q[blk]
    return E_sq, E_s, E_q
