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
