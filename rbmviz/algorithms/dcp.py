"""Stochastic difference-of-convex programming, S-DCP (Upadhya & Sastry 2017, Alg. 3).

The negative log-likelihood of a batch is ``F(θ) = f(θ) − g(θ)`` with ``f = log Z`` and
``g`` the batch average of ``log Σ_h exp(−E(v, h))``, both convex
(the DC-programming theory page of the documentation).  One S-DCP update of a mini-batch ``X`` (N rows) from
``θ⁽ᵗ⁾``:

1. data term ``∇g(θ⁽ᵗ⁾)`` **once**: ``G_W = Xᵀσ(XW + c)/N``, ``G_b = mean X``,
   ``G_c = mean σ(XW + c)``;
2. chains ``Ṽ ← X``; then ``d`` inner steps ``l = 0 … d−1``, each: ``K′`` block-Gibbs steps
   under the *current* parameters continuing from ``Ṽ`` (never restarted inside the batch),
   ``F̂ = (Ṽᵀσ(ṼW + c)/N, mean Ṽ, mean σ(ṼW + c))`` and ``θ ← θ + η(G − F̂)``;
3. the next mini-batch restarts its chains at its own rows.

**Erratum corrected** (the errata noted on the documentation's theory pages, Upadhya & Sastry): the printed Alg. 3 sets
``Δθ = 0`` once before the inner loop and never resets it, so every inner step would re-apply
the gradients of the earlier ones.  Here the step of inner iteration ``l`` is computed from
scratch (as in the paper's Alg. 2 and Alg. 4).  With ``d = 1`` S-DCP is CD-K′.

Accounting (equal compute, §5 of the reference): one :attr:`~Algorithm.updates` is one
mini-batch, i.e. one outer DC iteration made of ``d`` inner parameter steps (counted in
:attr:`SDCP.inner_steps`); it costs ``d·K′`` Gibbs steps per chain, so
``gibbs_steps_per_update = d·K′``.  With ``K = d·K′`` a run of S-DCP and one of CD-K have the
same ``updates`` *and* the same ``gibbs_steps`` after the same number of epochs, so curves
against epochs, updates or Gibbs steps are directly comparable.

The engine :class:`InnerLoop` (BLAS matmuls + the fused sampling kernels of
:mod:`rbmviz.kernels.gibbs`, preallocated buffers, one counter-based random stream) is shared
with the centered rules (:mod:`.centered`) and SSD (:mod:`.ssd`), which only change what
an inner step does with the ascent direction.  Random-stream convention: within one update
starting at counter ``c0``, Gibbs step ``s = l·K′ + t`` draws the hidden layer with
``c0 + 2s`` and the visible layer with ``c0 + 2s + 1`` — the CD convention, so ``d = 1``
reproduces CD-K′'s draws exactly.

Small models (CD's rule: ``n_visible · n_hidden · batch_size`` at most
:data:`~rbmviz.algorithms.cd.SERIAL_WORK_LIMIT`) train through the fused serial kernel
:func:`rbmviz.kernels.dc.dc_updates_serial_` instead: whole epochs per call, the same stream,
the same parameters up to rounding (≈20× the BLAS path's epochs/s on 3×3 bars & stripes).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import param

from .._blas import numba_threads
from .._validation import check_int
from ..bounds import K_MAX
from ..kernels.dc import RULE_PLAIN, dc_updates_serial_
from ..kernels.gibbs import (sample_rows_, sample_rows_scaled_, sigmoid_rows_scaled_,
                             use_pattern_table)
from .base import Algorithm
from .cd import SERIAL_WORK_LIMIT
from .knobs import GibbsKnobs

if TYPE_CHECKING:
    from ..model import RBM

#: when only the Gibbs budget per update ``k`` is given it is split into ``d = k // 4`` inner
#: steps of ``DEFAULT_K_INNER = 4`` Gibbs steps (Upadhya & Sastry: K′ = 4) if 4 divides ``k``
#: (see :func:`resolve_budget` otherwise); ``DEFAULT_D``: ``d`` when nothing is given
DEFAULT_K_INNER = 4
DEFAULT_D = 3


def resolve_budget(k: int | None = None, d: int | None = None,
                   k_inner: int | None = None) -> tuple[int, int]:
    """``(d, k_inner)`` from any combination of the Gibbs budget ``k``, ``d`` and ``k_inner``.

    ``k`` is the Gibbs budget per update, ``d`` the inner steps and ``k_inner`` the Gibbs
    steps per inner step (K′), with ``k = d·k_inner``.  Rules (Upadhya & Sastry's
    equal-compute rule, the DC-programming theory page of the documentation):

    * nothing given: ``d = 3``, ``k_inner = 4`` (K = 12, their small-data setting);
    * only ``k``: ``k_inner = 4``, ``d = k // 4`` when ``k`` is a multiple of 4
      (K = 12 ↔ d = 3, K′ = 4; K = 24 ↔ d = 6, K′ = 4); otherwise ``k_inner`` is the largest
      divisor of ``k`` up to 4 (k = 1, 2, 3 ↔ d = 1, i.e. CD-k; k = 6 ↔ d = 2, K′ = 3;
      k = 25 ↔ d = 25, K′ = 1), so every ``k`` — e.g. the settings' default ``k = 1`` — is a
      valid budget;
    * ``k`` and one of ``d``/``k_inner``: the other is ``k`` divided by it (must divide);
    * ``d`` and/or ``k_inner`` without ``k``: the missing one takes its default (3 / 4);
    * all three: they must satisfy ``k == d * k_inner``.

    Parameters
    ----------
    k : int, optional
        Gibbs steps per update.
    d : int, optional
        Inner parameter steps per update.
    k_inner : int, optional
        Gibbs steps per inner step.

    Returns
    -------
    d : int
        Inner steps.
    k_inner : int
        Gibbs steps per inner step.

    Raises
    ------
    ValueError, TypeError
        Naming the argument: not a positive integer, a budget that does not divide, or
        inconsistent values.

    Examples
    --------
    >>> resolve_budget(k=24)
    (6, 4)
    >>> resolve_budget(k=24, d=8)
    (8, 3)
    """
    if k is not None:
        k = check_int(k, "k", low=1, high=K_MAX)
    if d is not None:
        d = check_int(d, "d", low=1, high=K_MAX)
    if k_inner is not None:
        k_inner = check_int(k_inner, "k_inner", low=1, high=K_MAX)
    if k is None:
        d = DEFAULT_D if d is None else d
        k_inner = DEFAULT_K_INNER if k_inner is None else k_inner
        if d * k_inner > K_MAX:
            raise ValueError(f"d * k_inner = {d} * {k_inner} = {d * k_inner} Gibbs steps per "
                             f"update is too many: k must be <= {K_MAX} (rbmviz.bounds.K_MAX)")
        return d, k_inner
    if d is not None and k_inner is not None:
        if d * k_inner != k:
            raise ValueError(f"k={k} must equal d * k_inner = {d} * {k_inner} = {d * k_inner} "
                             f"(k is the Gibbs budget per update); give k or (d, k_inner), "
                             f"not inconsistent values")
        return d, k_inner
    if d is not None:
        if k % d:
            raise ValueError(f"k={k} is not divisible by d={d}; the Gibbs budget per update "
                             f"must be d * k_inner")
        return d, k // d
    if k_inner is None:
        inner = max(q for q in range(1, DEFAULT_K_INNER + 1) if k % q == 0)
    else:
        inner = k_inner
        if k % inner:
            raise ValueError(f"k={k} is not divisible by k_inner={inner}: S-DCP splits its Gibbs "
                             f"budget per update as k = d * k_inner")
    return k // inner, inner


class InnerLoop(Algorithm):
    """The BLAS-path engine of S-DCP, CS-DCP, CG and SSD.

    Per mini-batch: the data statistics once, then ``d`` inner steps of ``k_inner`` Gibbs
    steps on chains that start at the batch and carry over between inner steps; each inner
    step hands the (normal-parameter) ascent direction ``(gW, gb, gc) = ∇g(θ⁽ᵗ⁾) − f̂′(θ, Ṽ)``
    (Upadhya & Sastry 2017, eqs. 5–6) to :meth:`_step`.  Subclasses set ``self.d`` and
    ``self.k_inner`` and may override :meth:`_begin_batch` (called with the batch means
    ``mean X`` and ``mean σ(XW + c)``) and :meth:`_step`.

    Parameters
    ----------
    learning_rate, momentum, weight_decay, seed
        See :class:`~rbmviz.algorithms.base.Algorithm`.
    """

    d: int = 1
    k_inner: int = 1

    @property
    def gibbs_steps_per_update(self) -> int:
        return self.d * self.k_inner

    def setup(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        super().setup(rbm, data, batch_size)
        self.inner_steps = 0      # parameter steps done (d per update)
        self._serial = self._use_serial(rbm, batch_size)

    def resume(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        super().resume(rbm, data, batch_size)
        self._serial = self._use_serial(rbm, batch_size)

    def _use_serial(self, rbm, batch_size) -> bool:
        """CD's rule (:data:`~rbmviz.algorithms.cd.SERIAL_WORK_LIMIT`): the fused serial kernel
        when ``n_visible · n_hidden · batch_size`` is at most the limit and the rule has a
        fused form (:meth:`_fused_args`)."""
        mro = type(self).__mro__
        defines = lambda name: next(i for i, k in enumerate(mro) if name in vars(k))  # noqa: E731
        fusable = defines("_fused_args") <= defines("_step")   # the step it describes is in use
        return rbm.n_visible * rbm.n_hidden * batch_size <= SERIAL_WORK_LIMIT and fusable

    def _fused_args(self, rbm):
        """``(rule, mu, lam, nu_mu, nu_lambda, scale_b, scale_c)`` for
        :func:`~rbmviz.kernels.dc.dc_updates_serial_`.  A class that overrides :meth:`_step`
        must override this too (in the same class), or it trains on the BLAS path only."""
        empty = np.zeros(0, dtype=rbm.dtype)
        return RULE_PLAIN, empty, empty, 0.0, 0.0, 1.0, 1.0

    def train_epochs(self, rbm: RBM, data: np.ndarray, order: np.ndarray, bounds: np.ndarray,
                     max_weight: float = np.inf) -> int:
        """Train over ``len(order)`` epochs, as :meth:`Algorithm.train_epochs`.

        Small models (``n_visible · n_hidden · batch_size`` at most
        :data:`~rbmviz.algorithms.cd.SERIAL_WORK_LIMIT`, the rule CD uses) run whole epochs in one
        call of the fused serial kernel :func:`~rbmviz.kernels.dc.dc_updates_serial_`: same random
        stream, same arithmetic up to rounding as :meth:`update` (see :mod:`rbmviz.kernels.dc` for
        what is and is not bit-for-bit), same divergence check after every epoch.  Larger ones call
        :meth:`update` per mini-batch (BLAS path); when the batches are still tiny the sampling
        kernels run on one Numba thread (starting a parallel region costs more than the work; the
        stream does not depend on the thread count).

        Parameters
        ----------
        rbm, data, order, bounds, max_weight
            As in :meth:`Algorithm.train_epochs <rbmviz.algorithms.base.Algorithm.train_epochs>`.

        Returns
        -------
        int
            The number of epochs done (``len(order)`` unless stopped early).
        """
        if getattr(self, "_serial", False):
            return self._train_epochs_fused(rbm, data, order, bounds, max_weight)
        rows = int(np.diff(bounds).max())
        if rbm.n_visible * rbm.n_hidden * rows > SERIAL_WORK_LIMIT:
            return super().train_epochs(rbm, data, order, bounds, max_weight)
        with numba_threads(1):
            return super().train_epochs(rbm, data, order, bounds, max_weight)

    def _train_epochs_fused(self, rbm, data, order, bounds, max_weight):
        W, b, c = rbm.params
        X = np.ascontiguousarray(data, dtype=np.float64)
        rule, mu, lam, nu_mu, nu_lambda, scale_b, scale_c = self._fused_args(rbm)
        rows = int(np.diff(bounds).min())
        counter, epochs = dc_updates_serial_(
            W, b, c, X, np.ascontiguousarray(order, dtype=np.int64),
            np.ascontiguousarray(bounds, dtype=np.int64), self.d, self.k_inner, rule,
            float(self.learning_rate), float(self.momentum), float(self.weight_decay),
            self.vW, self.vb, self.vc, mu, lam, float(nu_mu), float(nu_lambda),
            float(scale_b), float(scale_c), self.gibbs_seed, self.counter, float(max_weight),
            use_pattern_table(rbm.n_visible, rows, self.k_inner),
            use_pattern_table(rbm.n_hidden, rows, self.k_inner))
        self.counter = int(counter)
        epochs = int(epochs)
        n = epochs * (len(bounds) - 1)
        self.updates += n
        self.inner_steps += n * self.d
        self.gibbs_steps += n * self.d * self.k_inner
        return epochs

    def _buffers(self, rbm, rows):
        """Work arrays for ``rows`` batch rows, allocated once and reused."""
        return self._work_arrays(rbm, rows, lambda rows, nv, nh, dt: {
            "X": np.empty((rows, nv), dtype=dt),      # the batch
            "V": np.empty((rows, nv), dtype=dt),      # chain states Ṽ
            "P0": np.empty((rows, nh), dtype=dt),     # σ(XW + c) at θ⁽ᵗ⁾
            "Pn": np.empty((rows, nh), dtype=dt),     # σ(ṼW + c) (model term)
            "Gd": np.empty((nv, nh), dtype=dt),       # the inner step's direction
            "gbd": np.empty(nv, dtype=dt), "gcd": np.empty(nh, dtype=dt)})

    def update(self, rbm: RBM, batch: np.ndarray) -> None:
        """One update (``d`` inner parameter steps) of ``rbm`` from the rows of ``batch``.

        Parameters
        ----------
        rbm, batch
            As in :meth:`Algorithm.update <rbmviz.algorithms.base.Algorithm.update>`.
        """
        W, b, c = rbm.params
        dt = W.dtype
        one = dt.type(1.0)
        nb = batch.shape[0]
        buf = self._buffers(rbm, nb)
        X, V = buf["X"][:nb], buf["V"][:nb]
        Pre, P0, Pn, H, PreV = (buf[x][:nb] for x in ("Pre", "P0", "Pn", "H", "PreV"))
        F, B = buf["F"], buf["B"]
        Gd, gbd, gcd, G, gb, gc = (buf[x] for x in ("Gd", "gbd", "gcd", "G", "gb", "gc"))
        X[...] = batch
        V[...] = X
        seed, ctr, d, kk = self.gibbs_seed, self.counter, self.d, self.k_inner
        inv = dt.type(1.0 / nb)
        # data term at θ⁽ᵗ⁾ (fused with the first hidden sample of the chains, which start at X)
        np.matmul(X, W, out=Pre)
        sample_rows_scaled_(Pre, c, P0, one, H, seed, ctr, F, B)
        np.matmul(X.T, P0, out=Gd)
        Gd *= inv
        np.sum(X, axis=0, out=gbd)
        gbd *= inv
        np.sum(P0, axis=0, out=gcd)
        gcd *= inv
        self._begin_batch(rbm, gbd, gcd)
        for l in range(d):
            for t in range(kk):
                cc = ctr + 2 * (l * kk + t)
                if l or t:
                    np.matmul(V, W, out=Pre)
                    sample_rows_(Pre, c, H, seed, cc, F, B)
                np.matmul(H, W.T, out=PreV)
                sample_rows_(PreV, b, V, seed, cc + 1, F, B)
            np.matmul(V, W, out=Pre)
            sigmoid_rows_scaled_(Pre, c, Pn, one, F, B)
            # ascent direction of the convex sub-problem: ∇g(θ⁽ᵗ⁾) − f̂′(θ, Ṽ)
            np.matmul(V.T, Pn, out=G)
            G *= -inv
            G += Gd
            np.sum(V, axis=0, out=gb)
            gb *= -inv
            gb += gbd
            np.sum(Pn, axis=0, out=gc)
            gc *= -inv
            gc += gcd
            self._step(rbm, G, gb, gc)
            self.inner_steps += 1
        self.counter = ctr + 2 * d * kk
        self.updates += 1
        self.gibbs_steps += d * kk

    # hooks ---------------------------------------------------------------------------
    def _begin_batch(self, rbm, mean_v, mean_h) -> None:
        """Called once per batch with the data means ``mean X`` and ``mean σ(XW + c)``
        (at θ⁽ᵗ⁾) before the inner steps."""

    def _step(self, rbm, gW, gb, gc) -> None:
        """One parameter step along the ascent direction (may overwrite its arguments)."""
        self.apply_gradient_(rbm, gW, gb, gc)


class SDCP(InnerLoop):
    """S-DCP: stochastic DC programming (Upadhya & Sastry 2017, Alg. 3, mini-batch), with the
    accumulated-gradient erratum of the printed listing corrected (the errata noted on the documentation's theory pages,
    Upadhya & Sastry: the step of each inner iteration is computed afresh).

    Parameters
    ----------
    d : int, optional
        Inner parameter steps per mini-batch (≥ 1).
    k_inner : int, optional
        Gibbs steps K′ per inner step (≥ 1).
    k : int, optional
        Gibbs budget per update, ``k = d · k_inner`` (the equal-compute rule: S-DCP with
        ``k=K`` costs what CD-K costs).  Given alone it is split with ``k_inner = 4``,
        ``d = k // 4`` (k a multiple of 4; otherwise ``k_inner`` is the largest divisor of
        ``k`` up to 4); see :func:`resolve_budget` for every combination.  Default (nothing
        given): ``d = 3``, ``k_inner = 4``.
    learning_rate, momentum, weight_decay, seed
        See :class:`~rbmviz.algorithms.base.Algorithm`; momentum and weight decay, if set,
        act on every inner step.

    Notes
    -----
    ``updates`` counts mini-batches (outer DC iterations), ``inner_steps`` the ``d`` parameter
    steps of each, ``gibbs_steps`` grows by ``d · k_inner`` per update.
    """

    name = "sdcp"
    label = "S-DCP"
    reference = "Upadhya & Sastry (2017) Alg. 3 (erratum: Δθ reset per inner step)"
    equation = (r"\theta \leftarrow \theta + \eta\Big(\nabla g(\theta^{(t)}) - "
                r"\langle \phi(\tilde v,h)\rangle_{\tilde v \leftarrow \text{Gibbs}^{K'}(\tilde v)}"
                r"\Big)\ \ d\ \text{times per batch}")

    class Knobs(GibbsKnobs):
        k = param.Integer(None, allow_None=True)    # the budget d·K′ (see GibbsKnobs.k)
        d = param.Integer(
            None, allow_None=True, bounds=(1, K_MAX), softbounds=(1, 12), label="Inner steps d",
            doc="sdcp/csdcp only: parameter steps per mini-batch, each after K′ Gibbs steps "
                "(k = d·K′); none = k / K′.")
        k_inner = param.Integer(
            None, allow_None=True, bounds=(1, K_MAX), softbounds=(1, 12),
            label="Inner Gibbs steps K′",
            doc="sdcp/csdcp only: Gibbs steps K′ of each of the d inner steps; d = k / K′ so "
                "that every algorithm spends k Gibbs steps per update (equal compute, d·K′ = k); "
                f"none = K′ = {DEFAULT_K_INNER} when {DEFAULT_K_INNER} divides k.")

    LIVE_KNOBS = ("k", "d", "k_inner", *Algorithm.LIVE_KNOBS)

    def _set_knobs(self, values):
        values = dict(values)
        self.d, self.k_inner = resolve_budget(values.pop("k"), values.pop("d"), values.pop("k_inner"))
        super()._set_knobs(values)

    @property
    def k(self) -> int:
        """The Gibbs budget per update, ``d · k_inner``."""
        return self.d * self.k_inner

    def set_settings(self, **settings: Any) -> None:
        """Change knobs of a running S-DCP, as :meth:`Algorithm.set_settings`.

        For the budget, the values given win: ``k`` (with or without ``d``/``k_inner``) is split
        as by the constructor (:func:`resolve_budget`), ``d`` or ``k_inner`` without ``k`` keeps
        the other and changes ``k``.

        Parameters
        ----------
        **settings
            New knob values.
        """
        self._check_live(settings)
        budget = {key: settings.pop(key) for key in ("k", "d", "k_inner") if key in settings}
        if budget and "k" not in budget:
            budget.setdefault("d", self.d)
            budget.setdefault("k_inner", self.k_inner)
        if budget:
            settings["d"], settings["k_inner"] = resolve_budget(**budget)
        current = {key: val for key, val in self.settings().items() if key != "k"}
        checked = type(self)(**{**current, **settings})     # validates everything at once
        for key in settings:
            setattr(self, key, getattr(checked, key))


__all__ = ["SDCP", "InnerLoop", "resolve_budget"]
