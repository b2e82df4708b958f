"""Brute-force references: sums over every joint state (v, h).  Only for tiny models."""
import numpy as np

from rbmviz.evaluate import all_states


def joint_log_weights(rbm):
    """-E(v, h) for all 2^nv × 2^nh joint states, shape (2^nv, 2^nh), float64."""
    W, b, c = (x.astype(np.float64) for x in rbm.params)
    V, H = all_states(rbm.n_visible), all_states(rbm.n_hidden)
    return V @ W @ H.T + (V @ b)[:, None] + (H @ c)[None, :]


def logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis) if axis is not None else float(out.squeeze())


def log_z(rbm):
    return logsumexp(joint_log_weights(rbm))


def visible_marginal(rbm):
    """p(v) over all visible states (all_states order)."""
    L = joint_log_weights(rbm)
    return np.exp(logsumexp(L, axis=1) - logsumexp(L))


def model_stats(rbm):
    """(E[v hᵀ], E[v], E[h]) under the model, from the joint table."""
    L = joint_log_weights(rbm)
    P = np.exp(L - logsumexp(L))
    V, H = all_states(rbm.n_visible), all_states(rbm.n_hidden)
    return V.T @ P @ H, V.T @ P.sum(1), H.T @ P.sum(0)


def state_index(v):
    v = np.asarray(v, dtype=np.int64)
    return int((v << np.arange(len(v) - 1, -1, -1)).sum())


def random_rbm(n_visible, n_hidden, scale=1.0, seed=0, dtype="float64"):
    """An RBM with N(0, scale²) weights and biases."""
    import rbmviz
    rng = np.random.default_rng(seed)
    rbm = rbmviz.RBM(n_visible, n_hidden, init="zeros", dtype=dtype)
    rbm.set_params(W=rng.normal(0, scale, (n_visible, n_hidden)),
                   b=rng.normal(0, scale, n_visible), c=rng.normal(0, scale, n_hidden))
    return rbm
