"""TAP training (Tramel et al. 2018, Alg. 2; Gabrié et al. 2015 for binary EMF orders 1–3).

One update from a mini-batch ``X`` of ``M`` rows (the TAP theory page of the documentation):

1. TAP inference (Alg. 1, :func:`rbmviz.tap.solve`) started from the first ``K ≤ M`` rows of
   the batch (data-anchored initialisation, eqs. 37–38: ``a^v = x``, ``c^v = 0``);
2. ascent directions on the TAP log-likelihood (eq. 39) — :func:`tap_gradient`:

   * ``ΔW = (1/M) Σ_m x f^h_a(xW, 0) − (1/K) Σ_k (a^v_k a^h_kᵀ + W ∘ c^v_k c^h_kᵀ)`` (eq. 40),
     plus ``−(1/K) Σ_k 2 W∘² ∘ g(a^v_k) g(a^h_k)ᵀ`` at third order and without the ``W ∘ c c``
     term at first order (binary models, Gabrié et al. 2015; ``g(m) = (m − m²)(½ − m)``);
   * hidden prior parameters (``U = c``, and ``V``, ``ρ`` of truncated priors):
     ``(1/M) Σ_m ∂_θ ln Z^h(xW, 0) − (1/K) Σ_k ∂_θ ln Z^h(B^h_k, A^h_k)`` (eq. 41);
   * visible prior parameters (``U = b``, ``V``, ``ρ``):
     ``(1/M) Σ_m ∂_θ ln P^v(x) − (1/K) Σ_k ∂_θ ln Z^v(B^v_k, A^v_k)`` (eq. 42);

3. ``W ← W + γ ΔW(t) + γ ε R(W(t)) + η ΔW(t−1)`` with ``R(W) = −W`` (ℓ2; see the errata noted on the
   TAP theory page).  ``momentum_form="heavy_ball"`` (the default) uses
   ``v ← η v + γ(ΔW − εW)``, ``W ← W + v``; ``"printed"`` applies the printed rule literally
   (``ΔW(t−1)`` is the previous *gradient*, so the momentum term is not scaled by ``γ``).
   Why heavy ball by default: read literally, with Table 1's γ = 0.005 and η = 0.5 the
   momentum term is ~100× the gradient step, which no practical schedule intends; which form
   the authors' code used is UNCONFIRMED (the errata noted on the TAP theory page), and the
   reproduction, the presets and the explorer use heavy ball too.  Prior parameters take
   plain steps ``θ ← θ + γ Δθ`` (no momentum, no regulariser; ``ρ`` on the logit scale).

``K`` counts every converged run (multiplicity weighted; the default of the TAP theory page);
``unique=True`` averages uniformly over the unique solutions instead.  Runs that hit
``max_iter`` are excluded and counted (``not_converged_total``, ``last_not_converged``); if no
run of a batch converges, all of them are used for that update (counted in
``fallback_updates``) rather than skipping the negative phase.  ``fixed_iter=T`` instead runs
every solve exactly ``T`` iterations and uses all ``K`` runs, as App. D (Fig. 10: 3, 10 and 100
iterations train alike) and the reference implementation (3 iterations) do; at paper scale
this is what makes a 100-epoch binary-MNIST run take an hour instead of a day (iterating to
``tol`` = 1e-8 needs ~190 iterations per run on average by epoch 10, 700 for the slowest).

``ρ`` takes its step on the logit scale (``logit ρ ← logit ρ + γ ∂ℓ/∂logit ρ``: its gradient in
``ρ`` itself is unbounded as ``ρ → 0``); ``V`` is kept ≥ ``V_MIN`` and ``ρ`` inside
``[RHO_MIN, RHO_MAX]`` after each step.

The run loop's "Gibbs steps" axis counts TAP iterations here: each update adds the largest
number of iterations any of its ``K`` runs needed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
import param

from .. import tap, units
from .._validation import check_int
from ..bounds import EPOCHS_MAX, TAP_ITER_MAX
from ..kernels.priors import moments_rows
from ..tap import adatap
from ..tap.options import option_param
from .base import Algorithm
from .knobs import AlgorithmKnobs

if TYPE_CHECKING:
    from ..model import RBM
    from ..tap.inference import TAPSolution

__all__ = ["TAP", "tap_gradient", "grad_log_z_rows", "V_MIN", "RHO_MIN", "RHO_MAX"]

#: smallest precision V of truncated (Gauss–Bernoulli) priors kept during training
V_MIN = 1e-3
#: ρ of Gauss–Bernoulli priors is kept in [RHO_MIN, RHO_MAX] (ρ multiplies the slab's
#: unnormalised mass ``G(V, U)``, so a pixel that is rarely non-zero has a legitimately tiny ρ:
#: :func:`rbmviz.tap.presets.init_priors_from_data` gives MNIST's border pixels ρ ~ 1e-300)
RHO_MIN = 1e-300
RHO_MAX = 1.0 - 1e-16

MOMENTUM_FORMS = ("heavy_ball", "printed")
#: TAP inference methods: Alg. 1, or adaTAP via VAMP (Alg. 3, rbmviz.tap.adatap)
INFERENCE_METHODS = ("tap", "adatap")
#: tolerance of the fixed-iteration solves: a run stops only when its iterate stops changing
_FIXED_TOL = float(np.finfo(np.float64).tiny)


def _priors(rbm):
    """``(visible_prior, hidden_prior)`` of a model (Bernoulli priors for a plain binary RBM)."""
    vp, hp = getattr(rbm, "visible_prior", None), getattr(rbm, "hidden_prior", None)
    if vp is None or hp is None:
        vp = vp if vp is not None else units.Bernoulli(rbm.n_visible)
        hp = hp if hp is not None else units.Bernoulli(rbm.n_hidden)
    return vp, hp


def _is_binary(prior) -> bool:
    return getattr(prior, "name", "") == "bernoulli"


def _g(m):
    """Third-order EMF factor g(m) = (m − m²)(½ − m) (Gabrié et al. 2015)."""
    return (m - m * m) * (0.5 - m)


def grad_log_z_rows(prior: units.Prior, U: np.ndarray, B: np.ndarray, A: np.ndarray) -> dict:
    """Mean over rows of ``∂_θ ln Z(B, A; θ)``, the same as ``prior.grad_log_z(U, B, A)``.

    For truncated priors the tilted moments come from the parallel Numba kernel
    (:func:`rbmviz.kernels.priors.moments_rows`; the TAP theory page of the documentation,
    unit priors): ``∂_U = ⟨f_a⟩ − ⟨x⟩_P``, ``∂_V = −½(⟨f_c + f_a²⟩ − ⟨x²⟩_P)``,
    ``∂_ρ = (⟨π_Q⟩ − π_0)/(ρ(1 − ρ))`` with ``π_Q = 1 − (1 − ρ) e^{−(ln Z + ln Z_P)}`` (the
    tilted probability of ``x ≠ 0``, from the kernel's ``ln Z``) and ``π_0`` its value at
    ``B = A = 0``.  Other priors use ``prior.grad_log_z``.

    Parameters
    ----------
    prior : rbmviz.units.Prior
        The layer's prior.
    U : numpy.ndarray, shape (n,)
        The layer's bias (the prior's linear natural parameter).
    B : numpy.ndarray, shape (n_rows, n)
        Linear fields of the tilted distributions.
    A : numpy.ndarray
        Quadratic fields (broadcast to the shape of ``B``).

    Returns
    -------
    dict
        ``{parameter: gradient}``, float64 arrays of shape (n,): ``"U"`` and the prior's own
        parameters (``"V"``, ``"rho"``).
    """
    if getattr(prior, "name", "") not in ("truncated_gaussian", "truncated_gauss_bernoulli"):
        return prior.grad_log_z(U, B, A)
    args = prior.kernel_args(np.asarray(U, dtype=np.float64))
    B = np.ascontiguousarray(B, dtype=np.float64)
    A = np.ascontiguousarray(np.broadcast_to(A, B.shape), dtype=np.float64)
    lz, fa, fc = np.empty_like(B), np.empty_like(B), np.empty_like(B)
    moments_rows(*args, B, A, lz, fa, fc)
    m1, m2 = prior.prior_moments(args[1])
    out = {"U": fa.mean(axis=0) - m1, "V": -0.5 * ((fc + fa * fa).mean(axis=0) - m2)}
    if prior.name == "truncated_gauss_bernoulli":
        rho, logz0 = prior.rho, args[6]
        pi_q = 1.0 - (1.0 - rho) * np.exp(-(lz + logz0))
        pi_0 = 1.0 - (1.0 - rho) * np.exp(-logz0)
        out["rho"] = (pi_q.mean(axis=0) - pi_0) / (rho * (1.0 - rho))
    return out


def tap_gradient(rbm: RBM, X: ArrayLike, sol: TAPSolution, rows: ArrayLike | None = None, *,
                 order: int = 2) -> dict:
    """Ascent directions of the TAP log-likelihood (Tramel et al. 2018, eq. 39).

    For a batch and a set of TAP solutions (eqs. 40–42; binary EMF orders 1 and 3 as
    Gabrié et al. 2015).

    Parameters
    ----------
    rbm : RBM
        The model (any unit priors; the batch's rows are checked against the visible one).
    X : array_like, shape (M, n_visible)
        The data rows.
    sol : rbmviz.tap.TAPSolution
        From :func:`rbmviz.tap.solve` at the current parameters.
    rows : array_like of int, optional
        The solutions (rows of ``sol``) to average over, uniformly (repeat a row to weight it);
        default all rows.
    order : {1, 2, 3}
        The TAP order the solutions were computed at (1 and 3 only for all-binary models).

    Returns
    -------
    dict
        Float64 arrays ``"W"`` (n_v, n_h), ``"b"`` (n_v,), ``"c"`` (n_h,), and ``"visible"`` /
        ``"hidden"``: dicts of the prior's own parameters (e.g. ``{"V": (n,)}``), empty for
        Bernoulli units.

    Raises
    ------
    ValueError
        If ``order`` is not 2 for a model with non-binary units, or ``X`` does not fit the
        visible layer.
    """
    vp, hp = _priors(rbm)
    order = check_int(order, "order", low=1, high=3)
    binary = _is_binary(vp) and _is_binary(hp)
    if order != 2 and not binary:
        raise ValueError(f"order={order} is defined for binary visible and hidden units only; "
                         f"use order=2 for {vp.name}/{hp.name} units")
    X = vp.check_data(X, "X")
    if X.shape[1] != rbm.n_visible:
        raise ValueError(f"X has {X.shape[1]} columns but the model has n_visible={rbm.n_visible}")
    W = np.asarray(rbm.W, dtype=np.float64)
    b = np.asarray(rbm.b, dtype=np.float64)
    c = np.asarray(rbm.c, dtype=np.float64)
    sel = slice(None) if rows is None else np.asarray(rows, dtype=np.int64)
    av, ah = (np.asarray(x, dtype=np.float64)[sel] for x in (sol.av, sol.ah))
    K = av.shape[0]
    if K == 0:
        raise ValueError("no TAP solutions to average over (rows is empty)")
    M = X.shape[0]
    # data (positive) terms
    Bx = X @ W
    zero = np.zeros_like(Bx)
    _, fa_x, _ = hp.moments(c, Bx, zero)
    gW = X.T @ fa_x / M
    # TAP (negative) terms: explicit derivatives of −𝔽_RBM at stationarity (eq. 36)
    gW -= av.T @ ah / K
    if order >= 2:
        cv, ch = (np.asarray(x, dtype=np.float64)[sel] for x in (sol.cv, sol.ch))
        gW -= W * (cv.T @ ch) / K
    if order == 3:
        gW -= 2.0 * W * W * (_g(av).T @ _g(ah)) / K
    out = {"W": gW, "visible": {}, "hidden": {}}
    if binary:
        out["b"] = X.mean(axis=0) - av.mean(axis=0)
        out["c"] = fa_x.mean(axis=0) - ah.mean(axis=0)
        return out
    Bv, Av, Bh, Ah = (np.asarray(x, dtype=np.float64)[sel] for x in (sol.Bv, sol.Av, sol.Bh, sol.Ah))
    gv_pos, gv_neg = vp.grad_log_prior(b, X), grad_log_z_rows(vp, b, Bv, Av)
    gh_pos, gh_neg = grad_log_z_rows(hp, c, Bx, zero), grad_log_z_rows(hp, c, Bh, Ah)
    out["b"] = gv_pos["U"] - gv_neg["U"]
    out["c"] = gh_pos["U"] - gh_neg["U"]
    out["visible"] = {k: gv_pos[k] - gv_neg[k] for k in vp.param_names}
    out["hidden"] = {k: gh_pos[k] - gh_neg[k] for k in hp.param_names}
    return out


def _step_prior_(prior, name, lr, grad):
    """One plain ascent step ``θ ← θ + γ Δθ`` on a prior parameter, ``ρ`` on the logit scale.

    ``ρ`` spans hundreds of orders of magnitude (it multiplies ``G(V, U)``), and its gradient
    ``(π_data − π_model) / (ρ(1 − ρ))`` grows without bound as ``ρ → 0``: a step in ``ρ`` itself
    threw a rarely-non-zero pixel's ``ρ`` from 1e-300 to the top of its range (real-MNIST: the
    TAP log-likelihood fell from −240 to −2,700 nats in one epoch).  On the logit scale the
    gradient is ``π_data − π_model`` (bounded by 1): ``logit ρ ← logit ρ + γ ρ(1 − ρ) Δρ``."""
    if name == "V":
        prior.V = np.maximum(prior.V + lr * grad, V_MIN)
    elif name == "rho":
        rho = prior.rho
        z = np.log(rho) - np.log1p(-rho) + lr * (rho * (1.0 - rho)) * grad
        prior.rho = np.clip(0.5 * (1.0 + np.tanh(0.5 * z)), RHO_MIN, RHO_MAX)
    else:  # pragma: no cover - a prior with another parameter
        setattr(prior, name, getattr(prior, name) + lr * grad)


class TAP(Algorithm):
    """TAP training of (generalised) RBMs — Tramel et al. (2018) Alg. 2.

    Parameters
    ----------
    learning_rate : float
        γ (Table 1: 0.005 for binary-MNIST and CBCL).
    momentum : float
        η in [0, 1), on W only (Table 1: 0.5).
    weight_decay : float
        ε, strength of the ℓ2 regulariser ``R(W) = −W`` (Table 1: 0.001, CBCL 0.01).
    seed : int
        Kept for the interface (TAP training is deterministic given the batches; the run
        loop's shuffles are seeded by the run).
    n_solutions : int or None
        K, TAP runs per batch, started from the first K rows of the batch (≤ batch size);
        None = the batch size (Table 1: K = M).
    order : {1, 2, 3}
        TAP/EMF order; 1 (naive mean field) and 3 only for binary visible and hidden units.
    damping : float in (0, 1]
        Weight of the new iterate in Alg. 1 (1 = undamped).
    inference : {"tap", "adatap"}
        TAP inference: Alg. 1, or adaTAP via VAMP (App. D, Alg. 3; binary units, order 2).
    products : {"float64", "float32"}
        Precision of the matrix products of Alg. 1 (binary units; :func:`rbmviz.tap.solve`):
        float32 is ~1.5× faster per solve and moves the fixed points by ~1e-4, below what a
        run stopped at ``tol`` = 1e-8 resolves.
    tol, max_iter
        Convergence: MSE between successive iterates of both layers' means < tol
        (Fig. 3: 1e-8); runs hitting ``max_iter`` are excluded and counted.
    fixed_iter : int or None
        Run Alg. 1 exactly this many iterations per update and use every run (App. D, Fig. 10;
        ``tol`` and ``max_iter`` are then unused); None = iterate to ``tol``.
    unique : bool
        Average uniformly over unique solutions (``rbmviz.tap.unique_solutions``, tolerance
        ``unique_tol``) instead of over all converged runs.
    unique_tol : float
        Tolerance of the de-duplication.
    momentum_form : {"heavy_ball", "printed"}
        See the module docstring (default ``"heavy_ball"``, and why).
    learning_rate_final, decay_epochs
        Optional geometric decay of γ from ``learning_rate`` (epoch 0) to
        ``learning_rate_final`` (epoch ``decay_epochs`` and later) — real-MNIST's
        "γ ∈ [1e-2, 1e-5], decreasing" (schedule shape UNCONFIRMED).
    """

    name = "tap"
    label = "TAP"
    reference = "Tramel et al. (2018) Alg. 2; Gabrié, Tramel & Krzakala (2015)"
    #: every unit prior of rbmviz.units (the TAP moments handle all of them)
    unit_types = ("bernoulli", "truncated_gaussian", "truncated_gauss_bernoulli")
    #: a diverging update stops the epoch (checked after every update)
    check_every_update = True
    equation = (r"\Delta W = \big\langle x\, f^h_a(xW)\big\rangle_{\text{data}}"
                r" - \big\langle a^v a^{h\top} + W\circ c^v c^{h\top}\big\rangle_{\text{TAP}}")

    class Knobs(AlgorithmKnobs):
        learning_rate = param.Number(0.005)   # γ of Alg. 2 (Table 1: binary MNIST and CBCL)
        n_solutions = param.Integer(
            None, allow_None=True, bounds=(1, None), softbounds=(1, 1000), label="TAP solutions K",
            doc="tap only: TAP runs per update, started from the first K rows of each mini-batch "
                "(at most the batch size); none = the batch size (Tramel et al. 2018, Table 1).")
        # the solver's options are copies of rbmviz.tap.options.TAPSolverOptions (default,
        # bounds, help); max_iter narrowed to the training bound rbmviz.bounds.TAP_ITER_MAX
        order = option_param("order", doc_prefix="tap only: ")
        damping = option_param("damping", doc_prefix="tap only: ")
        tol = option_param("tol", doc_prefix="tap only: ")
        max_iter = option_param(
            "max_iter", doc_prefix="tap only: ", high=TAP_ITER_MAX,
            doc_suffix=f" An update leaves such runs out and counts them; at most {TAP_ITER_MAX:,} "
                       f"in training (rbmviz.bounds.TAP_ITER_MAX).")
        fixed_iter = param.Integer(
            None, allow_None=True, bounds=(1, TAP_ITER_MAX), softbounds=(1, 100),
            label="TAP fixed iterations",
            doc="tap only: run Alg. 1 exactly this many iterations per update and average over "
                "all K runs, converged or not (Tramel et al. 2018, App. D, Fig. 10: 3, 10 and "
                "100 iterations train alike; the reference implementation iterates 3 times); "
                "none = iterate every run to tol (at most max_iter).")
        unique = param.Boolean(
            False, label="Unique solutions",
            doc="tap only: average uniformly over the unique TAP solutions (tolerance "
                "unique_tol) instead of over all converged runs.")
        unique_tol = option_param("unique_tol", doc_prefix="tap only: ")
        momentum_form = param.Selector(
            default="heavy_ball", objects=list(MOMENTUM_FORMS), label="Momentum form",
            doc="tap only: 'heavy_ball' v ← ηv + γ(ΔW − εW), W ← W + v (default); 'printed' "
                "W ← W + γ(ΔW − εW) + ηΔW(t−1) as Alg. 2 prints it, whose momentum term is not "
                "scaled by γ (with Table 1's γ = 0.005, η = 0.5 it is ~100× the gradient step).")
        learning_rate_final = param.Number(
            None, allow_None=True, bounds=(0.0, None), inclusive_bounds=(False, True),
            softbounds=(1e-6, 0.1), label="Final learning rate",
            doc="tap only: with decay_epochs, γ decays geometrically from learning_rate to this "
                "value over decay_epochs epochs; none = constant γ.")
        decay_epochs = param.Integer(
            None, allow_None=True, bounds=(1, EPOCHS_MAX), softbounds=(1, 1000),
            label="Decay epochs",
            doc="tap only: epochs of the geometric decay of γ (with learning_rate_final).")
        products = option_param("products", doc_prefix="tap only: ")
        # H7: the inference method (Tramel et al. 2018, App. D)
        inference = param.Selector(
            default="tap", objects=list(INFERENCE_METHODS), label="TAP inference",
            doc="tap only: 'tap' = Alg. 1 (TAP equations, i.i.d.-weight Onsager term); "
                "'adatap' = adaptive TAP solved by VAMP (Alg. 3, App. D; binary units, order 2; "
                "one matrix inverse per TAP run and iteration, ~10²–10³× slower per iteration).")

    LIVE_KNOBS = ("learning_rate", "momentum", "weight_decay", "n_solutions", "order", "damping",
                  "tol", "max_iter", "fixed_iter", "unique", "unique_tol", "momentum_form",
                  "learning_rate_final", "decay_epochs", "inference", "products")

    def _set_knobs(self, values):
        if (values["learning_rate_final"] is None) != (values["decay_epochs"] is None):
            raise ValueError("learning_rate_final and decay_epochs go together (both or neither)")
        super()._set_knobs(values)

    def __init__(self, **knobs: Any) -> None:
        super().__init__(**knobs)
        self.tap_iterations = 0        # TAP iterations (largest per update), cumulative
        self.not_converged_total = 0   # TAP runs excluded for hitting max_iter, cumulative
        self.fallback_updates = 0      # updates in which no run converged (all runs used)
        self.last_not_converged = 0
        self.last_n_solutions = 0      # solutions averaged over in the last update
        self._last_iter = 0

    @property
    def gibbs_steps_per_update(self) -> int:
        """TAP iterations of the last update (the run loop's compute axis for TAP)."""
        return self._last_iter

    # ------------------------------------------------------------------ state
    def _check_model(self, rbm, data, batch_size):
        vp, hp = _priors(rbm)
        if self.order != 2 and not (_is_binary(vp) and _is_binary(hp)):
            raise ValueError(f"order={self.order} is defined for binary visible and hidden units "
                             f"only; use order=2 for {vp.name}/{hp.name} units")
        if self.inference == "adatap" and not (self.order == 2 and _is_binary(vp) and _is_binary(hp)):
            raise ValueError(f"inference='adatap' needs binary visible and hidden units and order=2 "
                             f"(got {vp.name}/{hp.name} units, order={self.order})")
        vp.check_data(data, "data")
        if self.n_solutions is not None and self.n_solutions > batch_size:
            raise ValueError(f"n_solutions (K={self.n_solutions}) must be at most the batch size "
                             f"(M={batch_size}): the TAP runs start from rows of the batch")

    def setup(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        batch_size = check_int(batch_size, "batch_size", low=1)
        self._check_model(rbm, data, batch_size)
        super().setup(rbm, data, batch_size)
        self.prev_gW = np.zeros(rbm.W.shape, dtype=np.float64)
        self.n_batches = max(1, int(np.shape(data)[0]) // batch_size)

    def resume(self, rbm: RBM, data: np.ndarray, batch_size: int) -> None:
        super().resume(rbm, data, batch_size)
        self._check_model(rbm, data, batch_size)
        self.n_batches = max(1, int(np.shape(data)[0]) // batch_size)

    def current_learning_rate(self) -> float:
        """γ of the next update (geometric decay when ``learning_rate_final`` is set).

        Returns
        -------
        float
            The learning rate.
        """
        if self.learning_rate_final is None:
            return self.learning_rate
        epoch = self.updates // max(1, getattr(self, "n_batches", 1))
        frac = min(epoch, self.decay_epochs) / self.decay_epochs
        return float(self.learning_rate * (self.learning_rate_final / self.learning_rate) ** frac)

    # ------------------------------------------------------------------ training
    def record_fields(self) -> dict:
        """Values reported in every run record.

        Returns
        -------
        dict
            ``tap_not_converged``: TAP runs excluded so far for hitting ``max_iter``;
            ``tap_fallback_updates``: updates in which none converged and all were used;
            ``tap_solutions``: the solutions averaged in the last update.
        """
        return {"tap_not_converged": self.not_converged_total,
                "tap_fallback_updates": self.fallback_updates,
                "tap_solutions": self.last_n_solutions}

    def solutions(self, rbm: RBM, batch: np.ndarray) -> tuple[TAPSolution, np.ndarray]:
        """Run Alg. 1 (or adaTAP) from the first K rows of ``batch``.

        Parameters
        ----------
        rbm : RBM
            The model at its current parameters.
        batch : numpy.ndarray, shape (M, n_visible)
            The mini-batch.

        Returns
        -------
        sol : rbmviz.tap.TAPSolution
            The solutions of the K runs.
        rows : numpy.ndarray
            The rows of ``sol`` averaged over (converged runs, or unique solutions; all runs if
            none converged).

        Raises
        ------
        ValueError
            If ``n_solutions`` is larger than the batch.
        """
        K = self.n_solutions or batch.shape[0]
        if K > batch.shape[0]:
            raise ValueError(f"n_solutions (K={K}) is larger than the batch ({batch.shape[0]} rows)")
        fixed = self.fixed_iter is not None
        # fixed iterations: a run stops early only once its iterate no longer changes at all
        # (the same result as iterating on), so every run gives its fixed_iter-th iterate
        tol = _FIXED_TOL if fixed else self.tol
        max_iter = self.fixed_iter if fixed else self.max_iter
        if self.inference == "adatap":
            sol = adatap.solve(rbm, batch[:K], damping=self.damping, tol=tol, max_iter=max_iter)
        else:
            sol = tap.solve(rbm, batch[:K], order=self.order, damping=self.damping, tol=tol,
                            max_iter=max_iter, products=self.products)
        conv = np.ones(len(sol.converged), dtype=bool) if fixed else \
            np.asarray(sol.converged, dtype=bool)
        self.last_not_converged = int((~conv).sum())
        self.not_converged_total += self.last_not_converged
        self._last_iter = int(np.max(sol.n_iter)) if len(conv) else 0
        if not conv.any():
            self.fallback_updates += 1
            rows = np.arange(len(conv))
        elif self.unique:
            rows = np.asarray(tap.unique_solutions(sol, tol=self.unique_tol).representatives)
        else:
            rows = np.flatnonzero(conv)
        self.last_n_solutions = len(rows)
        return sol, rows

    def update(self, rbm: RBM, batch: np.ndarray) -> None:
        """One Alg. 2 step (Tramel et al. 2018) from the rows of ``batch``, in place.

        Parameters
        ----------
        rbm, batch
            As in :meth:`Algorithm.update <rbmviz.algorithms.base.Algorithm.update>`.
        """
        batch = np.asarray(batch, dtype=np.float64)
        sol, rows = self.solutions(rbm, batch)
        g = tap_gradient(rbm, batch, sol, rows, order=self.order)
        W, b, c = rbm.params
        dt = W.dtype.type
        lr = self.current_learning_rate()
        eps, eta = self.weight_decay, self.momentum
        gW = g["W"]
        if self.momentum_form == "printed":
            step = lr * (gW - eps * W) + eta * self.prev_gW
            self.prev_gW[...] = gW
        else:
            self.vW *= dt(eta)
            self.vW += (lr * (gW - eps * W)).astype(W.dtype)
            step = self.vW
        W += step.astype(W.dtype, copy=False)
        b += (lr * g["b"]).astype(b.dtype, copy=False)
        c += (lr * g["c"]).astype(c.dtype, copy=False)
        vp, hp = _priors(rbm)
        for prior, grads in ((vp, g["visible"]), (hp, g["hidden"])):
            for name, gp in grads.items():
                _step_prior_(prior, name, lr, gp)
        self.updates += 1
        self.tap_iterations += self._last_iter
        self.gibbs_steps += self._last_iter
