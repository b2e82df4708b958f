"""Contrastive divergence (CD-k, Hinton 2002) and persistent CD (PCD-k, Tieleman 2008).

One update from a mini-batch ``X_B`` (project layout, reference/dc-programming.md Alg. 1):

* positive phase: ``P⁰ = σ(X_B W + c)`` (hidden probabilities of the data);
* ``k`` block-Gibbs steps ``h⁽ᵗ⁾ ~ p(h | v⁽ᵗ⁾)``, ``v⁽ᵗ⁺¹⁾ ~ p(v | h⁽ᵗ⁾)`` starting at
  ``v⁽⁰⁾ = X_B`` (CD) or at the persistent chains (PCD, which keep ``v⁽ᵏ⁾`` for the next update);
* negative phase: ``Pᵏ = σ(V⁽ᵏ⁾ W + c)`` with the *sampled* ``V⁽ᵏ⁾``;
* ascent direction ``ΔW = X_Bᵀ P⁰ / |B| − V⁽ᵏ⁾ᵀ Pᵏ / n_chains``, ``Δb``, ``Δc`` the column means.

Its exact expectation over the chain is :func:`rbmviz.evaluate.expected_cd_update`
(Fischer & Igel 2011, eq. 1.2).

Two implementations share one random stream (see :mod:`rbmviz.kernels.gibbs`): a serial
fused Numba loop that runs whole epochs in one call (small models, where Python overhead
would dominate) and a BLAS-matmul + fused-sampling path (large models).  The choice depends
only on the sizes, so a seed reproduces a run bit for bit.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_int
from ..kernels.gibbs import cd_updates_serial_, sample_layer_, sigmoid_
from .base import Algorithm, stream_seed

#: the fused serial loop is used when n_visible · n_hidden · rows per update is at most this
SERIAL_WORK_LIMIT = 2**16


class CD(Algorithm):
    """CD-k: ``k`` Gibbs steps from the data (Hinton 2002).

    Parameters
    ----------
    k : int
        Gibbs steps per update (≥ 1).
    learning_rate, momentum, weight_decay, seed
        See :class:`~rbmviz.algorithms.base.Algorithm`.
    """

    name = "cd"
    label = "CD-k"
    persistent = False
    reference = "Hinton (2002); Upadhya & Sastry (2017) Alg. 1"
    equation = (r"\Delta\theta = \eta\Big(\langle \phi(v,h)\rangle_{\text{data}}"
                r" - \langle \phi(v^{(k)},h)\rangle_{v^{(k)}\sim \text{Gibbs}^k(\text{data})}\Big)")

    def __init__(self, *, k=1, learning_rate=0.1, momentum=0.0, weight_decay=0.0, seed=0):
        super().__init__(learning_rate=learning_rate, momentum=momentum,
                         weight_decay=weight_decay, seed=seed)
        self.k = check_int(k, "k", low=1)

    @property
    def gibbs_steps_per_update(self):
        return self.k

    def settings(self):
        return {"k": self.k, **super().settings()}

    def setup(self, rbm, data, batch_size):
        super().setup(rbm, data, batch_size)
        self.n_chains = batch_size
        self.chains = np.zeros((0, rbm.n_visible), dtype=rbm.dtype)
        self._serial = self._use_serial(rbm, batch_size)

    # ---------------------------------------------------------------- serial path
    def resume(self, rbm, data, batch_size):
        super().resume(rbm, data, batch_size)
        if not self.persistent:
            self.n_chains = batch_size
        self._serial = self._use_serial(rbm, batch_size)

    def _use_serial(self, rbm, batch_size):
        return rbm.n_visible * rbm.n_hidden * max(batch_size, self.n_chains) <= SERIAL_WORK_LIMIT

    def train_epochs(self, rbm, data, order, bounds, max_weight=np.inf):
        if not self._serial:
            return super().train_epochs(rbm, data, order, bounds, max_weight)
        W, b, c = rbm.params
        X = data if data.dtype == W.dtype else data.astype(W.dtype)
        self.counter, epochs = cd_updates_serial_(
            W, b, c, X, np.ascontiguousarray(order, dtype=np.int64),
            np.ascontiguousarray(bounds, dtype=np.int64), self.k, self.persistent, self.chains,
            self.learning_rate, self.momentum, self.weight_decay, self.vW, self.vb, self.vc,
            self.gibbs_seed, self.counter, float(max_weight))
        n = epochs * (len(bounds) - 1)
        self.updates += n
        self.gibbs_steps += n * self.k
        return epochs

    # ---------------------------------------------------------------- BLAS path
    def update(self, rbm, batch):
        W, b, c = rbm.params
        Xb = np.ascontiguousarray(batch, dtype=W.dtype)
        nb = Xb.shape[0]
        seed, ctr = self.gibbs_seed, self.counter
        if self.persistent:
            V = self.chains
            P0 = np.empty((nb, rbm.n_hidden), dtype=W.dtype)
            sigmoid_(Xb @ W, c, P0)
        else:
            V = Xb.copy()
            P0 = None
        n = V.shape[0]
        H = np.empty((n, rbm.n_hidden), dtype=W.dtype)
        PH = np.empty_like(H)
        PV = np.empty_like(V)
        for t in range(self.k):
            sample_layer_(V @ W, c, PH, H, seed, ctr + 2 * t)
            if P0 is None:
                P0 = PH.copy()
            sample_layer_(H @ W.T, b, PV, V, seed, ctr + 2 * t + 1)
        sigmoid_(V @ W, c, PH)
        self.counter = ctr + 2 * self.k
        gW = Xb.T @ (P0 * W.dtype.type(1.0 / nb))
        gW -= V.T @ (PH * W.dtype.type(1.0 / n))
        gb = Xb.mean(axis=0, dtype=W.dtype) - V.mean(axis=0, dtype=W.dtype)
        gc = P0.mean(axis=0, dtype=W.dtype) - PH.mean(axis=0, dtype=W.dtype)
        self.apply_gradient_(rbm, gW, gb, gc)
        self.updates += 1
        self.gibbs_steps += self.k


class PCD(CD):
    """PCD-k: ``k`` Gibbs steps per update on persistent chains (Tieleman 2008).

    ``n_chains`` defaults to the batch size; the chains start at randomly chosen training
    rows (drawn with the algorithm's seed) and carry their state across updates.
    """

    name = "pcd"
    label = "PCD-k"
    persistent = True
    reference = "Tieleman (2008)"
    equation = (r"\Delta\theta = \eta\Big(\langle \phi(v,h)\rangle_{\text{data}}"
                r" - \langle \phi(\tilde v,h)\rangle_{\tilde v \leftarrow \text{Gibbs}^k(\tilde v)}\Big)")

    def __init__(self, *, k=1, learning_rate=0.1, momentum=0.0, weight_decay=0.0, seed=0,
                 n_chains=None):
        super().__init__(k=k, learning_rate=learning_rate, momentum=momentum,
                         weight_decay=weight_decay, seed=seed)
        self.n_chains_setting = None if n_chains is None else check_int(n_chains, "n_chains", low=1)

    def settings(self):
        return {**super().settings(), "n_chains": self.n_chains_setting}

    def setup(self, rbm, data, batch_size):
        super().setup(rbm, data, batch_size)
        self.n_chains = self.n_chains_setting or batch_size
        rng = np.random.default_rng(stream_seed(self.seed, "chains"))
        rows = rng.integers(0, data.shape[0], size=self.n_chains)
        self.chains = np.ascontiguousarray(data[rows], dtype=rbm.dtype)
        self._serial = self._use_serial(rbm, batch_size)
