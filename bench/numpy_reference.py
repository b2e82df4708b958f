"""Plain-numpy reference implementations, the peers of the rbmviz kernels in bench/.

Written the way a careful numpy user would: vectorised over the batch, one matmul per
layer, ``Generator.random`` for the draws, no Python loops over units.
"""
import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def cd_epoch(W, b, c, X, k, lr, rng, persistent_chains=None):
    """One full-batch CD-k (or PCD-k when chains are given) update, in place."""
    ph0 = sigmoid(X @ W + c)
    v = X if persistent_chains is None else persistent_chains
    for _ in range(k):
        ph = sigmoid(v @ W + c)
        h = (rng.random(ph.shape) < ph).astype(W.dtype)
        pv = sigmoid(h @ W.T + b)
        v = (rng.random(pv.shape) < pv).astype(W.dtype)
    phk = sigmoid(v @ W + c)
    n, m = X.shape[0], v.shape[0]
    W += lr * (X.T @ ph0 / n - v.T @ phk / m)
    b += lr * (X.mean(0) - v.mean(0))
    c += lr * (ph0.mean(0) - phk.mean(0))
    if persistent_chains is not None:
        persistent_chains[:] = v


# ---------------------------------------------------------------------------------------
# The inner-loop rules of Upadhya & Sastry (2017): S-DCP, CS-DCP, CG, SSD.  Each function is
# one update of the whole batch ``X`` (one epoch when ``X`` is the full data), in place.
# ---------------------------------------------------------------------------------------

def _gibbs(W, b, c, v, steps, rng):
    """``steps`` block-Gibbs steps v → h → v from the rows of ``v``."""
    for _ in range(steps):
        h = (rng.random((v.shape[0], W.shape[1])) < sigmoid(v @ W + c)).astype(W.dtype)
        v = (rng.random(v.shape) < sigmoid(h @ W.T + b)).astype(W.dtype)
    return v


def sdcp_epoch(W, b, c, X, d, k_inner, lr, rng):
    """S-DCP (Alg. 3, gradient reset per inner step): ∇g once at θ⁽ᵗ⁾, then ``d`` steps of
    ``θ += lr (∇g − f̂′(θ, Ṽ))`` with ``k_inner`` Gibbs steps each on chains started at X."""
    n = X.shape[0]
    ph0 = sigmoid(X @ W + c)
    GW, Gb, Gc = X.T @ ph0 / n, X.mean(0), ph0.mean(0)
    v = X
    for _ in range(d):
        v = _gibbs(W, b, c, v, k_inner, rng)
        ph = sigmoid(v @ W + c)
        W += lr * (GW - v.T @ ph / n)
        b += lr * (Gb - v.mean(0))
        c += lr * (Gc - ph.mean(0))


def csdcp_epoch(W, b, c, X, d, k_inner, lr, rng, mu, lam, nu_mu=0.01, nu_lambda=0.01):
    """CS-DCP (Alg. 4) on normal parameters with offsets ``mu``, ``lam`` (updated in place):
    each inner step slides the offsets towards the batch means and takes the centered step
    ``ΔW̃ = ΔW − Δb λᵀ − μ Δcᵀ``, ``Δb − ΔW̃λ``, ``Δc − ΔW̃ᵀμ`` (centering.md §5).
    CG is ``d = 1``, ``k_inner = k``."""
    n = X.shape[0]
    ph0 = sigmoid(X @ W + c)
    GW, Gb, Gc = X.T @ ph0 / n, X.mean(0), ph0.mean(0)
    v = X
    for _ in range(d):
        v = _gibbs(W, b, c, v, k_inner, rng)
        ph = sigmoid(v @ W + c)
        mu *= 1.0 - nu_mu
        mu += nu_mu * Gb
        lam *= 1.0 - nu_lambda
        lam += nu_lambda * Gc
        gW, gb, gc = GW - v.T @ ph / n, Gb - v.mean(0), Gc - ph.mean(0)
        gW = gW - np.outer(gb, lam) - np.outer(mu, gc)
        W += lr * gW
        b += lr * (gb - gW @ lam)
        c += lr * (gc - gW.T @ mu)


def cg_epoch(W, b, c, X, k, lr, rng, mu, lam, nu_mu=0.01, nu_lambda=0.01):
    """The centered gradient with CD-k (Melchior et al. 2016, Alg. 1)."""
    csdcp_epoch(W, b, c, X, 1, k, lr, rng, mu, lam, nu_mu, nu_lambda)


def ssd_epoch(W, b, c, X, k, lr, rng, eps_b, eps_c):
    """SSD (Carlson et al. 2015): the CD-k ascent direction through the #-operators,
    ``W += lr ‖G‖_S1 UVᵀ``, ``b += eps_b ‖g_b‖₁ sign g_b``, ``c += eps_c ‖g_c‖₁ sign g_c``."""
    n = X.shape[0]
    ph0 = sigmoid(X @ W + c)
    v = _gibbs(W, b, c, X, k, rng)
    ph = sigmoid(v @ W + c)
    G = (X.T @ ph0 - v.T @ ph) / n
    gb, gc = X.mean(0) - v.mean(0), ph0.mean(0) - ph.mean(0)
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    W += lr * s.sum() * (U @ Vt)
    b += eps_b * np.abs(gb).sum() * np.sign(gb)
    c += eps_c * np.abs(gc).sum() * np.sign(gc)


def exact_atll(W, b, c, X):
    """Average log-likelihood of the rows of ``X`` (nats) by enumerating the 2**n_hidden
    hidden states: log Z = logsumexp_h (cᵀh + Σ_i softplus(b_i + (Wh)_i)),
    log p(v) = bᵀv + Σ_j softplus(c_j + (vW)_j) − log Z."""
    nh = W.shape[1]
    H = ((np.arange(2 ** nh)[:, None] >> np.arange(nh)[::-1]) & 1).astype(W.dtype)
    a = H @ c + np.logaddexp(0.0, H @ W.T + b).sum(1)
    log_z = a.max() + np.log(np.exp(a - a.max()).sum())
    return float(np.mean(X @ b + np.logaddexp(0.0, X @ W + c).sum(1)) - log_z)
