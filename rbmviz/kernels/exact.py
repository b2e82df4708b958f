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

The softplus sum of a state, ``Σ_j softplus(x_j)``, is computed without a branch or a libm
call per element, so that LLVM vectorizes it: ``softplus(x) = max(x, 0) + log(1 + e^{−|x|})``
with ``e^{−|x|}`` from :func:`_exp_neg` (Cody–Waite reduction, a degree-13 polynomial and a
power of two built from its exponent bits), and the logarithms of up to
:data:`SEGMENT` factors ``1 + e^{−|x|} ∈ [1, 2]`` taken at once as the logarithm of their
product (at most ``2**SEGMENT``, so it cannot overflow).  Each factor rounds by at most half
an ulp of 1, so the sum is as accurate as the sum of separately rounded terms.
"""
import math

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from .tap import _atanh2

CHUNK_BITS = 12  # 4096 states per chunk
MAX_ENUM_BITS = 30
MAX_BLOCKS = 64  # power of two, so it divides the number of chunks
#: factors ``1 + e^{−|x|}`` (each in [1, 2]) multiplied before one logarithm is taken
SEGMENT = 960

# e^y for y ≤ 0: y = k ln2 + r, |r| ≤ ln2/2; ln2 split so that k·_LN2_HI is exact (fdlibm)
_INV_LN2 = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LN2 = 0.6931471805599453
_ROUND = 6755399441055744.0     # 1.5·2**52: y + _ROUND rounds y to an integer in the low bits
_ROUND_BITS = 0x4338000000000000
_TWO_M54 = 2.0 ** -54
_EXP_LOW = -746.0               # e^y rounds to 0 below this


# scalar softplus and sigmoid with a branch and libm calls (the prior kernels of
# rbmviz.kernels.priors use them; the enumeration uses the vectorizable forms below)
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


@intrinsic
def _as_int64(typingctx, x):
    """The bits of a float64 as an int64 (a bitcast, vectorizable)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _as_float64(typingctx, n):
    """The float64 whose bits are the int64 ``n`` (a bitcast, vectorizable)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


if numba.config.DISABLE_JIT:        # NUMBA_DISABLE_JIT=1: the kernels run as Python, where an
    def _as_int64(x):               # intrinsic cannot; the same bitcasts through numpy
        """The bits of a float64 as an int64 (pure Python)."""
        return np.array(x, dtype=np.float64).view(np.int64)[()]

    def _as_float64(n):
        """The float64 whose bits are the int64 ``n`` (pure Python)."""
        return np.array(n, dtype=np.int64).view(np.float64)[()]


@njit(cache=True, fastmath={"contract"})
def _exp_neg(y):
    """``e^y`` for ``y ≤ 0`` (or NaN, which propagates), within about 1 ulp, without a branch
    or a libm call (LLVM vectorizes loops that call it).

    ``y = k·ln 2 + r`` with ``k`` rounded to the nearest integer by the 1.5·2**52 trick (the
    only ``fastmath`` flag here is contraction: reassociation would undo the trick), ``e^r``
    by its Taylor polynomial of degree 13 (|r| ≤ 0.347: truncation below 5e-18; fused
    multiply-adds where the CPU has them), and ``2^k`` as ``2^(k+54)`` built from the exponent
    field times ``2^−54``, which also rounds subnormal results correctly."""
    y = y if not (y < _EXP_LOW) else _EXP_LOW
    kd = y * _INV_LN2 + _ROUND
    k = kd - _ROUND
    r = (y - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = _as_float64((_as_int64(kd) - _ROUND_BITS + 1077) << 52)
    return p * scale * _TWO_M54


@njit(cache=True)
def _log1p_01(u):
    """``log(1 + u)`` for ``0 ≤ u ≤ 1`` to about 1 ulp, branch-free: ``2 atanh(t)`` with
    ``t = u / (2 + u)``, or ``ln 2 + 2 atanh(t)`` with ``t = (u − 1) / (u + 3)`` above
    ``√2 − 1`` (``|t| ≤ 0.172``; the series of :func:`rbmviz.kernels.tap._atanh2`)."""
    w = 1.0 if u > 0.41421356237309503 else 0.0
    return w * _LN2 + _atanh2((u - w) / (u + 2.0 + w))


@njit(cache=True)
def softplus_vec(x):
    """``log(1 + e^x)``, branch-free (a loop calling it vectorizes).

    Parameters
    ----------
    x : float

    Returns
    -------
    float
        Within a few ulp of ``np.logaddexp(0, x)`` for every float64 (``max(x, 0) +
        log1p(e^{−|x|})``): ``softplus(−inf) = 0``, ``softplus(inf) = inf``, NaN propagates.
    """
    pos = x if not (x <= 0.0) else 0.0          # max(x, 0), NaN kept
    return pos + _log1p_01(_exp_neg(-abs(x)))


@njit(cache=True)
def sigmoid_vec(x):
    """``1 / (1 + e^{−x})``, branch-free (a loop calling it vectorizes).

    Parameters
    ----------
    x : float

    Returns
    -------
    float
        Within a few ulp of the exact value for every float64 (``1 / (1 + u)`` or
        ``u / (1 + u)`` with ``u = e^{−|x|}``): 0 at −inf, 1 at inf, NaN propagates.
    """
    u = _exp_neg(-abs(x))
    num = u if x < 0.0 else 1.0                 # u is NaN for NaN x
    return num / (1.0 + u)


@njit(cache=True, fastmath={"reassoc", "contract"})
def _softplus_segment(pre, j0, j1):
    """``Σ_{j0 ≤ j < j1} softplus(pre[j])`` for ``j1 − j0 ≤`` :data:`SEGMENT` (module
    docstring): ``Σ max(x, 0) + log Π (1 + e^{−|x|})``.  The reductions are reassociated
    (vectorized) in a way fixed by the compiled code, never by the number of threads."""
    s = 0.0
    prod = 1.0
    for j in range(j0, j1):
        x = pre[j]
        s += x if not (x <= 0.0) else 0.0
        prod *= 1.0 + _exp_neg(-abs(x))
    return s + math.log(prod)


@njit(cache=True, fastmath={"reassoc", "contract"})
def _softplus_sigmoid_segment(pre, q, j0, j1):
    """:func:`_softplus_segment`, also writing ``q[j] = sigmoid(pre[j])`` (as
    :func:`sigmoid_vec`, from the same ``e^{−|x|}``) for ``j0 ≤ j < j1``."""
    s = 0.0
    prod = 1.0
    for j in range(j0, j1):
        x = pre[j]
        u = _exp_neg(-abs(x))
        s += x if not (x <= 0.0) else 0.0
        d = 1.0 + u
        prod *= d
        q[j] = (u if x < 0.0 else 1.0) / d
    return s + math.log(prod)


@njit(cache=True)
def softplus_sum(pre):
    """``Σ_j softplus(pre[j])``, vectorized (:func:`_softplus_segment` on segments of
    :data:`SEGMENT` elements).

    Parameters
    ----------
    pre : (n,) float64

    Returns
    -------
    float
        The sum, as accurate as a sum of separately rounded terms; ``inf`` if an element is
        ``inf``, NaN if one is NaN (``−inf`` elements add 0).
    """
    n = pre.shape[0]
    total = 0.0
    for j0 in range(0, n, SEGMENT):
        total += _softplus_segment(pre, j0, min(n, j0 + SEGMENT))
    return total



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
        val = lin + softplus_sum(pre)
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
        for j0 in range(0, nO, SEGMENT):
            val += _softplus_sigmoid_segment(pre, q, j0, min(nO, j0 + SEGMENT))
        p = math.exp(val - log_z)
        for j in range(nO):
            q[j] *= p
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
