"""Deep TAP machines: binary deep Boltzmann machines trained with the TAP equations —
Tramel et al. (2018), Appendix E (eqs. 119–129, Alg. 4; restated and checked in
the TAP-beyond theory page of the documentation).

Layers ``x⁽⁰⁾ = v, x⁽¹⁾, …, x⁽ᴸ⁾`` of binary units, couplings ``W⁽ˡ⁾`` (shape
``(N_{l−1}, N_l)``) between consecutive layers and biases ``θ⁽ˡ⁾``:

    ``−E = Σ_l θ⁽ˡ⁾·x⁽ˡ⁾ + Σ_{l≥1} x⁽ˡ⁻¹⁾ᵀ W⁽ˡ⁾ x⁽ˡ⁾``     (eq. 119, binary priors).

TAP inference is Alg. 1 on the block weight matrix of eq. (125): second-order (TAP2)
magnetisations, with ``s⁽ˡ⁾ = m⁽ˡ⁾ − (m⁽ˡ⁾)²``::

    m⁽ˡ⁾ = σ(θ⁽ˡ⁾ + W⁽ˡ⁾ᵀ m⁽ˡ⁻¹⁾ + W⁽ˡ⁺¹⁾ m⁽ˡ⁺¹⁾
             − (m⁽ˡ⁾ − ½) ⊙ [(W⁽ˡ⁾∘²)ᵀ s⁽ˡ⁻¹⁾ + W⁽ˡ⁺¹⁾∘² s⁽ˡ⁺¹⁾]),

updated odd layers first, then even layers (the graph is bipartite, so each half-step is
exact block Gauss–Seidel, as Alg. 1's hidden-then-visible order), each new value damped.
At a fixed point the TAP estimate of the log-partition function is::

    Φ(m) = Σ_l Σ_i H(m_i⁽ˡ⁾) + Σ_l θ⁽ˡ⁾·m⁽ˡ⁾ + Σ_l m⁽ˡ⁻¹⁾ᵀ W⁽ˡ⁾ m⁽ˡ⁾
           + ½ Σ_l s⁽ˡ⁻¹⁾ᵀ (W⁽ˡ⁾∘²) s⁽ˡ⁾     (≈ ln Z).

Clamped solutions (the data term of eq. 121, "Alg. 1(X^B, …)" in Alg. 4) keep ``m⁽⁰⁾ = x``
fixed (``s⁽⁰⁾ = 0``, so layer 1 gets the field ``W⁽¹⁾ᵀx`` and no Onsager term from below);
``Φ`` at a clamped solution estimates ``b·x + ln Σ_h e^{−E(x, h)}``.  The TAP log-likelihood
of ``x`` is ``Φ(clamped on x) − ⟨Φ(free)⟩`` (free solutions averaged uniformly), per unit
÷ ``Σ_l N_l`` in Fig. 11.

Its gradients are the explicit partial derivatives at the fixed points (eqs. 126–129):

    ``ΔW⁽ˡ⁾ = ⟨ā⁽ˡ⁻¹⁾ā⁽ˡ⁾ᵀ + W⁽ˡ⁾ ∘ s̄⁽ˡ⁻¹⁾s̄⁽ˡ⁾ᵀ⟩_M − ⟨m⁽ˡ⁻¹⁾m⁽ˡ⁾ᵀ + W⁽ˡ⁾ ∘ s⁽ˡ⁻¹⁾s⁽ˡ⁾ᵀ⟩_K``,
    ``Δθ⁽ˡ⁾ = ⟨ā⁽ˡ⁾⟩_M − ⟨m⁽ˡ⁾⟩_K``

(bars: clamped solutions over the mini-batch, ``ā⁽⁰⁾ = x``, ``s̄⁽⁰⁾ = 0``).  Training (Alg. 4):
greedy layer-wise pretraining with TAP RBMs (:func:`pretrain`), then joint TAP training
(:class:`DBMTrainer`) — both through the run loop every training rule uses
(:class:`rbmviz.runs.Run`; the joint phase is the algorithm :class:`JointTAP`; a caller that
drives the runs itself takes them from :func:`layer_runs` and :meth:`DBMTrainer.run`).

The package is in three modules: :mod:`rbmviz.dbm.model` (the :class:`DBM`, its file format and
exact enumeration), :mod:`rbmviz.dbm.inference` (TAP solutions, ``Φ``, the TAP log-likelihood and
its gradient) and :mod:`rbmviz.dbm.training` (:data:`DBMKnobs`, :class:`JointTAP`,
:class:`DBMTrainer`, :func:`pretrain`, :func:`layer_runs`, :func:`copy_layer`).
"""
from __future__ import annotations

from .inference import DBMSolution, gradient, log_likelihood, tap_log_z, tap_solve
from .model import DBM, EXACT_MAX_UNITS
from .training import DBMKnobs, DBMTrainer, JointTAP, copy_layer, layer_runs, pretrain

__all__ = ["DBM", "DBMSolution", "tap_solve", "tap_log_z", "log_likelihood", "gradient",
           "DBMTrainer", "JointTAP", "pretrain", "layer_runs", "copy_layer", "DBMKnobs",
           "EXACT_MAX_UNITS"]
