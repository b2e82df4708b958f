"""Block Gibbs sampling kernels for binary RBMs.

Random draws use the counter-based stream of :mod:`.random`.  Convention shared by every
kernel and by the BLAS path in :mod:`rbmviz.algorithms.cd` (so both draw the same numbers):
within one update that starts at counter ``c0``, Gibbs step ``t`` samples the hidden layer
with counter ``c0 + 2t`` and the visible layer with ``c0 + 2t + 1``; element ``(r, j)`` of a
layer with ``m`` units uses index ``r * m + j``.
"""
import math

import numpy as np
from numba import njit, prange

from .binary import _gather_range
from .random import stream_key, uniform


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
#: FMA contraction and reciprocal approximations are allowed; no flags that change NaN/inf
#: semantics.  ``error_model="numpy"`` drops Python's division-by-zero checks, which
#: otherwise keep LLVM from vectorising the ``1 / (1 + e)`` loops.
_FM = {"contract", "arcp", "nsz"}


@njit(cache=True, fastmath=_FM, error_model="numpy", inline="always")
def _exp_poly(t):
    """``exp(t)`` for ``t`` in [−708, 708] as ``(bits of 2**k, p)`` with ``exp(t) = 2**k · p``:
    Cody–Waite reduction ``t = k·ln2 + r`` (|r| ≤ ln2/2) and a degree-12 Taylor polynomial
    ``p ≈ exp(r)`` (relative error ≤ 4e-16 against ``math.exp``).  Branch-free, so loops
    over it vectorise; the caller views the int64 bits as the float ``2**k``."""
    k = math.floor(t * _LOG2E + 0.5)
    r = t - k * _LN2_HI - k * _LN2_LO
    p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
        1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
            1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                1.0 / 479001600))))))))))))
    return (np.int64(k) + 1023) << 52, p


@njit(cache=True, fastmath=_FM, error_model="numpy")
def denominator_flat_(x, n, bits):
    """In place ``x[i] = 1 + exp(−x[i])`` for ``i < n`` (``bits``: int64 scratch ≥ n).

    Every kernel samples a unit with pre-activation ``x`` as ``u · (1 + e^{−x}) < 1``
    (``u`` uniform), which is ``u < sigmoid(x)`` without a division, and writes
    probabilities, where it needs them, as ``1 / (1 + e^{−x})``."""
    for i in range(n):
        bits[i], x[i] = _exp_poly(min(max(-x[i], -708.0), 708.0))
    scale = bits.view(np.float64)
    for i in range(n):
        x[i] = 1.0 + x[i] * scale[i]


@njit(cache=True, fastmath=_FM, error_model="numpy", inline="always")
def _row_denominator(x, bias, F, B, m):
    """``F[j] = 1 + exp(−(x[j] + bias[j]))`` for ``j < m``, in float64 (``B``: int64 scratch)."""
    for j in range(m):
        B[j], F[j] = _exp_poly(min(max(-(np.float64(x[j]) + np.float64(bias[j])), -708.0), 708.0))
    s = B.view(np.float64)
    for j in range(m):
        F[j] = 1.0 + F[j] * s[j]


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def sample_rows_(pre, bias, sample, seed, counter, F, B):
    """``sample[r, j] = 1`` with probability ``sigmoid(pre[r, j] + bias[j])``, parallel over
    rows (a batch of chains).  The draw for element (r, j) is
    ``uniform(stream_key(seed, counter), r*m + j)``.

    Parameters
    ----------
    pre : (n, m) — the matmul part of the pre-activation (e.g. ``V @ W``).
    bias : (m,).  sample : (n, m), written.
    F, B : float64 / int64 scratch of shape ≥ (n, m).
    """
    n, m = pre.shape
    key = stream_key(seed, counter)
    for r in prange(n):
        Fr = F[r]
        _row_denominator(pre[r], bias, Fr, B[r], m)
        base = r * m
        for j in range(m):
            sample[r, j] = 1.0 if uniform(key, base + j) * Fr[j] < 1.0 else 0.0


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def sample_rows_scaled_(pre, bias, prob, scale, sample, seed, counter, F, B):
    """As :func:`sample_rows_`, also writing ``prob[r, j] = scale · p`` (CD's positive
    phase: the probabilities of the first hidden sample, pre-multiplied by ``η/|B|``)."""
    n, m = pre.shape
    key = stream_key(seed, counter)
    for r in prange(n):
        Fr = F[r]
        _row_denominator(pre[r], bias, Fr, B[r], m)
        base = r * m
        for j in range(m):
            d = Fr[j]
            prob[r, j] = scale / d
            sample[r, j] = 1.0 if uniform(key, base + j) * d < 1.0 else 0.0


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def sigmoid_rows_scaled_(pre, bias, out, scale, F, B):
    """``out[r, j] = scale · sigmoid(pre[r, j] + bias[j])``, parallel over rows."""
    n, m = pre.shape
    for r in prange(n):
        Fr = F[r]
        _row_denominator(pre[r], bias, Fr, B[r], m)
        for j in range(m):
            out[r, j] = scale / Fr[j]


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def pcd_first_layer_(pre, bias, n, out, scale, sample, seed, counter, F, B):
    """PCD's first half-step and positive phase in one parallel region: rows ``[0, n)`` of
    ``pre`` are the chains (hidden units sampled into ``sample`` with the stream's row
    index r), rows ``[n, …)`` the data (``out[r − n] = scale · sigmoid``)."""
    rows, m = pre.shape
    key = stream_key(seed, counter)
    for r in prange(rows):
        Fr = F[r]
        _row_denominator(pre[r], bias, Fr, B[r], m)
        if r < n:
            base = r * m
            for j in range(m):
                sample[r, j] = 1.0 if uniform(key, base + j) * Fr[j] < 1.0 else 0.0
        else:
            for j in range(m):
                out[r - n, j] = scale / Fr[j]


def sample_layer_(pre, bias, prob, sample, seed, counter):
    """Probabilities and samples of a layer: ``prob = sigmoid(pre + bias)``,
    ``sample ~ Bernoulli(prob)`` (convenience wrapper; allocates its scratch)."""
    n, m = pre.shape
    F = np.empty((n, m))
    B = np.empty((n, m), dtype=np.int64)
    sample_rows_scaled_(pre, bias, prob, prob.dtype.type(1.0), sample, seed, counter, F, B)


def sigmoid_(pre, bias, out):
    """``out = sigmoid(pre + bias)`` (convenience wrapper; allocates its scratch)."""
    n, m = pre.shape
    F = np.empty((n, m))
    B = np.empty((n, m), dtype=np.int64)
    sigmoid_rows_scaled_(pre, bias, out, out.dtype.type(1.0), F, B)


@njit(cache=True, error_model="numpy", inline="always")
def denominators_T_(C, bias, inT, nin, n, prob, bits):
    """``prob[o*n + r] = 1 + exp(−(bias[o] + Σ_i C[o, i] · inT[i*n + r]))`` for the
    ``m = C.shape[0]`` output units of ``n`` chains in unit-major flat layout (sums in input
    order), the shared first half of :func:`_layer_serial_T` and
    :func:`rbmviz.kernels.dc.dc_updates_serial_`."""
    m = C.shape[0]
    for o in range(m):
        base = o * n
        bo = bias[o]
        for r in range(n):
            prob[base + r] = bo
        for i in range(nin):
            coef = C[o, i]
            src = i * n
            for r in range(n):
                prob[base + r] += coef * inT[src + r]
    denominator_flat_(prob, m * n, bits)


@njit(cache=True, error_model="numpy")
def _uniforms_(U, key, count):
    """``U[q] = uniform(key, q)`` for ``q < count``: the stream in its own (row-major) index
    order, a contiguous loop that vectorises — several times faster than drawing inside the
    unit-major loops."""
    for q in range(count):
        U[q] = uniform(key, q)


@njit(cache=True, error_model="numpy")
def _layer_serial_T(C, bias, inT, nin, n, prob, sample, bits, U, key, mode):
    """One layer for ``n`` chains in *unit-major* (transposed) flat layout, so the inner loops
    run over chains rather than over a handful of units.

    With ``d[o*n + r] = 1 + exp(−(bias[o] + Σ_i C[o, i] · inT[i*n + r]))`` for the ``m``
    output units ``o`` (``C`` : (m, nin)): ``mode`` 0 writes probabilities ``prob = 1/d``;
    1 draws ``sample[o*n + r] = [u · d < 1]`` (``u`` = stream index ``r*m + o`` of ``key``,
    the row-major convention of the module docstring, so both code paths draw the same
    numbers; the ``n·m`` uniforms are drawn first into ``U`` by :func:`_uniforms_`); 2 does
    both.  ``prob`` is scratch in every mode."""
    m = C.shape[0]
    denominators_T_(C, bias, inT, nin, n, prob, bits)
    if mode != 0:
        _uniforms_(U, key, n * m)
        for o in range(m):
            base = o * n
            for r in range(n):
                sample[base + r] = 1.0 if U[r * m + o] * prob[base + r] < 1.0 else 0.0
    if mode != 1:
        for q in range(m * n):
            prob[q] = 1.0 / prob[q]


@njit(cache=True, error_model="numpy")
def _build_table(C, bias, nin, table, bits):
    """``table[s*m + o] = d`` of :func:`_layer_serial_T` for every binary input pattern ``s``
    (bit ``nin−1−i`` of ``s`` is input ``i``), summed in the same order as there, so drawing
    from the table gives bit-identical samples."""
    m = C.shape[0]
    for s in range(1 << nin):
        for o in range(m):
            pre = bias[o]
            for i in range(nin):
                pre += C[o, i] * np.float64((s >> (nin - 1 - i)) & 1)
            table[s * m + o] = pre
    denominator_flat_(table, (1 << nin) * m, bits)


@njit(cache=True, error_model="numpy")
def _draw_from_table(table, m, inT, nin, n, sample, U, key):
    """Draw a layer for ``n`` chains from a pattern table (see :func:`_build_table`), the
    uniforms first (:func:`_uniforms_`, scratch ``U`` of ≥ n·m)."""
    _uniforms_(U, key, n * m)
    for r in range(n):
        s = 0
        for i in range(nin):
            s = (s << 1) | np.int64(inT[i * n + r] != 0.0)
        row = s * m
        base = r * m
        for o in range(m):
            sample[o * n + r] = 1.0 if U[base + o] * table[row + o] < 1.0 else 0.0


def use_pattern_table(n_in, n_chains, k, max_bits=10):
    """Whether drawing a layer from a table of all ``2**n_in`` input patterns (rebuilt once
    per update) is cheaper than computing it for ``n_chains`` chains at each of ``k`` steps."""
    return n_in <= max_bits and (1 << n_in) * 2 <= n_chains * k


@njit(cache=True, error_model="numpy")
def _load_(W, b, c, Wd, WT, bd, cd):
    """float64 copies of the parameters: ``Wd`` (n_v, n_h) for the visible layer, ``WT``
    (n_h, n_v) for the hidden layer."""
    nv, nh = W.shape
    for i in range(nv):
        bd[i] = b[i]
        for j in range(nh):
            Wd[i, j] = W[i, j]
            WT[j, i] = W[i, j]
    for j in range(nh):
        cd[j] = c[j]


@njit(cache=True, error_model="numpy", inline="always")
def healthy_(W, b, c, max_weight):
    """Whether every parameter is finite and at most ``max_weight`` in magnitude (the fused
    loops' check after every epoch; ``not (|x| <= max)`` is also true for NaN)."""
    nv, nh = W.shape
    healthy = True
    for i in range(nv):
        healthy &= abs(b[i]) <= max_weight
        for j in range(nh):
            healthy &= abs(W[i, j]) <= max_weight
    for j in range(nh):
        healthy &= abs(c[j]) <= max_weight
    return healthy


@njit(cache=True, error_model="numpy")
def cd_updates_serial_(W, b, c, X, order, bounds, k, persistent, chains, lr, momentum,
                       weight_decay, vW, vb, vc, seed, counter, max_weight, table_h, table_v):
    """Many CD-k / PCD-k updates in one serial call (small models, where Python overhead
    per update would dominate).

    For every epoch ``e`` (row of ``order``) and batch ``[bounds[i], bounds[i+1])`` of that
    epoch's permutation: positive statistics from the data rows with hidden probabilities;
    ``k`` block-Gibbs steps starting at the data (CD) or at ``chains`` (PCD); negative
    statistics from the sampled visible state with hidden probabilities; then
    ``v ← momentum·v + lr·(grad − weight_decay·W)`` and ``θ ← θ + v`` (in place).
    Same random stream as the BLAS path (module docstring).  States are kept unit-major
    (transposed) inside, see :func:`_layer_serial_T`.

    Parameters
    ----------
    W : (n_v, n_h); b : (n_v,); c : (n_h,) — updated in place.
    X : (N, n_v) binary data.  order : (n_epochs, N) int64 row permutations.
    bounds : (n_batches + 1,) int64 batch boundaries within a permutation.
    chains : (n_chains, n_v) persistent visible states (PCD; updated in place), ignored for CD.
    vW, vb, vc : velocity arrays (momentum), updated in place.
    max_weight : float — after every epoch the parameters are checked: an epoch that leaves
        a non-finite value or one larger than ``max_weight`` in magnitude ends the call.
    table_h, table_v : bool — draw the hidden (visible) layer of the Gibbs steps from a
        table of all input patterns, rebuilt after each update (tiny layers; see
        :func:`use_pattern_table`).  Same samples either way.

    Returns
    -------
    counter : int — the next unused position of the random stream (``+2k`` per update).
    epochs : int — epochs done (``order.shape[0]`` unless stopped by the check).
    """
    nv, nh = W.shape
    n_batches = bounds.shape[0] - 1
    dt = W.dtype.type
    maxb = 0
    for i in range(n_batches):
        maxb = max(maxb, bounds[i + 1] - bounds[i])
    nch = chains.shape[0] if persistent else maxb
    big = max(maxb, nch) * max(nv, nh)
    XT = np.empty(maxb * nv)          # data batch, unit-major: XT[i*nb + r]
    P0 = np.empty(maxb * nh)          # positive hidden probabilities
    VT = np.empty(nch * nv)           # visible chain states
    PV = np.empty(nch * nv)
    HT = np.empty(nch * nh)
    PH = np.empty(nch * nh)
    bits = np.empty(max(big, (1 << nv) * nh if table_h else 0, (1 << nh) * nv if table_v else 0),
                    dtype=np.int64)
    U = np.empty(big)                 # one layer's uniforms (_uniforms_)
    Th = np.empty((1 << nv) * nh if table_h else 0)   # hidden d for every visible pattern
    Tv = np.empty((1 << nh) * nv if table_v else 0)   # visible d for every hidden pattern
    Wd = np.empty((nv, nh))           # float64 copies: C of the visible layer ...
    WT = np.empty((nh, nv))           # ... and of the hidden layer
    bd = np.empty(nv)
    cd = np.empty(nh)
    gW = np.empty((nv, nh))
    gb = np.empty(nv)
    gc = np.empty(nh)
    for e in range(order.shape[0]):
        for bi in range(n_batches):
            lo = bounds[bi]
            nb = bounds[bi + 1] - lo
            _load_(W, b, c, Wd, WT, bd, cd)
            for r in range(nb):
                row = order[e, lo + r]
                for i in range(nv):
                    XT[i * nb + r] = X[row, i]
            if persistent:
                n = nch
                for r in range(n):
                    for i in range(nv):
                        VT[i * n + r] = chains[r, i]
                _layer_serial_T(WT, cd, XT, nv, nb, P0, HT, bits, U, stream_key(seed, counter), 0)
            else:
                n = nb
                for q in range(nb * nv):
                    VT[q] = XT[q]
            if table_h:
                _build_table(WT, cd, nv, Th, bits)
            if table_v:
                _build_table(Wd, bd, nh, Tv, bits)
            for t in range(k):
                key = stream_key(seed, counter + 2 * t)
                mode = 2 if (t == 0 and not persistent) else 1
                if table_h and mode == 1:
                    _draw_from_table(Th, nh, VT, nv, n, HT, U, key)
                else:
                    _layer_serial_T(WT, cd, VT, nv, n, PH, HT, bits, U, key, mode)
                if mode == 2:
                    for q in range(nb * nh):
                        P0[q] = PH[q]
                key = stream_key(seed, counter + 2 * t + 1)
                if table_v:
                    _draw_from_table(Tv, nv, HT, nh, n, VT, U, key)
                else:
                    _layer_serial_T(Wd, bd, HT, nh, n, PV, VT, bits, U, key, 1)
            counter += 2 * k
            _layer_serial_T(WT, cd, VT, nv, n, PH, HT, bits, U, stream_key(seed, counter), 0)
            # ascent direction: mean positive minus mean negative statistics
            inv_p = 1.0 / nb
            inv_n = 1.0 / n
            for j in range(nh):
                sp = 0.0
                for r in range(nb):
                    sp += P0[j * nb + r]
                sn = 0.0
                for r in range(n):
                    sn += PH[j * n + r]
                gc[j] = sp * inv_p - sn * inv_n
            for i in range(nv):
                sp = 0.0
                for r in range(nb):
                    sp += XT[i * nb + r]
                sn = 0.0
                for r in range(n):
                    sn += VT[i * n + r]
                gb[i] = sp * inv_p - sn * inv_n
                for j in range(nh):
                    sp = 0.0
                    for r in range(nb):
                        sp += XT[i * nb + r] * P0[j * nb + r]
                    sn = 0.0
                    for r in range(n):
                        sn += VT[i * n + r] * PH[j * n + r]
                    gW[i, j] = sp * inv_p - sn * inv_n
            for i in range(nv):
                for j in range(nh):
                    vW[i, j] = dt(momentum * vW[i, j] + lr * (gW[i, j] - weight_decay * W[i, j]))
                    W[i, j] += vW[i, j]
                vb[i] = dt(momentum * vb[i] + lr * gb[i])
                b[i] += vb[i]
            for j in range(nh):
                vc[j] = dt(momentum * vc[j] + lr * gc[j])
                c[j] += vc[j]
            if persistent:
                for r in range(n):
                    for i in range(nv):
                        chains[r, i] = VT[i * n + r]
        if not healthy_(W, b, c, max_weight):
            return counter, e + 1
    return counter, order.shape[0]


# ------------------------------------------------------------------ fused with sums of rows
# The BLAS path's products whose left factor is a sparse 0/1 layer are sums of rows
# (:mod:`rbmviz.kernels.binary`); these kernels do such a product row by row and treat the row
# at once, while it is in cache, in one parallel region.  Same sums in the same order and the
# same draws as the separate kernels, so the same bits.

@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def gather_pcd_first_layer_(idx, cnt, W, pre, bias, n, out, scale, sample, seed, counter, F, B):
    """``pre = S @ W`` for a 0/1 ``S`` given by its lists (:func:`rbmviz.kernels.binary.gather_rows_`),
    then :func:`pcd_first_layer_` on it, row by row in one parallel region."""
    rows, m = pre.shape
    key = stream_key(seed, counter)
    for r in prange(rows):
        _gather_range(idx, cnt, W, pre, r, r + 1, False)
        Fr = F[r]
        _row_denominator(pre[r], bias, Fr, B[r], m)
        if r < n:
            base = r * m
            for j in range(m):
                sample[r, j] = 1.0 if uniform(key, base + j) * Fr[j] < 1.0 else 0.0
        else:
            for j in range(m):
                out[r - n, j] = scale / Fr[j]


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def gather_sigmoid_rows_scaled_(idx, cnt, W, pre, bias, out, scale, F, B):
    """``pre = S @ W`` for a 0/1 ``S`` given by its lists, then :func:`sigmoid_rows_scaled_`
    on it, row by row in one parallel region."""
    n, m = pre.shape
    for r in prange(n):
        _gather_range(idx, cnt, W, pre, r, r + 1, False)
        Fr = F[r]
        _row_denominator(pre[r], bias, Fr, B[r], m)
        for j in range(m):
            out[r, j] = scale / Fr[j]


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def sample_rows_listed_(pre, bias, sample, seed, counter, F, B, idx, cnt):
    """:func:`sample_rows_`, also listing the ones of each sampled row as
    :func:`rbmviz.kernels.binary.active_index_` does (``idx[r, :cnt[r]]``, ascending)."""
    n, m = pre.shape
    key = stream_key(seed, counter)
    for r in prange(n):
        Fr = F[r]
        _row_denominator(pre[r], bias, Fr, B[r], m)
        base = r * m
        k = 0
        for j in range(m):
            one = uniform(key, base + j) * Fr[j] < 1.0
            sample[r, j] = 1.0 if one else 0.0
            idx[r, k] = j
            k += one
        cnt[r] = k
