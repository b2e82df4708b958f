"""Exact enumeration of one layer of a binary RBM.

Both kernels enumerate the ``2**nA`` states ``s`` of a layer "A" (the smaller one), with
the other layer "O" summed out in closed form:

    value(s) = a·s + Σ_j softplus(o_j + (s M)_j)          M : (nA, nO)

For A = visible (a = b, o = c, M = W) ``value = −F(v)``; for A = hidden (a = c, o = b,
M = Wᵀ) it is the hidden marginal's log-weight.  Either way ``log Z = logsumexp_s value(s)``
(the AIS theory page of the documentation).

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


@njit(cache=True)
def _chunk_log_sum(M, a, o, g0, csize, s, pre):
    """``(m, acc)`` with ``logsumexp = m + log(acc)`` of ``value`` over the Gray indices
    ``g0 … g0 + csize − 1`` (one chunk; ``s``, ``pre`` scratch)."""
    nO = M.shape[1]
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
    return m, acc


def n_chunks(nA):
    """``(number of chunks, states per chunk)`` of an enumeration of ``2**nA`` states (fixed
    by ``nA`` alone, never by the number of threads)."""
    total = 1 << nA
    csize = min(total, 1 << CHUNK_BITS)
    return total // csize, csize


@njit(parallel=True, cache=True)
def log_sum_chunks_(M, a, o, c0, c1, cmax, csum):
    """Chunks ``c0 … c1 − 1`` of :func:`log_sum_states`, in parallel: ``cmax[ch]``,
    ``csum[ch]`` (written) are chunk ``ch``'s ``(m, acc)``.  Calling it on consecutive ranges
    and then :func:`combine_chunks` gives exactly :func:`log_sum_states` — the caller can
    return to Python between ranges (Ctrl-C) on large enumerations."""
    nA, nO = M.shape
    total = np.int64(1) << nA
    csize = min(total, np.int64(1) << CHUNK_BITS)
    for ch in prange(c0, c1):
        s = np.empty(nA)
        pre = np.empty(nO)
        cmax[ch], csum[ch] = _chunk_log_sum(M, a, o, ch * csize, csize, s, pre)


@njit(cache=True)
def combine_chunks(cmax, csum):
    """``logsumexp`` from the per-chunk ``(m, acc)``, combined serially in chunk order."""
    m = cmax.max()
    acc = 0.0
    for ch in range(cmax.shape[0]):
        acc += csum[ch] * math.exp(cmax[ch] - m)
    return m + math.log(acc)


@njit(parallel=True, cache=True)
def log_sum_states(M, a, o):
    """``logsumexp`` over all ``2**nA`` states of ``value(s)`` (module docstring), in one call
    (:func:`rbmviz.evaluate.log_partition_exact` calls :func:`log_sum_chunks_` on ranges of
    chunks instead, with the same result, so that Ctrl-C works on large enumerations).

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
        cmax[ch], csum[ch] = _chunk_log_sum(M, a, o, ch * csize, csize, s, pre)
    return combine_chunks(cmax, csum)


def n_blocks(nA):
    """``(blocks, chunks per block)`` of :func:`expected_stats` (fixed by ``nA`` alone)."""
    nchunks, _ = n_chunks(nA)
    nblocks = min(nchunks, MAX_BLOCKS)
    return nblocks, nchunks // nblocks


@njit(parallel=True, cache=True)
def expected_stats_part_(M, a, o, log_z, j0, j1, b0, b1, acc_sq, acc_s, acc_q):
    """Chunks ``j0 … j1 − 1`` of blocks ``b0 … b1 − 1`` of :func:`expected_stats` (blocks in
    parallel), added to the per-block accumulators ``acc_sq`` (nblocks, nA, nO), ``acc_s``
    (nblocks, nA), ``acc_q`` (nblocks, nO) (start them at 0).  Any sequence of calls that
    gives every block its chunks ``0 … per − 1`` in increasing order, followed by
    :func:`sum_blocks`, gives exactly :func:`expected_stats`."""
    nA, nO = M.shape
    total = np.int64(1) << nA
    csize = min(total, np.int64(1) << CHUNK_BITS)
    nblocks = acc_s.shape[0]
    per = (total // csize) // nblocks
    for blk in prange(b0, b1):
        s = np.empty(nA)
        pre = np.empty(nO)
        q = np.empty(nO)
        for ch in range(blk * per + j0, blk * per + j1):
            _stats_chunk(M, a, o, log_z, ch * csize, csize, s, pre, q,
                         acc_sq[blk], acc_s[blk], acc_q[blk])


@njit(cache=True)
def _stats_chunk(M, a, o, log_z, g0, csize, s, pre, q, acc_sq, acc_s, acc_q):
    """One chunk of :func:`expected_stats`, added to one block's accumulators."""
    nA, nO = M.shape
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
            acc_q[j] += q[j]
        for i in range(nA):
            if s[i] != 0.0:
                acc_s[i] += p
                for j in range(nO):
                    acc_sq[i, j] += q[j]


@njit(cache=True)
def sum_blocks(acc_sq, acc_s, acc_q):
    """``(E_sq, E_s, E_q)``: the block accumulators summed in block order."""
    nblocks, nA, nO = acc_sq.shape
    E_sq = np.zeros((nA, nO))
    E_s = np.zeros(nA)
    E_q = np.zeros(nO)
    for blk in range(nblocks):
        E_sq += acc_sq[blk]
        E_s += acc_s[blk]
        E_q += acc_q[blk]
    return E_sq, E_s, E_q


@njit(parallel=True, cache=True)
def expected_stats(M, a, o, log_z):
    """Exact model expectations by enumerating layer A (in one call; see
    :func:`expected_stats_part_` for the interruptible form used by
    :func:`rbmviz.evaluate.model_statistics`).

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
            _stats_chunk(M, a, o, log_z, ch * csize, csize, s, pre, q,
                         acc_sq[blk], acc_s[blk], acc_q[blk])
    return sum_blocks(acc_sq, acc_s, acc_q)
