"""Exact expected-CD-k training of tiny binary RBMs, with the CD-bias metrics of
Fischer & Igel (2011) recorded along the way (the CD-bias theory page of the documentation).

No sampling: every iteration enumerates the ``NV = 2**nv`` visible and ``NH = 2**nh``
hidden states and builds the two conditional tables

    PHt[h, v] = p(h | v),    PVt[v, h] = p(v | h)

(products of per-unit sigmoids, built by doubling over units with vector operations along
the conditioning state), runs the distribution of the chain from ``q_0 = p_e`` for ``k``
steps, ``r = PHt q``, ``q = PVt r`` (two matrix–vector products per step; the visible
transition matrix ``T = P(h|v) P(v|h)`` is never formed, ``q_k = p_e Tᵏ``), and takes the
batch step

    θ ← θ + η (CD − λ [W, 0, 0]),   CD = Σ_v (p_e(v) − q_k(v)) φ̄(v),
    φ̄(v) = (v σ(c + vW)ᵀ, v, σ(c + vW)).

State index ``s`` is the binary expansion of ``s`` with unit 0 as the most significant bit
(the order of :func:`rbmviz.evaluate.all_states`).

The driver is parallel over independent runs (one thread runs one run, serially), so the
results do not depend on the number of threads; there is no randomness.
"""
import math

import numpy as np
from numba import njit, prange

#: columns of the record array written by :func:`run_expected_cd_`
METRICS = ("bias", "bound", "distance", "mixing", "one_minus_mixing", "delta", "bd_bound",
           "log_likelihood", "weight_norm")
N_METRICS = len(METRICS)
#: quantities a divergence can be reported in (``reason`` of :func:`run_expected_cd_` indexes
#: this): the parameters, then the metrics
QUANTITIES = ("W", "b", "c") + METRICS
#: index of the log-likelihood in :data:`QUANTITIES` (the collapse check)
LL_REASON = 3 + METRICS.index("log_likelihood")
#: largest layer the training kernel accepts (tables of 2**(nv+nh) entries)
MAX_UNITS = 10
#: |pre-activation| above which exp(−a) products could overflow: sigmoids are then computed
#: one by one
_DIRECT_ABOVE = 700.0
#: reductions of the matrix–vector products may be reordered (vectorised); deterministic
_FM_DOT = {"reassoc", "contract", "nsz"}


@njit(cache=True, inline="always")
def _sigmoid_pair(a):
    """``(σ(a), 1 − σ(a))``, both to full relative accuracy."""
    e = math.exp(-abs(a))
    d = 1.0 / (1.0 + e)
    if a >= 0:
        return d, e * d
    return e * d, d


@njit(cache=True, inline="always")
def _softplus(a):
    return max(a, 0.0) + math.log1p(math.exp(-abs(a)))


@njit(cache=True, inline="always")
def _weight(W, i, o, transpose):
    return W[o, i] if transpose else W[i, o]


@njit(cache=True, error_model="numpy")
def _sigmoid_tables(W, bias_out, n_in, transpose, direct, P1, P0):
    """Sigmoids of every output unit for every input pattern.

    For output unit ``o`` and input state ``s`` (``2**n_in`` of them),
    ``P1[o, s] = σ(a)`` and ``P0[o, s] = 1 − σ(a)`` with ``a = bias_out[o] + Σ_i s_i M[i, o]``,
    ``M = W`` (inputs visible) or ``M = Wᵀ`` (``transpose``: inputs hidden).

    ``E = exp(−a)`` is built by doubling over the input units, ``E[o, s + 2^j] = E[o, s] ·
    exp(−M[unit, o])`` (n_in·n_out exponentials instead of 2**n_in·n_out); then
    ``P1 = 1 / (1 + E)``, ``P0 = E · P1``.  Every product is ``exp(−a)`` of some state, so
    nothing overflows while |a| < 709; ``direct`` (set when a bound on |a| exceeds 700)
    computes every sigmoid from its own pre-activation instead.

    Parameters
    ----------
    P1, P0 : (n_out, 2**n_in) float64, written.
    """
    n_out = bias_out.shape[0]
    S = 1 << n_in
    if direct:
        for o in range(n_out):
            for s in range(S):
                a = bias_out[o]
                for i in range(n_in):
                    if (s >> (n_in - 1 - i)) & 1:
                        a += _weight(W, i, o, transpose)
                P1[o, s], P0[o, s] = _sigmoid_pair(a)
        return
    for o in range(n_out):
        E = P0[o]
        E[0] = math.exp(-bias_out[o])
        size = 1
        for i in range(n_in - 1, -1, -1):          # unit n_in−1 = least significant bit
            f = math.exp(-_weight(W, i, o, transpose))
            for s in range(size):
                E[s + size] = E[s] * f
            size *= 2
        D = P1[o]
        for s in range(S):
            d = 1.0 / (1.0 + E[s])
            D[s] = d
            E[s] *= d


@njit(cache=True, error_model="numpy")
def _conditional_table(P1, P0, out):
    """``out[u, s] = Π_i (P1[i, s] if u_i else P0[i, s])``: the conditional probability of
    every state ``u`` of a layer with ``n = P1.shape[0]`` units given every state ``s`` of
    the other layer, by doubling over units (unit 0 = most significant bit of ``u``); the
    inner loops run along ``s`` (faster than splitting the units in two halves and taking
    an outer product: measured).

    Parameters
    ----------
    P1, P0 : (n, S) — per-unit probabilities of 1 and 0.   out : (2**n, S), written.
    """
    n, S = P1.shape
    for s in range(S):
        out[0, s] = 1.0
    size = 1
    for i in range(n - 1, -1, -1):
        p1 = P1[i]
        p0 = P0[i]
        for u in range(size):
            src = out[u]
            dst = out[u + size]
            for s in range(S):
                x = src[s]
                dst[s] = x * p1[s]
                src[s] = x * p0[s]
        size *= 2


@njit(cache=True, fastmath=_FM_DOT, error_model="numpy")
def _mat_vec(M, x, out):
    """``out = M x`` for ``M`` of shape (m, n) (four rows at a time)."""
    m, n = M.shape
    i = 0
    while i + 4 <= m:
        a0 = M[i]
        a1 = M[i + 1]
        a2 = M[i + 2]
        a3 = M[i + 3]
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for j in range(n):
            xj = x[j]
            s0 += a0[j] * xj
            s1 += a1[j] * xj
            s2 += a2[j] * xj
            s3 += a3[j] * xj
        out[i] = s0
        out[i + 1] = s1
        out[i + 2] = s2
        out[i + 3] = s3
        i += 4
    while i < m:
        a0 = M[i]
        s0 = 0.0
        for j in range(n):
            s0 += a0[j] * x[j]
        out[i] = s0
        i += 1


@njit(cache=True, error_model="numpy")
def _delta(W, b, c):
    """Δ = max(max_l ϑ_l, max_s ξ_s) (the CD-bias theory page; project convention)."""
    nv, nh = W.shape
    d = 0.0
    for l in range(nv):
        pos = b[l]
        neg = b[l]
        for s in range(nh):
            w = W[l, s]
            if w > 0:
                pos += w
            else:
                neg += w
        d = max(d, abs(pos), abs(neg))
    for s in range(nh):
        pos = c[s]
        neg = c[s]
        for l in range(nv):
            w = W[l, s]
            if w > 0:
                pos += w
            else:
                neg += w
        d = max(d, abs(pos), abs(neg))
    return d


@njit(cache=True, error_model="numpy")
def _max_preactivation(W, b, c):
    """``(α, β)``: α = max_s |c_s| + Σ_l |W_ls| bounds every hidden pre-activation, β the
    visible ones (the CD-bias theory page)."""
    nv, nh = W.shape
    alpha = 0.0
    for s in range(nh):
        t = abs(c[s])
        for l in range(nv):
            t += abs(W[l, s])
        alpha = max(alpha, t)
    beta = 0.0
    for l in range(nv):
        t = abs(b[l])
        for s in range(nh):
            t += abs(W[l, s])
        beta = max(beta, t)
    return alpha, beta


@njit(cache=True, error_model="numpy")
def _bd_bound(W, b, c, k):
    """Doeblin-type stand-in of the Bengio–Delalleau bound (the CD-bias theory page):
    ``2**nv (1 − 2**nv σ(−α)**nh σ(−β)**nv)**k``."""
    nv, nh = W.shape
    alpha, beta = _max_preactivation(W, b, c)
    log_eps = nv * math.log(2.0) - nh * _softplus(alpha) - nv * _softplus(beta)
    return 2.0 ** nv * (-math.expm1(log_eps)) ** k


@njit(cache=True, fastmath=_FM_DOT, error_model="numpy")
def _phi_sum(w, S1, Vb, y, dW, db, dc):
    """``Σ_v w[v] φ̄(v)`` = (Σ w v σᵀ, Σ w v, Σ w σ) into ``(dW, db, dc)``;
    ``S1[s, v] = σ(c + vW)_s``, ``Vb[l, v] = v_l``, ``y`` : (NV,) scratch."""
    nh, NV = S1.shape
    nv = Vb.shape[0]
    for l in range(nv):
        row = Vb[l]
        acc = 0.0
        for v in range(NV):
            acc += row[v] * w[v]
        db[l] = acc
    for s in range(nh):
        row = S1[s]
        acc = 0.0
        for v in range(NV):
            y[v] = w[v] * row[v]
            acc += y[v]
        dc[s] = acc
        for l in range(nv):
            bits = Vb[l]
            acc = 0.0
            for v in range(NV):
                acc += bits[v] * y[v]
            dW[l, s] = acc


@njit(cache=True, error_model="numpy")
def _record(W, b, c, pe, q, k, Vb, S1, buf, y, dW, db, dc, rec, min_ll):
    """Metrics of the current parameters into ``rec`` (order of :data:`METRICS`); ``q`` is
    ``q_k = p_e Tᵏ``.  Returns −1, or the index in :data:`QUANTITIES` of the first metric
    that is not finite, or :data:`LL_REASON` if the log-likelihood is below ``min_ll``."""
    nv, nh = W.shape
    NV = 1 << nv
    m = -np.inf
    for v in range(NV):                    # −F(v) = bᵀv + Σ_s softplus(c_s + (vW)_s)
        x = 0.0
        for l in range(nv):
            if (v >> (nv - 1 - l)) & 1:
                x += b[l]
        for s in range(nh):
            a = c[s]
            for l in range(nv):
                if (v >> (nv - 1 - l)) & 1:
                    a += W[l, s]
            x += _softplus(a)
        buf[v] = x
        m = max(m, x)
    z = 0.0
    for v in range(NV):
        z += math.exp(buf[v] - m)
    log_z = m + math.log(z)
    dist = 0.0
    ll = 0.0
    for v in range(NV):
        lp = buf[v] - log_z
        p = math.exp(lp)
        dist += abs(pe[v] - p)
        if pe[v] > 0:
            ll += pe[v] * lp
        buf[v] = q[v] - p                  # weights of the bias: Σ_v (q_k − p)(v) φ̄(v)
    dist *= 0.5
    _phi_sum(buf, S1, Vb, y, dW, db, dc)
    bias = 0.0
    for l in range(nv):
        bias = max(bias, abs(db[l]))
        for s in range(nh):
            bias = max(bias, abs(dW[l, s]))
    for s in range(nh):
        bias = max(bias, abs(dc[s]))
    delta = _delta(W, b, c)
    mixing = (-math.expm1(-(nv + nh) * delta)) ** k
    wn = 0.0
    for l in range(nv):
        for s in range(nh):
            wn += W[l, s] * W[l, s]
    rec[0] = bias
    rec[1] = dist * mixing
    rec[2] = dist
    rec[3] = mixing
    rec[4] = -math.expm1(k * math.log1p(-math.exp(-(nv + nh) * delta)))   # 1 − mixing, accurate
    rec[5] = delta
    rec[6] = _bd_bound(W, b, c, k)
    rec[7] = ll
    rec[8] = math.sqrt(wn)
    for i in range(rec.shape[0]):
        if not math.isfinite(rec[i]):
            return 3 + i
    if ll < min_ll:
        return LL_REASON
    return -1


@njit(cache=True, error_model="numpy")
def _iteration(W, b, c, pe, k, lr, wd, do_update, rec, Vb, S1, S0, T1, T0, PHt, PVt,
               r, q, buf, y, dW, db, dc, max_weight, min_ll, bad):
    """One exact expected-CD-k iteration for one run (module docstring), in scratch arrays;
    if ``rec`` is non-empty the metrics of the current parameters are written to it first.

    Divergence guard: returns −1 while healthy, else the index in :data:`QUANTITIES` of what
    showed the divergence — a recorded metric that is not finite, a log-likelihood below
    ``min_ll`` (then ``bad[0]`` is it and the parameters are unchanged), or a parameter that
    became non-finite or larger than ``max_weight`` in magnitude through the update (then
    ``bad[0]`` is that entry and the update is undone: the parameters stay those before it)."""
    nv, nh = W.shape
    NV = 1 << nv
    alpha, beta = _max_preactivation(W, b, c)
    _sigmoid_tables(W, c, nv, False, alpha > _DIRECT_ABOVE, S1, S0)   # hidden | every v
    _sigmoid_tables(W, b, nh, True, beta > _DIRECT_ABOVE, T1, T0)     # visible | every h
    _conditional_table(S1, S0, PHt)        # PHt[h, v] = p(h | v)
    _conditional_table(T1, T0, PVt)        # PVt[v, h] = p(v | h)
    for v in range(NV):
        q[v] = pe[v]
    for _ in range(k):                     # q_{t+1} = q_t T
        _mat_vec(PHt, q, r)
        _mat_vec(PVt, r, q)
    if rec.shape[0] > 0:
        reason = _record(W, b, c, pe, q, k, Vb, S1, buf, y, dW, db, dc, rec, min_ll)
        if reason >= 0:
            bad[0] = rec[reason - 3]
            return reason
    if not do_update:
        return -1
    for v in range(NV):                    # CD = Σ_v (p_e − q_k)(v) φ̄(v)
        buf[v] = pe[v] - q[v]
    _phi_sum(buf, S1, Vb, y, dW, db, dc)
    for l in range(nv):                    # the new parameters, checked before they are kept
        for s in range(nh):
            dW[l, s] = W[l, s] + lr * (dW[l, s] - wd * W[l, s])
        db[l] = b[l] + lr * db[l]
    for s in range(nh):
        dc[s] = c[s] + lr * dc[s]
    reason = -1
    for l in range(nv):                    # NaN fails "<= max_weight" too
        for s in range(nh):
            if reason < 0 and not abs(dW[l, s]) <= max_weight:
                reason = 0
                bad[0] = dW[l, s]
        if reason < 0 and not abs(db[l]) <= max_weight:
            reason = 1
            bad[0] = db[l]
    for s in range(nh):
        if reason < 0 and not abs(dc[s]) <= max_weight:
            reason = 2
            bad[0] = dc[s]
    if reason >= 0:
        return reason                      # not applied: the parameters stay healthy
    for l in range(nv):
        for s in range(nh):
            W[l, s] = dW[l, s]
        b[l] = db[l]
    for s in range(nh):
        c[s] = dc[s]
    return -1


@njit(parallel=True, cache=True, error_model="numpy")
def run_expected_cd_(W, b, c, pe, k, lr, wd, start, stop, record_at, out, status,
                     max_weight, max_ll_drop, best_ll, reason, value):
    """Iterations ``start`` to ``stop − 1`` of exact expected-CD-k training for ``R`` independent
    runs, in place, parallel over runs.

    Parameters
    ----------
    W : (R, nv, nh) float64, b : (R, nv), c : (R, nh) — parameters, updated in place.
    pe : (2**nv,) — the empirical data distribution p_e over visible states.
    k : int >= 1; lr : learning rate η; wd : weight decay λ (on W only).
    start, stop : iteration numbers; iteration ``t`` records (if ``t`` is in
        ``record_at``) the parameters after ``t`` updates, then updates them.  With
        ``start == stop`` only the record at ``stop`` (if scheduled) is made.
    record_at : (n_rec,) sorted int64 iteration numbers at which to record.
    out : (R, n_rec, N_METRICS) — records, written at the scheduled positions.
    status : (R,) int64 — −1 while healthy; else the number of updates a run had done when
        it diverged (that run then stops, holding the healthy parameters of that iteration).
    max_weight : float — a run diverges when an update would make a parameter non-finite or
        larger than this in magnitude (the update is not applied).
    max_ll_drop : float — a run diverges when a recorded log-likelihood falls more than this
        below the best one recorded so far (a likelihood collapse).
    best_ll : (R,) float64 — the best recorded log-likelihood of every run (−inf before the
        first record), read and updated (it carries the collapse check across calls).
    reason : (R,) int64 — written: index in :data:`QUANTITIES` of what showed it.
    value : (R,) float64 — written: the offending value.
    """
    R, nv, nh = W.shape
    NV = 1 << nv
    NH = 1 << nh
    first = np.searchsorted(record_at, start)
    empty = np.empty(0)
    last = stop if start == stop else stop - 1
    Vb = np.empty((nv, NV))                # Vb[l, v] = bit l of visible state v
    for l in range(nv):
        for v in range(NV):
            Vb[l, v] = (v >> (nv - 1 - l)) & 1
    for rr in prange(R):
        if status[rr] >= 0:
            continue
        S1 = np.empty((nh, NV))
        S0 = np.empty((nh, NV))
        T1 = np.empty((nv, NH))
        T0 = np.empty((nv, NH))
        PHt = np.empty((NH, NV))
        PVt = np.empty((NV, NH))
        y = np.empty(NV)
        r = np.empty(NH)
        q = np.empty(NV)
        buf = np.empty(NV)
        dW = np.empty((nv, nh))
        db = np.empty(nv)
        dc = np.empty(nh)
        bad = np.empty(1)
        j = first
        Wr, br, cr = W[rr], b[rr], c[rr]
        for t in range(start, last + 1):
            rec = empty
            if j < record_at.shape[0] and record_at[j] == t:
                rec = out[rr, j]
                j += 1
            why = _iteration(Wr, br, cr, pe, k, lr, wd, t < stop, rec, Vb, S1, S0, T1, T0,
                             PHt, PVt, r, q, buf, y, dW, db, dc, max_weight,
                             best_ll[rr] - max_ll_drop, bad)
            if rec.shape[0] > 0 and why < 0:
                best_ll[rr] = max(best_ll[rr], rec[LL_REASON - 3])
            if why >= 0:
                status[rr] = t
                reason[rr] = why
                value[rr] = bad[0]
                break
