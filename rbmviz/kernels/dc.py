"""Fused serial kernel of the inner-loop rules for small models: S-DCP, CS-DCP, CG and SSD
(Upadhya & Sastry 2017, Alg. 3 and 4; Melchior et al. 2016, Alg. 1; Carlson et al. 2015).

:func:`dc_updates_serial_` runs whole epochs in one call, as
:func:`rbmviz.kernels.gibbs.cd_updates_serial_` does for CD: states unit-major (inner loops over
chains), the visible (or hidden) layer drawn from a table of all its input patterns when that
is cheaper (:func:`~rbmviz.kernels.gibbs.use_pattern_table`), float64 arithmetic inside.
It computes what the BLAS path of :class:`rbmviz.algorithms.dcp.InnerLoop` computes, in the
same random stream: within an update starting at counter ``c0``, Gibbs step ``s = l·K′ + t``
draws the hidden layer with ``c0 + 2s`` and the visible layer with ``c0 + 2s + 1`` (the data
term shares the stream position of the first hidden draw, as there), element ``(r, j)`` of a
layer with ``m`` units using index ``r·m + j``.

Agreement with the BLAS path (float64): the draws are the same and every parameter agrees to
rounding (≈1e-15 per step).  Bit-for-bit equality is not attainable in general: OpenBLAS sums
the products of a GEMM/GEMV in an order that depends on the shapes and the CPU (e.g. the last
row of an odd-sized block), and LAPACK builds differ in the last bit of an SVD.  A draw could
differ only if a uniform fell within rounding of a probability (probability ≈1e-16 per draw).
What *is* bit-for-bit: the fused kernel against itself (any thread count, any process), and
S-DCP with ``d = 1`` (or CG with frozen zero offsets) against CD's fused kernel.

The step rules (``rule``):

* ``RULE_PLAIN`` (S-DCP): ``θ ← θ + η(∇g(θ⁽ᵗ⁾) − f̂′(θ, Ṽ))`` (the DC-programming theory page, with
  momentum / weight decay as :meth:`rbmviz.algorithms.base.Algorithm.apply_gradient_`);
* ``RULE_CENTERED`` (CS-DCP, CG): offsets slide towards the batch means, then the centered
  direction ``∇W̃ = ∇W − ∇b λᵀ − μ∇cᵀ``, ``∇b − ∇W̃λ``, ``∇c − ∇W̃ᵀμ`` (the DC-programming theory page) is
  applied to the normal parameters;
* ``RULE_SSD``: the #-operators ``‖G‖_S1·UVᵀ`` (thin SVD) and ``‖g‖₁·sign g`` (Carlson, Cevher & Carin 2015);
  a non-finite gradient gives a NaN step, so the run's divergence check reports the epoch.
"""
import numpy as np
from numba import njit

from .gibbs import _build_table, _draw_from_table, _layer_serial_T, _load_, healthy_
from .random import stream_key

RULE_PLAIN = 0
RULE_CENTERED = 1
RULE_SSD = 2


@njit(cache=True, error_model="numpy")
def _apply_step_(W, b, c, gW, gb, gc, lr, momentum, weight_decay, vW, vb, vc):
    """``θ ← θ + η·g`` (``momentum = weight_decay = 0``), else ``v ← m·v + η(g − λW)``,
    ``θ ← θ + v``: the operations of ``Algorithm.apply_gradient_`` in the same order."""
    nv, nh = W.shape
    if momentum == 0.0 and weight_decay == 0.0:
        for i in range(nv):
            for j in range(nh):
                W[i, j] += lr * gW[i, j]
            b[i] += lr * gb[i]
        for j in range(nh):
            c[j] += lr * gc[j]
        return
    for i in range(nv):
        for j in range(nh):
            vW[i, j] *= momentum
            vW[i, j] += lr * (gW[i, j] - weight_decay * W[i, j])
            W[i, j] += vW[i, j]
        vb[i] *= momentum
        vb[i] += lr * gb[i]
        b[i] += vb[i]
    for j in range(nh):
        vc[j] *= momentum
        vc[j] += lr * gc[j]
        c[j] += vc[j]


@njit(cache=True, error_model="numpy")
def centered_direction_(gW, gb, gc, mu, lam, mu_batch, lam_batch, nu_mu, nu_lambda):
    """Slide the offsets, ``μ ← (1−ν_μ)μ + ν_μ μ_batch``, ``λ ← (1−ν_λ)λ + ν_λ λ_batch``
    (in place), then turn the normal ascent direction ``(gW, gb, gc)`` (in place) into the
    centered step in normal parameters with the new offsets:
    ``gW ← gW − gb λᵀ − μ gcᵀ``, ``gb ← gb − gW λ``, ``gc ← gc − gWᵀ μ`` (the DC-programming theory page;
    Upadhya & Sastry Alg. 4 steps 4.2–4.5)."""
    nv, nh = gW.shape
    for i in range(nv):
        mu[i] *= 1.0 - nu_mu
        mu[i] += nu_mu * mu_batch[i]
    for j in range(nh):
        lam[j] *= 1.0 - nu_lambda
        lam[j] += nu_lambda * lam_batch[j]
    for i in range(nv):
        for j in range(nh):
            gW[i, j] -= gb[i] * lam[j]
        for j in range(nh):
            gW[i, j] -= mu[i] * gc[j]
    for i in range(nv):
        s = 0.0
        for j in range(nh):
            s += gW[i, j] * lam[j]
        gb[i] -= s
    for j in range(nh):
        s = 0.0
        for i in range(nv):
            s += gW[i, j] * mu[i]
        gc[j] -= s


@njit(cache=True, error_model="numpy")
def _sharp_vector_(g, scale):
    """In place ``g ← scale·‖g‖₁ sign(g)`` (``sign(0) = 0``)."""
    l1 = 0.0
    for i in range(g.size):
        l1 += abs(g[i])
    for i in range(g.size):
        g[i] = (l1 * np.sign(g[i])) * scale


@njit(cache=True, error_model="numpy")
def sharp_direction_(gW, gb, gc, scale_b, scale_c):
    """In place: ``gW ← ‖gW‖_S1 · U Vᵀ`` (thin SVD, directions with ``σ_k ≤ max(J, M)·eps·σ_max``
    dropped), ``gb ← scale_b·‖gb‖₁ sign(gb)``, ``gc ← scale_c·‖gc‖₁ sign(gc)`` — the
    #-operators of the Schatten-∞ and ℓ∞ norms (Carlson, Cevher & Carin 2015).  A non-finite ``gW`` becomes
    all NaN (no SVD is attempted)."""
    nv, nh = gW.shape
    finite = True
    for i in range(nv):
        for j in range(nh):
            finite &= np.isfinite(gW[i, j])
    if not finite:
        gW[:, :] = np.nan
    else:
        U, sig, Vt = np.linalg.svd(gW, full_matrices=False)
        if sig.size == 0 or sig[0] == 0.0:
            gW[:, :] = 0.0
        else:
            tol = max(nv, nh) * np.finfo(np.float64).eps * sig[0]
            r = 0
            nuc = 0.0
            for q in range(sig.size):
                nuc += sig[q]
                if sig[q] > tol:
                    r += 1
            for i in range(nv):
                for j in range(nh):
                    s = 0.0
                    for q in range(r):
                        s += U[i, q] * Vt[q, j]
                    gW[i, j] = nuc * s
    _sharp_vector_(gb, scale_b)
    _sharp_vector_(gc, scale_c)


@njit(cache=True, error_model="numpy")
def _statistics_(VT, PH, nv, nh, n, inv, gW, gb, gc, PR):
    """``gW[i, j] = Σ_r V[r, i]·P[r, j] · inv``, ``gb = Σ_r V · inv``, ``gc = Σ_r P · inv``
    from unit-major ``VT``, ``PH``; every sum runs in row order ``r = 0, 1, …`` (as CD's
    fused kernel sums).  ``PR``: scratch ≥ n·n_h for ``P`` row-major.  The loop over rows is
    outermost, so consecutive additions into one sum are independent of each other's
    latency, and the innermost loop runs over the hidden units (vectorised)."""
    for j in range(nh):
        s = 0.0
        for r in range(n):
            p = PH[j * n + r]
            PR[r * nh + j] = p
            s += p
        gc[j] = s * inv
    for i in range(nv):
        gb[i] = 0.0
        for j in range(nh):
            gW[i, j] = 0.0
    for r in range(n):
        row = r * nh
        for i in range(nv):
            v = VT[i * n + r]
            gb[i] += v
            for j in range(nh):
                gW[i, j] += v * PR[row + j]
    for i in range(nv):
        gb[i] *= inv
        for j in range(nh):
            gW[i, j] *= inv


@njit(cache=True, error_model="numpy")
def dc_updates_serial_(W, b, c, X, order, bounds, d, k_inner, rule, lr, momentum, weight_decay,
                       vW, vb, vc, mu, lam, nu_mu, nu_lambda, scale_b, scale_c, seed, counter,
                       max_weight, table_h, table_v):
    """Many S-DCP / CS-DCP / CG / SSD updates in one serial call (small models).

    For every epoch ``e`` (row of ``order``) and batch ``[bounds[i], bounds[i+1])`` of that
    epoch's permutation (``X_B``, ``N`` rows), from ``θ⁽ᵗ⁾`` (Upadhya & Sastry Alg. 3/4 with the
    gradient reset of the errata of the theory pages):

    1. data term once: ``P⁰ = σ(X_B W + c)``, ``∇g = (X_BᵀP⁰/N, mean X_B, mean P⁰)`` (eq. 5);
       the batch means are the centering targets ``μ_batch``, ``λ_batch``;
    2. chains ``Ṽ ← X_B``; for ``l = 0 … d−1``: ``K′`` block-Gibbs steps under the current
       parameters continuing from ``Ṽ``; ``P = σ(ṼW + c)``, ``f̂′ = (ṼᵀP/N, mean Ṽ, mean P)``
       (eq. 6); the ascent direction ``∇g − f̂′`` is turned into a step by ``rule`` (module
       docstring) and applied (with momentum / weight decay when set).

    CG is ``d = 1``, ``k_inner = k`` with ``RULE_CENTERED``; SSD ``d = 1`` with ``RULE_SSD``.

    Parameters
    ----------
    W : (n_v, n_h); b : (n_v,); c : (n_h,) — updated in place (float64 or float32).
    X : (N, n_v) binary data.  order : (n_epochs, N) int64.  bounds : (n_batches + 1,) int64.
    d, k_inner : int — inner steps per batch and Gibbs steps per inner step.
    rule : int — ``RULE_PLAIN``, ``RULE_CENTERED`` or ``RULE_SSD``.
    lr, momentum, weight_decay : float.  vW, vb, vc : velocities, updated in place.
    mu, lam : (n_v,), (n_h,) offsets, updated in place (``RULE_CENTERED``; else ignored).
    nu_mu, nu_lambda : float — sliding factors of the offsets.
    scale_b, scale_c : float — SSD's bias steps relative to ``lr`` (``ε_b/η``, ``ε_c/η``).
    seed, counter : the Gibbs stream and its next unused position.
    max_weight : float — after every epoch the parameters are checked; an epoch that leaves a
        non-finite value or one larger than ``max_weight`` in magnitude ends the call.
    table_h, table_v : bool — draw the hidden (visible) layer of the Gibbs steps from a table
        of all input patterns, rebuilt after every parameter step.  Same samples either way.

    Returns
    -------
    counter : int — next unused stream position (``+2·d·k_inner`` per update).
    epochs : int — epochs done (``order.shape[0]`` unless stopped by the check).
    """
    nv, nh = W.shape
    n_batches = bounds.shape[0] - 1
    maxb = 0
    for i in range(n_batches):
        maxb = max(maxb, bounds[i + 1] - bounds[i])
    XT = np.empty(maxb * nv)          # the batch, unit-major: XT[i*nb + r]
    P0 = np.empty(maxb * nh)          # σ(X_B W + c) at θ⁽ᵗ⁾
    VT = np.empty(maxb * nv)          # chain states Ṽ
    PV = np.empty(maxb * nv)
    HT = np.empty(maxb * nh)
    PH = np.empty(maxb * nh)
    nth = (1 << nv) * nh if table_h else 0
    ntv = (1 << nh) * nv if table_v else 0
    bits = np.empty(max(maxb * max(nv, nh), nth, ntv), dtype=np.int64)
    U = np.empty(maxb * max(nv, nh))  # the uniforms of one layer
    PR = np.empty(maxb * nh)          # hidden probabilities, row-major
    Th = np.empty(nth)
    Tv = np.empty(ntv)
    Wd = np.empty((nv, nh))
    WT = np.empty((nh, nv))
    bd = np.empty(nv)
    cd = np.empty(nh)
    Gd = np.empty((nv, nh))           # ∇g(θ⁽ᵗ⁾)
    gbd = np.empty(nv)
    gcd = np.empty(nh)
    gW = np.empty((nv, nh))
    gb = np.empty(nv)
    gc = np.empty(nh)
    muf = np.empty(nv)                # float64 working copies of the offsets
    lamf = np.empty(nh)
    mub = np.empty(nv)                # μ_batch, λ_batch in the offsets' dtype
    lamb = np.empty(nh)
    dt = mu.dtype.type
    for e in range(order.shape[0]):
        for bi in range(n_batches):
            lo = bounds[bi]
            nb = bounds[bi + 1] - lo
            inv = 1.0 / nb
            _load_(W, b, c, Wd, WT, bd, cd)
            for r in range(nb):
                row = order[e, lo + r]
                for i in range(nv):
                    XT[i * nb + r] = X[row, i]
            # data term, fused with the first hidden draw of the chains (which start at X_B)
            _layer_serial_T(WT, cd, XT, nv, nb, P0, HT, bits, U, stream_key(seed, counter), 2)
            for q in range(nb * nv):
                VT[q] = XT[q]
            _statistics_(XT, P0, nv, nh, nb, inv, Gd, gbd, gcd, PR)
            for i in range(nv):
                mub[i] = dt(gbd[i])
            for j in range(nh):
                lamb[j] = dt(gcd[j])
            for l in range(d):
                if table_h:
                    _build_table(WT, cd, nv, Th, bits)
                if table_v:
                    _build_table(Wd, bd, nh, Tv, bits)
                for t in range(k_inner):
                    s = l * k_inner + t
                    if s > 0:
                        key = stream_key(seed, counter + 2 * s)
                        if table_h:
                            _draw_from_table(Th, nh, VT, nv, nb, HT, U, key)
                        else:
                            _layer_serial_T(WT, cd, VT, nv, nb, PH, HT, bits, U, key, 1)
                    key = stream_key(seed, counter + 2 * s + 1)
                    if table_v:
                        _draw_from_table(Tv, nv, HT, nh, nb, VT, U, key)
                    else:
                        _layer_serial_T(Wd, bd, HT, nh, nb, PV, VT, bits, U, key, 1)
                _layer_serial_T(WT, cd, VT, nv, nb, PH, HT, bits, U, key, 0)
                # ascent direction of the convex sub-problem: ∇g(θ⁽ᵗ⁾) − f̂′(θ, Ṽ)
                _statistics_(VT, PH, nv, nh, nb, inv, gW, gb, gc, PR)
                for i in range(nv):
                    for j in range(nh):
                        gW[i, j] = Gd[i, j] - gW[i, j]
                    gb[i] = gbd[i] - gb[i]
                for j in range(nh):
                    gc[j] = gcd[j] - gc[j]
                if rule == RULE_CENTERED:
                    for i in range(nv):
                        muf[i] = mu[i]
                    for j in range(nh):
                        lamf[j] = lam[j]
                    centered_direction_(gW, gb, gc, muf, lamf, mub, lamb, nu_mu, nu_lambda)
                    for i in range(nv):
                        mu[i] = muf[i]
                    for j in range(nh):
                        lam[j] = lamf[j]
                elif rule == RULE_SSD:
                    sharp_direction_(gW, gb, gc, scale_b, scale_c)
                _apply_step_(W, b, c, gW, gb, gc, lr, momentum, weight_decay, vW, vb, vc)
                if l + 1 < d:
                    _load_(W, b, c, Wd, WT, bd, cd)
            counter += 2 * d * k_inner
        if not healthy_(W, b, c, max_weight):
            return counter, e + 1
    return counter, order.shape[0]
