"""Contrastive divergence (CD-k, Hinton 2002) and persistent CD (PCD-k, Tieleman 2008).

One update from a mini-batch ``X_B`` (project layout, the DC-programming theory page of the documentation Alg. 1):

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

from typing import TYPE_CHECKING

import numpy as np
import param

from .._blas import (BINARY_DENSITY_MAX, binary_matmul, binary_matmul_T, binary_rows, binary_rows_split, matmul,
                     single_threaded_blas)
from ..kernels.gibbs import (cd_updates_serial_, gather_pcd_first_layer_, gather_sigmoid_rows_scaled_,
                             pcd_first_layer_, sample_rows_, sample_rows_listed_, sample_rows_scaled_,
                             sigmoid_rows_scaled_, use_pattern_table)
from .base import Algorithm, stream_seed
from .knobs import GibbsKnobs

if TYPE_CHECKING:
    from ..model import RBM

#: the fused serial loop is used when n_visible · n_hidden · rows per update is at most this
SERIAL_WORK_LIMIT = 2**16



def _both(d_a: float | None, d_b: float | None) -> float | None:
    """The density to multiply two stacked blocks by, both dense or both sparse: the larger
    (None if either is not 0/1)."""
    return None if d_a is None or d_b is None else max(d_a, d_b)


def _dense(density: float | None) -> bool:
    """Whether a factor with this fraction of ones (None: not 0/1) is multiplied by BLAS."""
    return density is None or density > BINARY_DENSITY_MAX


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

    Knobs = GibbsKnobs
    LIVE_KNOBS = ("k", *Algorithm.LIVE_KNOBS)

    @property
    def gibbs_steps_per_update(self) -> int:
        return self.k

    def setup(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        super().setup(rbm, data, batch_size)
        self.n_chains = batch_size
        self.chains = np.zeros((0, rbm.n_visible), dtype=rbm.dtype)
        self._serial = self._use_serial(rbm, batch_size)

    # ---------------------------------------------------------------- serial path
    def resume(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        super().resume(rbm, data, batch_size)
        if not self.persistent:
            self.n_chains = batch_size
        self._serial = self._use_serial(rbm, batch_size)

    def _use_serial(self, rbm, batch_size):
        return rbm.n_visible * rbm.n_hidden * max(batch_size, self.n_chains) <= SERIAL_WORK_LIMIT

    def train_epochs(self, rbm: RBM, data: np.ndarray, order: np.ndarray, bounds: np.ndarray,
                     max_weight: float = np.inf) -> int:
        if not self._serial:
            with single_threaded_blas():      # once per call, not per update
                return super().train_epochs(rbm, data, order, bounds, max_weight)
        W, b, c = rbm.params
        X = data if data.dtype == W.dtype else data.astype(W.dtype)
        rows = int(np.diff(bounds).min()) if not self.persistent else self.n_chains
        self.counter, epochs = cd_updates_serial_(
            W, b, c, X, np.ascontiguousarray(order, dtype=np.int64),
            np.ascontiguousarray(bounds, dtype=np.int64), self.k, self.persistent, self.chains,
            self.learning_rate, self.momentum, self.weight_decay, self.vW, self.vb, self.vc,
            self.gibbs_seed, self.counter, float(max_weight),
            use_pattern_table(rbm.n_visible, rows, self.k), use_pattern_table(rbm.n_hidden, rows, self.k))
        n = epochs * (len(bounds) - 1)
        self.updates += n
        self.gibbs_steps += n * self.k
        return epochs

    # ---------------------------------------------------------------- BLAS path
    def _buffers(self, rbm, rows):
        """Work arrays for ``rows`` = chains + batch rows, allocated once and reused."""
        return self._work_arrays(rbm, rows, lambda rows, nv, nh, dt: {
            "S": np.empty((rows, nv), dtype=dt),          # [V (chains); X_B]
            "Y": np.empty((rows, nh), dtype=dt),          # [−η/n Pᵏ; η/|B| P⁰]
            "w": np.empty(rows, dtype=dt),                # row weights of the visible-bias step
            "idx": np.empty((rows, nv), dtype=np.int32),  # ones of each row of S
            "cnt": np.empty(rows, dtype=np.int32)})

    def update(self, rbm: RBM, batch: np.ndarray) -> None:
        """One update on the BLAS path.

        Numpy matmuls (OpenBLAS) for every product and fused Numba kernels for sigmoid + Bernoulli
        draws.  Chains and data are stacked, ``S = [V; X_B]``, so PCD's first half-step and
        positive phase share one GEMM, and the whole weight step is one GEMM
        ``Sᵀ [−η/n Pᵏ; η/|B| P⁰]`` (the factors folded into the kernels that write the
        probabilities).  6 GEMMs of size ``|B|·n_v·n_h`` per PCD-1 update, 5 per CD-1.  Every
        product goes through :func:`rbmviz._blas.matmul` (fixed row blocks, each one
        single-threaded BLAS call, spread over threads), so an update is bit-identical for any
        BLAS or Numba thread count.  The products whose left factor is the visible layer
        (``S W``, ``V W`` and the weight step ``Sᵀ Y``) are sums of rows of ``W`` (of ``Y``)
        when that layer is 0/1 with at most 25 % ones — binary data such as MNIST, and the
        chains' samples (:func:`rbmviz._blas.binary_matmul`, same thread-count independence).

        Parameters
        ----------
        rbm, batch
            As in :meth:`Algorithm.update <rbmviz.algorithms.base.Algorithm.update>`.
        """
        with single_threaded_blas():
            self._update(rbm, batch)

    def _update(self, rbm, batch):
        W, b, c = rbm.params
        dt = W.dtype
        nb = batch.shape[0]
        n = self.n_chains if self.persistent else nb
        rows = n + nb
        buf = self._buffers(rbm, rows)
        S, Pre, Y, H, PreV, F, B = (buf[x] for x in ("S", "Pre", "Y", "H", "PreV", "F", "B"))
        V = S[:n]
        Xb = S[n:rows]
        Xb[...] = batch
        plain = self.momentum == 0.0 and self.weight_decay == 0.0
        eta = self.learning_rate if plain else 1.0
        s_pos, s_neg = dt.type(eta / nb), dt.type(-eta / n)
        seed, ctr, k = self.gibbs_seed, self.counter, self.k
        idx, cnt = buf["idx"], buf["cnt"]
        # the visible rows are 0/1 (samples always, the data mostly): their products are
        # sums of rows of W where the ones are few (rbmviz._blas.binary_matmul)
        if self.persistent:
            V[...] = self.chains
            d_v, d_x = binary_rows_split(S[:rows], n, idx[:rows], cnt[:rows])
            if not _dense(d_v) and not _dense(d_x):     # one fused pass: sums of rows + sampling
                gather_pcd_first_layer_(idx[:rows], cnt[:rows], W, Pre[:rows], c, n, Y[n:rows], s_pos,
                                        H, seed, ctr, F, B)
            else:
                if _dense(d_v) == _dense(d_x):                # one product for both
                    binary_matmul(S[:rows], W, Pre[:rows], idx[:rows], cnt[:rows], _both(d_v, d_x))
                else:
                    binary_matmul(V, W, Pre[:n], idx[:n], cnt[:n], d_v)
                    binary_matmul(Xb, W, Pre[n:rows], idx[n:rows], cnt[n:rows], d_x)
                pcd_first_layer_(Pre[:rows], c, n, Y[n:rows], s_pos, H, seed, ctr, F, B)
        else:
            V[...] = Xb
            d_x = binary_rows(Xb, idx[n:rows], cnt[n:rows])
            binary_matmul(Xb, W, Pre[:nb], idx[n:rows], cnt[n:rows], d_x)
            sample_rows_scaled_(Pre[:nb], c, Y[n:rows], s_pos, H, seed, ctr, F, B)
        for t in range(k):
            if t > 0:                  # the lists of V's ones come from the last draw
                binary_matmul(V, W, Pre[:n], idx[:n], cnt[:n], d_v)
                sample_rows_(Pre[:n], c, H[:n], seed, ctr + 2 * t, F, B)
            matmul(H[:n], W.T, PreV[:n])
            sample_rows_listed_(PreV[:n], b, V, seed, ctr + 2 * t + 1, F, B, idx[:n], cnt[:n])
            d_v = float(cnt[:n].sum()) / V.size
        if _dense(d_v):
            matmul(V, W, Pre[:n])
            sigmoid_rows_scaled_(Pre[:n], c, Y[:n], s_neg, F, B)
        else:
            gather_sigmoid_rows_scaled_(idx[:n], cnt[:n], W, Pre[:n], c, Y[:n], s_neg, F, B)
        self.counter = ctr + 2 * k
        if self.persistent:
            self.chains[...] = V
        w = buf["w"][:rows]
        w[:n] = s_neg
        w[n:] = s_pos
        G, gb, gc = buf["G"], buf["gb"], buf["gc"]
        if _dense(d_v) == _dense(d_x):                   # η(X_Bᵀ P⁰/|B| − Vᵀ Pᵏ/n)
            binary_matmul_T([(S[:rows], Y[:rows], idx[:rows], cnt[:rows], _both(d_v, d_x))], G)
        else:
            binary_matmul_T([(V, Y[:n], idx[:n], cnt[:n], d_v),
                             (Xb, Y[n:rows], idx[n:rows], cnt[n:rows], d_x)], G)
        np.dot(w, S[:rows], out=gb)
        Y[:rows].sum(axis=0, out=gc)
        if plain:
            W += G
            b += gb
            c += gc
        else:
            self.apply_gradient_(rbm, G, gb, gc)
        self.updates += 1
        self.gibbs_steps += k


class PCD(CD):
    """PCD-k: ``k`` Gibbs steps per update on persistent chains (Tieleman 2008).

    The chains start at randomly chosen training rows (drawn with the algorithm's seed) and
    carry their state across updates.

    Parameters
    ----------
    k, learning_rate, momentum, weight_decay, seed
        As in :class:`CD`.
    n_chains : int, optional
        Number of persistent chains; default (None): the batch size.
    """

    name = "pcd"
    label = "PCD-k"
    persistent = True
    reference = "Tieleman (2008)"
    equation = (r"\Delta\theta = \eta\Big(\langle \phi(v,h)\rangle_{\text{data}}"
                r" - \langle \phi(\tilde v,h)\rangle_{\tilde v \leftarrow \text{Gibbs}^k(\tilde v)}\Big)")

    class Knobs(GibbsKnobs):
        n_chains = param.Integer(
            None, allow_None=True, bounds=(1, None), softbounds=(1, 1000), label="Persistent chains",
            doc="pcd only: number of persistent Gibbs chains; none = the batch size.")

    def _set_knobs(self, values):
        values = dict(values)
        self.n_chains_setting = values.pop("n_chains")   # ``n_chains`` is the count in use
        super()._set_knobs(values)

    def settings(self) -> dict:
        out = {n: getattr(self, n) for n in self.Knobs.param if n not in ("name", "n_chains")}
        return {**out, "n_chains": self.n_chains_setting}

    def setup(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        super().setup(rbm, data, batch_size)
        self.n_chains = self.n_chains_setting or batch_size
        rng = np.random.default_rng(stream_seed(self.seed, "chains"))
        rows = rng.integers(0, data.shape[0], size=self.n_chains)
        start = np.asarray(data[rows], dtype=np.float64)
        # chains are binary states: rows given as probabilities in [0, 1] start at a draw
        # from them (the same states for binary rows: u < 1 and never u < 0)
        start = (rng.random(start.shape) < start).astype(np.float64)
        self.chains = np.ascontiguousarray(start, dtype=rbm.dtype)
        self._serial = self._use_serial(rbm, batch_size)
