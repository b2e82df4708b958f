"""Numba kernel of the pseudo-likelihoods (rbmviz.evaluate.pseudo): the log-conditionals
``log p(v_i | v_{−i})`` of chosen sites, from the hidden pre-activations.  Plain arrays in
and out; float64 accumulation; parallel over rows (each row's value is computed by one
thread in a fixed order, so the result does not depend on the thread count)."""
from __future__ import annotations

from numba import njit, prange

from .exact import _softplus


@njit(parallel=True, cache=True, error_model="numpy")
def site_log_conditionals_(pre, V, W, b, sites, out):
    """``out[r, s] = log p(v_i = V[r, i] | rest)`` for ``i = sites[s]``:

    ``−softplus(F(v) − F(v with unit i flipped))`` with
    ``F(flip_i v) − F(v) = −b_i s_i − Σ_j [softplus(pre_j + s_i W_ij) − softplus(pre_j)]``,
    ``s_i = 1 − 2 v_i`` and ``pre = V W + c`` (shape (N, n_hidden)).
    """
    n, nh = pre.shape
    for r in prange(n):
        base = 0.0
        for j in range(nh):
            base += _softplus(float(pre[r, j]))
        for q in range(sites.shape[0]):
            i = sites[q]
            s = 1.0 - 2.0 * float(V[r, i])
            flipped = 0.0
            for j in range(nh):
                flipped += _softplus(float(pre[r, j]) + s * float(W[i, j]))
            d_f = -float(b[i]) * s - (flipped - base)
            out[r, q] = -_softplus(-d_f)
