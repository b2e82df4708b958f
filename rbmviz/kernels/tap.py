"""TAP / extended-mean-field inference kernels for binary RBMs (the TAP theory page of the documentation A.2, B.4, B.8).

The fixed-point iteration of :func:`rbmviz.tap.solve` alternates a BLAS matmul (numpy,
float64) with one fused, row-parallel elementwise pass per layer.  For a layer with
magnetisations ``a`` (R, n), the partner layer's magnetisations ``a'`` and variances
``c' = ν(a')`` (and ``g(a')`` at third order), the caller computes

* ``P = a' Wᵀ``-side products (the linear field),
* ``Q = c' (W∘W)`` products (minus the Onsager coefficient ``A``),
* ``T = g(a') (W∘W∘W)`` products (third order only),

and :func:`layer_update_` applies

``a_new = σ(U + P + (½ − a)·Q + (⅓ − 2ν(a))·T)``                     (the TAP theory page)

with damping ``a ← δ a_new + (1 − δ) a``.  At second order this is Alg. 1 (B.4) with
Bernoulli priors (B.8): ``A = −Q``, ``B = A a + P``, ``f_a = σ(U + B − A/2)``,
``f_c = f_a(1 − f_a)``, and the variances are damped like the means (so the iterates equal
those of the general-prior path).  At first and third order (A.3) only the magnetisations
are damped and ``c = ν(a)``, ``g = g(a)`` follow them.

``ν(m) = m − m²``, ``g(m) = (m − m²)(½ − m)`` — the derived third-order factor, not the
reference code's ``m²(1 − m)`` (the errata noted on the documentation's theory pages, EMF #1).

The visible half-step also writes the fields ``B^v``, ``A^v`` of the rows that finish in it
(converged or at the last iteration) from the products it was given, so that the solve
does not multiply again for them.  Every loop over a row's units is branch-free and
vectorises; sums over units use eight interleaved partial sums (:func:`_lane_sum`), a fixed
order, so results do not depend on the thread count.
"""
import math

import numpy as np
from numba import njit, prange

from .gibbs import _exp_poly


#: rows per parallel block (each block allocates its scratch once)
_BLOCK = 32
#: as in :mod:`.gibbs`: FMA contraction and reciprocal approximations, no NaN/inf changes
_FM = {"contract", "arcp", "nsz"}


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def layer_update_(order, damping, U, field, P, Q, T, a, c, g, diff, accumulate,
                  live, dest, thresh, last, B, A):
    """One damped TAP half-step for one layer, in place, parallel over blocks of rows.

    Parameters
    ----------
    order : int — 1 (naive mean field), 2 (TAP2 = Alg. 1 with Bernoulli priors), 3 (TAP3).
    damping : float — δ in (0, 1]; 1 is the undamped iteration.
    U : (n,) — the layer's biases.
    field : (R, n) extra field added to the pre-activation (e.g. a channel's log-likelihood
        ratio), or an array with 0 rows for none.
    P, Q, T : (R, n) — linear, second- and third-order products of the partner layer
        (``Q`` is ignored at order 1, ``T`` unless order 3).  Only read.
    a, c, g : (R, n) — means, variances, third-order factors g(a); updated in place
        (``g`` is only written at order 3).
    diff : (R,) — ``Σ_k (a_new,k − a_old,k)²`` of the (damped) means is written
        (``accumulate=False``) or added (``accumulate=True``); the sum in the fixed order of
        :func:`_lane_sum` (eight partial sums), so the elementwise loop vectorises.
    live : (R,) bool, dest : (R,) int, thresh : float, last : bool, B, A : (R_out, n)
        The fields of the rows that finish in this half-step (the visible one, which
        completes an iteration), from its products (:func:`_row_fields`): a row ``r``
        finishes when ``live[r]`` and ``last`` or ``diff[r] < thresh`` (after this
        half-step's sum); its fields go to the rows ``dest[r]`` of ``B`` and ``A``.  With
        ``B`` of 0 rows nothing is written (``live``, ``dest`` are then not read).

    The sigmoid uses the branch-free ``exp`` of :func:`rbmviz.kernels.gibbs._exp_poly`
    (relative error ≤ 4e-16; pre-activations clamped to ±708), so the loops vectorise.
    """
    R, n = a.shape
    has_field = field.shape[0] > 0
    capture = B.shape[0] > 0
    keep = 1.0 - damping
    third = 1.0 / 3.0
    n_blocks = (R + _BLOCK - 1) // _BLOCK
    for blk in prange(n_blocks):
        x = np.empty(n)
        bits = np.empty(n, dtype=np.int64)
        scale = bits.view(np.float64)
        for r in range(blk * _BLOCK, min(R, (blk + 1) * _BLOCK)):
            # row views and one loop per case (no branch inside a loop): the loops vectorise
            ar, cr, Pr = a[r], c[r], P[r]
            for k in range(n):
                x[k] = U[k] + Pr[k]
            if has_field:
                fr = field[r]
                for k in range(n):
                    x[k] += fr[k]
            if order >= 2:
                Qr = Q[r]
                for k in range(n):
                    x[k] += (0.5 - ar[k]) * Qr[k]
            if order == 3:
                Tr = T[r]
                for k in range(n):
                    ao = ar[k]
                    x[k] += (third - 2.0 * (ao - ao * ao)) * Tr[k]
            for k in range(n):
                bits[k], x[k] = _exp_poly(min(max(-x[k], -708.0), 708.0))
            if order == 2:
                for k in range(n):
                    m = 1.0 / (1.0 + x[k] * scale[k])
                    ao = ar[k]
                    an = damping * m + keep * ao
                    cr[k] = damping * (m - m * m) + keep * cr[k]
                    ar[k] = an
                    d = an - ao
                    x[k] = d * d
            elif order == 1:
                for k in range(n):
                    m = 1.0 / (1.0 + x[k] * scale[k])
                    ao = ar[k]
                    an = damping * m + keep * ao
                    cr[k] = an - an * an
                    ar[k] = an
                    d = an - ao
                    x[k] = d * d
            else:
                gr = g[r]
                for k in range(n):
                    m = 1.0 / (1.0 + x[k] * scale[k])
                    ao = ar[k]
                    an = damping * m + keep * ao
                    cr[k] = an - an * an
                    gr[k] = (an - an * an) * (0.5 - an)
                    ar[k] = an
                    d = an - ao
                    x[k] = d * d
            s = _lane_sum(x, n)
            if accumulate:
                diff[r] += s
            else:
                diff[r] = s
            if capture and live[r] and (last or diff[r] < thresh):
                _row_fields(order, P[r], Q[r], T[r], a[r], field[r] if has_field else U, has_field,
                            B[dest[r]], A[dest[r]])


@njit(cache=True, error_model="numpy")
def _row_fields(order, P, Q, T, a, field, has_field, B, A):
    """One row's fields of eqs. (33)–(34) from the products of its last half-step:
    ``A = −Q`` (0 at order 1), ``B = A·a + P [+ (⅓ − 2ν(a))·T at order 3] [+ field]`` with the
    layer's new means ``a`` — the operations of :func:`rbmviz.tap._iteration._fields`, in its
    order; inlined into the ``fastmath`` kernel, ``A·a + P`` becomes one fused multiply-add
    (within an ulp or two of ``_fields``).  ``P, Q, T, a, field, B, A`` are rows (n,);
    ``field`` is only read with ``has_field``, ``Q`` from order 2 on, ``T`` at order 3."""
    n = a.shape[0]
    third = 1.0 / 3.0
    for k in range(n):
        ak = a[k]
        av = -Q[k] if order >= 2 else 0.0
        bv = av * ak
        bv = bv + P[k]
        if order == 3:
            bv = bv + (third - 2.0 * (ak - ak * ak)) * T[k]
        if has_field:
            bv = bv + field[k]
        A[k] = av
        B[k] = bv


_LN2_HI = 6.93147180369123816490e-01      # ln 2 split for e·ln 2 without rounding (fdlibm)
_LN2_LO = 1.90821492927058770002e-10
_LN2 = 0.6931471805599453
_SQRT2 = 1.4142135623730951
_ONE_MINUS_SQRT_HALF = 0.29289321881345254   # 1 − 1/√2
_TINY = 2.2250738585072014e-308              # the smallest normal float64
_MANTISSA = (1 << 52) - 1
_ONE_BITS = 1023 << 52


@njit(cache=True, fastmath=_FM, error_model="numpy", inline="always")
def _atanh2(t):
    """``2 atanh(t) = ln((1 + t)/(1 − t))`` for ``|t| ≤ 0.172`` (the odd series to ``t^23``)."""
    t2 = t * t
    q = 1.0 / 23.0
    q = q * t2 + 1.0 / 21.0
    q = q * t2 + 1.0 / 19.0
    q = q * t2 + 1.0 / 17.0
    q = q * t2 + 1.0 / 15.0
    q = q * t2 + 1.0 / 13.0
    q = q * t2 + 1.0 / 11.0
    q = q * t2 + 1.0 / 9.0
    q = q * t2 + 1.0 / 7.0
    q = q * t2 + 1.0 / 5.0
    q = q * t2 + 1.0 / 3.0
    return 2.0 * t + 2.0 * t * (t2 * q)


@njit(cache=True, error_model="numpy", inline="always")
def _lane_sum(x, n):
    """``Σ_{k<n} x[k]`` in eight interleaved partial sums (lane ``k mod 8``) added pairwise at
    the end: a fixed order (the same bits for any thread count) that vectorises, where one
    running sum waits for every addition."""
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    n8 = n - n % 8
    for k in range(0, n8, 8):
        s0 += x[k]
        s1 += x[k + 1]
        s2 += x[k + 2]
        s3 += x[k + 3]
        s4 += x[k + 4]
        s5 += x[k + 5]
        s6 += x[k + 6]
        s7 += x[k + 7]
    for k in range(n8, n):
        s0 += x[k]
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@njit(parallel=True, cache=True, fastmath=_FM, error_model="numpy")
def entropy_rows(a, out, nu):
    """``out[r] = Σ_k −[a ln a + (1 − a) ln(1 − a)]`` (0 ln 0 = 0), parallel over blocks of rows;
    with ``nu`` of ``a``'s shape, also ``nu = a − a²`` in the same pass (a fused
    multiply-add: within an ulp of numpy's ``a - a * a``; ``nu`` with 0 rows: not written).

    Branch-free, so the loops vectorise: with ``p = min(a, 1 − a)`` (exact), the entropy
    is ``−p ln p − (1 − p) ln(1 − p)``; ``ln p = e ln 2 + 2 atanh((f − 1)/(f + 1))`` from
    ``p = 2^e f`` (``f ∈ [√½, √2)``, ``p`` raised to the smallest normal number, where
    ``p ln p`` is below 1e-305), ``ln(1 − p) = 2 atanh(−p/(2 − p))``, or ``−ln 2 +
    2 atanh((1 − 2p)/(3 − 2p))`` above ``1 − √½`` (``|t| ≤ 0.172`` in every case); each term
    within 3 ulp of ``math.log``'s, summed by :func:`_lane_sum`.  Entries outside [0, 1] (or
    NaN) count 0.
    """
    R, n = a.shape
    with_nu = nu.shape[0] > 0
    n_blocks = (R + _BLOCK - 1) // _BLOCK
    for blk in prange(n_blocks):
        pb = np.empty(n)
        pbits = pb.view(np.int64)
        fb = np.empty(n)
        fbits = fb.view(np.int64)
        eb = np.empty(n)
        for r in range(blk * _BLOCK, min(R, (blk + 1) * _BLOCK)):
            for k in range(n):
                m = a[r, k]
                p = min(m, 1.0 - m)
                pb[k] = p if p >= 0.0 else 0.0        # outside [0, 1] or NaN: no term
            if with_nu:
                ar, nr = a[r], nu[r]
                for k in range(n):
                    nr[k] = ar[k] - ar[k] * ar[k]
            for k in range(n):
                ib = pbits[k]
                fbits[k] = (ib & _MANTISSA) | _ONE_BITS
                eb[k] = np.float64((ib >> 52) - 1023)
            for k in range(n):
                p = pb[k]
                # ln p (p below the smallest normal: its term p ln p is 0 to double precision)
                f = fb[k]
                e = eb[k]
                up = 1.0 if f > _SQRT2 else 0.0
                f = f * (1.0 - 0.5 * up)
                e = e + up
                lnp = e * _LN2_HI + (_atanh2((f - 1.0) / (f + 1.0)) + e * _LN2_LO)
                lnp = lnp if p >= _TINY else 0.0
                # ln(1 − p), p in [0, ½]
                w = 1.0 if p > _ONE_MINUS_SQRT_HALF else 0.0
                tw = p * (1.0 + w)
                ln1p = _atanh2((w - tw) / (2.0 + w - tw)) - w * _LN2
                fb[k] = p * lnp + (1.0 - p) * ln1p
            out[r] = -_lane_sum(fb, n)


@njit(cache=True)
def _find(parent, i):
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:        # path compression
        nxt = parent[i]
        parent[i] = root
        i = nxt
    return root


@njit(cache=True)
def link_sorted_(X, s, n_first, window, tol_first, tol_second, parent, i0, i1):
    """The part of :func:`cluster_sorted` for rows ``i0 … i1 − 1``: links each to the later
    rows inside the window, updating the union–find array ``parent`` (start it at
    ``arange(R)``).  Consecutive ranges followed by :func:`labels_from_parent` give exactly
    :func:`cluster_sorted` (the caller can return to Python between ranges: Ctrl-C)."""
    R, n = X.shape
    for i in range(i0, i1):
        for j in range(i + 1, R):
            if s[j] - s[i] > window:
                break
            ri = _find(parent, i)
            rj = _find(parent, j)
            if ri == rj:
                continue
            same = True
            for k in range(n):
                d = abs(X[i, k] - X[j, k])
                if d >= (tol_first if k < n_first else tol_second):
                    same = False
                    break
            if same:
                if ri < rj:
                    parent[rj] = ri
                else:
                    parent[ri] = rj


@njit(cache=True)
def labels_from_parent(parent):
    """Component id of every row from a union–find array, numbered by first occurrence."""
    R = parent.shape[0]
    labels = np.empty(R, dtype=np.int64)
    ids = np.full(R, -1, dtype=np.int64)
    nxt = 0
    for i in range(R):
        root = _find(parent, i)
        if ids[root] < 0:
            ids[root] = nxt
            nxt += 1
        labels[i] = ids[root]
    return labels


@njit(cache=True)
def cluster_sorted(X, s, n_first, window, tol_first, tol_second):
    """Connected components (single linkage) of rows that agree within a tolerance.

    Two rows ``i, j`` of ``X`` (R, n) are linked when ``max_k<n_first |X_ik − X_jk| <
    tol_first`` and ``max_k≥n_first |X_ik − X_jk| < tol_second``.  The rows must be sorted
    by the key ``s`` (R,), with ``|s_i − s_j| ≤ window`` for every linked pair (e.g. ``s`` =
    row sums and ``window = n_first·tol_first + (n − n_first)·tol_second``), so only pairs
    inside the window are compared.  Returns the component id of every row, numbered by
    first occurrence in row order (0, 1, …), so the labels depend only on the sorted rows.
    (In one call; :func:`link_sorted_` does it in ranges of rows.)
    """
    parent = np.arange(X.shape[0])
    link_sorted_(X, s, n_first, window, tol_first, tol_second, parent, 0, X.shape[0])
    return labels_from_parent(parent)
