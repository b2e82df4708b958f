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
def layer_update_(order, damping, U, field, P, Q, T, a, c, g, diff, accumulate):
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
        (``accumulate=False``) or added (``accumulate=True``).

    The sigmoid uses the branch-free ``exp`` of :func:`rbmviz.kernels.gibbs._exp_poly`
    (relative error ≤ 4e-16; pre-activations clamped to ±708), so the loops vectorise.
    """
    R, n = a.shape
    has_field = field.shape[0] > 0
    keep = 1.0 - damping
    third = 1.0 / 3.0
    n_blocks = (R + _BLOCK - 1) // _BLOCK
    for blk in prange(n_blocks):
        x = np.empty(n)
        bits = np.empty(n, dtype=np.int64)
        scale = bits.view(np.float64)
        for r in range(blk * _BLOCK, min(R, (blk + 1) * _BLOCK)):
            for k in range(n):
                ao = a[r, k]
                v = U[k] + P[r, k]
                if has_field:
                    v += field[r, k]
                if order >= 2:
                    v += (0.5 - ao) * Q[r, k]
                if order == 3:
                    v += (third - 2.0 * (ao - ao * ao)) * T[r, k]
                x[k] = min(max(-v, -708.0), 708.0)
            for k in range(n):
                bits[k], x[k] = _exp_poly(x[k])
            s = 0.0
            for k in range(n):
                m = 1.0 / (1.0 + x[k] * scale[k])
                ao = a[r, k]
                an = damping * m + keep * ao
                if order == 2:
                    c[r, k] = damping * (m - m * m) + keep * c[r, k]
                else:
                    c[r, k] = an - an * an
                    if order == 3:
                        g[r, k] = (an - an * an) * (0.5 - an)
                a[r, k] = an
                d = an - ao
                s += d * d
            if accumulate:
                diff[r] += s
            else:
                diff[r] = s


@njit(parallel=True, cache=True, error_model="numpy")
def entropy_rows(a, out):
    """``out[r] = Σ_k −[a ln a + (1 − a) ln(1 − a)]`` (0 ln 0 = 0), parallel over rows."""
    R, n = a.shape
    for r in prange(R):
        s = 0.0
        for k in range(n):
            m = a[r, k]
            if m > 0.0:
                s -= m * math.log(m)
            if m < 1.0:
                s -= (1.0 - m) * math.log1p(-m)
        out[r] = s


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
