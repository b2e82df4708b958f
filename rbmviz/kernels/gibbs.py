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

from .random import stream_key, uniform


@njit(cache=True, inline="always")
def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(parallel=True, cache=True)
def sample_layer_(pre, bias, prob, sample, seed, counter):
    """Fused sigmoid + Bernoulli draw for a batch of chains, parallel over rows.

    ``prob[r, j] = sigmoid(pre[r, j] + bias[j])`` and ``sample[r, j] = 1`` with that
    probability.  ``prob`` may be the same array as ``pre`` (in place).

    Parameters
    ----------
    pre : (n, m) float array — the matmul part of the pre-activation (e.g. ``V @ W``).
    bias : (m,) float array.
    prob, sample : (n, m) float arrays, written.
    seed, counter : int — address of this call in the random stream.
    """
    n, m = pre.shape
    key = stream_key(seed, counter)
    for r in prange(n):
        base = r * m
        for j in range(m):
            p = _sigmoid(pre[r, j] + bias[j])
            prob[r, j] = p
            sample[r, j] = 1.0 if uniform(key, base + j) < p else 0.0


@njit(parallel=True, cache=True)
def sigmoid_(pre, bias, out):
    """``out[r, j] = sigmoid(pre[r, j] + bias[j])`` (no sampling), parallel over rows."""
    n, m = pre.shape
    for r in prange(n):
        for j in range(m):
            out[r, j] = _sigmoid(pre[r, j] + bias[j])


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10


@njit(cache=True, fastmath={"contract", "arcp", "nsz"})
def sigmoid_flat_(x, n, bits):
    """In place ``x[i] = 1 / (1 + exp(−x[i]))`` for ``i < n``, branch-free so that LLVM
    vectorises it: ``exp`` by Cody–Waite reduction ``t = k·ln2 + r`` (|r| ≤ ln2/2) and a
    degree-12 Taylor polynomial for ``exp(r)``; ``2**k`` is assembled in the exponent bits
    (``bits`` : int64 scratch of length ≥ n).  Relative error ≤ 4e-16 against ``math.exp``
    for |x| < 708; beyond, the result saturates at exp(∓708)-sized values."""
    for i in range(n):
        t = min(max(-x[i], -708.0), 708.0)
        k = math.floor(t * _LOG2E + 0.5)
        r = t - k * _LN2_HI - k * _LN2_LO
        x[i] = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
            1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
                1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                    1.0 / 479001600))))))))))))
        bits[i] = (np.int64(k) + 1023) << 52
    scale = bits.view(np.float64)
    for i in range(n):
        x[i] = 1.0 / (1.0 + x[i] * scale[i])


@njit(cache=True)
def _layer_serial(V, nrows, M, bias, prob, sample, bits, key, draw):
    """Flat buffers: ``prob[r*m + j] = sigmoid(bias_j + Σ_i V[r*nin + i] M[i, j])`` (rows of M
    are accumulated, so the inner loop over units carries no dependency chain), then ``sample[r*m + j] = 1`` with that probability when ``draw``.
    The draw for element ``(r, j)`` uses index ``r*m + j`` of the stream ``key``."""
    nin, m = M.shape
    for r in range(nrows):
        o = r * m
        for j in range(m):
            prob[o + j] = bias[j]
        for i in range(nin):
            vi = V[r * nin + i]  # branch-free: a data-dependent `if` mispredicts half the time
            for j in range(m):
                prob[o + j] += vi * M[i, j]
    n = nrows * m
    sigmoid_flat_(prob, n, bits)
    if draw:
        for q in range(n):
            sample[q] = 1.0 if uniform(key, q) < prob[q] else 0.0


@njit(cache=True)
def cd_updates_serial_(W, b, c, X, order, bounds, k, persistent, chains, lr, momentum,
                       weight_decay, vW, vb, vc, seed, counter, max_weight):
    """Many CD-k / PCD-k updates in one serial call (small models, where Python overhead
    per update would dominate).

    For every epoch ``e`` (row of ``order``) and batch ``[bounds[i], bounds[i+1])`` of that
    epoch's permutation: positive statistics from the data rows with hidden probabilities;
    ``k`` block-Gibbs steps starting at the data (CD) or at ``chains`` (PCD); negative
    statistics from the sampled visible state with hidden probabilities; then
    ``v ← momentum·v + lr·(grad − weight_decay·W)`` and ``θ ← θ + v`` (in place).
    Same random stream as the BLAS path (module docstring).

    Parameters
    ----------
    W : (n_v, n_h); b : (n_v,); c : (n_h,) — updated in place.
    X : (N, n_v) binary data.  order : (n_epochs, N) int64 row permutations.
    bounds : (n_batches + 1,) int64 batch boundaries within a permutation.
    chains : (n_chains, n_v) persistent visible states (PCD; updated in place), ignored for CD.
    vW, vb, vc : velocity arrays (momentum), updated in place.

    After every epoch the parameters are checked: an epoch that leaves a non-finite value
    or one larger than ``max_weight`` in magnitude ends the call.

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
    Xb = np.empty(maxb * nv, dtype=np.float64)
    P0 = np.empty(maxb * nh, dtype=np.float64)
    V = np.empty(nch * nv, dtype=np.float64)
    PV = np.empty(nch * nv, dtype=np.float64)
    H = np.empty(nch * nh, dtype=np.float64)
    PH = np.empty(nch * nh, dtype=np.float64)
    bits = np.empty(big, dtype=np.int64)
    Wd = np.empty((nv, nh), dtype=np.float64)
    WT = np.empty((nh, nv), dtype=np.float64)
    bd = np.empty(nv, dtype=np.float64)
    cd = np.empty(nh, dtype=np.float64)
    gW = np.empty((nv, nh), dtype=np.float64)
    gb = np.empty(nv, dtype=np.float64)
    gc = np.empty(nh, dtype=np.float64)
    for e in range(order.shape[0]):
        for bi in range(n_batches):
            lo = bounds[bi]
            nb = bounds[bi + 1] - lo
            for i in range(nv):
                bd[i] = b[i]
                for j in range(nh):
                    Wd[i, j] = W[i, j]
                    WT[j, i] = W[i, j]
            for j in range(nh):
                cd[j] = c[j]
            for r in range(nb):
                row = order[e, lo + r]
                for i in range(nv):
                    Xb[r * nv + i] = X[row, i]
            if persistent:
                n = nch
                for r in range(n):
                    for i in range(nv):
                        V[r * nv + i] = chains[r, i]
                _layer_serial(Xb, nb, Wd, cd, P0, H, bits, stream_key(seed, counter), False)
            else:
                n = nb
                for q in range(nb * nv):
                    V[q] = Xb[q]
            for t in range(k):
                _layer_serial(V, n, Wd, cd, PH, H, bits, stream_key(seed, counter + 2 * t), True)
                if t == 0 and not persistent:
                    for q in range(nb * nh):
                        P0[q] = PH[q]
                _layer_serial(H, n, WT, bd, PV, V, bits, stream_key(seed, counter + 2 * t + 1), True)
            counter += 2 * k
            _layer_serial(V, n, Wd, cd, PH, H, bits, stream_key(seed, counter), False)
            # ascent direction: mean positive minus mean negative statistics
            gW[:, :] = 0.0
            gb[:] = 0.0
            gc[:] = 0.0
            inv_p = 1.0 / nb
            inv_n = 1.0 / n
            for r in range(nb):
                for i in range(nv):
                    x = Xb[r * nv + i] * inv_p
                    gb[i] += x
                    for j in range(nh):
                        gW[i, j] += x * P0[r * nh + j]
                for j in range(nh):
                    gc[j] += P0[r * nh + j] * inv_p
            for r in range(n):
                for i in range(nv):
                    x = V[r * nv + i] * inv_n
                    gb[i] -= x
                    for j in range(nh):
                        gW[i, j] -= x * PH[r * nh + j]
                for j in range(nh):
                    gc[j] -= PH[r * nh + j] * inv_n
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
                        chains[r, i] = V[r * nv + i]
        healthy = True                       # `not (|x| <= max)` is also true for NaN
        for i in range(nv):
            healthy &= abs(b[i]) <= max_weight
            for j in range(nh):
                healthy &= abs(W[i, j]) <= max_weight
        for j in range(nh):
            healthy &= abs(c[j]) <= max_weight
        if not healthy:
            return counter, e + 1
    return counter, order.shape[0]
